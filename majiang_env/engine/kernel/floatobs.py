"""The normalised float observation (``obs_type="float"``): the compact observation, MLP-ready.

``float_obs(obs, mask, work, out)`` writes float32[FLOAT_SIZE] from one seat's
compact observation (``observe.py``, int16[436]) and its action mask
(int8[156], all zeros when the seat is not to act). It reads nothing else, so
it holds no more than the observation does: no hidden card can reach it. It
needs no rule field and no table; it is a few hundred array writes (no search,
no deficiency), so it costs about what ``observe`` does.

Every value lies in [0, 1], except the scores, in [-1, 1] (``FLOAT_LOW``,
``FLOAT_HIGH``: the bounds per column). Codes become one-hot columns (kind + 1
codes, phase, seat, ...), counts of copies are divided by 4, flag bits become
0 / 1 columns (counted per river), and each other number is divided by its
largest value (given per block). Relative seats as in the observation: r = 0
is the observer, r = 1 the next seat.

``out[:FLOAT_SCALARS]`` is a stack of FLOAT_PLANES planes over the 36 kinds,
shape ``FLOAT_PLANE_SHAPE`` in C order (``out[:FLOAT_SCALARS].reshape(FLOAT_PLANE_SHAPE)``);
then FLOAT_NUM_SCALARS numbers from ``FLOAT_SCALARS``; then the 156 entries of
the action mask from ``FLOAT_MASK`` (1.0 where legal). A ``Q_*`` constant is a
plane index (its block of n planes is rows ``Q_X`` to ``Q_X + n - 1`` of the
plane view), an ``X_*`` constant an offset from ``FLOAT_SCALARS``.

================  ====  ============================================================
plane             n     value per kind k
================  ====  ============================================================
``Q_HAND``        1     copies of k in the own concealed hand / 4
``Q_DRAWN``       1     own card drawn this turn is of kind k (0 / 1)
``Q_PICKED``      1     own picked-up kind this turn (0 / 1)
``Q_UNSEEN``      1     copies of k the observer cannot see / 4 (``greedy.py``'s
                        count: 4 minus hand, drawn card, side cards, river cards
                        and shown meld cards; stand-ins are unseen)
``Q_SIDE``        4     side cards of relative seat r / 4 (others: only if public)
``Q_RIVER``       4     copies of k in relative seat r's river / 4 (every card
                        discarded this hand, picked up or not)
``Q_TAKEN``       4     of those, the copies some seat picked up (flag bits 0-3) / 4
``Q_CLAIM``       3     the discard of relative seat r = 1, 2, 3 that the observer
                        may use now (0 / 1); plane ``Q_CLAIM + r - 1``
``Q_MELD``        16    seat r's shown melds of type t (0 刻, 1 順, 2 暗, 3 明) of
                        kind k (順: its lowest kind), count / 4; plane
                        ``Q_MELD + 4 r + t``
``Q_CLAIMED``     4     the discards seat r's melds claimed (刻 順 明), count / 4
================  ====  ============================================================

=================  ====  ===========================================================
scalar             n     value
=================  ====  ===========================================================
``X_SEAT``         4     own seat (absolute), one-hot
``X_HAND``         5     hand index, one-hot (index 4: the game is over)
``X_START``        4     the hand's start seat (relative), one-hot
``X_PHASE``        4     phase (変, take, discard, over), one-hot
``X_TOOK``         3     own take this turn (none, 引, 拾), one-hot
``X_LAP``          1     lap / 19
``X_SLOT``         1     turn slot / 75
``X_NWINS``        1     wins this hand / 3
``X_EXCH_LEFT``    1     変 decisions left / 16
``X_RETIRED``      4     per relative seat (0 / 1)
``X_SCORES``       4     score / SCORE_SCALE (500), clipped to [-1, 1], per relative seat
``X_SQUARE_LEFT``  4     cards left in each square / 36
``X_RIVER_LEN``    4     cards in each river / 18
``X_MELDS``        4     shown melds per relative seat / 4
``X_FLAGS``        36    per river of relative seat r, per flag bit j (offset
                         ``X_FLAGS + 9 r + j``): its cards with bit j / 18; bits
                         0-3 picked up by relative seat j, 4-7 won on (栄) by
                         relative seat j - 4, 8 placed by a kan
=================  ====  ===========================================================

What the compact vector holds beyond this: the order of the cards in a river
(only the counts per kind and per flag are kept) and the order of the melds.
"""
import numpy as np

