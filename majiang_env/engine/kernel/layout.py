"""State layout of one game: a flat int32 row, so B games are an int32[B, SIZE] array.

Every field is a block of consecutive int32 at a fixed offset. Each field
declares its **name** (an identifier), its meaning, its **lifetime** and its
shape, in this order, in the table below; the resets are generated from the
lifetimes, so a new field cannot be forgotten by a reset:

=========  ==================================================================
DEAL       written before ``step.new_game`` (the dealt squares); never reset
GAME       set to its initial value by ``step.new_game``
HAND       also reset by ``step.start_hand`` at the start of every hand
TURN       also reset by ``step.end_turn`` at the end of every turn
=========  ==================================================================

Every field's initial value is 0 unless it declares another (-1 for "none").
The named sub-records (meld fields ``M_*``, win-record fields ``W_*``, pending
win fields ``WP_*``, river flag bits ``RF_*``) are indices inside one entry of
a field.

Two ways to read a row:

- **the kernel** (numba) indexes ``st[OFFSET + i]`` with the module constants
  (``HCNT``, ``CUR``, ...): plain int globals, which numba compiles in;
- **Python** reads fields by name, as numpy views shaped per field:
  ``view(row, "hand_counts")`` is int32[4, 36] (seat, kind), and
  ``StateView(row).hand_counts`` the same; a scalar field is a 0-d view
  (``int(StateView(row).to_act)``). Views write through to the row. A batch of
  rows (int32[B, SIZE]) gives views with a leading batch axis.
"""
from collections import namedtuple

import numpy as np

from ..rules import NUM_CARDS, NUM_KINDS, NUM_SEATS, SQUARE_SIZE

DEAL, GAME, HAND_LIFE, TURN = "deal", "game", "hand", "turn"
Field = namedtuple("Field", "name offset shape life init doc")
_fields = []
_off = 0


def _f(name, doc, life, *shape, init=0):
    """Declare the next field: identifier, meaning, lifetime, shape (none: one int)."""
    global _off
    assert name.isidentifier() and all(f.name != name for f in _fields), name
    n = int(np.prod(shape, dtype=np.int64))
    _fields.append(Field(name, _off, tuple(shape), life, init, doc))
    off = _off
    _off += n
    return off


MAX_HANDS = 4
MAX_LEGAL = 32
NUM_EXCHANGE = 16   # 変 decisions per hand: 4 per seat
NUM_SLOTS = 76      # turn slots of a hand, 19 laps of 4
LAST_LAP_SLOT = 72  # slots from here on are the last lap (docs/rules.md §6)
MAX_DEC = 180       # decisions per hand (16 exchange + 76 turns x 2 phases = 168)
RIVER_LEN = 18      # a river holds at most 18 cards
MAX_MELDS = 4       # shown melds per seat
NUM_SIDE = 4        # side cards per seat (変)
NUM_FACES = 4       # face colours (KEYS, NCOL are per seat and face colour)
SCRATCH_SIZE = 144  # ints of work space for the scoring search (the SC_* below fit)

# ---- melds: one entry of MELDS ------------------------------------------------
M_TYPE = 0      # MT_* below
M_KIND = 1      # the kind of a 刻 / kan, the lowest kind of a 順
M_CARD0 = 2     # the shown cards (暗: three of the four)
M_CARD1 = 3
M_STANDIN = 4   # 刻 / 順 / 明: the unseen stand-in taken from the own square; 暗: the third shown card
M_CLAIMED = 5   # 刻 / 順: the claimed discard's card id; -1 otherwise
M_KAN = 6       # 暗 / 明: the kan card placed in the own river; -1 otherwise
MELD_W = 7
MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN = 1, 2, 3, 4
MT_CONCEALED_TRIPLET, MT_CONCEALED_RUN = 5, 6   # only in win records: melds read from the hand

# ---- wins: one entry of WINS (19 ints) -----------------------------------------
W_SEAT = 0      # the winner
W_FROM = 1      # the seat whose discard was won on (栄), -1 for 模
W_CARD = 2      # the winning card id
W_BASE = 3      # the base points (the best reading's pattern total, at least 1); 0 = no win
W_PATTERNS = 4  # 3 x (points, meld bit mask) of the best reading; points 0 = unused
W_MELDS = 10    # 4 x (meld type MT_*, kind) of that reading
W_PAIR = 18     # the pair's kind
WIN_W = 19
MAX_WINS = 3    # per hand

# ---- the win of this turn: WIN_PENDING ------------------------------------------
WP_SEAT, WP_FROM, WP_CARD, WP_EXTRA = 0, 1, 2, 3   # winner, discarder (-1: 模), card id, kind to add (-1: none)
WP_W = 4

