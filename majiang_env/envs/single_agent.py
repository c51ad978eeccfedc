"""``SingleAgentEnv``: one seat of 馬将 as a Gymnasium environment.

The other three seats are played by given agents (callables ``agent(obs) ->
action`` over the AEC observation dict, like ``agents.RandomAgent``) inside
``reset`` and ``step``, so the learner only ever sees its own decisions.

```python
from majiang_env.envs.single_agent import SingleAgentEnv
env = SingleAgentEnv(opponents="random", seat="random")
obs, info = env.reset(seed=0)
while True:
    mask = env.action_masks()                     # bool[156]: the legal actions now
    obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))
    if terminated or truncated:
        break
```

With sb3-contrib (the ``train`` extra): ``MaskablePPO("MlpPolicy", env).learn(...)``
reads ``action_masks()`` by itself.

| | |
|---|---|
| Observation | ``Box(int16, (436,))``: ``Game.observe(seat)``, the AEC ``"observation"`` (layout in ``majiang_env/engine/kernel/observe.py``); ``obs_type="float"`` / ``"features"``: the float32 encodings of ``majiang_env.engine.encodings`` (``"float"`` for an MLP) |
| Actions | ``Discrete(156)``, the ids of docs/api.md; ``action_masks()`` (bool) marks the legal ones; ``info["action_mask"]`` holds the same as int8 |
| Reward | ``reward_scale`` × the seat's point change in the hands that closed since its previous decision (the opponents' moves included; the first step also pays for hands closed before the seat's first decision); 0 on most steps. Over an episode the rewards add up to ``reward_scale × info["scores"][seat]`` |
| Illegal action | by default (``illegal="terminate"``) an id the mask forbids **ends the episode**: reward ``illegal_reward`` (−1000.0), ``terminated=True``, ``info["illegal"] = True``, as PettingZoo's ``TerminateIllegalWrapper`` does for ``env()``. ``illegal="raise"`` raises ``IllegalActionError`` instead and changes nothing, which is what the batched ``SeatVectorEnv`` always does. A value that is no id of ``Discrete(156)`` raises ``ActionSpaceError`` in both modes |
| Episode | one game (``hands_per_game`` hands); ``terminated`` when it is over; never truncated. A game that ends before the seat's first decision (in practice only one hand per game, closed by an early win) is skipped: ``reset`` starts another |
| Registered | ``gymnasium.make("majiang_env/SingleAgent-v1", **kwargs)`` after ``import majiang_env``; ``gymnasium.make_vec(..., num_envs=B, vectorization_mode="vector_entry_point")`` gives the batched ``majiang_env.envs.seat_vector.SeatVectorEnv`` |

``opponents`` — one spec for all three other seats, or a list of three (for
the seats ``seat + 1``, ``seat + 2``, ``seat + 3`` in turn order). A spec is

* a name, ``"random"`` or ``"greedy"`` (``majiang_env.agents``, which
  ``agents.RandomAgent`` / ``agents.GreedyAgent`` are), or an agent class / factory ``f(seed) -> agent``:
  a fresh agent is made for its seat at every ``reset``, seeded from the env's
  ``np_random`` (and given ``rules=`` when the class takes it), so
  ``reset(seed=s)`` reproduces the whole episode;
* an agent object (any callable over the observation dict that is not a
  class, e.g. a trained ``majiang_env.training.ppo.PPOAgent``): used as it is; if it draws
  random numbers, seed it yourself.

``seat``: 0-3, or ``"random"`` (drawn at each reset from ``np_random``).

An action the mask forbids: with ``illegal="terminate"`` (default) the episode
ends with reward ``illegal_reward`` and ``info["illegal"] = True``; with
``illegal="raise"`` the engine's ``IllegalActionError`` (a ``ValueError``)
propagates and nothing changes. The two Gymnasium faces differ here by
default: ``SeatVectorEnv`` has no such option and always raises, so pass
``illegal="raise"`` to make this env behave like it.
A value that is not an action id (not an integer, or outside 0..155) always
raises ``ActionSpaceError`` and changes nothing.

**Opponents' answers** are checked as strictly as the learner's actions: a
Python int, a numpy integer or a 0-d integer array, legal at the opponent's
decision. Anything else (a float such as ``legal + 0.7``, a string, an
``np.float32``, an illegal id) raises ``ActionSpaceError`` / ``IllegalActionError``
naming the seat, the answer and the legal ids; ``illegal="terminate"`` applies
to the learner only. Whatever an opponent does wrong (a bad answer, or an
exception of its own), the ``step`` or ``reset`` that called it changes
nothing: the env is as it was before the call (an opponent's own state, such as
its random generator, is its own).

**Seeds**: ``reset(seed=s)`` takes ``None`` or an int in 0..2**64-1 (numpy
integers too); anything else raises ``ValueError`` and changes nothing.

**Re-entry and close.** An opponent callable runs inside ``reset`` and
``step``: ``action_masks()`` called from it gives all False (the learner is not
to act then), and ``step`` or ``reset`` called from it raises ``RuntimeError``.
``close()`` has nothing to release (no window, file, thread or process): after it
the env stays usable, ``reset()`` starts a new episode and ``step()`` goes on.
"""  # noqa: E501 (the env card's table rows)
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..engine.checks import (
    ActionSpaceError,
    IllegalActionError,
    ResetNeededError,
    action_id,
    as_finite,
    as_int,
    as_seat,
    in_action_range,
    show,
)
from ..engine.encodings import check_obs_type, observation_space
from ..engine.game import Game
from ..engine.registry import AgentError, resolve
from ..engine.rules import NUM_ACTIONS, make_rules
from ..engine.runner import GamePlayer
from . import SINGLE_AGENT_ID

