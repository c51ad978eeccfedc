"""The full-information state of a game, for centralised critics: int16, fixed length.

Everything of the current hand, hidden or public: every seat's concealed
hand, drawn card, side cards and stand-ins, the untaken rest of every square,
and the public table. It is never part of any observation (it holds every
seat's hidden cards); it is what PettingZoo's ``state()`` returns, what
``Game.full_state()`` and ``SeatVectorEnv(critic_state=True)`` give.

Seats are **absolute** (seat q = 0..3; ``rotate_seats`` re-indexes them so
that a given seat comes first). Kinds as everywhere: ``face * 9 + number - 1``
(0-35); where a slot can be empty it holds kind + 1 (0 = empty). Segments, in
order (each one's length is ``STATE_X_LEN``, the offsets ``STATE_X`` add them up):

================  =====  ===================================================
STATE_HAND        4x36   concealed hand per seat, count per kind; the card
                         drawn this turn is not in it (any ``discard_drawn``)
STATE_DRAWN       4      card drawn this turn per seat, kind + 1 (only the
                         seat to act, in its discard phase after 引)
STATE_SIDE        4x36   side cards per seat, count per kind
STATE_SQUARE      4x36   the untaken cards of each seat's square in taking
                         order, kind + 1: entry 0 is the next card the seat
                         takes (a draw or a stand-in), 0 after the last
STATE_RIVER       4x18   river cards, kind + 1, in order
STATE_RFLAG       4x18   per river card: bit q picked up by seat q, bit 4 + q
                         won on by seat q, bit 8 kan card (layout's RF_*)
STATE_MELD        4x4x4  melds per seat in the order made: type (1 刻 2 順
                         3 暗 4 明), kind + 1 (順: its lowest), claimed
                         discard's kind + 1 (0 for 暗), stand-in's kind + 1
                         (刻 順 明; 0 for 暗)
STATE_CLAIM       4x4    [p, q]: kind + 1 of seat q's discard that seat p may
                         use now (0: none; the diagonal is always 0)
STATE_SCALAR      22     hand index, start seat, phase, seat to act (-1 once
                         the game is over), turn slot, lap, wins this hand,
                         take of the seat to act (0 none 1 引 2 拾), its
                         picked-up kind + 1, 変 decisions left (0 when exchange
                         is off), retired x4, scores x4, square cards left x4
================  =====  ===================================================

Once the game is over the state shows the table of its last hand (as the
observation does). Card copies (circle colours) are not encoded: no rule of
play and no default scoring reads them. Bounds per entry: ``STATE_LOW``,
``STATE_HIGH``; docs/observation.md ("Full state") has the tables.
"""
import numpy as np

from ..rules import NUM_KINDS, NUM_SEATS, R_DISCARD_DRAWN, R_EXCHANGE, SQUARE_SIZE
from .jit import kernel_jit
from .layout import (
    CUR,
    DRAWN,
    EXCH,
    HAND,
    HCNT,
    M_CLAIMED,
    M_KIND,
    M_STANDIN,
    M_TYPE,
    MAX_MELDS,
    MELD_W,
    MELDS,
    MT_ANKAN,
    NMELD,
    NRIVER,
    NSIDE,
    NUM_EXCHANGE,
    NUM_SLOTS,
    NWINS,
    PH_DISCARD,
    PH_OVER,
    PHASE,
    PICK_KIND,
    RETIRED,
    RF_KAN,
    RF_PICKED,
    RF_WON,
    RFLAG,
    RIVER,
    RIVER_LEN,
    SCORES,
    SIDE,
    SLOT,
    SQPOS,
    SQUARES,
    START,
    TOOK,
)
from .legal import claimable

STATE_FORMAT = "majiang-state/1"   # bumped whenever the layout or a meaning changes

