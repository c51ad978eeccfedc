"""The search agent (``kernel/search.py``): time per decision and strength against greedy.

Strength is measured on duplicate deals: for every deal (game seed) the game is
played with agents (search, greedy, greedy, greedy) rotated over the 4 seats,
and with four greedy agents; the search seat's points are compared with the
greedy seat's points in the same seat of the same deal. Reported: the mean
difference in points per hand with a 95% t interval computed over deals
(each deal's value is its mean over the 4 rotations and its hands; the
statistics of ``majiang_env.arena``, whose duplicate design this is, run in
``selfplay``'s kernel with one game per slot so that every deal's points come
back), the search seat's own points per hand and win rate, and time per
searched decision (one thread, search in seat 0 against greedy).

    python benchmarks/bench_search.py --deals 400 --config default --config samples=8,budget=2000
    python benchmarks/bench_search.py --timing-only --config samples=32,budget=none

Each ``--config`` names the search agent's parameters (``players.AGENT_PARAMS``:
samples, budget (``none`` = no cap), confidence, width (``none`` = every
legal action), opponents (uniform / greedy), search_wins); the ones left out
take their defaults.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from majiang_env import Game, RuleConfig, tables, vector
from majiang_env.arena import mean_ci
from majiang_env.kernel import batch
from majiang_env.kernel import layout as L
from majiang_env.kernel.players import (AGENT_GREEDY, AGENT_SEARCH, NUM_PARAMS, agent_action, agent_params,
                                        new_workspace)
from majiang_env.threads import numba_threads
from majiang_env.vector import parse_agent


def parse_config(text: str) -> dict:
    """``samples=16,budget=8000,confidence=1,search_wins=0`` -> the search agent's options
    (``vector.parse_agent``; budget ``none``: no cap); ``default``: all defaults."""
    spec = parse_agent("search" if text in ("", "default") else f"search:{text}")
    return {} if isinstance(spec, str) else spec[1]


def play_games(codes, params, first, n, seed, rules, threads):
    """Per-game stats (n, ST_SIZE) of games first..first+n-1, one game per slot."""
    st = np.zeros((n, L.SIZE), np.int32)
    stats = np.zeros((n, batch.ST_SIZE), np.int64)
    with numba_threads(threads):
        vector._play_games(st, rules.to_array(True), tables.win_table(), seed, first, n,
                          np.asarray(codes, np.int32), np.asarray(params, np.float64), stats,
                          tables.deficiency_table())
    return stats


def strength(opts, deals, seed, rules, threads, chunk=16):
    """(per-deal difference per hand, per-deal search points per hand, search wins, hands, seconds)."""
    hands = rules.hands_per_game
    diff = np.zeros(deals)
    own = np.zeros(deals)
    wins = 0
    zero = np.zeros((4, NUM_PARAMS))
    t0 = time.perf_counter()
    for start in range(0, deals, chunk):
        n = min(chunk, deals - start)
        base = play_games((AGENT_GREEDY,) * 4, zero, start, n, seed, rules, threads)
        for s in range(4):
            codes = [AGENT_GREEDY] * 4
            codes[s] = AGENT_SEARCH
            params = zero.copy()
            params[s] = agent_params("search", opts)
            res = play_games(codes, params, start, n, seed, rules, threads)
            pts = res[:, batch.ST_POINTS + s] / hands
            own[start:start + n] += pts / 4
            diff[start:start + n] += (pts - base[:, batch.ST_POINTS + s] / hands) / 4
            wins += int(res[:, batch.ST_WINS + s].sum())
        done = start + n
        m, h = ci(diff[:done])
        print(f"  {done}/{deals} deals: {m:+.2f} +- {h:.2f} points/hand ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    return diff, own, wins, deals * 4 * hands, time.perf_counter() - t0


def ci(x):
    """Mean and half-width of the 95% t interval over deals (``arena.mean_ci``, the arena's statistics)."""
    r = mean_ci(x)
    return r["mean"], (r["half_width"] if r["half_width"] is not None else float("nan"))


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
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    configs = [parse_config(c) for c in (args.config or ["default"])]
    rules = RuleConfig()
    # warm the compiled kernels before timing anything
    timing(configs[0], 1, rules)
    play_games((AGENT_GREEDY,) * 4, np.zeros((4, NUM_PARAMS)), 0, 1, 0, rules, 1)
    results = []
    for opts in configs:
        tm = timing(opts, args.timing_games, rules)
        row = {"params": opts, "ms_per_decision": 1e3 * tm[0], "ms_p50": 1e3 * tm[1], "ms_p90": 1e3 * tm[2],
               "ms_max": 1e3 * tm[3], "timed_decisions": tm[4]}
        if not args.timing_only:
            diff, own, wins, hands, secs = strength(opts, args.deals, args.seed, rules, args.threads)
            m, h = ci(diff)
            row.update(deals=args.deals, hands_per_seat=hands, diff_per_hand=m, ci95=h,
                       search_points_per_hand=float(own.mean()), search_win_rate=wins / hands,
                       seconds=secs)
        results.append(row)
    load = os.getloadavg()
    cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    print(f"\nmachine: {cpu} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"strength threads: {args.threads}; rules: default RuleConfig()")
    print(f"{'search parameters':>34} {'ms/dec':>7} {'p50':>6} {'p90':>6} {'max':>7} | "
          f"{'deals':>5} {'vs greedy /hand':>19} {'own /hand':>9} {'win/hand':>8} {'time s':>7}")
    for r in results:
        p = r["params"]
        name = ",".join(f"{k}={v}" for k, v in p.items()) or "default"
        s = f"{name:>34} {r['ms_per_decision']:7.2f} {r['ms_p50']:6.2f} {r['ms_p90']:6.2f} {r['ms_max']:7.2f} |"
        if "deals" in r:
            s += (f" {r['deals']:5d} {r['diff_per_hand']:+8.2f} +- {r['ci95']:6.2f}  "
                  f"{r['search_points_per_hand']:+9.2f} {r['search_win_rate']:8.3f} {r['seconds']:7.0f}")
        print(s)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cores": cpu, "loadavg": load}, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
