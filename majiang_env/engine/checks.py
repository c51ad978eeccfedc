"""Validation at the Python boundary: the one place that decides what a caller may pass.

numba checks no bounds, so every action, seat, index, seed and flag that
reaches the kernel is checked here first. The policy, the same for every
public entry point:

* **Integers** are Python ``int`` or numpy integer scalars (``np.int64``,
  ``np.uint8`` ...), and for actions also 0-d integer arrays (what
  ``model.predict`` returns for one observation). ``bool`` and ``np.bool_``
  are not integers here; floats, strings, ``None`` and containers are rejected
  even when they look like a whole number.
* A bad **action** raises ``IllegalActionError`` (a ``ValueError``) naming the
  action and the legal ids (``ActionSpaceError``, its subclass, when the value
  is not an id of ``Discrete(156)`` at all); a bad seat, index, seed or flag raises
  ``ValueError`` naming the value and what is allowed; a bad record raises
  ``RecordError`` (a ``ValueError``) naming the field.
* A call that needs ``reset()`` first raises ``ResetNeededError`` (a ``RuntimeError``).
* A rejected call changes nothing.
* Messages show a caller's value with :func:`show`: its ``repr``, cut to 80
  characters (ending ``...``); an int too long for Python's int-to-str limit
  (4300 digits) reads ``1.000e+5000 (an int of about 5001 digits, 16610 bits)``,
  so a message can always be made.
"""
from __future__ import annotations

import math
import reprlib
import secrets

import numpy as np

from .rules import NUM_ACTIONS

NUM_SEATS = 4


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision (or not an action id at all)."""


class ActionSpaceError(IllegalActionError, AssertionError):
    """A value that is not an action id of ``Discrete(156)`` at all (wrong type or
    out of range). Also an ``AssertionError``, which is what PettingZoo's
    ``AssertOutOfBoundsWrapper`` raises for such an action through ``env()``."""


class ResetNeededError(RuntimeError, AssertionError):
    """A call that needs ``reset()`` first. Also an ``AssertionError``, which is
    what PettingZoo's ``OrderEnforcingWrapper`` raises through ``env()``."""


def _big_int(x: int) -> str:
    """A huge int as ``-1.235e+5000 (an int of about 5001 digits, 16610 bits)``, without converting it to text."""
    lg = math.log10(abs(x))
    e = math.floor(lg)
    m = 10 ** (lg - e)
    if m >= 9.9995:
        m, e = m / 10, e + 1
    return f"{'-' if x < 0 else ''}{m:.3f}e+{e} (an int of about {e + 1} digits, {x.bit_length()} bits)"


class _SafeRepr(reprlib.Repr):
    """``reprlib`` with ints too long for ``repr`` shown by :func:`_big_int`."""

    def __init__(self):
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = 80

    def repr_int(self, x, level):
        try:
            return super().repr_int(x, level)
        except ValueError:
            return _big_int(x)


_SAFE_REPR = _SafeRepr()


def show(value, limit: int = 80) -> str:
    """``value`` for an error message: its ``repr``, at most ``limit`` characters
    (a longer one is cut and ends ``...``). Never fails: an int past Python's
    int-to-str limit, or a container holding one, or an object whose ``repr``
    raises, is shown in a short form that does not convert it to text."""
    try:
        r = repr(value)
    except Exception:   # noqa: BLE001 - e.g. an int of more than 4300 digits, or a broken __repr__
        try:
            r = _SAFE_REPR.repr(value)
        except Exception:   # noqa: BLE001
            r = f"<{type(value).__name__} object>"
    if not isinstance(r, str):
        r = f"<{type(value).__name__} object>"
    return r if len(r) <= limit else r[:max(limit - 3, 0)] + "..."


def is_int(value) -> bool:
    """Whether ``value`` is an integer under the policy above (no bool, no 0-d array)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_int(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int in ``lo..hi`` (inclusive), or ValueError naming ``name``."""
    if not is_int(value) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in {lo}..{hi}, got {show(value)}"
                         + ("" if is_int(value) else f" ({type(value).__name__})"))
    return int(value)


def as_finite(name: str, value) -> float:
    """``value`` (an int or float, not bool) as a finite float, or ValueError naming ``name``."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        try:
            x = float(value)
        except OverflowError:   # an int past the float range
            x = float("inf")
        if math.isfinite(x):
            return x
    raise ValueError(f"{name} must be a finite number, got {show(value)}")


def as_seat(seat, name: str = "seat") -> int:
    """A seat 0..3 (East, South, West, North)."""
    return as_int(name, seat, 0, NUM_SEATS - 1)


def as_bool(name: str, value) -> bool:
    """A flag: ``True``/``False`` (or ``np.bool_``) only."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {show(value)} ({type(value).__name__})")
    return bool(value)


def as_seed(seed) -> int:
    """A game seed in [0, 2**64); ``None`` draws a fresh one."""
    if seed is None:
        return secrets.randbits(63)
    return as_int("seed", seed, 0, 2 ** 64 - 1)


def action_id(action, context=None):
    """``action`` as an int if it is an integer (or 0-d integer array); else
    ``ActionSpaceError`` naming it and ``context()`` (called only then: e.g. the
    phase, seat and legal ids). The id's range is not checked here."""
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        action = action[()]
    if not is_int(action):
        raise ActionSpaceError(
            f"action must be an int (or numpy integer) in 0..{NUM_ACTIONS - 1}, got {show(action)} "
            f"({type(action).__name__})" + ("" if context is None else f"; {context()}"))
    return int(action)


def _holds_bool(nest) -> bool:
    if isinstance(nest, (list, tuple)):
        return any(map(_holds_bool, nest))
    return isinstance(nest, (bool, np.bool_)) or (isinstance(nest, np.ndarray) and nest.dtype == np.bool_)


def int_array(name: str, value, error=ValueError) -> np.ndarray:
    """``value`` (an array, or a regular nest of lists of ints) as an integer
    ndarray, or ``error`` naming ``name``. Ragged nests, bools, floats and
    strings are refused. The result is a plain ndarray (an ndarray subclass,
    such as a masked array, is read as its raw data)."""
    arr = value
    if type(value) is not np.ndarray:
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError, OverflowError):
            raise error(f"{name} must be an integer array; got a ragged or mixed "
                        f"{type(value).__name__}") from None
    if arr.dtype.kind not in "iu" or (arr is not value and _holds_bool(value)):
        raise error(f"{name} must be an integer array; got {type(value).__name__} of "
                    f"{'bool' if arr.dtype.kind in 'iu' else arr.dtype} {arr.shape}")
    return arr


def in_action_range(a: int) -> bool:
    return 0 <= a < NUM_ACTIONS
