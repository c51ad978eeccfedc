"""``majiang_v1`` is deprecated: use ``majiang_v2`` (``from majiang_env import majiang_v2``).

v2 gives every agent not to act one legal action, the pass 156 (Discrete(157));
the env card is ``help(majiang_env.majiang_v2)``. As PettingZoo does for a bumped
classic environment (``pettingzoo.utils.deprecated_module.DeprecatedModule``),
this module still imports, and ``env()``, ``raw_env()``, ``parallel_env()`` and
``manual_control()`` raise ``DeprecatedEnv`` (an ``ImportError``) saying to use
``majiang_v2``; any other name raises an ``AttributeError`` saying the same.
"""
from pettingzoo.utils.deprecated_module import DeprecatedEnv, DeprecatedModule

_deprecated = DeprecatedModule("majiang", 1, 2)
env = _deprecated.env
raw_env = _deprecated.raw_env
parallel_env = _deprecated.parallel_env
manual_control = _deprecated.manual_control

__all__ = ["env", "raw_env", "parallel_env", "manual_control", "DeprecatedEnv"]


def __getattr__(name):
    raise AttributeError(f"module 'majiang_env.majiang_v1' has no attribute {name!r}: "
                         "majiang_v1 is now deprecated, use majiang_v2 instead")
