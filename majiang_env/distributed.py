"""Distributed self-play and rollout collection on Ray (``pip install "majiang_env[distributed]"``).

Ray actors each run ``selfplay`` chunks or own ``VectorGame`` streams; one
driver hands out the work and gathers the results. Ray is imported only when
a function of this module needs it, so ``import majiang_env`` (and even
``import majiang_env.distributed``) works without it.

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
    * Stream k of ``RolloutCollector(seed=s)`` is ``RolloutStream(k, B, seed=s)``:
      a ``VectorGame(B, seed=env_seed)`` stepped by the policy with the numpy
      Generator ``default_rng(policy_seq)``, where ``(env_seed, policy_seq) =
      stream_seeds(s, k)``. ``collect`` concatenates the streams in stream
      order, so the trajectories depend on (s, number of streams, B, policy,
      weights) only and equal those of the same ``RolloutStream`` objects run
      in one process. The policy must draw its randomness from the ``rng`` it
      is given for this to hold.
    * ``seed=None`` draws a seed on the driver; it is returned (``stats["seed"]``,
      ``collector.seed``) so the run can be repeated.

Failures
    A worker that dies (process killed, node lost: Ray's ``RayActorError``) is
    reported with a ``RuntimeWarning`` and a record in ``stats["failures"]`` /
    ``collector.failures`` (worker index, pid, host, what it was running, Ray's
    error). While at most ``max_failures`` deaths have happened in the call it
    is replaced by a fresh actor that re-runs what was lost, and the result is
    the same as without the failure. Past that the call waits for the work
    still running on the other workers and raises ``WorkerDiedError``, whose
    ``partial`` keeps every finished chunk's or stream's data.
"""
from __future__ import annotations

import os
import socket
import time
import warnings

import numpy as np

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
    from .checks import as_int
    return as_int(name, value, minimum, maximum)


