"""Self-play throughput on a local Ray (``majiang_env.distributed``) against the
single-process ``selfplay``, measured in the same run; and rollout collection
(``RolloutCollector``) against the same streams stepped in this process.

    python benchmarks/bench_ray.py [--games 20000] [--cpus 2] [--repeat 3] [--write-results [PATH]]

Figures are decisions per second of wall time on the driver (Ray start-up and
the collectors' actor creation excluded; scheduling the selfplay tasks and
transferring results included),
best of ``--repeat`` runs. The in-process runs are measured with all numba
threads and with one (a Ray worker has one per Ray CPU). Every distributed run is checked to give the same
stats as the single-process one. ``--write-results`` writes the run to
``benchmarks/results/ray.json`` (rendered into docs/performance.md by
``benchmarks/render_docs.py``).
"""
import argparse
import os
import sys
import time

import numba

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

from majiang_env import distributed as dist  # noqa: E402
from majiang_env import selfplay  # noqa: E402
from majiang_env.distributed.rollouts import RolloutStream  # noqa: E402

KEYS = ("games", "hands", "decisions", "mean_points", "wins")


def best_of(repeat, f):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        dt = time.perf_counter() - t
        if best is None or dt < best[0]:
            best = (dt, out)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--cpus", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=64, help="rollout steps per collect")
    ap.add_argument("--envs", type=int, default=256, help="games per rollout stream")
    results_io.add_argument(ap, "ray")
    args = ap.parse_args(argv)
    n = args.games
    selfplay(64, num_envs=64)  # compile / load the kernel cache before the workers start
    all_threads = numba.get_num_threads()
    dt, ref = best_of(args.repeat, lambda: selfplay(n, seed=0, num_envs=args.num_envs))
    base = ref["decisions"] / dt
    rows = [("single process", "-", all_threads, base, n / dt, "-")]
    numba.set_num_threads(1)
    dt, s = best_of(args.repeat, lambda: selfplay(n, seed=0, num_envs=args.num_envs))
    numba.set_num_threads(all_threads)
    rows.append(("single process", "-", 1, s["decisions"] / dt, n / dt, "-"))

    t = time.perf_counter()
    dist.init(num_cpus=args.cpus)
    t_init = time.perf_counter() - t
    for workers, threads in [(1, 1), (2, 1), (1, 2)]:
        if workers * threads > args.cpus:
            continue
        with dist.SelfplayPool(num_workers=workers, threads_per_worker=threads) as pool:
            pool.selfplay(64, seed=1, num_envs=64)          # workers load the kernel
            dt, s = best_of(args.repeat, lambda: pool.selfplay(n, seed=0, num_envs=args.num_envs))
            same = all(s[k] == ref[k] for k in KEYS)
            rows.append(("Ray SelfplayPool", workers, threads, s["decisions"] / dt, n / dt,
                         "yes" if same else "NO"))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"selfplay, {n:,} games of 4 random agents, {os.cpu_count()} cores (load average {load:.1f} at the "
          f"end), Ray {dist._ray().__version__} started with num_cpus={args.cpus} in {t_init:.1f} s\n")
    print(f"| run | workers | numba threads/worker | decisions/s | games/s | vs single process ({all_threads} "
          f"threads) | same stats |")
    print("|---|---|---|---|---|---|---|")
    for name, w, th, d, g, same in rows:
        print(f"| {name} | {w} | {th} | {d:,.0f} | {g:,.0f} | {d / base:.2f}x | {same} |")

    # rollouts: 2 streams x envs games, the masked random policy, T steps per collect
    S, B, T = 2, args.envs, args.steps
    rrows = []
    for threads in (all_threads, 1):
        numba.set_num_threads(threads)
        streams = [RolloutStream(k, B, seed=0) for k in range(S)]
        [s.collect(2) for s in streams]
        dt, _ = best_of(args.repeat, lambda streams=streams: [s.collect(T) for s in streams])
        rrows.append(("in this process (RolloutStream)", "-", threads, S * B * T / dt))
    numba.set_num_threads(all_threads)
    base_r = rrows[0][3]
    for workers in (1, 2):
        if workers > args.cpus:
            continue
        with dist.RolloutCollector(S, B, seed=0, num_workers=workers) as rc:
            rc.collect(2)
            dt, _ = best_of(args.repeat, lambda: rc.collect(T))
            rrows.append(("Ray RolloutCollector", workers, 1, S * B * T / dt))
    print(f"\nrollouts: {S} streams x {B} games, {T} steps per collect (obs, masks, actions, rewards "
          f"returned to the driver; recover=True ships each stream's state too)\n")
    print(f"| run | workers | numba threads/worker | decisions/s | vs in-process ({all_threads} threads) |")
    print("|---|---|---|---|---|")
    for name, w, th, d in rrows:
        print(f"| {name} | {w} | {th} | {d:,.0f} | {d / base_r:.2f}x |")
    if args.write_results:
        out = [{"row": f"selfplay: {name}, {w} x {th}", "what": "selfplay", "run": name, "workers": w, "threads": th,
                "decisions_per_s": d, "same_stats": same} for name, w, th, d, g, same in rows]
        out += [{"row": f"rollouts: {name}, {w} x {th}", "what": "rollouts", "run": name, "workers": w, "threads": th,
                 "decisions_per_s": d} for name, w, th, d in rrows]
        run = results_io.run_record(results_io.command_line(argv, __file__), out, games=n, cpus=args.cpus,
                                    streams=S, envs=B, steps=T, ray=dist._ray().__version__)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
