"""The shipped learned policy, run with numpy only: ``PretrainedAgent`` (name ``"pretrained"``).

The network is ``agents.ppo.PolicyNet`` (a trunk MLP over the ``features``
encoding, a head shared by the 36 kinds, a linear head for the other ids),
trained by ``python -m agents.train_strong`` and exported with
``agents.ppo.export_numpy`` to an ``.npz`` of float32 arrays. This module
re-implements its forward pass in numpy, so playing against it needs no
torch; ``tests/test_pretrained.py`` checks that both forwards agree.

How it was trained, and how strong it is (arena figures with confidence
intervals): docs/performance.md, "Ladder".
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .checks import is_int
from .kernel.features import NUM_PLANES
from .observation import FEAT_SIZE, FeatureEncoder
from .rules import A_EXCHANGE, A_TSUMO, NUM_ACTIONS

__all__ = ["NumpyPolicy", "PretrainedAgent", "DEFAULT_WEIGHTS", "FORMAT"]

DEFAULT_WEIGHTS = Path(__file__).with_name("data") / "pretrained.npz"
FORMAT = "majiang-policy/1"
_KEYS = ("body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias", "ctx.weight", "ctx.bias",
         "kind_in.weight", "kind_in.bias", "kind_out.weight", "kind_out.bias", "kind_bias",
         "pi.weight", "pi.bias")


def _relu(x):
    return np.maximum(x, 0.0, out=x)


class NumpyPolicy:
    """The policy network's logits in numpy: ``logits(x, legal)`` -> float32 (B, 156),
    illegal actions at -1e9. ``weights``: a dict of the arrays ``_KEYS`` (torch
    ``state_dict`` names), float32."""

    def __init__(self, weights: dict):
        missing = [k for k in _KEYS if k not in weights]
        if missing:
            raise ValueError(f"policy weights lack {missing}")
        self.w = {k: np.ascontiguousarray(weights[k], np.float32) for k in _KEYS}
        if self.w["body.0.weight"].shape[1] != FEAT_SIZE or self.w["kind_in.weight"].shape[1] != NUM_PLANES:
            raise ValueError(f"these weights read {self.w['body.0.weight'].shape[1]} features with "
                             f"{self.w['kind_in.weight'].shape[1]} planes; this version has {FEAT_SIZE} "
                             f"and {NUM_PLANES}")

    @classmethod
    def load(cls, path=DEFAULT_WEIGHTS) -> "NumpyPolicy":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no policy weights at {path}")
        with np.load(path, allow_pickle=False) as z:
            fmt = str(z["format"]) if "format" in z.files else None
            if fmt != FORMAT:
                raise ValueError(f"{path}: format {fmt!r}, expected {FORMAT!r}")
            return cls({k: z[k] for k in _KEYS})

    def logits(self, x, legal) -> np.ndarray:
        w = self.w
        x = np.asarray(x, np.float32)
        h = _relu(x @ w["body.0.weight"].T + w["body.0.bias"])
        h = _relu(h @ w["body.2.weight"].T + w["body.2.bias"])
        planes = x[:, :NUM_PLANES * 36].reshape(-1, NUM_PLANES, 36).transpose(0, 2, 1)   # (B, 36, planes)
        k = _relu(planes @ w["kind_in.weight"].T + w["kind_in.bias"]
                  + (h @ w["ctx.weight"].T + w["ctx.bias"])[:, None, :])
        per_kind = k @ w["kind_out.weight"].T + w["kind_out.bias"] + w["kind_bias"]      # (B, 36, 4)
        out = np.empty((x.shape[0], NUM_ACTIONS), np.float32)
        out[:, :3 * 36] = per_kind[:, :, :3].transpose(0, 2, 1).reshape(-1, 3 * 36)
        out[:, A_TSUMO:A_EXCHANGE] = h @ w["pi.weight"].T + w["pi.bias"]
        out[:, A_EXCHANGE:] = per_kind[:, :, 3]
        out[~np.asarray(legal, bool)] = -1e9
        return out


class PretrainedAgent:
    """The shipped policy as an agent: ``agent(obs_dict) -> action`` and, batched,
    ``agent.act_batch(obs, mask)`` (compact observations int16 (B, 436) or
    ``features`` float32 (B, FEAT_SIZE)). It plays the most probable legal
    action (``deterministic=False``: samples with its own seeded generator).
    ``rules``: the rules its compact observations come from (the features
    encoding needs two fields of them). ``path``: other weights of the same format.
    """

    def __init__(self, seed=None, rules=None, deterministic=True, path=DEFAULT_WEIGHTS):
        if seed is not None and not is_int(seed):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        self.policy = NumpyPolicy.load(path)
        self.encode = FeatureEncoder(rules)
        self.deterministic = bool(deterministic)
        self.rng = np.random.default_rng(None if seed is None else int(seed) % 2 ** 64)

    def act_batch(self, obs, mask) -> np.ndarray:
        obs, mask = np.asarray(obs), np.asarray(mask)
        if obs.ndim != 2 or mask.shape != (obs.shape[0], NUM_ACTIONS):
            raise ValueError(f"expected obs (B, 436) or (B, {FEAT_SIZE}) and mask (B, {NUM_ACTIONS}), "
                             f"got {obs.shape} and {mask.shape}")
        legal = mask != 0
        if not legal.any(1).all():
            raise ValueError("PretrainedAgent: an action mask has no legal action")
        x = obs.astype(np.float32) if obs.dtype.kind == "f" and obs.shape[1] == FEAT_SIZE else \
            self.encode.batch(obs, mask)
        logits = self.policy.logits(x, legal)
        if not self.deterministic:
            logits = logits - np.log(-np.log(self.rng.random(logits.shape) + 1e-12) + 1e-12)
        return logits.argmax(1)

    def __call__(self, obs) -> int:
        if not isinstance(obs, dict) or "observation" not in obs or "action_mask" not in obs:
            raise ValueError("PretrainedAgent: expected an observation dict with 'observation' and 'action_mask'")
        return int(self.act_batch(np.asarray(obs["observation"])[None], np.asarray(obs["action_mask"])[None])[0])
