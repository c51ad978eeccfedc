"""Greedy baseline: lowest deficiency (shanten-like), compiled. It is the environment's
own ``"greedy"`` policy, ``majiang_env.policies.GreedyAgent``; its exact definition is
the docstring of ``majiang_env.kernel.greedy``."""
from majiang_env.policies import GreedyAgent

__all__ = ["GreedyAgent"]
