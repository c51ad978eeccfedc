"""In-kernel agents, chosen by a code: one dispatcher for ``selfplay``,
``VectorGame.policy_actions``, ``SeatVectorEnv``'s opponents and the arena.

=================  ====  ======================================================
``AGENT_RANDOM``   0     uniform over the legal list (one draw from ``rng``)
``AGENT_GREEDY``   1     ``greedy.greedy_action`` on the seat's observation
``AGENT_SEARCH``   2     ``search.search_action``: determinized rollouts with the
                         greedy policy (parameters ``search.P_*``)
=================  ====  ======================================================

The batch loops (``batch.selfplay_kernel``, ``learner``'s opponents,
``batch.batch_loop_actions``) play the **loop agents** (random, greedy) themselves
through :func:`loop_action`; a seat of any other agent (search) makes the loop
stop and hand the slot back to Python, which decides for all such slots at once
with ``batch.batch_agent_actions`` (:func:`agent_action`: every agent) and
resumes the loop. The loops' compiled code then holds only the cheap agents:
numba compiles the search agent (about four times the code of the rest) only
for the kernels that call it, and only when a search agent plays.

Every agent decides for the seat to act, ``row[CUR]``, from what that seat may
see (the greedy policy reads only the observation). ``rng`` is the agent's
splitmix64 stream (``uint64[1]``); ``params`` (float64[NUM_PARAMS]) holds the
agent's parameters (their meaning is the agent's own); ``obs``, ``mask``,
``work`` and ``rows`` are caller-owned buffers (:func:`new_workspace`), so a
decision allocates nothing.

From Python, :func:`agent_params` turns an agent's named parameters
(:data:`AGENT_PARAMS`) into its parameter vector, checking them.
"""
import numpy as np
from numba import njit

from ..checks import show
from ..rules import NUM_ACTIONS, R_CHOW_OFF, R_KUIKAE
from .cards import rand_below
from .greedy import W_SIZE, greedy_action
from .jit import kernel_jit
from .layout import CUR, LEGAL, NLEGAL, SIZE
from .legal import write_mask
from .observe import OBS_SIZE, observe
from .search import (
    DEFAULT_BUDGET,
    DEFAULT_CONFIDENCE,
    DEFAULT_OPPONENTS,
    DEFAULT_SAMPLES,
    DEFAULT_WIDTH,
    P_BUDGET,
    P_CONFIDENCE,
    P_OPPONENTS,
    P_SAMPLES,
    P_SEARCH_WINS,
    P_WIDTH,
    search_action,
)

AGENT_RANDOM = 0
AGENT_GREEDY = 1
AGENT_SEARCH = 2
AGENT_PYTHON = -1   # a seat played by a Python agent: the loops hand it back (not an in-kernel agent)
AGENT_CODES = {"random": AGENT_RANDOM, "greedy": AGENT_GREEDY, "search": AGENT_SEARCH}
TABLE_AGENTS = (AGENT_GREEDY, AGENT_SEARCH)   # the agents that read the deficiency table
LOOP_AGENTS = (AGENT_RANDOM, AGENT_GREEDY)    # the agents the batch loops play themselves (loop_action)
NUM_PARAMS = 8      # length of an agent's parameter vector
NUM_ROWS = 4        # scratch state rows of a workspace (for agents that simulate)

# name -> {parameter: (index in the vector, default, lowest, highest)}, or for a
# choice (index, default, choices, None), stored as 1 + the choice's position (0
# means the default); None as a value means "no cap" for budget and "every legal
# action" for width
AGENT_PARAMS = {
    "random": {},
    "greedy": {},
    "search": {"samples": (P_SAMPLES, DEFAULT_SAMPLES, 1, 100_000),
               "budget": (P_BUDGET, DEFAULT_BUDGET, 1, 2 ** 50),
               "search_wins": (P_SEARCH_WINS, False, False, True),
               "confidence": (P_CONFIDENCE, DEFAULT_CONFIDENCE, 0.0, 100.0),
               "width": (P_WIDTH, DEFAULT_WIDTH, 0, 35),
               "opponents": (P_OPPONENTS, ("", "uniform", "greedy")[DEFAULT_OPPONENTS], ("uniform", "greedy"), None)},
}


