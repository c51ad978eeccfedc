"""Distributed self-play and rollout collection on Ray (``pip install "majiang_env[distributed]"``).

``SelfplayPool`` runs ``selfplay`` chunks as Ray tasks; ``RolloutCollector``
keeps ``RolloutStream``s (``majiang_env.rollouts``) on Ray actors. One driver
hands out the work and gathers the results. Ray is imported only when a
function of this module needs it, so ``import majiang_env.distributed`` works
without it.

    from majiang_env import distributed as dist
    dist.init(num_cpus=2)            # a new local Ray; dist.init(address="auto") joins a running cluster
    with dist.SelfplayPool(num_workers=2) as pool:
        stats = pool.selfplay(100_000, seed=0)      # same stats as majiang_env.selfplay(100_000, seed=0)
    with dist.RolloutCollector(num_streams=4, envs_per_stream=256, seed=0,
                               policy=dist.PreferencePolicy()) as rc:
        traj = rc.collect(64)        # obs, mask, player, actions, rewards, done, game: (64, 1024, ...)
        rc.set_weights(new_logits)   # the learner's new parameters, on every worker before the next collect

Reproducibility (seeds derive per game and per stream, never per worker, so a
run does not depend on how many workers it had or which of them failed)
    * ``SelfplayPool.selfplay(n, seed=s)`` splits games ``0 .. n-1`` into chunks
      of consecutive indices and runs chunk ``[a, b)`` as
      ``selfplay(b - a, seed=s, first_game=a)``; game j is dealt from
      ``game_seed(s, j)`` and its in-kernel agents draw from that seed alone,
      so the merged stats equal ``selfplay(n, seed=s)`` exactly (games, hands,
      decisions, mean_points, wins).
    * Stream k of ``RolloutCollector(seed=s)`` is ``RolloutStream(k, B, seed=s)``;
      ``collect`` concatenates the streams in stream order, so the trajectories
      equal those of the same streams run in one process
      (``rollouts.concat([stream.collect(T, policy) for stream in streams])``).
    * ``seed=None`` draws a seed on the driver; it is returned (``stats["seed"]``,
      ``collector.seed``) so the run can be repeated.

Failures
    A chunk whose worker process died (killed, out of memory, node lost) or a
    rollout actor that died is reported with a ``RuntimeWarning`` and a record
    in ``stats["failures"]`` / ``collector.failures``. While at most
    ``max_failures`` deaths have happened in the call, the lost work is run
    again (a chunk as a new task; a dead actor is replaced by a fresh one that
    rebuilds its streams from their last state) and the result is the same as
    without the failure. Past that the call waits for the work still running
    and raises ``WorkerDiedError``, whose ``partial`` keeps every finished
    chunk's or stream's data.

    Selfplay chunks are pure functions of their game range, so they are plain
    Ray tasks and Ray starts new worker processes by itself; but Ray's own
    retries (``max_retries``) are off, because Ray re-runs a task silently and
    counts retries per task: the pool re-submits a lost chunk itself, so that
    each death is reported and ``max_failures`` bounds the deaths of a call.
    A Python exception in a chunk or a policy is a bug, not a failure: it is
    raised at once, never retried.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
import warnings

import numpy as np

from .checks import as_bool, as_int, as_seed
from .rollouts import PreferencePolicy, RolloutStream, masked_random, stream_seeds
from .rollouts import check_policy, check_steps, concat

__all__ = ["init", "SelfplayPool", "RolloutCollector", "RolloutStream", "WorkerDiedError",
           "masked_random", "PreferencePolicy", "stream_seeds", "merge_stats"]

_INSTALL_HINT = 'majiang_env.distributed needs Ray: pip install "majiang_env[distributed]"'


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from e
    return ray


_BIG = 2 ** 63 - 1           # the largest count any argument here takes (int64)
_MAX_CPUS = 2 ** 20          # Ray CPUs, workers, threads per worker, streams: more is a mistake
_MAX_SECONDS = 86_400.0      # timeouts: a day
_MAX_CHUNKS = 2 ** 24        # selfplay chunks of one call


def _int(name, value, minimum, maximum=_BIG):
    return as_int(name, value, minimum, maximum)


def _seconds(name, value, maximum=_MAX_SECONDS):
    """A time-out: a real number of seconds in (0, maximum]."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok or not 0 < value <= maximum:               # also rejects nan
        raise ValueError(f"{name} must be a number of seconds in (0, {maximum:g}], got {value!r}"
                         + ("" if ok else f" ({type(value).__name__})"))
    return float(value)


