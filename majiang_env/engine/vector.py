"""``VectorGame``: B games stepped together by one compiled call, and ``selfplay``.

Autoreset is Gymnasium 1.x's *same-step* mode: when game i finishes during
``step``, ``done[i]`` and ``rewards[i]`` belong to the finished game, while the
returned ``obs[i]``, ``mask[i]`` and ``player[i]`` are already those of the
next game in slot i. Slot i plays games i, i + B, i + 2B, ... and game j uses
``game_seed(seed, j)``, so game i of ``VectorGame(seed=s)`` equals
``Game(seed=game_seed(s, i))`` whatever ``num_envs`` is.

Threads: a batch of at least ``PARALLEL_MIN_ENVS`` games is split over numba's
threads (``prange``), all of them by default; smaller ones run on the calling
thread. Each ``step`` is one short parallel region that waits for its slowest
thread, so on a machine whose cores are busy with other work (a learner's
threads, other processes) ``num_threads=1`` can be several times faster.
"""
from __future__ import annotations

import time

import numpy as np

from . import tables
from .checks import (
    IllegalActionError,
    ResetNeededError,
    as_bool,
    as_int,
    as_seed,
    in_action_range,
    int_array,
    is_int,
    show,
)
from .encodings import FEAT_SIZE, check_obs_type, encoded_size
from .game import Game, game_from_state
from .kernel import batch
from .kernel import layout as L
from .kernel.fullstate import STATE_SIZE, full_states
from .kernel.observe import OBS_SIZE
from .kernel.players import AGENT_CODES, AGENT_PARAMS, LOOP_AGENTS, NUM_PARAMS, TABLE_AGENTS, agent_params
from .kernel.worlds import sample_rows
from .rules import NUM_ACTIONS, NUM_CARDS, make_rules
from .threads import check_threads, current_threads, numba_threads

PARALLEL_MIN_ENVS = 64  # smaller batches are stepped on the calling thread
_NO_TABLE = np.zeros((1, tables.DEF_COLS), np.uint16)   # stands in for the deficiency table when nothing reads it


def game_seed(seed: int, index: int) -> int:
    """The ``Game`` seed of game ``index`` (an int in [0, 2**64)) of a batch started from ``seed``."""
    if seed is None:
        raise ValueError("seed must be an int in 0..2**64-1, got None")
    index = as_int("index", index, 0, 2 ** 64 - 1)
    return int(batch.game_seed(np.uint64(as_seed(seed)), np.uint64(index)))


MAX_ENVS = 2 ** 24  # 16.8M games (about 240 GB of state): anything larger is a mistake


def check_logits(logits, n) -> np.ndarray:
    """``logits`` as a C-contiguous float32 / float64 array of shape (n, 156), or ValueError."""
    try:
        lg = np.asarray(logits)
    except (TypeError, RuntimeError) as e:   # e.g. a torch tensor that requires grad, or in bfloat16
        raise ValueError(f"logits must be a float array of shape ({n}, {NUM_ACTIONS}): {e}") from e
    if lg.dtype.kind != "f" or lg.shape != (n, NUM_ACTIONS):
        raise ValueError(f"logits must be a float array of shape ({n}, {NUM_ACTIONS}), "
                         f"got {lg.dtype} {lg.shape}")
    if lg.dtype not in (np.float32, np.float64):
        lg = lg.astype(np.float64)
    return np.ascontiguousarray(lg)


def draw_or_restore(run, rngs):
    """``run()`` (a kernel call that draws from ``rngs`` and returns the first row whose
    legal logits hold nan or +inf, or -1); on such a row, every stream is put back
    as it was and ValueError names the row."""
    saved = rngs.copy()
    bad = run()
    if bad >= 0:
        rngs[...] = saved
        raise ValueError(f"logits of row {bad} hold nan or +inf at a legal action")


def sample_logits(st, rows, logits, rngs, parallel=False) -> np.ndarray:
    """``batch.sample_legal`` behind a check of ``logits`` (shared by the vector envs):
    float (len(rows), 156); nan or +inf among a row's legal entries is a ValueError,
    and then no stream has advanced."""
    lg = check_logits(logits, len(rows))
    out = np.empty(len(rows), np.int64)
    draw_or_restore(lambda: (batch.sample_legal_parallel if parallel else batch.sample_legal)(
        st, rows, lg, rngs, out), rngs)
    return out


