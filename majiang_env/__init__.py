"""majiang_env: a reinforcement-learning environment for 馬将 (Majiang).

``Game`` is one game over the numba kernel; ``RuleConfig`` the rule set;
``replay`` / ``RecordError`` read game records (docs/api.md). ``env``,
``raw_env`` and ``parallel_env`` are the PettingZoo environment, whose module
is ``majiang_env.majiang_v1`` (``help(majiang_env.majiang_v1)``: the env card).
``python -m majiang_env`` watches a game; ``python -m majiang_env play`` plays one.
"""
import os

# Batched kernels run numba parallel regions on OpenMP threads. By default
# libgomp's idle threads spin-wait between regions; on a machine whose cores are
# busy with other work (a learner, another job) the spinning threads steal the
# cores the working ones need and a step becomes several times slower
# (docs/performance.md, "Under load"). Sleeping waits cost microseconds per
# region on an idle machine. A value the user set is kept; it must be set
# before the first parallel kernel runs.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Opt-in: numba's TBB threading layer (the ``tbb`` extra, then
# NUMBA_THREADING_LAYER=tbb) wakes its threads faster between regions on an
# idle machine; its library must be loaded by path (threads.load_tbb).
from .threads import TBB_LAYERS, load_tbb  # noqa: E402

if os.environ.get("NUMBA_THREADING_LAYER", "").lower() in TBB_LAYERS and not load_tbb():
    import warnings
    warnings.warn("NUMBA_THREADING_LAYER asks for TBB, but no libtbb.so.12 of the pip package tbb was found: "
                  "pip install \"majiang_env[tbb]\" (Linux x86-64), or numba may find no threading layer",
                  RuntimeWarning, stacklevel=2)

from .rules import RuleConfig  # noqa: E402
from .game import Game, IllegalActionError, RecordError, replay  # noqa: E402

__all__ = ["Game", "RuleConfig", "replay", "RecordError", "IllegalActionError"]
__version__ = "0.1.0"
from .vector import selfplay  # noqa: E402
__all__.append("selfplay")
from .env import env, raw_env, parallel_env  # noqa: E402
from . import majiang_v1  # noqa: E402
__all__ += ["env", "raw_env", "parallel_env", "majiang_v1"]
# registers "majiang_env/SingleAgent-v1" for gymnasium.make / make_vec
from . import wrappers  # noqa: E402, F401