def _ray_options(name, options):
    """Options for Ray's ``.options`` (a dict with str keys, or None)."""
    if options is None:
        return {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise ValueError(f"{name} must be a dict of Ray options (str keys) or None, got {options!r}")
    c = options.get("num_cpus", 0)
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)) \
            or not 0 <= c <= _MAX_CPUS:
        raise ValueError(f"{name}['num_cpus'] must be a number in 0..{_MAX_CPUS}, got {c!r}")
    return dict(options)


def _first_line(e):
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


# ---------------------------------------------------------------------------
# init: a new local Ray, or a cluster by its address within a bounded time

_ADDRESS_FORMS = ("None (a new local Ray), 'auto', 'HOST:PORT' (a cluster's GCS, e.g. 'head:6379') "
                  "or 'ray://HOST[:PORT]'")
_PENDING = None     # the helper thread of an init(address=...) abandoned inside ray.init


def _host_port(text, default_port=None):
    """``"HOST:PORT"`` (or ``"[v6]:PORT"``) -> (host, port); None if there is no valid port."""
    host, sep, port = text.rpartition(":")
    if not sep or "]" in port or not host:
        host, port = text, default_port
    if port is None:
        return None
    host = host.strip("[]")
    try:
        port = int(port)
    except ValueError:
        return None
    return (host, port) if host and 0 < port < 65536 else None


def _address_ok(address):
    """Whether ``address`` has one of the forms ``init`` takes (no I/O)."""
    if address == "auto":
        return True
    if address.startswith("ray://"):
        return _host_port(address[len("ray://"):].split("/", 1)[0], 10001) is not None
    if "://" in address:                                  # another Ray Client protocol: Ray's business
        return bool(address.split("://", 1)[1])
    return _host_port(address) is not None


def _checks(target, temp_dir, deadline):
    """What to ask before ``ray.init(address=target)``: ``(where, checks)``, where
    is the host:port Ray will connect to (None if unknown), checks the
    ``(what, fn)`` pairs for ``_init_bounded``."""
    if target.startswith("ray://"):
        (host, port), gcs = _host_port(target[len("ray://"):].split("/", 1)[0], 10001), False
    elif "://" in target:
        return None, []
    else:
        from ray._private.services import canonicalize_bootstrap_address
        resolved = canonicalize_bootstrap_address(target, temp_dir=temp_dir)   # "auto": finds this machine's
        if resolved is None:                                                   # cluster, or ConnectionError
            return None, []
        (host, port), gcs = _host_port(resolved), True
    hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def tcp():
        try:
            socket.create_connection((host, port), timeout=max(0.01, deadline - time.monotonic())).close()
        except socket.gaierror as e:
            raise ConnectionError(f"cannot resolve host {host!r} ({e.strerror or e})") from None
        except OSError as e:
            raise ConnectionError(f"TCP port {port} of {host!r}: {e.strerror or e}") from None

    def ask_gcs():                                        # its cluster id; Ray gives up after 40 s
        from ray._raylet import GcsClient
        try:
            GcsClient(address=hostport, cluster_id=None)
        except Exception as e:  # noqa: BLE001 - classified below
            if type(e).__name__ != "AuthenticationError":
                raise ConnectionError(f"port {port} is open but no Ray GCS answered on it ({_first_line(e)})") \
                    from None
            # ray.init(address="HOST:PORT") does not turn token authentication on by itself (it
            # would retry for 20 s and then report a bare "Failed to connect"); "auto" does
            if target != "auto":
                raise ConnectionError(
                    f"the cluster requires token authentication: set RAY_AUTH_MODE=token and give its token "
                    f"(RAY_AUTH_TOKEN or ~/.ray/auth_token); Ray said: {str(e).strip().split('. ')[0]}") from None

    checks = [(f"TCP port {port} of {host!r} did not answer", tcp)]
    if gcs:
        checks.append((f"port {port} is open but no Ray GCS answered on it", ask_gcs))
    return hostport, checks


def _not_the_sigterm_warning(record):
    """A logging filter: ray.init logs that it cannot set its SIGTERM handler when
    it runs off the main thread (``_init_bounded`` sets it on the main thread)."""
    return not str(record.msg).startswith("SIGTERM handler is not set")


