"""The numba kernel: state layout, rules, observation, batched loops.

================  =============================================================
``layout.py``     the state row: every field's name, lifetime and shape
``cards.py``      the deal (splitmix64), squares, cards in and out of hands
``legal.py``      claimable discards and the legal actions of each phase
``step.py``       applying actions: set-up, one function per action, end of
                  turn and hand, the entry points (``advance``, ``settle``)
``scoring.py``    the winning shape, the best reading and its patterns, payments
``observe.py``    what a seat sees; ``features.py`` and ``floatobs.py`` its float
                  encodings (with the greedy block; normalised for an MLP)
``fullstate.py``  the full-information state (every hidden card and the
                  table, absolute seats) for centralised critics
``greedy.py``     the greedy agent; ``search.py`` the search agent;
                  ``players.py`` picks an agent by code
``batch.py``      batched loops (self-play); ``learner.py`` SeatVectorEnv's step
``jit.py``        the compile decorators
================  =============================================================

numba's on-disk cache (``cache=True``) keys each function on its own source
file only, so an edit of ``layout.py`` or ``rules.py`` alone would leave
machine code with stale offsets in the caches of the modules that use them.
Before any kernel module is compiled or loaded, this package hashes every
source the kernel is built from and, when the hash differs from the one
stamped beside the cache, drops the kernel's cached files. The cache is the
package's ``__pycache__``, or ``$NUMBA_CACHE_DIR/kernel_<hash of this folder>``
when ``NUMBA_CACHE_DIR`` is set (numba's own choice of place).

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
    # the package's dotted name too: cached machine code refers to its modules by name,
    # so a kernel moved to another package must not load a cache written under the old one
    digest = hashlib.sha256(__name__.encode() + b"".join(p.read_bytes() for p in sources)).hexdigest()
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
# The lines carry no durations: those depend on the machine and are measured by
# ``benchmarks/bench_cold.py`` (docs/performance.md, "What does a cold start cost?").
COMPILE_MESSAGES = {
    "kernel": "the game kernel",
    "selfplay": "the self-play kernel",
    "seat": "SeatVectorEnv's kernels",
    "vector": "the batched kernels",
    "search": "the search agent",
}
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


def compile_message(part: str) -> str:
    """The line printed when numba starts compiling ``part`` (see :data:`COMPILE_MESSAGES`)."""
    return (f"majiang_env: numba is compiling {COMPILE_MESSAGES[part]}, once "
            "(later runs load it from the cache; docs/performance.md gives the times) ...")


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
            msg = compile_message(part)
            _announced.add(part)
            print(msg, file=sys.stderr, flush=True)

        def on_end(self, ev):
            self.depth = max(0, self.depth - 1)

    event.register("numba:compile", _Notice())


_install_compile_notice()
