"""Running resolved agents (``registry.AgentRef``) on the states of a face.

* :func:`kernel_actions`: in-kernel agents for rows of a state array, in one
  compiled call (``VectorGame.policy_actions``, ``selfplay``, ``SeatVectorEnv``).
* :func:`python_actions`: a batched Python agent for rows of observations, its
  answers checked (every face that runs Python agents).
* :class:`GamePlayer`: any agent deciding for the player to act in a ``Game``
  (``SingleAgentEnv``'s opponents, ``watch`` and ``play``).
"""
from __future__ import annotations

import secrets

import numpy as np

from . import tables
from .checks import as_seed, is_int, show
from .encodings import make_encoder
from .kernel import batch
from .kernel.cards import mix64
from .kernel.players import LOOP_AGENTS, TABLE_AGENTS
from .registry import KERNEL, WORLD, AgentError, BadAnswer, resolve
from .rules import NUM_ACTIONS, make_rules
from .threads import current_threads

__all__ = ["GamePlayer", "kernel_actions", "python_actions", "needs_table"]


def needs_table(codes) -> bool:
    """Whether in-kernel agents ``codes`` read the deficiency table."""
    return bool(np.isin(np.asarray(codes), TABLE_AGENTS).any())


def kernel_actions(st, rules, wt, rows, codes, params, rngs, dt, out, wss, parallel):
    """out[i] = the action of in-kernel agent codes[i] (parameters params[i]) for the
    seat to act in slot rows[i] of the state ``st``, on the slot's agent stream
    rngs[b, 0], in row order: through ``batch.batch_loop_actions`` when every agent
    is a loop agent, else ``batch.batch_agent_actions`` (which compiles the search
    agent: ``kernel/players.py``). The arrays are the caller's own (a face's
    buffers), not checked: ``rows`` must index slots of ``st`` whose seat to act
    has a legal action."""
    if np.isin(codes, LOOP_AGENTS).all():
        run = batch.batch_loop_actions if parallel else batch.batch_loop_actions_serial
        run(st, rules, rows, codes, rngs, dt, out, wss)
    else:
        run = batch.batch_agent_actions if parallel else batch.batch_agent_actions_serial
        run(st, rules, wt, rows, codes, params, rngs, dt, out, wss)


class Encoders:
    """The float encoders agents ask for (``obs_type``), made once per face."""

    def __init__(self, rules):
        self.rules = rules
        self._made = {}

    def encode(self, obs_type, obs, mask):
        if obs_type in (None, "compact"):
            return obs
        enc = self._made.get(obs_type)
        if enc is None:
            enc = self._made[obs_type] = make_encoder(obs_type, self.rules)
        return enc.batch(obs, mask)


def python_actions(agent, name, obs, mask, encoders=None, context=None, own=None) -> np.ndarray:
    """int64 (n,): the answers of batched Python ``agent`` (``act_batch``) for
    compact observations ``obs`` (n, 436) and masks ``mask`` (n, 156). The agent
    gets the encoding its ``obs_type`` names (made from ``obs`` by ``encoders``);
    one without ``obs_type`` gets the face's own rows ``own`` (default ``obs``).
    Each answer must be a legal id of its row: else :class:`AgentError` naming
    ``name``, the row (``context(i)``: where it is) and the legal ids."""
    n = len(obs)
    kind = getattr(agent, "obs_type", None)
    if kind is None:
        x = obs if own is None else own
    else:
        x = obs if encoders is None else encoders.encode(kind, obs, mask)
    try:
        out = agent.act_batch(x, mask)
    except BadAnswer as e:
        i = e.row
        where = f" {context(i)}" if context is not None else f" (row {i})"
        raise AgentError(f"agent {show(name)} chose {show(e.value, 60)} ({type(e.value).__name__}), not a legal "
                         f"action,{where}; legal ids {np.flatnonzero(mask[i]).tolist()}") from None
    except Exception as e:
        if hasattr(e, "add_note"):
            e.add_note(f"(raised by agent {show(name)})")
        raise
    try:
        a = np.asarray(out)    # a plain array: a subclass (masked, matrix) hides nothing from the checks
    except (ValueError, TypeError, OverflowError):   # ragged or mixed nests
        a = None
    if a is not None and type(a) is not np.ndarray:
        a = np.array(a)
    if a is None or a.shape != (n,) or a.dtype.kind not in "iu":
        got = (f"{a.dtype} {a.shape}" if a is not None else f"a ragged {type(out).__name__}") + f": {show(out, 60)}"
        got += f"; legal ids of row 0: {np.flatnonzero(mask[0]).tolist()}" if n else ""
        raise AgentError(f"agent {show(name)} must answer with integer actions of shape ({n},), got {got}")
    ok = (a >= 0) & (a < NUM_ACTIONS)
    ok[ok] = mask[np.flatnonzero(ok), a[ok]] != 0
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        where = f" {context(i)}" if context is not None else f" (row {i})"
        raise AgentError(f"agent {show(name)} chose {show(a[i])}, not a legal action,{where}; legal ids "
                         f"{np.flatnonzero(mask[i]).tolist()}")
    return a.astype(np.int64)


