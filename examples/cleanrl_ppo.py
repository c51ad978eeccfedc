"""PPO on ``SeatVectorEnv`` in one file, in the style of CleanRL's ``ppo.py``.

    python examples/cleanrl_ppo.py                                   # 700,000 learner decisions, seed 0 (~5 min)
    python examples/cleanrl_ppo.py --total-timesteps 2000000 --random-fraction 0.3 --num-envs 128
    python examples/cleanrl_ppo.py --total-seconds 300               # a wall-clock budget instead

One network plays the learning seat of ``--num-envs`` games of
``majiang_env.SeatVectorEnv`` (its seat drawn per game); the three other seats
are played inside the compiled kernel, first by ``"random"`` agents (the first
``--random-fraction`` of the budget), then by ``"greedy"`` agents (the rest).
The budget is ``--total-timesteps`` learner decisions (default 700,000, rounded
up to whole env steps of ``--num-envs`` games: 700,032 with 64; the last rollout
of a phase is cut short to end it there), the same work whatever the machine's
load: about 5 minutes of training on a 2-core machine shared with other jobs
(5.5 minutes in all with the compile cache warm and the arena).
``--total-seconds`` budgets training wall time instead, which depends on the
machine and its load. Either clock starts after the compile: a warm-up reset
and steps of an env per opponent kind compile the numba kernels (or load them
from numba's cache) first, and the compile seconds are printed and written
apart (``compile_seconds``).

- Network: an MLP actor-critic (``--hidden 256 256``, tanh) over the
  observation: ``--obs-type float`` (default), the compact view normalised for
  a network (one-hot codes, counts / 4, flag bits, the legal mask; every value
  in [-1, 1]); ``features``: float32 with the greedy policy's per-action block,
  several times the env's cost per step; ``compact``: int16, scaled by 1/32
  here (raw codes, which an MLP reads poorly). docs/observation.md. Illegal
  actions get a logit of -1e8 before the softmax (``env.action_masks()``), so
  they are never sampled and carry no gradient.
- PPO: GAE, clipped surrogate and clipped value loss, advantage normalisation,
  entropy bonus, gradient clipping, optional linear learning-rate annealing
  over the budget, optional early stop on ``--target-kl``.
- Reward: the learner's points in the hands that closed during the step, times
  ``--reward-scale`` (0.01 by default: a hand moves tens of points, which would
  dominate the value loss unscaled). Returns are printed and written in points
  per game (the scale undone). An episode is one game (4 hands by default).
- Autoreset: the env's ``metadata["autoreset_mode"]`` is read. Under
  ``SAME_STEP`` (``SeatVectorEnv``) the observation returned with ``done`` is
  already the next game's first one, so ``done`` cuts the bootstrap and nothing
  else changes; under ``NEXT_STEP`` the step after a ``done`` only resets its
  slot, and that transition is left out of the loss. A truncated game (this env
  never truncates) is bootstrapped from ``info["final_obs"]``.
- Threads: torch gets ``--torch-threads`` (default: half the CPUs this process
  may use, 1 on a 2-core machine: the batches here are small, and a second
  OpenMP thread waits more than it works when the machine is shared), the
  env's numba kernels ``--env-threads`` (default 1). numba's OpenMP layer and
  torch share OpenMP's thread count, and the env sets it around each kernel
  call, so torch's count is set again after every step.

Every ``--log-every`` updates a line shows the phase, env steps, steps/s, the
mean return per game over the last ``--window`` games of the phase and the
losses. At the end the policy (argmax over its legal actions) plays the
duplicate-deal arena (``majiang_env.arena.run``, ``--arena-deals`` deals x 4
rotations) in one seat against three greedy seats, then three random seats
(``--arena-opponents``); the arena's figure is mean points per hand with a 95%
interval over deals.

Writes to ``--out-dir`` (default ``runs/cleanrl_ppo``): ``curve.json`` (the
settings and budget, the compile seconds, one curve point per update: env
steps, wall seconds of training, mean return per game over the window,
opponent phase, losses; a summary per phase; the arena figures; the machine's
load average) and ``curve.png`` (the return per game over env steps, one panel
per phase; needs matplotlib; skipped with a message without it).
``--replot CURVE_JSON PNG`` only redraws a written ``curve.json``
(docs/cleanrl_curve.png is drawn so from docs/cleanrl_curve.json).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from gymnasium.vector import AutoresetMode

from majiang_env import SeatVectorEnv, arena
from majiang_env.engine.encodings import make_encoder

MASKED_LOGIT = -1e8
COMPACT_SCALE = 1.0 / 32.0   # compact observations are small integers (counts, ids, scores / 100)
DEFAULT_TIMESTEPS = 700_000  # the default budget, in learner decisions


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--exp-name", default=os.path.basename(__file__)[: -len(".py")])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-deterministic", type=int, default=1, help="torch.backends.cudnn.deterministic")
    p.add_argument("--torch-threads", type=int, default=None, help="default: usable CPUs, at most 2")
    p.add_argument("--env-threads", type=int, default=1, help="numba threads of the env's kernels")
    p.add_argument("--out-dir", default="runs/cleanrl_ppo")
    # budget and phases
    p.add_argument("--total-timesteps", type=int, default=None,
                   help=f"learner decisions to train on, rounded up to whole env steps of --num-envs games "
                        f"(default: {DEFAULT_TIMESTEPS} unless --total-seconds is given)")
    p.add_argument("--total-seconds", type=float, default=None,
                   help="a wall-clock budget instead: training seconds, counted from after the compile "
                        "(arena excluded); depends on the machine and its load")
    p.add_argument("--random-fraction", type=float, default=0.5,
                   help="share of the budget against random opponents; the rest is against greedy")
    # environment
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--obs-type", choices=["float", "features", "compact"], default="float")
    p.add_argument("--reward-scale", type=float, default=0.01, help="reward = points x this")
    p.add_argument("--hands-per-game", type=int, default=None, help="RuleConfig override (default: the rules')")
    # PPO
    p.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--learning-rate", type=float, default=3e-4)
    p.add_argument("--anneal-lr", type=int, default=0, help="1: decay the learning rate linearly over the budget")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--norm-adv", type=int, default=1)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--clip-vloss", type=int, default=1)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--target-kl", type=float, default=None)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    # logging and evaluation
    p.add_argument("--window", type=int, default=200, help="finished games in the curve's running mean")
    p.add_argument("--log-every", type=int, default=1, help="print every N updates")
    p.add_argument("--arena-deals", type=int, default=500, help="0: no arena")
    p.add_argument("--arena-opponents", nargs="+", choices=["greedy", "random"], default=["greedy", "random"])
    p.add_argument("--arena-seed", type=int, default=1_000_003, help="deals unseen in training")
    p.add_argument("--replot", nargs=2, metavar=("CURVE_JSON", "PNG"),
                   help="only redraw a written curve.json as a PNG, then exit (no training)")
    args = p.parse_args(argv)
    if args.total_seconds is not None and args.total_timesteps is not None:
        p.error("give one budget: --total-timesteps or --total-seconds")
    if args.total_seconds is None and args.total_timesteps is None:
        args.total_timesteps = DEFAULT_TIMESTEPS
    if (args.total_seconds is not None and args.total_seconds <= 0) or \
            (args.total_timesteps is not None and args.total_timesteps <= 0):
        p.error("the budget must be positive")
    if not 0.0 <= args.random_fraction <= 1.0:
        p.error("--random-fraction must be in [0, 1]")
    args.batch_size = args.num_envs * args.num_steps
    if args.batch_size % args.num_minibatches:
        p.error("--num-envs x --num-steps must be a multiple of --num-minibatches")
    args.minibatch_size = args.batch_size // args.num_minibatches
    if args.torch_threads is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        args.torch_threads = max(1, min(4, cpus // 2))
    return args


SQRT2 = math.sqrt(2)


def layer_init(layer, std=SQRT2, bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs; the actor's logits are masked to the legal actions."""

    def __init__(self, obs_size, num_actions, hidden, obs_scale=1.0):
        super().__init__()
        self.obs_scale = obs_scale

        def mlp(out_size, out_std):
            layers, n = [], obs_size
            for h in hidden:
                layers += [layer_init(nn.Linear(n, h)), nn.Tanh()]
                n = h
            return nn.Sequential(*layers, layer_init(nn.Linear(n, out_size), std=out_std))

        self.critic = mlp(1, 1.0)
        self.actor = mlp(num_actions, 0.01)

    def _x(self, obs):
        return obs.float() * self.obs_scale

    def get_value(self, obs):
        return self.critic(self._x(obs)).squeeze(-1)

    def masked_logits(self, obs, mask):
        return self.actor(self._x(obs)).masked_fill(~mask, MASKED_LOGIT)

    def get_action_and_value(self, obs, mask, action=None):
        x = self._x(obs)
        dist = torch.distributions.Categorical(logits=self.actor(x).masked_fill(~mask, MASKED_LOGIT))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x).squeeze(-1)


