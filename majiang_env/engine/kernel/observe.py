"""The observation of one seat: an int16 vector holding exactly docs/rules.md §11.

Seats are relative: r = 0 is the observer, r = 1 the next seat, and so on.
Segments, in order (each segment's length is named ``OBS_X_LEN`` below and
the offsets ``OBS_X`` add them up):

=============  ======  =====================================================
OBS_HAND       36      own concealed hand, count per kind
OBS_DRAWN      36      own card drawn this turn (one-hot kind)
OBS_SIDE       4x36    side cards per relative seat (others only if public)
OBS_RIVER      4x18    river cards, kind + 1 (0 = empty), in order
OBS_RFLAG      4x18    per river card: bits 0-3 picked up by relative seat,
                       bits 4-7 won on by relative seat, bit 8 kan card
OBS_MELD       4x4x3   melds per relative seat, in the order made: type (1 刻
                       2 順 3 暗 4 明; 刻 順 明 hold one unseen stand-in),
                       kind + 1 (順: its lowest kind), claimed discard's
                       kind + 1 (刻 順 明; 0 for 暗)
OBS_CLAIM      4       claimable discard of each relative seat, kind + 1
OBS_SCALAR     24      seat, hand index, start seat (rel), lap, phase (0 変
                       1 take 2 discard 3 over), turn slot, wins this hand,
                       own take this turn (0 none 1 引 2 拾), own picked-up
                       kind + 1, 変 decisions left (0 when exchange is off),
                       retired x4 (rel), scores x4 (rel), square cards left
                       x4 (rel), 2 zeros
=============  ======  =====================================================
"""

import numpy as np

from ..rules import NUM_KINDS, NUM_SEATS, R_DISCARD_DRAWN, R_EXCHANGE, R_SIDE_PUBLIC, SQUARE_SIZE
from .jit import kernel_jit
from .layout import (
    CUR,
    DRAWN,
    EXCH,
    HAND,
    HCNT,
    M_CLAIMED,
    M_KIND,
    M_TYPE,
    MAX_MELDS,
    MELD_W,
    MELDS,
    NMELD,
    NRIVER,
    NSIDE,
    NUM_EXCHANGE,
    NWINS,
    PH_DISCARD,
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
    START,
    TOOK,
)
from .legal import claimable


class Blocks:
    """Named blocks laid end to end (the planes and scalars of the float encodings):
    ``add(name, n)`` appends a block of n and returns its offset; ``items`` lists
    (name, n) in order and ``size`` is their total."""

    def __init__(self):
        self.items = []

    def add(self, name, n):
        offset = self.size
        self.items.append((name, n))
        return offset

    @property
    def size(self):
        return sum(n for _, n in self.items)


# ---- segments: each one's size by name, offsets cumulative ------------------------
OBS_HAND = 0
OBS_HAND_LEN = NUM_KINDS                                  # own concealed hand, count per kind
OBS_DRAWN = OBS_HAND + OBS_HAND_LEN
OBS_DRAWN_LEN = NUM_KINDS                                 # own card drawn this turn, one-hot kind
OBS_SIDE = OBS_DRAWN + OBS_DRAWN_LEN
OBS_SIDE_LEN = NUM_SEATS * NUM_KINDS                      # side cards per relative seat, count per kind
OBS_RIVER = OBS_SIDE + OBS_SIDE_LEN
OBS_RIVER_LEN = NUM_SEATS * RIVER_LEN                     # river cards per relative seat, kind + 1
OBS_RFLAG = OBS_RIVER + OBS_RIVER_LEN
OBS_RFLAG_LEN = NUM_SEATS * RIVER_LEN                     # a flag per river card (RF_* bits, relative seats)
OBS_MELD = OBS_RFLAG + OBS_RFLAG_LEN
OBS_MELD_W = 3                                            # per shown meld: type, kind + 1, claimed kind + 1
OBS_MELD_LEN = NUM_SEATS * MAX_MELDS * OBS_MELD_W         # shown melds per relative seat
OBS_CLAIM = OBS_MELD + OBS_MELD_LEN
OBS_CLAIM_LEN = NUM_SEATS                                 # claimable discard per relative seat, kind + 1
OBS_SCALAR = OBS_CLAIM + OBS_CLAIM_LEN
OBS_SCALAR_LEN = 24                                       # seat, hand, phase, ... (S_* below; the last 2 are 0)
OBS_SIZE = OBS_SCALAR + OBS_SCALAR_LEN

# the scalars, as offsets from OBS_SCALAR (the 4-seat ones are in relative seat order)
S_SEAT, S_HAND, S_START, S_LAP, S_PHASE, S_SLOT, S_NWINS, S_TOOK, S_PICK_KIND, S_EXCH_LEFT = range(10)
S_RETIRED, S_SCORES, S_SQUARE_LEFT = 10, 14, 18  # x4 each; the last 2 scalars are 0


def _relative_bits():
    """REL_BITS[me, bits & 255]: the seat sets in bits 0-3 (picked up by) and 4-7
    (won on by) of a river flag, re-indexed to seats relative to ``me``."""
    table = np.zeros((4, 256), np.int32)
    for me in range(4):
        for bits in range(256):
            for q in range(4):
                r = (q - me) % 4
                if bits & (RF_PICKED << q):
                    table[me, bits] |= RF_PICKED << r
                if bits & (RF_WON << q):
                    table[me, bits] |= RF_WON << r
    return table


