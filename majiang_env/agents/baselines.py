"""The policies the environment itself knows by name: ``"random"``, ``"greedy"`` and ``"pretrained"``.

Each is a callable ``policy(obs) -> action`` over the observation dict
``{"observation": int16[436], "action_mask": int8[156]}`` of the seat to act,
returning a legal action id. A mask of the PettingZoo faces (``majiang_v2``:
157 long, the last id the pass 156) is taken too: the pass is answered when
it is the mask's only legal id (an agent not to act in ``parallel_env()``).
They decide from that dict alone, so they cannot use hidden information.
``"greedy"`` is the compiled policy of ``kernel/greedy.py`` — the same
function ``selfplay(agents=("greedy", ...))`` runs inside the kernel.
``"pretrained"`` is the shipped learned policy (``majiang_env.agents.pretrained``,
numpy only).

``SingleAgentEnv(opponents="greedy")``, ``python -m majiang_env`` and the play
mode resolve names here; the top-level ``agents`` package builds on this module
(``agents.GreedyAgent`` is :class:`GreedyAgent`), never the reverse.
"""
from __future__ import annotations

import inspect
import secrets

import numpy as np

from ..engine import tables
from ..engine.checks import as_seat, is_int, show
from ..engine.kernel.cards import mix64
from ..engine.kernel.greedy import greedy_action, new_work
from ..engine.kernel.observe import OBS_SIZE, first_out_of_range
from ..engine.rules import NUM_ACTIONS, make_rules

__all__ = ["RandomAgent", "GreedyAgent", "POLICIES", "make_policy", "game_obs", "check_observation", "split_pass"]

_MASK_SHAPES = ((NUM_ACTIONS,), (NUM_ACTIONS + 1,))   # the game's ids; the PettingZoo faces' ids and the pass 156


def split_pass(mask):
    """(the mask of the game's ids 0..155, whether the mask holds the pass alone) of an
    action mask: int8[156], or int8[157] of the PettingZoo faces, whose id 156 is the
    pass of an agent not to act (``majiang_env.majiang_v2.PASS_ACTION``)."""
    mask = np.asarray(mask)
    if mask.shape == (NUM_ACTIONS + 1,):
        head = mask[:NUM_ACTIONS]
        return head, bool(mask[NUM_ACTIONS]) and not head.any()
    return mask, False


def check_observation(obs, who: str = "policy"):
    """The (observation int16[OBS_SIZE], mask int8[NUM_ACTIONS]) of an observation
    dict, or ValueError if it is not one the environment could have produced
    (wrong shape, or values outside a segment's range): the compiled policies
    index tables with these values."""
    if not isinstance(obs, dict) or "observation" not in obs or "action_mask" not in obs:
        raise ValueError(f"{who}: expected an observation dict with 'observation' and 'action_mask', "
                         f"got {type(obs).__name__}")
    o, m = np.asarray(obs["observation"]), np.asarray(obs["action_mask"])
    if o.shape != (OBS_SIZE,) or m.shape not in _MASK_SHAPES or o.dtype.kind not in "iu" \
            or m.dtype.kind not in "iub":
        raise ValueError(f"{who}: expected an integer observation ({OBS_SIZE},) and mask ({NUM_ACTIONS},) "
                         f"or ({NUM_ACTIONS + 1},), "
                         f"got {o.dtype} {o.shape} and {m.dtype} {m.shape}")
    o16 = np.ascontiguousarray(o, np.int16)
    if not np.array_equal(o16, o):
        raise ValueError(f"{who}: observation values must fit int16")
    i = int(first_out_of_range(o16))
    if i >= 0:
        raise ValueError(f"{who}: observation value {show(np.asarray(obs['observation'])[i])} at index {i} "
                         "is outside what the environment produces (see kernel/observe.py)")
    return o16, np.ascontiguousarray(m[:NUM_ACTIONS] != 0, np.int8)


def game_obs(game, seat=None):
    """The AEC observation dict of ``seat`` (default: the player to act) of a ``Game``."""
    seat = game.current_player if seat is None else as_seat(seat)
    mask = game.legal_mask() if seat == game.current_player else np.zeros(NUM_ACTIONS, np.int8)
    return {"observation": game.observe(seat), "action_mask": mask}


class RandomAgent:
    """Picks uniformly among the legal actions of the mask; seeded for repeatability."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs) -> int:
        mask = obs.get("action_mask") if isinstance(obs, dict) else None
        legal = np.flatnonzero(np.asarray(mask).reshape(-1)) if mask is not None else np.zeros(0)
        if legal.size == 0 or np.asarray(mask).shape not in _MASK_SHAPES:
            raise ValueError("RandomAgent: the observation's action_mask has no legal action "
                             f"(expected a ({NUM_ACTIONS},) or ({NUM_ACTIONS + 1},) mask)")
        return int(legal[self.rng.integers(legal.size)])


class GreedyAgent:
    """Wins when it can, else keeps the lowest deficiency, ties by acceptance, then seeded.

    Decides from the observation dict alone (the same compiled function as
    ``selfplay(agents=("greedy", ...))``; its exact definition is the docstring
    of ``majiang_env.engine.kernel.greedy``). ``rules`` (a ``RuleConfig``, dict or None
    for the defaults) supplies the two rule fields the observation does not
    carry: ``chow_from`` and ``kuikae``. ``rng`` is the agent's splitmix64 state
    (a ``uint64[1]`` array) and may be shared or replaced.
    """

    def __init__(self, seed=None, rules=None):
        rules = make_rules(rules)
        self.chow_off = 1 if rules.chow_from == "next" else 3
        self.kuikae = int(rules.kuikae)
        if seed is not None and not is_int(seed):
            raise ValueError(f"seed must be an int or None, got {show(seed)}")
        seed = secrets.randbits(64) if seed is None else int(seed) % 2 ** 64
        self.rng = np.array([mix64(np.uint64(seed))], np.uint64)
        self._dt = tables.deficiency_table()
        self._work = new_work()

    def __call__(self, obs) -> int:
        o, m = check_observation(obs, "GreedyAgent")
        a = greedy_action(o, m, self.rng, self._dt, self.chow_off, self.kuikae, self._work)
        if a < 0 and split_pass(obs["action_mask"])[1]:
            return NUM_ACTIONS   # the pass of an agent not to act (PettingZoo faces)
        if a < 0:
            raise ValueError("GreedyAgent: the action mask has no legal action")
        return int(a)


def PretrainedAgent(seed=None, rules=None):
    """The shipped learned policy (``majiang_env.agents.pretrained.PretrainedAgent``; numpy only)."""
    from .pretrained import PretrainedAgent as _Pretrained
    return _Pretrained(seed, rules=rules)


POLICIES = {"random": RandomAgent, "greedy": GreedyAgent, "pretrained": PretrainedAgent}


def make_policy(spec, seed=None, rules=None):
    """A policy from a name (``"random"``, ``"greedy"``) or a class / factory
    ``f(seed)``, seeded with ``seed``; ``rules`` is passed on when ``f`` takes it."""
    if isinstance(spec, str):
        if spec not in POLICIES:
            raise ValueError(f"unknown agent name {show(spec)}; known: {sorted(POLICIES)}")
        spec = POLICIES[spec]
    if not callable(spec):
        raise ValueError(f"an agent spec must be a name, a class or a factory, not {show(spec)}")
    try:
        takes_rules = "rules" in inspect.signature(spec).parameters
    except (TypeError, ValueError):
        takes_rules = False
    return spec(seed, rules=rules) if takes_rules else spec(seed)
