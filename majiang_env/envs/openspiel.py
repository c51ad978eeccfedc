"""馬将 as an OpenSpiel game: ``python_majiang``, registered with ``pyspiel`` on import.

    pip install "majiang_env[openspiel]"        # open-spiel>=2.0.2

    import pyspiel
    import majiang_env.envs.openspiel                # registers "python_majiang"
    game = pyspiel.load_game("python_majiang", {"hands_per_game": 1})
    state = game.new_initial_state()            # 8 chance nodes draw the deal, then seat 0 acts

The game is a thin face over :class:`majiang_env.Game` (one ``Game`` per state,
``auto_forced=True``); the rules are the engine's, unchanged.

=====================  ===========================================================================
game type              sequential, imperfect information, 4 players, explicit chance, rewards
                       after every hand; ``ZERO_SUM`` under ``payment="zero_sum"``, ``GENERAL_SUM``
                       under ``"winner_only"``
parameters             every ``RuleConfig`` field with its default (docs/rules.md §10), plus
                       ``obs_type`` (``"features"``, the default, ``"float"`` or ``"compact"``). An unknown
                       name or a value of the wrong type is refused by ``pyspiel.load_game``; a
                       value ``RuleConfig`` does not allow raises ValueError naming it. An int
                       that does not fit a C++ int (``2**31``) is refused by pybind11 inside
                       ``pyspiel.load_game`` (RuntimeError) before the game sees it;
                       :func:`load_game` and ``MajiangGame(params)`` raise ValueError for it
actions                the engine's 156 ids (``majiang_env.engine.rules``, docs/api.md);
                       ``action_to_string`` gives ``action_name``
the deal (chance)      ``DEAL_BYTES`` = 8 chance nodes at the start, each with 256 equally likely
                       outcomes: the bytes (least significant first) of the 64-bit seed of
                       ``Game(seed=...)``, which deals every hand of the game. That is exactly the
                       engine's deal distribution (a uniform seed), listed explicitly, so
                       ``chance_outcomes()`` is a true distribution and the OpenSpiel history
                       (8 bytes, then the players' actions) replays the game. An outcome
                       outside 0..255 raises ValueError and changes nothing. 144! orderings
                       could not be listed, and a ``SAMPLED_STOCHASTIC`` Python game cannot be
                       serialized by OpenSpiel (``Game::GetRNGState`` is not reachable from
                       Python), so the seed is drawn in bytes instead
forced decisions       applied by the engine at once (``auto_forced``): a player never gets a
                       decision with one legal action (a state from ``resample_from_infostate``
                       may stand at one: see :meth:`MajiangState.resample_from_infostate`)
rewards / returns      in points, the engine's own scale: ``rewards()`` = the points of the hands
                       that closed in the last action (``Game.step``'s return), ``returns()`` =
                       the scores so far (``Game.scores``)
utility bounds         a win's base is at most 100 (docs/rules.md §9: at most 3 patterns on
                       disjoint melds of 4, the 4-meld patterns worth at most 100), its winner
                       gains 3 x base <= 300, a seat wins at most once a hand, and a hand has
                       at most ``wins_to_close`` wins, each costing one seat at most 300. Per
                       game: ``zero_sum`` [-300 * wins_to_close * H, 300 * H], ``winner_only``
                       [0, 300 * H], H = ``hands_per_game``
max_game_length        H x (16 exchange decisions when ``exchange`` + 76 turn slots x 2 phases)
observation            ``observation_tensor`` = ``Game.observe(p, obs_type)`` (float32[1364]
                       ``features``, normalised, made for networks; float32[1640] ``float``, the
                       compact view normalised for an MLP; or the int16[436] compact
                       view as floats); ``observation_string`` = the seat's view as text
                       (``views.render.render_ansi(game, p)``)
information state      ``information_state_string(p)``: a digest of exactly what p has seen
                       (below); no information state tensor
=====================  ===========================================================================

**Information state.** ``information_state_string(p)`` is ``"seat p, hand h,
decision n: <digest>"``, the digest (BLAKE2b, 128 bits) of: the decision log
of every hand so far with only p's own actions kept (the seat to act at each
decision is public; the other seats' actions are masked), p's compact
observation now, and p's legal actions when p is to act. All of it is what p
has seen, so two states p cannot tell apart share the string, and a world from
``Game.sample_hidden(p, ...)`` has p's string. It keys p's information up to
what carries no information about the hidden cards: the order in which p drew
cards it still holds or has since discarded, and the cards of earlier hands
(every hand is a fresh deal) are not in it. The observation at one decision
plus a decision count would not do: it forgets which of the public events
happened at which of p's turns. ISMCTS (``open_spiel.python.algorithms.ismcts``)
keys its nodes by this string. In a world from ``resample_from_infostate(p)``
the other seats' own past actions are withheld by the engine, so their
strings there are computed the same way from what that world holds.

**Cloning and serialization.** ``state.clone()`` copies the engine with
``Game.clone()``. ``state.serialize()`` is data only: JSON of format
``python_majiang-state/1`` holding the OpenSpiel history (the 8 deal bytes,
then the actions) and, for a state made by ``state_from_game`` or
``resample_from_infostate``, the start it was attached to (the game's
``majiang-record/1`` record, or a sampled world's state row) and the rewards
it came with. ``game.deserialize_state(s)`` accepts only such a string: the
start's record is replayed and checked (``records.replay``), a start row is
checked field by field (``engine.rows.check_row``), and each action of the
history is checked for legality before it is applied; any other string (an
OpenSpiel C++-format ``history=...__dict__=...`` one included) raises
ValueError, and nothing in it is run or unpickled. Pickling a state
(``pickle``, ``copy.deepcopy``) goes through the same string.
**OpenSpiel's own C++ path is outside this:** for every Python game,
``pyspiel.serialize_game_and_state`` / ``pyspiel.deserialize_game_and_state``
and C++ code that calls ``Game::DeserializeState`` (e.g.
``pyspiel.random_sim_test(..., serialize=True)``) use OpenSpiel's
``PyState::Serialize`` format, whose ``__dict__=`` part is a base64 pickle that
OpenSpiel unpickles with ``pickle.loads`` before this game sees it. A Python
game cannot override that route, so such strings may run code: read them
only from sources you trust, as any pickle.

**Planning.** ``state.resample_from_infostate(p, sampler)`` is a new state over
``Game.sample_hidden(p, seed)``: every card p cannot see redealt from exactly
the unseen cards; p's observation, information state string, and legal actions
(when p is to act) unchanged. The seed comes from ``sampler`` (a callable
returning floats in [0, 1), e.g. ``pyspiel.UniformProbabilitySampler(0., 1.)``)
or, without one, from a fresh random generator. Its OpenSpiel ``history()`` is
empty: the true history would give away the deal. Use OpenSpiel's Python
``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``): the C++
``pyspiel.ISMCTSBot`` cannot reach a Python game's ``resample_from_infostate``
(with pyspiel 2.0.2 its ``step`` ends the process with a segmentation fault).
:func:`state_from_game` wraps an existing ``Game`` (e.g. a world an arena agent
was given) in a state; ``majiang_env.agents.ismcts.ISMCTSAgent`` plays IS-MCTS in
``majiang_env.arena``.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import fields

import numpy as np

try:
    import pyspiel
except ImportError as e:     # the optional extra
    raise ImportError("majiang_env.envs.openspiel needs OpenSpiel (the pyspiel module): "
                      "pip install \"majiang_env[openspiel]\"") from e

from ..engine.checks import as_int, as_seat, is_int, show
from ..engine.encodings import OBS_SIZE, check_obs_type, encoded_size, make_encoder
from ..engine.game import Game, game_from_state
from ..engine.kernel import layout as L
from ..engine.records import replay
from ..engine.rules import NUM_ACTIONS, NUM_SEATS, RuleConfig, action_name, make_rules

__all__ = ["GAME_NAME", "DEAL_BYTES", "MajiangGame", "MajiangState", "load_game", "game_parameters",
           "state_from_game", "seed_actions"]

GAME_NAME = "python_majiang"
DEAL_BYTES = 8                     # chance nodes: the bytes of the 64-bit deal seed
MAX_WIN_GAIN = 300                 # 3 x the largest base (100), docs/rules.md §9
RULE_FIELDS = tuple(f.name for f in fields(RuleConfig))
_DEFAULT_RULES = RuleConfig()
PARAMETERS = {**{name: getattr(_DEFAULT_RULES, name) for name in RULE_FIELDS}, "obs_type": "features"}
_ZEROS = (0.0,) * NUM_SEATS


def _game_type(utility) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME, long_name="Majiang (馬将)", dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION, utility=utility,
        reward_model=pyspiel.GameType.RewardModel.REWARDS, max_num_players=NUM_SEATS,
        min_num_players=NUM_SEATS, provides_information_state_string=True,
        provides_information_state_tensor=False, provides_observation_string=True,
        provides_observation_tensor=True, parameter_specification=PARAMETERS)


_ZERO_SUM = _game_type(pyspiel.GameType.Utility.ZERO_SUM)
_GENERAL_SUM = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)


def game_parameters(rules=None, obs_type: str = "features") -> dict:
    """The ``pyspiel.load_game`` parameters of a rule set (RuleConfig, dict or None)."""
    return {**make_rules(rules).to_dict(), "obs_type": check_obs_type(obs_type)}


def load_game(rules=None, obs_type: str = "features"):
    """``pyspiel.load_game("python_majiang", game_parameters(rules, obs_type))``."""
    return pyspiel.load_game(GAME_NAME, game_parameters(rules, obs_type))


class MajiangGame(pyspiel.Game):
    """The OpenSpiel game (module docstring). ``rules``: its ``RuleConfig``."""

    def __init__(self, params=None):
        params = {**PARAMETERS, **(params or {})}
        try:
            self.rules = RuleConfig(**{name: params[name] for name in RULE_FIELDS})
            self.obs_type = check_obs_type(params["obs_type"])
        except ValueError as e:
            raise ValueError(f"{GAME_NAME}: {e}") from None
        r = self.rules
        hands, wins = r.hands_per_game, r.wins_to_close
        zero_sum = r.payment == "zero_sum"
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=256, num_players=NUM_SEATS,
            min_utility=float(-MAX_WIN_GAIN * wins * hands if zero_sum else 0),
            max_utility=float(MAX_WIN_GAIN * hands), utility_sum=0.0 if zero_sum else None,
            max_game_length=hands * (L.NUM_EXCHANGE * r.exchange + 2 * L.NUM_SLOTS))
        super().__init__(_ZERO_SUM if zero_sum else _GENERAL_SUM, info, params)
        self.encoder = make_encoder(self.obs_type, r)   # None for compact

    def new_initial_state(self):
        return MajiangState(self)

    def deserialize_state(self, string):
        """The state of ``string``, a ``state.serialize()`` of this game (module
        docstring, "Serialization"): its actions replayed from the start and each
        checked. Any other string, an OpenSpiel C++-format one included, raises
        ValueError; nothing in it is run or unpickled."""
        state = self.new_initial_state()
        _replay_into(state, _parse_state_string(string))
        return state

    def max_chance_nodes_in_history(self):
        return DEAL_BYTES

    def make_py_observer(self, iig_obs_type=None, params=None):
        if isinstance(iig_obs_type, dict):          # OpenSpiel calls make_py_observer(params) too
            iig_obs_type, params = None, iig_obs_type
        obs_type = self.obs_type
        if params:
            if set(params) != {"obs_type"}:
                raise ValueError(f"{GAME_NAME} observers take one parameter, obs_type; got {sorted(params)}")
            obs_type = check_obs_type(params["obs_type"])
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return _InfoStateObserver()
        if iig_obs_type is not None and (not iig_obs_type.public_info or iig_obs_type.private_info
                                         != pyspiel.PrivateInfoType.SINGLE_PLAYER):
            raise ValueError(f"{GAME_NAME} observes one seat's view (public and its own private information) "
                             "or its information state (perfect_recall=True); no other observation type")
        return _Observer(obs_type, self.encoder if obs_type == self.obs_type else make_encoder(obs_type, self.rules))


class _Engine:
    """Holds a state's ``Game``: copies with ``Game.clone()``, pickles as a record."""

    __slots__ = ("game",)

    def __init__(self, game: Game):
        self.game = game

    def __deepcopy__(self, memo):
        return _Engine(self.game.clone())

    def __reduce__(self):
        g = self.game
        if g.sampled:
            return _engine_from_row, (g.rules.to_dict(), np.array(g.state))
        return _engine_from_record, (g.record(),)