def make_env(args, opponents):
    rules = {} if args.hands_per_game is None else {"hands_per_game": args.hands_per_game}
    return SeatVectorEnv(args.num_envs, opponents=opponents, seat="random", obs_type=args.obs_type,
                         reward_scale=args.reward_scale, num_threads=args.env_threads, **rules)


def warm_up(args, opponents):
    """Compile the env's numba kernels (or load them from numba's cache) before any clock
    starts: an env per opponent kind of the run, reset and stepped a few times on legal
    actions, then closed. Returns the seconds it took."""
    t = time.perf_counter()
    for opp in dict.fromkeys(opponents):
        envs = make_env(args, opp)
        envs.reset(seed=args.seed)
        for _ in range(4):
            envs.step(envs.action_masks().argmax(axis=1))
        envs.close()
    return time.perf_counter() - t


def compute_gae(rewards, values, dones, next_value, next_done, gamma, lam):
    """Advantages and returns of a rollout (T, B). ``dones[t]``: the env signalled the
    end of a game on the step before observation t (SAME_STEP: obs t is a new game's
    first; NEXT_STEP: obs t is the last one and step t only resets), so step t-1
    does not bootstrap through it."""
    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(T)):
        nonterminal = 1.0 - (next_done if t == T - 1 else dones[t + 1])
        nv = next_value if t == T - 1 else values[t + 1]
        delta = rewards[t] + gamma * nv * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + values


