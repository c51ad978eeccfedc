"""``SelfplayPool``: ``selfplay`` chunks as Ray tasks, merged into one run's stats
(:func:`merge_stats`)."""
from __future__ import annotations

import os
import socket
import time
import warnings

import numpy as np

from ..engine.checks import as_seed
from .cluster import _MAX_CPUS, _first_line, _int, _ray, _ray_options
from .workers import WorkerDiedError, _check_code, _code_fingerprint, _Pool, _workers

__all__ = ["SelfplayPool", "merge_stats"]

_MAX_CHUNKS = 2 ** 24        # selfplay chunks of one call


def merge_stats(chunks):
    """Merge selfplay stats that carry ``points`` (per-seat totals) into one dict."""
    games = sum(c["games"] for c in chunks)
    points = [sum(c["points"][q] for c in chunks) for q in range(4)]
    return {"games": games, "hands": sum(c["hands"] for c in chunks),
            "decisions": sum(c["decisions"] for c in chunks),
            "mean_points": (np.array(points, np.int64) / max(1, games)).tolist(),   # as selfplay computes it
            "wins": [sum(c["wins"][q] for c in chunks) for q in range(4)], "points": points}


def _selfplay_chunk(chunk, first, n, agents, seed, num_envs, rules, threads):
    """A SelfplayPool task: games ``first .. first + n - 1`` of the run from ``seed``."""
    import numba

    from ..engine.vector import selfplay
    s = selfplay(n, agents=agents, seed=seed, num_envs=num_envs, rules=rules, first_game=first,
                 num_threads=min(threads, numba.config.NUMBA_NUM_THREADS))
    s["points"] = [int(round(m * s["games"])) for m in s["mean_points"]]
    s.update(chunk=chunk, first_game=first, pid=os.getpid(), host=socket.gethostname(), code=_code_fingerprint())
    return s