# ---- segments: each one's size by name, offsets cumulative --------------------------
STATE_HAND = 0
STATE_HAND_LEN = NUM_SEATS * NUM_KINDS                     # concealed hand per seat, count per kind
STATE_DRAWN = STATE_HAND + STATE_HAND_LEN
STATE_DRAWN_LEN = NUM_SEATS                                # drawn card per seat, kind + 1
STATE_SIDE = STATE_DRAWN + STATE_DRAWN_LEN
STATE_SIDE_LEN = NUM_SEATS * NUM_KINDS                     # side cards per seat, count per kind
STATE_SQUARE = STATE_SIDE + STATE_SIDE_LEN
STATE_SQUARE_LEN = NUM_SEATS * SQUARE_SIZE                 # untaken square cards per seat, next first, kind + 1
STATE_RIVER = STATE_SQUARE + STATE_SQUARE_LEN
STATE_RIVER_LEN = NUM_SEATS * RIVER_LEN                    # river cards per seat, kind + 1
STATE_RFLAG = STATE_RIVER + STATE_RIVER_LEN
STATE_RFLAG_LEN = NUM_SEATS * RIVER_LEN                    # a flag per river card (RF_* bits, absolute seats)
STATE_MELD = STATE_RFLAG + STATE_RFLAG_LEN
STATE_MELD_W = 4                                           # per meld: type, kind + 1, claimed + 1, stand-in + 1
STATE_MELD_LEN = NUM_SEATS * MAX_MELDS * STATE_MELD_W      # melds per seat
STATE_CLAIM = STATE_MELD + STATE_MELD_LEN
STATE_CLAIM_LEN = NUM_SEATS * NUM_SEATS                    # [p, q]: q's discard p may use now, kind + 1
STATE_SCALAR = STATE_CLAIM + STATE_CLAIM_LEN
STATE_SCALAR_LEN = 22                                      # hand index, start seat, ... (SS_* below)
STATE_SIZE = STATE_SCALAR + STATE_SCALAR_LEN

# the scalars, as offsets from STATE_SCALAR (the 4-seat ones in seat order 0..3)
SS_HAND, SS_START, SS_PHASE, SS_TO_ACT, SS_SLOT, SS_LAP, SS_NWINS, SS_TOOK, SS_PICK_KIND, SS_EXCH_LEFT = range(10)
SS_RETIRED, SS_SCORES, SS_SQUARE_LEFT = 10, 14, 18    # x4 each

# (name, offset, shape) of every segment: state[off:off + prod(shape)].reshape(shape)
STATE_SEGMENTS = (
    ("hand", STATE_HAND, (NUM_SEATS, NUM_KINDS)),
    ("drawn", STATE_DRAWN, (NUM_SEATS,)),
    ("side", STATE_SIDE, (NUM_SEATS, NUM_KINDS)),
    ("square", STATE_SQUARE, (NUM_SEATS, SQUARE_SIZE)),
    ("river", STATE_RIVER, (NUM_SEATS, RIVER_LEN)),
    ("river_flags", STATE_RFLAG, (NUM_SEATS, RIVER_LEN)),
    ("melds", STATE_MELD, (NUM_SEATS, MAX_MELDS, STATE_MELD_W)),
    ("claims", STATE_CLAIM, (NUM_SEATS, NUM_SEATS)),
    ("scalars", STATE_SCALAR, (STATE_SCALAR_LEN,)),
)


