"""The numba kernel: state layout, rules, observation, batched loops.

numba's on-disk cache (``cache=True``) keys each function on its own source
file only, so an edit of ``layout.py`` or ``rules.py`` alone would leave
machine code with stale offsets in the cache of ``core.py``. Before any kernel
module is compiled or loaded, this package hashes every source the kernel is
built from and, when the hash differs from the one stamped beside the cache,
drops the kernel's cached files.
"""
import hashlib
from pathlib import Path


def _invalidate_stale_cache():
    here = Path(__file__).parent
    sources = sorted(here.glob("*.py")) + [here.parent / "rules.py"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    cache = here / "__pycache__"
    stamp = cache / "majiang_kernel.sha256"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            f.unlink()
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        pass  # read-only install: numba uses its user-wide cache, keyed by file stamps


_invalidate_stale_cache()
