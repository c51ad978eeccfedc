"""Learning: GAE (:func:`compute_advantages`), the samples of one update
(:func:`training_batch`), the clipped-PPO step (:func:`ppo_update`), the loop that
alternates them with rollouts (:class:`Trainer`, :func:`train`) and behaviour
cloning (:func:`imitate`)."""
from __future__ import annotations

import os
import time

import numpy as np
import torch
from torch import nn

from majiang_env.engine.registry import resolve

from .config import PPOConfig, _threads, keep_freed_memory, matmul_dtype
from .evaluation import evaluate
from .network import PolicyNet, StateCritic, _forward
from .rollout import Rollouts, _Demonstrations, collect_rollout

__all__ = ["compute_advantages", "training_batch", "ppo_update", "Trainer", "train", "imitate", "CHUNK",
           "EVAL_SEED"]

CHUNK = 2048    # samples per forward / backward pass inside a minibatch (see ppo_update)
EVAL_SEED = 10_000   # the deals of the learning-curve checks (the same every time)


def compute_advantages(cfg, n_train, close, seat, rew, delta, val, phi=None):
    """GAE per env and seat over the first ``n_train[b]`` transitions of env b, a hand
    being one episode per seat; a hand's ``delta`` goes to each seat's last decision in it.

    ``phi`` (optional, (B, cap)): a potential per decision, for potential-based reward
    shaping (Ng, Harada & Russell, 1999): decision t's reward gets
    ``gamma * phi(the same seat's next decision in the hand) - phi(t)``, the potential
    after a seat's last decision of a hand being 0. Over a hand the added rewards sum
    to minus the seat's first potential (discounted), so the best policy does not change.

    All arrays are (B, cap[, 4]) as in :class:`Rollouts`; returns float32 (B, cap)
    advantages (0 past ``n_train``)."""
    B = len(n_train)
    ar = np.arange(B)
    adv = np.zeros(close.shape, np.float32)
    next_v = np.zeros((B, 4), np.float32)
    next_a = np.zeros((B, 4), np.float32)
    pend = np.zeros((B, 4), np.float32)
    next_phi = np.zeros((B, 4), np.float32)
    if phi is None:
        phi = np.zeros(close.shape, np.float32)
    for t in range(int(n_train.max()) - 1, -1, -1):
        live = t < n_train
        cl = live & close[:, t]
        next_v[cl] = 0
        next_a[cl] = 0
        next_phi[cl] = 0
        pend[cl] = delta[cl, t]
        s = seat[:, t]
        shaped = rew[:, t] + cfg.gamma * next_phi[ar, s] - phi[:, t]
        d = shaped + pend[ar, s] + cfg.gamma * next_v[ar, s] - val[:, t]
        a = d + cfg.gamma * cfg.lam * next_a[ar, s]
        ls, ss = np.flatnonzero(live), s[live]
        pend[ls, ss] = 0
        next_v[ls, ss] = val[ls, t]
        next_phi[ls, ss] = phi[ls, t]
        next_a[ls, ss] = a[ls]
        adv[:, t] = np.where(live, a, 0)
    return adv


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
    adv = compute_advantages(cfg, n_train, buf["close"], buf["seat"], buf["rew"], buf["delta"], buf["val"],
                             buf["phi"])
    rb, rt = np.nonzero(np.arange(roll.cap)[None] < n_train[:, None])
    batch = {"X": roll.obs, "L": torch.from_numpy(roll.legal), "S": torch.from_numpy(roll.state),
             "R": torch.from_numpy(roll.rows(rb, rt)),
             "A": torch.from_numpy(buf["act"][rb, rt]), "LP": torch.from_numpy(buf["logp"][rb, rt]),
             "ADV": torch.from_numpy(adv[rb, rt])}
    batch["RET"] = batch["ADV"] + torch.from_numpy(buf["val"][rb, rt])
    roll.carry(n_train, cfg.rollout)
    return batch


