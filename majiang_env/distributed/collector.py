"""``RolloutCollector``: ``RolloutStream``s (``rollouts.py``) kept on Ray actors
(:class:`_StreamWorker`), collected together, rebuilt on a fresh actor when one dies."""
from __future__ import annotations

import os
import socket
import time
import warnings

from ..engine.checks import as_bool, as_seed
from .cluster import _MAX_CPUS, _first_line, _int, _ray, _ray_options, _seconds
from .rollouts import RolloutStream, check_policy, check_steps, concat, masked_random
from .workers import WorkerDiedError, _check_code, _code_fingerprint, _Pool, _workers

__all__ = ["RolloutCollector"]


class _StreamWorker:
    """Body of a RolloutCollector's Ray actor: owns some of its streams."""

    def __init__(self, index, threads):
        import numba
        self.index = index
        self.threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
        numba.set_num_threads(self.threads)
        self.streams = {}
        self.policy = masked_random

    def info(self):
        return {"worker": self.index, "pid": os.getpid(), "host": socket.gethostname(), "threads": self.threads,
                "code": _code_fingerprint()}

    def add_stream(self, index, num_envs, seed, rules, state):
        s = RolloutStream(index, num_envs, seed, rules)
        if state is not None:
            s.set_state(state)
        self.streams[index] = s

    def set_policy(self, policy):
        self.policy = policy

    def set_weights(self, weights):
        self.policy.set_weights(weights)

    def collect(self, index, num_steps, with_state):
        s = self.streams[index]
        t = time.perf_counter()
        out = s.collect(num_steps, self.policy)
        out["seconds"] = time.perf_counter() - t
        return out, (s.get_state() if with_state else None)


_STREAM_ACTOR = None


