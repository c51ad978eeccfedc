"""Train a network policy against GreedyAgent, in one command, with a learning curve.

    python -m majiang_env.training.recipe                       # 60 min on 2 cores, then the final arena run
    python -m majiang_env.training.recipe --minutes 5 --final-deals 300 --out runs/quick
    python -m majiang_env.training.recipe --imitate 0 --shaping 0.3 --out runs/scratch      # from random weights
    python -m majiang_env.training.recipe --imitate 5 --critic state --out runs/clone_state   # privileged critic

Method (cloning, then PPO against the heuristic it must beat):

1. **Clone** the in-kernel greedy policy (:func:`majiang_env.training.ppo.imitate`), unless
   ``--imitate 0``: greedy plays all four seats of
   ``VectorGame(obs_type="features")`` games and the network learns its
   decisions by masked cross-entropy. Labels cost almost nothing (the kernel
   decides them), and the features carry the per-action deficiency block
   greedy decides by, so the network gets close to greedy fast.
2. **PPO against three greedy seats** (:class:`majiang_env.training.ppo.Trainer`,
   ``opponents="greedy"``): the network plays one seat (drawn per game) of a
   ``SeatVectorEnv``; the greedy seats are played inside the kernel and the
   learner's actions are sampled in the kernel. Reward: the learner's points
   per hand, ``point_scale`` scaled; ``--shaping K`` adds potential-based
   shaping with the potential -K x the deficiency of the hand
   (:func:`majiang_env.training.ppo.compute_advantages`; it leaves the best policy
   unchanged). ``--critic state``: the value is a privileged critic that also
   reads every seat's cards (:class:`majiang_env.training.ppo.StateCritic`); the policy reads
   its observation alone. The PPO settings differ after cloning and from random
   weights (:func:`_settings`); ``--lr`` and the like override them.
3. **Learning curve**: every ``--eval-every`` minutes of training, the current
   network (argmax) plays the duplicate-deal arena against three greedy seats
   (``majiang_env.arena``, the same ``--eval-deals`` deals every time, 4
   rotations each): mean points per hand with a 95% interval over deals. The
   checkpoint with the best curve point is kept.
4. **Final evaluation** on fresh deals (another seed, so the choice of the
   checkpoint cannot flatter it): ``--final-deals`` deals x 4 rotations, with
   the all-greedy baseline (``gain``, the duplicate comparison).

Writes to ``--out``: ``curve.json`` (every curve point, the training history,
the final arena result, wall times, machine load), ``curve.png`` (points per
hand against greedy over training time, with the intervals; needs
matplotlib), ``best.pt`` (torch checkpoint) and ``pretrained.npz`` (the policy
for ``majiang_env.agents.pretrained``, runs with numpy only).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from majiang_env import arena

from . import ppo

__all__ = ["arena_vs_greedy", "main", "parser"]


def arena_vs_greedy(net, deals, seed, baseline=False, num_envs=None):
    """The arena result of ``net`` (argmax) in one seat against three in-kernel greedy seats."""
    me = ppo.PPOAgent(net)
    return arena.run([me, "greedy", "greedy", "greedy"], deals=deals, seed=seed,
                     names=["policy", "greedy", "greedy", "greedy"], reference="greedy", baseline=baseline,
                     num_envs=num_envs)


def _points(res):
    """(mean, low, high) points per hand of the policy in an arena result."""
    f = next(f for f in res.figures() if f["agent"] == "policy")["points_per_hand"]
    return f["mean"], f["ci"][0], f["ci"][1]


def _plot(curve, final, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    t = [c["train_minutes"] for c in curve]
    m = np.array([c["points"] for c in curve])
    lo = np.array([c["low"] for c in curve])
    hi = np.array([c["high"] for c in curve])
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    ax.axhline(0, color="grey", lw=1, label="GreedyAgent (0 by symmetry)")
    ax.fill_between(t, lo, hi, alpha=0.25, label="95% CI over deals")
    ax.plot(t, m, marker="o", label="policy vs 3 greedy (arena)")
    if final:   # drawn at the time of the checkpoint it evaluates
        at = next((c["train_minutes"] for c in curve if c["label"] == final["checkpoint"]), t[-1])
        ax.errorbar([at], [final["points"]], yerr=[[final["points"] - final["low"]], [final["high"] - final["points"]]],
                    fmt="s", color="black", capsize=4,
                    label=f"chosen checkpoint ({final['checkpoint']}) on {final['deals']:,} fresh deals")
    ax.set_xlabel("training wall time (minutes, 2 cores)")
    ax.set_ylabel("points per hand")
    ax.set_title("Learned policy against three GreedyAgents")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)


def _method(args):
    start = "clone greedy, then PPO" if args.imitate > 0 else "PPO from random weights"
    critic = ", privileged critic" if args.critic == "state" else ""
    return f"{start} vs 3 greedy{critic} (majiang_env.training.recipe)"


def _settings(args):
    """PPO settings: after cloning, small steps that keep what was cloned; from random
    weights, three times the learning rate (the best of short pilot runs). The
    ``--lr`` ... ``--minibatch`` options override them."""
    s = dict(num_envs=256, rollout=32, epochs=2, minibatch=2048, lr=1e-4 if args.imitate > 0 else 3e-4,
             ent_coef=0.003)
    for k in ("lr", "ent_coef", "num_envs", "epochs", "minibatch"):
        if getattr(args, k) is not None:
            s[k] = getattr(args, k)
    return s


def parser():
    """The command line of ``python -m majiang_env.training.recipe`` (its defaults name a run's settings)."""
    ap = argparse.ArgumentParser(prog="python -m majiang_env.training.recipe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="training wall time, curve evaluations included")
    ap.add_argument("--imitate", type=float, default=8.0, metavar="MINUTES", help="cloning time (part of --minutes)")
    ap.add_argument("--eval-every", type=float, default=6.0, metavar="MINUTES")
    ap.add_argument("--eval-deals", type=int, default=300, help="deals per curve point (x 4 rotations)")
    ap.add_argument("--final-deals", type=int, default=4000, help="fresh deals of the final evaluation (x 4 rotations)")
    ap.add_argument("--critic", default="observation", choices=["observation", "state"],
                    help="the value's input: the policy's observation, or the full state (a privileged critic)")
    ap.add_argument("--shaping", type=float, default=0.0, metavar="K",
                    help="potential-based reward shaping: potential -K x the deficiency of the hand now")
    for name, typ in (("lr", float), ("ent-coef", float), ("num-envs", int), ("epochs", int), ("minibatch", int)):
        ap.add_argument(f"--{name}", type=typ, default=None, help="override the PPO setting (see _settings)")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/strong", help="output folder")
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    if not 0 <= args.imitate < args.minutes or args.eval_every <= 0:
        ap.error("need 0 <= --imitate < --minutes and --eval-every > 0")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    t_start = time.perf_counter()
    budget = args.minutes * 60

    def elapsed():
        return time.perf_counter() - t_start

    torch.manual_seed(args.seed)
    net = ppo.PolicyNet(args.hidden)
    bc = [None]
    if args.imitate > 0:
        bc = ppo.imitate(net, "greedy", seconds=args.imitate * 60, num_envs=256, steps=8, minibatch=512,
                         epochs=2, seed=args.seed + 1, log=None)
        print(f"[{elapsed() / 60:5.1f} min] cloned greedy: {bc[-1]['decisions']:,} decisions, "
              f"agreement {bc[-1]['accuracy']:.1%}", flush=True)
    cfg = ppo.PPOConfig(**_settings(args), opponents="greedy", critic=args.critic, shaping=args.shaping,
                        hidden=args.hidden,
                        seed=args.seed + 2, threads=1, numba_threads=1, precision="fp32")
    trainer = ppo.Trainer(cfg, net)
    curve, best = [], None
    eval_seed = args.seed + 1000

    def curve_point(label):
        nonlocal best
        t = time.perf_counter()
        res = arena_vs_greedy(net, args.eval_deals, eval_seed)
        m, lo, hi = _points(res)
        point = {"label": label, "train_minutes": round(elapsed() / 60, 2), "decisions": trainer.decisions,
                 "points": m, "low": lo, "high": hi, "eval_seconds": round(time.perf_counter() - t, 1),
                 "load1": round(os.getloadavg()[0], 2)}
        curve.append(point)
        if best is None or m > best[0]:
            best = (m, label)
            ppo.save(net, out / "best.pt", cfg, extra={"curve_point": label})
        print(f"[{point['train_minutes']:5.1f} min] {label}: {m:+.2f} points/hand vs greedy "
              f"[{lo:+.2f}, {hi:+.2f}] over {args.eval_deals} deals x 4", flush=True)

    curve_point("cloned" if args.imitate > 0 else "start")
    k = 0
    while budget - elapsed() > 60:   # a stretch shorter than a minute would be mostly its curve point
        k += 1
        stretch = min(args.eval_every * 60, budget - elapsed())
        trainer.run(seconds=max(stretch - 30, 10), log=None)   # leave time for the curve point
        curve_point(f"ppo {k}")
    train_seconds = elapsed()
    chosen = ppo.load(out / "best.pt")
    t = time.perf_counter()
    final_res = arena_vs_greedy(chosen, args.final_deals, args.seed + 2000, baseline=True)
    m, lo, hi = _points(final_res)
    final = {"checkpoint": best[1], "deals": args.final_deals, "rotations": 4, "points": m, "low": lo, "high": hi,
             "seconds": round(time.perf_counter() - t, 1), "arena": final_res.to_dict()}
    print(final_res.table())
    print(f"final ({best[1]}, {args.final_deals} fresh deals x 4 rotations): {m:+.2f} points/hand vs greedy "
          f"[{lo:+.2f}, {hi:+.2f}]; training {train_seconds / 60:.1f} min", flush=True)
    ppo.export_numpy(chosen, out / "pretrained.npz",
                     extra={"method": _method(args),
                            "train_minutes": f"{train_seconds / 60:.1f}", "checkpoint": best[1],
                            "final_points_per_hand": f"{m:+.2f} [{lo:+.2f}, {hi:+.2f}]"})
    report = {"args": vars(args), "train_seconds": round(train_seconds, 1), "imitation": bc[-1],
              "curve": curve, "final": final, "history": trainer.history,
              "machine": {"cpus": os.cpu_count(), "load1_end": round(os.getloadavg()[0], 2)}}
    (out / "curve.json").write_text(json.dumps(report, indent=1))
    png = _plot(curve, final, out / "curve.png")
    print(f"wrote {out / 'curve.json'}" + (f", {png}" if png else " (no matplotlib: no PNG)"))
    return report


if __name__ == "__main__":
    main()
