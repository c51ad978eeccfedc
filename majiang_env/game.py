"""``Game``: one game of 馬将 as a Python object over the numba kernel.

Also ``replay`` and ``RecordError`` for ``majiang-record/1`` game records.
"""
from __future__ import annotations

import json
import secrets

import numpy as np

from . import tables
from .kernel import core
from .kernel import layout as L
from .kernel.observe import OBS_SIZE, observe as _observe
from .rules import (NUM_ACTIONS, RuleConfig, SHAPE_NAMES, action_name, kind_name,
                    make_rules)

RECORD_FORMAT = "majiang-record/1"
PHASE_NAMES = ("exchange", "take", "discard", "over")
MELD_TYPE_NAMES = {1: "pung", 2: "chow", 3: "ankan", 4: "minkan",
                   5: "concealed_triplet", 6: "concealed_run"}



class RecordError(ValueError):
    """A game record that cannot be replayed; the message names the first problem."""


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision."""


def _check_seed(seed):
    if seed is None:
        return secrets.randbits(63)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int in [0, 2**64) or None, not {seed!r}")
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed


def _check_squares(squares, n_hands):
    arr = np.asarray(squares)
    if arr.ndim != 3 or arr.shape[1:] != (4, 36) or not 1 <= arr.shape[0] <= 4:
        raise ValueError(f"squares must have shape (hands, 4, 36), got {arr.shape}")
    for h in range(arr.shape[0]):
        if sorted(arr[h].ravel().tolist()) != list(range(144)):
            raise ValueError(f"squares of hand {h} are not the 144 distinct card ids 0-143")
    return arr.astype(np.int32)


class Game:
    """One game (``hands_per_game`` hands) of 馬将; see API.md."""

    def __init__(self, rules=None, seed=None, auto_forced=True, squares=None):
        self.rules = make_rules(rules)
        self.auto_forced = bool(auto_forced)
        self.seed = _check_seed(seed)
        self._rules = self.rules.to_array(self.auto_forced)
        self._wt = tables.win_table()
        self._st = np.zeros(L.SIZE, np.int32)
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        core.deal_squares(self._st, np.uint64(self.seed))
        if squares is not None:
            sq = _check_squares(squares, self.rules.hands_per_game)
            self._st[L.SQUARES:L.SQUARES + sq.size] = sq.ravel()
        core.new_game(self._st, self._rules)
        self._n = core.settle(self._st, self._rules, self._wt)
        core.write_mask(self._st, self._mask)

    # ---- state -------------------------------------------------------------
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

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (an int in 0..155) is legal now."""
        return bool(self._mask[action])

    def legal_actions(self) -> list:
        return np.flatnonzero(self._mask).tolist()

    # ---- moves -------------------------------------------------------------
    def step(self, action) -> np.ndarray:
        """Apply ``action`` (and forced actions after it); return the points each
        seat gained in hands that closed during this call (int64[4])."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(
                f"action must be an int, got {action!r} ({type(action).__name__}); "
                f"phase {self.phase}, legal ids {self.legal_actions()}")
        a = int(action)
        if not 0 <= a < NUM_ACTIONS or not self._mask[a]:
            what = "game is over" if self.done else f"phase {self.phase}"
            raise IllegalActionError(
                f"action {a} ({action_name(a) if 0 <= a < NUM_ACTIONS else 'out of range'}) "
                f"is not legal: {what}, seat {self.current_player}, legal ids {self.legal_actions()}")
        h = self._st[L.HAND]
        self._n = core.advance(self._st, self._rules, self._wt, a)
        core.write_mask(self._st, self._mask)
        if self._st[L.HAND] != h:
            return self._st[L.DELTAS + 4 * h:L.DELTAS + 4 * h + 4].astype(np.int64)
        return np.zeros(4, np.int64)

    # ---- observation -------------------------------------------------------
    def observe(self, seat: int) -> np.ndarray:
        out = np.zeros(OBS_SIZE, np.int16)
        _observe(self._st, self._rules, int(seat), out)
        return out

    # ---- records -----------------------------------------------------------
    def hand_deltas(self, h: int) -> np.ndarray:
        return self._st[L.DELTAS + 4 * h:L.DELTAS + 4 * h + 4].astype(np.int64)

    def wins(self, h: int) -> list:
        """The wins of hand h, each with its scoring (patterns and the reading used)."""
        st = self._st
        nwins = st[L.NWINS] if h == st[L.HAND] else 3
        out = []
        for i in range(nwins):
            w = L.WINS + (h * 3 + i) * L.WIN_W
            if h != st[L.HAND] and st[w + 3] == 0:
                break
            melds = [(MELD_TYPE_NAMES[int(st[w + 10 + 2 * j])], kind_name(int(st[w + 11 + 2 * j])))
                     for j in range(4)]
            pats = []
            for j in range(3):
                pts, m = int(st[w + 4 + 2 * j]), int(st[w + 5 + 2 * j])
                if pts:
                    p = pts % 10 or 10
                    name = SHAPE_NAMES[p] if m & (m - 1) else "自色刻"
                    pats.append({"points": pts, "name": name,
                                 "melds": [i for i in range(4) if m >> i & 1]})
            out.append({"seat": int(st[w]), "from": None if st[w + 1] < 0 else int(st[w + 1]),
                        "card": int(st[w + 2]), "base": int(st[w + 3]),
                        "patterns": pats, "melds": melds, "pair": kind_name(int(st[w + 18]))})
        return out

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


def _legal_sets(game: Game) -> list:
    """Legal action sets at every decision of ``game``, by replaying its decisions."""
    rec = game.record(legal=False)
    sets = []
    _replay(rec, collect=sets)
    return sets


def replay(record, auto_forced: bool = True) -> Game:
    """Rebuild the game of a ``majiang-record/1`` record (dict or JSON text).

    Every decision is checked against the legal actions, and every hand's wins
    and deltas and the final scores against the record; the first mismatch
    raises ``RecordError``.
    """
    return _replay(record, auto_forced=auto_forced)


def _replay(record, auto_forced=True, collect=None) -> Game:
    if isinstance(record, (str, bytes)):
        try:
            record = json.loads(record)
        except ValueError as e:
            raise RecordError(f"record is not valid JSON: {e}") from None
    if not isinstance(record, dict):
        raise RecordError(f"record must be a dict, not {type(record).__name__}")
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(f"unknown record format {record.get('format')!r}; expected {RECORD_FORMAT!r}")
    for key in ("rules", "seed", "hands", "scores"):
        if key not in record:
            raise RecordError(f"record has no {key!r}")
    try:
        rules = RuleConfig.from_dict(record["rules"])
    except (ValueError, TypeError) as e:
        raise RecordError(f"bad rules in record: {e}") from None
    hands = record["hands"]
    if not isinstance(hands, list) or not 1 <= len(hands) <= rules.hands_per_game:
        raise RecordError(f"record must have 1..{rules.hands_per_game} hands")
    try:
        seed = _check_seed(record["seed"])
        squares = np.zeros((4, 4, 36), np.int64)
        probe = Game(rules, seed=seed, auto_forced=False)
        squares[:] = probe._st[L.SQUARES:L.SQUARES + 576].reshape(4, 4, 36)
        for h, hand in enumerate(hands):
            if not isinstance(hand, dict) or hand.get("index") != h:
                raise RecordError(f"hand {h}: missing or wrong 'index'")
            sq = hand.get("squares")
            arr = np.asarray(sq) if isinstance(sq, list) else None
            if arr is None or arr.shape != (4, 36) or arr.dtype.kind not in "iu" or \
                    sorted(arr.ravel().tolist()) != list(range(144)):
                raise RecordError(f"hand {h}: squares must be 4 lists of 36 distinct card ids 0-143")
            squares[h] = arr
        g = Game(rules, seed=seed, auto_forced=False, squares=squares)
    except ValueError as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(f"bad record: {e}") from None
    for h, hand in enumerate(hands):
        decs = hand.get("decisions")
        if not isinstance(decs, list):
            raise RecordError(f"hand {h}: 'decisions' must be a list")
        if collect is not None:
            collect.append([])
        for i, d in enumerate(decs):
            where = f"hand {h}, decision {i}"
            if g.hand_index != h or g.done:
                raise RecordError(f"{where}: the hand is already over")
            if not isinstance(d, list) or len(d) not in (2, 3) or \
                    not all(isinstance(x, int) and not isinstance(x, bool) for x in d[:2]):
                raise RecordError(f"{where}: must be [seat, action] or [seat, action, legal], got {d!r}")
            seat, action = d[0], d[1]
            if seat != g.current_player:
                raise RecordError(f"{where}: seat {seat} is not the player to act ({g.current_player})")
            legal = g.legal_actions()
            if len(d) == 3 and d[2] != legal:
                raise RecordError(f"{where}: recorded legal set {d[2]} differs from {legal}")
            if collect is not None:
                collect[-1].append(legal)
            try:
                g.step(action)
            except IllegalActionError as e:
                raise RecordError(f"{where}: {e}") from None
        if h < len(hands) - 1 and g.hand_index == h:
            raise RecordError(f"hand {h}: the decisions end before the hand is over")
        want = [{k: w.get(k) for k in ("seat", "from", "card", "base")} for w in hand.get("wins", [])] \
            if isinstance(hand.get("wins"), list) else None
        got = [{k: w[k] for k in ("seat", "from", "card", "base")} for w in g.wins(h)]
        if want != got:
            raise RecordError(f"hand {h}: recorded wins {want} differ from the replay's {got}")
        if hand.get("deltas") != g.hand_deltas(h).tolist():
            raise RecordError(f"hand {h}: recorded deltas {hand.get('deltas')} differ from "
                              f"the replay's {g.hand_deltas(h).tolist()}")
    if record["scores"] != g.scores.tolist():
        raise RecordError(f"recorded scores {record['scores']} differ from the replay's {g.scores.tolist()}")
    g.auto_forced = bool(auto_forced)
    g._rules = g.rules.to_array(g.auto_forced)
    if g.auto_forced:
        g._n = core.settle(g._st, g._rules, g._wt)
        core.write_mask(g._st, g._mask)
    return g
