"""numba's thread count, in one place: validation and a context manager that restores it.

Every module that runs the kernel with a chosen thread count (``VectorGame``,
``selfplay``, ``agents.ppo``, the Ray workers) goes through these two functions.
"""
from __future__ import annotations

import contextlib

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


@contextlib.contextmanager
def numba_threads(n):
    """Run the enclosed kernel calls on ``n`` numba threads (None: leave as is);
    a count above NUMBA_NUM_THREADS is capped there."""
    if n is None:
        yield
        return
    prev = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(prev)
