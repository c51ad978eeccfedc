"""The engine: ``rules`` (RuleConfig, card and action ids) → ``tables``
(generated, cached) → ``kernel/`` (numba) → the Python faces ``game`` (``Game``),
``records`` (``record`` / ``replay``), ``vector`` (``VectorGame``, ``selfplay``),
``encodings`` (the two observation encodings), with ``checks`` validating every
value a caller passes before it reaches the kernel.
"""
import os
import warnings

from .threads import TBB_LAYERS, load_tbb

# Opt-in: numba's TBB threading layer (the ``tbb`` extra, then
# NUMBA_THREADING_LAYER=tbb) wakes its threads faster between regions on an idle
# machine; its library must be loaded by path before numba picks a layer.
if os.environ.get("NUMBA_THREADING_LAYER", "").lower() in TBB_LAYERS and not load_tbb():
    warnings.warn("NUMBA_THREADING_LAYER asks for TBB, but no libtbb.so.12 of the pip package tbb was found: "
                  "pip install \"majiang_env[tbb]\" (Linux x86-64), or numba may find no threading layer",
                  RuntimeWarning, stacklevel=2)
