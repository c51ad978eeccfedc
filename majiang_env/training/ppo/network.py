"""The network and its faces: :class:`PolicyNet` (actor-critic over the kernel's
features), :class:`StateCritic` (the privileged critic), :class:`PPOAgent` (a
network as an agent), checkpoints (:func:`save`, :func:`load`) and
:func:`export_numpy` (the ``.npz`` that runs without torch)."""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch
from torch import nn

from majiang_env.agents import split_pass
from majiang_env.engine.encodings import FEAT_SIZE, NUM_PLANES, FeatureEncoder
from majiang_env.engine.kernel.fullstate import (
    SS_SCORES,
    STATE_HIGH,
    STATE_SCALAR,
    STATE_SIZE,
    STATE_SQUARE,
    STATE_SQUARE_LEN,
)
from majiang_env.engine.rules import A_EXCHANGE, A_TSUMO, NUM_ACTIONS

from .config import PPOConfig

__all__ = ["N_FEATURES", "PolicyNet", "StateCritic", "PPOAgent", "save", "load", "export_numpy"]

N_FEATURES = FEAT_SIZE
_OTHER_IDS = list(range(A_TSUMO, A_EXCHANGE))    # 108..119: 模 pass 引 刻x3 順x3 栄x3


class PolicyNet(nn.Module):
    """Actor-critic over the features: (masked logits over 156 actions, value).

    A trunk MLP reads the whole feature vector. The 36 kinds share one small
    head (a 1x1 convolution over the planes of each kind, plus the trunk's
    context, plus a learned bias per kind) that scores the four actions named by
    a kind: 打, 暗, 明 and 変; so "discard the kind whose option leaves
    the lowest deficiency", which the per-action planes spell out, is one linear
    map away. A linear layer on the trunk scores the other 12 ids (模, pass, 引,
    刻, 順, 栄).
    """

    KIND_OUT = 4     # per kind: 打, 暗, 明, 変

    def __init__(self, hidden=256, n_in=N_FEATURES, kind_hidden=64):
        super().__init__()
        self.hidden, self.kind_hidden = hidden, kind_hidden
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.ctx = nn.Linear(hidden, kind_hidden)
        self.kind_in = nn.Linear(NUM_PLANES, kind_hidden)
        self.kind_out = nn.Linear(kind_hidden, self.KIND_OUT)
        self.kind_bias = nn.Parameter(torch.zeros(36, self.KIND_OUT))   # what a kind's number and face add
        self.pi = nn.Linear(hidden, len(_OTHER_IDS))
        self.v = nn.Linear(hidden, 1)
        for layer in (self.kind_out, self.pi):
            nn.init.orthogonal_(layer.weight, 0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, x, legal):
        h = self.body(x)
        planes = x[:, :NUM_PLANES * 36].reshape(-1, NUM_PLANES, 36).transpose(1, 2)   # (B, 36, planes)
        k = torch.relu(self.kind_in(planes) + self.ctx(h)[:, None, :])
        per_kind = self.kind_out(k) + self.kind_bias                                   # (B, 36, 4)
        logits = torch.cat([per_kind.transpose(1, 2).reshape(-1, 4 * 36)[:, :3 * 36], self.pi(h),
                            per_kind[:, :, 3]], 1)
        return logits.masked_fill(~legal, -1e9), self.v(h).squeeze(-1)


