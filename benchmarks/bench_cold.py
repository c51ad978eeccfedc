"""Cold start: seconds of numba compiling before each part of the package first
runs, from an empty cache (a copy of the package without its ``__pycache__``, in
a fresh process), then the same stages again with that cache. Prints a table.

    python benchmarks/bench_cold.py [--search] [--write-results [PATH]]

Stages, in order, in one process (each figure is the time the stage added):
the game kernel (``import`` + a first ``Game`` step), ``selfplay``, the
``SeatVectorEnv`` of a training run (256 slots, greedy opponents, features;
reset and a first step), ``VectorGame`` self-play (1,024 slots, features,
``sample_step``), ``policy_actions("greedy")`` (the arena and evaluation), and
with ``--search`` a ``selfplay`` with one search seat.

This is the one source of the compile-time figures: ``--write-results`` writes
``benchmarks/results/cold.json``, which ``benchmarks/render_docs.py`` renders into
docs/performance.md, the README and docs/guide.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

STAGES = r'''
import json, sys, time
import numpy as np
out = {}
t = time.perf_counter()
def mark(name):
    global t
    now = time.perf_counter()
    out[name] = now - t
    t = now
import majiang_env as m
g = m.Game(seed=0); g.step(g.legal_actions()[0])
mark("game kernel: import + first Game step")
m.selfplay(10, num_envs=8)
mark("selfplay(10)")
from majiang_env.envs.seat_vector import SeatVectorEnv
env = SeatVectorEnv(256, opponents="greedy", obs_type="features")
env.reset(seed=0)
env.step(env.sample_actions(np.zeros((256, 156), np.float32)))
mark("SeatVectorEnv(256, greedy, features): reset + step")
from majiang_env.engine.vector import VectorGame
vg = VectorGame(1024, obs_type="features")
vg.reset()
vg.sample_step(np.zeros((1024, 156), np.float32))
mark("VectorGame(1024, features): reset + sample_step")
vg.step(vg.policy_actions("greedy"))
mark("VectorGame policy_actions('greedy') + step")
if "--search" in sys.argv:
    m.selfplay(2, agents=(("search", {"samples": 1, "budget": 50}), "greedy", "greedy", "greedy"), num_envs=2)
    mark("selfplay with a search seat")
print(json.dumps(out))
'''


def run(src: Path, search: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("NUMBA_CACHE_DIR", None)
    args = [sys.executable, "-c", STAGES] + (["--search"] if search else [])
    res = subprocess.run(args, env=env, cwd=str(src), capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def rows(cold: dict, warm: dict) -> list:
    """The results rows: one per stage, in order."""
    return [{"row": k, "empty_cache_s": round(cold[k], 1), "cached_s": round(warm[k], 1)} for k in cold]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--search", action="store_true", help="also time a selfplay with a search seat")
    results_io.add_argument(ap, "cold")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp())
    try:
        shutil.copytree(ROOT / "majiang_env", tmp / "majiang_env", ignore=shutil.ignore_patterns("__pycache__"))
        cold = run(tmp, a.search)
        warm = run(tmp, a.search)
    finally:
        shutil.rmtree(tmp)
    load = os.getloadavg()[0]
    print(f"cold start, {os.cpu_count()} CPUs, load average {load:.2f} at the end\n")
    print("| stage | empty cache (s) | cached (s) |\n|---|---|---|")
    for k in cold:
        print(f"| {k} | {cold[k]:.1f} | {warm[k]:.1f} |")
    print(f"| all | {sum(cold.values()):.1f} | {sum(warm.values()):.1f} |")
    if a.write_results:
        total = {"empty_cache_s": round(sum(cold.values()), 1), "cached_s": round(sum(warm.values()), 1)}
        run_ = results_io.run_record(results_io.command_line(argv, __file__), rows(cold, warm), total=total)
        results_io.report(results_io.write(a.write_results, run_))


if __name__ == "__main__":
    main()
