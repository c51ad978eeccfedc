"""The Python forms of the baseline agents, ``"random"`` and ``"greedy"``.

Each is a callable ``agent(obs) -> action`` over the observation dict
``{"observation": int16[436], "action_mask": int8[156]}`` of the seat to act,
and batched, ``agent.act_batch(obs, mask)`` (the registry's protocol,
``majiang_env.agents``). A mask of the PettingZoo faces (``majiang_v2``: 157
long, the last id the pass 156) is taken too: the pass is answered when it is
the mask's only legal id (an agent not to act in ``parallel_env()``). They
decide from that alone, so they cannot use hidden information. ``GreedyAgent``
is the compiled policy of ``kernel/greedy.py``, the same function the kernel
runs for the name ``"greedy"``.
"""
from __future__ import annotations

import secrets

import numpy as np

from ..engine import tables
from ..engine.checks import as_seat, is_int, show
from ..engine.kernel.cards import mix64
from ..engine.kernel.greedy import greedy_action, new_work
from ..engine.kernel.observe import OBS_SIZE, first_out_of_range
from ..engine.rules import NUM_ACTIONS, make_rules

__all__ = ["RandomAgent", "GreedyAgent", "game_obs", "check_observation", "split_pass"]

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
    """Picks uniformly among the legal actions of the mask; seeded for repeatability.
    (The registry's ``"random"`` runs the kernel's version where a face can; this
    class is its Python form.)"""
    obs_type = "compact"

    def __init__(self, seed=None, rules=None):
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs) -> int:
        mask = obs.get("action_mask") if isinstance(obs, dict) else None
        legal = np.flatnonzero(np.asarray(mask).reshape(-1)) if mask is not None else np.zeros(0)
        if legal.size == 0 or np.asarray(mask).shape not in _MASK_SHAPES:
            raise ValueError("RandomAgent: the observation's action_mask has no legal action "
                             f"(expected a ({NUM_ACTIONS},) or ({NUM_ACTIONS + 1},) mask)")
        return int(legal[self.rng.integers(legal.size)])

    def act_batch(self, obs, mask) -> np.ndarray:
        """int64 (n,): one uniform legal action per row of ``mask`` (n, 156)."""
        m = _batch_mask(mask, obs, "RandomAgent")
        counts = m.sum(1)
        pick = (self.rng.random(len(m)) * counts).astype(np.int64)
        return (np.cumsum(m, 1) > pick[:, None]).argmax(1).astype(np.int64)


def _batch_mask(mask, obs, who) -> np.ndarray:
    """``mask`` as bool (n, 156) with a legal action in every row, or ValueError."""
    m = np.asarray(mask)
    if m.ndim != 2 or m.shape[1] != NUM_ACTIONS or len(np.asarray(obs)) != len(m):
        raise ValueError(f"{who}.act_batch: expected obs (n, ...) and mask (n, {NUM_ACTIONS}), "
                         f"got {np.shape(obs)} and {m.shape}")
    m = m != 0
    if not m.any(1).all():
        raise ValueError(f"{who}.act_batch: row {int(np.flatnonzero(~m.any(1))[0])} of the mask has no legal action")
    return m


class GreedyAgent:
    """Wins when it can, else keeps the lowest deficiency, ties by acceptance, then seeded.

    Decides from the observation dict alone (the same compiled function as
    ``selfplay(agents=("greedy", ...))``; its exact definition is the docstring
    of ``majiang_env.engine.kernel.greedy``). ``rules`` (a ``RuleConfig``, dict or None
    for the defaults) supplies the two rule fields the observation does not
    carry: ``chow_from`` and ``kuikae``. ``rng`` is the agent's splitmix64 state
    (a ``uint64[1]`` array) and may be shared or replaced. (The registry's
    ``"greedy"`` runs the kernel's version where a face can; this class is its
    Python form.)
    """
    obs_type = "compact"

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

    def act_batch(self, obs, mask) -> np.ndarray:
        """int64 (n,): the greedy action of each row (compact observations (n, 436))."""
        m = _batch_mask(mask, obs, "GreedyAgent")
        return np.array([self({"observation": o, "action_mask": r.astype(np.int8)})
                         for o, r in zip(np.asarray(obs), m, strict=True)], np.int64)
