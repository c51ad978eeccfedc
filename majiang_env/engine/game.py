"""``Game``: one game of 馬将 as a Python object over the numba kernel.

Its records (``Game.record``) are read back by ``records.replay``.
"""
from __future__ import annotations

import numpy as np

from . import tables
from .checks import (
    ActionSpaceError,
    IllegalActionError,
    action_id,
    as_bool,
    as_int,
    as_seat,
    as_seed,
    in_action_range,
    int_array,
    show,
)
from .encodings import check_obs_type, make_encoder
from .kernel import layout as L
from .kernel.cards import deal_squares
from .kernel.fullstate import STATE_SIZE
from .kernel.fullstate import full_state as _full_state
from .kernel.legal import write_mask
from .kernel.observe import OBS_SIZE
from .kernel.observe import observe as _observe
from .kernel.step import new_game, settle
from .kernel.step import step as kernel_step
from .kernel.worlds import sample_world, world_stream
from .rows import check_row
from .rules import (
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_SEATS,
    SHAPE_NAMES,
    SQUARE_SIZE,
    RuleConfig,
    action_name,
    kind_name,
    make_rules,
)

PHASE_NAMES = ("exchange", "take", "discard", "over")
MELD_TYPE_NAMES = {L.MT_PUNG: "pung", L.MT_CHOW: "chow", L.MT_ANKAN: "ankan", L.MT_MINKAN: "minkan",
                   L.MT_CONCEALED_TRIPLET: "concealed_triplet", L.MT_CONCEALED_RUN: "concealed_run"}

__all__ = ["Game", "game_from_state", "decode_wins"]