class StateCritic(nn.Module):
    """The privileged critic (``PPOConfig(critic="state")``): the value of the deciding
    seat from its own features plus the full-information state
    (``majiang_env.engine.kernel.fullstate``, every seat's cards and the squares),
    its seats rotated so that the deciding seat is seat 0
    (``fullstate.rotate_seats``). Used in training only: the policy that is saved,
    exported and evaluated is :class:`PolicyNet`, which reads the observation alone.

    The state enters in three forms an MLP reads well: every entry scaled by its
    documented bound (the scores by 1/200); each square's untaken cards as counts
    per kind; and each square's next card one-hot (the card that seat takes next)."""

    def __init__(self, hidden=256, n_features=N_FEATURES):
        super().__init__()
        self.hidden = hidden
        scale = 1.0 / np.maximum(STATE_HIGH.astype(np.float32), 1.0)
        scale[STATE_SCALAR + SS_SCORES:STATE_SCALAR + SS_SCORES + 4] = 1 / 200
        self.register_buffer("scale", torch.from_numpy(scale))
        n_in = n_features + STATE_SIZE + 2 * 4 * 36
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, state, features):
        """state: int16 (B, STATE_SIZE), seats rotated to the deciding seat; features:
        (B, N_FEATURES), the deciding seat's -> float (B,)."""
        sq = state[:, STATE_SQUARE:STATE_SQUARE + STATE_SQUARE_LEN].long().view(-1, 4, STATE_SQUARE_LEN // 4)
        counts = torch.zeros(len(sq), 4, 37).scatter_add_(2, sq, torch.ones(sq.shape))[:, :, 1:]
        nxt = nn.functional.one_hot(sq[:, :, 0], 37)[:, :, 1:]
        x = torch.cat([features.float(), state.float() * self.scale, counts.flatten(1) / 4,
                       nxt.flatten(1).float()], 1)
        return self.body(x).squeeze(-1)


class PPOAgent:
    """A policy as an agent, ``agent(obs_dict) -> action`` (like ``agents.RandomAgent``).

    ``deterministic=True`` (default) plays the most probable legal action;
    otherwise it samples from the masked policy with its own seeded generator.
    ``rules`` (RuleConfig, dict or None) is what the compact observations it is
    given were made under (the features encoding needs two of its fields).
    """
    obs_type = "compact"      # what faces pass to act_batch (it encodes the features itself)

    def __init__(self, net, deterministic=True, seed=None, rules=None):
        self.net = net.eval()
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        self.encode = FeatureEncoder(rules)

    def features(self, obs, mask):
        """float32 (B, N_FEATURES) of compact observations (B, 436) (or features as they are)."""
        obs = np.asarray(obs)
        if obs.dtype.kind == "f":
            x = np.ascontiguousarray(obs, np.float32)
            return x if x.flags.writeable else x.copy()   # an env's read-only view: torch wants its own
        return self.encode.batch(obs, mask)

    @torch.no_grad()
    def act_batch(self, obs, mask):
        """Actions for a batch: obs (B, 436) compact or (B, N_FEATURES) features, mask (B, 156) -> int64 (B,)."""
        mask = np.asarray(mask)
        logits, _ = self.net(torch.from_numpy(self.features(obs, mask)), torch.from_numpy(mask > 0))
        logits = logits.numpy()
        if not self.deterministic:
            logits = logits - np.log(-np.log(self.rng.random(logits.shape) + 1e-12) + 1e-12)
        return logits.argmax(1)

    def __call__(self, obs) -> int:
        mask, only_pass = split_pass(obs["action_mask"])   # a PettingZoo face's mask has the pass 156 too
        if only_pass:
            return NUM_ACTIONS
        if not mask.any():
            raise ValueError("PPOAgent: the action mask has no legal action")
        return int(self.act_batch(np.asarray(obs["observation"])[None], mask[None])[0])


def _forward(net, x, legal, dtype):
    """``net(x, legal)`` with its products in ``dtype`` (:func:`matmul_dtype`); the
    logits and values come back as float32."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
        logits, v = net(x, legal)
    return logits.float(), v.float()


def save(net, path, config: PPOConfig | None = None, extra=None):
    """Save a checkpoint: weights, network size and (optionally) the config and extra info."""
    torch.save({"hidden": net.hidden, "kind_hidden": net.kind_hidden, "n_in": N_FEATURES, "state": net.state_dict(),
                "config": asdict(config) if config else None, "extra": extra or {}}, path)


def export_numpy(net, path, extra=None):
    """Write ``net``'s policy (not its value head) as the ``.npz`` that
    ``majiang_env.agents.pretrained.NumpyPolicy`` runs without torch; ``extra``: a dict of
    strings stored beside it (e.g. how it was trained)."""
    from majiang_env.agents.pretrained import _KEYS, FORMAT
    state = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items() if k in _KEYS}
    meta = {f"meta_{k}": np.array(str(v)) for k, v in (extra or {}).items()}
    np.savez_compressed(path, format=np.array(FORMAT), **state, **meta)


def load(path) -> PolicyNet:
    """The network of a :func:`save` checkpoint, in eval mode."""
    ck = torch.load(path, map_location="cpu", weights_only=True)
    if ck["n_in"] != N_FEATURES:
        raise ValueError(f"checkpoint has {ck['n_in']} features, this version {N_FEATURES}")
    net = PolicyNet(ck["hidden"], kind_hidden=ck.get("kind_hidden", 64))
    net.load_state_dict(ck["state"])
    return net.eval()


def checkpoint_agent(seed=None, rules=None, path=None, deterministic=True) -> PPOAgent:
    """The agent of a :func:`save` checkpoint (the registry's ``"ppo"``, ``"FILE.pt"``)."""
    if path is None:
        raise ValueError("the 'ppo' agent needs a checkpoint: 'ppo:path=FILE.pt' or 'FILE.pt'")
    return PPOAgent(load(path), deterministic=deterministic, seed=seed, rules=rules)
