"""The trainer fast path: learner steps/s of ``SeatVectorEnv`` next to ``SingleAgentEnv`` and the
AEC loop, ``VectorGame`` and ``selfplay`` decisions/s, idle and with busy background processes.

    python benchmarks/bench_fastpath.py [--seconds 3] [--rounds 3] [--busy 0 1 2] [--sizes 1024] [--write-results]
    OMP_WAIT_POLICY=ACTIVE python benchmarks/bench_fastpath.py --busy 0 1 --only vector selfplay seat/greedy
    python benchmarks/bench_fastpath.py --busy 0 1 --chunksize 16 --only vector

The levers for busy machines are set from outside: ``OMP_WAIT_POLICY``
(``majiang_env`` sets ``PASSIVE`` unless it is set), ``NUMBA_THREADING_LAYER``
(``omp`` / ``workqueue`` / ``tbb``, the last with the ``tbb`` extra), ``--chunksize`` (``numba.set_parallel_chunksize``:
iterations per chunk handed to a thread; 0 = numba's static split), and
``--only`` keeps the rows whose names start with the given prefixes.

Every row is the best of ``--rounds`` interleaved rounds of ``--seconds`` each
(the machine may be shared: read the ratios and the load average printed with
the table). ``--busy N`` runs the whole table again with N background processes
that each spin one core (started and stopped by this script), and the last
table gives each figure under load as a share of the idle one. Rows:

* ``seat/<opponents>/<obs>``: ``SeatVectorEnv(B, opponents, seat="random",
  obs_type)``, the learner's action from a numpy masked-random policy outside
  the env (random 32-bit keys over the mask, argmax; ``masked_random``), or ``+kernel`` sampled inside
  (``sample_actions`` on zero logits); learner steps/s.
* ``single/<opponents>``: ``SingleAgentEnv`` with the same policy, one game.
* ``aec``: the PettingZoo AEC loop (``majiang_env.env()``), decisions/s of the
  four seats, uniformly random legal actions.
* ``vector/numpy`` and ``vector/kernel``: ``VectorGame(B).step`` with the numpy
  policy, or ``VectorGame(B).sample_step`` (actions sampled in the kernel from
  logits and stepped in the same call).
* ``selfplay``: whole games in compiled code (random agents), decisions/s.

``--write-results [PATH]`` writes the run to ``benchmarks/results/fastpath.json``
(``benchmarks/results_io.py``; the threading layer, wait policy and chunk size
are the run's variant), from which ``benchmarks/render_docs.py`` renders
docs/performance.md; the run with ``NUMBA_THREADING_LAYER=tbb`` beside the
default one is ``benchmarks/results/threading.json``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

import majiang_env  # noqa: E402
from majiang_env import selfplay  # noqa: E402
from majiang_env.engine.vector import VectorGame  # noqa: E402
from majiang_env.envs.seat_vector import SeatVectorEnv  # noqa: E402
from majiang_env.envs.single_agent import SingleAgentEnv  # noqa: E402


def masked_random(rng, mask):
    """A uniformly random legal action per row of ``mask`` (B, 156): random
    32-bit keys (the generator's raw 64-bit output read as two keys each, odd so
    that a legal key is never 0), zeroed at illegal ids, argmax. Two of k legal keys
    tie for the top with probability about k / 2^31. (Float keys, ``rng.random(shape,
    np.float32) * mask``, make the same choice at about 1.5 times the cost.)"""
    keys = rng.bit_generator.random_raw(mask.size // 2).view(np.uint32).reshape(mask.shape)
    keys |= 1
    np.multiply(keys, mask, out=keys, casting="unsafe")   # mask: bool or 0 / 1 int8
    return keys.argmax(axis=1)


def run_seat(B, opponents, obs_type, kernel_sampling, seconds):
    env = SeatVectorEnv(B, opponents=opponents, seat="random", obs_type=obs_type, copy=False)
    env.reset(seed=0)
    rng, zeros = np.random.default_rng(0), np.zeros((B, 156))
    act = (lambda: env.sample_actions(zeros)) if kernel_sampling else (lambda: masked_random(rng, env.action_masks()))
    env.step(act())
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(act())
        n += B
    return n / (time.perf_counter() - t0)


def run_single(opponents, seconds):
    env = SingleAgentEnv(opponents=opponents, seat="random")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[rng.integers(legal.size)]))
        n += 1
        if term or trunc:
            env.reset()
    return n / (time.perf_counter() - t0)


def run_aec(seconds):
    env = majiang_env.env()
    rng = np.random.default_rng(0)
    n, t0, seed = 0, time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        env.reset(seed=seed)
        seed += 1
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            n += 1
    return n / (time.perf_counter() - t0)


def run_vector(B, kernel_sampling, seconds):
    vg = VectorGame(B, seed=0)
    obs, mask, _ = vg.reset()
    rng, zeros = np.random.default_rng(0), np.zeros((B, 156))
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        if kernel_sampling:
            vg.sample_step(zeros)
        else:
            vg.step(masked_random(rng, mask))
        n += B
    return n / (time.perf_counter() - t0)


def run_selfplay(B, seconds):
    games, s = B, None
    while True:
        s = selfplay(games, seed=1, num_envs=B)
        if s["seconds"] >= seconds / 2 or games > 10 ** 7:
            return s["decisions"] / s["seconds"]
        games = int(games * max(2.0, seconds / 2 / max(s["seconds"], 1e-3)))


def rows(B):
    out = []
    for opp in ("random", "greedy"):
        for obs_type in ("compact", "features"):
            out.append((f"seat/{opp}/{obs_type} B={B}", "learner steps/s",
                        lambda s, o=opp, t=obs_type: run_seat(B, o, t, False, s)))
        out.append((f"seat/{opp}/compact+kernel B={B}", "learner steps/s",
                    lambda s, o=opp: run_seat(B, o, "compact", True, s)))
        out.append((f"single/{opp}", "learner steps/s", lambda s, o=opp: run_single(o, s)))
    out += [("aec", "decisions/s", run_aec),
            (f"vector/numpy B={B}", "decisions/s", lambda s: run_vector(B, False, s)),
            (f"vector/kernel B={B}", "decisions/s", lambda s: run_vector(B, True, s)),
            (f"selfplay B={B}", "decisions/s", lambda s: run_selfplay(B, s))]
    return out


def measure(table, seconds, rounds):
    best = {name: 0.0 for name, _, _ in table}
    for _ in range(rounds):
        for name, _, fn in table:
            best[name] = max(best[name], fn(seconds))
    return best


def busy(n):
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--busy", type=int, nargs="+", default=[0], help="background busy processes per table")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024])
    ap.add_argument("--only", nargs="+", default=None, metavar="PREFIX", help="rows whose names start so")
    ap.add_argument("--chunksize", type=int, default=0, help="numba.set_parallel_chunksize (0: static split)")
    results_io.add_argument(ap, "fastpath")
    args = ap.parse_args(argv)
    numba.set_parallel_chunksize(args.chunksize)
    out_rows, loads = [], {}
    for B in args.sizes:
        table = [r for r in rows(B) if args.only is None or r[0].startswith(tuple(args.only))]
        measure(table, 0.2, 1)   # compile / load every kernel first
        results = {}
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
            loads[f"{nb} busy"] = max(loads.get(f"{nb} busy", 0.0), round(load, 2))
            print(f"\nB={B}, {nb} busy process(es), {os.cpu_count()} CPUs, numba threads "
                  f"{numba.get_num_threads()} ({numba.threading_layer()}, OMP_WAIT_POLICY "
                  f"{os.environ.get('OMP_WAIT_POLICY')}, chunksize {args.chunksize}), load average {load:.2f}, "
                  f"best of {args.rounds} x {args.seconds:g} s")
            print(f"{'row':<34} {'unit':<16} {'rate':>12}")
            for name, unit, _ in table:
                print(f"{name:<34} {unit:<16} {results[nb][name]:>12,.0f}")
        if 0 in results and len(results) > 1:
            print(f"\nB={B}: rate under load as a share of the idle rate")
            print(f"{'row':<34} " + " ".join(f"{'busy ' + str(nb):>8}" for nb in results if nb))
            for name, _, _ in table:
                print(f"{name:<34} " + " ".join(f"{results[nb][name] / results[0][name]:>8.0%}"
                                                 for nb in results if nb))
        out_rows += [{"row": name, "unit": unit, "rates": {f"{nb} busy": results[nb][name] for nb in results}}
                     for name, unit, _ in table]
    if args.write_results:
        variant = (f"{numba.threading_layer()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, "
                   f"chunksize {args.chunksize}")
        run = results_io.run_record(results_io.command_line(argv, __file__), out_rows,
                                    load_average=loads, variant=variant,
                                    numba_threads=numba.get_num_threads(), seconds=args.seconds, rounds=args.rounds)
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