@kernel_jit
def full_state(st, rules, out):
    """Write the full state of the game in row ``st`` into ``out`` (int16[STATE_SIZE])."""
    for i in range(STATE_SIZE):
        out[i] = 0
    cur = st[CUR]
    over = st[PHASE] == PH_OVER
    for p in range(4):
        for k in range(NUM_KINDS):
            out[STATE_HAND + p * NUM_KINDS + k] = st[HCNT + p * NUM_KINDS + k]
        for i in range(st[NSIDE + p]):
            out[STATE_SIDE + p * NUM_KINDS + (st[SIDE + p * 4 + i] >> 2)] += 1
    if cur >= 0 and st[PHASE] == PH_DISCARD and st[DRAWN] >= 0:
        k = st[DRAWN] >> 2
        out[STATE_DRAWN + cur] = k + 1
        if rules[R_DISCARD_DRAWN]:
            out[STATE_HAND + cur * NUM_KINDS + k] -= 1   # in the row's hand already: shown as drawn only
    h = st[HAND] - 1 if over else st[HAND]               # once over: the last hand's table
    for p in range(4):
        sq = SQUARES + (h * 4 + p) * SQUARE_SIZE
        pos = st[SQPOS + p]
        for j in range(SQUARE_SIZE - pos):
            out[STATE_SQUARE + p * SQUARE_SIZE + j] = (st[sq + pos + j] >> 2) + 1
        for i in range(st[NRIVER + p]):
            out[STATE_RIVER + p * RIVER_LEN + i] = (st[RIVER + p * RIVER_LEN + i] >> 2) + 1
            out[STATE_RFLAG + p * RIVER_LEN + i] = st[RFLAG + p * RIVER_LEN + i]
        for i in range(st[NMELD + p]):
            m = MELDS + (p * 4 + i) * MELD_W
            o = STATE_MELD + (p * MAX_MELDS + i) * STATE_MELD_W
            t = st[m + M_TYPE]
            out[o] = t
            out[o + 1] = st[m + M_KIND] + 1
            if st[m + M_CLAIMED] >= 0:
                out[o + 2] = (st[m + M_CLAIMED] >> 2) + 1
            if t != MT_ANKAN:                            # 暗 keeps its third shown card there
                out[o + 3] = (st[m + M_STANDIN] >> 2) + 1
        for q in range(4):
            if q != p:
                out[STATE_CLAIM + p * 4 + q] = claimable(st, p, q) + 1
    s = STATE_SCALAR
    out[s + SS_HAND] = st[HAND]
    out[s + SS_START] = st[START]
    out[s + SS_PHASE] = st[PHASE]
    out[s + SS_TO_ACT] = cur
    out[s + SS_SLOT] = st[SLOT]
    out[s + SS_LAP] = st[SLOT] // 4 + 1
    out[s + SS_NWINS] = st[NWINS]
    out[s + SS_TOOK] = st[TOOK]
    out[s + SS_PICK_KIND] = st[PICK_KIND] + 1
    out[s + SS_EXCH_LEFT] = NUM_EXCHANGE - st[EXCH] if rules[R_EXCHANGE] else 0
    for p in range(4):
        out[s + SS_RETIRED + p] = st[RETIRED + p]
        out[s + SS_SCORES + p] = st[SCORES + p]
        out[s + SS_SQUARE_LEFT + p] = SQUARE_SIZE - st[SQPOS + p]


@kernel_jit
def full_states(st, rules, out):
    """``full_state`` of every row of a batch: out[b] for st[b] (int16[B, STATE_SIZE])."""
    for b in range(st.shape[0]):
        full_state(st[b], rules, out[b])