def _positive_int(name, v, top=MAX_ENVS):
    return as_int(name, v, 1, top)


def _read_only(a):
    v = a.view()
    v.flags.writeable = False
    return v


class VectorGame:
    """B games stepped by one compiled call (docs/api.md "Batched games").

    ``reset()`` -> ``(obs, mask, player)``; ``step(actions)`` -> ``(obs, mask,
    player, rewards, done)``: int16 (B, 436) (``obs_type="features"`` / ``"float"``:
    float32 (B, FEAT_SIZE) / (B, FLOAT_SIZE), ``majiang_env.engine.encodings``), int8 (B, 156), int32 (B,),
    int32 (B, 4), bool (B,). ``obs[i]`` is the observation of the player to act
    in slot i. ``rewards[i]`` holds each seat's points for a hand of slot i that
    closed in this step. The arrays are **read-only views** of the
    object's own buffers (also the attributes ``obs``, ``mask``, ``player``,
    ``rewards``, ``done``, ``game_index``, ``compact``: the compact observation
    also under ``obs_type="features"`` or ``"float"``, and ``hand_closed``: bool (B,), True
    where a hand of the slot closed in the last step, as the kernel reports it),
    overwritten by the next call: copy
    what you keep. Actions are checked against the legal lists held in the
    kernel state, never against these arrays, so nothing a caller does to them
    can let an illegal action through.
    """

    def __init__(self, num_envs: int, rules=None, seed: int = 0, num_threads=None,
                 obs_type: str = "compact"):
        self.num_envs = B = _positive_int("num_envs", num_envs)
        self.num_threads = check_threads(num_threads)
        self.obs_type = check_obs_type(obs_type)
        self._ready = False
        self.rules = make_rules(rules)
        self.seed = as_seed(seed)
        self._rules = self.rules.to_array(auto_forced=True)
        self._wt = tables.win_table()
        self._st = np.zeros((B, L.SIZE), np.int32)
        self._mask = np.zeros((B, NUM_ACTIONS), np.int8)
        self._compact = np.zeros((B, OBS_SIZE), np.int16)
        width = encoded_size(obs_type)   # the float rows beside the compact ones (0: none)
        self._feat = np.zeros((B if width else 0, width or FEAT_SIZE), np.float32)
        self._obs = self._feat if width else self._compact
        self._player = np.zeros(B, np.int32)
        self._rewards = np.zeros((B, 4), np.int32)
        self._done = np.zeros(B, np.bool_)
        self._hand_closed = np.zeros(B, np.bool_)
        self._game_index = np.zeros(B, np.int64)
        self._actions_taken = np.zeros(B, np.int64)   # sample_step's actions
        self._agent_rng = np.zeros((B, 2), np.uint64)   # each slot's agent and sampling streams
        self._wss = batch.thread_workspaces()
        # the deficiency table, read by the features and the greedy agent (loaded when one needs it)
        self._dt = tables.deficiency_table() if obs_type == "features" else _NO_TABLE
        self._view = (self._mask, self._compact, self._feat, self._player)     # what batch.publish writes
        self._result = (self._rewards, self._done, self._hand_closed)
        for name in ("mask", "obs", "compact", "player", "rewards", "done", "hand_closed", "game_index"):
            setattr(self, name, _read_only(getattr(self, "_" + name)))
        self.actions = _read_only(self._actions_taken)

    def _parallel(self) -> bool:
        """Use numba's threads only for batches big enough to pay for waking them."""
        threads = self.num_threads or current_threads()
        return threads > 1 and self.num_envs >= PARALLEL_MIN_ENVS

    @property
    def state_bytes_per_game(self) -> int:
        per_game = [a[0].nbytes for a in (self._st, self._mask, self._compact, self._player, self._rewards,
                                          self._done, self._hand_closed, self._game_index, self._agent_rng,
                                          self._actions_taken)]
        return sum(per_game) + (self._feat[0].nbytes if len(self._feat) else 0)

    def reset(self):
        """Start games 0..B-1 of the run again."""
        reset = batch.batch_reset if self._parallel() else batch.batch_reset_serial
        with numba_threads(self.num_threads):
            reset(self._st, self._rules, self._wt, self._dt, self._view, self._game_index, self._agent_rng,
                  np.uint64(self.seed), self._wss)
        self._ready = True
        return self.obs, self.mask, self.player

    def _actions(self, actions):
        """``actions`` as int64 (B,), each legal in its slot, or IllegalActionError."""
        if isinstance(actions, (list, tuple)) and len(actions) == self.num_envs:
            actions = self._list_actions(actions)
        a = int_array("actions", actions, IllegalActionError)
        if a.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must be an integer array of shape ({self.num_envs},), "
                                     f"got {a.dtype} {a.shape}")
        a64 = a.astype(np.int64)  # uint64 ids past 2**63 wrap negative: never legal
        i = int(batch.first_illegal(self._st, a64))
        if i >= 0:
            s = L.StateView(self._st[i])
            legal = s.legal[:s.num_legal].tolist()
            raise IllegalActionError(f"action {a[i]!r} is not legal in env {i} (seat {int(s.to_act)}); "
                                     f"legal ids {legal}")
        return a64

    def _list_actions(self, actions) -> np.ndarray:
        """A list of B actions as int64: each entry an int (numpy ints and 0-d
        integer arrays too; not bool), else IllegalActionError naming the env."""
        out = np.empty(self.num_envs, np.int64)
        for i, v in enumerate(actions):
            if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu":
                v = v[()]
            if not is_int(v):
                raise IllegalActionError(f"actions[{i}] (env {i}) must be an int, got {show(v, 80)} "
                                         f"({type(v).__name__})")
            if not in_action_range(int(v)):
                raise IllegalActionError(f"action {show(v)} is not legal in env {i}: "
                                         f"action ids are 0..{NUM_ACTIONS - 1}")
            out[i] = v
        return out

    def step(self, actions):
        """Apply one legal action per slot (for the player to act there).

        ``actions``: integers of shape (B,). Any entry that is not legal in its
        slot raises ``IllegalActionError`` naming the slot, and no game changes.
        """
        if not self._ready:
            raise ResetNeededError("call reset() before step()")
        a = self._actions(actions)
        step = batch.batch_step if self._parallel() else batch.batch_step_serial
        with numba_threads(self.num_threads):
            step(self._st, self._rules, self._wt, self._dt, self._view, self._result, self._game_index,
                 self._agent_rng, a, np.uint64(self.seed), self._wss)
        return self.obs, self.mask, self.player, self.rewards, self.done

    def sample_step(self, logits):
        """``step(sample_actions(logits))`` in one compiled call: a legal action per slot
        drawn in the kernel from ``logits`` (float (B, 156), as in
        :meth:`sample_actions`; the same draws from the same streams), then the step.
        Returns ``(actions, obs, mask, player, rewards, done)``: the int64 actions taken
        (a read-only view, also the attribute ``actions``) and what ``step`` returns.
        nan or +inf at a legal id of any row raises ValueError, and nothing changes."""
        if not self._ready:
            raise ResetNeededError("call reset() before sample_step()")
        lg = check_logits(logits, self.num_envs)
        run = batch.batch_sample_step if self._parallel() else batch.batch_sample_step_serial
        draws = np.empty(self.num_envs, np.int64)   # ``actions`` changes only when the step is taken
        with numba_threads(self.num_threads):
            draw_or_restore(lambda: run(self._st, self._rules, self._wt, self._dt, self._view, self._result,
                                        self._game_index, self._agent_rng, lg, draws,
                                        np.uint64(self.seed), self._wss), self._agent_rng)
        self._actions_taken[:] = draws
        return self.actions, self.obs, self.mask, self.player, self.rewards, self.done

    def policy_actions(self, agent, rows=None) -> np.ndarray:
        """The actions an in-kernel agent (a name of ``AGENTS``: ``"random"``,
        ``"greedy"``, ``"search"``, or a pair ``(name, parameters)`` such as
        ``("search", {"samples": 8})``, see :func:`agent_spec`) chooses for the
        player to act in slots ``rows`` (default: every slot), as int64.

        The agent decides from what that player may see, as ``selfplay``'s agents
        do, and draws from the slot's own agent stream, which restarts with each
        game: if every decision of a game is taken this way, the game equals the
        one ``selfplay`` plays with the same agents and seed. ``agent`` may also
        be a list with one agent per row.
        """
        if not self._ready:
            raise ResetNeededError("call reset() before policy_actions()")
        rows = self._rows(rows)
        one = isinstance(agent, str) or (isinstance(agent, tuple) and len(agent) == 2
                                         and isinstance(agent[1], dict))
        specs = [agent] * len(rows) if one else list(agent) if isinstance(agent, (list, tuple)) else None
        if specs is None or len(specs) != len(rows):
            raise ValueError(f"agent must be one of {sorted(AGENTS)}, a pair (name, parameters), or a list of "
                             f"such agents, one per row ({len(rows)} rows), got {show(agent, 200)}")
        if one:
            code, vec = agent_spec(agent)
            codes = np.full(len(rows), code, np.int32)
            params = np.tile(vec, (len(rows), 1))
        else:
            pairs = [agent_spec(a, f"agent[{i}]") for i, a in enumerate(specs)]
            codes = np.array([c for c, _ in pairs], np.int32).reshape(len(rows))
            params = np.array([v for _, v in pairs], np.float64).reshape(len(rows), NUM_PARAMS)
        if self._dt is _NO_TABLE and np.isin(codes, TABLE_AGENTS).any():
            self._dt = tables.deficiency_table()
        out = np.empty(len(rows), np.int64)
        with numba_threads(self.num_threads):
            _in_kernel_actions(self._st, self._rules, self._wt, rows, codes, params, self._agent_rng, self._dt,
                               out, self._wss, self._parallel() and len(rows) > 1)
        return out

    def sample_actions(self, logits, rows=None) -> np.ndarray:
        """Legal actions drawn in the kernel from a policy's logits: for each slot of
        ``rows`` (default: all), softmax over that slot's legal actions only
        (on the slot's own sampling stream, which restarts with each game;
        ``kernel.batch.sample_legal``). ``logits``: float (len(rows), 156); the entries of illegal actions
        are never read, so the caller need not mask them. Returns int64 actions
        for ``step``; nothing else changes."""
        if not self._ready:
            raise ResetNeededError("call reset() before sample_actions()")
        rows = self._rows(rows)
        with numba_threads(self.num_threads):
            return sample_logits(self._st, rows, logits, self._agent_rng, self._parallel())

    def full_states(self) -> np.ndarray:
        """int16 (B, STATE_SIZE), a new array: the full-information state of each
        slot's game now (``Game.full_state()``, absolute seats). It holds every
        seat's hidden cards: for centralised critics, never for a policy."""
        if not self._ready:
            raise ResetNeededError("call reset() before full_states()")
        out = np.zeros((self.num_envs, STATE_SIZE), np.int16)
        full_states(self._st, self._rules, out)
        return out

    # ---- planning: rows copied or resampled into other rows ----------------------
    def _row_pairs(self, src, dst):
        """(src, dst) as int64 slot arrays of one length (one src slot serves every
        dst slot); dst slots distinct."""
        if not self._ready:
            raise ResetNeededError("call reset() before copying or sampling rows")
        s = self._rows(np.atleast_1d(src) if is_int(src) else src)
        d = self._rows(np.atleast_1d(dst) if is_int(dst) else dst)
        if len(s) == 1:
            s = np.repeat(s, len(d))
        if len(s) != len(d):
            raise ValueError(f"src must name one slot or as many slots as dst, got {len(s)} and {len(d)}")
        if len(np.unique(d)) != len(d):
            raise ValueError(f"dst must name distinct slots, got {d.tolist()}")
        return s, d

    def _republish(self, src, dst):
        """Slots dst continue the games (and agent streams) of src; their views follow."""
        self._game_index[dst] = self._game_index[src]
        self._agent_rng[dst] = self._agent_rng[src]
        self._done[dst] = False
        self._hand_closed[dst] = False
        self._rewards[dst] = 0
        batch.publish_rows(self._st, self._rules, self._dt, self._view, dst, self._wss[2][0])

    def copy_rows(self, src, dst):
        """Slots ``dst`` become copies of slots ``src`` (a slot index or an array of
        them; one ``src`` slot serves every ``dst`` slot; ``dst`` distinct): their games, agent streams and
        views. Stepping a copy never changes its source. Returns ``(obs, mask,
        player)``."""
        s, d = self._row_pairs(src, dst)
        self._st[d] = self._st[s]   # numpy reads every source before it writes
        self._republish(s, d)
        return self.obs, self.mask, self.player

    def sample_hidden(self, src, dst, seat, seed):
        """Slots ``dst`` become worlds that ``seat`` cannot tell from slots ``src``:
        pair k is ``game(src[k]).sample_hidden(seat[k], seed[k])`` (``Game.sample_hidden``),
        in one kernel call. ``seat``: one seat or one per pair; ``seed``: an int
        (pair k uses ``seed + k``) or one int per pair. A planner fills many slots
        with worlds of one slot and plays them out with ``step``. Returns ``(obs,
        mask, player)``."""
        s, d = self._row_pairs(src, dst)
        n = len(s)
        seats = np.broadcast_to(int_array("seat", seat), (n,)) if np.ndim(seat) == 0 else int_array("seat", seat)
        if seats.shape != (n,) or (n and (seats.min() < 0 or seats.max() > 3)):
            raise ValueError(f"seat must be a seat 0..3 or one per pair ({n}), got {show(seat, 80)}")
        if seed is None:
            raise ValueError("sample_hidden needs a seed: an int in [0, 2**64) or one per pair")
        if np.ndim(seed) == 0:
            seeds = [as_seed(seed) + k for k in range(n)]
        else:
            seeds = [as_seed(v) for v in int_array("seed", seed).tolist()]
            if len(seeds) != n:
                raise ValueError(f"seed must be an int or one int per pair ({n}), got {len(seeds)}")
        if max(seeds, default=0) >= 2 ** 64:
            raise ValueError(f"seed + k must stay below 2**64, got {max(seeds)}")
        srcs = self._st[s]          # the sources, read before any slot is written
        sample_rows(srcs, self._rules, self._wt, seats.astype(np.int64), np.array(seeds, np.uint64),
                     self._st, d, np.zeros(NUM_CARDS, np.int32), np.zeros(1, np.uint64))
        self._republish(s, d)
        return self.obs, self.mask, self.player

    def _rows(self, rows) -> np.ndarray:
        """Slot indices as int64 (default: all), each in 0..num_envs-1, or ValueError."""
        if rows is None:
            return np.arange(self.num_envs, dtype=np.int64)
        r = int_array("rows", rows)
        if r.ndim != 1 or (r.size and (r.min() < 0 or r.max() >= self.num_envs)):
            raise ValueError(f"rows must be a 1-d array of slot indices in 0..{self.num_envs - 1}, "
                             f"got shape {r.shape}" + (f", values {r.min()}..{r.max()}" if r.size else ""))
        return r.astype(np.int64)

    def _slot(self, i) -> int:
        if not self._ready:
            raise ResetNeededError("call reset() before reading a game of the batch")
        return as_int("env index", i, 0, self.num_envs - 1)

    def game(self, i) -> Game:
        """A ``Game`` copy of slot ``i``'s current game (i in 0..num_envs-1)."""
        i = self._slot(i)
        return game_from_state(self._st[i], self.rules, game_seed(self.seed, int(self._game_index[i])))

    def record(self, i) -> dict:
        """The ``majiang-record/1`` record of slot ``i``'s current game so far."""
        return self.game(i).record()


