"""``Game``: one game of 馬将 as a Python object over the numba kernel.

Also ``replay`` and ``RecordError`` for ``majiang-record/1`` game records.
"""
from __future__ import annotations

import json

import numpy as np

from . import tables
from .checks import (ActionSpaceError, IllegalActionError, action_id, as_bool, as_int, as_seat, as_seed,
                     in_action_range, int_array)
from .kernel import core
from .kernel import layout as L
from .kernel.observe import OBS_SIZE, observe as _observe
from .observation import FeatureEncoder, check_obs_type
from .rules import (NUM_ACTIONS, RuleConfig, SHAPE_NAMES, action_name, kind_name,
                    make_rules)

RECORD_FORMAT = "majiang-record/1"
PHASE_NAMES = ("exchange", "take", "discard", "over")
MELD_TYPE_NAMES = {L.MT_PUNG: "pung", L.MT_CHOW: "chow", L.MT_ANKAN: "ankan", L.MT_MINKAN: "minkan",
                   L.MT_CONCEALED_TRIPLET: "concealed_triplet", L.MT_CONCEALED_RUN: "concealed_run"}

__all__ = ["Game", "replay", "RecordError", "IllegalActionError", "RECORD_FORMAT"]


class RecordError(ValueError):
    """A game record that cannot be replayed; the message names the first bad field."""


_check_seed = as_seed  # old private name, still imported by majiang_env.distributed


def _check_squares(squares):
    arr = int_array("squares", squares)
    if arr.ndim != 3 or arr.shape[1:] != (4, 36) \
            or not 1 <= arr.shape[0] <= 4:
        raise ValueError(f"squares must be an integer array of shape (hands, 4, 36) with 1-4 hands, "
                         f"got {arr.dtype} {arr.shape}")
    for h in range(arr.shape[0]):
        if not np.array_equal(np.sort(arr[h].ravel()), np.arange(144)):
            raise ValueError(f"squares of hand {h} are not the 144 distinct card ids 0-143")
    return arr.astype(np.int32)