def _init_bounded(ray, address, kwargs, deadline, fail, checks=()):
    """Run ``checks``, then ``ray.init(address=address, **kwargs)``, on one helper
    thread waited for until ``deadline`` (time.monotonic). ``checks`` are
    ``(what, fn)`` pairs: ``fn()`` raises ConnectionError(why) when the address
    is wrong, and ``what`` says what did not answer if the deadline passes during
    it. A ConnectionError is raised as ``fail(why)``. Past the deadline
    ``fail(...)`` is raised and the thread abandoned: it starts nothing further,
    and a ``ray.init`` that still connects shuts that Ray down again (``_PENDING``
    holds it meanwhile; the next ``init`` waits for it)."""
    global _PENDING
    steps = [*checks, ("ray.init did not finish connecting", lambda: ray.init(address=address, **kwargs))]
    lock, box = threading.Lock(), {"abandoned": False, "doing": steps[0][0]}
    log = logging.getLogger("ray._private.worker")

    def run():
        log.addFilter(_not_the_sigterm_warning)
        try:
            for what, fn in steps:
                with lock:
                    if box["abandoned"]:
                        return
                    box["doing"] = what
                result = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            with lock:
                box["error"] = e
            return
        finally:
            log.removeFilter(_not_the_sigterm_warning)
        with lock:
            box["result"], late = result, box["abandoned"]
        if late:                                          # the caller was told it failed: keep it so
            ray.shutdown()

    if threading.current_thread() is threading.main_thread():     # what ray.init does on the main thread
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))
    t = threading.Thread(target=run, daemon=True, name="majiang_env.distributed.init")
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    with lock:
        finished = "result" in box or "error" in box
        if not finished:
            box["abandoned"] = True
            if box["doing"] == steps[-1][0]:
                _PENDING = t
    if not finished:
        raise fail(f"{box['doing']} within the timeout")
    if isinstance(box.get("error"), ConnectionError):
        raise fail(_first_line(box["error"])) from box["error"]
    if "error" in box:
        raise box["error"]
    return box["result"]


def init(num_cpus=None, address=None, timeout=30.0, **kwargs):
    """Start Ray for this process, unless it is already initialised (then return None).

    ``address=None``: a new local Ray with ``num_cpus`` CPUs (default: all),
    never one found running. ``address="auto"`` joins the cluster that
    ``ray start`` made on this machine (or the one ``RAY_ADDRESS`` names);
    ``"HOST:6379"`` a cluster by its head's GCS address; ``"ray://HOST:10001"``
    through Ray Client. A cluster's CPUs are set when it is started, so
    ``num_cpus`` with an address is a ValueError.

    ``timeout`` (seconds, a number in (0, 86400], default 30): with an address,
    the call returns, or raises ``ConnectionError`` naming the address and why,
    within that time (plus a few milliseconds), however the address fails. On
    one helper thread it opens a TCP connection to the host and port (a host
    that does not resolve, a port where nothing listens or that drops packets),
    asks the GCS there for its cluster id (a port where no Ray GCS answers, a
    cluster that wants a token this process lacks, ``RAY_AUTH_MODE=token``),
    then runs ``ray.init``; past the deadline the thread is abandoned. A failed
    ``init`` leaves Ray not initialised, so ``init()`` may be called again
    (should an abandoned ``ray.init`` still connect, it shuts that Ray down
    again; a later ``init`` first waits, within its own ``timeout``, for it to
    end). Starting a local Ray (``address=None``) is bounded by Ray's own
    time-outs instead.

    Defaults for a local Ray: no dashboard; and ``RAY_USAGE_STATS_ENABLED=0``
    unless set. Other keywords go to ``ray.init``. Returns Ray's context.
    """
    global _PENDING
    if num_cpus is not None:
        num_cpus = _int("num_cpus", num_cpus, 1, _MAX_CPUS)
        if address is not None:
            raise ValueError("num_cpus is for a local Ray; a cluster's CPUs are set when it is started "
                             "(ray start --num-cpus=...)")
    if address is not None and (not isinstance(address, str) or not _address_ok(address.strip())):
        raise ValueError(f"address must be {_ADDRESS_FORMS}, got {address!r}")
    timeout = _seconds("timeout", timeout)
    deadline = time.monotonic() + timeout
    ray = _ray()
    if _PENDING is not None:                              # an earlier init(address=...) that timed out
        _PENDING.join(max(0.0, deadline - time.monotonic()))
        if _PENDING.is_alive():
            raise RuntimeError("an earlier init(address=...) that timed out is still inside ray.init; "
                               "try again later")
        _PENDING = None
    if ray.is_initialized():
        return None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address is None:
        kwargs.setdefault("include_dashboard", False)
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
        return ray.init(address="local", **kwargs)

    address = address.strip()
    where = [f"address={address!r}"]
    target = address                                      # what ray.init will use: RAY_ADDRESS replaces "auto"
    if address == "auto" and os.environ.get("RAY_ADDRESS"):
        target = os.environ["RAY_ADDRESS"].strip()
        where.append(f"RAY_ADDRESS={target!r}")
        if not _address_ok(target):
            raise ValueError(f"the environment's RAY_ADDRESS must be {_ADDRESS_FORMS}, got {target!r}")

    def fail(why):
        return ConnectionError(f"cannot connect to a Ray cluster at {', '.join(where)} (timeout={timeout:g} s): {why}")

    try:
        hostport, checks = _checks(target, kwargs.get("_temp_dir"), deadline)
    except ConnectionError as e:                          # "auto" and no cluster on this machine
        raise fail(_first_line(e)) from None
    if hostport is not None and hostport != target:
        where.append(f"connecting to {hostport}")
    return _init_bounded(ray, address, kwargs, deadline, fail, checks)


