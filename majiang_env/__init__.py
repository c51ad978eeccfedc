"""majiang_env: a reinforcement-learning environment for 馬将 (Majiang).

``Game`` is one game over the numba kernel; ``RuleConfig`` the rule set;
``replay`` / ``RecordError`` read game records (docs/api.md).
"""
from .rules import RuleConfig
from .game import Game, IllegalActionError, RecordError, replay

__all__ = ["Game", "RuleConfig", "replay", "RecordError", "IllegalActionError"]
__version__ = "0.1.0"
from .vector import selfplay  # noqa: E402
__all__.append("selfplay")
from .env import env, raw_env, parallel_env  # noqa: E402
__all__ += ["env", "raw_env", "parallel_env"]
