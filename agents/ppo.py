"""Masked PPO for 馬将 on the in-kernel features — compact, CPU, torch.

Needs the ``train`` extra (``pip install torch==2.13.0 && pip install -e ".[train]"``).

    python -m agents.ppo --quick                       # smoke run: ~15 s of training
    python -m agents.ppo                               # 8 min of self-play, then evaluations
    python -m agents.ppo --opponents greedy --imitate 3 --minutes 30   # clone greedy, then PPO vs 3 greedy
    python -m agents.ppo --minutes 10 --out ppo.pt --json result.json

How it trains
-------------
* Observations are the kernel's float ``features`` encoding
  (``majiang_env.observation``; it carries the per-action deficiency block the
  greedy policy decides by), computed inside the compiled step. Actions are
  sampled **in the kernel** from the network's logits (``sample_actions``:
  the softmax over the legal actions, on each game's own stream), so Python
  pays neither for masking nor for sampling.
* ``opponents="self"`` (default): ``VectorGame(num_envs, obs_type="features")``,
  all four seats played by the current policy, every decision of every seat a
  sample. ``opponents="greedy"`` (or any in-kernel agent name, or a list of
  three): ``SeatVectorEnv`` — the policy in one seat (drawn per game), the
  other three played inside the kernel; only the learner's decisions are samples.
* Policy: an MLP actor-critic; logits of illegal actions are set to -1e9 before
  the softmax, so the policy scores and evaluates only legal actions.
* Credit: each seat's decisions in one hand are one episode for that seat
  (GAE over that seat's own decisions). A hand's point change goes to each
  seat's last decision in that hand. Hands still running at the end of a
  rollout are carried into the next one (with the log-probabilities and values
  of the policy that acted), so no episode is cut.
* Reward shaping (self-play only, on by default): ``win_bonus`` on a winning
  decision (模, 栄) plus ``point_scale`` × the hand's point change.
  Against fixed opponents the reward is ``point_scale`` × points only.

Optional warm start (``--imitate MINUTES``, :func:`imitate`): behaviour cloning
of an agent (``"greedy"`` by default, decided in the kernel, so its labels cost
almost nothing) while it plays all four seats, then PPO from that network.

One update of :func:`train` is :func:`collect_rollout` (into a
:class:`Rollouts` buffer), :func:`training_batch` (the finished hands, GAE by
:func:`compute_advantages`; the rest is carried) and :func:`ppo_update`.

Evaluation: :func:`evaluate` (from :mod:`agents.evaluation`, shared with
``benchmarks/eval_agents.py``) plays whole ``Game`` s with the policy in seat
``g % 4`` of game g and three baseline agents in the other seats.
:func:`evaluate_vector` is a cheap batched check (the policy in one seat of a
``SeatVectorEnv`` against in-kernel opponents), used for the learning curve;
strength claims use the duplicate-deal arena (``majiang_env.arena``).
"""
from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from majiang_env.observation import FEAT_SIZE, NUM_PLANES, FeatureEncoder
from majiang_env.kernel.features import F_HAND, SCALARS
from majiang_env.rules import A_EXCHANGE, A_RON, A_TSUMO, NUM_ACTIONS
from majiang_env.threads import numba_threads as _numba_threads
from majiang_env.vector import AGENTS, VectorGame
from majiang_env.vector_env import SeatVectorEnv
from majiang_env.wrappers import make_agent

from .evaluation import evaluate

__all__ = ["N_FEATURES", "PolicyNet", "PPOAgent", "PPOConfig", "Trainer", "train", "imitate",
           "evaluate", "evaluate_vector", "save", "load", "export_numpy", "WIN_ACTIONS", "main",
           "Rollouts", "collect_rollout", "compute_advantages", "training_batch", "ppo_update",
           "keep_freed_memory"]

N_FEATURES = FEAT_SIZE
WIN_ACTIONS = np.zeros(NUM_ACTIONS, bool)
WIN_ACTIONS[[A_TSUMO, A_RON, A_RON + 1, A_RON + 2]] = True


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


_OTHER_IDS = list(range(A_TSUMO, A_EXCHANGE))    # 108..119: 模 pass 引 刻x3 順x3 栄x3


class PPOAgent:
    """A policy as an agent, ``agent(obs_dict) -> action`` (like ``agents.RandomAgent``).

    ``deterministic=True`` (default) plays the most probable legal action;
    otherwise it samples from the masked policy with its own seeded generator.
    ``rules`` (RuleConfig, dict or None) is what the compact observations it is
    given were made under (the features encoding needs two of its fields).
    """

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
        mask = np.asarray(obs["action_mask"])
        if not mask.any():
            raise ValueError("PPOAgent: the action mask has no legal action")
        return int(self.act_batch(np.asarray(obs["observation"])[None], mask[None])[0])