class _Start:
    """The game a state was attached to (``state_from_game``, ``resample_from_infostate``)
    and the rewards it came with: the start its serialization replays from. Never
    changed, so copies share it."""

    __slots__ = ("game", "rewards")

    def __init__(self, game: Game, rewards):
        self.game, self.rewards = game, tuple(rewards)

    def __deepcopy__(self, memo):
        return self

    def data(self) -> dict:
        g = self.game
        where = {"row": g.state.tolist()} if g.sampled else {"record": g.record()}
        return {**where, "rewards": list(self.rewards)}

    def __reduce__(self):
        return _start_from_data, (self.game.rules.to_dict(), self.data())


def _start_from_data(rules, data):
    return _Start(_start_game(make_rules(rules), data), data["rewards"])


def _engine_from_record(record):
    return _Engine(replay(record, auto_forced=True))


def _engine_from_row(rules, row):
    g = game_from_state(np.asarray(row), make_rules(rules), seed=0)     # checked (engine.rows)
    g.seed = None
    return _Engine(g)


# ---- state strings: data only -----------------------------------------------------------------
STATE_FORMAT = "python_majiang-state/1"
MAX_STATE_CHARS = 2_000_000        # a state string is at most a few hundred kB
_STATE_KEYS = {"format", "history", "start"}