def arena_policy(agent, obs_type, rules, threads):
    """A batched arena agent: the argmax of ``agent``'s masked logits (compact obs in,
    encoded as the agent was trained on them)."""
    encoder = make_encoder(obs_type, rules)   # None for compact

    def act(obs, mask):
        torch.set_num_threads(threads)    # the arena's numba calls reset OpenMP's thread count
        x = encoder.batch(obs, mask) if encoder is not None else obs
        with torch.no_grad():
            logits = agent.masked_logits(torch.as_tensor(x), torch.as_tensor(mask != 0))
        return logits.argmax(dim=1).numpy()

    return arena.Batched(act, name="ppo")


def run_arena(agent, args, opponent):
    rules = {} if args.hands_per_game is None else {"hands_per_game": args.hands_per_game}
    res = arena.run([arena_policy(agent, args.obs_type, rules, args.torch_threads), opponent, opponent, opponent],
                    deals=args.arena_deals, seed=args.arena_seed, rules=rules,
                    names=["ppo", opponent, opponent, opponent], baseline=False)
    f = next(f for f in res.figures() if f["agent"] == "ppo")
    return {"opponents": opponent, "deals": res.deals, "games": res.games, "seconds": res.seconds,
            "points_per_hand": f["points_per_hand"], "win_rate": f["win_rate"], "deal_in_rate": f["deal_in_rate"],
            "table": res.table()}


