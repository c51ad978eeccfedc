"""Throughput of the batched kernel: ``selfplay`` (random agents, whole games in
compiled code) and ``VectorGame.step`` with a numpy masked-random policy outside,
for several batch sizes B, with the memory each needs.

    python benchmarks/bench_vector.py [--sizes 1 64 1024 4096] [--seconds 3] [--threads N]
                                      [--memory-check 65536] [--write-results [PATH]]

Peak MiB is the most memory numpy held at once (tracemalloc, measured apart
from the timings) while a ``VectorGame(B)`` resets and steps and a ``selfplay``
with B slots runs. ``--memory-check B`` builds a ``VectorGame(B)``,
resets and steps it once and prints its size. ``--write-results`` writes the
run to ``benchmarks/results/vector.json`` (rendered into docs/performance.md by
``benchmarks/render_docs.py``).
"""
import argparse
import os
import sys
import time
import tracemalloc

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

from majiang_env import selfplay  # noqa: E402
from majiang_env.engine.vector import VectorGame  # noqa: E402


def masked_random(rng, mask):
    # uniform among legal ids: argmax of random keys on the legal entries
    return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)


def bench_selfplay(B, seconds):
    games, s = B, None
    while True:  # grow the run until it lasts about ``seconds``
        s = selfplay(games, seed=1, num_envs=B)
        if s["seconds"] >= seconds / 2 or games > 10 ** 7:
            return s
        games = int(games * max(2.0, seconds / 2 / max(s["seconds"], 1e-3)))


def bench_step(B, seconds):
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


def peak_mib(B):
    tracemalloc.start()
    selfplay(B, seed=1, num_envs=B)
    vg = VectorGame(B, seed=0)
    obs, mask, player = vg.reset()
    vg.step(masked_random(np.random.default_rng(0), mask))
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    return peak


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    ap.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
    ap.add_argument("--memory-check", type=int, default=65536, metavar="B", help="0: none")
    results_io.add_argument(ap, "vector")
    args = ap.parse_args(argv)
    if args.threads:
        numba.set_num_threads(args.threads)
    selfplay(8, num_envs=8)  # compile / load the cache
    VectorGame(2).reset()
    print(f"{os.cpu_count()} CPUs, {numba.get_num_threads()} numba threads")
    print(f"{'B':>6} {'selfplay dec/s':>15} {'selfplay games/s':>17} {'step dec/s':>12} "
          f"{'step games/s':>13} {'step kernel-only dec/s':>23} {'bytes/game':>11} {'peak MiB':>9}")
    rows = []
    for B in args.sizes:
        s = bench_selfplay(B, args.seconds)
        d, g, k, bpg = bench_step(B, args.seconds)
        peak = peak_mib(B)
        print(f"{B:>6} {s['decisions'] / s['seconds']:>15,.0f} {s['games'] / s['seconds']:>17,.1f} "
              f"{d:>12,.0f} {g:>13,.1f} {k:>23,.0f} {bpg:>11,} {peak:>9,.1f}")
        rows.append({"row": f"B={B}", "B": B, "selfplay": s["decisions"] / s["seconds"], "step": d, "step_kernel": k,
                     "bytes_per_game": bpg, "peak_mib": round(peak, 1)})
    tracemalloc.start()
    if args.memory_check:
        tracemalloc.reset_peak()
        vg = VectorGame(args.memory_check, seed=0)
        obs, mask, player = vg.reset()
        vg.step(masked_random(np.random.default_rng(0), mask))
        peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
        print(f"VectorGame({args.memory_check:,}): {vg.state_bytes_per_game:,} bytes/game, "
              f"{args.memory_check * vg.state_bytes_per_game / 2 ** 30:.2f} GiB of state and outputs, "
              f"peak {peak:,.0f} MiB while stepping with the numpy policy")
        rows.append({"row": f"memory B={args.memory_check}", "B": args.memory_check,
                     "bytes_per_game": vg.state_bytes_per_game, "peak_mib": round(peak)})
    tracemalloc.stop()
    if args.write_results:
        run = results_io.run_record(results_io.command_line(argv, __file__), rows,
                                    numba_threads=numba.get_num_threads(), seconds=args.seconds)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