def _bad(what: str):
    return ValueError(f"{GAME_NAME} state string: {what}")


def _parse_state_string(string) -> dict:
    """The parts of a state string, checked for their form (not yet for legality)."""
    if not isinstance(string, str):
        raise _bad(f"must be a str (the text of state.serialize()), got {type(string).__name__}")
    if len(string) > MAX_STATE_CHARS:
        raise _bad(f"{len(string)} characters, more than any state has ({MAX_STATE_CHARS})")
    if string.startswith("history="):
        raise _bad("this is OpenSpiel's C++ format (history=, move_number=, __dict__=), whose __dict__ part "
                   "is a pickle that can run code; it is refused here. Pass the text of state.serialize()")
    try:
        data = json.loads(string)
    except (ValueError, RecursionError):
        raise _bad(f"not JSON (expected the text of state.serialize(), format {STATE_FORMAT})") from None
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise _bad(f"not a {STATE_FORMAT} string (expected the text of state.serialize())")
    if set(data) != _STATE_KEYS:
        raise _bad(f"has the keys {sorted(data)}; a {STATE_FORMAT} string has exactly {sorted(_STATE_KEYS)}")
    hist = data["history"]
    if not isinstance(hist, list) or not all(is_int(a) for a in hist):
        raise _bad("history must be a list of ints (the actions applied since the start)")
    start = data["start"]
    if start is not None:
        if not isinstance(start, dict) or set(start) not in ({"record", "rewards"}, {"row", "rewards"}):
            raise _bad('start must be null or {"record": ..., "rewards": [4 numbers]} or '
                       '{"row": [ints], "rewards": [4 numbers]}')
        rw = start["rewards"]
        if not isinstance(rw, list) or len(rw) != NUM_SEATS or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in rw):
            raise _bad("start rewards must be a list of 4 finite numbers")
    return data