def _value_ranges():
    """(lowest, highest) int16[STATE_SIZE] each: every value ``full_state`` can write at
    each index (docs/observation.md, "Full state"); scores may be any int16."""
    lo, hi = np.zeros(STATE_SIZE, np.int16), np.zeros(STATE_SIZE, np.int16)
    for first, end, top in ((STATE_HAND, STATE_DRAWN, 4), (STATE_DRAWN, STATE_SIDE, NUM_KINDS),
                            (STATE_SIDE, STATE_SQUARE, 4), (STATE_SQUARE, STATE_RFLAG, NUM_KINDS),
                            (STATE_RFLAG, STATE_MELD, RF_KAN | (RF_WON * 15) | (RF_PICKED * 15)),
                            (STATE_MELD, STATE_CLAIM, NUM_KINDS),
                            (STATE_CLAIM, STATE_SCALAR, NUM_KINDS)):   # the claims' diagonal: always 0
        hi[first:end] = top
    hi[STATE_MELD:STATE_CLAIM:STATE_MELD_W] = 4            # meld type
    s = STATE_SCALAR
    for i, low, top in ((SS_HAND, 0, 4), (SS_START, 0, 3), (SS_PHASE, 0, 3), (SS_TO_ACT, -1, 3),
                        (SS_SLOT, 0, NUM_SLOTS - 1), (SS_LAP, 1, NUM_SLOTS // 4), (SS_NWINS, 0, 3),
                        (SS_TOOK, 0, 2), (SS_PICK_KIND, 0, NUM_KINDS), (SS_EXCH_LEFT, 0, NUM_EXCHANGE)):
        lo[s + i], hi[s + i] = low, top
    hi[s + SS_RETIRED:s + SS_RETIRED + 4] = 1
    lo[s + SS_SCORES:s + SS_SCORES + 4], hi[s + SS_SCORES:s + SS_SCORES + 4] = -32768, 32767
    hi[s + SS_SQUARE_LEFT:s + SS_SQUARE_LEFT + 4] = SQUARE_SIZE
    return lo, hi


STATE_LOW, STATE_HIGH = _value_ranges()   # hand index 4: the game is over (hands_per_game)
STATE_LOW.flags.writeable = False
STATE_HIGH.flags.writeable = False


# ---- seats re-indexed for one seat's critic (Python, numpy) ---------------------------
def _rotations():
    """PERM[s]: the index of the entry that moves to each index when seat s becomes seat 0;
    FLAGS[s, v]: river flag v with its seat bits re-indexed the same way."""
    perm = np.tile(np.arange(STATE_SIZE), (4, 1))
    flags = np.zeros((4, 512), np.int16)
    blocks = [(STATE_HAND, NUM_KINDS), (STATE_DRAWN, 1), (STATE_SIDE, NUM_KINDS), (STATE_SQUARE, SQUARE_SIZE),
              (STATE_RIVER, RIVER_LEN), (STATE_RFLAG, RIVER_LEN), (STATE_MELD, MAX_MELDS * STATE_MELD_W)]
    blocks += [(STATE_SCALAR + first, 1) for first in (SS_RETIRED, SS_SCORES, SS_SQUARE_LEFT)]
    for s in range(4):
        for off, n in blocks:
            for r in range(4):
                q = (r + s) % 4
                perm[s, off + r * n:off + (r + 1) * n] = np.arange(off + q * n, off + (q + 1) * n)
        for r in range(4):
            for r2 in range(4):
                perm[s, STATE_CLAIM + r * 4 + r2] = STATE_CLAIM + (r + s) % 4 * 4 + (r2 + s) % 4
        for v in range(512):
            out = v & RF_KAN
            for q in range(4):
                r = (q - s) % 4
                out |= (RF_PICKED << r) if v & (RF_PICKED << q) else 0
                out |= (RF_WON << r) if v & (RF_WON << q) else 0
            flags[s, v] = out
    return perm, flags


_PERM, _FLAGS = _rotations()


def rotate_seats(state, seat):
    """The full state(s) with seat ``seat`` as seat 0: seat q's entries move to
    ``(q - seat) % 4`` in every per-seat block (both axes of the claims), the
    river flags' seat bits and the start seat and seat-to-act scalars too (-1
    stays -1). ``state``: int16 (..., STATE_SIZE); ``seat``: an int 0-3, or an
    int array of the batch shape (one seat per row, e.g. ``info["seat"]`` of
    ``SeatVectorEnv``). Returns a new array; rotating by s and then by
    (4 - s) % 4 gives the input back."""
    x = np.asarray(state)
    if not np.issubdtype(np.asarray(seat).dtype, np.integer):
        raise ValueError(f"seat must be an int 0-3 (or an int array), got {np.asarray(seat).dtype} {seat!r:.80}")
    s = np.asarray(seat, np.int64)
    if x.shape[-1:] != (STATE_SIZE,) or (s.ndim and s.shape != x.shape[:-1]):
        raise ValueError(f"rotate_seats takes states of shape (..., {STATE_SIZE}) and a seat (or one per row), "
                         f"got {x.shape} and {s.shape}")
    if ((s < 0) | (s > 3)).any():
        raise ValueError(f"seat must be 0-3, got {s.tolist()}")
    out = (np.take_along_axis(x, _PERM[s], axis=-1) if s.ndim else x[..., _PERM[s]]).astype(np.int16)
    fl = out[..., STATE_RFLAG:STATE_RFLAG + STATE_RFLAG_LEN]
    out[..., STATE_RFLAG:STATE_RFLAG + STATE_RFLAG_LEN] = _FLAGS[s[..., None], fl & 511]
    sc = STATE_SCALAR
    out[..., sc + SS_START] = (out[..., sc + SS_START] - s) % 4
    act = out[..., sc + SS_TO_ACT]
    out[..., sc + SS_TO_ACT] = np.where(act >= 0, (act - s) % 4, -1)
    return out