# ---- river flags: one entry of RFLAG ---------------------------------------------
RF_PICKED = 1   # bit (RF_PICKED << seat): picked up by seat (刻 / 順)
RF_WON = 16     # bit (RF_WON << seat): won on by seat (栄)
RF_KAN = 256    # the card is a kan card (placed by 暗 / 明)

# ---- phases --------------------------------------------------------------------
PH_EXCHANGE, PH_TAKE, PH_DISCARD, PH_OVER = 0, 1, 2, 3
TOOK_NONE, TOOK_DRAW, TOOK_PICKUP = 0, 1, 2

# ---- the fields: OFFSET = _f(name, meaning, lifetime, shape) --------------------
HAND = _f("hand_index", "hand index (0-based; hands_per_game once the game is over)", GAME)
START = _f("start_seat", "start seat of the hand", HAND_LIFE)
PHASE = _f("phase", "phase PH_*", HAND_LIFE)
CUR = _f("to_act", "seat to act, -1 when over", HAND_LIFE)
SLOT = _f("slot", "turn slot 0..NUM_SLOTS-1 (lap = slot // 4 + 1)", HAND_LIFE)
NWINS = _f("num_wins", "wins in this hand", HAND_LIFE)
EXCH = _f("num_exchanged", "exchange decisions made in this hand (0..NUM_EXCHANGE)", HAND_LIFE)
CLOSED = _f("closed_hand", "the hand that closed during the last kernel step, -1 if none", GAME, init=-1)
TOOK = _f("took", "take of this turn TOOK_*", TURN)
PICK_KIND = _f("picked_kind", "kind picked up this turn, -1", TURN, init=-1)
DRAWN = _f("drawn_card", "card drawn this turn, -1", TURN, init=-1)
WIN_PENDING = _f("win_pending", "the win of this turn, scored before the turn ends (WP_*)", TURN, WP_W)
NLEGAL = _f("num_legal", "number of legal actions at this decision", HAND_LIFE)
LEGAL = _f("legal", "legal action ids at this decision, ascending (at most 14 打 + 3 暗 + 4 明 + 模)",
           HAND_LIFE, MAX_LEGAL)
SCORES = _f("scores", "cumulative scores", GAME, NUM_SEATS)
DELTAS = _f("deltas", "point change per hand and seat", GAME, MAX_HANDS, NUM_SEATS)
HNDEC = _f("num_decisions", "decisions made in each hand", GAME, MAX_HANDS)
SQUARES = _f("squares", "card ids of each hand's squares, in taking order", DEAL, MAX_HANDS, NUM_SEATS, SQUARE_SIZE)
SQPOS = _f("square_taken", "cards taken from each square", HAND_LIFE, NUM_SEATS)
HMASK = _f("hand_masks", "bitmask of copies held per kind (concealed hand)", HAND_LIFE, NUM_SEATS, NUM_KINDS)
HCNT = _f("hand_counts", "count per kind (concealed hand)", HAND_LIFE, NUM_SEATS, NUM_KINDS)
KEYS = _f("hand_keys", "base-5 key per seat and face colour of the concealed hand", HAND_LIFE, NUM_SEATS, NUM_FACES)
NCOL = _f("face_counts", "concealed card count per seat and face colour", HAND_LIFE, NUM_SEATS, NUM_FACES)
NHAND = _f("num_concealed", "concealed card count", HAND_LIFE, NUM_SEATS)
SIDE = _f("side", "side cards", HAND_LIFE, NUM_SEATS, NUM_SIDE)
NSIDE = _f("num_side", "number of side cards", HAND_LIFE, NUM_SEATS)
MELDS = _f("melds", "melds, MELD_W fields M_* each", HAND_LIFE, NUM_SEATS, MAX_MELDS, MELD_W)
NMELD = _f("num_melds", "number of melds", HAND_LIFE, NUM_SEATS)
RIVER = _f("river", "river card ids", HAND_LIFE, NUM_SEATS, RIVER_LEN)
RSLOT = _f("river_slots", "slot at which each river card was placed", HAND_LIFE, NUM_SEATS, RIVER_LEN)
RFLAG = _f("river_flags", "river flags RF_*", HAND_LIFE, NUM_SEATS, RIVER_LEN)
NRIVER = _f("river_len", "river length", HAND_LIFE, NUM_SEATS)
RKIND = _f("river_kinds", "count of each kind in own river (furiten)", HAND_LIFE, NUM_SEATS, NUM_KINDS)
LAST = _f("last_slot", "slot of each seat's previous turn, -1", HAND_LIFE, NUM_SEATS, init=-1)
RETIRED = _f("retired", "1 once the seat has won this hand", HAND_LIFE, NUM_SEATS)
WINS = _f("wins", "win log per hand, WIN_W fields W_* each", GAME, MAX_HANDS, MAX_WINS, WIN_W)
SCRATCH = _f("scratch", "work space of the scoring functions (no meaning between calls)", GAME, SCRATCH_SIZE)
DECLOG = _f("decision_log", "decision log per hand: seat, action", GAME, MAX_HANDS, MAX_DEC, 2)
SIZE = _off
FIELDS = tuple(_fields)  # Field(name, offset, shape, life, init, doc), in row order
BY_NAME = {f.name: f for f in FIELDS}

