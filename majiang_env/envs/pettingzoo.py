"""馬将 (Majiang) as a PettingZoo AEC environment: the env card of ``majiang_v2``.

This environment is part of the ``majiang_env`` project (not of PettingZoo's
own classic suite); it follows the classic environments' conventions. The
rules are docs/rules.md, the contract docs/api.md.

| | |
|---|---|
| Import | `from majiang_env import majiang_v2` then `majiang_v2.env()` (also `raw_env`, `parallel_env`); `majiang_env.env` is the same function |
| Actions | Discrete(157): the game's ids 0–155 and `PASS_ACTION` = 156 |
| Parallel API | Yes: `parallel_env()` (turn-based: one agent acts per step, the others pass); not `aec_to_parallel(env())`, see below |
| Manual Control | Yes, in a terminal: `python -m majiang_env play` |
| Agents | `agents = ['player_0', 'player_1', 'player_2', 'player_3']` |
| Agents | 4 |
| Action Shape | Discrete(157) |
| Action Values | Discrete(157) |
| Observation Shape | dict: `"observation"` (OBS_SIZE,) = (436,), `"action_mask"` (157,) |
| Observation Values | `"observation"`: int16 Box; `"action_mask"`: int8 Box(0, 1, (157,)) |

One episode is one game of `hands_per_game` hands (default 4). Agent
`player_i` is seat i (東 南 西 北 for i = 0..3). Forced decisions (exactly one
legal action) are applied by the engine itself; agents are asked only for real
choices.

``env(render_mode=None, rules=None, obs_type="compact", **options)``: ``rules``
is a ``RuleConfig`` (or dict); ``options`` are ``RuleConfig`` field overrides
(docs/rules.md §10), e.g. ``env(hands_per_game=1, chow_from="previous")``.
``obs_type="float"`` (the compact view normalised for an MLP) or ``"features"``
makes ``"observation"`` that float32 encoding (``majiang_env.engine.encodings``,
docs/observation.md "Float", "Features") instead of the compact int16 vector
below; the kernel computes it.

### Observation Space

``observe(agent)`` returns a dict ``{"observation", "action_mask"}``. The
observation is an int16 vector (``majiang_env.engine.kernel.observe.OBS_SIZE``)
holding exactly what docs/rules.md §11 lets that player see (docs/observation.md). Seats are relative:
r = 0 is the observer, r = 1 the next seat, and so on.

| segment | length | content |
|---|---|---|
| `OBS_HAND` (0) | 36 | own concealed hand, count per kind |
| `OBS_DRAWN` (36) | 36 | own card drawn this turn (one-hot kind) |
| `OBS_SIDE` (72) | 4x36 | side cards per relative seat (others only if `side_cards_public`) |
| `OBS_RIVER` (216) | 4x18 | river cards, kind + 1 (0 = empty), in order |
| `OBS_RFLAG` (288) | 4x18 | per river card: bits 0-3 picked up by relative seat, bits 4-7 won on by relative seat, bit 8 kan card |
| `OBS_MELD` (360) | 4x4x3 | melds per relative seat, in the order made: type (1 刻 2 順 3 暗 4 明; 刻 順 明 hold one unseen stand-in), kind + 1 (順: its lowest kind), the claimed discard's kind + 1 (刻 順 明; 0 for 暗) |
| `OBS_CLAIM` (408) | 4 | claimable discard of each relative seat, kind + 1 |
| `OBS_SCALAR` (412) | 24 | seat, hand index, start seat (rel), lap, phase (0 変 1 take 2 discard 3 over), turn slot, wins this hand, own take this turn (0 none 1 引 2 拾), own picked-up kind + 1, 変 decisions left (0 when exchange is off), retired x4 (rel), scores x4 (rel), square cards left x4 (rel), 2 zeros |

A player never sees another player's hand, drawn card, side cards (unless
public), stand-ins or any square.

### Legal Actions Mask

``observation["action_mask"]`` (int8, 157) always has at least one legal id:

* the agent to act: exactly its legal actions at this decision (ids 0–155,
  the engine's ``Game.legal_mask()``); 156 is never legal for it;
* every other agent: 156 (``PASS_ACTION``) alone, and so every agent once the
  game is over (an agent that is done still steps ``None``, as in any AEC env).

### Action Space

`d` is a seat offset: the seat `(me + d) % 4`, d = 1 is the next seat.

| ids | phase | action |
|---|---|---|
| 0–35 | discard | 打 discard one card of kind `id` |
| 36–71 | discard | 暗 concealed kan of kind `id - 36` |
| 72–107 | discard | 明 added kan on your 刻 meld of kind `id - 72` |
| 108 | discard | 模 tsumo |
| 109 | discard | pass (last lap only, docs/rules.md §6) |
| 110 | take | 引 draw |
| 111–113 | take | 刻 pung the claimable discard of seat offset d = `id - 110` |
| 114–116 | take | 順 chow the chow-source seat's claimable discard, which is the low / middle / high card of the run |
| 117–119 | take | 栄 ron the claimable discard of seat offset d = `id - 116` |
| 120–155 | exchange | 変 set aside one card of kind `id - 120` as a side card |
| 156 | (not to act) | `PASS_ACTION`: wait while another agent acts; only in this PettingZoo face (the game's own ids stop at 155) |

`kind = face * 9 + (number - 1)`; faces 0 青 blue, 1 赤 red, 2 黄 yellow, 3 緑 green.

### Rewards

At the end of each hand every agent receives its point change for that hand
(integers, summing to 0 under `payment="zero_sum"`), on the step that closed
the hand. All other steps give 0. Over an episode the cumulative rewards are
the final game scores.

Illegal moves: through ``env()`` (``ClassicWrapper``, one layer equivalent to
PettingZoo's ``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper`` and
``OrderEnforcingWrapper``) an illegal action ends the game, the offender
gets ``illegal_reward = -1000`` and the others 0. ``raw_env`` raises the engine's ``ValueError``
(``IllegalActionError``) and leaves the game unchanged. For the agent to act,
156 is an illegal action like any other id its mask does not mark.
A value that is not an action id at all (not an integer, or outside 0..156,
however long) raises ``ActionSpaceError``, which is both an ``IllegalActionError``
and the ``AssertionError`` of PettingZoo's ``AssertOutOfBoundsWrapper``, from
``env()``, ``parallel_env()`` and ``raw_env`` alike, and changes nothing.

``close()`` has nothing to release (no window, file, thread or process): after
it the env stays usable, ``reset()`` starts a new game and ``step()`` goes on.

### State

``state()`` (PettingZoo's state for centralised critics; ``env()`` and
``parallel_env()`` forward it) is the full-information state of the game,
``Game.full_state()``: an int16 vector (``STATE_SIZE`` = 682, format
``"majiang-state/1"``) with every seat's concealed hand, drawn card, side
cards and stand-ins, the untaken squares of the hand and the public table, in
absolute seats. ``state_space`` is its Box with the real bounds of each entry.
It holds every hidden card, so it is never part of an observation
(docs/observation.md, "Full state"). Before ``reset()`` it raises
``ResetNeededError``.

### Parallel API

``parallel_env()`` is the Parallel form of ``env()`` (PettingZoo's
``turn_based_aec_to_parallel``, with the checks below). Every step takes a dict
of actions: the acting agent's action (required; its mask marks its legal ids)
and, for each other live agent, 156 or nothing. Every agent's mask has a legal
id, so a masked sampler needs no glue: TorchRL's
``PettingZooWrapper(parallel_env(), use_mask=True)`` and SuperSuit's
``pettingzoo_env_to_vec_env_v1(parallel_env())`` run as they are (docs/guide.md).
Another in-range id for an idle agent is an illegal move, as for the acting
agent: the game ends, each offender gets -1000 and the others 0 (what
PettingZoo's ``parallel_seed_test`` sees when it samples every agent's
action without the mask). A value outside Discrete(157) for any agent, or no
entry for the acting agent, raises ``ActionSpaceError`` and changes nothing.
Once the game is over (``agents`` is empty), ``step`` returns the five dicts
of PettingZoo's Parallel API (observations, rewards, terminations,
truncations, infos), all empty, as PettingZoo's ``aec_to_parallel`` does.

PettingZoo's generic ``aec_to_parallel(env())`` does not apply, and
``metadata["is_parallelizable"]`` is False: it needs every agent to act once
per cycle in seat order, while here a seat acts several times in a row (take
phase, then discard phase; the exchange decisions of 変) and forced decisions
are skipped.

### Version History

* v2: `PASS_ACTION` = 156, the one legal action of every agent not to act
  (Discrete(157), masks of length 157). In v1 those agents had an all-zero
  mask, no legal action, so the masked samplers of MARL libraries (TorchRL,
  SuperSuit vector envs) could not run over ``parallel_env()``. The game, its
  ids 0–155, the observation and the records are unchanged.
* v1: Initial release (`majiang_v1`; now a deprecated module that says to use
  `majiang_v2`).
"""  # noqa: E501 (the env card's table rows)
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper
from pettingzoo.utils.env_logger import EnvLogger

