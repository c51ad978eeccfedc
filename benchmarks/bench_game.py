"""Decisions/s of a Python loop driving ``Game`` with uniformly random legal actions. Prints a table.

    python benchmarks/bench_game.py [--games N] [--write-results [PATH]]

``--write-results`` writes the run to ``benchmarks/results/game.json`` (rendered into
docs/performance.md by ``benchmarks/render_docs.py``). Compile times are measured by
``benchmarks/bench_cold.py``.
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402


def loop(games: int, seed: int = 0):
    from majiang_env import Game
    rng = random.Random(seed)
    n = 0
    t = time.perf_counter()
    for i in range(games):
        g = Game(seed=seed + i)
        while not g.done:
            g.step(rng.choice(g.legal_actions()))
            n += 1
    return n, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    results_io.add_argument(ap, "game")
    args = ap.parse_args(argv)
    loop(2)     # compile / load the kernel first
    n, dt = loop(args.games)
    print(f"{'measure':<40}{'value':>14}")
    print(f"{'Game loop, random legal (decisions/s)':<40}{n / dt:>14,.0f}")
    print(f"{'decisions per game':<40}{n / args.games:>14,.1f}")
    if args.write_results:
        row = {"row": "game", "decisions_per_s": n / dt, "decisions_per_game": n / args.games}
        run = results_io.run_record(results_io.command_line(argv, __file__), [row], games=args.games)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
