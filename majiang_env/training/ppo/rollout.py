"""Where the training data comes from: the games (:class:`_SelfPlay`, :class:`_Versus`),
the transition buffer :class:`Rollouts` that :func:`collect_rollout` fills with the
policy's own decisions, and a teacher's decisions for :func:`majiang_env.training.ppo.imitate`
(:class:`_Demonstrations`)."""
from __future__ import annotations

import numpy as np
import torch

from majiang_env.engine.kernel.features import F_DEF_NOW, F_HAND, SCALARS
from majiang_env.engine.kernel.fullstate import STATE_SIZE, rotate_seats
from majiang_env.engine.rules import A_RON, A_TSUMO, NUM_ACTIONS
from majiang_env.engine.vector import VectorGame
from majiang_env.envs.seat_vector import SeatVectorEnv

from .config import matmul_dtype
from .network import N_FEATURES, _forward

__all__ = ["WIN_ACTIONS", "Rollouts", "collect_rollout"]

WIN_ACTIONS = np.zeros(NUM_ACTIONS, bool)
WIN_ACTIONS[[A_TSUMO, A_RON, A_RON + 1, A_RON + 2]] = True


class _SelfPlay:
    """Every seat played by the policy: ``VectorGame(obs_type="features")``."""
    max_hand = 180                       # decisions of one hand, all seats (a carried tail is shorter)

    def __init__(self, cfg, rules):
        self.vg = VectorGame(cfg.num_envs, rules=rules, seed=cfg.seed, obs_type="features")
        self.obs, self.mask, self.seat = self.vg.reset()

    def states(self):
        """The full states now, each seen from the seat to act (the privileged critic's input)."""
        return rotate_seats(self.vg.full_states(), self.seat)

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
                                 obs_type="features", copy=False, critic_state=cfg.critic == "state")
        obs, info = self.env.reset(seed=cfg.seed)
        self.seat = np.zeros(cfg.num_envs, np.int64)
        self._set(obs, info)

    def _set(self, obs, info):
        self.obs, self.mask, self.info = obs, self.env.action_masks(), info
        self.hand = obs[:, SCALARS + F_HAND:SCALARS + F_HAND + 4].argmax(1)

    def states(self):
        """As ``_SelfPlay.states``, for the learner's seat."""
        return rotate_seats(self.info["state"], self.info["seat"])

    def sample_step(self, logits):
        """As ``_SelfPlay.sample_step`` (the learner's actions; its reward in column 0)."""
        a = self.env.sample_actions(logits)
        before = self.hand
        obs, reward, term, _, info = self.env.step(a)
        self._set(obs, info)
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
        # the privileged critic's inputs (full states, seats rotated), stored beside the features
        self.state = np.zeros((B * cap if cfg.critic == "state" else 0, STATE_SIZE), np.int16)
        self.buf = {"act": np.zeros((B, cap), np.int64), "logp": np.zeros((B, cap), np.float32),
                    "val": np.zeros((B, cap), np.float32), "seat": np.zeros((B, cap), np.int64),
                    "rew": np.zeros((B, cap), np.float32), "close": np.zeros((B, cap), bool),
                    "delta": np.zeros((B, cap, 4), np.float32), "phi": np.zeros((B, cap), np.float32)}
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


def collect_rollout(net, roll: Rollouts, cfg, critic=None) -> tuple[int, int]:
    """``cfg.rollout`` decisions in every game of ``roll``, sampled in the kernel from
    ``net``'s logits, appended to ``roll`` with their features, legal masks,
    log-probabilities, values, seats, shaped rewards (self-play: ``win_bonus`` on a
    win) and, where a hand closed, its point change × ``point_scale``. With a
    ``critic`` (:class:`StateCritic`) the values are its own, from the full states,
    which are stored too. Returns ``(wins, hands)``: winning decisions and hands
    closed during the rollout."""
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
            if critic is not None:
                state = src.states()
                v = critic(torch.from_numpy(state), xd)
                roll.state[roll.rows(ar, n)] = state
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
        # the shaping potential: the features hold min(deficiency, 8) / 8
        buf["phi"][ar, n] = -cfg.shaping * 8 * roll.stage[:, SCALARS + F_DEF_NOW]
        n += 1
    return wins, hands


def _teacher(teacher, vg, seed, rules):
    """``teacher`` (any agent spec, ``majiang_env.agents``) as ``act() -> actions (B,)`` for
    the player to act in each game of ``vg`` (``VectorGame.policy_actions``: in the kernel
    for an in-kernel agent, batched for a Python one)."""
    return lambda: vg.policy_actions(teacher)


class _Demonstrations:
    """A teacher (:func:`_teacher`) playing all four seats of a
    ``VectorGame(num_envs, obs_type="features")``; :meth:`collect` returns its
    next ``steps`` decisions per game."""

    def __init__(self, teacher, num_envs, steps, seed, rules):
        self.vg = VectorGame(num_envs, rules=rules, seed=seed, obs_type="features")
        self.obs, self.mask, _ = self.vg.reset()
        self.act = _teacher(teacher, self.vg, seed, rules)
        B, T = num_envs, steps
        self.b_obs = np.empty((T, B, N_FEATURES), np.float32)
        self.b_mask = np.empty((T, B, NUM_ACTIONS), np.bool_)
        self.b_act = np.empty((T, B), np.int64)

    def collect(self):
        """``steps`` decisions of every game: tensors ``(X, L, A)``, one row per
        decision (features float32, legal mask bool, the teacher's action int64);
        they share memory with buffers the next call overwrites."""
        T, B = self.b_act.shape
        for t in range(T):
            a = self.act()
            self.b_obs[t], self.b_mask[t], self.b_act[t] = self.obs, self.mask, a
            self.obs, self.mask, _, _, _ = self.vg.step(a)
        return (torch.from_numpy(self.b_obs.reshape(T * B, -1)), torch.from_numpy(self.b_mask.reshape(T * B, -1)),
                torch.from_numpy(self.b_act.reshape(-1)))
