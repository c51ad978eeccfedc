"""Masked PPO by self-play for 馬将 — compact, CPU, torch.

Needs the ``train`` extra (``pip install torch==2.13.0 && pip install -e ".[train]"``).

    python -m agents.ppo --quick           # smoke run: ~15 s of training, 100-hand evaluations
    python -m agents.ppo                   # 8 min of training, then 2,000-hand evaluations
    python -m agents.ppo --minutes 10 --out ppo.pt --json result.json
    python -m agents.ppo --imitate 3       # 3 min of cloning GreedyAgent, then 5 min of self-play

How it trains
-------------
* ``VectorGame(num_envs)`` games; **all four seats are played by the current
  policy** (self-play), and every decision of every seat is a sample.
* Policy: an MLP actor-critic over :func:`features` (a fixed float encoding of
  the int16 observation plus the action mask). Logits of illegal actions are
  set to -1e9 before the softmax, so the policy samples, scores and evaluates
  only legal actions.
* Credit: each seat's decisions in one hand are one episode for that seat
  (GAE over that seat's own decisions). A hand's point change goes to each
  seat's last decision in that hand. Hands still running at the end of a
  rollout are carried into the next one (with the log-probabilities and values
  of the policy that acted), so no episode is cut.
* Reward shaping (on by default): ``win_bonus`` on a winning decision (模 108,
  栄 117-119) plus ``point_scale`` × the hand's point change. Evaluation counts
  real wins and points only.

Optional warm start (``--imitate MINUTES``, :func:`imitate`): behaviour cloning
of ``GreedyAgent`` (masked cross-entropy on its decisions while it plays all
four seats), then self-play PPO from that network. Not on by default: the
default run is self-play from scratch.

One update of :func:`train` is :func:`collect_rollout` (self-play into a
:class:`Rollouts` buffer), :func:`training_batch` (the finished hands, GAE by
:func:`compute_advantages`; the rest is carried) and :func:`ppo_update`.

Evaluation: :func:`evaluate` (from :mod:`agents.evaluation`, shared with
``benchmarks/eval_agents.py``) plays whole ``Game`` s with the policy in seat
``g % 4`` of game g and three baseline agents (``"random"``, ``"greedy"`` or an
agent class) in the other seats, and counts the hands each side won.
:func:`evaluate_vector` is a cheap batched check against uniformly random
legal moves, used for the learning curve.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass

from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from majiang_env.kernel import observe as O
from majiang_env.rules import NUM_ACTIONS
from majiang_env.threads import numba_threads as _numba_threads
from majiang_env.vector import VectorGame
from majiang_env.wrappers import make_agent

from .evaluation import evaluate

__all__ = ["features", "N_FEATURES", "PolicyNet", "PPOAgent", "PPOConfig", "train", "imitate",
           "evaluate", "evaluate_vector", "save", "load", "WIN_ACTIONS", "main",
           "Rollouts", "collect_rollout", "compute_advantages", "training_batch", "ppo_update"]

WIN_ACTIONS = np.zeros(NUM_ACTIONS, bool)
WIN_ACTIONS[[108, 117, 118, 119]] = True
_S = O.OBS_SCALAR


def _counts(vals, nbins):
    """Per-row histogram of the non-negative ints ``vals`` (B, n) into (B, nbins)."""
    B = vals.shape[0]
    idx = vals + nbins * np.arange(B)[:, None]
    return np.bincount(idx.ravel(), minlength=B * nbins).reshape(B, nbins)


def _onehot(v, n):
    out = np.zeros((v.shape[0], n), np.float32)
    out[np.arange(v.shape[0]), np.clip(v, 0, n - 1)] = 1
    return out


def features(obs, mask) -> np.ndarray:
    """float32 (B, N_FEATURES) from observations int16 (B, 436) and masks (B, 156);
    a single observation (436,) gives (N_FEATURES,).

    Own hand as thresholds (>= 1..4 copies per kind), drawn card, own side
    cards, river kinds (own / all), each other seat's claimable discard
    (one-hot), meld kinds (own / others; 刻-like and 順), melds per seat, the
    scalars (hand, start seat, lap, phase, slot, wins, took, picked kind,
    exchange left, retired, scores, square cards left) and the action mask.
    """
    obs = np.asarray(obs)
    single = obs.ndim == 1
    o = np.atleast_2d(obs).astype(np.int64)
    m = np.atleast_2d(np.asarray(mask)).astype(np.float32)
    B = o.shape[0]
    hand = o[:, O.OBS_HAND:O.OBS_HAND + 36]
    f = [(hand[:, None, :] > np.arange(4)[None, :, None]).reshape(B, 144),
         o[:, O.OBS_DRAWN:O.OBS_DRAWN + 36], o[:, O.OBS_SIDE:O.OBS_SIDE + 36] / 4.0]
    river = o[:, O.OBS_RIVER:O.OBS_RIVER + 72]
    f += [_counts(river[:, :18], 37)[:, 1:] / 4.0, _counts(river, 37)[:, 1:] / 4.0]
    claim = o[:, O.OBS_CLAIM + 1:O.OBS_CLAIM + 4] + 37 * np.arange(3)
    f.append(_counts(claim, 111).reshape(B, 3, 37)[:, :, 1:].reshape(B, 108))
    meld = o[:, O.OBS_MELD:O.OBS_MELD + 48].reshape(B, 4, 4, 3)
    mt, mk = meld[..., 0], meld[..., 1]            # type (1 刻 2 順 3 暗 4 明), kind + 1
    pung, chow = (mt == 1) | (mt >= 3), mt == 2
    f += [_counts(np.where(pung[:, 0], mk[:, 0], 0), 37)[:, 1:],
          _counts(np.where(chow[:, 0], mk[:, 0], 0), 37)[:, 1:],
          _counts(np.where(pung[:, 1:], mk[:, 1:], 0).reshape(B, 12), 37)[:, 1:] / 3.0,
          _counts(np.where(chow[:, 1:], mk[:, 1:], 0).reshape(B, 12), 37)[:, 1:] / 3.0,
          (mt > 0).sum(2) / 4.0]
    s = o[:, _S:_S + 24]
    f += [s[:, 1:2] / 3.0, _onehot(s[:, 2], 4), s[:, 3:4] / 19.0, _onehot(s[:, 4], 4),
          s[:, 5:6] / 76.0, s[:, 6:7] / 3.0, _onehot(s[:, 7], 3), _onehot(s[:, 8], 37)[:, 1:],
          s[:, 9:10] / 16.0, s[:, 10:14], np.tanh(s[:, 14:18] / 100.0), s[:, 18:22] / 36.0, m]
    x = np.concatenate([np.asarray(a, np.float32) for a in f], axis=1)
    return x[0] if single else x


N_FEATURES = features(np.zeros((1, O.OBS_SIZE), np.int16), np.zeros((1, NUM_ACTIONS), np.int8)).shape[1]


class PolicyNet(nn.Module):
    """Actor-critic MLP: features -> (masked logits over 156 actions, value)."""

    def __init__(self, hidden=256, n_in=N_FEATURES):
        super().__init__()
        self.hidden = hidden
        self.body = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.pi = nn.Linear(hidden, NUM_ACTIONS)
        self.v = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.pi.weight, 0.01)
        nn.init.zeros_(self.pi.bias)

    def forward(self, x, legal):
        h = self.body(x)
        return self.pi(h).masked_fill(~legal, -1e9), self.v(h).squeeze(-1)


class PPOAgent:
    """A policy as an agent, ``agent(obs_dict) -> action`` (like ``agents.RandomAgent``).

    ``deterministic=True`` (default) plays the most probable legal action;
    otherwise it samples from the masked policy with its own seeded generator.
    """

    def __init__(self, net, deterministic=True, seed=None):
        self.net = net.eval()
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)

    @torch.no_grad()
    def act_batch(self, obs, mask):
        """Actions for a batch: obs (B, 436), mask (B, 156) -> int64 (B,)."""
        mask = np.asarray(mask)
        logits, _ = self.net(torch.from_numpy(features(obs, mask)), torch.from_numpy(mask > 0))
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
    num_envs: int = 256
    rollout: int = 128            # decisions per env per update
    epochs: int = 3
    minibatch: int = 4096
    lr: float = 3e-4
    gamma: float = 0.99           # per decision of the same seat
    lam: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 256
    win_bonus: float = 1.0        # shaping: reward on a winning decision
    point_scale: float = 1 / 30   # reward per point of a hand's point change
    threads: int = 1              # torch threads; see _threads
    numba_threads: int = 1        # VectorGame kernel threads during training
    seed: int = 0


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


class Rollouts:
    """The self-play games of :func:`train` and their transition buffer.

    ``vg`` is a ``VectorGame(cfg.num_envs)`` and ``obs, mask, player`` its current
    state; ``buf`` holds per env, ``cap`` deep, first the unfinished tail of hands
    carried from earlier rollouts, then the current rollout; ``n[b]`` is the number
    of transitions stored for env b.
    """

    def __init__(self, cfg, rules=None):
        B = cfg.num_envs
        self.cap = cfg.rollout + 512         # a hand has < 300 decisions; its unfinished tail is carried
        self.vg = VectorGame(B, rules=rules, seed=cfg.seed)
        self.obs, self.mask, self.player = self.vg.reset()
        cap = self.cap
        self.buf = {"obs": np.zeros((B, cap, O.OBS_SIZE), np.int16),
                    "mask": np.zeros((B, cap, NUM_ACTIONS), np.int8),
                    "act": np.zeros((B, cap), np.int64), "logp": np.zeros((B, cap), np.float32),
                    "val": np.zeros((B, cap), np.float32), "seat": np.zeros((B, cap), np.int64),
                    "rew": np.zeros((B, cap), np.float32), "close": np.zeros((B, cap), bool),
                    "delta": np.zeros((B, cap, 4), np.float32)}
        self.n = np.zeros(B, np.int64)
        self.ar = np.arange(B)

    def finished(self):
        """Per env, the number of transitions up to and including its last closed hand."""
        tt = np.arange(int(self.n.max()))
        return np.where(self.buf["close"][:, :len(tt)] & (tt < self.n[:, None]), tt + 1, 0).max(1)

    def carry(self, n_train, rollout):
        """Move each env's transitions after the first ``n_train[b]`` to the front of its
        buffer, to be trained on once their hand closes; ``rollout`` more must still fit."""
        keep = self.n - n_train
        k = int(keep.max())
        src = np.minimum(n_train[:, None] + np.arange(k)[None], self.cap - 1)
        for x in self.buf.values():
            x[:, :k] = x[self.ar[:, None], src]
        self.n = keep
        if self.n.max() + rollout > self.cap:
            raise RuntimeError("a hand longer than the carry buffer; raise cap")


def collect_rollout(net, roll: Rollouts, cfg) -> tuple[int, int]:
    """``cfg.rollout`` decisions in every game of ``roll``, all four seats sampled from
    ``net``'s masked policy (Gumbel-max with torch's global generator), appended to
    ``roll.buf`` with their log-probabilities, values, seats, shaped rewards
    (``win_bonus`` on a win) and, where a hand closed, its point change × ``point_scale``.
    Returns ``(wins, hands)``: winning decisions and hands closed during the rollout."""
    net.eval()
    buf, ar = roll.buf, roll.ar
    obs, mask, player, n = roll.obs, roll.mask, roll.player, roll.n
    wins = hands = 0
    for _ in range(cfg.rollout):
        with torch.no_grad():
            logits, v = net(torch.from_numpy(features(obs, mask)), torch.from_numpy(mask > 0))
            g = -torch.log(-torch.log(torch.rand(logits.shape).clamp_(1e-12, 1 - 1e-7)))
            a = (logits + g).argmax(1)
            logp = torch.log_softmax(logits, 1).gather(1, a[:, None]).squeeze(1)
        a = a.numpy()
        buf["obs"][ar, n] = obs
        buf["mask"][ar, n] = mask
        buf["act"][ar, n] = a
        buf["logp"][ar, n] = logp.numpy()
        buf["val"][ar, n] = v.numpy()
        buf["seat"][ar, n] = player
        won = WIN_ACTIONS[a]
        wins += int(won.sum())
        buf["rew"][ar, n] = cfg.win_bonus * won
        obs, mask, player, rewards, done = roll.vg.step(a)
        closed = roll.vg.hand_closed
        hands += int(closed.sum())
        buf["close"][ar, n] = closed
        buf["delta"][ar, n] = rewards * cfg.point_scale
        n += 1
    roll.obs, roll.mask, roll.player = obs, mask, player
    return wins, hands


def training_batch(roll: Rollouts, cfg) -> dict:
    """The samples of one update: every env's transitions up to its last closed hand,
    with their GAE advantages (:func:`compute_advantages`) and returns; the rest is
    carried to the next rollout (:meth:`Rollouts.carry`). Returns tensors ``X``
    (features), ``L`` (legal), ``A`` (actions), ``LP`` (behaviour log-probabilities),
    ``ADV`` and ``RET`` (advantage + value), one row per sample."""
    buf = roll.buf
    n_train = roll.finished()
    adv = compute_advantages(cfg, n_train, buf["close"], buf["seat"], buf["rew"], buf["delta"], buf["val"])
    rb, rt = np.nonzero(np.arange(roll.cap)[None] < n_train[:, None])
    batch = {"X": torch.from_numpy(features(buf["obs"][rb, rt], buf["mask"][rb, rt])),
             "L": torch.from_numpy(buf["mask"][rb, rt] > 0),
             "A": torch.from_numpy(buf["act"][rb, rt]),
             "LP": torch.from_numpy(buf["logp"][rb, rt]),
             "ADV": torch.from_numpy(adv[rb, rt])}
    batch["RET"] = batch["ADV"] + torch.from_numpy(buf["val"][rb, rt])
    roll.carry(n_train, cfg.rollout)
    return batch


def ppo_update(net, opt, batch, cfg, rng) -> tuple[float | None, float | None]:
    """``cfg.epochs`` passes of clipped-PPO minibatch steps over ``batch`` (from
    :func:`training_batch`; order from ``rng.permutation``, advantages normalised per
    minibatch, value loss and entropy bonus, gradient norm clipped). Returns the mean
    entropy and value loss over the minibatches (None, None when there was no sample)."""
    net.train()
    X, L, A, LP, ADV, RET = (batch[k] for k in ("X", "L", "A", "LP", "ADV", "RET"))
    N = len(A)
    ent_sum = vl_sum = 0.0
    nb = 0
    for _ in range(cfg.epochs if N else 0):
        perm = torch.from_numpy(rng.permutation(N))
        for i in range(0, N, cfg.minibatch):
            idx = perm[i:i + cfg.minibatch]
            logits, v = net(X[idx], L[idx])
            lsm = torch.log_softmax(logits, 1)
            lp = lsm.gather(1, A[idx, None]).squeeze(1)
            ad = ADV[idx]
            ad = (ad - ad.mean()) / (ad.std() + 1e-8)
            ratio = torch.exp(lp - LP[idx])
            pg = -torch.min(ratio * ad, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * ad).mean()
            vl = ((v - RET[idx]) ** 2).mean()
            ent = -(lsm.exp() * lsm).sum(1).mean()
            loss = pg + cfg.vf_coef * vl - cfg.ent_coef * ent
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            opt.step()
            ent_sum += ent.item()
            vl_sum += vl.item()
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
    """torch and numba thread counts for one call, restored afterwards. One each is the
    default: the rollout alternates the numba kernel and the torch network, and on 2
    cores, the more so on a shared machine, their thread pools waiting for each other
    cost far more than a second thread gains (measured: rollouts several times slower)."""
    old = torch.get_num_threads()
    torch.set_num_threads(n_torch)
    try:
        with _numba_threads(n_numba):
            yield
    finally:
        torch.set_num_threads(old)


def train(config: PPOConfig | None = None, seconds: float | None = 300.0, updates: int | None = None,
          eval_every: int = 0, eval_hands: int = 400, log="print", net: PolicyNet | None = None,
          rules=None):
    """Self-play masked PPO; stops after ``updates`` updates or ``seconds`` of wall
    time, whichever comes first (``None``: no limit of that kind).

    Returns ``(net, history)``: one dict per update with ``update, decisions,
    seconds, rollout_s, learn_s, hands`` (hands closed in the update),
    ``selfplay_win_rate`` (wins per seat per closed hand; None when no hand
    closed), ``entropy, value_loss``, ``load1`` (the machine's 1-minute load
    average: other processes slow training down), and every ``eval_every``
    updates ``eval_random_win_rate`` (:func:`evaluate_vector` over
    ``eval_hands`` hands; the time it takes is not counted in ``seconds``).
    ``log(record)`` is called after each update (``"print"``: one line each; None: quiet).
    """
    if seconds is None and updates is None:
        raise ValueError("give seconds or updates")
    cfg = config or PPOConfig()
    with _threads(cfg.threads, cfg.numba_threads):
        return _train(cfg, seconds, updates, eval_every, eval_hands, log, net, rules)


def _train(cfg, seconds, updates, eval_every, eval_hands, log, net, rules):
    """:func:`train`'s loop, thread counts already set: per update a rollout, the
    advantages and the PPO update, then one history record."""
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    net = net or PolicyNet(cfg.hidden)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5)
    roll = Rollouts(cfg, rules)
    history = []
    decisions = 0
    spent = 0.0                          # training wall time, evaluation excluded
    while (updates is None or len(history) < updates) and (seconds is None or spent < seconds):
        t0 = time.perf_counter()
        wins, hands = collect_rollout(net, roll, cfg)
        decisions += cfg.num_envs * cfg.rollout
        t1 = time.perf_counter()
        entropy, value_loss = ppo_update(net, opt, training_batch(roll, cfg), cfg, rng)
        t2 = time.perf_counter()
        spent += t2 - t0
        rec = {"update": len(history) + 1, "decisions": decisions, "seconds": round(spent, 2),
               "rollout_s": round(t1 - t0, 2), "learn_s": round(t2 - t1, 2), "hands": hands,
               "selfplay_win_rate": wins / (4 * hands) if hands else None,
               "entropy": entropy, "value_loss": value_loss, "load1": round(os.getloadavg()[0], 2)}
        if eval_every and rec["update"] % eval_every == 0:
            rec["eval_random_win_rate"] = evaluate_vector(net, hands=eval_hands, seed=10_000 + rec["update"],
                                                          rules=rules)["win_rate"]
        history.append(rec)
        _log_record(rec, log)
    net.eval()
    return net, history


def imitate(net, teacher="greedy", seconds=60.0, chunks=None, num_envs=256, steps=16, minibatch=1024,
            lr=1e-3, seed=0, rules=None, threads=1, numba_threads=1, log="print"):
    """Behaviour cloning, an optional warm start before :func:`train`: ``teacher``
    (a name such as ``"greedy"``, an agent class or an agent) plays all four seats of
    a ``VectorGame(num_envs)``; every ``steps`` decisions per game, ``net``'s policy
    head takes one pass of masked cross-entropy over those decisions, until
    ``seconds`` of wall time or ``chunks`` passes, whichever comes first. Returns a
    history like :func:`train`'s: per chunk
    ``decisions, seconds, loss, accuracy`` (agreement with the teacher, each
    minibatch measured before its step; a teacher that breaks ties at random
    caps it below 1). Only the policy head and the body learn here."""
    with _threads(threads, numba_threads):
        return _imitate(net, teacher, seconds, chunks, num_envs, steps, minibatch, lr, seed, rules, log)


def _imitate(net, teacher, seconds, chunks, num_envs, steps, minibatch, lr, seed, rules, log):
    torch.manual_seed(seed)
    agent = teacher if callable(teacher) and not isinstance(teacher, type) else make_agent(teacher, seed, rules)
    opt = torch.optim.Adam(list(net.body.parameters()) + list(net.pi.parameters()), lr=lr)
    vg = VectorGame(num_envs, rules=rules, seed=seed)
    obs, mask, _ = vg.reset()
    B, T = num_envs, steps
    b_obs = np.empty((T, B, O.OBS_SIZE), np.int16)
    b_mask = np.empty((T, B, NUM_ACTIONS), np.int8)
    b_act = np.empty((T, B), np.int64)
    history, spent, n = [], 0.0, 0
    while (seconds is None or spent < seconds) and (chunks is None or len(history) < chunks):
        t0 = time.perf_counter()
        for t in range(T):
            a = np.fromiter((agent({"observation": obs[i], "action_mask": mask[i]}) for i in range(B)),
                            np.int64, B)
            b_obs[t], b_mask[t], b_act[t] = obs, mask, a
            obs, mask, _, _, _ = vg.step(a)
        X = torch.from_numpy(features(b_obs.reshape(T * B, -1), b_mask.reshape(T * B, -1)))
        L = torch.from_numpy(b_mask.reshape(T * B, -1) > 0)
        A = torch.from_numpy(b_act.reshape(-1))
        net.train()
        perm = torch.randperm(T * B)
        loss_sum = hit = 0.0
        for i in range(0, T * B, minibatch):
            idx = perm[i:i + minibatch]
            logits, _ = net(X[idx], L[idx])
            loss = nn.functional.cross_entropy(logits, A[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
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
def evaluate_vector(net, hands=400, seed=0, num_envs=64, rules=None):
    """Quick batched check: the policy (argmax) in seat ``g % 4`` of game g, uniformly
    random legal moves (``RandomAgent``'s distribution) in the others, in a
    ``VectorGame``, until ``hands`` hands have closed.
    Returns ``{"hands", "wins", "win_rate", "opponent_win_rate"}`` (per seat)."""
    agent = PPOAgent(net)
    vg = VectorGame(num_envs, rules=rules, seed=seed)
    obs, mask, player = vg.reset()
    rng = np.random.default_rng(seed)
    wins = np.zeros(2, np.int64)
    done_hands = 0
    while done_hands < hands:
        mine = player == vg.game_index % 4
        a = np.argmax(rng.random(mask.shape) * mask, 1)
        if mine.any():
            a[mine] = agent.act_batch(obs[mine], mask[mine])
        won = WIN_ACTIONS[a]
        wins += [int((won & mine).sum()), int((won & ~mine).sum())]
        obs, mask, player, rewards, done = vg.step(a)
        done_hands += int(vg.hand_closed.sum())
    return {"hands": done_hands, "wins": int(wins[0]), "win_rate": wins[0] / done_hands,
            "opponent_win_rate": wins[1] / (3 * done_hands)}


def save(net, path, config: PPOConfig | None = None, extra=None):
    """Save a checkpoint: weights, network size and (optionally) the config and extra info."""
    torch.save({"hidden": net.hidden, "n_in": N_FEATURES, "state": net.state_dict(),
                "config": asdict(config) if config else None, "extra": extra or {}}, path)


def load(path) -> PolicyNet:
    """The network of a :func:`save` checkpoint, in eval mode."""
    ck = torch.load(path, map_location="cpu", weights_only=True)
    if ck["n_in"] != N_FEATURES:
        raise ValueError(f"checkpoint has {ck['n_in']} features, this version {N_FEATURES}")
    net = PolicyNet(ck["hidden"])
    net.load_state_dict(ck["state"])
    return net.eval()


def _has_greedy():
    import agents
    return hasattr(agents, "GreedyAgent")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Self-play masked PPO for 馬将 (optionally after cloning "
                                             "GreedyAgent), then evaluation.")
    ap.add_argument("--quick", action="store_true", help="a short smoke run (also MAJIANG_QUICK=1)")
    ap.add_argument("--minutes", type=float, default=8.0, help="training wall time (evaluation excluded)")
    ap.add_argument("--imitate", type=float, default=0.0, metavar="MINUTES",
                    help="first clone GreedyAgent for this long (part of --minutes; default 0: pure self-play)")
    ap.add_argument("--eval-hands", type=int, default=2000)
    ap.add_argument("--eval-every", type=int, default=5, help="learning-curve check every N updates")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="checkpoint path (.pt)")
    ap.add_argument("--json", default=None, help="write results and the learning curve as JSON here")
    args = ap.parse_args(argv)
    if not 0 <= args.imitate < args.minutes:
        ap.error("--imitate must be at least 0 and less than --minutes")
    quick = args.quick or os.environ.get("MAJIANG_QUICK") == "1"
    cfg = PPOConfig(seed=args.seed)
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
    net, hist = train(cfg, seconds=max(seconds, 1.0), eval_every=args.eval_every,
                      eval_hands=100 if quick else 400, net=net)
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