def plot(curve, window, arena_figs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        print("matplotlib is not installed: no PNG (pip install matplotlib)")
        return None
    phases = [ph for ph in ("random", "greedy") if any(c["phase"] == ph for c in curve)]
    fig, axes = plt.subplots(1, max(1, len(phases)), figsize=(4 * max(1, len(phases)), 4), dpi=100, squeeze=False)
    for ax, phase in zip(axes[0], phases, strict=False):   # one panel per phase: returns differ by hundreds
        pts = [c for c in curve if c["phase"] == phase and c["mean_return"] is not None]
        ax.plot([c["env_steps"] for c in pts], [c["mean_return"] for c in pts],
                color="tab:blue" if phase == "random" else "tab:red")
        ax.set_title(f"vs 3 {phase} opponents (mean of the last {window} games)", fontsize=8)
        ax.set_xlabel("env steps (learner decisions)")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x else "0"))
    axes[0, 0].set_ylabel("return per game (points)")
    title = "PPO on SeatVectorEnv"
    for a in arena_figs:
        d = a["points_per_hand"]
        ci = "" if d["ci"] is None else f" [{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]"
        title += f"\narena vs 3 {a['opponents']}: {d['mean']:+.2f}{ci} pts/hand"
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.045 * title.count("\n")))
    fig.savefig(path)
    plt.close(fig)
    return str(path)


def summarize(returns, window):
    r = np.asarray(returns, np.float64)
    if r.size == 0:
        return {"games": 0}
    first, last = r[:window], r[-window:]
    return {"games": int(r.size), "mean": float(r.mean()),
            "first_window": arena.mean_ci(first), "last_window": arena.mean_ci(last)}


def replot(curve_json, png):
    """Draw a written curve.json (this script's, any budget) as ``png``."""
    with open(curve_json) as f:
        res = json.load(f)
    path = plot(res["curve"], res["window"], res["arena"], png)
    if path:
        print(f"wrote {path} from {curve_json}")
    return path


