"""``SeatVectorEnv``: B games as one ``gymnasium.vector.VectorEnv`` with one learning seat each.

```python
from majiang_env import SeatVectorEnv
envs = SeatVectorEnv(1024, opponents="greedy", seat="random", obs_type="float")
obs, info = envs.reset(seed=0)
while True:
    logits = policy(obs)                                   # (B, 156), any floats
    actions = envs.sample_actions(logits)                  # legal, sampled in the kernel
    obs, rewards, terminations, truncations, info = envs.step(actions)
```

In every game one seat is the learner; the other three are played **inside the
compiled kernel** by in-kernel agents (``"random"``, ``"greedy"``, ``"search"``:
``majiang_env.agents.kernel_agent_names()``), or in Python by any other agent of
the registry (``"pretrained"``, a weights file, a registered name, an object
with ``act_batch``, a function ``fn(obs_batch, mask_batch) -> actions``), called
once per round for all slots where one of its seats is to act, with the
observations its ``obs_type`` names (the env's own when it names none) — so a
frozen network opponent runs at batch speed. One ``step`` applies the learner's action in
every slot and plays on until the learner is to act again.

| | |
|---|---|
| ``single_observation_space`` | ``Box`` of ``obs_type``: int16 (436,) ``"compact"`` (default), float32 (FEAT_SIZE,) ``"features"``, float32 (FLOAT_SIZE,) ``"float"``, the one to give an MLP (``majiang_env.engine.encodings``, docs/observation.md) |
| ``single_action_space`` | ``Discrete(156)``, the ids of docs/api.md; ``action_masks()`` bool (B, 156) |
| reward | ``reward_scale`` x the learner's point change in the hands that closed during the step (a game's first step also pays for hands that closed before the learner's first decision) |
| episode | one game (``hands_per_game`` hands; ``hands_per_game=1``: one hand); ``terminations`` when it ends, never truncated. A game that ends before the learner's first decision in it (in practice only with one hand per game closed by an early win: ``exchange=False``, ``wins_to_close=1``) is skipped, its points with it: the slot goes on to its next game |
| autoreset | ``autoreset_mode=AutoresetMode.SAME_STEP`` (default): a finished slot already holds its next game; ``info["final_obs"][i]`` is the learner's last observation and ``info["final_info"]["scores"][i]`` the final scores (relative to the learner, the learner first). ``AutoresetMode.NEXT_STEP`` (Gymnasium's own default, which its vector wrappers need): the step that ends a game returns its last observation, with ``info["scores"][i]`` the final scores; the slot's next ``step`` ignores its action and returns the next game's first observation with reward 0. ``metadata["autoreset_mode"]`` is the instance's mode |
| seeds | ``reset(seed=s)``: slot i plays games i, i + B, ... (passing over a skipped game's index) and game j is ``Game(seed=game_seed(s, j))``, whatever B; the learner's seat is fixed or drawn from the game's seed; opponents and ``sample_actions`` draw from per-game streams, so the same seed and actions give the same run |
| ``info["seat"]`` | the learner's seat in each slot's current game |
| ``critic_state=True`` | ``info["state"]`` (and the read-only ``states``): int16 (B, STATE_SIZE), the full-information state (``Game.full_state()``, docs/observation.md "Full state"; absolute seats) of each slot's game at the decision the returned observation shows; ``final_info["state"]`` too (SAME_STEP). ``single_state_space`` / ``state_space`` are its Box. Never part of the observation; off (the default), nothing is computed |

``opponents``: one spec for the three other seats, or a list of three (the
seats ``seat + 1``, ``seat + 2``, ``seat + 3``); a spec is any agent spec of
``majiang_env.agents`` (docs/api.md "Agents"): a name, text with parameters
``"search:samples=4"`` or the pair ``("search", {"samples": 4})``, a weights
file, an agent object, or a class (a factory, built seeded with the opponent's
index).
``seat``: 0-3 or ``"random"``. Keywords after those are ``RuleConfig`` field
overrides (``hands_per_game=1``). An action the learner may not take raises
``IllegalActionError`` naming the slot, and no game changes. An external
opponent's illegal action also raises ``IllegalActionError`` (naming it), but
mid-step: the env then needs ``reset()``, as it does after any exception the
callable raises. A callable may not call ``step``, ``reset``, ``sample_actions``
or ``action_masks`` of the env it plays in (``RuntimeError`` saying so; the
callable gets its own legal masks as its second argument).

**Attributes.** ``reward_scale`` (a finite number), ``copy`` (True/False) and
``num_threads`` (None or 1..numba's thread count) may be set on a made env,
checked as in the constructor (``ValueError``, nothing changes); ``obs_type``,
``rules`` and ``seat_option`` are fixed at construction (read-only: make a new env).

**Autoreset.** SAME_STEP is the default because every learner step is then
a decision of a live game: nothing is spent on reset steps, and the SB3
adapter and the trainers of ``agents`` rely on it. Pass
``autoreset_mode=AutoresetMode.NEXT_STEP`` (or ``"NextStep"``) to use
Gymnasium's vector wrappers (``NormalizeObservation``, ``DtypeObservation``,
``RecordEpisodeStatistics``, ``NormalizeReward``, ...), which need it. Both modes
play the same games for the same seed and learner actions.

``close()`` has nothing to release (no thread pool, process or file): the env
stays usable after it, ``reset()`` and ``step()`` work as before.
"""  # noqa: E501 (the env card's table rows)
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..engine import tables
from ..engine.checks import (
    IllegalActionError,
    ResetNeededError,
    as_bool,
    as_finite,
    as_int,
    as_seat,
    as_seed,
    int_array,
    show,
)
from ..engine.encodings import FEAT_SIZE, check_obs_type, encoded_size, observation_space
from ..engine.game import game_from_state
from ..engine.kernel import batch, learner
from ..engine.kernel import layout as L
from ..engine.kernel.fullstate import STATE_HIGH, STATE_LOW, STATE_SIZE
from ..engine.kernel.observe import OBS_SCALAR, OBS_SIZE, S_SCORES
from ..engine.kernel.players import LOOP_AGENTS, NUM_PARAMS
from ..engine.registry import KERNEL, WORLD, AgentError, resolve
from ..engine.rules import NUM_ACTIONS, make_rules
from ..engine.runner import Encoders, kernel_actions, needs_table, python_actions, world_action
from ..engine.threads import check_threads, current_threads, numba_threads
from ..engine.vector import MAX_ENVS, PARALLEL_MIN_ENVS, sample_logits

