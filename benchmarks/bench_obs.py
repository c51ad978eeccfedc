"""Observation encodings on the trainer fast path: ``SeatVectorEnv`` learner steps/s per ``obs_type``.

    python benchmarks/bench_obs.py [--seconds 3] [--rounds 3] [--sizes 256 1024] [--busy 0 1] [--threads 1]
    python benchmarks/bench_obs.py --busy 0 1 --write-results

Rows:

* ``seat/<opponents>/<obs_type> B=<B>``: ``SeatVectorEnv(B, opponents, seat="random",
  obs_type, num_threads=--threads)`` with the env's default ``copy=True`` (what a
  trainer gets), the learner's action from the numpy masked-random policy of
  ``benchmarks/bench_fastpath.py`` (outside the env); learner steps/s. ``compact``
  is the int16 view, ``float`` its normalised float32 form, ``features`` the
  encoding with the greedy policy's per-action block.
* ``encode/<obs_type>``: the Python encoders alone (``FloatEncoder.batch``,
  ``FeatureEncoder.batch``) on 4,096 recorded learner views (compact rows and
  their masks, from games against greedy seats), rows/s.

Every figure is the best of ``--rounds`` interleaved rounds of ``--seconds``
each. ``--busy N`` runs the whole table again with N background processes that
each spin one core (started and stopped by this script); the load average of
each table is printed with it. ``--threads`` is numba's thread count for the
env's kernels (default 1, as the trainers of ``examples/`` use).

``--write-results [PATH]`` writes the run to ``benchmarks/results/obs.json``
(``benchmarks/results_io.py``), from which ``benchmarks/render_docs.py`` renders
docs/performance.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402
from bench_fastpath import busy, masked_random  # noqa: E402

from majiang_env.engine.encodings import make_encoder  # noqa: E402
from majiang_env.engine.threads import numba_threads  # noqa: E402
from majiang_env.envs.seat_vector import SeatVectorEnv  # noqa: E402

OBS_TYPES = ("compact", "float", "features")
OPPONENTS = ("greedy", "random")


def run_seat(B, opponents, obs_type, threads, seconds):
    env = SeatVectorEnv(B, opponents=opponents, seat="random", obs_type=obs_type, num_threads=threads)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.step(masked_random(rng, env.action_masks()))
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(masked_random(rng, env.action_masks()))
        n += B
    return n / (time.perf_counter() - t0)


def learner_views(n=4096):
    """n compact learner views and their masks, from games against greedy seats."""
    env = SeatVectorEnv(256, opponents="greedy", seat="random", num_threads=1)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    rows, masks = [], []
    while sum(len(r) for r in rows) < n:
        m = env.action_masks()
        rows.append(obs.copy())
        masks.append(m.astype(np.int8))
        obs, *_ = env.step(masked_random(rng, m))
    return np.concatenate(rows)[:n], np.concatenate(masks)[:n]


def run_encode(obs_type, views, seconds):
    enc = make_encoder(obs_type)
    obs, mask = views
    with numba_threads(1):
        enc.batch(obs, mask)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            enc.batch(obs, mask)
            n += len(obs)
        return n / (time.perf_counter() - t0)


def rows(sizes, threads, views):
    out = []
    for B in sizes:
        for opp in OPPONENTS:
            for t in OBS_TYPES:
                out.append((f"seat/{opp}/{t} B={B}", "learner steps/s",
                            lambda s, B=B, o=opp, t=t: run_seat(B, o, t, threads, s)))
    for t in ("float", "features"):
        out.append((f"encode/{t}", "rows/s", lambda s, t=t: run_encode(t, views, s)))
    return out


def measure(table, seconds, rounds):
    best = {name: 0.0 for name, _, _ in table}
    for _ in range(rounds):
        for name, _, fn in table:
            best[name] = max(best[name], fn(seconds))
    return best


def print_table(table, result, title):
    print(f"\n{title}")
    names = [n for n, _, _ in table if n.startswith("seat/")]
    print(f"{'opponents':<10} {'B':>5} " + " ".join(f"{t:>10}" for t in OBS_TYPES) + f" {'float/features':>15}")
    for key in dict.fromkeys(n.rsplit("/", 1)[0] + " " + n.split(" B=")[1] for n in names):
        head, B = key.split(" ")
        rate = {t: result[f"{head}/{t} B={B}"] for t in OBS_TYPES}
        print(f"{head.split('/')[1]:<10} {B:>5} " + " ".join(f"{rate[t]:>10,.0f}" for t in OBS_TYPES)
              + f" {rate['float'] / rate['features']:>14.2f}x")
    for name, unit, _ in table:
        if name.startswith("encode/"):
            print(f"{name:<20} {result[name]:>12,.0f} {unit}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--busy", type=int, nargs="+", default=[0], help="background busy processes per table")
    ap.add_argument("--threads", type=int, default=1, help="numba threads of the env's kernels")
    results_io.add_argument(ap, "obs")
    args = ap.parse_args(argv)
    views = learner_views()
    table = rows(args.sizes, args.threads, views)
    measure(table, 0.2, 1)   # compile / load every kernel first
    results, loads = {}, {}
    for nb in args.busy:
        procs = busy(nb)
        try:
            time.sleep(1.0 if nb else 0.0)
            results[nb] = measure(table, args.seconds, args.rounds)
            load = os.getloadavg()[0]
        finally:
            for p in procs:
                p.kill()
                p.wait()
        loads[f"{nb} busy"] = round(load, 2)
        print_table(table, results[nb], f"{nb} busy process(es), {os.cpu_count()} CPUs, numba threads {args.threads}, "
                                        f"load average {load:.2f}, best of {args.rounds} x {args.seconds:g} s "
                                        f"(learner steps/s)")
    if args.write_results:
        out_rows = [{"row": name, "unit": unit, "rates": {f"{nb} busy": results[nb][name] for nb in results}}
                    for name, unit, _ in table]
        run = results_io.run_record(results_io.command_line(argv, __file__), out_rows, load_average=loads,
                                    numba_threads=args.threads, seconds=args.seconds, rounds=args.rounds,
                                    numba_version=numba.__version__)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
