"""Decisions/s of a Python loop driving ``Game`` with uniformly random legal actions,
plus cold-compile and warm-import times. Prints a table.

    python benchmarks/bench_game.py [--games N]
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def import_time(cold: bool) -> float:
    env = dict(os.environ)
    src = ROOT
    tmp = None
    if cold:  # a copy of the package without numba's cache
        tmp = Path(tempfile.mkdtemp())
        shutil.copytree(ROOT / "majiang_env", tmp / "majiang_env",
                        ignore=shutil.ignore_patterns("__pycache__"))
        src = tmp
    env["PYTHONPATH"] = str(src)
    code = "import time; t=time.perf_counter(); import majiang_env as m; g=m.Game(seed=0); g.step(g.legal_actions()[0]); g.observe(0); print(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(src),
                         capture_output=True, text=True, check=True).stdout
    if tmp:
        shutil.rmtree(tmp)
    return float(out.split()[-1])


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=200)
    args = ap.parse_args()
    cold = import_time(cold=True)
    warm = import_time(cold=False)
    loop(2)
    n, dt = loop(args.games)
    print(f"{'measure':<40}{'value':>14}")
    print(f"{'Game loop, random legal (decisions/s)':<40}{n / dt:>14,.0f}")
    print(f"{'decisions per game':<40}{n / args.games:>14,.1f}")
    print(f"{'cold compile + first step (s)':<40}{cold:>14.2f}")
    print(f"{'warm import + first step (s)':<40}{warm:>14.2f}")


if __name__ == "__main__":
    main()