class SelfplayPool(_Pool):
    """Runs ``selfplay`` chunks as Ray tasks, ``num_workers`` at a time; ``selfplay`` merges them.

    ``SelfplayPool(num_workers=None, threads_per_worker=1, max_failures=2,
    task_options=None)``: ``num_workers`` defaults to the cluster's CPUs /
    ``threads_per_worker``; each task takes ``threads_per_worker`` Ray CPUs and
    numba threads; ``max_failures`` worker deaths are absorbed per call (an
    attribute: may be changed between calls); ``task_options`` go to Ray's
    ``.options`` (e.g. ``resources``, ``scheduling_strategy="SPREAD"``;
    ``max_retries`` is always 0, see the module docstring). The pool holds no
    CPUs between calls: its tasks wait for free CPUs as any Ray task does.
    """

    def __init__(self, num_workers=None, threads_per_worker=1, max_failures=2, task_options=None):
        self.threads = _int("threads_per_worker", threads_per_worker, 1, _MAX_CPUS)
        self.max_failures = _int("max_failures", max_failures, 0)
        if num_workers is not None:
            num_workers = _int("num_workers", num_workers, 1, _MAX_CPUS)
        self.task_options = {"num_cpus": self.threads, **_ray_options("task_options", task_options),
                             "max_retries": 0}
        self.num_workers = _workers(num_workers, self.task_options["num_cpus"])
        self._task = _ray().remote(_selfplay_chunk)
        self.failures = []
        self._closed = False

    def shutdown(self):
        self._closed = True

    def selfplay(self, num_games=10_000, agents=("random",) * 4, seed=0, num_envs=1024, rules=None,
                 chunk_games=None, on_chunk=None) -> dict:
        """Play games ``0 .. num_games-1`` of the run from ``seed`` on the workers.

        Returns ``selfplay``'s keys (``seconds`` is the wall time) plus
        ``points`` (totals per seat), ``seed``, ``chunks`` (each chunk's stats
        in game order, with the pid and host that ran it), ``failures`` (each:
        chunk, games, Ray's error) and ``workers``. ``on_chunk(chunk_stats)`` is
        called on the driver as each chunk ends.
        """
        from ..engine.registry import agent_names, resolve
        from ..engine.rules import make_rules
        from ..engine.vector import MAX_ENVS
        ray = _ray()
        if not isinstance(agents, (tuple, list)) or len(agents) != 4 or any(not isinstance(a, str) for a in agents):
            raise ValueError(f"agents must be a tuple of 4 agent specs as text (names from {', '.join(agent_names())}, "
                             f"or with parameters, 'search:samples=4'), got {agents!r}")
        for i, a in enumerate(agents):
            resolve(a, f"agents[{i}]")           # ValueError naming the known agents
        agents = tuple(agents)
        n = _int("num_games", num_games, 0, 2 ** 62)
        num_envs = _int("num_envs", num_envs, 1, MAX_ENVS)
        seed = as_seed(seed)
        rules = make_rules(rules)
        if chunk_games is None:
            chunk_games = min(4 * num_envs, max(1, -(-n // (4 * self.num_workers))))
        chunk_games = _int("chunk_games", chunk_games, 1, 2 ** 62)
        if -(-n // chunk_games) > _MAX_CHUNKS:                # the chunk list is built up front
            raise ValueError(f"num_games={n} in chunks of {chunk_games} games makes more than {_MAX_CHUNKS} "
                             f"chunks; pass a larger chunk_games (or num_envs)")
        if on_chunk is not None and not callable(on_chunk):
            raise ValueError(f"on_chunk must be callable as on_chunk(chunk_stats), got {on_chunk!r}")
        limit = self._limit()
        self._check_open()
        ranges = [(a, min(n, a + chunk_games)) for a in range(0, n, chunk_games)]
        todo = list(range(len(ranges)))[::-1]            # pop() takes the lowest chunk
        running, done, failures, fatal = {}, {}, [], None
        t0 = time.perf_counter()

        def submit():
            while todo and fatal is None and len(running) < self.num_workers:
                c = todo.pop()
                a, b = ranges[c]
                ref = self._task.options(**self.task_options).remote(c, a, b - a, agents, seed, num_envs, rules,
                                                                     self.threads)
                running[ref] = c

        lost_errors = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                       ray.exceptions.OutOfMemoryError, ray.exceptions.ObjectLostError)
        submit()
        while running:
            [ref], _ = ray.wait(list(running), num_returns=1)
            c = running.pop(ref)
            try:
                res = ray.get(ref)
            except lost_errors as e:
                a, b = ranges[c]
                rec = {"chunk": c, "games": f"{a}-{b - 1}", "error": f"{type(e).__name__}: {_first_line(e)}"}
                failures.append(rec)
                self.failures.append(rec)
                msg = f"the worker running chunk {c} (games {a}-{b - 1}) died ({rec['error']})"
                if len(failures) > limit:
                    fatal = fatal or msg
                else:
                    warnings.warn(f"majiang_env.distributed: {msg}; running that chunk again",
                                  RuntimeWarning, stacklevel=2)
                    todo.append(c)
            else:
                _check_code(res.pop("code"), f"the worker on {res['host']} (pid {res['pid']})", 2)
                done[c] = res
                if on_chunk is not None:
                    on_chunk(res)
            submit()
        fin = [done[k] for k in sorted(done)]
        out = merge_stats(fin)
        out.update(seconds=time.perf_counter() - t0, seed=seed, chunks=fin, failures=failures,
                   workers=self.num_workers)
        if fatal is not None:
            out["unfinished"] = [ranges[k] for k in range(len(ranges)) if k not in done]
            raise WorkerDiedError(
                f"{fatal}; {len(failures)} worker death(s) exceed max_failures={limit}. "
                f"{len(fin)} of {len(ranges)} chunks finished ({out['games']} of {n} games); their stats are "
                f"in .partial ('unfinished' lists the game ranges not played)", out, failures)
        return out