__all__ = ["SeatVectorEnv"]

_RESET_NEEDED = ("call reset() before step() (the env was never reset, or a step or reset was interrupted "
                 "by an exception)")
_SCORES = OBS_SCALAR + S_SCORES   # the four scores in a compact observation (relative seats)


def _opponent(spec, i, rules):
    """(code, params, (ref, built agent) or None) of opponent spec ``i``: an in-kernel
    agent by its code, a Python one (``learner.EXTERNAL``) built seeded with ``i``."""
    ref = resolve(spec, f"opponents[{i}]")
    if ref.kind == KERNEL:
        return ref.kernel[0], ref.kernel[1], None
    return learner.EXTERNAL, np.zeros(NUM_PARAMS), (ref, ref.build(i, rules))


def _autoreset_mode(mode):
    """``AutoresetMode.SAME_STEP`` or ``NEXT_STEP`` (or their values, ``"SameStep"``, ``"NextStep"``)."""
    for m in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
        if (isinstance(mode, AutoresetMode) and mode == m) or (type(mode) is str and mode == m.value):
            return m
    raise ValueError(f"autoreset_mode must be AutoresetMode.SAME_STEP or AutoresetMode.NEXT_STEP "
                     f"(or 'SameStep' / 'NextStep'), got {show(mode)}")


