"""numba's threads, in one place: the thread count (validation and a context
manager that restores it) and the optional TBB threading layer.

Every module that runs the kernel with a chosen thread count (``VectorGame``,
``selfplay``, ``majiang_env.training.ppo``, the Ray workers) goes through ``check_threads``
and ``numba_threads``.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata
import os

import numba

from .checks import is_int, show


def check_threads(n):
    """``None`` (leave numba's setting) or an int in 1..NUMBA_NUM_THREADS."""
    if n is None:
        return None
    top = numba.config.NUMBA_NUM_THREADS
    if not is_int(n) or not 1 <= n <= top:
        raise ValueError(f"num_threads must be None or an int in 1..{top}, got {show(n)}")
    return int(n)


def _loaded_libgomp():
    """GNU OpenMP's runtime if this process has already loaded it, else None."""
    try:
        return ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except (OSError, AttributeError):   # not loaded, or no RTLD_NOLOAD (not Linux)
        return None


class _KeepOpenMPThreads:
    """Restores the calling thread's OpenMP thread count after the enclosed calls.

    numba's ``omp`` layer sets OpenMP's thread count of the calling thread when
    it launches a parallel region. torch's CPU build uses the same OpenMP
    runtime, so without this a learner's ``torch.set_num_threads(1)`` would
    become 2 after its env's first batched step (and each small torch operation
    several times slower on a busy machine). Costs two calls into the runtime
    per kernel call; nothing when no OpenMP runtime is loaded."""

    _lib = None

    def __enter__(self):
        lib = _KeepOpenMPThreads._lib
        if lib is None:
            lib = _KeepOpenMPThreads._lib = _loaded_libgomp() or False
        self._prev = lib.omp_get_max_threads() if lib else None
        return self

    def __exit__(self, *exc):
        lib = _KeepOpenMPThreads._lib
        if self._prev is not None and lib.omp_get_max_threads() != self._prev:
            lib.omp_set_num_threads(self._prev)
        return False


def current_threads() -> int:
    """numba's thread count now (``numba.get_num_threads()``, whose first call
    starts numba's threads and sets OpenMP's count), the caller's OpenMP count kept."""
    with _KeepOpenMPThreads():
        return numba.get_num_threads()


def numba_threads(n):
    """Run the enclosed kernel calls on ``n`` numba threads (None: leave numba's
    count as is); a count above NUMBA_NUM_THREADS is capped there. Either way
    the caller's OpenMP thread count (torch's, too) is the same afterwards."""
    return _KeepOpenMPThreads() if n is None else _thread_count(n)


@contextlib.contextmanager
def _thread_count(n):
    prev = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        with _KeepOpenMPThreads():
            yield
    finally:
        numba.set_num_threads(prev)


TBB_LAYERS = ("tbb", "safe")   # the NUMBA_THREADING_LAYER values that need TBB


def load_tbb() -> bool:
    """Make numba's TBB threading layer loadable from the pip package ``tbb``
    (``pip install "majiang_env[tbb]"``, Linux x86-64); True when its library is loaded.

    The wheel puts ``libtbb.so.12`` in the environment's ``lib`` folder, which
    the dynamic loader does not search, so numba reports that no threading
    layer could be loaded. Loading the library by its path first (global
    symbols) lets numba's TBB module link to it. ``import majiang_env`` calls
    this when ``NUMBA_THREADING_LAYER`` names a layer only TBB provides (one of
    ``TBB_LAYERS``; ``threadsafe`` and ``forksafe`` are left to numba's own
    choice), and warns when it finds no library; it must run before numba
    starts its threads, i.e. before the first parallel kernel
    (docs/performance.md, "Under load", compares the layers)."""
    try:
        files = importlib.metadata.files("tbb") or ()
    except importlib.metadata.PackageNotFoundError:
        return False
    for f in files:
        if f.name == "libtbb.so.12":
            try:
                ctypes.CDLL(str(f.locate()), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                return False
            return True
    return False
