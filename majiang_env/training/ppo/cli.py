"""``python -m majiang_env.training.ppo``: train, then measure the policy in the duplicate-deal arena."""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict

import torch

from majiang_env.argtypes import agent_spec
from majiang_env.engine.registry import agent_names

from .config import PPOConfig
from .evaluation import evaluate
from .network import PolicyNet, PPOAgent, save
from .update import imitate, train

__all__ = ["main"]


def _opponents(text):
    """``--opponents``: ``self`` or an agent spec the registry resolves (argparse's error otherwise)."""
    return text if text == "self" else agent_spec(text)


def _ci(r, key="points_ci"):
    ci = r[key]
    return "[n/a]" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m majiang_env.training.ppo",
                                 description="Masked PPO for 馬将, by self-play or against in-kernel opponents "
                                             "(optionally after cloning GreedyAgent), then the policy against "
                                             "three random and three greedy seats in the duplicate-deal arena.")
    ap.add_argument("--quick", action="store_true", help="a short smoke run (also MAJIANG_QUICK=1)")
    ap.add_argument("--minutes", type=float, default=8.0, help="training wall time (evaluation excluded)")
    ap.add_argument("--imitate", type=float, default=0.0, metavar="MINUTES",
                    help="first clone GreedyAgent for this long (part of --minutes; default 0: pure self-play)")
    ap.add_argument("--opponents", default="self", type=_opponents, metavar="AGENT",
                    help="self (self-play, the default), or the learner in one seat against three agents: "
                         f"any agent spec ({', '.join(agent_names())}, 'search:samples=4', a weights file)")
    ap.add_argument("--critic", default="observation", choices=["observation", "state"],
                    help="the value's input: the policy's observation (default), or the full-information "
                         "state (a privileged critic, in training only)")
    ap.add_argument("--eval-hands", type=int, default=2000,
                    help="the policy's hands in each final arena run (rounded up to whole deals of 4 rotations)")
    ap.add_argument("--eval-every", type=int, default=5, help="learning-curve check every N updates")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="checkpoint path (.pt)")
    ap.add_argument("--json", default=None, help="write results and the learning curve as JSON here")
    args = ap.parse_args(argv)
    if not 0 <= args.imitate < args.minutes:
        ap.error("--imitate must be at least 0 and less than --minutes")
    quick = args.quick or os.environ.get("MAJIANG_QUICK") == "1"
    cfg = PPOConfig(seed=args.seed, opponents=args.opponents, critic=args.critic)
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
        before = evaluate(net, "random", hands=100 if quick else 400, seed=9_999, baseline=False)
        print(f"imitation: {bc[-1]['decisions']:,} decisions in {bc[-1]['seconds']:.0f} s, accuracy "
              f"{bc[-1]['accuracy']:.1%}; quick check vs 3 random seats: {before['points_per_hand']:+.2f} "
              f"points/hand {_ci(before)}, wins {before['win_rate']:.2%}")
    eval_opponent = "random" if args.opponents == "self" else args.opponents
    net, hist = train(cfg, seconds=max(seconds, 1.0), eval_every=args.eval_every,
                      eval_hands=100 if quick else 400, net=net, eval_opponent=eval_opponent)
    if args.out:
        save(net, args.out, cfg)
    me = PPOAgent(net)
    out = {"train_seconds": hist[-1]["seconds"] + (bc[-1]["seconds"] if bc else 0.0), "updates": len(hist),
           "decisions": hist[-1]["decisions"], "config": asdict(cfg), "history": hist,
           "imitation": bc}
    # the arena: the policy in each seat of every deal, and the baseline agent in the same seats of the same deals
    out["vs_random"] = evaluate(me, "random", hands=eval_hands, seed=1)
    out["vs_greedy"] = evaluate(me, "greedy", hands=eval_hands, seed=2)
    for k in ("vs_random", "vs_greedy"):
        print(k, out[k])
    r, g = out["vs_random"], out["vs_greedy"]
    base = r["baseline_win_rate"]
    out["ratio_vs_random"] = r["win_rate"] / base if base else None
    print(f"trained {out['train_seconds']:.0f} s, {out['decisions']:,} decisions")
    print(f"vs 3 random seats ({r['deals']} deals x 4 rotations, {r['hands']} hands): "
          f"{r['points_per_hand']:+.2f} points/hand {_ci(r)}; wins {r['win_rate']:.2%}"
          + (f" = {out['ratio_vs_random']:.1f}x" if base else "")
          + f" a random agent's {base:.2%} in the same seats")
    print(f"vs 3 greedy seats ({g['deals']} deals x 4 rotations, {g['hands']} hands): "
          f"{g['points_per_hand']:+.2f} points/hand {_ci(g)}; wins {g['win_rate']:.2%}, "
          f"a greedy agent in the same seats {g['baseline_win_rate']:.2%}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return out
