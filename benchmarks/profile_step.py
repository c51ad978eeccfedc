"""Profile the compiled kernel with Linux ``perf``: run a workload and write a perf map that names numba's code.

``perf`` reads a JIT's function names from ``/tmp/perf-<pid>.map`` (one line per
function: start address, size, name, in hex). numba writes none, and the
llvmlite wheels have no perf JIT listener, so without a map ``perf report``
shows the kernel as anonymous addresses. This script records the object code
numba loads from its on-disk cache (a hook on numba's object cache, the one
place that object code passes through), runs the workload, and at the end
lists the functions of that object code (``nm``) at the addresses the JIT gave
them, for every compiled function of ``majiang_env.kernel``.

    perf record -F 999 -g -o /tmp/perf.data python benchmarks/profile_step.py --seconds 10
    perf report -i /tmp/perf.data --no-children --sort symbol

Workloads (``--workload``): ``seat`` (default) steps ``SeatVectorEnv(B,
opponents="random", seat="random", obs_type="compact")`` with the numpy
masked-random learner of ``bench_fastpath.py`` on one numba thread; ``selfplay``
plays whole games of random agents in compiled code.

The hook sees object code only when numba loads it from its cache: run the
script once to fill the cache (or any benchmark), then profile. It relies on
numba's private ``CPUCodeLibrary._object_getbuffer_hook`` (numba 0.60-0.62);
where that is missing it says so and runs the workload without a map.
docs/performance.md ("Profiling the compiled step") shows what it found.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from numba.core import codegen  # the hook must be in place before majiang_env compiles or loads anything

_BUFFERS = []
try:
    _ORIGINAL = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__

    def _keep_buffer(cls, ll_module):
        buf = _ORIGINAL(cls, ll_module)
        if buf:
            _BUFFERS.append(buf)
        return buf

    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(_keep_buffer)
    HOOKED = True
except AttributeError:
    HOOKED = False

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_fastpath import masked_random  # noqa: E402
from majiang_env import selfplay  # noqa: E402
from majiang_env.vector_env import SeatVectorEnv  # noqa: E402


def dispatchers():
    """Every compiled function of ``majiang_env.kernel``'s modules."""
    found = {}
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("majiang_env.kernel"):
            for obj in vars(mod).values():
                if hasattr(obj, "overloads") and hasattr(obj, "py_func"):
                    found[id(obj)] = obj
    return list(found.values())


def readable(symbol: str) -> str:
    """``_ZN11majiang_env6kernel4core6settleB2v8...`` -> ``majiang_env.kernel.core.settle`` (numba's
    Itanium-style names: length-prefixed parts up to the first tag ``B`` or the end ``E``)."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j:j + n])
        i = j + n
    return ".".join(parts) or symbol


def write_perf_map() -> tuple[str, int]:
    """Write /tmp/perf-<pid>.map from the object code seen; returns (path, functions named)."""
    libs = [cres.library for d in dispatchers() for cres in d.overloads.values()]
    lines = set()
    for obj in _BUFFERS:
        with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
            f.write(obj)
        try:
            out = subprocess.run(["nm", "-S", "--defined-only", f.name], capture_output=True, text=True).stdout
        finally:
            os.unlink(f.name)
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 4 or parts[2] not in "tTwW":
                continue
            size, symbol = int(parts[1], 16), parts[3]
            for lib in libs:
                try:
                    address = lib.get_pointer_to_function(symbol)
                except Exception:  # not in this library
                    address = 0
                if address:
                    lines.add(f"{address:x} {size:x} {readable(symbol)}\n")
                    break
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as f:
        f.writelines(sorted(lines))
    return path, len(lines)


def run(workload: str, seconds: float, envs: int) -> str:
    rng = np.random.default_rng(0)
    if workload == "selfplay":
        selfplay(64, num_envs=64, num_threads=1)  # compile / load
        t0, games = time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds:
            selfplay(envs, num_envs=envs, first_game=games, num_threads=1)
            games += envs
        return f"{games / (time.perf_counter() - t0):,.0f} games/s"
    env = SeatVectorEnv(envs, opponents="random", seat="random", obs_type="compact", copy=False, num_threads=1)
    env.reset(seed=0)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(masked_random(rng, env.action_masks()))
        steps += 1
    return f"{steps * envs / (time.perf_counter() - t0):,.0f} learner steps/s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=("seat", "selfplay"), default="seat")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--envs", type=int, default=1024, help="games in the batch, 1 or more")
    args = ap.parse_args(argv)
    print(f"{args.workload}: {run(args.workload, args.seconds, args.envs)} over {args.seconds:g} s")
    if not HOOKED:
        print("no perf map: this numba has no CPUCodeLibrary._object_getbuffer_hook")
    elif shutil.which("nm") is None:
        print("no perf map: `nm` (binutils) is not installed")
    elif not _BUFFERS:
        print("no perf map: numba compiled instead of loading its cache; run this script again")
    else:
        path, n = write_perf_map()
        print(f"{path}: {n} functions; `perf report` on this run names them")


if __name__ == "__main__":
    main()