@dataclass
class PPOConfig:
    num_envs: int = 1024          # games stepped together (one network call per step for all)
    rollout: int = 32             # decisions per env per update
    epochs: int = 1
    minibatch: int = 4096
    lr: float = 3e-4
    gamma: float = 0.99           # per decision of the same seat
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    win_bonus: float = 1.0        # shaping (self-play only): reward on a winning decision
    point_scale: float = 1 / 30   # reward per point of a hand's point change
    opponents: str = "self"       # "self", or an in-kernel agent name for the other three seats
    threads: int = 2              # torch threads; see _threads
    numba_threads: int = 2        # kernel threads during training
    precision: str = "auto"       # the network's matrix products: "fp32", "bf16" or "auto"; see matmul_dtype
    keep_freed_memory: bool = True    # tune the C allocator of this process; see keep_freed_memory
    seed: int = 0


CHUNK = 2048    # samples per forward / backward pass inside a minibatch (see ppo_update)


@functools.lru_cache(maxsize=None)
def keep_freed_memory() -> bool:
    """Make this process's C allocator (glibc's ``malloc``) keep the memory torch frees
    for reuse instead of returning it to the OS; True where ``mallopt`` accepted both
    settings (it may still change nothing, e.g. under a preloaded jemalloc).

    The network's largest activations (the kind head's, samples x 36 x 64) are
    megabytes. glibc serves blocks that large with ``mmap`` and unmaps them when
    freed (its threshold adapts upwards, but only to 32 MiB), and it trims the
    top of its heap once more than twice that threshold is free there, so
    forward and backward passes kept page-faulting their activations in again:
    a PPO update spent about a quarter of its time there
    (``benchmarks/bench_ppo.py``). This fixes the ``mmap`` threshold at 32 MiB
    (the ceiling of 64-bit glibc; the adaptive threshold stops adapting) and
    raises the trim threshold to 1 GiB, so up to that much freed memory stays
    with the process. The setting is process-wide and stays after the
    ``Trainer`` is gone; it is applied once per process. Elsewhere (no glibc,
    or a glibc that refuses the first setting) it does nothing.
    ``PPOConfig(keep_freed_memory=False)`` leaves the allocator alone."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):   # no C library to load, or no mallopt in it
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 1 << 30))


@functools.lru_cache(maxsize=None)
def _native_bf16() -> bool:
    """Does this CPU multiply bfloat16 matrices in hardware (Intel AMX)? Read from the
    Linux CPU flags; False where they cannot be read."""
    try:
        with open("/proc/cpuinfo") as fh:
            return any(line.startswith("flags") and " amx_bf16" in line for line in fh)
    except OSError:
        return False


def matmul_dtype(precision: str):
    """The dtype the network's linear layers run in: ``"fp32"`` (float32), ``"bf16"``
    (bfloat16 under ``torch.autocast``; weights, optimiser state, softmax and losses
    stay float32) or ``"auto"``: bfloat16 where the CPU has it in hardware (AMX,
    about 1.5 times faster updates measured on a 2-core Xeon), else float32."""
    if precision not in ("fp32", "bf16", "auto"):
        raise ValueError(f"precision must be 'fp32', 'bf16' or 'auto', got {precision!r}")
    if precision == "auto":
        precision = "bf16" if _native_bf16() else "fp32"
    return torch.bfloat16 if precision == "bf16" else torch.float32


def _forward(net, x, legal, dtype):
    """``net(x, legal)`` with its products in ``dtype`` (:func:`matmul_dtype`); the
    logits and values come back as float32."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
        logits, v = net(x, legal)
    return logits.float(), v.float()


def compute_advantages(cfg, n_train, close, seat, rew, delta, val):
    """GAE per env and seat over the first ``n_train[b]`` transitions of env b, a hand
    being one episode per seat; a hand's ``delta`` goes to each seat's last decision in it.

    All arrays are (B, cap[, 4]) as in :class:`Rollouts`; returns float32 (B, cap)
    advantages (0 past ``n_train``)."""
    B = len(n_train)
    ar = np.arange(B)
    adv = np.zeros(close.shape, np.float32)
    next_v = np.zeros((B, 4), np.float32)
    next_a = np.zeros((B, 4), np.float32)
    pend = np.zeros((B, 4), np.float32)
    for t in range(int(n_train.max()) - 1, -1, -1):
        live = t < n_train
        cl = live & close[:, t]
        next_v[cl] = 0
        next_a[cl] = 0
        pend[cl] = delta[cl, t]
        s = seat[:, t]
        d = rew[:, t] + pend[ar, s] + cfg.gamma * next_v[ar, s] - val[:, t]
        a = d + cfg.gamma * cfg.lam * next_a[ar, s]
        ls, ss = np.flatnonzero(live), s[live]
        pend[ls, ss] = 0
        next_v[ls, ss] = val[ls, t]
        next_a[ls, ss] = a[ls]
        adv[:, t] = np.where(live, a, 0)
    return adv


