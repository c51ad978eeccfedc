"""In-kernel agents, chosen by a code: one dispatcher for ``selfplay``,
``VectorGame.policy_actions``, ``SeatVectorEnv``'s opponents and the arena.

=================  ====  ======================================================
``AGENT_RANDOM``   0     uniform over the legal list (one draw from ``rng``)
``AGENT_GREEDY``   1     ``greedy.greedy_action`` on the seat's observation
=================  ====  ======================================================

Every agent decides for the seat to act, ``row[CUR]``, from what that seat may
see (the greedy policy reads only the observation). ``rng`` is the agent's
splitmix64 stream (``uint64[1]``); ``params`` (float64[NUM_PARAMS]) holds the
agent's parameters (their meaning is the agent's own); ``obs``, ``mask``,
``work`` and ``rows`` are caller-owned buffers (:func:`new_workspace`), so a
decision allocates nothing.
"""
import numpy as np

from ..rules import NUM_ACTIONS, R_CHOW_OFF, R_KUIKAE
from .core import kernel_jit, rand_below, write_mask
from .greedy import W_SIZE, greedy_action
from .layout import CUR, LEGAL, NLEGAL, SIZE
from .observe import OBS_SIZE, observe

AGENT_RANDOM = 0
AGENT_GREEDY = 1
AGENT_CODES = {"random": AGENT_RANDOM, "greedy": AGENT_GREEDY}
NUM_PARAMS = 8      # length of an agent's parameter vector
NUM_ROWS = 4        # scratch state rows of a workspace (for agents that simulate)


@kernel_jit
def new_workspace():
    """The buffers one thread needs to run any in-kernel agent: (obs, mask, work, rows)."""
    return (np.zeros(OBS_SIZE, np.int16), np.zeros(NUM_ACTIONS, np.int8), np.zeros(W_SIZE, np.int64),
            np.zeros((NUM_ROWS, SIZE), np.int32))


@kernel_jit
def agent_action(row, rules, wt, code, rng, dt, params, obs, mask, work, rows):
    """The action of in-kernel agent ``code`` for the seat to act in ``row``
    (which must have a legal action). ``dt`` is the deficiency table (greedy)."""
    if code == AGENT_GREEDY:
        p = row[CUR]
        observe(row, rules, p, obs)
        write_mask(row, mask)
        return greedy_action(obs, mask, rng, dt, rules[R_CHOW_OFF], rules[R_KUIKAE], work)
    return row[LEGAL + rand_below(rng, 0, row[NLEGAL])]
