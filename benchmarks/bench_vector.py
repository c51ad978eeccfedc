"""Throughput of the batched kernel: ``selfplay`` (random agents, whole games in
compiled code) and ``VectorGame.step`` with a numpy masked-random policy outside.

    python benchmarks/bench_vector.py [--sizes 1 64 1024 4096]
"""
import argparse
import resource
import time

import numpy as np

from majiang_env import selfplay
from majiang_env.vector import VectorGame


def masked_random(rng, mask):
    # uniform among legal ids: argmax of random keys on the legal entries
    return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)


def bench_step(B, seconds=3.0):
    vg = VectorGame(B, seed=0)
    obs, mask, player = vg.reset()
    rng = np.random.default_rng(0)
    vg.step(masked_random(rng, mask))
    n, games, t_kernel = 0, 0, 0.0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a = masked_random(rng, mask)
        t = time.perf_counter()
        obs, mask, player, rewards, done = vg.step(a)
        t_kernel += time.perf_counter() - t
        n += B
        games += int(done.sum())
    dt = time.perf_counter() - t0
    return n / dt, games / dt, n / t_kernel, vg.state_bytes_per_game


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    selfplay(8, num_envs=8)  # compile
    print(f"{'B':>6} {'selfplay dec/s':>15} {'selfplay games/s':>17} "
          f"{'step dec/s':>12} {'step games/s':>13} {'step kernel-only dec/s':>23} {'bytes/game':>11}")
    for B in args.sizes:
        games = max(B, int(2000 * min(1.0, B / 64)) or 1)
        s = selfplay(games, seed=1, num_envs=B)
        d, g, k, bpg = bench_step(B, args.seconds)
        print(f"{B:>6} {s['decisions'] / s['seconds']:>15,.0f} {s['games'] / s['seconds']:>17,.1f} "
              f"{d:>12,.0f} {g:>13,.1f} {k:>23,.0f} {bpg:>11,}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