AGENTS = dict(AGENT_CODES)           # the in-kernel agents by name


def agent_spec(spec, where: str = "agent"):
    """(code, parameter vector) of an in-kernel agent given as a name of ``AGENTS``
    or as a pair ``(name, parameters)``: a dict of the agent's named parameters
    (``kernel.players.AGENT_PARAMS``; e.g. ``("search", {"samples": 8, "budget":
    2000})``), the others taking their defaults. ValueError for anything else."""
    if isinstance(spec, str):
        name, opts = spec, None
    elif isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], dict):
        name, opts = spec
    else:
        raise ValueError(f"{where} must be an in-kernel agent name from {sorted(AGENTS)} or a pair "
                         f"(name, parameters dict), got {show(spec, 200)}")
    if name not in AGENTS:
        raise ValueError(f"{where}: unknown in-kernel agent {name!r}; known: {sorted(AGENTS)}")
    try:
        return AGENTS[name], agent_params(name, opts)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def parse_agent(text: str):
    """An in-kernel agent from text: ``"greedy"`` -> ``"greedy"``;
    ``"search:samples=32,budget=none"`` -> ``("search", {"samples": 32, "budget":
    None})``. Values are read by the type of the parameter's default
    (``kernel.players.AGENT_PARAMS``); ``none`` is None. ValueError (naming the
    part) for anything :func:`agent_spec` would not accept."""
    if not isinstance(text, str):
        raise ValueError(f"an agent must be given as text, got {show(text, 80)}")
    name, _, rest = text.partition(":")
    if name not in AGENTS:
        raise ValueError(f"unknown in-kernel agent {name!r} in {show(text, 200)}; known: {sorted(AGENTS)}")
    if not rest:
        return name
    known = AGENT_PARAMS[name]
    opts = {}
    for part in rest.split(","):
        key, eq, value = part.partition("=")
        if not eq or key not in known:
            raise ValueError(f"{show(text, 200)}: {part!r} is not key=value with a parameter of {name!r} "
                             f"({sorted(known) or 'none'})")
        default, lo = known[key][1], known[key][2]
        try:
            if value == "none":
                opts[key] = None
            elif isinstance(lo, tuple):
                opts[key] = value
            elif isinstance(lo, bool):
                opts[key] = {"1": True, "true": True, "0": False, "false": False}[value.lower()]
            elif isinstance(default, float) or isinstance(lo, float):
                opts[key] = float(value)
            else:
                opts[key] = int(value)
        except (KeyError, ValueError):
            raise ValueError(f"{show(text, 200)}: cannot read {value!r} as the value of {key!r}") from None
    agent_spec((name, opts), f"agent {show(text, 200)}")   # checks the values
    return name, opts


