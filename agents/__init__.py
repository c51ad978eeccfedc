"""Agents for majiang_env.

Every agent is a callable ``agent(obs) -> action`` over a PettingZoo observation
dict ``{"observation": ..., "action_mask": ...}`` and returns a legal action id.
With a bare ``Game``, build the dict with :func:`game_obs`. ``PretrainedAgent``
is the shipped learned policy (numpy only; trained by ``agents.train_strong``).
"""
from majiang_env.pretrained import PretrainedAgent

from .random_agent import RandomAgent, game_obs
from .greedy_agent import GreedyAgent

__all__ = ["RandomAgent", "GreedyAgent", "PretrainedAgent", "game_obs"]
