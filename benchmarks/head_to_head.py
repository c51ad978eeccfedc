"""A trained policy against the shipped one, on the same fresh duplicate deals.

    python benchmarks/head_to_head.py runs/privileged/pretrained.npz --name "privileged critic" --deals 4000
    python benchmarks/head_to_head.py runs/scratch/pretrained.npz --name "from scratch" --write-results

Three ``majiang_env.arena`` runs over the same deals (``--seed``; default 3000,
deals no training run evaluated on), every deal in the 4 rotations of its lineup:

* ``<name> vs 3 greedy``: the policy in one seat, three in-kernel greedy seats;
* ``shipped vs 3 greedy``: the shipped policy (``majiang_env.agents.pretrained``)
  in the same seats of the same deals;
* ``<name> vs shipped``: the two policies in alternating seats (new, shipped,
  new, shipped); points are zero-sum between them, so the new policy's points
  per hand are its margin over the shipped one.

Each figure is points per hand with a 95% interval over deals (Student t). The
first two also give the paired difference (new minus shipped, deal by deal).
``--write-results [PATH]`` adds the rows to ``benchmarks/results/head_to_head.json``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import results_io  # noqa: E402

from majiang_env import arena  # noqa: E402
from majiang_env.agents.pretrained import DEFAULT_WEIGHTS, PretrainedAgent  # noqa: E402
from majiang_env.arena import mean_ci  # noqa: E402
from majiang_env.argtypes import existing_file, int_in, text  # noqa: E402


def _policy_points(res, name):
    """Per-deal mean points per hand of agent ``name`` (the arena's own per-deal means)."""
    a = res.names.index(name)
    return res._per_deal(a, res.points, res.wins, res.deal_ins)[0]


def compare(path, name, deals, seed, shipped=DEFAULT_WEIGHTS):
    new, old = PretrainedAgent(path=path), PretrainedAgent(path=shipped)
    rows, per_deal = [], {}
    for label, me in ((name, new), ("shipped", old)):
        t = time.perf_counter()
        res = arena.run([me, "greedy", "greedy", "greedy"], deals, seed=seed, baseline=False,
                        names=[label, "greedy", "greedy", "greedy"], reference="greedy")
        per_deal[label] = _policy_points(res, label)
        rows.append({"row": f"{label} vs 3 greedy", "deals": deals, "seed": seed,
                     "points_per_hand": _short(mean_ci(per_deal[label])), "seconds": round(time.perf_counter() - t, 1)})
    rows[0]["minus_shipped"] = _short(mean_ci(per_deal[name] - per_deal["shipped"]))
    t = time.perf_counter()
    res = arena.run([new, old, new, old], deals, seed=seed, baseline=False, names=[name, "shipped", name, "shipped"],
                    reference="shipped")
    rows.append({"row": f"{name} vs shipped", "deals": deals, "seed": seed,
                 "points_per_hand": _short(mean_ci(_policy_points(res, name))),
                 "seconds": round(time.perf_counter() - t, 1)})
    return rows


def _short(x):
    return {"mean": float(x["mean"]), "ci": [float(c) for c in x["ci"]]}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python benchmarks/head_to_head.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("policy", type=existing_file, help="an .npz policy (majiang_env.training.ppo.export_numpy)")
    ap.add_argument("--name", type=text(40, refused=("shipped", "greedy")), default="new",
                    help="its name in the table (not 'shipped' or 'greedy')")
    ap.add_argument("--deals", type=int_in(2, 10 ** 7), default=4000,
                    help="deals (x 4 rotations); at least 2, for an interval over deals")
    ap.add_argument("--seed", type=int_in(0, 2 ** 63 - 1), default=3000)
    results_io.add_argument(ap, "head_to_head")
    args = ap.parse_args(argv)
    if args.write_results:
        parent = os.path.dirname(os.path.abspath(args.write_results))
        if os.path.isdir(args.write_results) or not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            ap.error(f"argument --write-results: cannot write {args.write_results!r}")
    try:                     # the weights are checked entirely at load: before any deal is played
        PretrainedAgent(path=args.policy)
    except ValueError as e:
        ap.error(f"argument policy: {e}")
    rows = compare(args.policy, args.name, args.deals, args.seed)
    for r in rows:
        p = r["points_per_hand"]
        extra = ""
        if "minus_shipped" in r:
            d = r["minus_shipped"]
            extra = f"; minus shipped, deal by deal: {d['mean']:+.2f} [{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]"
        print(f"{r['row']:40s} {p['mean']:+.2f} [{p['ci'][0]:+.2f}, {p['ci'][1]:+.2f}] points/hand over "
              f"{r['deals']:,} deals x 4 ({r['seconds']:.0f} s){extra}")
    if args.write_results:
        run = results_io.run_record(results_io.command_line(argv, __file__), rows, variant=args.name)
        for r in rows:
            r["variant"] = args.name
        results_io.report(results_io.write(args.write_results, run))
    return rows


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