class Game:
    """One game (``hands_per_game`` hands) of 馬将; see docs/api.md."""

    def __init__(self, rules=None, seed=None, auto_forced=True, squares=None):
        self.rules = make_rules(rules)
        self.auto_forced = as_bool("auto_forced", auto_forced)
        self.seed = as_seed(seed)
        self._rules = self.rules.to_array(self.auto_forced)
        self._wt = tables.win_table()
        self._st = np.zeros(L.SIZE, np.int32)
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._encoder = None  # the FeatureEncoder, made at the first observe(obs_type="features")
        core.deal_squares(self._st, np.uint64(self.seed))
        if squares is not None:
            sq = _check_squares(squares)
            self._st[L.SQUARES:L.SQUARES + sq.size] = sq.ravel()
        core.new_game(self._st, self._rules)
        self._n = core.settle(self._st, self._rules, self._wt)
        core.write_mask(self._st, self._mask)

    # ---- state -------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """The kernel's state row of this game, read-only (int32[layout.SIZE]; every field
        is named in ``majiang_env/kernel/layout.py``). It holds hidden information:
        for what one seat may see, use ``observe(seat)``."""
        v = self._st.view()
        v.flags.writeable = False
        return v

    @property
    def current_player(self) -> int:
        return int(self._st[L.CUR])

    @property
    def done(self) -> bool:
        return self._st[L.PHASE] == L.PH_OVER

    @property
    def scores(self) -> np.ndarray:
        return self._st[L.SCORES:L.SCORES + 4].astype(np.int64)

    @property
    def hand_index(self) -> int:
        return int(self._st[L.HAND])

    @property
    def phase(self) -> str:
        return PHASE_NAMES[self._st[L.PHASE]]

    @property
    def lap(self) -> int:
        return int(self._st[L.SLOT]) // 4 + 1

    def legal_mask(self) -> np.ndarray:
        return self._mask.copy()

    def is_legal(self, action) -> bool:
        """Whether ``action`` is legal now (False for an int outside 0..155;
        ``IllegalActionError`` for a value that is not an integer)."""
        a = action_id(action)
        return in_action_range(a) and bool(self._mask[a])

    def legal_actions(self) -> list:
        return np.flatnonzero(self._mask).tolist()

    # ---- moves -------------------------------------------------------------
    def step(self, action) -> np.ndarray:
        """Apply ``action`` (and forced actions after it); return the points each
        seat gained in hands that closed during this call (int64[4])."""
        a = action_id(action, self._where)
        if not (0 <= a < NUM_ACTIONS and self._mask[a]):
            raise (IllegalActionError if in_action_range(a) else ActionSpaceError)(
                f"action {action!r} ({action_name(a) if in_action_range(a) else 'out of range'}) "
                f"is not legal: {self._where()}")
        self._n = core.step(self._st, self._rules, self._wt, a, self._mask)
        h = self.closed_hand
        if h is not None:
            return self._st[L.DELTAS + 4 * h:L.DELTAS + 4 * h + 4].astype(np.int64)
        return np.zeros(4, np.int64)

    def _where(self) -> str:
        """The decision, for error messages."""
        what = "the game is over" if self.done else f"phase {self.phase}, seat {self.current_player}"
        return f"{what}, legal ids {self.legal_actions()}"

    @property
    def closed_hand(self):
        """The hand (0-based) that closed during the last ``step``, or None."""
        h = int(self._st[L.CLOSED])
        return None if h < 0 else h

    # ---- observation -------------------------------------------------------
    def observe(self, seat, obs_type: str = "compact") -> np.ndarray:
        """What ``seat`` (0..3) may see (docs/rules.md §11), a new array: int16[OBS_SIZE]
        (``obs_type="compact"``) or its float32 ``"features"`` encoding
        (``majiang_env.observation``; its per-action block uses the legal actions
        when ``seat`` is to act)."""
        seat = as_seat(seat)
        check_obs_type(obs_type)
        out = np.zeros(OBS_SIZE, np.int16)
        _observe(self._st, self._rules, seat, out)
        if obs_type == "compact":
            return out
        if self._encoder is None:
            self._encoder = FeatureEncoder(self.rules)
        mask = self._mask if seat == self.current_player else np.zeros(NUM_ACTIONS, np.int8)
        return self._encoder(out, mask)

    # ---- records -----------------------------------------------------------
    def _hand(self, h) -> int:
        return as_int("hand index", h, 0, self.rules.hands_per_game - 1)

    def hand_deltas(self, h) -> np.ndarray:
        """Each seat's point change in hand ``h`` (0-based; zeros for a hand not played yet)."""
        h = self._hand(h)
        return self._st[L.DELTAS + 4 * h:L.DELTAS + 4 * h + 4].astype(np.int64)

    def wins(self, h) -> list:
        """The wins of hand h (0-based), each with its scoring (patterns and the reading used)."""
        return decode_wins(self._st, self._hand(h))

    def record(self, legal: bool = False) -> dict:
        """The game so far as a ``majiang-record/1`` dict (legal sets when ``legal``)."""
        st = self._st
        sets = _legal_sets(self) if legal else None
        last = min(int(st[L.HAND]), self.rules.hands_per_game - 1)
        hands = []
        for h in range(last + 1):
            decs = self._decisions(h)
            if legal:
                decs = [d + [sets[h][i]] for i, d in enumerate(decs)]
            sq = st[L.SQUARES + h * 144:L.SQUARES + (h + 1) * 144].reshape(4, 36)
            hands.append({"index": h, "start_seat": h % 4, "squares": sq.tolist(),
                          "decisions": decs, "wins": self.wins(h),
                          "deltas": self.hand_deltas(h).tolist()})
        return {"format": RECORD_FORMAT, "rules": self.rules.to_dict(), "seed": self.seed,
                "hands": hands, "scores": self.scores.tolist()}

    def _decisions(self, h):
        st = self._st
        ndec = int(st[L.HNDEC + h])
        base = L.DECLOG + h * L.MAX_DEC * 2
        log = st[base:base + 2 * ndec].reshape(-1, 2)
        return log.tolist()

    def _repr_html_(self):
        """Jupyter shows a ``Game`` as a picture of the table (spectator view, all hands open)."""
        from .render import render_html
        return render_html(self)

    def __repr__(self):
        return (f"Game(hand={self.hand_index}, phase={self.phase}, lap={self.lap}, "
                f"player={self.current_player}, scores={self.scores.tolist()})")


def game_from_state(row, rules: RuleConfig, seed: int) -> Game:
    """A ``Game`` over a copy of a kernel state row that the kernel itself produced
    (``VectorGame`` uses it for ``game(i)``); ``seed`` is the game's deal seed.
    Not for rows from elsewhere: a state row is trusted, not validated."""
    g = Game(rules, seed=seed)
    g._st[:] = row
    g._n = int(g._st[L.NLEGAL])
    core.write_mask(g._st, g._mask)
    return g