def _progress_bar(total):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("selfplay(progress=True) needs tqdm: pip install tqdm") from None
    return tqdm(total=total, unit="game", desc="selfplay")


def selfplay(num_games: int = 10_000, agents=("random", "random", "random", "random"), seed: int = 0,
             num_envs: int = 1024, rules=None, progress: bool = False, first_game: int = 0,
             num_threads=None) -> dict:
    """Play ``num_games`` whole games inside the compiled kernel; return stats (docs/api.md).

    The games are ``first_game .. first_game + num_games - 1`` of the run: game j
    is dealt from ``game_seed(seed, j)`` and its random agents draw from a stream
    derived from that seed alone, so the stats of consecutive ranges add up to
    those of one call over their union (``majiang_env.distributed`` relies on it).
    ``progress=True`` shows a tqdm bar (the run is then made of about 50 kernel calls).
    ``num_threads``: numba threads for the run (None: numba's current setting).
    ``agents``: one in-kernel agent per seat, a name of ``AGENTS`` or a pair
    ``(name, parameters)`` (:func:`agent_spec`), e.g.
    ``(("search", {"samples": 8}), "greedy", "greedy", "greedy")``.
    """
    if not isinstance(agents, (tuple, list)) or len(agents) != 4:
        raise ValueError(f"agents must be a tuple of 4 agents (names from {sorted(AGENTS)} or pairs "
                         f"(name, parameters)), got {show(agents, 200)}")
    specs = [agent_spec(a, f"agents[{i}]") for i, a in enumerate(agents)]
    num_games = as_int("num_games", num_games, 0, 2 ** 62)
    first_game = as_int("first_game", first_game, 0, 2 ** 63 - 1 - num_games)
    progress = as_bool("progress", progress)
    rules = make_rules(rules)
    seed = as_seed(seed)
    num_threads = check_threads(num_threads)
    B = max(1, min(_positive_int("num_envs", num_envs), int(num_games)))
    st = np.zeros((B, L.SIZE), np.int32)
    stats = np.zeros((B, batch.ST_SIZE), np.int64)
    codes = np.array([c for c, _ in specs], np.int32)
    params = np.array([v for _, v in specs], np.float64)
    dtab = tables.deficiency_table() if np.isin(codes, TABLE_AGENTS).any() else _NO_TABLE
    r, wt = rules.to_array(True), tables.win_table()
    # one run of _play_games, or (progress=True) about 50 over consecutive game ranges,
    # which add up to the same stats
    chunk = num_games if not progress else max(B, -(-num_games // 50))
    bar = _progress_bar(num_games) if progress else None
    t = time.perf_counter()
    for start in range(0, num_games, max(chunk, 1)):
        n = min(chunk, num_games - start)
        with numba_threads(num_threads):
            _play_games(st, r, wt, seed, int(first_game) + start, int(n), codes, params, stats, dtab)
        if bar is not None:
            bar.update(n)
    dt = time.perf_counter() - t
    if bar is not None:
        bar.close()
    s = stats.sum(0)
    games = int(s[batch.ST_GAMES])
    return {"games": games, "hands": int(s[batch.ST_HANDS]), "decisions": int(s[batch.ST_DECISIONS]),
            "seconds": dt, "mean_points": (s[batch.ST_POINTS:batch.ST_POINTS + 4] / max(1, games)).tolist(),
            "wins": s[batch.ST_WINS:batch.ST_WINS + 4].tolist()}


def _in_kernel_actions(st, rules, wt, rows, codes, params, rngs, dt, out, wss, parallel):
    """out[i] = the action of in-kernel agent codes[i] (parameters params[i]) for the
    seat to act in slot rows[i] of the state ``st``, on the slot's agent stream
    rngs[b, 0], in row order: through ``batch.batch_loop_actions`` when every agent
    is a loop agent, else ``batch.batch_agent_actions`` (which compiles the search
    agent: ``kernel/players.py``). Internal: the arrays are the package's own, not
    checked (the callers are ``VectorGame.policy_actions``, ``SeatVectorEnv`` and
    :func:`_play_games`)."""
    if np.isin(codes, LOOP_AGENTS).all():
        run = batch.batch_loop_actions if parallel else batch.batch_loop_actions_serial
        run(st, rules, rows, codes, rngs, dt, out, wss)
    else:
        run = batch.batch_agent_actions if parallel else batch.batch_agent_actions_serial
        run(st, rules, wt, rows, codes, params, rngs, dt, out, wss)


def _play_games(st, rules, wt, seed, first, num_games, codes, params, stats, dt):
    """Play games first..first+num_games-1 of the run from ``seed`` in the B slots of
    ``st`` (slot b plays first+b, first+b+B, ...; agents ``codes`` / ``params``
    per seat), adding to ``stats`` (B, ``batch.ST_SIZE``): ``batch.selfplay_kernel``
    with the loop agents in one call; a seat of another agent (search) stops its
    slot, and the waiting slots' decisions are made in one ``_in_kernel_actions`` call
    before the kernel resumes them. The same games whatever B and threads.
    Internal (arrays not checked): ``selfplay`` is the checked entry point."""
    B = st.shape[0]
    mask = np.zeros((B, NUM_ACTIONS), np.int8)
    rngs = np.zeros((B, 1), np.uint64)
    started = np.zeros(B, np.int64)
    actions = np.full(B, -1, np.int64)
    waiting = np.zeros(B, np.bool_)
    wss = None
    while True:
        batch.selfplay_kernel(st, rules, wt, mask, np.uint64(seed), num_games, codes, stats, first, dt, rngs,
                              started, actions, waiting)
        rows = np.flatnonzero(waiting).astype(np.int64)
        if rows.size == 0:
            return
        if wss is None:
            wss = batch.thread_workspaces()
        seat = L.view(st, "to_act")[rows]
        acts = np.empty(rows.size, np.int64)
        _in_kernel_actions(st, rules, wt, rows, codes[seat], params[seat], rngs, dt, acts, wss,
                           current_threads() > 1 and rows.size > 1)
        actions[:] = -1
        actions[rows] = acts
