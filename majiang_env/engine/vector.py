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
from .kernel.cards import mix64
from .kernel.fullstate import STATE_SIZE, full_states
from .kernel.observe import OBS_SIZE
from .kernel.players import AGENT_PYTHON, NUM_PARAMS
from .kernel.worlds import sample_rows
from .registry import KERNEL, WORLD, AgentError, agent_names, kernel_agent_names, resolve
from .rules import NUM_ACTIONS, NUM_CARDS, make_rules
from .runner import Encoders, kernel_actions, needs_table, python_actions, world_action
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
        self._built = {}                    # Python agents named in policy_actions, built once
        self._encoders = Encoders(self.rules)
        self._worlds = 0                    # planners' worlds drawn so far

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
        """The actions ``agent`` chooses for the player to act in slots ``rows``
        (default: every slot), as int64. ``agent``: any agent spec
        (``majiang_env.agents``: a registered name such as ``"greedy"``, text with
        parameters ``"search:samples=8"``, a pair ``("search", {"samples": 8})``,
        an agent object), or a list with one in-kernel spec per row.

        An agent with an in-kernel version decides inside the kernel, from what
        that player may see, as ``selfplay``'s agents do, drawing from the slot's
        own agent stream, which restarts with each game: if every decision of a
        game is taken this way, the game equals the one ``selfplay`` plays with
        the same agents and seed. Any other is called once, batched, on the
        rows' observations (``act_batch``; a planner's ``act_world`` once per row);
        its answers are checked (``AgentError``). Named Python agents are built
        once per env, seeded from the env's seed.
        """
        if not self._ready:
            raise ResetNeededError("call reset() before policy_actions()")
        rows = self._rows(rows)
        if isinstance(agent, list):
            if len(agent) != len(rows):
                raise ValueError(f"agent: a list needs one agent per row ({len(rows)} rows), got {len(agent)}")
            refs = [resolve(a, f"agent[{i}]") for i, a in enumerate(agent)]
            if any(r.kind != KERNEL for r in refs):
                i = next(i for i, r in enumerate(refs) if r.kind != KERNEL)
                raise AgentError(f"agent[{i}] = {refs[i].name!r} runs in Python: a list of agents, one per row, "
                                 f"takes in-kernel agents only ({', '.join(kernel_agent_names())}); call "
                                 "policy_actions once per Python agent with its rows")
            codes = np.array([r.kernel[0] for r in refs], np.int32).reshape(len(rows))
            params = np.array([r.kernel[1] for r in refs], np.float64).reshape(len(rows), NUM_PARAMS)
        else:
            ref = resolve(agent)
            if ref.kind != KERNEL:
                return self._python_actions(ref, rows)
            codes = np.full(len(rows), ref.kernel[0], np.int32)
            params = np.tile(ref.kernel[1], (len(rows), 1))
        if self._dt is _NO_TABLE and needs_table(codes):
            self._dt = tables.deficiency_table()
        out = np.empty(len(rows), np.int64)
        with numba_threads(self.num_threads):
            kernel_actions(self._st, self._rules, self._wt, rows, codes, params, self._agent_rng, self._dt,
                           out, self._wss, self._parallel() and len(rows) > 1)
        return out

    def _python_actions(self, ref, rows) -> np.ndarray:
        """A Python agent's checked answers for ``rows`` (batched, or per row for a planner)."""
        built = self._built.get(ref.name) if ref.obj is None else None
        if built is None:
            built = ref.build(self.seed, self.rules)
            if ref.obj is None:
                self._built[ref.name] = built
        if ref.kind == WORLD:
            out = np.empty(len(rows), np.int64)
            for i, r in enumerate(rows.tolist()):
                g, seat = self.game(r), int(self._player[r])
                world = g.sample_hidden(seat, mix64_int(self.seed, self._worlds))
                self._worlds += 1
                out[i] = world_action(built, ref.name, world, seat, set(g.legal_actions()))
            return out
        return python_actions(built, ref.name, self._compact[rows], self._mask[rows], self._encoders,
                              lambda i: f"(env {int(rows[i])}, seat {int(self._player[rows[i]])})")

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
    ``agents``: one agent spec per seat (``majiang_env.agents``): a registered name,
    text with parameters, a pair ``(name, parameters)`` or an agent object, e.g.
    ``(("search", {"samples": 8}), "greedy", "greedy", "pretrained")``. In-kernel
    agents play inside the compiled loop; a seat of a Python agent stops its slot,
    and the waiting slots are decided in one batched call per agent before the
    loop resumes them (named Python agents are built seeded from ``seed``).
    """
    if not isinstance(agents, (tuple, list)) or len(agents) != 4:
        raise ValueError(f"agents must be a tuple of 4 agent specs (names from {', '.join(agent_names())}, "
                         f"pairs (name, parameters) or agent objects), got {show(agents, 200)}")
    refs = [resolve(a, f"agents[{i}]") for i, a in enumerate(agents)]
    num_games = as_int("num_games", num_games, 0, 2 ** 62)
    first_game = as_int("first_game", first_game, 0, 2 ** 63 - 1 - num_games)
    progress = as_bool("progress", progress)
    rules = make_rules(rules)
    seed = as_seed(seed)
    num_threads = check_threads(num_threads)
    B = max(1, min(_positive_int("num_envs", num_envs), int(num_games)))
    st = np.zeros((B, L.SIZE), np.int32)
    stats = np.zeros((B, batch.ST_SIZE), np.int64)
    codes, params, python = seat_agents(refs, seed, rules)
    dtab = tables.deficiency_table() if needs_table(codes) else _NO_TABLE
    r, wt = rules.to_array(True), tables.win_table()
    # one run of _play_games, or (progress=True) about 50 over consecutive game ranges,
    # which add up to the same stats
    chunk = num_games if not progress else max(B, -(-num_games // 50))
    bar = _progress_bar(num_games) if progress else None
    t = time.perf_counter()
    for start in range(0, num_games, max(chunk, 1)):
        n = min(chunk, num_games - start)
        with numba_threads(num_threads):
            _play_games(st, r, wt, seed, int(first_game) + start, int(n), codes, params, stats, dtab, python,
                        rules)
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


def seat_agents(refs, seed, rules):
    """(codes int32 (4,), parameter vectors float64 (4, NUM_PARAMS), the Python agent
    of each seat or None) of 4 resolved agents: an in-kernel agent by its code, a
    Python one as ``AGENT_PYTHON`` beside its built form (the same spec twice is
    one agent, built once, seeded from ``seed``)."""
    codes = np.full(4, AGENT_PYTHON, np.int32)
    params = np.zeros((4, NUM_PARAMS), np.float64)
    python = [None] * 4
    for i, ref in enumerate(refs):
        if ref.kind == KERNEL:
            codes[i], params[i] = ref.kernel
            continue
        j = next((j for j in range(i) if python[j] is not None and refs[j].same(ref)), None)
        python[i] = python[j] if j is not None else (ref, ref.build(mix64_int(seed, i), rules))
    return codes, params, python


def mix64_int(seed, i) -> int:
    """A Python agent's seed: seat ``i``'s stream of the run seed ``seed``."""
    return int(mix64(np.uint64((int(seed) + i) % 2 ** 64))) % 2 ** 63


def _play_games(st, rules, wt, seed, first, num_games, codes, params, stats, dt, python=None, config=None):
    """Play games first..first+num_games-1 of the run from ``seed`` in the B slots of
    ``st`` (slot b plays first+b, first+b+B, ...; agents ``codes`` / ``params``
    per seat), adding to ``stats`` (B, ``batch.ST_SIZE``): ``batch.selfplay_kernel``
    with the loop agents in one call; a seat of another agent (search, or a Python
    agent: ``python[seat]`` = (ref, built agent)) stops its slot, and the waiting
    slots' decisions are made in one ``runner.kernel_actions`` call, and one batched
    call per Python agent, before the kernel resumes them. The same games whatever
    B and threads (for Python agents that keep no state across calls).
    Internal (arrays not checked): ``selfplay`` is the checked entry point."""
    B = st.shape[0]
    mask = np.zeros((B, NUM_ACTIONS), np.int8)
    rngs = np.zeros((B, 1), np.uint64)
    started = np.zeros(B, np.int64)
    actions = np.full(B, -1, np.int64)
    waiting = np.zeros(B, np.bool_)
    wss = None
    view = None
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
        inside = codes[seat] != AGENT_PYTHON
        if inside.any():
            sel = rows[inside]
            out = np.empty(sel.size, np.int64)
            kernel_actions(st, rules, wt, sel, codes[seat[inside]], params[seat[inside]], rngs, dt, out, wss,
                           current_threads() > 1 and sel.size > 1)
            acts[inside] = out
        if not inside.all():
            if view is None:
                view = (np.zeros((B, NUM_ACTIONS), np.int8), np.zeros((B, OBS_SIZE), np.int16),
                        np.zeros((0, FEAT_SIZE), np.float32), np.zeros(B, np.int32))
                encoders = Encoders(config)
            done = set()
            for s in np.unique(seat[~inside]).tolist():
                if s in done:
                    continue
                ref, agent = python[s]
                group = [t for t in range(4) if python[t] is not None and python[t][1] is agent]
                done.update(group)
                sel = np.isin(seat, group) & ~inside
                r = rows[sel]
                batch.publish_rows(st, rules, dt, view, r, wss[2][0])
                if ref.kind == WORLD:
                    acts[sel] = [_world_of_row(st[b], config, agent, ref.name, seed, b) for b in r.tolist()]
                else:
                    acts[sel] = python_actions(agent, ref.name, view[1][r], view[0][r], encoders,
                                               lambda i, r=r: f"(slot {int(r[i])}, seat {int(st[r[i], L.CUR])})")
        actions[:] = -1
        actions[rows] = acts


def _world_of_row(row, config, agent, name, seed, b) -> int:
    """A planner's checked answer for the seat to act in state ``row``."""
    g = game_from_state(row, config, 0)
    seat = g.current_player
    world = g.sample_hidden(seat, mix64_int(seed, b * 10_007 + int(row[L.HAND]) * 101 + int(row[L.SLOT])))
    return world_action(agent, name, world, seat, set(g.legal_actions()))
