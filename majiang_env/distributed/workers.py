"""What ``SelfplayPool`` and ``RolloutCollector`` share about their workers: how many
there are (:func:`_workers`), shutting down and ``with`` (:class:`_Pool`), the
failure they raise (:class:`WorkerDiedError`) and the fingerprint of the sources
a worker runs (:func:`_code_fingerprint`, checked against the driver's)."""
from __future__ import annotations

import warnings

from .cluster import _int, _ray, init

__all__ = ["WorkerDiedError"]


class WorkerDiedError(RuntimeError):
    """A Ray worker died and no more failures may be absorbed. ``partial`` holds
    the data of everything that finished; ``failures`` lists each death."""

    def __init__(self, message, partial=None, failures=()):
        super().__init__(message)
        self.partial = partial
        self.failures = list(failures)


_CODE = None


def _code_fingerprint():
    """A hash of this installation's majiang_env sources (read once per process),
    so a worker running other code than the driver is noticed."""
    global _CODE
    if _CODE is None:
        import hashlib
        from pathlib import Path
        h = hashlib.sha1()
        root = Path(__file__).resolve().parents[1]          # the majiang_env package
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
        _CODE = h.hexdigest()[:12]
    return _CODE


def _check_code(code, who, stacklevel):
    if code != _code_fingerprint():
        warnings.warn(f"majiang_env.distributed: {who} runs majiang_env sources {code}, the driver "
                      f"{_code_fingerprint()}: install the same version on every node, or results will not match",
                      RuntimeWarning, stacklevel=stacklevel + 1)


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
