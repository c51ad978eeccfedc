"""Train a network policy against GreedyAgent, in one command, with a learning curve.

    python -m majiang_env.training.recipe                       # the default budget: 3,000 PPO updates
    python -m majiang_env.training.recipe --updates 60 --imitate-decisions 100000 --eval-every-updates 20 \
        --eval-deals 50 --final-deals 300 --out runs/quick
    python -m majiang_env.training.recipe --imitate-decisions 0 --shaping 0.3 --out runs/scratch   # random weights
    python -m majiang_env.training.recipe --critic state --out runs/clone_state                  # privileged critic
    python -m majiang_env.training.recipe --minutes 5 --final-deals 300 --out runs/five   # a wall-clock budget

**Budget.** By default the run is counted in work, not time, so it does the
same on a busy machine as on an idle one: ``--imitate-decisions`` greedy
decisions cloned (default 2,000,000, in passes of 2,048), then ``--updates``
PPO updates (default 3,000, 8,192 decisions each with the default settings),
a curve point every ``--eval-every-updates`` (default 300). ``--minutes M``
gives a wall-clock budget instead (cloning ``--imitate`` minutes of it,
default 2/15 of M; a curve point every ``--eval-every`` minutes, default M/10);
its clock starts after the kernels are compiled (a short warm-up run first),
so the compile does not eat the budget. ``--imitate 0`` (or
``--imitate-decisions 0``) trains from random weights. Every value is checked
when the command line is parsed, before any work (a usage error, exit
status 2); the output folder is made at the start.

Method (cloning, then PPO against the heuristic it must beat):

1. **Clone** the in-kernel greedy policy (:func:`majiang_env.training.ppo.imitate`), unless
   ``--imitate-decisions 0`` (or ``--imitate 0``); it prints its progress every 30 seconds.
   Greedy plays all four seats of
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
3. **Learning curve**: at every curve point (``--eval-every-updates``, or ``--eval-every`` minutes), the current
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
from majiang_env.agents.pretrained import MAX_HIDDEN
from majiang_env.argtypes import int_in, number_in, output_dir

from . import ppo

CLONE_CHUNK = 256 * 8        # decisions per cloning pass (num_envs x steps)

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
    start = "clone greedy, then PPO" if _cloning(args) else "PPO from random weights"
    critic = ", privileged critic" if args.critic == "state" else ""
    return f"{start} vs 3 greedy{critic} (majiang_env.training.recipe)"


def _settings(args):
    """PPO settings: after cloning, small steps that keep what was cloned; from random
    weights, three times the learning rate (the best of short pilot runs). The
    ``--lr`` ... ``--minibatch`` options override them."""
    s = dict(num_envs=256, rollout=32, epochs=2, minibatch=2048, lr=1e-4 if _cloning(args) else 3e-4,
             ent_coef=0.003)
    for k in ("lr", "ent_coef", "num_envs", "epochs", "minibatch"):
        if getattr(args, k) is not None:
            s[k] = getattr(args, k)
    return s


def parser():
    """The command line of ``python -m majiang_env.training.recipe`` (its defaults name a run's settings)."""
    ap = argparse.ArgumentParser(prog="python -m majiang_env.training.recipe", description=__doc__.split("\n\n")[0])
    minutes = number_in(0, 10 ** 5, lo_open=True)
    ap.add_argument("--updates", type=int_in(1, 10 ** 7), default=3000,
                    help="PPO updates of training (the default budget; ignored with --minutes)")
    ap.add_argument("--imitate-decisions", type=int_in(0, 10 ** 10), default=2_000_000, metavar="DECISIONS",
                    help="greedy decisions to clone first, in passes of 2,048 (0: from random weights)")
    ap.add_argument("--eval-every-updates", type=int_in(1, 10 ** 7), default=300, metavar="UPDATES",
                    help="PPO updates between curve points")
    ap.add_argument("--minutes", type=minutes, default=None,
                    help="a wall-clock budget instead of --updates: training minutes, cloning and curve points "
                         "included; the clock starts after the compile")
    ap.add_argument("--imitate", type=number_in(0, 10 ** 5), default=None, metavar="MINUTES",
                    help="with --minutes: cloning minutes (part of --minutes; default 2/15 of it); 0: no cloning")
    ap.add_argument("--eval-every", type=minutes, default=None, metavar="MINUTES",
                    help="with --minutes: minutes between curve points (default --minutes / 10)")
    deals = int_in(2, 10 ** 7)
    ap.add_argument("--eval-deals", type=deals, default=300, help="deals per curve point (x 4 rotations; at least 2)")
    ap.add_argument("--final-deals", type=deals, default=4000,
                    help="fresh deals of the final evaluation (x 4 rotations; at least 2)")
    ap.add_argument("--critic", default="observation", choices=["observation", "state"],
                    help="the value's input: the policy's observation, or the full state (a privileged critic)")
    ap.add_argument("--shaping", type=number_in(-10 ** 3, 10 ** 3), default=0.0, metavar="K",
                    help="potential-based reward shaping: potential -K x the deficiency of the hand now")
    for name, typ in (("lr", number_in(0, 1, lo_open=True)), ("ent-coef", number_in(0, 10)),
                      ("num-envs", int_in(1, 2 ** 16)), ("epochs", int_in(1, 1000)),
                      ("minibatch", int_in(1, 2 ** 24))):
        ap.add_argument(f"--{name}", type=typ, default=None, help="override the PPO setting (see _settings)")
    ap.add_argument("--hidden", type=int_in(1, MAX_HIDDEN), default=256,
                    help=f"hidden width of the network (1..{MAX_HIDDEN}, what a weights file may hold)")
    ap.add_argument("--seed", type=int_in(0, 2 ** 63 - 1), default=0)
    ap.add_argument("--out", type=output_dir, default="runs/strong", help="output folder")
    return ap


def _check(ap, args):
    """The checks across options, before any work (usage errors)."""
    if args.minutes is None:
        if args.imitate not in (None, 0):
            ap.error("argument --imitate: minutes of cloning need a wall-clock budget (--minutes); "
                     "without it, give --imitate-decisions")
        if args.eval_every is not None:
            ap.error("argument --eval-every: minutes between curve points need --minutes; "
                     "without it, give --eval-every-updates")
    else:
        if args.imitate is None:
            args.imitate = args.minutes * 2 / 15
        if args.eval_every is None:
            args.eval_every = args.minutes / 10
        if not args.imitate < args.minutes:
            ap.error(f"argument --imitate: cloning ({args.imitate:g} min) must leave time of --minutes "
                     f"({args.minutes:g}) to train")
    if args.imitate == 0:
        args.imitate_decisions = 0


def _cloning(args) -> bool:
    """Whether the run clones greedy first (``--imitate`` minutes with ``--minutes``, else
    ``--imitate-decisions``)."""
    if getattr(args, "minutes", None) is not None or not hasattr(args, "imitate_decisions"):
        return (args.imitate or 0) > 0
    return args.imitate_decisions > 0


def _warm_up(args):
    """Compile (or load from the cache) every kernel the run uses, on a throwaway network,
    so that a wall-clock budget counts training, not compiling."""
    scratch = ppo.PolicyNet(args.hidden)
    ppo.imitate(scratch, "greedy", chunks=1, num_envs=8, steps=2, minibatch=16, epochs=1, log=None)
    cfg = ppo.PPOConfig(num_envs=8, rollout=4, epochs=1, minibatch=32, opponents="greedy", critic=args.critic,
                        shaping=args.shaping, hidden=args.hidden, threads=1, numba_threads=1, precision="fp32")
    ppo.Trainer(cfg, scratch).run(updates=1, log=None)
    arena_vs_greedy(scratch, 2, 0)


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    _check(ap, args)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"argument --out: {e}")
    torch.set_num_threads(1)
    timed = args.minutes is not None
    if timed:
        print("warming up (compiling the kernels; not counted in --minutes) ...", flush=True)
        _warm_up(args)
    t_start = time.perf_counter()
    budget = args.minutes * 60 if timed else None

    def elapsed():
        return time.perf_counter() - t_start

    torch.manual_seed(args.seed)
    net = ppo.PolicyNet(args.hidden)
    bc = [None]
    if _cloning(args):
        chunks = None if timed else -(-args.imitate_decisions // CLONE_CHUNK)
        last = [time.perf_counter()]

        def progress(rec):       # a line every 30 seconds of cloning
            if time.perf_counter() - last[0] >= 30:
                last[0] = time.perf_counter()
                of = f" of {chunks * CLONE_CHUNK:,}" if chunks else ""
                print(f"[{elapsed() / 60:5.1f} min] cloning greedy: {rec['decisions']:,}{of} decisions, "
                      f"agreement {rec['accuracy']:.1%}", flush=True)

        print(f"[{elapsed() / 60:5.1f} min] cloning greedy ...", flush=True)
        bc = ppo.imitate(net, "greedy", seconds=args.imitate * 60 if timed else None, chunks=chunks,
                         num_envs=256, steps=8, minibatch=512, epochs=2, seed=args.seed + 1, log=progress)
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
                 "updates": len(trainer.history), "points": m, "low": lo, "high": hi,
                 "eval_seconds": round(time.perf_counter() - t, 1), "load1": round(os.getloadavg()[0], 2)}
        curve.append(point)
        if best is None or m > best[0]:
            best = (m, label)
            ppo.save(net, out / "best.pt", cfg, extra={"curve_point": label})
        print(f"[{point['train_minutes']:5.1f} min] {label}: {m:+.2f} points/hand vs greedy "
              f"[{lo:+.2f}, {hi:+.2f}] over {args.eval_deals} deals x 4 "
              f"({point['updates']:,} updates)", flush=True)

    curve_point("cloned" if _cloning(args) else "start")
    k = 0
    while (budget - elapsed() > 60) if timed else len(trainer.history) < args.updates:
        k += 1
        if timed:      # a stretch shorter than a minute would be mostly its curve point
            stretch = min(args.eval_every * 60, budget - elapsed())
            trainer.run(seconds=max(stretch - 30, 10), log=None)   # leave time for the curve point
        else:
            trainer.run(updates=min(args.eval_every_updates, args.updates - len(trainer.history)), log=None)
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
          f"[{lo:+.2f}, {hi:+.2f}]; training {train_seconds / 60:.1f} min, {len(trainer.history):,} updates",
          flush=True)
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