class _SelfPlay:
    """Every seat played by the policy: ``VectorGame(obs_type="features")``."""
    max_hand = 180                       # decisions of one hand, all seats (a carried tail is shorter)

    def __init__(self, cfg, rules):
        self.vg = VectorGame(cfg.num_envs, rules=rules, seed=cfg.seed, obs_type="features")
        self.obs, self.mask, self.seat = self.vg.reset()

    def sample_step(self, logits):
        """Sample an action per env from ``logits`` and apply it, in one kernel call;
        return (actions, hand closed, the four seats' points) per env."""
        a, self.obs, self.mask, self.seat, rewards, _ = self.vg.sample_step(logits)
        return a.copy(), self.vg.hand_closed, rewards   # (a is the env's read-only array)


class _Versus:
    """The policy in one seat (drawn per game), the other three in the kernel: ``SeatVectorEnv``.
    Its decisions are credited as seat 0."""
    max_hand = 48                        # one seat's decisions in a hand (19 laps x 2 + 4 exchanges)

    def __init__(self, cfg, rules):
        self.env = SeatVectorEnv(cfg.num_envs, opponents=cfg.opponents, seat="random", rules=rules,
                                 obs_type="features", copy=False)
        obs, _ = self.env.reset(seed=cfg.seed)
        self.seat = np.zeros(cfg.num_envs, np.int64)
        self._set(obs)

    def _set(self, obs):
        self.obs, self.mask = obs, self.env.action_masks()
        self.hand = obs[:, SCALARS + F_HAND:SCALARS + F_HAND + 4].argmax(1)

    def sample_step(self, logits):
        """As ``_SelfPlay.sample_step`` (the learner's actions; its reward in column 0)."""
        a = self.env.sample_actions(logits)
        before = self.hand
        obs, reward, term, _, _ = self.env.step(a)
        self._set(obs)
        closed = term | (self.hand != before)
        delta = np.zeros((len(a), 4), np.float32)
        delta[:, 0] = reward
        return a, closed, delta


class Rollouts:
    """The games of :func:`train` and their transition buffer.

    ``src`` is the game source (self-play, or the policy against in-kernel
    opponents). Per env, ``cap`` transitions deep: first the unfinished tail of
    hands carried from earlier rollouts, then the current rollout; ``n[b]`` is
    the number stored for env b. The small per-transition fields (``buf``:
    action, log-probability, value, seat, reward, hand closed, point change) are
    (B, cap) arrays in that order. The features (a torch tensor in the dtype
    the network multiplies in, :func:`matmul_dtype`: bfloat16 loses nothing the
    network would read) and the legal masks stay where they were written: row
    ``b * cap + (start[b] + t) % cap`` of ``obs`` / ``legal`` holds transition t
    of env b (:meth:`rows`), so carrying a tail to the next rollout moves
    ``start`` instead of copying them. Each game holds ``rollout + max_hand``
    rows (room for a hand carried whole): at the defaults 1,024 x 212 feature
    rows, 0.59 GB in bfloat16 (1.18 GB in float32).
    """

    def __init__(self, cfg, rules=None):
        B = cfg.num_envs
        self.src = _SelfPlay(cfg, rules) if cfg.opponents == "self" else _Versus(cfg, rules)
        self.cap = cap = cfg.rollout + self.src.max_hand
        self.obs = torch.zeros((B * cap, N_FEATURES), dtype=matmul_dtype(cfg.precision))
        self.legal = np.zeros((B * cap, NUM_ACTIONS), np.bool_)
        self.stage = np.zeros((B, N_FEATURES), np.float32)   # the current features, for the network
        self.buf = {"act": np.zeros((B, cap), np.int64), "logp": np.zeros((B, cap), np.float32),
                    "val": np.zeros((B, cap), np.float32), "seat": np.zeros((B, cap), np.int64),
                    "rew": np.zeros((B, cap), np.float32), "close": np.zeros((B, cap), bool),
                    "delta": np.zeros((B, cap, 4), np.float32)}
        self.n = np.zeros(B, np.int64)
        self.start = np.zeros(B, np.int64)
        self.ar = np.arange(B)

    def rows(self, b, t):
        """The rows of ``obs`` / ``legal`` holding transition t of env b (arrays broadcast)."""
        return b * self.cap + (self.start[b] + t) % self.cap

    def finished(self):
        """Per env, the number of transitions up to and including its last closed hand."""
        tt = np.arange(int(self.n.max()))
        return np.where(self.buf["close"][:, :len(tt)] & (tt < self.n[:, None]), tt + 1, 0).max(1)

    def carry(self, n_train, rollout):
        """Drop each env's first ``n_train[b]`` transitions and keep the rest, to be trained
        on once their hand closes; ``rollout`` more must still fit."""
        keep = self.n - n_train
        k = int(keep.max())
        src = np.minimum(n_train[:, None] + np.arange(k)[None], self.cap - 1)
        for x in self.buf.values():
            x[:, :k] = x[self.ar[:, None], src]
        self.start = (self.start + n_train) % self.cap
        self.n = keep
        if self.n.max() + rollout > self.cap:
            raise RuntimeError("a hand longer than the carry buffer; raise cap")