from ..engine.checks import ActionSpaceError, IllegalActionError, ResetNeededError, action_id, show
from ..engine.encodings import check_obs_type, observation_space
from ..engine.game import Game
from ..engine.kernel.fullstate import STATE_HIGH, STATE_LOW
from ..engine.rules import NUM_ACTIONS, make_rules

__all__ = ["env", "raw_env", "parallel_env", "ClassicWrapper", "ILLEGAL_REWARD", "PASS_ACTION"]

ILLEGAL_REWARD = -1000
PASS_ACTION = NUM_ACTIONS        # 156: the action of an agent not to act (this face only; the engine's ids end at 155)
_SPACE_N = NUM_ACTIONS + 1       # Discrete(157)


CARD = __doc__  # the env card; help(env), help(raw_env), help(parallel_env) show it


def _with_card(summary: str):
    """Give a public constructor the docstring ``summary`` followed by the env card."""
    def put(obj):
        obj.__doc__ = f"{summary}\n\n{CARD}"
        return obj
    return put


def _action(action, context) -> int:
    """``action`` as an id of Discrete(157), or ``ActionSpaceError`` naming it and ``context()``."""
    if type(action) is int:
        a = action
    else:
        try:
            a = action_id(action)
        except ActionSpaceError:
            raise ActionSpaceError(f"action must be an int (or numpy integer) in 0..{PASS_ACTION}, got "
                                   f"{show(action)} ({type(action).__name__}); {context()}") from None
    if not 0 <= a <= PASS_ACTION:
        raise ActionSpaceError(f"action {show(action)} is not in Discrete({_SPACE_N}); {context()}")
    return a