def _seconds(name, value, maximum=_MAX_SECONDS):
    """A time-out: a real number of seconds in (0, maximum]."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if not ok or not 0 < value <= maximum:               # also rejects nan
        raise ValueError(f"{name} must be a number of seconds in (0, {maximum:g}], got {value!r}"
                         + ("" if ok else f" ({type(value).__name__})"))
    return float(value)


def _callable(name, value, how):
    if not callable(value):
        raise ValueError(f"{name} must be callable as {how}, got {value!r}")
    return value


def _actor_options(options):
    if options is None:
        return {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise ValueError(f"actor_options must be a dict of Ray actor options (str keys) or None, got {options!r}")
    if "num_cpus" in options:
        c = options["num_cpus"]
        if (isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating))
                or not 0 <= c <= _MAX_CPUS):
            raise ValueError(f"actor_options['num_cpus'] must be a number in 0..{_MAX_CPUS}, got {c!r}")
    return dict(options)


# ---------------------------------------------------------------------------
# init: a new local Ray, or a cluster by its address within a bounded time

_PENDING = None     # the thread of an init(address=...) that timed out inside ray.init (see _init_bounded)


def _in_thread(fn, deadline):
    """``fn()`` on a daemon thread, waited for until ``deadline`` (time.monotonic).
    Returns ``(finished, result, error)``; an unfinished ``fn`` is left to end on
    its own, so it must change nothing that outlives it."""
    import threading
    box = {}

    def run():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=run, daemon=True, name="majiang_env.distributed.init")
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    if t.is_alive():
        return False, None, None
    return True, box.get("result"), box.get("error")


def _split_host_port(text, default_port=None):
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


_ADDRESS_FORMS = ("None (a new local Ray), 'auto', 'HOST:PORT' (a cluster's GCS, e.g. 'head:6379') "
                  "or 'ray://HOST[:PORT]'")


def _address_ok(address):
    """Whether ``address`` has one of the forms ``init`` takes (no I/O)."""
    if address == "auto":
        return True
    if address.startswith("ray://"):
        return _split_host_port(address[len("ray://"):].split("/", 1)[0], 10001) is not None
    if "://" in address:                                  # another Ray Client protocol: Ray's business
        return bool(address.split("://", 1)[1])
    return _split_host_port(address) is not None


def _bootstrap(address, temp_dir):
    """Where ``ray.init(address=address)`` will connect (``address`` after
    ``RAY_ADDRESS`` replaced "auto"): ``((host, port), "gcs" | "client")``, host
    as Ray rewrites it (localhost -> this node's IP); or None when that cannot
    be known beforehand (then only the deadline bounds the call)."""
    if address.startswith("ray://"):
        return _split_host_port(address[len("ray://"):].split("/", 1)[0], 10001), "client"
    if "://" in address:
        return None
    try:
        from ray._private.services import canonicalize_bootstrap_address
    except ImportError:                                   # pragma: no cover - another Ray layout
        hp = None if address == "auto" else _split_host_port(address)
    else:
        try:
            resolved = canonicalize_bootstrap_address(address, temp_dir=temp_dir)
        except ConnectionError as e:                      # "auto" and no cluster on this machine
            raise ConnectionError(f"address={address!r}: {e}") from None
        except ValueError:                                # pragma: no cover - checked by _address_ok
            resolved = None
        hp = None if resolved is None else _split_host_port(resolved)
    return None if hp is None else (hp, "gcs")


def _probe(host, port, deadline):
    """Open (and close) a TCP connection to host:port before ``deadline``; an
    OSError says why not (``socket.timeout`` when the deadline passed)."""
    done, infos, err = _in_thread(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM), deadline)
    if not done:
        raise socket.timeout(f"resolving {host!r} took too long")
    if err is not None:
        raise err if isinstance(err, OSError) else OSError(str(err))
    last = None
    for family, kind, proto, _, sockaddr in infos:
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("no answer in time")
        try:
            with socket.socket(family, kind, proto) as s:
                s.settimeout(left)
                s.connect(sockaddr)
            return
        except OSError as e:
            last = e
    raise last or OSError(f"{host!r} resolves to no address")


def _ask_gcs(target, deadline):
    """Ask the Ray GCS at ``target`` for its cluster id before ``deadline``:
    ``(answered, error)``; an error reply (e.g. token authentication) is an answer."""
    try:
        from ray._raylet import GcsClient
    except ImportError:                                   # pragma: no cover - another Ray layout
        return True, None
    done, _, err = _in_thread(lambda: GcsClient(address=target, cluster_id=None), deadline)
    return done, err


class _DropRayThreadWarning:
    """A logging filter for the warning ``ray.init`` logs when it runs on another
    thread than the main one (this module sets Ray's SIGTERM handler itself)."""

    @staticmethod
    def filter(record):
        return not str(record.msg).startswith("SIGTERM handler is not set")


def _init_bounded(ray, address, kwargs, deadline, fail):
    """``ray.init(address=..., **kwargs)`` on a thread, waited for until ``deadline``.
    Past it ``fail(why)`` is raised and the call is abandoned: should it connect
    later, it shuts that Ray down again; a later ``init`` waits for it to end."""
    global _PENDING
    import logging
    import sys
    import threading
    if threading.current_thread() is threading.main_thread():
        try:                                              # what ray.init does on the main thread
            from ray._private.utils import set_sigterm_handler
            set_sigterm_handler(lambda signum, frame: sys.exit(signum))
        except Exception:  # pragma: no cover - another Ray layout
            pass
    log = logging.getLogger("ray._private.worker")
    lock, box = threading.Lock(), {}

    def run():
        log.addFilter(_DropRayThreadWarning)
        try:
            ctx = ray.init(address=address, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            with lock:
                box["error"] = e
            return
        finally:
            log.removeFilter(_DropRayThreadWarning)
        with lock:
            box["ctx"] = ctx
            late = box.get("abandoned", False)
        if late:                                          # the caller was told it failed: keep it so
            ray.shutdown()

    t = threading.Thread(target=run, daemon=True, name="majiang_env.distributed.init")
    t.start()
    try:
        t.join(max(0.0, deadline - time.monotonic()))
    finally:
        with lock:
            abandoned = "ctx" not in box and "error" not in box
            if abandoned:
                box["abandoned"] = True
                _PENDING = t
    if abandoned:
        raise fail("ray.init did not finish connecting within the timeout")
    if "error" in box:
        e = box["error"]
        if isinstance(e, ConnectionError):
            raise fail(_first_line(e)) from e
        raise e
    return box["ctx"]


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
    within that time (plus a few milliseconds), however the address fails: a
    host that does not resolve, a port where nothing listens or that drops
    packets, a port that is open but no Ray GCS answers, a cluster that wants
    a token this process lacks (``RAY_AUTH_MODE=token``), a ``ray.init`` that
    does not finish. The host is resolved and its TCP port probed first, then
    the GCS asked for its cluster id (not for ``ray://``), then ``ray.init``
    runs on a helper thread until the deadline. A failed ``init`` leaves Ray
    not initialised, so ``init()`` may be called again (should an abandoned
    ``ray.init`` still connect, it shuts that Ray down again; a later ``init``
    first waits, within its own ``timeout``, for it to end). Starting a local
    Ray (``address=None``) is bounded by Ray's own time-outs instead.

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
    effective = address                                   # what ray.init will use: RAY_ADDRESS replaces "auto"
    if address == "auto" and os.environ.get("RAY_ADDRESS"):
        effective = os.environ["RAY_ADDRESS"].strip()
        where.append(f"RAY_ADDRESS={effective!r}")
        if not _address_ok(effective):
            raise ValueError(f"the environment's RAY_ADDRESS must be {_ADDRESS_FORMS}, got {effective!r}")

    def fail(why):
        return ConnectionError(f"cannot connect to a Ray cluster at {', '.join(where)} (timeout={timeout:g} s): {why}")

    found = _bootstrap(effective, kwargs.get("_temp_dir"))
    if found is not None:
        (host, port), kind = found
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if target != effective:
            where.append(f"connecting to {target}")
        try:
            _probe(host, port, deadline)
        except socket.gaierror as e:
            raise fail(f"cannot resolve host {host!r} ({e.strerror or e})") from None
        except socket.timeout:
            raise fail(f"TCP port {port} of {host!r} did not answer within the timeout") from None
        except OSError as e:
            raise fail(f"TCP port {port} of {host!r}: {e.strerror or e}") from None
        if kind == "gcs":
            answered, err = _ask_gcs(target, deadline)
            if not answered:
                raise fail(f"port {port} is open but no Ray GCS answered on it within the timeout")
            # ray.init(address="HOST:PORT") does not turn token authentication on by itself (it
            # would retry for 20 s and then report a bare "Failed to connect"); "auto" does
            if type(err).__name__ == "AuthenticationError" and effective != "auto":
                raise fail(f"the cluster requires token authentication: set RAY_AUTH_MODE=token and give "
                           f"its token (RAY_AUTH_TOKEN or ~/.ray/auth_token); Ray said: "
                           f"{str(err).strip().split('. ')[0]}")
    return _init_bounded(ray, address, kwargs, deadline, fail)


class WorkerDiedError(RuntimeError):
    """A Ray worker died and no more failures may be absorbed. ``partial`` holds
    the data of everything that finished; ``failures`` lists each death."""

    def __init__(self, message, partial=None, failures=()):
        super().__init__(message)
        self.partial = partial
        self.failures = list(failures)


# ---------------------------------------------------------------------------
# policies and streams (no Ray needed)

def masked_random(obs, mask, player, rng):
    """Default policy: uniform among the legal ids of each row, from ``rng``."""
    return np.where(mask != 0, rng.random(mask.shape), -1.0).argmax(axis=1)


class PreferencePolicy:
    """A policy with weights, as an example of what a learner pushes: one logit
    per action id; each row samples a legal action with probability
    proportional to ``exp(logit)`` (Gumbel-max, from ``rng``).
    ``set_weights(w)`` takes a float array of shape (156,)."""

    def __init__(self, logits=None):
        self.logits = np.zeros(156)
        if logits is not None:
            self.set_weights(logits)

    def set_weights(self, logits):
        try:
            w = np.asarray(logits)
        except Exception:  # noqa: BLE001 - ragged nesting and the like
            w = np.asarray(None, object)
        if w.dtype.kind not in "iuf" or w.shape != (156,) or not np.isfinite(w).all():
            raise ValueError(f"weights must be 156 finite real logits (shape (156,)), got "
                             f"{type(logits).__name__} of dtype {w.dtype} and shape {w.shape}")
        self.logits = w.astype(np.float64)

    def __call__(self, obs, mask, player, rng):
        keys = self.logits - np.log(-np.log(rng.random(mask.shape)))
        return np.where(mask != 0, keys, -np.inf).argmax(axis=1)


def stream_seeds(seed: int, stream: int):
    """``(env_seed, policy_seed_sequence)`` of stream ``stream`` of a run from ``seed``."""
    from .checks import as_seed
    seed = as_seed(seed)
    stream = _int("stream", stream, 0)
    env_seed = int(np.random.SeedSequence(seed, spawn_key=(stream, 0)).generate_state(1, np.uint64)[0])
    return env_seed, np.random.SeedSequence(seed, spawn_key=(stream, 1))


class RolloutStream:
    """Stream ``index`` of a rollout run: one ``VectorGame`` of ``num_envs`` games
    stepped by a policy, reproducible from ``(seed, index)``. ``collect(T)``
    returns the next T steps (the arrays of ``RolloutCollector.collect``)."""

    def __init__(self, index, num_envs, seed=0, rules=None):
        from .vector import VectorGame
        self.index = _int("stream index", index, 0)
        env_seed, policy_seq = stream_seeds(seed, self.index)
        self.vg = VectorGame(num_envs, rules=rules, seed=env_seed)
        self.rng = np.random.default_rng(policy_seq)
        self.obs, self.mask, self.player = self.vg.reset()

    def collect(self, num_steps, policy=masked_random):
        vg, T, B = self.vg, _steps(num_steps, self.vg.num_envs), self.vg.num_envs
        _callable("policy", policy, "policy(obs, mask, player, rng)")
        obs, mask, player = self.obs, self.mask, self.player
        out = {"obs": np.empty((T,) + obs.shape, obs.dtype), "mask": np.empty((T,) + mask.shape, mask.dtype),
               "player": np.empty((T, B), player.dtype), "actions": np.empty((T, B), np.int64),
               "rewards": None, "done": np.empty((T, B), np.bool_), "game": np.empty((T, B), np.int64)}
        for t in range(T):
            out["obs"][t], out["mask"][t], out["player"][t] = obs, mask, player
            out["game"][t] = vg.game_index
            a = np.asarray(policy(obs, mask, player, self.rng))
            out["actions"][t] = a
            obs, mask, player, rewards, done = vg.step(a)
            if out["rewards"] is None:
                out["rewards"] = np.empty((T,) + rewards.shape, rewards.dtype)
            out["rewards"][t], out["done"][t] = rewards, done
        self.obs, self.mask, self.player = obs, mask, player
        out["last_obs"], out["last_mask"], out["last_player"] = obs.copy(), mask.copy(), player.copy()
        return out

    # A checkpoint is every per-game array of the VectorGame (its writeable
    # ndarray attributes with num_envs rows: state rows, buffers, game indices)
    # plus the policy generator; tables shared by all games stay out of it, and
    # so do the read-only views of those buffers that the VectorGame hands out.
    def get_state(self):
        B = self.vg.num_envs
        arrays = {k: v.copy() for k, v in vars(self.vg).items()
                  if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == B and v.flags.writeable}
        return {"vg": arrays, "rng": self.rng.bit_generator.state,
                "last": (self.obs.copy(), self.mask.copy(), self.player.copy())}

    def set_state(self, state):
        for k, v in state["vg"].items():
            have = getattr(self.vg, k, None)
            if not isinstance(have, np.ndarray) or have.shape != v.shape or have.dtype != v.dtype:
                raise RuntimeError(f"stream {self.index}: saved VectorGame.{k} is {v.dtype}{v.shape}, this "
                                   f"process has {getattr(have, 'dtype', None)}{getattr(have, 'shape', None)}: "
                                   f"it runs a different majiang_env version than the one that saved it")
            have[...] = v
        self.rng.bit_generator.state = state["rng"]
        self.obs, self.mask, self.player = (x.copy() for x in state["last"])


_STEP_BYTES = 2048          # more than one step of one env takes in collect's arrays (about 1.1 kB)


def _steps(num_steps, envs):
    """``num_steps`` for ``collect``: an int >= 1 whose arrays numpy can describe."""
    T = _int("num_steps", num_steps, 1)
    if T * envs * _STEP_BYTES > _BIG:
        raise ValueError(f"num_steps={T} with {envs} envs per stream asks for more than 2**63 bytes of "
                         f"trajectory per stream; collect fewer steps per call")
    return T


def merge_stats(chunks):
    """Merge selfplay stats that carry ``points`` (per-seat totals) into one dict."""
    games = sum(c["games"] for c in chunks)
    points = [sum(c["points"][q] for c in chunks) for q in range(4)]
    return {"games": games, "hands": sum(c["hands"] for c in chunks),
            "decisions": sum(c["decisions"] for c in chunks),
            "mean_points": (np.array(points, np.int64) / max(1, games)).tolist(),   # as selfplay computes it
            "wins": [sum(c["wins"][q] for c in chunks) for q in range(4)], "points": points}


# ---------------------------------------------------------------------------
# the actor and the pool of actors

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

class _Worker:
    """Body of the Ray actor: runs selfplay chunks and owns rollout streams."""

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

    def selfplay_chunk(self, chunk, first, n, agents, seed, num_envs, rules):
        from .vector import selfplay
        s = selfplay(n, agents=agents, seed=seed, num_envs=num_envs, rules=rules, first_game=first)
        s["points"] = [int(round(m * s["games"])) for m in s["mean_points"]]
        s.update(chunk=chunk, first_game=first, worker=self.index, pid=os.getpid())
        return s

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


_REMOTE = None


def _death_errors():
    ex = _ray().exceptions
    return tuple(getattr(ex, n) for n in ("RayActorError", "ActorUnavailableError") if hasattr(ex, n))


def _first_line(e):
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


class _Pool:
    """``num_workers`` actors of ``threads_per_worker`` numba threads (and Ray
    CPUs) each; ``workers[i]`` and ``info[i]`` (pid, host); replaces dead ones."""

    def __init__(self, num_workers=None, threads_per_worker=1, max_failures=2, actor_options=None,
                 start_timeout=120.0, _most=None):
        global _REMOTE
        self.threads = _int("threads_per_worker", threads_per_worker, 1, _MAX_CPUS)
        self.max_failures = _int("max_failures", max_failures, 0)
        if num_workers is not None:
            num_workers = _int("num_workers", num_workers, 1, _MAX_CPUS)
        actor_options = _actor_options(actor_options)
        start_timeout = _seconds("start_timeout", start_timeout)
        ray = _ray()
        if not ray.is_initialized():
            init()
        if _REMOTE is None:
            _REMOTE = ray.remote(_Worker)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if num_workers is None:
            num_workers = max(1, min(cpus // self.threads, _most or cpus))
        self.actor_options = {"num_cpus": self.threads, **actor_options}
        need = num_workers * self.actor_options["num_cpus"]
        if need > cpus:
            raise ValueError(f"{num_workers} workers x {self.actor_options['num_cpus']} CPUs need {need} CPUs; "
                             f"the Ray cluster has {cpus}")
        self.num_workers = num_workers
        self.start_timeout = start_timeout
        self.failures = []
        self._dead = set()
        self.workers = [_REMOTE.options(**self.actor_options).remote(i, self.threads) for i in range(num_workers)]
        self.info = self._get([w.info.remote() for w in self.workers])
        for inf in self.info:
            self._check_code(inf)

    def _check_code(self, inf):
        if inf["code"] != _code_fingerprint():
            warnings.warn(f"majiang_env.distributed: worker {inf['worker']} on {inf['host']} runs majiang_env "
                          f"sources {inf['code']}, the driver {_code_fingerprint()}: install the same version "
                          f"on every node, or results will not match", RuntimeWarning, stacklevel=4)

    def _get(self, refs):
        ray = _ray()
        try:
            return ray.get(refs, timeout=self.start_timeout)
        except ray.exceptions.GetTimeoutError:
            free = ray.available_resources().get("CPU", 0)
            raise RuntimeError(f"Ray workers did not start within start_timeout={self.start_timeout:g} s; "
                               f"{free:g} CPUs are free: do other actors (another pool?) hold them?") from None

    def _replace(self, i):
        ray = _ray()
        try:
            ray.kill(self.workers[i])
        except Exception:  # already gone
            pass
        self.workers[i] = _REMOTE.options(**self.actor_options).remote(i, self.threads)
        self.info[i] = self._get(self.workers[i].info.remote())
        self._check_code(self.info[i])
        self._dead.discard(i)

    def _died(self, i, e, doing, failures, limit):
        """Record worker i's death. While at most ``limit`` deaths are in ``failures``,
        replace the worker and return None (re-run its work); else return the message."""
        inf = self.info[i]
        rec = {"worker": i, "pid": inf["pid"], "host": inf["host"], **doing, "error": _first_line(e)}
        failures.append(rec)
        self.failures.append(rec)
        self._dead.add(i)
        what = ", ".join(f"{k} {v}" for k, v in doing.items())
        msg = f"worker {i} (pid {inf['pid']} on {inf['host']}) died while running {what} ({rec['error']})"
        if len(failures) > limit:
            return msg
        warnings.warn(f"majiang_env.distributed: {msg}; replacing it and re-running that work",
                      RuntimeWarning, stacklevel=3)
        self._replace(i)
        return None

    def _check_open(self):
        if not self.workers:
            raise RuntimeError(f"this {type(self).__name__} is shut down; make a new one")

    def _limit(self):
        """``max_failures`` (an attribute a caller may change), checked for this call."""
        return _int("max_failures", self.max_failures, 0)

    def pids(self):
        return [inf["pid"] for inf in self.info]

    def shutdown(self):
        ray = _ray()
        for w in self.workers:
            try:
                ray.kill(w)
            except Exception:  # already gone
                pass
        self.workers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()


class SelfplayPool(_Pool):
    """Ray actors that run ``selfplay`` chunks; ``selfplay`` merges them.

    ``SelfplayPool(num_workers=None, threads_per_worker=1, max_failures=2,
    actor_options=None, start_timeout=120)``: ``num_workers`` defaults to the
    cluster's CPUs / ``threads_per_worker``; ``max_failures`` worker deaths are
    absorbed per call (an attribute: may be changed between calls);
    ``actor_options`` go to Ray's ``.options`` (e.g. ``resources``,
    ``scheduling_strategy="SPREAD"``). The actors hold their CPUs until
    ``shutdown()`` (or the end of a ``with`` block); a pool whose actors cannot
    be placed within ``start_timeout`` seconds raises RuntimeError.
    """

    def selfplay(self, num_games=10_000, agents=("random",) * 4, seed=0, num_envs=1024, rules=None,
                 chunk_games=None, on_chunk=None) -> dict:
        """Play games ``0 .. num_games-1`` of the run from ``seed`` on the workers.

        Returns ``selfplay``'s keys (``seconds`` is the wall time) plus
        ``points`` (totals per seat), ``seed``, ``chunks`` (each chunk's stats
        in game order, with the worker that ran it), ``failures`` and
        ``workers``. ``on_chunk(chunk_stats)`` is called on the driver as each
        chunk ends.
        """
        from .checks import as_seed
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
        if on_chunk is not None:
            _callable("on_chunk", on_chunk, "on_chunk(chunk_stats)")
        limit = self._limit()
        ranges = [(a, min(n, a + chunk_games)) for a in range(0, n, chunk_games)]
        todo = list(range(len(ranges)))[::-1]          # pop() takes the lowest chunk
        done, failures, fatal = {}, [], None
        inflight = {}                                    # ref -> (worker, chunk)
        self._check_open()
        for i in sorted(self._dead):                     # left dead by an earlier failed call
            self._replace(i)
        t0 = time.perf_counter()

        def submit():                                    # keep 2 chunks queued per actor, so none idles
            while todo and fatal is None:
                load = [0] * self.num_workers
                for i, _ in inflight.values():
                    load[i] += 1
                i = min(range(self.num_workers), key=load.__getitem__)
                if load[i] >= 2:
                    return
                c = todo.pop()
                a, b = ranges[c]
                inflight[self.workers[i].selfplay_chunk.remote(c, a, b - a, agents, seed, num_envs, rules)] = (i, c)

        submit()
        while inflight:
            ready, _ = ray.wait(list(inflight), num_returns=1)
            i, c = inflight.pop(ready[0])
            try:
                res = ray.get(ready[0])
            except _death_errors() as e:
                # every chunk queued on that actor is lost with it
                lost = [c] + [inflight.pop(r)[1] for r in [r for r, (j, _) in inflight.items() if j == i]]
                doing = {"chunk": c, "games": f"{ranges[c][0]}-{ranges[c][1] - 1}", "lost chunks": sorted(lost)}
                msg = self._died(i, e, doing, failures, limit)
                if msg is None:
                    todo.extend(sorted(lost, reverse=True))
                elif fatal is None:
                    fatal = msg
            else:
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
    spread over Ray workers round-robin (stream k on worker k % num_workers).

    ``collect(T)`` steps every stream T times with the policy and returns a dict
    of arrays over all ``N = num_streams * envs_per_stream`` envs (column
    ``k * envs_per_stream + i`` is env i of stream k):

        obs (T, N, 436) int16, mask (T, N, 156) int8, player (T, N): before step t
        actions (T, N) int64; rewards (T, N, 4), done (T, N): returned by step t
        game (T, N): the stream's game index being played at step t
        last_obs, last_mask, last_player: after the last step (for bootstrapping)
        seconds: per stream, the time its worker spent collecting

    Same-step autoreset as ``VectorGame``: after ``done[t, n]``, ``obs[t + 1, n]``
    is the first decision of the next game. ``policy(obs, mask, player, rng)``
    (picklable; default ``masked_random``) returns the (B,) actions of one
    stream. ``set_weights(w)`` calls ``policy.set_weights(w)`` on every worker;
    ``set_policy(p)`` replaces the policy.

    With ``recover=True`` (default) each stream's state comes back with its
    data (about 13 kB per game), so the streams of a dead worker are rebuilt on
    a fresh actor from the last collect and re-run, giving the same
    trajectories. With ``recover=False`` a death raises ``WorkerDiedError``.
    After a ``WorkerDiedError`` the collector's streams are lost: make a new one.
    """

    def __init__(self, num_streams, envs_per_stream, seed=0, rules=None, policy=None, num_workers=None,
                 threads_per_worker=1, recover=True, max_failures=2, actor_options=None, start_timeout=120.0):
        from .checks import as_bool, as_seed
        from .rules import make_rules
        from .vector import MAX_ENVS
        self.num_streams = _int("num_streams", num_streams, 1, _MAX_CPUS)
        self.envs_per_stream = _int("envs_per_stream", envs_per_stream, 1, MAX_ENVS)
        if num_workers is not None and _int("num_workers", num_workers, 1, _MAX_CPUS) > self.num_streams:
            raise ValueError(f"num_workers={num_workers} > num_streams={num_streams} would leave workers idle")
        policy = masked_random if policy is None else policy
        _callable("policy", policy, "policy(obs, mask, player, rng)")
        self.seed, self.rules = as_seed(seed), make_rules(rules)
        self.recover = as_bool("recover", recover)
        self.policy = policy
        self._weights = None
        self._states = [None] * self.num_streams        # state after the last collect (recover=True)
        self._broken = None
        super().__init__(num_workers, threads_per_worker, max_failures, actor_options, start_timeout,
                         _most=self.num_streams)
        ray = _ray()
        self._policy_ref = ray.put(self.policy)
        for i in range(self.num_workers):
            self._setup(i)

    def _home(self, k):
        return k % self.num_workers

    def _setup(self, i):
        w = self.workers[i]
        refs = [w.set_policy.remote(self._policy_ref)]
        if self._weights is not None:
            refs.append(w.set_weights.remote(self._weights))
        refs += [w.add_stream.remote(k, self.envs_per_stream, self.seed, self.rules, self._states[k])
                 for k in range(self.num_streams) if self._home(k) == i]
        self._get(refs)

    def set_policy(self, policy):
        """Replace the policy on every worker (its weights are forgotten)."""
        policy = masked_random if policy is None else policy
        _callable("policy", policy, "policy(obs, mask, player, rng)")
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
        T = _steps(num_steps, self.envs_per_stream)
        limit = self._limit() if self.recover else 0
        ray = _ray()
        failures, fatal, results = [], None, {}
        self._check_open()
        inflight = {self.workers[self._home(k)].collect.remote(k, T, self.recover): k
                    for k in range(self.num_streams)}
        while inflight:
            ready, _ = ray.wait(list(inflight), num_returns=1)
            k = inflight.pop(ready[0])
            try:
                results[k] = ray.get(ready[0])
            except _death_errors() as e:
                i = self._home(k)
                lost = sorted([k] + [inflight.pop(r) for r in [r for r, k2 in inflight.items()
                                                               if self._home(k2) == i]])
                # streams of worker i that finished this round restart from their new state
                for k2, (_, st) in results.items():
                    if self._home(k2) == i and st is not None:
                        self._states[k2] = st
                msg = self._died(i, e, {"streams": lost}, failures, limit)
                if msg is None:
                    self._setup(i)
                    for k2 in lost:
                        inflight[self.workers[i].collect.remote(k2, T, True)] = k2
                elif fatal is None:
                    fatal = msg
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
        return _concat([results[k][0] for k in range(self.num_streams)])


def _concat(parts):
    out = {}
    for key in parts[0]:
        if key == "seconds":
            out[key] = [p[key] for p in parts]
        else:
            out[key] = np.concatenate([p[key] for p in parts], axis=0 if key.startswith("last_") else 1)
    return out