def main(argv=None):
    args = parse_args(argv)
    if args.replot:
        return replot(*args.replot)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = bool(args.torch_deterministic)
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    print(f"torch threads {args.torch_threads}, env threads {args.env_threads}, batch {args.batch_size} "
          f"({args.num_envs} envs x {args.num_steps} steps), obs {args.obs_type}; load average {load_start}")

    T, B = args.num_steps, args.num_envs
    by_time = args.total_seconds is not None
    if by_time:     # seconds of training, counted from after the compile
        budget = args.total_seconds
        phases = [("random", args.random_fraction * budget)] if args.random_fraction > 0 else []
        if args.random_fraction < 1:
            phases.append(("greedy", budget))     # (opponents, the budget used when the phase ends)
        print(f"budget: {budget:g} s of training wall time (the clock starts after the compile)")
    else:           # learner decisions, in whole env steps of B games
        calls = -(-args.total_timesteps // B)
        budget = float(calls * B)
        switch = round(args.random_fraction * calls) * B
        phases = [("random", float(switch))] if switch > 0 else []
        if switch < budget:
            phases.append(("greedy", budget))
        print(f"budget: {args.total_timesteps:,} learner decisions = {calls:,} env steps of {B} games "
              f"({int(budget):,} decisions)" + (f"; greedy opponents from step {switch:,}" if 0 < switch < budget
                                                 else ""))

    compile_seconds = warm_up(args, [name for name, _ in phases])
    print(f"compiled in {compile_seconds:.1f} s (numba kernels compiled or loaded from numba's cache; "
          f"a warm-up reset and steps, before the training clock)")
    envs = make_env(args, phases[0][0])
    mode = envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    next_step = mode == AutoresetMode.NEXT_STEP
    obs_size = envs.single_observation_space.shape[0]
    num_actions = envs.single_action_space.n
    agent = Agent(obs_size, num_actions, args.hidden, COMPACT_SCALE if args.obs_type == "compact" else 1.0)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((T, B, obs_size), dtype=torch.int16 if args.obs_type == "compact" else torch.float32)
    masks = torch.zeros((T, B, num_actions), dtype=torch.bool)
    actions = torch.zeros((T, B), dtype=torch.long)
    logprobs = torch.zeros((T, B))
    rewards = torch.zeros((T, B))
    dones = torch.zeros((T, B))
    values = torch.zeros((T, B))
    valid = torch.ones((T, B), dtype=torch.bool)

    def start(phase_index):
        o, _ = envs.reset(seed=args.seed + 1000 * phase_index)
        return torch.as_tensor(o), torch.as_tensor(envs.action_masks()), torch.zeros(B)

    next_obs, next_mask, next_done = start(0)
    print(f"autoreset {mode.name}")

    phase_i = 0
    phase_returns = {name: [] for name, _ in phases}
    recent = deque(maxlen=args.window)
    ep_return = np.zeros(B)
    curve, phase_switch, phase_switch_step = [], None, None
    global_step, iteration = 0, 0
    t0 = time.perf_counter()

    def used():
        return (time.perf_counter() - t0) if by_time else float(global_step)

    while used() < budget:
        if used() >= phases[phase_i][1] and phase_i + 1 < len(phases):
            envs.close()
            phase_i += 1
            envs = make_env(args, phases[phase_i][0])
            next_obs, next_mask, next_done = start(phase_i)
            ep_return[:] = 0
            recent.clear()
            phase_switch, phase_switch_step = time.perf_counter() - t0, global_step
            print(f"--- phase {phases[phase_i][0]}: opponents {phases[phase_i][0]!r} from "
                  f"{phase_switch:.0f} s, step {global_step}")
        phase = phases[phase_i][0]
        iteration += 1
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - used() / budget)

        # the rollout: T steps, fewer where a step budget's phase ends sooner
        n = T if by_time else min(T, int(phases[phase_i][1] - global_step) // B)
        for step in range(n):
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            valid[step] = next_done == 0 if next_step else True    # NEXT_STEP: this step only resets
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            values[step], actions[step], logprobs[step] = value, action, logprob
            o, r, term, trunc, info = envs.step(action.numpy())
            torch.set_num_threads(args.torch_threads)   # the env's numba threads share OpenMP's count with torch
            global_step += B
            done = term | trunc
            r = np.asarray(r, np.float64)
            if trunc.any():     # bootstrap a cut-off game from its last observation
                rows = np.flatnonzero(trunc & ~term)
                if rows.size and (next_step or "final_obs" in info):
                    last = torch.as_tensor(o[rows] if next_step else np.stack(info["final_obs"][rows]))
                    with torch.no_grad():
                        r[rows] += args.gamma * agent.get_value(last).numpy()
            rewards[step] = torch.as_tensor(r, dtype=torch.float32)
            ep_return += np.asarray(r)
            for i in np.flatnonzero(done):
                g = float(ep_return[i]) / args.reward_scale
                recent.append(g)
                phase_returns[phase].append(g)
                ep_return[i] = 0.0
            next_obs, next_mask = torch.as_tensor(o), torch.as_tensor(envs.action_masks())
            next_done = torch.as_tensor(done, dtype=torch.float32)

        with torch.no_grad():
            next_value = agent.get_value(next_obs)
            advantages, returns = compute_gae(rewards[:n], values[:n], dones[:n], next_value, next_done,
                                              args.gamma, args.gae_lambda)

        b_obs, b_masks = obs[:n].reshape(n * B, obs_size), masks[:n].reshape(n * B, num_actions)
        b_logprobs, b_actions = logprobs[:n].reshape(-1), actions[:n].reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values[:n].reshape(-1)
        b_inds = np.flatnonzero(valid[:n].reshape(-1).numpy())
        mb_size = max(1, b_inds.size // args.num_minibatches)
        clipfracs = []
        for _ in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for s in range(0, b_inds.size, mb_size):
                mb = torch.as_tensor(b_inds[s:s + mb_size])
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_masks[mb], b_actions[mb])
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = b_adv[mb]
                if args.norm_adv and mb_adv.numel() > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                if args.clip_vloss:
                    v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl is not None and approx_kl > args.target_kl:
                break

        y_pred, y_true = b_values[b_inds].numpy(), b_returns[b_inds].numpy()
        var_y = np.var(y_true)
        explained_var = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
        wall = time.perf_counter() - t0
        mean_ret = float(np.mean(recent)) if recent else None
        point = {"wall_seconds": round(wall, 3), "env_steps": global_step, "phase": phase,
                 "mean_return": mean_ret, "games_in_window": len(recent), "games_in_phase": len(phase_returns[phase]),
                 "policy_loss": pg_loss.item(), "value_loss": v_loss.item(), "entropy": entropy_loss.item(),
                 "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)),
                 "explained_variance": explained_var, "learning_rate": optimizer.param_groups[0]["lr"]}
        curve.append(point)
        if iteration % args.log_every == 0:
            shown = "   n/a" if mean_ret is None else f"{mean_ret:+7.1f}"
            print(f"update {iteration:4d} | {phase:6s} | step {global_step:8d} | {wall:6.1f} s | "
                  f"SPS {int(global_step / wall):6d} | return/game {shown} ({len(recent)} games) | "
                  f"pg {point['policy_loss']:+.4f} v {point['value_loss']:.4f} ent {point['entropy']:.3f} "
                  f"kl {point['approx_kl']:.4f} clip {point['clipfrac']:.3f} ev {explained_var:+.2f}", flush=True)
    envs.close()
    train_seconds = time.perf_counter() - t0
    load_end = os.getloadavg()
    sps = global_step / max(train_seconds, 1e-9)
    print(f"trained {global_step:,} steps in {train_seconds:.1f} s ({sps:.0f} steps/s; compile {compile_seconds:.1f} s "
          f"before that); load average {load_end}")
    summary = {name: summarize(rs, args.window) for name, rs in phase_returns.items()}
    for name, s in summary.items():
        if s["games"]:
            print(f"vs {name}: {s['games']} games; return/game first {s['first_window']['n']} "
                  f"{s['first_window']['mean']:+.1f}, last {s['last_window']['n']} {s['last_window']['mean']:+.1f}")

    arena_figs = []
    if args.arena_deals > 0:
        agent.eval()
        for opp in args.arena_opponents:
            a = run_arena(agent, args, opp)
            print(a["table"])
            d = a["points_per_hand"]
            ci = "n/a" if d["ci"] is None else f"[{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]"
            print(f"arena: ppo vs 3 {opp}: {d['mean']:+.2f} points per hand, 95% CI {ci} over {a['deals']} deals")
            arena_figs.append(a)

    result = {"format": "cleanrl_ppo/1", "args": vars(args), "autoreset_mode": mode.name,
              "budget": ({"total_seconds": args.total_seconds} if by_time
                         else {"total_timesteps": args.total_timesteps, "env_steps": int(budget)}),
              "compile_seconds": compile_seconds,
              "train_seconds": train_seconds, "env_steps": global_step, "steps_per_second": sps,
              "updates": iteration, "phase_switch_seconds": phase_switch, "phase_switch_step": phase_switch_step,
              "reward_scale": args.reward_scale,
              "return_unit": "points per game (the learner's score change over one game)",
              "window": args.window, "curve": curve, "phases": summary, "arena": arena_figs,
              "load_average": {"start": load_start, "end": load_end, "after_arena": os.getloadavg()},
              "cpu_count": os.cpu_count()}
    png = plot(curve, args.window, arena_figs, out / "curve.png")
    result["png"] = png
    with open(out / "curve.json", "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out / 'curve.json'}" + (f" and {png}" if png else ""))
    torch.save(agent.state_dict(), out / "agent.pt")
    return result


if __name__ == "__main__":
    main()