def _start_game(rules: RuleConfig, start: dict) -> Game:
    """The game a state string starts from: a record replayed (records.replay checks
    every decision) or a sampled world's state row (engine.rows checks it)."""
    if "record" in start:
        g = replay(start["record"], auto_forced=True)
        if g.rules != rules:
            raise _bad(f"the start record's rules ({g.rules}) are not this game's ({rules})")
        return g
    row = start["row"]
    if not isinstance(row, list) or len(row) != L.SIZE or not all(is_int(x) for x in row):
        raise _bad(f"a start row must be a list of {L.SIZE} ints")
    g = game_from_state(np.array(row, np.int64), rules, seed=0)
    if not g.sampled:
        raise _bad("a start row is only written for a sampled world (Game.sample_hidden); a game with a "
                   "history starts from its record")
    g.seed = None
    return g


def _replay_into(state, data: dict):
    """Apply a parsed state string to ``state``, a new initial state: attach its start,
    then apply its history, checking each action before it is applied."""
    os_game = state.get_game()
    hist = data["history"]
    if len(hist) > DEAL_BYTES + os_game.max_game_length():
        raise _bad(f"a history of {len(hist)} actions is longer than any game "
                   f"({DEAL_BYTES + os_game.max_game_length()})")
    if data["start"] is not None:
        rw = data["start"]["rewards"]
        lo, hi = os_game.min_utility(), os_game.max_utility()
        if not all(lo <= x <= hi for x in rw):
            raise _bad(f"start rewards {show(rw)} are outside the game's bounds [{lo}, {hi}]")
        g = _start_game(os_game.rules, data["start"])
        state._attach(g, rw, _Start(g.clone(), rw))
    for i, a in enumerate(hist):
        if state.is_terminal():
            raise _bad(f"history entry {i} ({a}) comes after the game is over")
        legal = range(256) if state.is_chance_node() else state.legal_actions()
        if a not in legal:
            raise _bad(f"history entry {i}: action {show(a)} is not legal there "
                       + ("(a chance outcome is 0..255)" if state.is_chance_node() else f"(legal ids {legal})"))
        state.apply_action(a)