REL_BITS = _relative_bits()
REL_BITS.flags.writeable = False   # compiled into the kernel as a constant


@kernel_jit
def observe(st, rules, me, out):
    for i in range(OBS_SIZE):
        out[i] = 0
    for k in range(NUM_KINDS):
        out[OBS_HAND + k] = st[HCNT + me * NUM_KINDS + k]
    if st[CUR] == me and st[PHASE] == PH_DISCARD and st[DRAWN] >= 0:
        out[OBS_DRAWN + (st[DRAWN] >> 2)] = 1
        if rules[R_DISCARD_DRAWN]:
            out[OBS_HAND + (st[DRAWN] >> 2)] -= 1  # shown as drawn, not twice
    for r in range(4):
        q = (me + r) % 4
        if r == 0 or rules[R_SIDE_PUBLIC]:
            for i in range(st[NSIDE + q]):
                out[OBS_SIDE + r * NUM_KINDS + (st[SIDE + q * 4 + i] >> 2)] += 1
        for i in range(st[NRIVER + q]):
            out[OBS_RIVER + r * RIVER_LEN + i] = (st[RIVER + q * RIVER_LEN + i] >> 2) + 1
            flag = st[RFLAG + q * RIVER_LEN + i]
            out[OBS_RFLAG + r * RIVER_LEN + i] = (flag & RF_KAN) | REL_BITS[me, flag & 255]
        for i in range(st[NMELD + q]):
            m = MELDS + (q * 4 + i) * MELD_W
            o = OBS_MELD + (r * MAX_MELDS + i) * OBS_MELD_W
            out[o] = st[m + M_TYPE]
            out[o + 1] = st[m + M_KIND] + 1
            out[o + 2] = (st[m + M_CLAIMED] >> 2) + 1 if st[m + M_CLAIMED] >= 0 else 0
        if r > 0:
            out[OBS_CLAIM + r] = claimable(st, me, q) + 1
    s = OBS_SCALAR
    out[s + S_SEAT] = me
    out[s + S_HAND] = st[HAND]
    out[s + S_START] = (st[START] - me) % 4
    out[s + S_LAP] = st[SLOT] // 4 + 1
    out[s + S_PHASE] = st[PHASE]
    out[s + S_SLOT] = st[SLOT]
    out[s + S_NWINS] = st[NWINS]
    if st[CUR] == me:
        out[s + S_TOOK] = st[TOOK]
        out[s + S_PICK_KIND] = st[PICK_KIND] + 1
    out[s + S_EXCH_LEFT] = NUM_EXCHANGE - st[EXCH] if rules[R_EXCHANGE] else 0
    for r in range(4):
        q = (me + r) % 4
        out[s + S_RETIRED + r] = st[RETIRED + q]
        out[s + S_SCORES + r] = st[SCORES + q]
        out[s + S_SQUARE_LEFT + r] = SQUARE_SIZE - st[SQPOS + q]


def _value_ranges():
    """(lowest, highest) int16[OBS_SIZE] each: every value ``observe`` can write at
    each index (docs/observation.md); scores may be any int16."""
    lo, hi = np.zeros(OBS_SIZE, np.int16), np.zeros(OBS_SIZE, np.int16)
    for first, end, top in ((OBS_HAND, OBS_DRAWN, 4), (OBS_DRAWN, OBS_SIDE, 1), (OBS_SIDE, OBS_RIVER, 4),
                            (OBS_RIVER, OBS_RFLAG, NUM_KINDS), (OBS_RFLAG, OBS_MELD, 511),
                            (OBS_MELD, OBS_CLAIM, NUM_KINDS), (OBS_CLAIM, OBS_SCALAR, NUM_KINDS)):
        hi[first:end] = top
    hi[OBS_MELD:OBS_CLAIM:OBS_MELD_W] = 4                 # meld type
    s = OBS_SCALAR
    for i, low, top in ((S_SEAT, 0, 3), (S_HAND, 0, 4), (S_START, 0, 3), (S_LAP, 1, 19), (S_PHASE, 0, 3),
                        (S_SLOT, 0, 75), (S_NWINS, 0, 3), (S_TOOK, 0, 2), (S_PICK_KIND, 0, NUM_KINDS),
                        (S_EXCH_LEFT, 0, NUM_EXCHANGE)):
        lo[s + i], hi[s + i] = low, top
    hi[s + S_RETIRED:s + S_RETIRED + 4] = 1
    lo[s + S_SCORES:s + S_SCORES + 4], hi[s + S_SCORES:s + S_SCORES + 4] = -32768, 32767
    hi[s + S_SQUARE_LEFT:s + S_SQUARE_LEFT + 4] = SQUARE_SIZE
    return lo, hi


OBS_LOW, OBS_HIGH = _value_ranges()   # hand index 4: the game is over (hands_per_game)


@kernel_jit
def first_out_of_range(obs):
    """The first index of ``obs`` outside what ``observe`` can write there
    (OBS_LOW, OBS_HIGH), or -1: what the compiled policies and the feature
    encoding check before they index tables with an observation."""
    for i in range(OBS_SIZE):
        if obs[i] < OBS_LOW[i] or obs[i] > OBS_HIGH[i]:
            return i
    return -1
