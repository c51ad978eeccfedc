"""AEC-loop throughput of majiang_env.env() next to PettingZoo's connect_four_v3.

The usual ``agent_iter()`` / ``last()`` / masked-random-action loop through the
wrapped environments (``env()``, PettingZoo's classic wrappers or equivalent),
N games each, in the same run, with the same loop and random-legal policy. Prints decisions/s
(steps with a live agent) and the ratio.

    python benchmarks/bench_aec.py [--games 20] [--c4-games 2000] [--seed 0]
"""
import argparse
import time

import numpy as np


def run(make_env, games, seed):
    e = make_env()
    rng = np.random.default_rng(seed)
    decisions = 0
    t0 = time.perf_counter()
    for i in range(games):
        e.reset(seed=seed + i)
        for agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(legal.size)]))
            decisions += 1
    dt = time.perf_counter() - t0
    e.close()
    return decisions, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="majiang games (4 hands each)")
    ap.add_argument("--c4-games", type=int, default=2000, help="connect_four_v3 games")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import majiang_env
    try:
        import pygame  # noqa: F401  (connect_four imports it for rendering only)
    except ImportError:
        import sys
        import types
        sys.modules["pygame"] = types.ModuleType("pygame")  # not rendered here
    from pettingzoo.classic import connect_four_v3

    run(majiang_env.env, 1, 10 ** 6)  # warm-up: numba compile / cache load
    rows = []
    for name, fn, n in (("majiang_v1", majiang_env.env, args.games),
                        ("connect_four_v3", connect_four_v3.env, args.c4_games)):
        d, dt = run(fn, n, args.seed)
        rows.append((name, n, d, dt, d / dt))
    print(f"{'env':<16} {'games':>7} {'decisions':>10} {'seconds':>8} {'decisions/s':>12}")
    for name, n, d, dt, rate in rows:
        print(f"{name:<16} {n:>7} {d:>10} {dt:>8.2f} {rate:>12,.0f}")
    print(f"ratio majiang / connect_four: {rows[0][4] / rows[1][4]:.2f}x")


if __name__ == "__main__":
    main()