class SeatVectorEnv(gym.vector.VectorEnv):
    """B games, one learning seat each, the other seats played in the kernel (module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents="random", seat=0, rules=None, obs_type: str = "compact",
                 reward_scale: float = 1.0, num_threads=None, copy: bool = True,
                 autoreset_mode=AutoresetMode.SAME_STEP, critic_state: bool = False, **options):
        self.num_envs = B = as_int("num_envs", num_envs, 1, MAX_ENVS)
        self._critic = as_bool("critic_state", critic_state)
        mode = _autoreset_mode(autoreset_mode)
        self._next_step = mode == AutoresetMode.NEXT_STEP
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        if isinstance(seat, str) and seat == "random":
            self._seat_code = -1
        else:
            try:
                self._seat_code = as_seat(seat)
            except ValueError:
                raise ValueError(f"seat must be an int 0-3 or 'random', got {show(seat)}") from None
        self._seat_option = seat
        specs = list(opponents) if isinstance(opponents, list) else [opponents] * 3
        if len(specs) != 3:
            raise ValueError(f"opponents must be one spec or a list of 3, got {len(specs)}")
        self._rule_config = make_rules(rules, **options)
        made = [_opponent(s, i, self._rule_config) for i, s in enumerate(specs)]
        self._codes = np.array([c for c, _, _ in made], np.int32)
        self._params = np.stack([p for _, p, _ in made]).astype(np.float64)
        self._external = [f for _, _, f in made]
        # the kernel's loop plays the loop agents; it hands a seat of any other
        # agent (a callable, or search: players.py) back to _play_external
        self._loop_codes = np.where(np.isin(self._codes, LOOP_AGENTS), self._codes, learner.EXTERNAL).astype(np.int32)
        self._has_external = bool((self._loop_codes == learner.EXTERNAL).any())
        self._in_kernel = np.array([f is None for f in self._external]) & (self._loop_codes == learner.EXTERNAL)
        self._obs_type = check_obs_type(obs_type)
        self.reward_scale = reward_scale      # the setters below check these three
        self.num_threads = num_threads
        self.copy = copy
        self._encoders = Encoders(self._rule_config)
        self._rules = self._rule_config.to_array(auto_forced=True)
        self._wt = tables.win_table()
        table = obs_type == "features" or needs_table(self._codes)
        self._dt = tables.deficiency_table() if table else np.zeros((1, tables.DEF_COLS), np.uint16)

        self.single_observation_space = observation_space(obs_type)
        self.single_action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, B)
        self.action_space = batch_space(self.single_action_space, B)
        self.single_state_space = gym.spaces.Box(STATE_LOW, STATE_HIGH, dtype=np.int16)   # info["state"] rows
        self.state_space = batch_space(self.single_state_space, B)

        self._width = encoded_size(obs_type)           # the float rows the kernel writes (0: compact only)
        feat_rows = B if self._width else 0
        self._st = np.zeros((B, L.SIZE), np.int32)
        states = B if self._critic else 0              # full states: written by the kernel only when asked for
        self._view = self._new_view(B, feat_rows) + (np.zeros((states, STATE_SIZE), np.int16),)  # the learner's
        self._opp = self._new_view(B, feat_rows)       # an external opponent's view
        self._final = self._new_view(B, feat_rows) + (np.zeros((states, STATE_SIZE), np.int16),)  # its last view
        self._states = None                            # the states returned with the last observations
        self._lseat = np.zeros(B, np.int32)
        self._gidx = np.zeros(B, np.int64)
        self._rngs = np.zeros((B, 2), np.uint64)
        self._acc = np.zeros(B, np.int64)
        self._status = np.zeros(B, np.int32)
        self._rewards = np.zeros(B, np.int64)
        self._term = np.zeros(B, np.bool_)
        self._pending = np.zeros(B, np.bool_)   # NEXT_STEP: slots whose last step ended their game
        self._wss = batch.thread_workspaces()
        self._all = np.arange(B, dtype=np.int64)
        self._seed = None
        self._ready = False
        self._in_round = False     # True while an external opponent callable runs
        self._worlds = 0           # worlds sampled for planner opponents

    # ---- attributes: three may be set (checked), the others are fixed at construction ----
    @property
    def reward_scale(self) -> float:
        return self._reward_scale

    @reward_scale.setter
    def reward_scale(self, value):
        self._reward_scale = as_finite("reward_scale", value)

    @property
    def copy(self) -> bool:
        """Whether ``reset`` and ``step`` return copies of the observation buffer."""
        return self._copy

    @copy.setter
    def copy(self, value):
        self._copy = as_bool("copy", value)

    @property
    def num_threads(self):
        return self._num_threads

    @num_threads.setter
    def num_threads(self, value):
        self._num_threads = check_threads(value)

    obs_type = property(lambda self: self._obs_type, doc='``"compact"``, ``"features"`` or ``"float"`` (fixed).')
    rules = property(lambda self: self._rule_config, doc="The ``RuleConfig`` of every game (fixed).")
    seat_option = property(lambda self: self._seat_option, doc='The ``seat`` argument, 0-3 or ``"random"`` (fixed).')
    critic_state = property(lambda self: self._critic, doc="Whether ``info`` carries the full states (fixed).")
    SETTABLE = ("reward_scale", "copy", "num_threads")

    def _new_view(self, B, feat_rows):
        return (np.zeros((B, NUM_ACTIONS), np.int8), np.zeros((B, OBS_SIZE), np.int16),
                np.zeros((feat_rows, self._width or FEAT_SIZE), np.float32), np.zeros(B, np.int32))

    def _obs_of(self, view, rows=None):
        a = view[2] if self._width else view[1]
        a = a if rows is None else a[rows]
        return a.copy() if self._copy or rows is not None else a

    def _parallel(self, n) -> bool:
        threads = self.num_threads or current_threads()
        return threads > 1 and n >= PARALLEL_MIN_ENVS

    # ---- the Gymnasium API ---------------------------------------------------
    def reset(self, *, seed=None, options=None):
        """Start games 0..B-1 of the run from ``seed`` (None: a run seed drawn from
        ``np_random``, which the last seeded reset seeded, or else the OS)."""
        self._refuse_reentry("reset")
        if options is not None and (not isinstance(options, dict) or options):
            raise ValueError(f"options: this env takes none, got {show(options)}")
        if seed is not None:
            self._seed = as_seed(seed)
            self._np_random, self._np_random_seed = seeding.np_random(self._seed)
        else:
            self._seed = int(self.np_random.integers(2 ** 63))
        self._ready = False           # until every slot waits for the learner again
        run = learner.seat_reset if self._parallel(self.num_envs) else learner.seat_reset_serial
        with numba_threads(self.num_threads):
            run(self._st, self._rules, self._wt, self._dt, self._view, self._seat_code, np.uint64(self._seed),
                self._lseat, self._gidx, self._rngs, self._loop_codes, self._acc, self._status, self._wss)
        self._term[:] = True          # no game is the learner's yet: one that ends is skipped (_settle_slot)
        self._play_external()
        self._term[:] = False
        self._rewards[:] = 0
        self._pending[:] = False
        self._ready = True
        info = {"seat": self._lseat.copy(), "_seat": np.ones(self.num_envs, bool)}
        self._put_states(info)
        return self._obs_of(self._view), info

    def step(self, actions):
        self._refuse_reentry("step")
        if not self._ready:
            raise ResetNeededError(_RESET_NEEDED)
        if self._next_step:
            return self._step_next(actions)
        a = self._check_actions(actions, self._all, "the learner", self._view[0], learner.LEARNER)
        self._rewards[:] = 0
        self._term[:] = False
        self._run_step(self._all, a)
        self._play_external()
        last = self._final[2] if self._width else self._final[1]
        term, rewards, truncated, seat, every, done, final_obs, scores, mask = learner.step_outputs(
            self._term, self._rewards, self.reward_scale, self._lseat, last, self._final[1][:, _SCORES:_SCORES + 4])
        info = {"seat": seat, "_seat": every}
        if done.size:   # final_obs: the learner's last observation of each finished game, None elsewhere
            final = np.empty(self.num_envs, dtype=object)
            for j, i in enumerate(done.tolist()):
                final[i] = final_obs[j]
            info.update({"final_obs": final, "_final_obs": mask, "final_info": {"scores": scores},
                         "_final_info": mask})
            if self._critic:   # the finished games' last states, zeros elsewhere
                last_states = np.zeros((self.num_envs, STATE_SIZE), np.int16)
                last_states[done] = self._final[4][done]
                info["final_info"]["state"] = last_states
        self._put_states(info)
        return self._obs_of(self._view), rewards, term, truncated, info

    def _step_next(self, actions):
        """``step`` under NEXT_STEP autoreset: the kernel restarts a finished slot at
        once (as under SAME_STEP); this face holds the restart back one step."""
        a = int_array("actions", actions, IllegalActionError)
        if a.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must be an integer array of shape ({self.num_envs},), "
                                     f"got {a.dtype} {a.shape}")
        rows = self._all[~self._pending]
        act = self._check_actions(a[rows], rows, "the learner", self._view[0], learner.LEARNER)
        seat_before = self._lseat.copy()
        self._rewards[:] = 0
        self._term[:] = False
        self._pending[:] = False
        if rows.size:
            self._run_step(rows, act)
            self._play_external()
        last = self._final[2] if self._width else self._final[1]
        term, rewards, truncated, seat, every, done, final_obs, scores, mask = learner.step_outputs(
            self._term, self._rewards, self.reward_scale, self._lseat, last, self._final[1][:, _SCORES:_SCORES + 4])
        obs = self._obs_of(self._view)
        info = {"seat": seat, "_seat": every}
        if done.size:   # the finished games' last observations and seats; their restart waits a step
            obs = obs.copy() if not self._copy else obs
            obs[done] = final_obs
            seat[done] = seat_before[done]
            self._pending[done] = True
            info.update({"scores": scores, "_scores": mask})
        self._put_states(info, done)
        return obs, rewards, term, truncated, info

    def action_masks(self) -> np.ndarray:
        """bool (B, 156): the learner's legal actions in each slot now."""
        self._refuse_reentry("action_masks")
        if not self._ready:
            raise ResetNeededError("call reset() before action_masks()")
        return self._view[0].view(np.bool_).copy()   # the kernel writes 0 / 1

    def sample_actions(self, logits) -> np.ndarray:
        """Legal actions drawn in the kernel from the softmax of ``logits`` (float
        (B, 156)) over each slot's legal actions (on the slot's own seeded stream,
        ``kernel.batch.sample_legal``); illegal entries are never read. Returns int64 (B,)."""
        self._refuse_reentry("sample_actions")
        if not self._ready:
            raise ResetNeededError("call reset() before sample_actions()")
        with numba_threads(self.num_threads):
            return sample_logits(self._st, self._all, logits, self._rngs, self._parallel(self.num_envs))

    @property
    def learner_seat(self) -> np.ndarray:
        return self._lseat.copy()

    @property
    def states(self) -> np.ndarray:
        """int16 (B, STATE_SIZE), read-only: the full states returned in ``info["state"]``
        by the last ``reset`` or ``step`` (``critic_state=True`` only)."""
        if not self._critic:
            raise ValueError("this env was made with critic_state=False: it computes no states; "
                             "make it with SeatVectorEnv(..., critic_state=True)")
        if self._states is None:
            raise ResetNeededError("call reset() before reading states")
        v = self._states.view()
        v.flags.writeable = False
        return v

    def _put_states(self, info, done=None):
        """critic_state: ``info["state"]``, each slot's full state at the returned observation
        (under NEXT_STEP a finished game's last state, rows ``done``, goes with its last one)."""
        if not self._critic:
            return
        states = self._view[4]
        if done is not None and done.size:
            states = states.copy()
            states[done] = self._final[4][done]
        elif self._copy:
            states = states.copy()
        self._states = states
        info.update({"state": states, "_state": np.ones(self.num_envs, bool)})

    # ---- internals -------------------------------------------------------------
    def _refuse_reentry(self, what):
        if self._in_round:
            raise RuntimeError(f"{what}() of this env was called from inside one of its opponent callables; "
                               f"a callable must only return actions (its legal masks are its second argument)")

    def _check_actions(self, actions, rows, who, mask, waiting):
        """``actions`` as int64, each allowed by ``mask`` (the legal mask the kernel
        published for the seat to act in each slot of ``rows``; callers never
        get it, only copies); raises IllegalActionError naming the first that is
        not, or ResetNeededError when a slot does not wait for ``waiting`` (its
        status: the learner or an external opponent; a state only an exception
        inside a step or reset leaves, and checked after the actions' type and
        shape)."""
        a = int_array("actions", actions, IllegalActionError)
        if a.shape != (len(rows),):
            raise IllegalActionError(f"actions must be an integer array of shape ({len(rows)},), "
                                     f"got {a.dtype} {a.shape}")
        a64 = a.astype(np.int64)
        i = learner.first_not_allowed(self._status, waiting, mask, rows, a64)
        if i == learner.NOT_WAITING:
            self._ready = False
            raise ResetNeededError(_RESET_NEEDED)
        if i >= 0:
            s = L.StateView(self._st[rows[i]])
            ids = s.legal[:s.num_legal].tolist()
            raise IllegalActionError(f"action {show(a[i])} of {who} is not legal in env {int(rows[i])} "
                                     f"(seat {int(s.to_act)}); legal ids {ids}")
        return a64

    def _run_step(self, rows, actions):
        run = learner.seat_step if self._parallel(len(rows)) else learner.seat_step_serial
        with numba_threads(self.num_threads):
            run(self._st, self._rules, self._wt, self._dt, self._view, self._final, rows, actions,
                self._seat_code, np.uint64(self._seed), self._lseat, self._gidx, self._rngs, self._loop_codes,
                self._acc, self._status, self._rewards, self._term, self._wss)

    def _play_external(self):
        """Hand every slot waiting for an external opponent to it, round by round
        (a callable, or an in-kernel agent the kernel's loop does not play)."""
        if not self._has_external:
            return
        ready, self._ready = self._ready, False   # a callable that raises leaves the env needing reset()
        try:
            self._in_round = True                 # and it may not step, reset or sample this env
            self._external_rounds()
        finally:
            self._in_round = False
        self._ready = ready

    def _external_rounds(self):
        while True:
            rows = np.flatnonzero(self._status == learner.OPPONENT).astype(np.int64)
            if rows.size == 0:
                return
            cur = L.view(self._st, "to_act")[rows]
            actions = np.empty(rows.size, np.int64)
            offset = (cur - self._lseat[rows]) % 4 - 1
            agent = self._in_kernel[offset]   # in-kernel agents: decided in one kernel call, legal by construction
            if agent.any():
                actions[agent] = self._agent_actions(rows[agent], offset[agent])
            for j in np.unique(offset[~agent]):
                sel = offset == j
                ref, fn = self._external[j]
                r = rows[sel]
                learner.publish_rows(self._st, self._rules, self._dt, self._opp, r, self._wss)
                try:
                    if ref.kind == WORLD:
                        actions[sel] = [self._world_action(ref, fn, b) for b in r.tolist()]
                    else:
                        actions[sel] = python_actions(fn, f"opponent {j} ({ref.name})", self._opp[1][r],
                                                      self._opp[0][r].copy(), self._encoders,
                                                      lambda i, r=r: f"(env {int(r[i])})",
                                                      own=self._obs_of(self._opp, r))
                    # checked again against the kernel's own masks and slot status before the kernel runs
                    actions[sel] = self._check_actions(actions[sel], r, f"opponent {j} ({ref.name})",
                                                       self._opp[0], learner.OPPONENT)
                except AgentError as e:   # the learner's actions are applied already
                    raise IllegalActionError(f"{e}; the env needs reset()") from None
            self._run_step(rows, actions)

    def _world_action(self, ref, agent, b) -> int:
        """A planner opponent's checked answer in slot ``b`` (a world it cannot tell from the game)."""
        g = game_from_state(self._st[b], self._rule_config, 0)
        seat = g.current_player
        self._worlds += 1
        world = g.sample_hidden(seat, (self._seed + self._worlds * 0x9E3779B1) % 2 ** 63)
        return world_action(agent, ref.name, world, seat, set(g.legal_actions()))

    def _agent_actions(self, rows, opponent):
        """The actions in-kernel opponents ``opponent[i]`` (0-2) choose in slots ``rows[i]``
        (from each slot's agent stream), over numba's threads when there are several
        (each is a search: milliseconds, worth waking the threads for)."""
        out = np.empty(rows.size, np.int64)
        threads = self.num_threads or current_threads()
        with numba_threads(self.num_threads):
            kernel_actions(self._st, self._rules, self._wt, rows, self._codes[opponent],
                           self._params[opponent], self._rngs, self._dt, out, self._wss,
                           threads > 1 and rows.size > 1)
        return out

    def close_extras(self, **kwargs):
        pass