def decode_wins(st, h: int) -> list:
    """The win records of hand ``h`` in the state row ``st`` (layout ``WINS``, fields ``W_*``)
    as the dicts of ``Game.wins`` and of the record format."""
    current = h == st[L.HAND]
    out = []
    for i in range(st[L.NWINS] if current else L.MAX_WINS):
        w = L.WINS + (h * L.MAX_WINS + i) * L.WIN_W
        if not current and st[w + L.W_BASE] == 0:
            break
        melds = [[MELD_TYPE_NAMES[int(st[w + L.W_MELDS + 2 * j])], kind_name(int(st[w + L.W_MELDS + 2 * j + 1]))]
                 for j in range(4)]
        pats = []
        for j in range(3):
            pts, m = int(st[w + L.W_PATTERNS + 2 * j]), int(st[w + L.W_PATTERNS + 2 * j + 1])
            if pts:
                p = pts % 10 or 10
                name = SHAPE_NAMES[p] if m & (m - 1) else "自色刻"
                pats.append({"points": pts, "name": name, "melds": [b for b in range(4) if m >> b & 1]})
        frm = int(st[w + L.W_FROM])
        out.append({"seat": int(st[w + L.W_SEAT]), "from": None if frm < 0 else frm,
                    "card": int(st[w + L.W_CARD]), "base": int(st[w + L.W_BASE]),
                    "patterns": pats, "melds": melds, "pair": kind_name(int(st[w + L.W_PAIR]))})
    return out


def _legal_sets(game: Game) -> list:
    """Legal action sets at every decision of ``game``, by replaying its decisions."""
    rec = game.record(legal=False)
    sets = []
    _replay(rec, collect=sets)
    return sets


_RECORD_KEYS = ("format", "rules", "seed", "hands", "scores")
_HAND_KEYS = ("index", "start_seat", "squares", "decisions", "wins", "deltas")


def replay(record, auto_forced: bool = True) -> Game:
    """Rebuild the game of a ``majiang-record/1`` record (dict or JSON text).

    The record is checked strictly, and any problem raises ``RecordError``
    naming the field: every key of the format must be there and no other
    (unknown keys are rejected); numbers are JSON integers (``True`` and
    ``1.0`` are not); every decision must be the legal move of the seat to act
    (and match its recorded legal set, when present); and the replayed game's
    own ``record()`` must equal the given one field by field, so every stored
    value (start seats, wins with their patterns, melds and pair, deltas,
    scores) is recomputed and compared. ``auto_forced`` (a bool) is the
    returned game's setting.
    """
    as_bool("auto_forced", auto_forced)
    return _replay(record, auto_forced=auto_forced)


def _short(x, n=160):
    r = repr(x)
    return r if len(r) <= n else r[:n] + "..."


def _fields(obj, keys, where):
    """``obj`` must be a dict with exactly ``keys``."""
    if not isinstance(obj, dict):
        raise RecordError(f"{where} must be an object (dict), not {type(obj).__name__}")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise RecordError(f"{where} has no {missing[0]!r} (its keys must be {list(keys)})")
    unknown = [k for k in obj if k not in keys]
    if unknown:
        raise RecordError(f"{where} has unknown key {_short(unknown[0])} (its keys are {list(keys)})")
    return obj


def _json_int(x) -> bool:
    return type(x) is int


def _int_list(x, where, n=None):
    if not isinstance(x, list) or (n is not None and len(x) != n) or not all(map(_json_int, x)):
        size = "" if n is None else f" {n}"
        raise RecordError(f"{where} must be a list of{size} integers, got {_short(x)}")
    return x


def _first_difference(got, want, path):
    """The path of the first place where ``got`` (the record) and ``want`` (the
    replay's record) differ, with exact types; None if they are equal."""
    if type(got) is not type(want):
        return path
    if isinstance(want, dict):
        if set(got) != set(want):
            return path
        for k in want:
            p = _first_difference(got[k], want[k], f"{path}.{k}")
            if p:
                return p
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return path
        for i, (a, b) in enumerate(zip(got, want)):
            p = _first_difference(a, b, f"{path}[{i}]")
            if p:
                return p
        return None
    return None if got == want else path


def _lookup(obj, path):
    for part in path.replace("]", "").replace("[", ".").split(".")[1:]:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


_MAX_DEPTH = 12  # a valid record's containers nest 8 deep at most (record.hands[h].wins[w].patterns[p].melds)


def _check_depth(record):
    """RecordError if ``record`` nests deeper than any valid record (checked
    without recursion, so that no later step can hit Python's recursion limit)."""
    stack = [(record, 0)]
    while stack:
        obj, depth = stack.pop()
        if isinstance(obj, (dict, list, tuple)):
            if depth >= _MAX_DEPTH:
                raise RecordError(f"record nests deeper than {_MAX_DEPTH} levels; no valid record does")
            stack.extend((v, depth + 1) for v in (obj.values() if isinstance(obj, dict) else obj))


