"""Profile the compiled kernel with Linux ``perf``: run a workload and write a perf map that names numba's code.

``perf`` reads a JIT's function names from ``/tmp/perf-<pid>.map`` (one line per
function: start address, size, name, in hex). numba writes none, and the
llvmlite wheels have no perf JIT listener, so without a map ``perf report``
shows numba's code as anonymous addresses. This script keeps the object code
of every module numba compiles or loads from its on-disk cache (hooks on
numba's object cache, which both pass through), runs the workload, and at the
end lists the functions of that object code (``nm``) at the addresses the JIT
gave them: the kernel's functions, and the numba runtime helpers they call.
Specializations of one function share its name (``perf report`` shows them as
separate rows).

    perf record -F 999 -g -o /tmp/perf.data python research/profile_step.py --seconds 10
    perf report -i /tmp/perf.data --no-children --sort symbol

Workloads (``--workload``): ``seat`` (default) steps ``SeatVectorEnv(B,
opponents="random", seat="random", obs_type="compact")`` with the numpy
masked-random learner of ``benchmarks/bench_fastpath.py`` on one numba thread; ``selfplay``
plays whole games of random agents in compiled code. Each runs once before the
clock starts, so a cold cache compiles outside the timed part (a perf
recording still includes the compile; profile with a warm cache).

It relies on numba's private ``CPUCodeLibrary._object_compiled_hook`` and
``_object_getbuffer_hook`` (checked with numba 0.68); where they are missing
it says so and runs the workload without a map.
research/README.md ("Profiling the compiled kernel") tells what it found.
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

_BUFFERS = []    # object code of every module numba compiled or loaded from its cache
try:
    _COMPILED = codegen.CPUCodeLibrary._object_compiled_hook.__func__
    _LOADED = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__

    def _keep_compiled(cls, ll_module, buf):
        _BUFFERS.append(buf)
        return _COMPILED(cls, ll_module, buf)

    def _keep_loaded(cls, ll_module):
        buf = _LOADED(cls, ll_module)
        if buf:
            _BUFFERS.append(buf)
        return buf

    codegen.CPUCodeLibrary._object_compiled_hook = classmethod(_keep_compiled)
    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(_keep_loaded)
    HOOKED = True
except AttributeError:
    HOOKED = False

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "benchmarks"), ROOT]

from bench_fastpath import masked_random  # noqa: E402

from majiang_env import selfplay  # noqa: E402
from majiang_env.envs.seat_vector import SeatVectorEnv  # noqa: E402


def a_library():
    """Any library of a compiled function: its lookup reads the JIT's whole symbol table."""
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("majiang_env.engine.kernel"):
            for obj in vars(mod).values():
                for cres in getattr(obj, "overloads", {}).values():
                    return cres.library
    return None


def readable(symbol: str) -> str:
    """``_ZN11majiang_env6engine6kernel4step6settleB2v8...`` -> ``majiang_env.engine.kernel.step.settle`` (numba's
    Itanium-style names: length-prefixed parts up to the first tag ``B`` or the end ``E``)."""
    at = symbol.find("_ZN")
    if at < 0:
        return symbol
    prefix, symbol = symbol[:at], symbol[at:]    # e.g. "cfunc." of a C wrapper
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j:j + n])
        i = j + n
    return prefix + ".".join(parts) if parts else prefix + symbol


def write_perf_map() -> tuple[str, int]:
    """Write /tmp/perf-<pid>.map from the object code seen; returns (path, functions named)."""
    lib = a_library()
    sizes = {}
    for obj in _BUFFERS if lib is not None else ():
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
            try:
                address = lib.get_pointer_to_function(parts[3])
            except Exception:  # a symbol the JIT did not keep
                address = 0
            if address:   # the same function seen in several object files: keep its largest size
                size = max(sizes.get(address, (0, ""))[0], int(parts[1], 16))
                sizes[address] = (size, readable(parts[3]))
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as f:
        f.writelines(f"{a:x} {size:x} {name}\n" for a, (size, name) in sorted(sizes.items()))
    return path, len(sizes)


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
    env.step(masked_random(rng, env.action_masks()))   # compile / load
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
    else:
        path, n = write_perf_map()
        print(f"{path}: {n} functions; `perf report` on this run names them")


if __name__ == "__main__":
    main()