def collect_rollout(net, roll: Rollouts, cfg) -> tuple[int, int]:
    """``cfg.rollout`` decisions in every game of ``roll``, sampled in the kernel from
    ``net``'s logits, appended to ``roll`` with their features, legal masks,
    log-probabilities, values, seats, shaped rewards (self-play: ``win_bonus`` on a
    win) and, where a hand closed, its point change × ``point_scale``. Returns
    ``(wins, hands)``: winning decisions and hands closed during the rollout."""
    net.eval()
    buf, ar, src, n = roll.buf, roll.ar, roll.src, roll.n
    bonus = cfg.win_bonus if cfg.opponents == "self" else 0.0
    wins = hands = 0
    x = torch.from_numpy(roll.stage)
    dtype = matmul_dtype(cfg.precision)
    for _ in range(cfg.rollout):
        np.copyto(roll.stage, src.obs)       # the env's arrays are read-only: torch reads a copy
        legal = src.mask > 0
        xd = x.to(dtype)                     # once, for the network and the buffer
        with torch.no_grad():
            logits, v = _forward(net, xd, torch.from_numpy(legal), dtype)
        buf["seat"][ar, n] = src.seat        # who decides, before the step moves on
        a, closed, delta = src.sample_step(logits.numpy())
        logp = torch.log_softmax(logits, 1).gather(1, torch.from_numpy(a)[:, None]).squeeze(1)
        rows = roll.rows(ar, n)
        roll.obs[torch.from_numpy(rows)] = xd
        roll.legal[rows] = legal
        buf["act"][ar, n] = a
        buf["logp"][ar, n] = logp.numpy()
        buf["val"][ar, n] = v.numpy()
        won = WIN_ACTIONS[a]
        wins += int(won.sum())
        buf["rew"][ar, n] = bonus * won
        hands += int(closed.sum())
        buf["close"][ar, n] = closed
        buf["delta"][ar, n] = delta * cfg.point_scale
        n += 1
    return wins, hands


def training_batch(roll: Rollouts, cfg) -> dict:
    """The samples of one update: every env's transitions up to its last closed hand,
    with their GAE advantages (:func:`compute_advantages`) and returns; the rest is
    carried to the next rollout (:meth:`Rollouts.carry`). Returns tensors, one row per
    sample: ``R`` (its row of ``X`` and ``L``, which are ``roll.obs`` and
    ``roll.legal`` (as a tensor): a minibatch gathers its features from them, so a
    batch is valid until the next :func:`collect_rollout` writes there), ``A``
    (actions), ``LP`` (behaviour log-probabilities), ``ADV`` and ``RET`` (advantage +
    value)."""
    buf = roll.buf
    n_train = roll.finished()
    adv = compute_advantages(cfg, n_train, buf["close"], buf["seat"], buf["rew"], buf["delta"], buf["val"])
    rb, rt = np.nonzero(np.arange(roll.cap)[None] < n_train[:, None])
    batch = {"X": roll.obs, "L": torch.from_numpy(roll.legal),
             "R": torch.from_numpy(roll.rows(rb, rt)),
             "A": torch.from_numpy(buf["act"][rb, rt]), "LP": torch.from_numpy(buf["logp"][rb, rt]),
             "ADV": torch.from_numpy(adv[rb, rt])}
    batch["RET"] = batch["ADV"] + torch.from_numpy(buf["val"][rb, rt])
    roll.carry(n_train, cfg.rollout)
    return batch