class WorkerDiedError(RuntimeError):
    """A Ray worker died and no more failures may be absorbed. ``partial`` holds
    the data of everything that finished; ``failures`` lists each death."""

    def __init__(self, message, partial=None, failures=()):
        super().__init__(message)
        self.partial = partial
        self.failures = list(failures)


def merge_stats(chunks):
    """Merge selfplay stats that carry ``points`` (per-seat totals) into one dict."""
    games = sum(c["games"] for c in chunks)
    points = [sum(c["points"][q] for c in chunks) for q in range(4)]
    return {"games": games, "hands": sum(c["hands"] for c in chunks),
            "decisions": sum(c["decisions"] for c in chunks),
            "mean_points": (np.array(points, np.int64) / max(1, games)).tolist(),   # as selfplay computes it
            "wins": [sum(c["wins"][q] for c in chunks) for q in range(4)], "points": points}


# ---------------------------------------------------------------------------
# what runs on the workers

_CODE = None


def _code_fingerprint():
    """A hash of this installation's majiang_env sources (read once per process),
    so a worker running other code than the driver is noticed."""
    global _CODE
    if _CODE is None:
        import hashlib
        from pathlib import Path
        h = hashlib.sha1()
        root = Path(__file__).resolve().parent
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
        _CODE = h.hexdigest()[:12]
    return _CODE


def _check_code(code, who, stacklevel):
    if code != _code_fingerprint():
        warnings.warn(f"majiang_env.distributed: {who} runs majiang_env sources {code}, the driver "
                      f"{_code_fingerprint()}: install the same version on every node, or results will not match",
                      RuntimeWarning, stacklevel=stacklevel + 1)


def _selfplay_chunk(chunk, first, n, agents, seed, num_envs, rules, threads):
    """A SelfplayPool task: games ``first .. first + n - 1`` of the run from ``seed``."""
    import numba
    from .vector import selfplay
    s = selfplay(n, agents=agents, seed=seed, num_envs=num_envs, rules=rules, first_game=first,
                 num_threads=min(threads, numba.config.NUMBA_NUM_THREADS))
    s["points"] = [int(round(m * s["games"])) for m in s["mean_points"]]
    s.update(chunk=chunk, first_game=first, pid=os.getpid(), host=socket.gethostname(), code=_code_fingerprint())
    return s


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


def _workers(num_workers, cpus_each, most=None):
    """``num_workers`` checked against the cluster (default: as many as its CPUs hold)."""
    ray = _ray()
    if not ray.is_initialized():
        init()
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if num_workers is None:
        num_workers = max(1, min(int(cpus // cpus_each) if cpus_each else cpus, most or cpus))
    if num_workers * cpus_each > cpus:
        raise ValueError(f"{num_workers} workers x {cpus_each} CPUs need {num_workers * cpus_each} CPUs; "
                         f"the Ray cluster has {cpus}")
    return num_workers


class _Pool:
    """What SelfplayPool and RolloutCollector share: shut down, max_failures, ``with``."""

    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"this {type(self).__name__} is shut down; make a new one")

    def _limit(self):
        """``max_failures`` (an attribute a caller may change), checked for this call."""
        return _int("max_failures", self.max_failures, 0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


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
        from .rules import make_rules
        from .vector import AGENTS, MAX_ENVS
        ray = _ray()
        if not isinstance(agents, (tuple, list)) or len(agents) != 4 or \
                any(not isinstance(a, str) or a not in AGENTS for a in agents):
            raise ValueError(f"agents must be a tuple of 4 names from {sorted(AGENTS)}, got {agents!r}")
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
        from .rules import make_rules
        from .vector import MAX_ENVS
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
        for i, inf in zip(workers, self._placed([self.workers[i].info.remote() for i in workers])):
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
