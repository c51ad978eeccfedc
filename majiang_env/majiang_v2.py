# The environment under its versioned name, as PettingZoo's classic suite does
# (``pettingzoo.classic.connect_four_v3`` holds ``env``, ``raw_env``):
#
#     from majiang_env import majiang_v2
#     e = majiang_v2.env()
#
# Its docstring is the env card (``help(majiang_v2)``), kept once, in
# majiang_env/envs/pettingzoo.py.
from .envs.pettingzoo import CARD, ILLEGAL_REWARD, PASS_ACTION, ClassicWrapper, env, parallel_env, raw_env

__doc__ = CARD
__all__ = ["env", "raw_env", "parallel_env", "ClassicWrapper", "ILLEGAL_REWARD", "PASS_ACTION"]