class RolloutCollector(_Pool):
    """``num_streams`` ``RolloutStream``s of ``envs_per_stream`` games each,
    spread over Ray actors round-robin (stream k on worker k % num_workers).

    ``collect(T)`` steps every stream T times with the policy and returns
    ``RolloutStream.collect``'s arrays over all ``N = num_streams *
    envs_per_stream`` envs (column ``k * envs_per_stream + i`` is env i of
    stream k), plus ``seconds``: per stream, the time its worker spent
    collecting. ``policy(obs, mask, player, rng)`` (picklable; default
    ``masked_random``) returns the (B,) actions of one stream.
    ``set_weights(w)`` calls ``policy.set_weights(w)`` on every worker;
    ``set_policy(p)`` replaces the policy.

    ``num_workers`` defaults to the cluster's CPUs / ``threads_per_worker``
    (at most ``num_streams``); the actors hold their CPUs until ``shutdown()``
    (or the end of a ``with`` block); ``actor_options`` go to Ray's
    ``.options``; actors that cannot be placed within ``start_timeout``
    seconds raise RuntimeError (building their streams is not bounded by it:
    on a node with a stale numba cache it compiles the kernel first).

    With ``recover=True`` (default) each stream's state comes back with its
    data (about 13 kB per game), so the streams of a dead worker are rebuilt on
    a fresh actor from the last collect and re-run, giving the same
    trajectories (up to ``max_failures`` deaths per collect). With
    ``recover=False`` a death raises ``WorkerDiedError``. After a
    ``WorkerDiedError`` the collector's streams are lost: make a new one.
    """

    def __init__(self, num_streams, envs_per_stream, seed=0, rules=None, policy=None, num_workers=None,
                 threads_per_worker=1, recover=True, max_failures=2, actor_options=None, start_timeout=120.0):
        global _STREAM_ACTOR
        from ..engine.rules import make_rules
        from ..engine.vector import MAX_ENVS
        self.num_streams = _int("num_streams", num_streams, 1, _MAX_CPUS)
        self.envs_per_stream = _int("envs_per_stream", envs_per_stream, 1, MAX_ENVS)
        if num_workers is not None and _int("num_workers", num_workers, 1, _MAX_CPUS) > self.num_streams:
            raise ValueError(f"num_workers={num_workers} > num_streams={num_streams} would leave workers idle")
        self.policy = check_policy(policy)
        self.seed, self.rules = as_seed(seed), make_rules(rules)
        self.recover = as_bool("recover", recover)
        self.threads = _int("threads_per_worker", threads_per_worker, 1, _MAX_CPUS)
        self.max_failures = _int("max_failures", max_failures, 0)
        self.actor_options = {"num_cpus": self.threads, **_ray_options("actor_options", actor_options)}
        self.start_timeout = _seconds("start_timeout", start_timeout)
        self.num_workers = _workers(num_workers, self.actor_options["num_cpus"], most=self.num_streams)
        ray = _ray()
        if _STREAM_ACTOR is None:
            _STREAM_ACTOR = ray.remote(_StreamWorker)
        self.failures = []
        self._closed, self._broken, self._weights = False, None, None
        self._states = [None] * self.num_streams        # state after the last collect (recover=True)
        self._policy_ref = ray.put(self.policy)
        self.workers, self.info = [None] * self.num_workers, [None] * self.num_workers
        self._start(range(self.num_workers))

    def _home(self, k):
        return k % self.num_workers

    def _placed(self, refs):
        """``ray.get(refs)`` of the actors' first calls, within ``start_timeout``."""
        ray = _ray()
        try:
            return ray.get(refs, timeout=self.start_timeout)
        except ray.exceptions.GetTimeoutError:
            free = ray.available_resources().get("CPU", 0)
            raise RuntimeError(f"Ray workers did not start within start_timeout={self.start_timeout:g} s; "
                               f"{free:g} CPUs are free: do other actors (another collector?) hold them?") from None

    def _start(self, workers):
        """(Re)start the actors ``workers``, each with its streams (from their last state)."""
        ray = _ray()
        for i in workers:
            if self.workers[i] is not None:
                ray.kill(self.workers[i])
            self.workers[i] = _STREAM_ACTOR.options(**self.actor_options).remote(i, self.threads)
        for i, inf in zip(workers, self._placed([self.workers[i].info.remote() for i in workers]), strict=True):
            self.info[i] = inf
            _check_code(inf["code"], f"worker {i} on {inf['host']}", 3)
        refs = []
        for i in workers:
            w = self.workers[i]
            refs.append(w.set_policy.remote(self._policy_ref))
            if self._weights is not None:
                refs.append(w.set_weights.remote(self._weights))
            refs += [w.add_stream.remote(k, self.envs_per_stream, self.seed, self.rules, self._states[k])
                     for k in range(self.num_streams) if self._home(k) == i]
        ray.get(refs)

    def pids(self):
        return [inf["pid"] for inf in self.info]

    def shutdown(self):
        if not self._closed:
            for w in self.workers:
                _ray().kill(w)
        self._closed = True

    def set_policy(self, policy):
        """Replace the policy on every worker (its weights are forgotten)."""
        policy = check_policy(policy)
        self._check_open()
        ray = _ray()
        self.policy, self._weights = policy, None
        self._policy_ref = ray.put(policy)
        ray.get([w.set_policy.remote(self._policy_ref) for w in self.workers])

    def set_weights(self, weights):
        """Send the learner's weights to every worker: ``policy.set_weights(weights)``."""
        if not callable(getattr(self.policy, "set_weights", None)):
            raise ValueError(f"the policy {self.policy!r} has no set_weights method")
        self._check_open()
        self.policy.set_weights(weights)                 # the driver's copy checks them first
        ray = _ray()
        self._weights = ray.put(weights)
        ray.get([w.set_weights.remote(self._weights) for w in self.workers])

    def collect(self, num_steps) -> dict:
        if self._broken:
            raise RuntimeError(f"this RolloutCollector lost its streams earlier ({self._broken}); make a new one")
        T = check_steps(num_steps, self.envs_per_stream)
        limit = self._limit() if self.recover else 0
        self._check_open()
        ray = _ray()
        failures, fatal, results = [], None, {}
        running = {self.workers[self._home(k)].collect.remote(k, T, self.recover): k
                   for k in range(self.num_streams)}
        while running:
            [ref], _ = ray.wait(list(running), num_returns=1)
            k = running.pop(ref)
            try:
                results[k] = ray.get(ref)
            except ray.exceptions.RayActorError as e:
                i, inf = self._home(k), self.info[self._home(k)]
                lost = sorted([k] + [running.pop(r) for r in [r for r, k2 in running.items()
                                                              if self._home(k2) == i]])
                rec = {"worker": i, "pid": inf["pid"], "host": inf["host"], "streams": lost,
                       "error": f"{type(e).__name__}: {_first_line(e)}"}
                failures.append(rec)
                self.failures.append(rec)
                msg = f"worker {i} (pid {inf['pid']} on {inf['host']}) died while running streams {lost} " \
                      f"({rec['error']})"
                if len(failures) > limit:
                    fatal = fatal or msg
                    continue
                warnings.warn(f"majiang_env.distributed: {msg}; replacing it and re-running those streams",
                              RuntimeWarning, stacklevel=2)
                for k2, (_, st) in results.items():     # its streams that finished this round restart from there
                    if self._home(k2) == i:
                        self._states[k2] = st
                self._start([i])
                for k2 in lost:
                    running[self.workers[i].collect.remote(k2, T, True)] = k2
        if fatal is not None:
            self._broken = fatal
            partial = {k: v[0] for k, v in sorted(results.items())}
            why = ("recover=False" if not self.recover
                   else f"{len(failures)} worker death(s) exceed max_failures={limit}")
            raise WorkerDiedError(
                f"{fatal} ({why}); the {len(partial)} of {self.num_streams} streams that finished this collect "
                f"are in .partial (a dict stream -> arrays); this collector cannot continue", partial, failures)
        if self.recover:
            for k, (_, st) in results.items():
                self._states[k] = st
        return concat([results[k][0] for k in range(self.num_streams)])
