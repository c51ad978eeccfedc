"""The numba kernel: state layout, rules, observation, batched loops.

numba's on-disk cache (``cache=True``) keys each function on its own source
file only, so an edit of ``layout.py`` or ``rules.py`` alone would leave
machine code with stale offsets in the cache of ``core.py``. Before any kernel
module is compiled or loaded, this package hashes every source the kernel is
built from and, when the hash differs from the one stamped beside the cache,
drops the kernel's cached files. The cache is the package's ``__pycache__``,
or ``$NUMBA_CACHE_DIR/kernel_<hash of this folder>`` when ``NUMBA_CACHE_DIR``
is set (numba's own choice of place).

**Cold cache.** Compiling the kernel takes tens of seconds, once; later runs
load it from the cache. So a first run does not look hung, the first compile
of each part prints one line to stderr before it starts
(:data:`COMPILE_MESSAGES`). The hook is numba's ``"numba:compile"`` event,
which numba sends only when a function is not in the cache, so a warm cache
prints nothing.
"""
import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _cache_dirs():
    """The folders numba may keep this package's cache in (it uses the first it can)."""
    dirs = []
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:  # numba.core.caching._UserProvidedCacheLocator: <dir>/<parent>_<sha1 of the folder>
        folder = os.path.dirname(os.path.abspath(__file__))
        sub = hashlib.sha1(folder.encode()).hexdigest()
        dirs.append(Path(env) / f"{os.path.basename(folder)}_{sub}")
    dirs.append(HERE / "__pycache__")
    return dirs


def _invalidate_stale_cache():
    sources = sorted(HERE.glob("*.py")) + [HERE.parent / "rules.py"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    for cache in _cache_dirs():
        stamp = cache / "majiang_kernel.sha256"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        try:
            for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                f.unlink()
            cache.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest)
        except OSError:
            pass  # read-only install: numba uses its user-wide cache, keyed by file stamps


_invalidate_stale_cache()

# ---- first-run compile notice ------------------------------------------------
# Measured with ``benchmarks/bench_cold.py --search`` (a copy of the package with
# an empty cache, one fresh process, the stages in this order; 2-core AMD EPYC
# VM, load about 1): import + a first Game step 17.6 s; selfplay(10) 35.8 s
# more; SeatVectorEnv(256, "greedy", features) reset + step 58.3 s more;
# VectorGame(1024, features) reset + sample_step 26.9 s and policy_actions
# ("greedy") 19.1 s more; a selfplay with a search seat 38.7 s more
# (docs/performance.md, "Cold start").
COMPILE_MESSAGES = {
    "kernel": "majiang_env: compiling the kernel once, about 15-20 s "
              "(numba; later runs load it from the cache) ...",
    "selfplay": "majiang_env: compiling the self-play kernel once, about {s} s "
                "(numba; later runs load it from the cache) ...",
    "seat": "majiang_env: compiling SeatVectorEnv's kernels once, up to about {s} s "
            "(numba; later runs load them from the cache) ...",
    "vector": "majiang_env: compiling the batched kernels once, up to about {s} s "
              "(numba; later runs load them from the cache) ...",
    "search": "majiang_env: compiling the search agent once, about {s} s "
              "(numba; later runs load it from the cache) ...",
}
# seconds for the batched parts when the game kernel is cached / not yet
_BATCH_SECONDS = {"selfplay": (30, 45), "seat": (70, 85), "vector": (55, 70), "search": (40, 55)}
_announced = set()


def compile_part(module: str, name: str) -> str:
    """Which part of the kernel a compile of ``module.name`` belongs to."""
    if module.endswith(".learner"):
        return "seat"
    if module.endswith(".batch"):
        if name in ("selfplay_kernel", "play_slot"):
            return "selfplay"
        return "search" if name.startswith("batch_agent_actions") else "vector"
    return "kernel"


def compile_message(part: str, core_cached: bool = True) -> str:
    """The line printed before the first compile of ``part`` (see :data:`COMPILE_MESSAGES`)."""
    if part == "kernel":
        return COMPILE_MESSAGES["kernel"]
    warm, cold = _BATCH_SECONDS[part]
    return COMPILE_MESSAGES[part].format(s=warm if core_cached else cold)


def _core_cached(dispatcher) -> bool:
    """Whether the game kernel (core.py) is compiled in this process or cached beside
    ``dispatcher``'s own cache."""
    if "kernel" in _announced:
        return True
    path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    return bool(path) and any(Path(path).glob("core.advance-*.nbi"))


def _install_compile_notice():
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba without the event API
        return

    class _Notice(event.Listener):
        depth = 0

        def on_start(self, ev):
            self.depth += 1
            if self.depth != 1:
                return  # a callee compiled inside an outer compile
            disp = (ev.data or {}).get("dispatcher")
            func = getattr(disp, "py_func", None)
            module = getattr(func, "__module__", "") or ""
            if not module.startswith(__name__ + "."):
                return
            part = compile_part(module, func.__name__)
            if part in _announced:
                return
            msg = compile_message(part, part == "kernel" or _core_cached(disp))
            _announced.add(part)
            print(msg, file=sys.stderr, flush=True)

        def on_end(self, ev):
            self.depth = max(0, self.depth - 1)

    event.register("numba:compile", _Notice())


_install_compile_notice()
