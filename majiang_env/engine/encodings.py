"""The observation encodings, chosen by ``obs_type`` everywhere an observation is made.

========== ======================= ==========================================================
obs_type   array                   what it is
========== ======================= ==========================================================
compact    int16[436]              ``majiang_v2``'s default: the seat's view as numbers
                                   (``kernel/observe.py``, docs/observation.md)
features   float32[FEAT_SIZE]      a fixed float encoding of the same view, computed in the
                                   kernel: planes over the 36 kinds, shape ``PLANE_SHAPE``,
                                   then scalars; with the per-action block the greedy policy
                                   decides by (``kernel/features.py``, docs/observation.md)
float      float32[FLOAT_SIZE]     the compact view normalised for a network (an MLP reads
                                   it as it is): counts / 4, one-hot codes, flag bits as
                                   0 / 1 columns, scalars scaled into [0, 1] (scores into
                                   [-1, 1]), then the action mask; cheap, no search
                                   (``kernel/floatobs.py``, docs/observation.md)
========== ======================= ==========================================================

``features`` and ``float`` are functions of the compact observation and the
action mask alone (``features`` also of the two rule fields ``chow_from`` and
``kuikae``), so they hold exactly what the seat may see.
``observation_space(obs_type)`` is each one's Box with its real bounds.
"""
from __future__ import annotations

import numba
import numpy as np
from gymnasium import spaces

from . import tables
from .checks import show
from .kernel.features import (
    FEAT_SIZE,
    NUM_PLANES,
    NUM_SCALARS,
    PLANE_SHAPE,
    SCALARS,
    features_rows,
    features_rows_parallel,
    first_bad_value,
)
from .kernel.floatobs import (
    FLOAT_HIGH,
    FLOAT_LOW,
    FLOAT_MASK,
    FLOAT_NUM_SCALARS,
    FLOAT_PLANE_SHAPE,
    FLOAT_PLANES,
    FLOAT_SCALARS,
    FLOAT_SIZE,
    float_rows,
)
from .kernel.greedy import new_work
from .kernel.observe import OBS_SIZE
from .rules import NUM_ACTIONS, make_rules
from .threads import current_threads

__all__ = ["OBS_TYPES", "check_obs_type", "observation_space", "encoded_size", "make_encoder", "FeatureEncoder",
           "FloatEncoder", "FEAT_SIZE", "PLANE_SHAPE", "NUM_PLANES", "NUM_SCALARS", "SCALARS", "FLOAT_SIZE",
           "FLOAT_PLANE_SHAPE", "FLOAT_PLANES", "FLOAT_SCALARS", "FLOAT_NUM_SCALARS", "FLOAT_MASK", "FLOAT_LOW",
           "FLOAT_HIGH", "OBS_SIZE"]

OBS_TYPES = ("compact", "features", "float")
_SIZES = {"features": FEAT_SIZE, "float": FLOAT_SIZE}
assert FEAT_SIZE != FLOAT_SIZE   # the kernel tells the two encodings apart by their width (batch.publish_seat)
PARALLEL_MIN_ROWS = 64   # FeatureEncoder.batch splits this many rows or more over numba's threads


def check_obs_type(obs_type) -> str:
    if not isinstance(obs_type, str) or obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {OBS_TYPES}, got {show(obs_type)}")
    return obs_type


def observation_space(obs_type: str = "compact") -> spaces.Box:
    """The Box of one observation of ``obs_type``: ``"compact"`` int16 (436,) (scores may be
    any int16), ``"features"`` float32 (FEAT_SIZE,) in [-1, 1], ``"float"`` float32
    (FLOAT_SIZE,) within ``FLOAT_LOW`` and ``FLOAT_HIGH`` (0 and 1; -1 and 1 for the scores)."""
    obs_type = check_obs_type(obs_type)
    if obs_type == "compact":
        i16 = np.iinfo(np.int16)
        return spaces.Box(i16.min, i16.max, (OBS_SIZE,), np.int16)
    if obs_type == "float":
        return spaces.Box(FLOAT_LOW.copy(), FLOAT_HIGH.copy(), dtype=np.float32)
    return spaces.Box(-1.0, 1.0, (FEAT_SIZE,), np.float32)


def encoded_size(obs_type: str) -> int:
    """The width of the float rows the kernel writes beside the compact observation for
    ``obs_type`` (``FEAT_SIZE``, ``FLOAT_SIZE``); 0 for ``"compact"``."""
    return _SIZES.get(check_obs_type(obs_type), 0)