def ppo_update(net, opt, batch, cfg, rng) -> tuple[float | None, float | None]:
    """``cfg.epochs`` passes of clipped-PPO minibatch steps over ``batch`` (from
    :func:`training_batch`; order from ``rng.permutation``, advantages normalised over
    the batch, value loss and entropy bonus, gradient norm clipped; a minibatch whose
    loss is not finite is skipped). Returns the mean entropy and value loss over the
    minibatches (None, None when there was no sample).

    A minibatch's gradient is accumulated over pieces of at most ``CHUNK`` samples
    (each piece's loss weighted by its share of the minibatch: the same gradient
    up to rounding), so that the kind head's activations (samples x 36 x
    ``kind_hidden``) stay under the size above which glibc always serves a block
    with ``mmap`` (32 MiB; see :func:`keep_freed_memory`): at the default
    ``kind_hidden=64`` in float32, 4,096 samples' are 38 MB, and updates in
    pieces of 2,048 were about 1.2 times faster. After the update each
    parameter's ``grad`` holds the last minibatch's gradient (clipped, if that
    minibatch was taken)."""
    net.train()
    dtype = matmul_dtype(cfg.precision)
    X, L, R, A, LP, ADV, RET = (batch[k] for k in ("X", "L", "R", "A", "LP", "ADV", "RET"))
    N = len(A)
    if N:
        ADV = (ADV - ADV.mean()) / (ADV.std(correction=0) + 1e-8)
    ent_sum = vl_sum = 0.0
    nb = 0
    for _ in range(cfg.epochs if N else 0):
        perm = torch.from_numpy(rng.permutation(N))
        for i in range(0, N, cfg.minibatch):
            idx = perm[i:i + cfg.minibatch]
            opt.zero_grad()
            ent = vl = 0.0
            for j in range(0, len(idx), CHUNK):
                part = idx[j:j + CHUNK]
                w = len(part) / len(idx)
                rows = R[part]
                logits, v = _forward(net, X.index_select(0, rows), L.index_select(0, rows), dtype)
                lsm = torch.log_softmax(logits, 1)
                lp = lsm.gather(1, A[part, None]).squeeze(1)
                ad = ADV[part]
                ratio = torch.exp(lp - LP[part])
                pg = -torch.min(ratio * ad, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * ad).mean()
                vl_part = ((v - RET[part]) ** 2).mean()
                ent_part = -(lsm.exp() * lsm).sum(1).mean()
                loss = pg + cfg.vf_coef * vl_part - cfg.ent_coef * ent_part
                if not torch.isfinite(loss):
                    break
                (loss * w).backward()
                ent += ent_part.item() * w
                vl += vl_part.item() * w
            else:
                nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                opt.step()
                ent_sum += ent
                vl_sum += vl
                nb += 1
    return (ent_sum / nb, vl_sum / nb) if nb else (None, None)


def _log_record(rec, log):
    """``log="print"``: one line; a callable: ``log(rec)``; None: nothing."""
    if log == "print":
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in rec.items()))
    elif log:
        log(rec)


@contextmanager
def _threads(n_torch, n_numba):
    """torch and numba thread counts for one call, restored afterwards. The defaults
    (2 and 2) are fastest on an idle 2-core machine; with another busy process on
    it, one of each was faster (``benchmarks/bench_ppo.py --busy 0 1``: the rollout
    alternates the numba kernel and the network, and threads woken from sleep
    for every small operation wait for a core)."""
    old = torch.get_num_threads()
    torch.set_num_threads(n_torch)
    try:
        with _numba_threads(n_numba):
            yield
    finally:
        torch.set_num_threads(old)