def _load(record):
    if isinstance(record, (str, bytes, bytearray)):
        try:
            record = json.loads(record)
        except (ValueError, RecursionError) as e:
            raise RecordError(f"record is not valid JSON: {_short(str(e), 200)}") from None
    _check_depth(record)
    _fields(record, _RECORD_KEYS, "record")
    if record["format"] != RECORD_FORMAT:
        raise RecordError(f"record.format: unknown format {_short(record['format'])}; "
                          f"expected {RECORD_FORMAT!r}")
    names = tuple(RuleConfig.__dataclass_fields__)
    _fields(record["rules"], names, "record.rules")
    try:
        rules = RuleConfig.from_dict(record["rules"])
    except (ValueError, TypeError) as e:
        raise RecordError(f"record.rules: {e}") from None
    if not _json_int(record["seed"]) or not 0 <= record["seed"] < 2 ** 64:
        raise RecordError(f"record.seed must be an integer in [0, 2**64), got {_short(record['seed'])}")
    hands = record["hands"]
    if not isinstance(hands, list) or not 1 <= len(hands) <= rules.hands_per_game:
        raise RecordError(f"record.hands must be a list of 1..{rules.hands_per_game} hands")
    lengths = set()  # the decisions' lengths: all 2 ([seat, action]) or all 3 (with legal ids)
    for h, hand in enumerate(hands):
        where = f"record.hands[{h}]"
        _fields(hand, _HAND_KEYS, where)
        if not _json_int(hand["index"]) or hand["index"] != h:
            raise RecordError(f"{where}.index must be {h}, got {_short(hand['index'])}")
        sq = hand["squares"]
        if not isinstance(sq, list) or len(sq) != 4:
            raise RecordError(f"{where}.squares must be 4 lists of 36 card ids")
        for p in range(4):
            _int_list(sq[p], f"{where}.squares[{p}]", 36)
        if sorted(c for row in sq for c in row) != list(range(144)):
            raise RecordError(f"{where}.squares must hold each card id 0-143 exactly once")
        if not isinstance(hand["decisions"], list):
            raise RecordError(f"{where}.decisions must be a list")
        for i, d in enumerate(hand["decisions"]):
            if not isinstance(d, list) or len(d) not in (2, 3) or not all(map(_json_int, d[:2])):
                raise RecordError(f"{where}.decisions[{i}] must be [seat, action] or "
                                  f"[seat, action, legal ids], got {_short(d)}")
            if len(d) == 3:
                _int_list(d[2], f"{where}.decisions[{i}][2]")
            lengths.add(len(d))
            if len(lengths) > 1:
                raise RecordError(f"{where}.decisions[{i}] is {_short(d)}: a record gives the legal ids "
                                  f"with every decision or with none")
    return record, rules


def _replay(record, auto_forced=True, collect=None) -> Game:
    record, rules = _load(record)
    hands = record["hands"]
    squares = np.zeros((4, 4, 36), np.int64)
    probe = Game(rules, seed=record["seed"], auto_forced=False)
    squares[:] = probe._st[L.SQUARES:L.SQUARES + 576].reshape(4, 4, 36)
    for h, hand in enumerate(hands):
        squares[h] = hand["squares"]
    g = Game(rules, seed=record["seed"], auto_forced=False, squares=squares)
    for h, hand in enumerate(hands):
        if collect is not None:
            collect.append([])
        for i, d in enumerate(hand["decisions"]):
            where = f"record.hands[{h}].decisions[{i}]"
            if g.hand_index != h or g.done:
                raise RecordError(f"{where}: hand {h} is already over")
            if d[0] != g.current_player:
                raise RecordError(f"{where}: seat {d[0]} is not the seat to act ({g.current_player})")
            legal = g.legal_actions()
            if len(d) == 3 and d[2] != legal:
                raise RecordError(f"{where}: recorded legal ids {_short(d[2])} differ from {legal}")
            if collect is not None:
                collect[-1].append(legal)
            try:
                g.step(d[1])
            except IllegalActionError as e:
                raise RecordError(f"{where}: {e}") from None
        if h < len(hands) - 1 and g.hand_index == h:
            raise RecordError(f"record.hands[{h}].decisions end before the hand is over")
    want = g.record()
    for h, hand in enumerate(want["hands"][:len(hands)]):
        for i, d in enumerate(hands[h]["decisions"]):
            if len(d) == 3:
                hand["decisions"][i].append(d[2])
    path = _first_difference(record, want, "record")
    if path:
        if path == "record.hands" and len(hands) < len(want["hands"]):
            raise RecordError(f"record.hands: hand {len(hands) - 1} is over but the record has no "
                              f"hand {len(hands)}")
        got, exp = _lookup(record, path), _lookup(want, path)
        raise RecordError(f"{path}: recorded {_short(got)} differs from the replay's {_short(exp)}")
    g.auto_forced = bool(auto_forced)
    g._rules = g.rules.to_array(g.auto_forced)
    if g.auto_forced:
        g._n = core.settle(g._st, g._rules, g._wt)
        core.write_mask(g._st, g._mask)
    return g