__all__ = ["SingleAgentEnv", "ENV_ID"]


def _is_factory(spec):
    """Whether a spec is built afresh, seeded, at every reset (anything but an agent object)."""
    return isinstance(spec, (str, type, tuple))


class SingleAgentEnv(gym.Env):
    """One seat of 馬将 for Gymnasium; the other seats are played by ``opponents``."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(self, opponents="random", seat=0, rules=None, reward_scale=1.0,
                 illegal="terminate", illegal_reward=-1000.0, render_mode=None, obs_type="compact",
                 **options):
        if not (isinstance(seat, str) and seat == "random"):
            try:
                seat = as_seat(seat)
            except ValueError:
                raise ValueError(f"seat must be an int 0-3 or 'random', got {show(seat)}") from None
        if illegal not in ("terminate", "raise"):
            raise ValueError(f"illegal must be 'terminate' or 'raise', got {show(illegal)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        specs = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * 3
        if len(specs) != 3:
            raise ValueError(f"opponents must be one spec or a list of 3, got {len(specs)}")
        self.rules = make_rules(rules, **options)
        self._specs = [resolve(s, f"opponents[{i}]") for i, s in enumerate(specs)]   # unknown names fail here
        self._players = [None if _is_factory(s) else GamePlayer(r, rules=self.rules)
                          for s, r in zip(specs, self._specs, strict=True)]
        self._raw = specs
        self.seat_option = seat
        self.seat = 0 if seat == "random" else int(seat)
        self.reward_scale = as_finite("reward_scale", reward_scale)
        self.illegal = illegal
        self.illegal_reward = as_finite("illegal_reward", illegal_reward)
        self.render_mode = render_mode
        self.obs_type = check_obs_type(obs_type)
        self.observation_space = observation_space(obs_type)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.game = None
        self._over = False
        self._carry = 0
        self._in_opponent = False   # True while an opponent callable runs

    @property
    def opponents(self) -> list:
        """The three opponents now (seats ``seat + 1 .. seat + 3``): each Python agent as
        it was built (or given), an in-kernel one as its ``GamePlayer``; None before
        the first ``reset`` for a spec that is built at each reset."""
        return [s if not _is_factory(s) else None if p is None else p.agent if p.agent is not None else p
                for s, p in zip(self._raw, self._players, strict=True)]

    # ---- helpers --------------------------------------------------------
    def _mask(self):
        g = self.game
        if g is None or self._over or g.done or g.current_player != self.seat:
            return np.zeros(NUM_ACTIONS, np.int8)
        return g.legal_mask()

    def _info(self):
        return {"action_mask": self._mask(), "scores": self.game.scores,
                "hand": self.game.hand_index, "seat": self.seat}

    def _play_others(self):
        """Opponents act until it is our seat's turn or the game is over; return
        our seat's point change from the hands that closed meanwhile."""
        g, me = self.game, self.seat
        gained = 0
        while not g.done and g.current_player != me:
            p = g.current_player
            player = self._players[(p - me) % 4 - 1]
            self._in_opponent = True
            try:
                answer = player(g)        # checked: a legal id, else AgentError
            except AgentError as e:
                raise IllegalActionError(f"the opponent at seat {p}: {e}") from None
            finally:
                self._in_opponent = False
            gained += int(g.step(answer)[me])
        return gained

    def _refuse_reentry(self, what):
        if self._in_opponent:
            raise RuntimeError(f"{what}() of this env was called from inside one of its opponents; "
                               f"an opponent must only return an action")

    # ---- Gymnasium API ----------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """Bool mask of the legal actions now (all False once the episode is over)."""
        return self._mask().astype(bool)

    def reset(self, *, seed=None, options=None):
        """Start an episode (``seed``: None or an int in 0..2**64-1). If an opponent
        fails during it, the env is left as it was before the call."""
        self._refuse_reentry("reset")
        if seed is not None:
            seed = as_int("seed", seed, 0, 2 ** 64 - 1)
        saved = dict(self.__dict__, _players=list(self._players))
        rng_state = None if self._np_random is None else self._np_random.bit_generator.state
        try:
            return self._reset(seed)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            if rng_state is not None:
                self._np_random.bit_generator.state = rng_state
            raise

    def _reset(self, seed):
        super().reset(seed=seed)
        rng = self.np_random
        if self.seat_option == "random":
            self.seat = int(rng.integers(4))
        for i, s in enumerate(self._raw):
            if _is_factory(s):
                self._players[i] = GamePlayer(self._specs[i], int(rng.integers(2 ** 63)), self.rules)
        while True:   # a game that ends before our seat's first decision is skipped (docs/guide.md)
            self.game = Game(self.rules, seed=int(rng.integers(2 ** 63)))
            self._carry = self._play_others()   # hands that closed before our first turn: paid with the first step
            if not self.game.done:
                break
        self._over = False
        return self.game.observe(self.seat, self.obs_type), self._info()

    def step(self, action):
        self._refuse_reentry("step")
        g = self.game
        if g is None:
            raise ResetNeededError("call reset() before step()")
        if g.done or self._over:
            raise RuntimeError("the episode is over; call reset()")
        a = action_id(action, lambda: f"legal ids {g.legal_actions()}")
        if not in_action_range(a):
            raise ActionSpaceError(f"action {show(action)} is not in Discrete({NUM_ACTIONS}); "
                                   f"legal ids {g.legal_actions()}")
        if not g.is_legal(a):
            if self.illegal == "raise":
                g.step(a)  # raises the engine's error naming the legal ids
            self._over = True
            info = self._info()
            info["illegal"] = True
            return g.observe(self.seat, self.obs_type), self.illegal_reward, True, False, info
        before = g.clone()    # restored if an opponent fails
        try:
            gained = int(g.step(a)[self.seat]) + self._play_others() + self._carry
        except BaseException:   # an opponent failed: the step changes nothing
            self.game = before
            raise
        self._carry = 0
        return g.observe(self.seat, self.obs_type), self.reward_scale * gained, bool(g.done), False, self._info()

    def render(self):
        if self.render_mode is None or self.game is None:
            return None
        from ..views.render import render_ansi, render_rgb
        if self.render_mode == "ansi":
            return render_ansi(self.game, self.seat)
        return render_rgb(self.game)  # spectator picture: every hand open


ENV_ID = SINGLE_AGENT_ID  # registered with gymnasium by ``import majiang_env``
