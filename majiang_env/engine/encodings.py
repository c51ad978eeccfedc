"""The two observation encodings, chosen by ``obs_type`` everywhere an observation is made.

========== ======================= ==========================================================
obs_type   array                   what it is
========== ======================= ==========================================================
compact    int16[436]              ``majiang_v1``'s default: the seat's view as numbers
                                   (``kernel/observe.py``, docs/observation.md)
features   float32[FEAT_SIZE]      a fixed float encoding of the same view, computed in the
                                   kernel: planes over the 36 kinds, shape ``PLANE_SHAPE``,
                                   then scalars; with the per-action block the greedy policy
                                   decides by (``kernel/features.py``, docs/observation.md)
========== ======================= ==========================================================

``features`` is a function of the compact observation and the action mask
alone (plus the two rule fields ``chow_from`` and ``kuikae``), so it holds
exactly what the seat may see.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from . import tables
from .checks import show
from .kernel.features import FEAT_SIZE, NUM_PLANES, NUM_SCALARS, PLANE_SHAPE, SCALARS, features_rows
from .kernel.greedy import new_work
from .kernel.observe import OBS_SIZE, first_out_of_range
from .rules import NUM_ACTIONS, make_rules

__all__ = ["OBS_TYPES", "check_obs_type", "observation_space", "FeatureEncoder", "FEAT_SIZE",
           "PLANE_SHAPE", "NUM_PLANES", "NUM_SCALARS", "SCALARS", "OBS_SIZE"]

OBS_TYPES = ("compact", "features")


def check_obs_type(obs_type) -> str:
    if not isinstance(obs_type, str) or obs_type not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {OBS_TYPES}, got {show(obs_type)}")
    return obs_type


def observation_space(obs_type: str = "compact") -> spaces.Box:
    """The Box of one observation of ``obs_type``."""
    if check_obs_type(obs_type) == "compact":
        i16 = np.iinfo(np.int16)
        return spaces.Box(i16.min, i16.max, (OBS_SIZE,), np.int16)
    return spaces.Box(-1.0, 1.0, (FEAT_SIZE,), np.float32)


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

    def __call__(self, obs, mask) -> np.ndarray:
        o, m = np.asarray(obs), np.asarray(mask)
        if o.shape != (OBS_SIZE,) or m.shape != (NUM_ACTIONS,):
            raise ValueError(f"expected an integer obs ({OBS_SIZE},) and mask ({NUM_ACTIONS},), "
                             f"got {o.dtype} {o.shape} and {m.dtype} {m.shape}")
        return self.batch(o[None], m[None])[0]

    def batch(self, obs, mask) -> np.ndarray:
        o, m = np.asarray(obs), np.asarray(mask)
        if o.ndim != 2 or o.shape[1] != OBS_SIZE or m.shape != (o.shape[0], NUM_ACTIONS) \
                or o.dtype.kind not in "iu" or m.dtype.kind not in "iub":
            raise ValueError(f"expected integer obs (n, {OBS_SIZE}) and mask (n, {NUM_ACTIONS}), "
                             f"got {o.dtype} {o.shape} and {m.dtype} {m.shape}")
        o16 = np.ascontiguousarray(o, np.int16)
        if not np.array_equal(o16, o):
            raise ValueError("observation values must fit int16")
        for r in range(len(o16)):
            i = int(first_out_of_range(o16[r]))
            if i >= 0:
                raise ValueError(f"observation value {show(o[r, i])} at index {i} (row {r}) is outside what "
                                 "the environment produces (see kernel/observe.py)")
        out = np.zeros((len(o16), FEAT_SIZE), np.float32)
        features_rows(o16, np.ascontiguousarray(m != 0, np.int8), self.chow_off, self.kuikae, self._dt,
                      self._work, out)
        return out