from ..rules import NUM_ACTIONS, NUM_KINDS, NUM_SEATS, SQUARE_SIZE
from .greedy import W_UNSEEN, read_obs
from .jit import kernel_jit, rule_jit
from .layout import MAX_MELDS, NUM_EXCHANGE, RIVER_LEN
from .observe import (
    OBS_CLAIM,
    OBS_DRAWN,
    OBS_HAND,
    OBS_MELD,
    OBS_MELD_W,
    OBS_RFLAG,
    OBS_RIVER,
    OBS_SCALAR,
    OBS_SIDE,
    S_EXCH_LEFT,
    S_HAND,
    S_LAP,
    S_NWINS,
    S_PHASE,
    S_PICK_KIND,
    S_RETIRED,
    S_SCORES,
    S_SEAT,
    S_SLOT,
    S_SQUARE_LEFT,
    S_START,
    S_TOOK,
    Blocks,
)

_planes = Blocks()
_plane = _planes.add


Q_HAND = _plane("own hand / 4", 1)
Q_DRAWN = _plane("drawn card", 1)
Q_PICKED = _plane("picked-up kind", 1)
Q_UNSEEN = _plane("unseen copies / 4", 1)
Q_SIDE = _plane("side cards per relative seat / 4", NUM_SEATS)
Q_RIVER = _plane("river per relative seat / 4", NUM_SEATS)
Q_TAKEN = _plane("river cards picked up, per relative seat / 4", NUM_SEATS)
Q_CLAIM = _plane("claimable discard of relative seats 1-3", NUM_SEATS - 1)
Q_MELD = _plane("melds per relative seat and type / 4", NUM_SEATS * 4)
Q_CLAIMED = _plane("claimed discards per relative seat / 4", NUM_SEATS)
FLOAT_PLANES = _planes.size
PLANES = tuple(_planes.items)   # (name, number of planes), in order
FLOAT_PLANE_SHAPE = (FLOAT_PLANES, NUM_KINDS)

FLOAT_SCALARS = FLOAT_PLANES * NUM_KINDS   # where the scalars start
_scalars = Blocks()
_scalar = _scalars.add


X_SEAT = _scalar("own seat, one-hot", NUM_SEATS)
X_HAND = _scalar("hand index, one-hot (4: over)", 5)
X_START = _scalar("start seat (relative), one-hot", NUM_SEATS)
X_PHASE = _scalar("phase, one-hot", 4)
X_TOOK = _scalar("own take this turn, one-hot", 3)
X_LAP = _scalar("lap / 19", 1)
X_SLOT = _scalar("turn slot / 75", 1)
X_NWINS = _scalar("wins this hand / 3", 1)
X_EXCH_LEFT = _scalar("exchange decisions left / 16", 1)
X_RETIRED = _scalar("retired per relative seat", NUM_SEATS)
X_SCORES = _scalar("score / 500, clipped, per relative seat", NUM_SEATS)
X_SQUARE_LEFT = _scalar("square cards left / 36, per relative seat", NUM_SEATS)
X_RIVER_LEN = _scalar("river cards / 18, per relative seat", NUM_SEATS)
X_MELDS = _scalar("shown melds / 4, per relative seat", NUM_SEATS)
X_FLAGS = _scalar("river flag bits / 18, per relative seat x 9 bits", NUM_SEATS * 9)
FLOAT_NUM_SCALARS = _scalars.size
SCALAR_BLOCKS = tuple(_scalars.items)

FLOAT_MASK = FLOAT_SCALARS + FLOAT_NUM_SCALARS   # the action mask's 156 entries start here
FLOAT_SIZE = FLOAT_MASK + NUM_ACTIONS

SCORE_SCALE = 500.0   # scores are divided by this and clipped to [-1, 1]
MAX_LAP = 19
MAX_SLOT = 75
MAX_WINS = 3

FLOAT_LOW = np.zeros(FLOAT_SIZE, np.float32)
FLOAT_LOW[FLOAT_SCALARS + X_SCORES:FLOAT_SCALARS + X_SCORES + NUM_SEATS] = -1.0
FLOAT_HIGH = np.ones(FLOAT_SIZE, np.float32)
FLOAT_LOW.flags.writeable = False
FLOAT_HIGH.flags.writeable = False


@rule_jit
def _onehot(out, at, v, n):
    if 0 <= v < n:
        out[at + v] = 1.0


@rule_jit
def _add_copy(out, i):
    """One more copy in a count-per-kind column: + 1/4, at most 1 (4 copies of a kind
    exist; the cap holds rows no game made within the Box). Multiples of 1/4 are exact."""
    out[i] = min(out[i] + 0.25, 1.0)


