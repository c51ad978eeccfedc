"""Uniformly random legal actions: the environment's own ``"random"`` policy."""
from majiang_env.policies import RandomAgent, game_obs

__all__ = ["RandomAgent", "game_obs"]
