"""Ray itself: importing it (:func:`_ray`), starting or joining it (:func:`init`:
a new local Ray, or a cluster by its address, with TCP and GCS checks bounded by
a timeout), and the argument checks the pools share."""
from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time

import numpy as np

from ..engine.checks import as_int

__all__ = ["init"]

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