# ---- scratch: the scoring search's work space, as slices of SCRATCH ----------------
SC_CNT = SCRATCH                  # NUM_KINDS counts of the hand being read
SC_WORK = SC_CNT + NUM_KINDS      # NUM_KINDS counts left while melds are taken out
SC_MTYPE = SC_WORK + NUM_KINDS    # 4 meld types of the reading (0 run, 1 triplet)
SC_MFACE = SC_MTYPE + 4           # 4 meld face colours
SC_MVAL = SC_MFACE + 4            # 4 meld numbers (a run: its lowest)
SC_MKAN = SC_MVAL + 4             # 4 kan flags
SC_OTYPE = SC_MKAN + 4            # 4 meld types MT_* for the win record
SC_OKIND = SC_OTYPE + 4           # 4 meld kinds for the win record
SC_TMP = SC_OKIND + 4             # 6: the patterns of one reading
SC_VAL = SC_TMP + 6               # 16 points per meld subset
SC_VS = SC_VAL + 16               # 4 sorted values of one subset
SC_OUT = SC_VS + 4                # WIN_W - 4: the best reading, as stored in a win record
SC_END = SC_OUT + WIN_W - W_PATTERNS
assert SC_END <= SCRATCH + SCRATCH_SIZE
assert NUM_CARDS == NUM_SEATS * SQUARE_SIZE


# ---- named views (Python side) -------------------------------------------------------
_SLICES = {f.name: (slice(f.offset, f.offset + int(np.prod(f.shape, dtype=np.int64))), f.shape) for f in FIELDS}


def _view(row, sl, shape):
    if not shape:                 # one int: row[..., i] is a view (0-d, or (B,) for a batch)
        return row[..., sl.start]
    if row.ndim == 1:
        v = row[sl]
        return v if len(shape) == 1 else v.reshape(shape)
    return row[..., sl].reshape(row.shape[:-1] + shape)


def view(row, name):
    """The field ``name`` of a state row (int32[SIZE]) as a numpy view of its shape
    (a 0-d view for a one-int field); of a batch (int32[B, SIZE]), with a leading
    batch axis. Writes to the view change the row."""
    return _view(row, *_SLICES[name])


class StateView:
    """Named views of a state row (or of a batch of rows): ``StateView(row).melds`` is
    ``view(row, "melds")``, int32[4, 4, MELD_W]; one attribute per field of ``FIELDS``.
    It holds only the row, so a copy of an object that keeps one stays tied to its
    own copy of the row."""

    __slots__ = ("row",)

    def __init__(self, row):
        self.row = row

    def __repr__(self):
        return f"StateView(int32{list(self.row.shape)}, {len(FIELDS)} fields)"


def _field_property(name):
    sl, shape = _SLICES[name]
    doc = f"{BY_NAME[name].doc} (int32{list(shape)})"
    if not shape:                 # the common case of per-decision reads, kept to one indexing
        i = sl.start
        return property(lambda self: self.row[..., i], doc=doc)
    return property(lambda self: _view(self.row, sl, shape), doc=doc)


for _field in FIELDS:
    setattr(StateView, _field.name, _field_property(_field.name))
del _field


def _ranges(lives):
    """(offset, length, initial value) of every field with a lifetime in ``lives``."""
    rows = []
    for f in sorted(_fields, key=lambda f: f.offset):
        if f.life not in lives:
            continue
        n = int(np.prod(f.shape, dtype=np.int64))
        if rows and rows[-1][0] + rows[-1][1] == f.offset and rows[-1][2] == f.init:
            rows[-1][1] += n          # adjacent fields with the same value: one run
        else:
            rows.append([f.offset, n, f.init])
    return np.array(rows, np.int32).reshape(-1, 3)


GAME_RESET = _ranges((GAME, HAND_LIFE, TURN))  # what step.new_game sets
HAND_RESET = _ranges((HAND_LIFE, TURN))        # what step.start_hand sets
TURN_RESET = _ranges((TURN,))                  # what step.end_turn sets
