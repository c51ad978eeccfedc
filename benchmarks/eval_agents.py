"""Evaluation of the baseline agents (issue 5): greedy vs three random seats, with
greedy rotated through all 4 seats, and four greedy seats, inside the compiled
self-play loop; then a smaller run of the Python agents through the AEC env
(the seat-rotation evaluation of ``agents.evaluation``, shared with ``agents.ppo.evaluate``).

    python benchmarks/eval_agents.py [--games 1000] [--aec-games 25] [--seed 0]

``--games`` is per table (each game is 4 hands). Prints a table: wins per seat
(G marks the greedy seats), mean points per hand per seat, mean hand length
(decisions asked of agents, forced ones excluded), decisions/s (wall clock,
engine and agents together) and CPU microseconds per decision (all threads;
steadier than wall clock on a shared machine). Acceptance:
the greedy seat wins >= 10x as many hands as the best random seat and has
positive mean points; the script exits 1 otherwise.
"""
import argparse
import sys
import time

import numpy as np

import majiang_env
from agents import GreedyAgent
from agents.evaluation import play_rotation
from majiang_env import selfplay


def _row(label, seats, wins, points, hands, s, cpu):
    w = " ".join(f"{int(x):>6}{'G' if q == 'greedy' else ' '}" for x, q in zip(wins, seats))
    p = " ".join(f"{x:>+8.2f}" for x in points)
    d = s["decisions"]
    print(f"{label:<26} {hands:>6} {w}  {p}  {d / max(1, hands):>7.1f} {d / s['seconds']:>11,.0f} "
          f"{cpu / max(1, d) * 1e6:>9.2f}")


def _selfplay(games, agents, seed, num_envs):
    c = time.process_time()
    s = selfplay(games, agents=agents, seed=seed, num_envs=num_envs)
    return s, time.process_time() - c


def _header():
    print(f"{'table':<26} {'hands':>6} {'wins seat 0..3':>27}  {'points/hand seat 0..3':>35}  "
          f"{'dec/hand':>7} {'dec/s':>11} {'CPU us/dec':>9}")


def kernel_tables(games, seed, num_envs):
    selfplay(4, agents=("greedy",) * 4, num_envs=2)  # compile / load outside the timing
    _header()
    role_wins = np.zeros(4, np.int64)    # greedy, then random at seat offset +1, +2, +3
    role_points = np.zeros(4)
    role_hands = 0
    worst_ratio = np.inf
    for g in range(4):
        seats = tuple("greedy" if q == g else "random" for q in range(4))
        s, cpu = _selfplay(games, seats, seed + g, num_envs)
        hands = s["hands"]
        pts = np.array(s["mean_points"]) * s["games"] / hands
        _row(f"greedy seat {g} + 3 random", seats, s["wins"], pts, hands, s, cpu)
        order = [(g + d) % 4 for d in range(4)]
        role_wins += np.array(s["wins"])[order]
        role_points += pts[order] * hands
        role_hands += hands
        best_random = max(s["wins"][q] for q in range(4) if q != g)
        worst_ratio = min(worst_ratio, s["wins"][g] / max(1, best_random))
    seats4 = ("greedy",) * 4
    s, cpu = _selfplay(games, seats4, seed + 4, num_envs)
    pts4 = np.array(s["mean_points"]) * s["games"] / s["hands"]
    _row("4 greedy", seats4, s["wins"], pts4, s["hands"], s, cpu)
    s, cpu = _selfplay(games, ("random",) * 4, seed + 5, num_envs)
    ptsr = np.array(s["mean_points"]) * s["games"] / s["hands"]
    _row("4 random (reference)", ("random",) * 4, s["wins"], ptsr, s["hands"], s, cpu)
    print()
    print(f"rotated greedy vs 3 random, {role_hands} hands, by seat relative to greedy:")
    labels = ("greedy", "random +1 (next)", "random +2", "random +3 (previous)")
    for lab, wv, pv in zip(labels, role_wins, role_points / role_hands):
        print(f"  {lab:<22} wins {wv:>6} ({wv / role_hands:6.1%} of hands)   points/hand {pv:+8.2f}")
    ratio = role_wins[0] / max(1, role_wins[1:].max())
    return ratio, worst_ratio, role_points[0] / role_hands


def aec_seeds(seed):
    """This script's seeds for AEC game gi: ``env.reset(seed=seed * 100_003 + gi)``,
    ``GreedyAgent(gi)`` and ``RandomAgent(gi * 4 + seat)`` (for :func:`play_rotation`)."""
    def seeds(gi):
        return seed * 100_003 + gi, [gi if p == gi % 4 else gi * 4 + p for p in range(4)]
    return seeds


def aec_run(games, seed):
    """Python agents through the wrapped AEC env: greedy rotated through the seats
    (:func:`agents.evaluation.play_rotation`, the evaluation ``agents.ppo.evaluate``
    uses, with ``driver="aec"``). Prints a summary; returns play_rotation's dict."""
    warm = majiang_env.env()
    warm.reset(seed=0)
    GreedyAgent(0)(warm.last()[0])  # compile / load outside the timing
    r = play_rotation("greedy", "random", games=games, seeds=aec_seeds(seed), driver="aec")
    hands, decisions = r["hands"], r["decisions"]
    print(f"AEC env, Python agents, greedy rotated through the seats: {games} games, {hands} hands, "
          f"{decisions / hands:.1f} decisions/hand, AEC loop {decisions / r['seconds']:,.0f} decisions/s")
    print(f"  greedy: wins {r['wins']} ({r['win_rate']:.1%} of hands), points/hand {r['points_per_hand']:+.2f}, "
          f"GreedyAgent {r['policy_calls'] / max(r['policy_seconds'], 1e-9):,.0f} calls/s")
    print(f"  random (3 seats): wins {r['opponent_wins']} ({r['opponent_win_rate']:.1%} of hands per seat), "
          f"points/hand per seat {r['opponent_points_per_hand']:+.2f}, "
          f"RandomAgent {r['opponent_calls'] / max(r['opponent_seconds'], 1e-9):,.0f} calls/s")
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1000, help="games per in-kernel table (4 hands each)")
    ap.add_argument("--aec-games", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-envs", type=int, default=1024)
    args = ap.parse_args(argv)
    ratio, worst, gpts = kernel_tables(args.games, args.seed, args.num_envs)
    print()
    aec_run(args.aec_games, args.seed)
    ok = ratio >= 10 and worst >= 10 and gpts > 0
    print()
    print(f"acceptance (greedy wins >= 10x the best random seat, positive points): ratio {ratio:.1f}x "
          f"(worst single table {worst:.1f}x), greedy points/hand {gpts:+.2f} -> {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