class MajiangState(pyspiel.State):
    """One state of ``python_majiang`` (module docstring). ``engine``: its ``Game``
    once dealt (None during the 8 chance nodes of the deal); it holds every hidden
    card: a player's algorithm reads it only through the OpenSpiel methods."""

    def __init__(self, game):
        super().__init__(game)
        self._seed = 0               # the deal seed's bytes drawn so far
        self._dealt = 0              # chance nodes applied (DEAL_BYTES: dealt)
        self._engine = None          # _Engine once dealt
        self._rewards = _ZEROS       # points of the hands closed by the last action
        self._keys = None            # cached information state strings {player: string}
        self._start = None           # _Start when attached to a game (serialization replays from it)

    @property
    def engine(self):
        return None if self._engine is None else self._engine.game

    # ---- the OpenSpiel state API ------------------------------------------------------------
    def current_player(self):
        if self._engine is None:
            return pyspiel.PlayerId.CHANCE
        g = self._engine.game
        return pyspiel.PlayerId.TERMINAL if g.done else g.current_player

    def _legal_actions(self, player):        # (pyspiel asks only for the player to act)
        return self._engine.game.legal_actions()

    def chance_outcomes(self):
        return [(b, 1.0 / 256) for b in range(256)]

    def _apply_action(self, action):
        if self._engine is None:
            if not is_int(action) or not 0 <= action <= 255:
                raise ValueError(f"{GAME_NAME}: chance outcome {show(action)} is not one of this node's "
                                 f"outcomes 0..255 (deal seed byte {self._dealt}); nothing was applied")
            self._keys = None
            self._seed |= int(action) << (8 * self._dealt)
            self._dealt += 1
            if self._dealt == DEAL_BYTES:
                self._engine = _Engine(Game(self.get_game().rules, seed=self._seed, auto_forced=True))
            return
        rewards = self._engine.game.step(action)        # raises, changing nothing, for an illegal action
        self._keys = None
        self._rewards = tuple(float(x) for x in rewards)

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal seed byte {self._dealt}: {action}"
        return action_name(int(action))

    def is_terminal(self):
        return self._engine is not None and self._engine.game.done

    def returns(self):
        return list(_ZEROS) if self._engine is None else [float(x) for x in self._engine.game.scores]

    def rewards(self):
        return list(self._rewards)

    def __str__(self):
        if self._engine is None:
            return f"deal: {self._dealt} of {DEAL_BYTES} seed bytes drawn, nothing dealt yet"
        from ..views.render import render_ansi
        return render_ansi(self._engine.game)

    # ---- planning ------------------------------------------------------------------------------
    def resample_from_infostate(self, player_id, probability_sampler=None):
        """A new state that ``player_id`` cannot tell from this one (module docstring):
        over ``Game.sample_hidden(player_id, seed)``, the seed drawn from
        ``probability_sampler`` (a callable returning floats in [0, 1)) or, when it is
        None, from a fresh generator. Before the deal: the chance bytes drawn so far
        redrawn. Its OpenSpiel history is empty."""
        p = as_seat(player_id)
        draw = _uniform(probability_sampler)
        new = self.get_game().new_initial_state()
        if self._engine is None:
            for _ in range(self._dealt):
                new.apply_action(min(255, int(draw() * 256)))
            return new
        seed = (min(2 ** 32 - 1, int(draw() * 2 ** 32)) << 32) | min(2 ** 32 - 1, int(draw() * 2 ** 32))
        world = self._engine.game.sample_hidden(p, seed)
        world.seed = None            # the true game's deal seed is no part of the world
        new._attach(world, self._rewards)
        return new

    def _attach(self, game: Game, rewards=_ZEROS, start=None):
        self._engine, self._dealt, self._rewards, self._keys = _Engine(game), DEAL_BYTES, tuple(rewards), None
        self._start = start if start is not None else _Start(game.clone(), rewards)
        return self

    # ---- serialization: data only -----------------------------------------------------------
    def serialize(self) -> str:
        """This state as ``python_majiang-state/1`` JSON (module docstring): the actions
        since the start, and the start when the state was attached to a game."""
        return json.dumps({"format": STATE_FORMAT, "history": [int(a) for a in self.history()],
                           "start": None if self._start is None else self._start.data()},
                          separators=(",", ":"), ensure_ascii=False)

    def __getstate__(self):
        return {"parameters": dict(self.get_game().get_parameters()), "state": self.serialize()}

    def __setstate__(self, data):
        if not isinstance(data, dict) or set(data) != {"parameters", "state"} \
                or not isinstance(data["parameters"], dict):
            raise _bad("a pickled python_majiang state holds its game's parameters and its state string")
        game = pyspiel.load_game(GAME_NAME, data["parameters"])
        MajiangState.__init__(self, game)
        _replay_into(self, _parse_state_string(data["state"]))

    # ---- information ---------------------------------------------------------------------------
    def info_key(self, player) -> str:
        """``information_state_string(player)`` (module docstring), cached until the next action."""
        p = as_seat(player)
        if self._keys is not None and p in self._keys:
            return self._keys[p]
        if self._engine is None:
            key = f"seat {p}, before the deal"
        else:
            g = self._engine.game
            st = g.state
            h = min(g.hand_index, g.rules.hands_per_game - 1)
            nd = st[L.HNDEC:L.HNDEC + h + 1]
            log = st[L.DECLOG:L.DECLOG + (h + 1) * L.MAX_DEC * 2].reshape(h + 1, L.MAX_DEC, 2)
            d = hashlib.blake2b(nd.tobytes(), digest_size=16)
            for hh in range(h + 1):                     # each hand's seats to act, and p's own actions only
                seats = log[hh, :nd[hh], 0]
                d.update(seats.tobytes())
                d.update(np.where(seats == p, log[hh, :nd[hh], 1], -1).tobytes())
            d.update(g.observe(p).tobytes())
            if not g.done and g.current_player == p:
                d.update(g.legal_mask().tobytes())
            key = f"seat {p}, hand {g.hand_index}, decision {int(nd.sum())}: {d.hexdigest()}"
        if self._keys is None:
            self._keys = {}
        self._keys[p] = key
        return key