def world_action(agent, name, world, seat, legal) -> int:
    """The answer of a world agent for ``seat`` in ``world``, checked against ``legal``."""
    try:
        a = agent.act_world(world, seat)
    except Exception as e:
        if hasattr(e, "add_note"):
            e.add_note(f"(raised by agent {show(name)})")
        raise
    if isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "iu":
        a = a[()]
    if not is_int(a) or int(a) not in legal:
        raise AgentError(f"agent {show(name)} chose {show(a, 60)} ({type(a).__name__}), not a legal action "
                         f"of seat {seat}; legal ids {sorted(legal)}")
    return int(a)


class GamePlayer:
    """Any agent spec deciding for the player to act in a ``Game``: an in-kernel agent on
    the game's state row (its own random stream, seeded), a batched Python agent on
    the player's observation, a world agent on a world sampled from what the player
    cannot see. ``player(game) -> action``, always legal (else :class:`AgentError`)."""

    def __init__(self, spec, seed=None, rules=None, where: str = "agent"):
        self.ref = resolve(spec, where)
        self.name = self.ref.name
        self.rules = make_rules(rules)
        seed = secrets.randbits(64) if seed is None else as_seed(seed)
        self._worlds = np.random.default_rng(seed)
        self.agent = None
        if self.ref.kind == KERNEL:
            code, params = self.ref.kernel
            self._codes, self._params = np.array([code], np.int32), params[None].copy()
            self._rngs = np.array([[mix64(np.uint64(seed)), 0]], np.uint64)
            self._arr = self.rules.to_array(True)
            self._wt = tables.win_table()
            self._dt = tables.deficiency_table() if needs_table(self._codes) else np.zeros((1, tables.DEF_COLS),
                                                                                         np.uint16)
            self._wss = batch.thread_workspaces()
        else:
            self.agent = self.ref.build(seed, self.rules)
            self._encoders = Encoders(self.rules)

    def __call__(self, game) -> int:
        seat = game.current_player
        if self.ref.kind == KERNEL:
            out = np.empty(1, np.int64)
            kernel_actions(np.array(game.state)[None], self._arr, self._wt, np.zeros(1, np.int64), self._codes,
                           self._params, self._rngs, self._dt, out, self._wss, False)
            return int(out[0])
        if self.ref.kind == WORLD:
            world = game.sample_hidden(seat, int(self._worlds.integers(2 ** 63)))
            return world_action(self.agent, self.name, world, seat, set(game.legal_actions()))
        a = python_actions(self.agent, self.name, game.observe(seat)[None], game.legal_mask()[None],
                           self._encoders, lambda i: f"(seat {seat})")
        return int(a[0])

    def __repr__(self):
        return f"GamePlayer({self.name!r}, {self.ref.kind})"


def parallel_ok(num_threads, n) -> bool:
    """Whether a call over ``n`` rows is worth numba's threads (``num_threads``: the face's setting)."""
    return (num_threads or current_threads()) > 1 and n > 1