def ppo_update(net, opt, batch, cfg, rng, critic=None) -> tuple[float | None, float | None]:
    """``cfg.epochs`` passes of clipped-PPO minibatch steps over ``batch`` (from
    :func:`training_batch`; order from ``rng.permutation``, advantages normalised over
    the batch, value loss and entropy bonus, gradient norm clipped; a minibatch whose
    loss is not finite is skipped). The value is ``critic``'s, from the stored full
    states, when there is one (``opt`` then steps both networks). Returns the mean
    entropy and value loss over the minibatches (None, None when there was no sample).

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
    X, L, S, R, A, LP, ADV, RET = (batch[k] for k in ("X", "L", "S", "R", "A", "LP", "ADV", "RET"))
    params = list(net.parameters()) + (list(critic.parameters()) if critic is not None else [])
    if critic is not None:
        critic.train()
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
                x = X.index_select(0, rows)
                logits, v = _forward(net, x, L.index_select(0, rows), dtype)
                if critic is not None:
                    v = critic(S.index_select(0, rows), x)
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
                nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
                opt.step()
                ent_sum += ent
                vl_sum += vl
                nb += 1
    return (ent_sum / nb, vl_sum / nb) if nb else (None, None)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _log_record(rec, log):
    """``log="print"``: one line; a callable: ``log(rec)``; None: nothing."""
    if log == "print":
        print(" ".join(f"{k}={_fmt(v)}" for k, v in rec.items()))
    elif log:
        log(rec)


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
        if cfg.opponents != "self":
            resolve(cfg.opponents, "opponents ('self' or an agent spec)")   # ValueError naming the known agents
        self.rules = rules
        if cfg.keep_freed_memory:
            keep_freed_memory()
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        if cfg.critic not in ("observation", "state"):
            raise ValueError(f"critic must be 'observation' or 'state', got {cfg.critic!r}")
        if not np.isfinite(cfg.shaping):
            raise ValueError(f"shaping must be a finite number, got {cfg.shaping!r}")
        self.net = net or PolicyNet(cfg.hidden)
        # the privileged critic: values from the full state, in training only (never in the saved policy)
        self.critic = StateCritic(cfg.hidden) if cfg.critic == "state" else None
        self.opt = _adam(list(self.net.parameters()) + (list(self.critic.parameters()) if self.critic else []),
                         cfg.lr)
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
                wins, hands = collect_rollout(net, self.roll, cfg, self.critic)
                self.decisions += cfg.num_envs * cfg.rollout
                t1 = time.perf_counter()
                entropy, value_loss = ppo_update(net, self.opt, training_batch(self.roll, cfg), cfg, self.rng,
                                                 self.critic)
                t2 = time.perf_counter()
                self.spent += t2 - t0
                self.recent = (self.recent + [(wins, hands)])[-10:]
                w10, h10 = (sum(x) for x in zip(*self.recent, strict=True))
                rec = {"update": n0 + len(new) + 1, "decisions": self.decisions, "seconds": round(self.spent, 2),
                       "rollout_s": round(t1 - t0, 2), "learn_s": round(t2 - t1, 2), "hands": hands,
                       "win_rate": w10 / (seats * h10) if h10 else None,
                       "entropy": entropy, "value_loss": value_loss, "load1": round(os.getloadavg()[0], 2)}
                if eval_every and rec["update"] % eval_every == 0:
                    ev = evaluate(net, eval_opponent, hands=eval_hands, seed=EVAL_SEED, rules=self.rules,
                                  baseline=False)
                    rec["eval_points_per_hand"], rec["eval_win_rate"] = ev["points_per_hand"], ev["win_rate"]
                    rec["eval_points_ci"] = ev["points_ci"]
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
    processes slow training down), and every ``eval_every`` updates
    ``eval_points_per_hand``, ``eval_points_ci`` (its 95% interval over deals) and
    ``eval_win_rate``: the policy (argmax) in the duplicate-deal arena against
    three ``eval_opponent`` seats (:func:`majiang_env.training.ppo.evaluate`, at least
    ``eval_hands`` of its hands, the same deals every time: ``seed=EVAL_SEED``;
    the time it takes is not counted in ``seconds``). ``log(record)`` is called
    after each update (``"print"``: one line each; None: quiet).
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


def _imitate(net, teacher, seconds, chunks, num_envs, steps, minibatch, lr, seed, rules, log, epochs):
    torch.manual_seed(seed)
    opt = torch.optim.Adam([p for name, p in net.named_parameters() if not name.startswith("v.")], lr=lr)
    demos = _Demonstrations(teacher, num_envs, steps, seed, rules)
    history, spent, n = [], 0.0, 0
    while (seconds is None or spent < seconds) and (chunks is None or len(history) < chunks):
        t0 = time.perf_counter()
        X, L, A = demos.collect()
        N = len(A)
        net.train()
        loss_sum = hit = 0.0
        for e in range(epochs):
            perm = torch.randperm(N)
            for i in range(0, N, minibatch):
                idx = perm[i:i + minibatch]
                logits, _ = net(X[idx], L[idx])
                loss = nn.functional.cross_entropy(logits, A[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                if e == 0:   # measured on data not trained on yet
                    loss_sum += loss.item() * len(idx)
                    hit += (logits.argmax(1) == A[idx]).sum().item()
        n += N
        spent += time.perf_counter() - t0
        rec = {"decisions": n, "seconds": round(spent, 2), "loss": loss_sum / N, "accuracy": hit / N}
        history.append(rec)
        if log == "print" and len(history) % 20 == 0:
            print("imitate " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                        for k, v in rec.items()))
        elif callable(log):
            log(rec)
    net.eval()
    return history
