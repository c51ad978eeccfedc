"""The search agent (``kernel/search.py``): time per decision and strength against greedy.

Strength is measured by the arena (``majiang_env.arena.run``): the lineup
(search, greedy, greedy, greedy) on duplicate deals, every deal in the 4
rotations and once with four greedy seats; reported is the search seat's gain
over a greedy player in the same seats of the same deals (points per hand,
95% t interval over deals), its own points per hand and win rate. Time per
searched decision (a decision with more than one legal action) is measured
apart, on one thread, the search in seat 0 against greedy.

    python research/bench_search.py --deals 400 --config default --config samples=8,budget=2000
    python research/bench_search.py --timing-only --config samples=32,budget=none --write-results

Each ``--config`` names the search agent's parameters (``players.AGENT_PARAMS``:
samples, budget (``none`` = no cap), confidence, width (``none`` = every
legal action), opponents (uniform / greedy), search_wins); the ones left out
take their defaults. ``--write-results`` writes research/results/bench_search.json.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "benchmarks")]

import results_io  # noqa: E402

from majiang_env import Game, RuleConfig, arena  # noqa: E402
from majiang_env.agents import parse_agent  # noqa: E402
from majiang_env.engine import tables  # noqa: E402
from majiang_env.engine.kernel import layout as L  # noqa: E402
from majiang_env.engine.kernel.players import (  # noqa: E402
    AGENT_GREEDY,
    AGENT_SEARCH,
    NUM_PARAMS,
    agent_action,
    agent_params,
    new_workspace,
)


def parse_config(text: str) -> dict:
    """``samples=16,budget=8000,confidence=1,search_wins=0`` -> the search agent's options
    (``majiang_env.agents.parse_agent``; budget ``none``: no cap); ``default``: all defaults."""
    spec = parse_agent("search" if text in ("", "default") else f"search:{text}")
    return spec[1]


def strength(opts, deals, seed, rules, threads):
    """The arena's figures of the search agent against three greedy seats (its ``figures()`` dict)."""
    res = arena.run([("search", opts), "greedy", "greedy", "greedy"], deals, seed=seed, rules=rules,
                    names=["search", "greedy", "greedy", "greedy"], reference="greedy", num_threads=threads,
                    progress=True)
    return next(f for f in res.figures() if f["agent"] == "search"), res.seconds


def timing(opts, games, rules, seed=10_000):
    """Per searched decision (more than one legal action): mean, p50, p90, max seconds, count;
    the search seat is 0, the others greedy; one thread."""
    wt, dt = tables.win_table(), tables.deficiency_table()
    r = rules.to_array(True)
    obs, mask, work, rows = new_workspace()
    P = agent_params("search", opts)
    G = np.zeros(NUM_PARAMS)
    times = []
    for gi in range(games):
        g = Game(rules, seed=seed + gi)
        rng = np.array([seed + gi], np.uint64)
        while not g.done:
            row = np.array(g.state)
            if row[L.CUR] == 0 and row[L.NLEGAL] > 1:
                t = time.perf_counter()
                a = agent_action(row, r, wt, AGENT_SEARCH, rng, dt, P, obs, mask, work, rows)
                times.append(time.perf_counter() - t)
            else:
                a = agent_action(row, r, wt, AGENT_GREEDY, rng, dt, G, obs, mask, work, rows)
            g.step(int(a))
    t = np.array(times)
    return float(t.mean()), float(np.median(t)), float(np.percentile(t, 90)), float(t.max()), len(t)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", action="append", help="the search agent's parameters, e.g. samples=16,budget=8000 "
                    "(repeatable; default: the defaults)")
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timing-games", type=int, default=3)
    ap.add_argument("--timing-only", action="store_true")
    results_io.add_argument(ap, "bench_search", results_io.RESEARCH_RESULTS)
    args = ap.parse_args(argv)
    configs = {c: parse_config(c) for c in (args.config or ["default"])}
    rules = RuleConfig()
    timing(next(iter(configs.values())), 1, rules)     # warm the compiled kernels before timing anything
    rows = []
    for text, opts in configs.items():
        tm = timing(opts, args.timing_games, rules)
        row = {"row": text, "params": opts, "ms_per_decision": 1e3 * tm[0], "ms_p50": 1e3 * tm[1],
               "ms_p90": 1e3 * tm[2], "ms_max": 1e3 * tm[3], "timed_decisions": tm[4]}
        if not args.timing_only:
            f, secs = strength(opts, args.deals, args.seed, rules, args.threads)
            g = f["gain"]["points_per_hand"]
            row.update(deals=args.deals, gain={"mean": g["mean"], "ci": g["ci"]},
                       points_per_hand=f["points_per_hand"]["mean"], win_rate=f["win_rate"]["mean"],
                       seconds=round(secs, 1))
        rows.append(row)
    load = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"strength threads: {args.threads}; rules: default RuleConfig()")
    print(f"{'search parameters':>34} {'ms/dec':>7} {'p50':>6} {'p90':>6} {'max':>7} | "
          f"{'deals':>5} {'gain over greedy /hand [95% CI]':>32} {'own /hand':>9} {'win/hand':>8} {'time s':>7}")
    for r in rows:
        s = (f"{r['row']:>34} {r['ms_per_decision']:7.2f} {r['ms_p50']:6.2f} {r['ms_p90']:6.2f} "
             f"{r['ms_max']:7.2f} |")
        if "deals" in r:
            lo, hi = r["gain"]["ci"] or (float("nan"), float("nan"))
            s += (f" {r['deals']:5d} {r['gain']['mean']:+12.2f} [{lo:+.2f}, {hi:+.2f}]  "
                  f"{r['points_per_hand']:+9.2f} {r['win_rate']:8.3f} {r['seconds']:7.0f}")
        print(s)
    if args.write_results:
        run = results_io.run_record(results_io.command_line(argv, __file__), rows, seed=args.seed,
                                    threads=args.threads)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