def _uniform(sampler):
    if sampler is None:
        return np.random.default_rng().random
    if not callable(sampler):
        raise ValueError(f"probability_sampler must be a callable returning floats in [0, 1) "
                         f"(e.g. pyspiel.UniformProbabilitySampler(0., 1.)) or None, got {show(sampler, 80)}")

    def draw():
        x = sampler()
        if not isinstance(x, (float, int, np.floating, np.integer)) or isinstance(x, bool) or not 0 <= x <= 1:
            raise ValueError(f"probability_sampler returned {show(x)}; expected a float in [0, 1)")
        return float(x)
    return draw


class _Observer:
    """One seat's view: ``Game.observe(p, obs_type)`` as the tensor, the seat's table as text."""

    def __init__(self, obs_type, encoder):
        self.obs_type, self.encoder = obs_type, encoder
        self.tensor = np.zeros(encoded_size(obs_type) or OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        g = state.engine
        if g is None:
            self.tensor[:] = 0
            return
        obs = g.observe(as_seat(player))
        if self.obs_type == "compact":
            self.tensor[:] = obs
        else:
            mask = g.legal_mask() if not g.done and g.current_player == player else np.zeros(NUM_ACTIONS, np.int8)
            self.tensor[:] = self.encoder(obs, mask)

    def string_from(self, state, player):
        g = state.engine
        p = as_seat(player)
        if g is None:
            return f"seat {p}: {state}"
        from ..views.render import render_ansi
        return render_ansi(g, p)


class _InfoStateObserver:
    """The information state (module docstring): a string, no tensor."""

    tensor = None
    dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return state.info_key(player)


def seed_actions(seed: int) -> list:
    """The 8 chance actions that deal ``Game(seed=seed)``: the seed's bytes, least significant first."""
    if seed is None:
        raise ValueError("seed_actions needs a seed: an int in 0..2**64-1 (got None)")
    seed = as_int("seed", seed, 0, 2 ** 64 - 1)
    return [(seed >> (8 * i)) & 255 for i in range(DEAL_BYTES)]


def state_from_game(game: Game, os_game=None) -> MajiangState:
    """An OpenSpiel state over a copy of ``game`` (a ``Game``, e.g. a world from
    ``sample_hidden``), for ``os_game`` (default: ``load_game(game.rules)``), whose
    rules must be ``game``'s. Its OpenSpiel history starts here (empty); the copy
    keeps no deal seed, so nothing in the state names the true deal."""
    if not isinstance(game, Game):
        raise ValueError(f"state_from_game needs a majiang_env.Game, got {show(game, 80)} ({type(game).__name__})")
    if not game.auto_forced:
        raise ValueError("state_from_game needs a Game with auto_forced=True (python_majiang applies forced "
                         "decisions at once)")
    if os_game is None:
        os_game = load_game(game.rules)
    elif not isinstance(os_game, MajiangGame) or os_game.rules != game.rules:
        raise ValueError(f"os_game must be a {GAME_NAME} game with the rules of game ({game.rules}), "
                         f"got {show(os_game, 80)}")
    copy = game.clone()
    if copy.sampled:
        copy.seed = None         # a world's copy of the true deal seed (docstring)
    return os_game.new_initial_state()._attach(copy)


pyspiel.register_game(_ZERO_SUM, MajiangGame)
