"""Greedy baseline: lowest deficiency (shanten-like), compiled; see
``majiang_env.kernel.agents`` for the policy's exact definition."""
import secrets

import numpy as np

from majiang_env import tables
from majiang_env.kernel.agents import greedy_action, new_work
from majiang_env.kernel.core import mix64
from majiang_env.kernel.observe import OBS_SIZE
from majiang_env.rules import NUM_ACTIONS, make_rules


class GreedyAgent:
    """Wins when it can, else keeps the lowest deficiency, ties by acceptance, then seeded.

    Decides from the observation dict alone (the same compiled function as
    ``selfplay(agents=("greedy", ...))``). ``rules`` (a ``RuleConfig``, dict or
    None for the defaults) supplies the two rule fields the observation does not
    carry: ``chow_from`` and ``kuikae``. ``rng`` is the agent's splitmix64 state
    (a ``uint64[1]`` array) and may be shared or replaced.
    """

    def __init__(self, seed=None, rules=None):
        rules = make_rules(rules)
        self.chow_off = 1 if rules.chow_from == "next" else 3
        self.kuikae = int(rules.kuikae)
        seed = secrets.randbits(64) if seed is None else int(seed) % 2 ** 64
        self.rng = np.array([mix64(np.uint64(seed))], np.uint64)
        self._dt = tables.deficiency_table()
        self._work = new_work()

    def __call__(self, obs) -> int:
        o = np.ascontiguousarray(obs["observation"], np.int16)
        m = np.ascontiguousarray(obs["action_mask"], np.int8)
        if o.shape != (OBS_SIZE,) or m.shape != (NUM_ACTIONS,):
            raise ValueError(f"GreedyAgent: expected observation ({OBS_SIZE},) and mask "
                             f"({NUM_ACTIONS},), got {o.shape} and {m.shape}")
        a = greedy_action(o, m, self.rng, self._dt, self.chow_off, self.kuikae, self._work)
        if a < 0:
            raise ValueError("GreedyAgent: the action mask has no legal action")
        return int(a)