@kernel_jit
def float_obs(obs, mask, work, out):
    """Write the float observation of ``obs`` (int16[436]) with action mask ``mask``
    (int8[156]) into ``out`` (float32[FLOAT_SIZE]); ``work`` is int64 scratch of
    ``greedy.W_SIZE`` or more (``greedy.read_obs`` counts the unseen copies there)."""
    for i in range(FLOAT_MASK):   # (the mask block is written whole below)
        out[i] = 0.0
    read_obs(obs, work)
    s = OBS_SCALAR
    for k in range(NUM_KINDS):
        out[Q_HAND * NUM_KINDS + k] = obs[OBS_HAND + k] * 0.25
        out[Q_DRAWN * NUM_KINDS + k] = obs[OBS_DRAWN + k]
        out[Q_UNSEEN * NUM_KINDS + k] = min(max(work[W_UNSEEN + k], 0), 4) * 0.25
    _onehot(out, Q_PICKED * NUM_KINDS, obs[s + S_PICK_KIND] - 1, NUM_KINDS)
    f = FLOAT_SCALARS
    for r in range(NUM_SEATS):
        for k in range(NUM_KINDS):
            out[(Q_SIDE + r) * NUM_KINDS + k] = obs[OBS_SIDE + r * NUM_KINDS + k] * 0.25
        n = 0
        for i in range(RIVER_LEN):
            v = obs[OBS_RIVER + r * RIVER_LEN + i] - 1
            if not 0 <= v < NUM_KINDS:
                continue
            n += 1
            _add_copy(out, (Q_RIVER + r) * NUM_KINDS + v)
            flag = obs[OBS_RFLAG + r * RIVER_LEN + i]
            if flag == 0:
                continue
            if flag & 15:
                _add_copy(out, (Q_TAKEN + r) * NUM_KINDS + v)
            for j in range(9):
                if (flag >> j) & 1:
                    out[f + X_FLAGS + r * 9 + j] += 1.0
        out[f + X_RIVER_LEN + r] = n / RIVER_LEN
        for j in range(9):
            out[f + X_FLAGS + r * 9 + j] = min(out[f + X_FLAGS + r * 9 + j], RIVER_LEN) / RIVER_LEN
        if r > 0:
            _onehot(out, (Q_CLAIM + r - 1) * NUM_KINDS, obs[OBS_CLAIM + r] - 1, NUM_KINDS)
        nm = 0
        for m in range(MAX_MELDS):
            o = OBS_MELD + (r * MAX_MELDS + m) * OBS_MELD_W
            t, k, c = obs[o], obs[o + 1] - 1, obs[o + 2] - 1
            if not 1 <= t <= 4 or not 0 <= k < NUM_KINDS:
                continue
            nm += 1
            _add_copy(out, (Q_MELD + r * 4 + t - 1) * NUM_KINDS + k)
            if 0 <= c < NUM_KINDS:
                _add_copy(out, (Q_CLAIMED + r) * NUM_KINDS + c)
        out[f + X_MELDS + r] = nm * 0.25
        out[f + X_RETIRED + r] = obs[s + S_RETIRED + r]
        out[f + X_SCORES + r] = min(max(obs[s + S_SCORES + r] / SCORE_SCALE, -1.0), 1.0)
        out[f + X_SQUARE_LEFT + r] = obs[s + S_SQUARE_LEFT + r] / SQUARE_SIZE
    _onehot(out, f + X_SEAT, obs[s + S_SEAT], NUM_SEATS)
    _onehot(out, f + X_HAND, obs[s + S_HAND], 5)
    _onehot(out, f + X_START, obs[s + S_START], NUM_SEATS)
    _onehot(out, f + X_PHASE, obs[s + S_PHASE], 4)
    _onehot(out, f + X_TOOK, obs[s + S_TOOK], 3)
    out[f + X_LAP] = obs[s + S_LAP] / MAX_LAP
    out[f + X_SLOT] = obs[s + S_SLOT] / MAX_SLOT
    out[f + X_NWINS] = obs[s + S_NWINS] / MAX_WINS
    out[f + X_EXCH_LEFT] = obs[s + S_EXCH_LEFT] / NUM_EXCHANGE
    for a in range(NUM_ACTIONS):
        out[FLOAT_MASK + a] = 1.0 if mask[a] != 0 else 0.0


@kernel_jit
def float_rows(obs, mask, work, out):
    """``float_obs`` of each row of ``obs`` (n, 436) with ``mask`` (n, 156) into ``out`` (n, FLOAT_SIZE)."""
    for i in range(obs.shape[0]):
        float_obs(obs[i], mask[i], work, out[i])