def _check_squares(squares):
    arr = int_array("squares", squares)
    if arr.ndim != 3 or arr.shape[1:] != (NUM_SEATS, SQUARE_SIZE) \
            or not 1 <= arr.shape[0] <= 4:
        raise ValueError(f"squares must be an integer array of shape (hands, 4, 36) with 1-4 hands, "
                         f"got {arr.dtype} {arr.shape}")
    for h in range(arr.shape[0]):
        if not np.array_equal(np.sort(arr[h].ravel()), np.arange(NUM_CARDS)):
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
        self._s = L.StateView(self._st)   # the row's fields by name (layout.FIELDS)
        self._mask = np.zeros(NUM_ACTIONS, np.int8)
        self._encoder = None  # the encoder of the last observe(obs_type="features" or "float")
        deal_squares(self._st, np.uint64(self.seed))
        if squares is not None:
            sq = _check_squares(squares)
            self._s.squares[:len(sq)] = sq
        new_game(self._st, self._rules)
        self._n = settle(self._st, self._rules, self._wt)
        write_mask(self._st, self._mask)

    # ---- state -------------------------------------------------------------
    @property
    def state(self) -> np.ndarray:
        """The kernel's state row of this game, read-only (int32[layout.SIZE]; every field
        is named in ``majiang_env/engine/kernel/layout.py``, and ``layout.StateView(g.state)``
        reads them by name, e.g. ``.hand_counts[seat]``). It holds hidden information:
        for what one seat may see, use ``observe(seat)``."""
        v = self._st.view()
        v.flags.writeable = False
        return v

    def full_state(self) -> np.ndarray:
        """Every card of the current hand, hidden or not, and the public table, as a new
        int16[STATE_SIZE] in absolute seats: the ``majiang-state/1`` encoding for centralised
        critics (docs/observation.md, "Full state"; ``majiang_env.engine.kernel.fullstate``).
        It holds every seat's hidden cards: never feed it to a seat's policy."""
        out = np.zeros(STATE_SIZE, np.int16)
        _full_state(self._st, self._rules, out)
        return out

    @property
    def current_player(self) -> int:
        return int(self._st[L.CUR])   # per-decision reads index the row by the field's offset

    @property
    def done(self) -> bool:
        return int(self._st[L.PHASE]) == L.PH_OVER

    @property
    def scores(self) -> np.ndarray:
        return self._s.scores.astype(np.int64)

    @property
    def hand_index(self) -> int:
        return int(self._st[L.HAND])

    @property
    def phase(self) -> str:
        return PHASE_NAMES[int(self._s.phase)]

    @property
    def lap(self) -> int:
        return int(self._s.slot) // 4 + 1

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
                f"action {show(action)} ({action_name(a) if in_action_range(a) else 'out of range'}) "
                f"is not legal: {self._where()}")
        self._n = kernel_step(self._st, self._rules, self._wt, a, self._mask)
        h = self.closed_hand
        if h is not None:
            return self._s.deltas[h].astype(np.int64)
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

    # ---- planning ------------------------------------------------------------
    def clone(self) -> Game:
        """An independent copy: stepping either game never changes the other
        (``copy.deepcopy(game)`` gives the same, slower)."""
        g = object.__new__(Game)
        g.__dict__.update(self.__dict__)
        g._rules = self._rules.copy()
        g._st = self._st.copy()
        g._s = L.StateView(g._st)
        g._mask = self._mask.copy()
        g._encoder = None
        return g

    def sample_hidden(self, seat, seed) -> Game:
        """A new ``Game``: a world ``seat`` cannot tell from this one. Every card
        ``seat`` cannot see (docs/rules.md §11: the other hands, others' side cards
        unless public, stand-ins, the untaken squares, another seat's drawn card)
        is redealt uniformly from exactly the unseen cards; later hands get fresh
        deals. ``seat``'s observation, the legal actions when ``seat`` is to act,
        and the public history are unchanged. The result depends only on what
        ``seat`` sees and on ``seed`` (an int in [0, 2**64)), never on the true
        hidden cards. Its record is withheld: ``record()`` refuses it.
        Details: ``majiang_env/engine/kernel/worlds.py``."""
        seat = as_seat(seat)
        if seed is None:
            raise ValueError("sample_hidden needs a seed: an int in [0, 2**64)")
        rng = np.array([world_stream(np.uint64(as_seed(seed)))], np.uint64)
        g = self.clone()
        g.seed = None        # the deal seed would give every hidden card away
        g._n = int(sample_world(self._st, self._rules, self._wt, seat, g._st, np.zeros(NUM_CARDS, np.int32), rng))
        write_mask(g._st, g._mask)
        return g

    @property
    def sampled(self) -> bool:
        """True for a world made by ``sample_hidden`` (its history is withheld)."""
        return bool((self._s.squares[:min(self.hand_index, 3) + 1] < 0).any())

    # ---- observation -------------------------------------------------------
    def observe(self, seat, obs_type: str = "compact") -> np.ndarray:
        """What ``seat`` (0..3) may see (docs/rules.md §11), a new array: int16[OBS_SIZE]
        (``obs_type="compact"``) or its float32 ``"features"`` or ``"float"`` encoding
        (``majiang_env.engine.encodings``; both read the legal actions when ``seat``
        is to act)."""
        seat = as_seat(seat)
        check_obs_type(obs_type)
        out = np.zeros(OBS_SIZE, np.int16)
        _observe(self._st, self._rules, seat, out)
        if obs_type == "compact":
            return out
        if self._encoder is None or self._encoder.obs_type != obs_type:
            self._encoder = make_encoder(obs_type, self.rules)
        mask = self._mask if seat == self.current_player else np.zeros(NUM_ACTIONS, np.int8)
        return self._encoder(out, mask)

    # ---- records -----------------------------------------------------------
    def _hand(self, h) -> int:
        return as_int("hand index", h, 0, self.rules.hands_per_game - 1)

    def hand_deltas(self, h) -> np.ndarray:
        """Each seat's point change in hand ``h`` (0-based; zeros for a hand not played yet)."""
        h = self._hand(h)
        return self._s.deltas[h].astype(np.int64)

    def wins(self, h) -> list:
        """The wins of hand h (0-based), each with its scoring (patterns and the reading used)."""
        return decode_wins(self._st, self._hand(h))

    def record(self, legal: bool = False) -> dict:
        """The game so far as a ``majiang-record/1`` dict (legal sets when ``legal``).
        A world made by ``sample_hidden`` has none (ValueError)."""
        if self.sampled:
            raise ValueError("this game is a world sampled by sample_hidden: its history is withheld, "
                             "so it has no record")
        from .records import RECORD_FORMAT, legal_sets
        sets = legal_sets(self) if as_bool("legal", legal) else None
        last = min(self.hand_index, self.rules.hands_per_game - 1)
        hands = []
        for h in range(last + 1):
            decs = self._decisions(h)
            if legal:
                decs = [d + [sets[h][i]] for i, d in enumerate(decs)]
            sq = self._s.squares[h]                     # (4 seats, SQUARE_SIZE)
            hands.append({"index": h, "start_seat": h % 4, "squares": sq.tolist(),
                          "decisions": decs, "wins": self.wins(h),
                          "deltas": self.hand_deltas(h).tolist()})
        return {"format": RECORD_FORMAT, "rules": self.rules.to_dict(), "seed": self.seed,
                "hands": hands, "scores": self.scores.tolist()}

    def _decisions(self, h):
        ndec = int(self._s.num_decisions[h])
        return self._s.decision_log[h, :ndec].tolist()   # [seat, action] each

    def _repr_html_(self):
        """Jupyter shows a ``Game`` as a picture of the table (spectator view, all hands open)."""
        from ..views.render import render_html
        return render_html(self)

    def __repr__(self):
        return (f"Game(hand={self.hand_index}, phase={self.phase}, lap={self.lap}, "
                f"player={self.current_player}, scores={self.scores.tolist()})")