@_with_card("The wrapped AEC environment: ``raw_env`` inside :class:`ClassicWrapper` "
            "(illegal move: game over, offender -1000).")
def env(render_mode=None, rules=None, obs_type="compact", **options):
    return ClassicWrapper(raw_env(render_mode=render_mode, rules=rules, obs_type=obs_type, **options),
                          illegal_reward=ILLEGAL_REWARD)


def _forward(name):
    def get(self):
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)
    return property(get, doc=f"``{name}`` of the wrapped environment (after reset).")


class ClassicWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's three classic wrappers in one layer.

    Behaves as ``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(
    TerminateIllegalWrapper(env, illegal_reward)))``: an out-of-space action
    fails an ``AssertionError``; an action the mask forbids (156, the pass, for
    the agent to act) warns, ends the game for everyone (terminated and
    truncated) and gives the offender ``illegal_reward`` (others 0); using the
    env before ``reset`` raises the order-enforcing errors. One layer instead of
    three, with the episode attributes read straight from the wrapped env, is
    what keeps the AEC loop fast (``benchmarks/bench_fastpath.py``,
    ``benchmarks/compare_peers.py``); ``tests/envs/test_pettingzoo.py`` checks it
    against the three stacked PettingZoo wrappers step by step.
    """

    def __init__(self, env, illegal_reward):
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)

    agents = _forward("agents")
    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = _forward("_cumulative_rewards")

    @property
    def num_agents(self):
        return len(self.agents)

    def state(self):
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before state()")
        return self.env.state()

    def observe(self, agent):
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before observe()")
        return self.env.observe(agent)

    def last(self, observe=True):
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before last()")
        raw = self.env
        a = raw.agent_selection
        return (raw.observe(a) if observe else None, raw._cumulative_rewards[a],
                raw.terminations[a], raw.truncations[a], raw.infos[a])

    def step(self, action):
        if not self._has_reset:
            raise ResetNeededError("reset() needs to be called before step()")
        raw = self.env
        if not raw.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            raw.step(action)  # only None is accepted for a dead agent
            self._has_updated = True
            return
        a = _action(action, lambda: f"legal ids {raw.game.legal_actions()}")
        self._has_updated = True
        if a != PASS_ACTION and raw.game.is_legal(a):
            raw.step(a)
            return
        EnvLogger.warn_on_illegal_move()
        self._end_illegal([agent])

    def _end_illegal(self, offenders):
        """The illegal-move outcome: the game ends for everyone (terminated and truncated),
        each offender gets ``illegal_reward``, the others 0."""
        raw = self.env
        raw._cumulative_rewards[raw.agent_selection] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.agents, 0)
        for agent in offenders:
            raw.rewards[agent] = self._illegal_reward
        raw._accumulate_rewards()
        raw._deads_step_first()

    def __str__(self):
        return str(self.env)


class _ParallelEnv(turn_based_aec_to_parallel_wrapper):
    """PettingZoo's ``turn_based_aec_to_parallel`` over ``env()``, with the
    pass: each idle live agent's action is 156 or absent. ``step`` before
    ``reset``, a value outside Discrete(157) and an ``actions`` dict without the
    acting agent are clear errors that change nothing; another id for an idle
    agent is an illegal move (the game ends, offender -1000)."""

    def step(self, actions):
        aec = self.aec_env
        if not getattr(aec, "_has_reset", False):
            raise ResetNeededError("reset() needs to be called before step()")
        if not isinstance(actions, dict):
            raise ActionSpaceError(f"actions must be a dict {{agent: action}}, not {type(actions).__name__}")
        if not self.agents:     # the game is over: ParallelEnv's 5-tuple, with no live agent in it
            return {}, {}, {}, {}, {}
        raw = aec.unwrapped
        acting = raw.agent_selection
        if acting not in actions:
            raise ActionSpaceError(f"actions has no entry for the acting agent {show(acting)}")
        chosen, offenders = None, []
        for agent in self.agents:   # check every action before anything moves
            if agent not in actions:
                continue
            if agent == acting:
                chosen = _action(actions[agent], lambda: f"legal ids of {acting}: {raw.game.legal_actions()}")
            elif _action(actions[agent], lambda agent=agent: f"{agent} is not to act: its one legal "
                         f"action is {PASS_ACTION} (pass)") != PASS_ACTION:
                offenders.append(agent)
        if not offenders:
            return super().step(actions)
        if chosen == PASS_ACTION or not raw.game.is_legal(chosen):
            offenders.append(acting)
        EnvLogger._generic_warning(
            f"[WARNING]: Illegal move made by {', '.join(offenders)} (an agent not to act has one legal action, "
            f"{PASS_ACTION}: pass), game terminating with the offenders losing.")
        aec._end_illegal(offenders)
        rewards, terminations = {**aec.rewards}, {**aec.terminations}
        truncations, infos = {**aec.truncations}, {**aec.infos}
        observations = {agent: aec.observe(agent) for agent in aec.agents}
        while aec.agents:           # every agent is done: step them out, as turn_based_aec_to_parallel does
            aec.step(None)
        self.agents = aec.agents
        return observations, rewards, terminations, truncations, infos


@_with_card("The Parallel form of ``env()``: PettingZoo's ``turn_based_aec_to_parallel``; "
            "the agents not to act pass (156).")
def parallel_env(render_mode=None, rules=None, obs_type="compact", **options):
    return _ParallelEnv(env(render_mode=render_mode, rules=rules, obs_type=obs_type, **options))


@_with_card("The AEC environment without wrappers: an illegal action raises "
            "``IllegalActionError`` and changes nothing.")
class raw_env(AECEnv, EzPickle):
    metadata = {
        "name": "majiang_v2",
        "render_modes": ["human", "ansi", "rgb_array"],
        # False: PettingZoo's aec_to_parallel needs one action per agent per cycle in
        # seat order, which this game does not have; parallel_env() is the Parallel form
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, render_mode=None, rules=None, obs_type="compact", **options):
        EzPickle.__init__(self, render_mode=render_mode, rules=rules, obs_type=obs_type, **options)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} "
                             f"or None, not {show(render_mode)}")
        self.render_mode = render_mode
        self.rules = make_rules(rules, **options)
        self.possible_agents = [f"player_{i}" for i in range(4)]
        self.agents = self.possible_agents[:]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.obs_type = check_obs_type(obs_type)
        obs_space = spaces.Dict({
            "observation": observation_space(obs_type),
            "action_mask": spaces.Box(low=0, high=1, shape=(_SPACE_N,), dtype=np.int8),
        })
        act_space = spaces.Discrete(_SPACE_N)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(STATE_LOW, STATE_HIGH, dtype=np.int16)   # state(), for centralised critics
        self.game = None
        self._clear_episode()
        self.agent_selection = self.agents[0]

    def _clear_episode(self):
        self.rewards = {a: 0 for a in self.agents}
        self._rewarded = False
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.game = Game(self.rules, seed=seed)
        self.agents = self.possible_agents[:]
        self._clear_episode()
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self.game.current_player]

    def _seat_of(self, agent) -> int:
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"agent must be one of {self.possible_agents}, got {show(agent)}")
        return seat

    def _live_game(self, call) -> Game:
        if self.game is None:
            raise ResetNeededError(f"reset() needs to be called before {call}()")
        return self.game

    def state(self) -> np.ndarray:
        """The full-information state for centralised critics: ``Game.full_state()`` of the
        game, int16[STATE_SIZE] in absolute seats, within ``state_space`` (env card, "State")."""
        return self._live_game("state").full_state()

    def observe(self, agent):
        seat = self._seat_of(agent)
        g = self._live_game("observe")
        mask = np.zeros(_SPACE_N, np.int8)
        if g.current_player == seat and not (self.terminations.get(agent, True) or self.truncations[agent]):
            mask[:NUM_ACTIONS] = g.legal_mask()   # the agent to act (current_player is -1 once the game is over)
        else:
            mask[PASS_ACTION] = 1
        return {"observation": g.observe(seat, self.obs_type), "action_mask": mask}

    def step(self, action):
        g = self._live_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        a = _action(action, lambda: f"legal ids {g.legal_actions()}")
        if a == PASS_ACTION:
            raise IllegalActionError(f"action {show(action)} (pass) is not legal for {agent}, the agent to act: "
                                     f"legal ids {g.legal_actions()}")
        deltas = g.step(a).tolist()  # raises IllegalActionError if illegal, changing nothing
        self._cumulative_rewards[agent] = 0
        closed = g.closed_hand is not None
        if closed:  # a hand closed: everyone gets its point change
            self.rewards = {a: deltas[self._seat[a]] for a in self.agents}
            self._accumulate_rewards()
        elif self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0)
        self._rewarded = closed
        if g.done:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[g.current_player]
        if self.render_mode == "human":
            self.render()

    def render(self):
        self._live_game("render")
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("render() called without a render_mode; "
                                  "use env(render_mode='ansi' | 'human' | 'rgb_array')")
            return None
        from ..views.render import render_ansi, render_rgb
        if self.render_mode == "ansi":
            return render_ansi(self.game)
        if self.render_mode == "human":
            print(render_ansi(self.game))
            return None
        return render_rgb(self.game)

    def close(self):
        pass
