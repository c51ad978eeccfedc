"""Compile every kernel variant ahead of time, and say where numba's cache is.

``python -m majiang_env compile`` runs :func:`compile_all` then prints
:func:`cache_report`. numba compiles a kernel function the first time it is
called with a given set of argument types, and (``cache=True``) writes the
machine code to its on-disk cache; a later process loads it in milliseconds.
"Once" therefore means once per installed version of the package, Python and
numba version and CPU: an upgrade, or a cache folder moved to another kind of
machine, compiles again. The cache folder is the package's own
``engine/kernel/__pycache__`` when it is writable, else numba's user-wide
cache; ``NUMBA_CACHE_DIR``, set before Python starts, moves it (for a
read-only install, a container image layer, or a shared disk).
"""
from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["compile_all", "cache_report", "kernel_dispatchers", "main"]

KERNEL_MODULES = tuple(f"majiang_env.engine.kernel.{m}" for m in (
    "cards", "legal", "step", "scoring", "observe", "features", "floatobs", "fullstate", "greedy", "search",
    "players", "worlds", "batch", "learner")) + ("majiang_env.engine.rows",)


def compile_all(log=None) -> list:
    """Exercise every face's kernel entry points (each observation encoding, the
    planning calls, every in-kernel agent, self-play, ``SeatVectorEnv`` in both
    autoreset modes, with and without full states), so that every variant numba
    compiles for them is in the cache. Returns ``[(stage, seconds)]``."""
    from gymnasium.vector import AutoresetMode

    from .engine.game import Game
    from .engine.registry import Batched
    from .engine.vector import VectorGame, selfplay
    from .envs.seat_vector import SeatVectorEnv

    def zeros(n, dtype=np.float32):
        return np.zeros((n, 156), dtype)

    python_agent = Batched(lambda obs, mask: np.asarray(mask).argmax(1), "first legal")

    stages = []

    def stage(name, fn):
        t = time.perf_counter()
        fn()
        stages.append((name, time.perf_counter() - t))
        if log is not None:
            log(f"{name}: {stages[-1][1]:.1f} s")

    def one_game():
        g = Game(seed=0)
        for obs_type in ("compact", "features", "float"):
            g.observe(g.current_player, obs_type)
        g.full_state()
        g.sample_hidden(g.current_player, 1)
        while not g.done:
            g.step(g.legal_actions()[0])
        g.record()

    def vectors():
        for obs_type in ("compact", "features", "float"):
            for n in (4, 64):                         # the serial and the parallel loops
                vg = VectorGame(n, seed=0, obs_type=obs_type)
                vg.reset()
                for dtype in (np.float32, np.float64):      # logits of either float type
                    for _ in range(2):
                        vg.step(vg.sample_actions(zeros(n, dtype)))
                        vg.sample_step(zeros(n, dtype))
                vg.policy_actions(python_agent)
                vg.policy_actions("random")
                vg.policy_actions("greedy")
                vg.full_states()
                vg.game(0)                                 # a state row checked (engine/rows.py)
                vg.copy_rows(0, 1)
                vg.sample_hidden(0, 2, 0, 5)

    def agents():
        for n in (1, 64):
            vg = VectorGame(n, seed=0)
            vg.reset()
            vg.policy_actions("search:samples=1,budget=50")

    def selfplays():
        selfplay(8, agents=("random", "greedy", "random", "greedy"), num_envs=4)
        selfplay(2, agents=("search:samples=1,budget=50", "greedy", "random", "greedy"), num_envs=2)
        selfplay(2, agents=(python_agent, "greedy", "random", "greedy"), num_envs=2)

    def seat_envs():
        for obs_type in ("compact", "features", "float"):
            for n in (4, 64):
                for mode in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
                    env = SeatVectorEnv(n, opponents="greedy", seat="random", obs_type=obs_type,
                                        autoreset_mode=mode, critic_state=obs_type == "features")
                    env.reset(seed=0)
                    for dtype in (np.float32, np.float64):
                        for _ in range(2):
                            env.step(env.sample_actions(zeros(n, dtype)))
        for obs_type in ("compact", "features", "float"):   # opponents in the kernel and in Python
            env = SeatVectorEnv(2, opponents=["search:samples=1,budget=50", python_agent, "greedy"],
                                obs_type=obs_type)
            env.reset(seed=0)
            for _ in range(8):
                env.step(env.sample_actions(zeros(2)))

    def single_agent():
        from .envs.single_agent import SingleAgentEnv
        for opponents in (["search:samples=1,budget=50", python_agent, "greedy"], "random"):
            env = SingleAgentEnv(opponents=opponents, hands_per_game=1)
            env.reset(seed=0)
            over = False
            while not over:
                _, _, over, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))

    stage("the game kernel (Game)", one_game)
    stage("the batched kernels (VectorGame)", vectors)
    stage("the search agent", agents)
    stage("self-play", selfplays)
    stage("SeatVectorEnv", seat_envs)
    stage("SingleAgentEnv", single_agent)
    return stages


def kernel_dispatchers() -> list:
    """Every numba function of the package (``engine/kernel/*.py``, ``engine/rows.py``) cached on disk."""
    out = []
    for name in KERNEL_MODULES:
        mod = importlib.import_module(name)
        for obj in vars(mod).values():
            if getattr(obj, "__module__", None) == mod.__name__ and hasattr(obj, "py_func") \
                    and getattr(obj, "_cache", None) is not None:
                out.append(obj)
    return out


def cache_report() -> dict:
    """``{"folders": {path: (files, bytes)}, "functions": n}``: where the kernel's cached
    machine code is (numba's choice for each function) and its size on disk."""
    folders = {}
    funcs = kernel_dispatchers()
    for d in funcs:
        path = getattr(d._cache, "_cache_path", None)   # numba's cache locator picked this folder
        if path is not None:
            folders.setdefault(str(path), None)
    for path in folders:
        files = [p for p in Path(path).glob("*") if p.suffix in (".nbi", ".nbc")]
        folders[path] = (len(files), sum(p.stat().st_size for p in files))
    return {"folders": folders, "functions": len(funcs)}


def main() -> int:
    t = time.perf_counter()
    stages = compile_all(log=lambda s: print(s, file=sys.stderr, flush=True))
    total = time.perf_counter() - t
    rep = cache_report()
    print(f"compiled (or loaded) every kernel variant in {total:.1f} s over {len(stages)} stages")
    for path, (files, size) in rep["folders"].items():
        print(f"cache: {path}: {files} files, {size / 2 ** 20:.1f} MiB")
    print("A later process loads these instead of compiling. NUMBA_CACHE_DIR=/some/dir (set before Python "
          "starts) moves the cache; deleting the folder makes the next run compile again.")
    return 0