def game_from_state(row, rules: RuleConfig, seed: int) -> Game:
    """A ``Game`` over a copy of a kernel state row (``VectorGame`` uses it for
    ``game(i)``); ``seed`` is the game's deal seed. The row is checked first
    (``rows.check_row``: every field in its range and consistent with the rest,
    the legal list the kernel's own), so a row from elsewhere that the kernel
    could not have produced raises ValueError naming the field, and nothing of
    it reaches the kernel."""
    rules = make_rules(rules)
    st = check_row(row, rules)
    g = Game(rules, seed=seed)
    g._st[:] = st
    g._n = int(g._s.num_legal)
    write_mask(g._st, g._mask)
    return g


def decode_wins(st, h: int) -> list:
    """The win records of hand ``h`` in the state row ``st`` (layout ``WINS``, fields ``W_*``)
    as the dicts of ``Game.wins`` and of the record format."""
    s = L.StateView(st)
    current = h == s.hand_index
    out = []
    for i in range(int(s.num_wins) if current else L.MAX_WINS):
        w = s.wins[h, i].tolist()   # WIN_W ints, fields W_*
        if not current and w[L.W_BASE] == 0:
            break
        reading = w[L.W_MELDS:L.W_PAIR]   # 4 x (meld type, kind)
        melds = [[MELD_TYPE_NAMES[reading[2 * j]], kind_name(reading[2 * j + 1])] for j in range(4)]
        pats = []
        for j in range(3):
            pts, m = w[L.W_PATTERNS + 2 * j], w[L.W_PATTERNS + 2 * j + 1]
            if pts:
                p = pts % 10 or 10
                name = SHAPE_NAMES[p] if m & (m - 1) else "自色刻"
                pats.append({"points": pts, "name": name, "melds": [b for b in range(4) if m >> b & 1]})
        frm = w[L.W_FROM]
        out.append({"seat": w[L.W_SEAT], "from": None if frm < 0 else frm,
                    "card": w[L.W_CARD], "base": w[L.W_BASE],
                    "patterns": pats, "melds": melds, "pair": kind_name(w[L.W_PAIR])})
    return out