def _adam(params, lr):
    """Adam with its fused CPU kernel where this torch has one (one call per step
    instead of a few per parameter tensor)."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=1e-5, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr, eps=1e-5)


class Trainer:
    """Masked PPO that can be run in several stretches (the optimiser, the games
    and the carried hands persist between :meth:`run` calls): self-play, or
    against in-kernel ``cfg.opponents``. Thread counts are set for each call."""

    def __init__(self, cfg: PPOConfig | None = None, net: PolicyNet | None = None, rules=None):
        self.cfg = cfg = cfg or PPOConfig()
        if cfg.opponents != "self" and cfg.opponents not in AGENTS:
            raise ValueError(f"opponents must be 'self' or an in-kernel agent {sorted(AGENTS)}, "
                             f"got {cfg.opponents!r}")
        self.rules = rules
        if cfg.keep_freed_memory:
            keep_freed_memory()
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.net = net or PolicyNet(cfg.hidden)
        self.opt = _adam(self.net.parameters(), cfg.lr)
        with _threads(cfg.threads, cfg.numba_threads):
            self.roll = Rollouts(cfg, rules)
        self.history = []
        self.recent = []                 # (wins, hands closed) of the last 10 updates
        self.decisions = 0
        self.spent = 0.0                 # training wall time, evaluation excluded

    def run(self, seconds=None, updates=None, eval_every=0, eval_hands=400, log="print",
            eval_opponent="random"):
        """Update until ``updates`` more updates or ``seconds`` more wall time; returns
        the new history records (see :func:`train`)."""
        if seconds is None and updates is None:
            raise ValueError("give seconds or updates")
        cfg, net = self.cfg, self.net
        seats = 4 if cfg.opponents == "self" else 1
        start, n0, new = self.spent, len(self.history), []
        with _threads(cfg.threads, cfg.numba_threads):
            while (updates is None or len(new) < updates) and (seconds is None or self.spent - start < seconds):
                t0 = time.perf_counter()
                wins, hands = collect_rollout(net, self.roll, cfg)
                self.decisions += cfg.num_envs * cfg.rollout
                t1 = time.perf_counter()
                entropy, value_loss = ppo_update(net, self.opt, training_batch(self.roll, cfg), cfg, self.rng)
                t2 = time.perf_counter()
                self.spent += t2 - t0
                self.recent = (self.recent + [(wins, hands)])[-10:]
                w10, h10 = (sum(x) for x in zip(*self.recent))
                rec = {"update": n0 + len(new) + 1, "decisions": self.decisions, "seconds": round(self.spent, 2),
                       "rollout_s": round(t1 - t0, 2), "learn_s": round(t2 - t1, 2), "hands": hands,
                       "win_rate": w10 / (seats * h10) if h10 else None,
                       "entropy": entropy, "value_loss": value_loss, "load1": round(os.getloadavg()[0], 2)}
                if eval_every and rec["update"] % eval_every == 0:
                    ev = evaluate_vector(net, hands=eval_hands, seed=10_000 + rec["update"], rules=self.rules,
                                         opponent=eval_opponent)
                    rec["eval_points_per_hand"], rec["eval_win_rate"] = ev["points_per_hand"], ev["win_rate"]
                new.append(rec)
                _log_record(rec, log)
        self.history += new
        net.eval()
        return new


def train(config: PPOConfig | None = None, seconds: float | None = 300.0, updates: int | None = None,
          eval_every: int = 0, eval_hands: int = 400, log="print", net: PolicyNet | None = None,
          rules=None, eval_opponent: str = "random"):
    """Masked PPO (self-play, or against in-kernel ``cfg.opponents``); stops after
    ``updates`` updates or ``seconds`` of wall time, whichever comes first
    (``None``: no limit of that kind).

    Returns ``(net, history)``: one dict per update with ``update, decisions,
    seconds, rollout_s, learn_s, hands`` (hands closed in the update),
    ``win_rate`` (the learner's wins per seat per closed hand over the last 10
    updates: games that started together close their hands in bursts, so one
    update's own ratio swings; None when no hand closed), ``entropy,
    value_loss``, ``load1`` (the machine's 1-minute load average: other
    processes slow training down), and every ``eval_every``
    updates ``eval_points_per_hand`` and ``eval_win_rate`` (:func:`evaluate_vector`
    against ``eval_opponent`` over ``eval_hands`` hands; the time it takes is not
    counted in ``seconds``). ``log(record)`` is called after each update
    (``"print"``: one line each; None: quiet).
    """
    if seconds is None and updates is None:
        raise ValueError("give seconds or updates")
    trainer = Trainer(config, net, rules)
    hist = trainer.run(seconds, updates, eval_every, eval_hands, log, eval_opponent)
    return trainer.net, hist


def imitate(net, teacher="greedy", seconds=60.0, chunks=None, num_envs=256, steps=16, minibatch=512,
            lr=1e-3, seed=0, rules=None, threads=1, numba_threads=1, log="print", epochs=2):
    """Behaviour cloning, an optional warm start before :func:`train`: ``teacher``
    plays all four seats of a ``VectorGame(num_envs, obs_type="features")`` —
    an in-kernel agent name (``"greedy"``: decided inside the kernel, from the
    same observations) or an agent (callable over the observation dict, or a
    class / factory). Every ``steps`` decisions per game, ``net``'s policy head
    takes ``epochs`` passes of masked cross-entropy over those decisions, until
    ``seconds`` of wall time or ``chunks`` passes, whichever comes first.
    Returns a history like :func:`train`'s: per chunk ``decisions, seconds,
    loss, accuracy`` (agreement with the teacher, each minibatch measured
    before its step; a teacher that breaks ties at random caps it below 1).
    Everything but the value head learns here."""
    with _threads(threads, numba_threads):
        return _imitate(net, teacher, seconds, chunks, num_envs, steps, minibatch, lr, seed, rules, log, epochs)


def _teacher(teacher, vg, seed, rules):
    """``teacher`` as ``act() -> actions (B,)`` for the player to act in each game of ``vg``."""
    if isinstance(teacher, str) and teacher in AGENTS:
        return lambda: vg.policy_actions(teacher)
    agent = teacher if callable(teacher) and not isinstance(teacher, type) else make_agent(teacher, seed, rules)

    def act():
        return np.fromiter((agent({"observation": vg.compact[i], "action_mask": vg.mask[i]})
                            for i in range(vg.num_envs)), np.int64, vg.num_envs)
    return act


def _imitate(net, teacher, seconds, chunks, num_envs, steps, minibatch, lr, seed, rules, log, epochs):
    torch.manual_seed(seed)
    opt = torch.optim.Adam([p for name, p in net.named_parameters() if not name.startswith("v.")], lr=lr)
    vg = VectorGame(num_envs, rules=rules, seed=seed, obs_type="features")
    obs, mask, _ = vg.reset()
    act = _teacher(teacher, vg, seed, rules)
    B, T = num_envs, steps
    b_obs = np.empty((T, B, N_FEATURES), np.float32)
    b_mask = np.empty((T, B, NUM_ACTIONS), np.bool_)
    b_act = np.empty((T, B), np.int64)
    history, spent, n = [], 0.0, 0
    while (seconds is None or spent < seconds) and (chunks is None or len(history) < chunks):
        t0 = time.perf_counter()
        for t in range(T):
            a = act()
            b_obs[t], b_mask[t], b_act[t] = obs, mask, a
            obs, mask, _, _, _ = vg.step(a)
        X = torch.from_numpy(b_obs.reshape(T * B, -1))
        L = torch.from_numpy(b_mask.reshape(T * B, -1))
        A = torch.from_numpy(b_act.reshape(-1))
        net.train()
        loss_sum = hit = 0.0
        for e in range(epochs):
            perm = torch.randperm(T * B)
            for i in range(0, T * B, minibatch):
                idx = perm[i:i + minibatch]
                logits, _ = net(X[idx], L[idx])
                loss = nn.functional.cross_entropy(logits, A[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                if e == 0:   # measured on data not trained on yet
                    loss_sum += loss.item() * len(idx)
                    hit += (logits.argmax(1) == A[idx]).sum().item()
        n += T * B
        spent += time.perf_counter() - t0
        rec = {"decisions": n, "seconds": round(spent, 2), "loss": loss_sum / (T * B), "accuracy": hit / (T * B)}
        history.append(rec)
        if log == "print" and len(history) % 20 == 0:
            print("imitate " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                        for k, v in rec.items()))
        elif callable(log):
            log(rec)
    net.eval()
    return history


@torch.no_grad()
def evaluate_vector(net, hands=400, seed=0, num_envs=64, rules=None, opponent="random"):
    """Quick batched check: the policy (argmax) in one seat (drawn per game) of a
    ``SeatVectorEnv`` against three in-kernel ``opponent`` agents, until ``hands``
    learner hands have closed. Not a duplicate-deal comparison: use
    ``majiang_env.arena`` for strength claims.
    Returns ``{"hands", "wins", "win_rate", "points_per_hand"}``."""
    env = SeatVectorEnv(num_envs, opponents=opponent, seat="random", rules=rules, obs_type="features",
                        copy=False)
    obs, _ = env.reset(seed=seed)
    hand = obs[:, SCALARS + F_HAND:SCALARS + F_HAND + 4].argmax(1)
    wins = done_hands = 0
    points = 0.0
    while done_hands < hands:
        mask = env.action_masks()
        logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
        a = logits.argmax(1).numpy()
        wins += int(WIN_ACTIONS[a].sum())
        obs, reward, term, _, _ = env.step(a)
        new_hand = obs[:, SCALARS + F_HAND:SCALARS + F_HAND + 4].argmax(1)
        done_hands += int((term | (new_hand != hand)).sum())
        points += float(reward.sum())
        hand = new_hand
    return {"hands": done_hands, "wins": wins, "win_rate": wins / done_hands,
            "points_per_hand": points / done_hands}


def save(net, path, config: PPOConfig | None = None, extra=None):
    """Save a checkpoint: weights, network size and (optionally) the config and extra info."""
    torch.save({"hidden": net.hidden, "kind_hidden": net.kind_hidden, "n_in": N_FEATURES, "state": net.state_dict(),
                "config": asdict(config) if config else None, "extra": extra or {}}, path)


def export_numpy(net, path, extra=None):
    """Write ``net``'s policy (not its value head) as the ``.npz`` that
    ``majiang_env.pretrained.NumpyPolicy`` runs without torch; ``extra``: a dict of
    strings stored beside it (e.g. how it was trained)."""
    from majiang_env.pretrained import FORMAT, _KEYS
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


def _has_greedy():
    import agents
    return hasattr(agents, "GreedyAgent")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m agents.ppo",
                                 description="Masked PPO for 馬将, by self-play or against in-kernel opponents "
                                             "(optionally after cloning GreedyAgent), then evaluation.")
    ap.add_argument("--quick", action="store_true", help="a short smoke run (also MAJIANG_QUICK=1)")
    ap.add_argument("--minutes", type=float, default=8.0, help="training wall time (evaluation excluded)")
    ap.add_argument("--imitate", type=float, default=0.0, metavar="MINUTES",
                    help="first clone GreedyAgent for this long (part of --minutes; default 0: pure self-play)")
    ap.add_argument("--opponents", default="self", choices=["self"] + sorted(AGENTS),
                    help="self-play (default), or the learner in one seat against three in-kernel agents")
    ap.add_argument("--eval-hands", type=int, default=2000)
    ap.add_argument("--eval-every", type=int, default=5, help="learning-curve check every N updates")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="checkpoint path (.pt)")
    ap.add_argument("--json", default=None, help="write results and the learning curve as JSON here")
    args = ap.parse_args(argv)
    if not 0 <= args.imitate < args.minutes:
        ap.error("--imitate must be at least 0 and less than --minutes")
    quick = args.quick or os.environ.get("MAJIANG_QUICK") == "1"
    cfg = PPOConfig(seed=args.seed, opponents=args.opponents)
    if quick:
        cfg.num_envs, cfg.rollout = 64, 64
    seconds = 15.0 if quick else args.minutes * 60
    eval_hands = min(args.eval_hands, 100) if quick else args.eval_hands
    torch.set_num_threads(cfg.threads)
    net, bc = PolicyNet(cfg.hidden), []
    if args.imitate > 0:
        bc_seconds = min(args.imitate * 60, seconds / 3 if quick else seconds)
        bc = imitate(net, "greedy", seconds=bc_seconds, seed=args.seed + 1, threads=cfg.threads,
                     numba_threads=cfg.numba_threads)
        seconds -= bc[-1]["seconds"]
        before = evaluate_vector(net, hands=100 if quick else 400, seed=9_999)["win_rate"]
        print(f"imitation: {bc[-1]['decisions']:,} decisions in {bc[-1]['seconds']:.0f} s, accuracy "
              f"{bc[-1]['accuracy']:.1%}; quick check vs random seats: {before:.2%}")
    eval_opponent = "random" if args.opponents == "self" else args.opponents
    net, hist = train(cfg, seconds=max(seconds, 1.0), eval_every=args.eval_every,
                      eval_hands=100 if quick else 400, net=net, eval_opponent=eval_opponent)
    if args.out:
        save(net, args.out, cfg)
    me = PPOAgent(net)
    out = {"train_seconds": hist[-1]["seconds"] + (bc[-1]["seconds"] if bc else 0.0), "updates": len(hist),
           "decisions": hist[-1]["decisions"], "config": asdict(cfg), "history": hist,
           "imitation": bc}
    # baselines: a baseline agent in the same seat of the same tables (more hands: they are cheap)
    out["vs_random"] = evaluate(me, "random", hands=eval_hands, seed=1)
    out["random_vs_random"] = evaluate("random", "random", hands=4 * eval_hands, seed=1)
    if _has_greedy():
        out["vs_greedy"] = evaluate(me, "greedy", hands=eval_hands, seed=2)
        out["greedy_vs_greedy"] = evaluate("greedy", "greedy", hands=eval_hands, seed=2)
    else:
        print("agents.GreedyAgent is not available: no evaluation against it")
    for k in ("vs_random", "random_vs_random", "vs_greedy", "greedy_vs_greedy"):
        if k in out:
            print(k, out[k])
    base = out["random_vs_random"]["win_rate"]
    out["ratio_vs_random"] = out["vs_random"]["win_rate"] / base if base else None
    print(f"trained {out['train_seconds']:.0f} s, {out['decisions']:,} decisions; "
          f"vs 3 RandomAgents: wins {out['vs_random']['win_rate']:.2%} of {out['vs_random']['hands']} hands"
          + (f" = {out['ratio_vs_random']:.1f}x" if base else "")
          + f" a RandomAgent's {base:.2%} in the same seat")
    if "vs_greedy" in out:
        print(f"vs 3 GreedyAgents: wins {out['vs_greedy']['win_rate']:.2%} of {out['vs_greedy']['hands']} hands; "
              f"a GreedyAgent in the same seat wins {out['greedy_vs_greedy']['win_rate']:.2%}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out


if __name__ == "__main__":
    main()
