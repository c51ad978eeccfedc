"""numba's threads, in one place: the thread count (validation and a context
manager that restores it) and the optional TBB threading layer.

Every module that runs the kernel with a chosen thread count (``VectorGame``,
``selfplay``, ``agents.ppo``, the Ray workers) goes through ``check_threads``
and ``numba_threads``.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata

import numba

from .checks import is_int


def check_threads(n):
    """``None`` (leave numba's setting) or an int in 1..NUMBA_NUM_THREADS."""
    if n is None:
        return None
    top = numba.config.NUMBA_NUM_THREADS
    if not is_int(n) or not 1 <= n <= top:
        raise ValueError(f"num_threads must be None or an int in 1..{top}, got {n!r}")
    return int(n)


_UNCHANGED = contextlib.nullcontext()


def numba_threads(n):
    """Run the enclosed kernel calls on ``n`` numba threads (None: leave as is,
    at no cost per call); a count above NUMBA_NUM_THREADS is capped there."""
    return _UNCHANGED if n is None else _thread_count(n)


@contextlib.contextmanager
def _thread_count(n):
    prev = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
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