def make_encoder(obs_type: str, rules=None):
    """The encoder that turns compact observations (and their masks) into ``obs_type``:
    ``FeatureEncoder(rules)``, ``FloatEncoder()``, or None for ``"compact"``."""
    obs_type = check_obs_type(obs_type)
    if obs_type == "features":
        return FeatureEncoder(rules)
    if obs_type == "float":
        make_rules(rules)   # checked all the same
        return FloatEncoder()
    return None


def _rows(obs, mask):
    """(obs as C int16 (n, 436), mask as C int8 0 / 1 (n, 156)) of checked rows, else ValueError."""
    o, m = np.asarray(obs), np.asarray(mask)
    if o.ndim != 2 or o.shape[1] != OBS_SIZE or m.shape != (o.shape[0], NUM_ACTIONS) \
            or o.dtype.kind not in "iu" or m.dtype.kind not in "iub":
        raise ValueError(f"expected integer obs (n, {OBS_SIZE}) and mask (n, {NUM_ACTIONS}), "
                         f"got {o.dtype} {o.shape} and {m.dtype} {m.shape}")
    o16 = np.ascontiguousarray(o, np.int16)
    if not np.array_equal(o16, o):
        raise ValueError("observation values must fit int16")
    j = int(first_bad_value(o16))
    if j >= 0:
        r, i = divmod(j, OBS_SIZE)
        raise ValueError(f"observation value {show(o[r, i])} at index {i} (row {r}) is outside what "
                         "the environment produces (see kernel/observe.py)")
    return o16, np.ascontiguousarray(m != 0, np.int8)


def _one(obs, mask):
    o, m = np.asarray(obs), np.asarray(mask)
    if o.shape != (OBS_SIZE,) or m.shape != (NUM_ACTIONS,):
        raise ValueError(f"expected an integer obs ({OBS_SIZE},) and mask ({NUM_ACTIONS},), "
                         f"got {o.dtype} {o.shape} and {m.dtype} {m.shape}")
    return o[None], m[None]


class FeatureEncoder:
    """``encoder(obs, mask)`` -> float32[FEAT_SIZE]: the ``features`` encoding of a
    compact observation int16[436] and its action mask (int8[156]; all zeros when
    the seat is not to act), under ``rules`` (a RuleConfig, dict or None).
    ``encoder.batch(obs, mask)``: the same for rows (n, 436) and (n, 156).
    Observations the environment could not have produced raise ValueError."""

    def __init__(self, rules=None):
        rules = make_rules(rules)
        self.chow_off = 1 if rules.chow_from == "next" else 3
        self.kuikae = int(rules.kuikae)
        self._dt = tables.deficiency_table()
        self._work = new_work()
        self._works = None   # one scratch per numba thread, made at the first parallel batch

    obs_type = "features"
    size = FEAT_SIZE

    def __call__(self, obs, mask) -> np.ndarray:
        return self.batch(*_one(obs, mask))[0]

    def batch(self, obs, mask) -> np.ndarray:
        o16, m8 = _rows(obs, mask)
        out = np.zeros((len(o16), FEAT_SIZE), np.float32)
        if len(o16) >= PARALLEL_MIN_ROWS and current_threads() > 1:   # the same rows, over numba's threads
            if self._works is None:
                self._works = np.stack([new_work() for _ in range(numba.config.NUMBA_NUM_THREADS)])
            features_rows_parallel(o16, m8, self.chow_off, self.kuikae, self._dt, self._works, out)
        else:
            features_rows(o16, m8, self.chow_off, self.kuikae, self._dt, self._work, out)
        return out


class FloatEncoder:
    """``encoder(obs, mask)`` -> float32[FLOAT_SIZE]: the ``float`` encoding of a compact
    observation int16[436] and its action mask (int8[156]; all zeros when the seat
    is not to act); every value within ``FLOAT_LOW`` and ``FLOAT_HIGH``. It needs no
    rules. ``encoder.batch(obs, mask)``: the same for rows (n, 436) and (n, 156).
    Observations the environment could not have produced raise ValueError."""

    obs_type = "float"
    size = FLOAT_SIZE

    def __init__(self):
        self._work = new_work()

    def __call__(self, obs, mask) -> np.ndarray:
        return self.batch(*_one(obs, mask))[0]

    def batch(self, obs, mask) -> np.ndarray:
        o16, m8 = _rows(obs, mask)
        out = np.empty((len(o16), FLOAT_SIZE), np.float32)
        float_rows(o16, m8, self._work, out)
        return out