def agent_params(name, options=None) -> np.ndarray:
    """The parameter vector (float64[NUM_PARAMS]) of agent ``name`` from a dict of
    its named parameters (``AGENT_PARAMS[name]``; missing ones take their
    defaults). search (``kernel/search.py``): ``samples`` (int >= 1),
    ``budget`` (int >= 1 rollout decisions per decision, or None for no cap),
    ``search_wins`` (bool), ``confidence`` (z >= 0 of the bound that must clear
    the greedy action), ``width`` (int >= 0 deficiency slack of the candidates,
    or None for every legal action), ``opponents`` ("uniform" or "greedy": the
    model of the other seats' hidden hands). Raises ValueError for an unknown
    agent, parameter or value."""
    if name not in AGENT_PARAMS:
        raise ValueError(f"unknown agent {show(name)}; agents are {sorted(AGENT_PARAMS)}")
    spec = AGENT_PARAMS[name]
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ValueError(f"parameters of agent {name!r} must be a dict, got {type(options).__name__}")
    unknown = set(options) - set(spec)
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(show(k) for k in options if k not in spec)} "
                         f"for agent {name!r}; "
                         f"it takes {sorted(spec) or 'none'}")
    v = np.zeros(NUM_PARAMS, np.float64)
    for key, (i, default, lo, hi) in spec.items():
        x = options.get(key, default)
        if key in ("budget", "width") and x is None:
            v[i] = -1  # no cap / every legal action
            continue
        if isinstance(lo, tuple):
            if not isinstance(x, str) or x not in lo:
                raise ValueError(f"{name} parameter {key!r} must be one of {lo}, got {show(x)}")
            v[i] = 1 + lo.index(x)
            continue
        if isinstance(lo, bool):
            if not isinstance(x, (bool, np.bool_)):
                raise ValueError(f"{name} parameter {key!r} must be True or False, got {show(x)}")
        elif isinstance(lo, float):
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)) \
                    or not lo <= x <= hi:
                raise ValueError(f"{name} parameter {key!r} must be a number in {lo}..{hi}, got {show(x)}")
            x = max(float(x), 1e-12)  # 0 in the vector means "the default"
        elif isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or not lo <= x <= hi:
            raise ValueError(f"{name} parameter {key!r} must be an int in {lo}..{hi}"
                             + (" or None" if key in ("budget", "width") else "") + f", got {show(x)}")
        v[i] = float(x) + (key == "width")  # width w is stored as w + 1: 0 means the default
    return v


@njit(cache=True)
def new_workspace():
    """The buffers one thread needs to run any in-kernel agent: (obs, mask, work, rows)."""
    return (np.zeros(OBS_SIZE, np.int16), np.zeros(NUM_ACTIONS, np.int8), np.zeros(W_SIZE, np.int64),
            np.zeros((NUM_ROWS, SIZE), np.int32))


@kernel_jit
def loop_action(row, rules, code, rng, dt, obs, mask, work):
    """The action of loop agent ``code`` (``LOOP_AGENTS``) for the seat to act in
    ``row`` (which must have a legal action); ``dt`` is the deficiency table (greedy)."""
    if code == AGENT_GREEDY:
        observe(row, rules, row[CUR], obs)
        write_mask(row, mask)
        return greedy_action(obs, mask, rng, dt, rules[R_CHOW_OFF], rules[R_KUIKAE], work)
    return row[LEGAL + rand_below(rng, 0, row[NLEGAL])]


@kernel_jit
def agent_action(row, rules, wt, code, rng, dt, params, obs, mask, work, rows):
    """The action of in-kernel agent ``code`` (any of ``AGENT_CODES``) for the seat
    to act in ``row`` (which must have a legal action). ``dt`` is the deficiency
    table (greedy, search)."""
    if code == AGENT_SEARCH:
        return search_action(row, rules, wt, rng, dt, params, obs, mask, work, rows)
    return loop_action(row, rules, code, rng, dt, obs, mask, work)
