"""The float feature encoding of an observation (``obs_type="features"``).

``features(obs, mask, chow_off, kuikae, dt, work, out)`` writes float32[FEAT_SIZE]
from one seat's compact observation (``observe.py``, int16[436]) and its action
mask. It reads nothing else, so it holds no more than the observation does:
no hidden card can reach it. The two rule fields the observation does not
carry (whose discard a 順 uses, ``kuikae``) are arguments, as for the greedy
policy.

``out[:NUM_PLANES * 36]`` is a stack of planes over the 36 kinds, shape
(NUM_PLANES, 36) in C order (``out[:NUM_PLANES * 36].reshape(NUM_PLANES, 36)``
for a convolution over kinds); ``out[SCALARS:]`` is a block of NUM_SCALARS
numbers. Relative seats as in the observation: r = 0 is the observer, r = 1
the next seat. Counts of copies are divided by 4.

=================  ====  ===========================================================
plane              n     value per kind k
=================  ====  ===========================================================
``P_HAND``         4     own concealed hand holds at least 1, 2, 3, 4 copies of k
``P_DRAWN``        1     own card drawn this turn is of kind k
``P_PICKED``       1     own picked-up kind this turn
``P_SIDE``         4     side cards per relative seat (others: only if public) / 4
``P_RIVER``        4     copies of k in each relative seat's river / 4
``P_CLAIM``        4     the discard of relative seat r that the observer may use
                         now (r = 0 always 0): the other seats' discards made
                         since the observer's previous turn
``P_TRIPLET``      4     relative seat r shows a 刻 / 暗 / 明 of kind k (0 / 1)
``P_RUN``          4     kinds covered by relative seat r's shown 順 melds (0 / 1)
``P_VISIBLE``      1     copies of k the observer sees anywhere / 4
``P_UNSEEN``       1     copies of k the observer cannot see / 4 (1 - P_VISIBLE)
``P_OPT_LEGAL``    1     giving up one card of k is legal now (打 k in the
                         discard phase, 変 k in the exchange phase)
``P_OPT_DEF``      1     the deficiency that option leaves / 8 (0 if not legal)
``P_OPT_BEST``     1     that deficiency is the lowest among these options (打 or
                         変; 暗 and 明 not counted)
``P_OPT_ACC``      1     its acceptance (unseen cards that would lower it) / 100, at most 1
``P_ANKAN_DEF``    1     暗 k legal: (the deficiency it leaves, at most 7, + 1) / 8;
                         0: not legal
``P_MINKAN_DEF``   1     明 k legal: likewise
``P_GREEDY``       1     the greedy policy would take that option (打 k or 変 k):
                         k is in its final tie set (``greedy.greedy_candidates``)
``P_GREEDY_KAN``   1     the greedy policy would take 暗 k or 明 k
=================  ====  ===========================================================

**Deficiency** is the number of cards still missing for 1 頭 + 4 門 given the
shown melds, and **acceptance** the unseen cards that would lower it: the
quantities ``greedy.py`` decides by (its docstring defines them), computed by
``greedy.option_values``. The "hand now" is the own hand plus the drawn card.

Scalars, from ``SCALARS``:

==================  ====  ===================================================
``F_HAND``          4     hand index, one-hot
``F_START``         4     the hand's start seat (relative), one-hot
``F_PHASE``         4     phase (変, take, discard, over), one-hot
``F_TOOK``          3     own take this turn (none, 引, 拾), one-hot
``F_LAP``           1     lap / 19
``F_SLOT``          1     turn slot / 76
``F_NWINS``         1     wins this hand / 3
``F_EXCH_LEFT``     1     変 decisions left / 16
``F_RETIRED``       4     per relative seat
``F_SCORES``        4     tanh(score / 100) per relative seat
``F_SQUARE_LEFT``   4     cards left in each square / 36
``F_MELDS``         4     shown melds per relative seat / 4
``F_DEF_NOW``       1     deficiency of the hand now (own hand + drawn card), at
                          most 8, / 8; for every seat, to act or not
``F_ACC_NOW``       1     its acceptance / 100, at most 1
``F_PICKUP_LEGAL``  6     pick-ups 刻 +1 +2 +3, 順 low middle high: legal
``F_PICKUP_DEF``    6     the deficiency after the pick-up and its best
                          discard / 8 (0 if not legal)
``F_PICKUP_ACC``    6     that hand's acceptance / 100, at most 1
``F_WIN_LEGAL``     1     模 or 栄 is legal
``F_GREEDY``        12    the greedy policy would take id 108 + j (模, pass,
                          引, 刻 x3, 順 x3, 栄 x3)
==================  ====  ===================================================

The greedy flags make the heuristic one linear map away for a learner (a
policy that copies them plays exactly as greedy up to its random tie-breaks),
so learning can start from it and spend its samples on where to differ.
"""
import math

import numba
import numpy as np
from numba import njit, prange

from ..rules import (
    A_ANKAN,
    A_DISCARD,
    A_EXCHANGE,
    A_MINKAN,
    A_PUNG,
    A_RON,
    A_TSUMO,
    NUM_ACTIONS,
    NUM_KINDS,
    SQUARE_SIZE,
)
from .greedy import INF, W_ACC, W_TIE, W_UNSEEN, W_VAL, candidates_from_values, hand_value, option_values
from .jit import kernel_jit
from .layout import PH_EXCHANGE
from .observe import (
    OBS_CLAIM,
    OBS_DRAWN,
    OBS_HAND,
    OBS_MELD,
    OBS_RIVER,
    OBS_SCALAR,
    OBS_SIDE,
    OBS_SIZE,
    S_EXCH_LEFT,
    S_HAND,
    S_LAP,
    S_NWINS,
    S_PHASE,
    S_PICK_KIND,
    S_RETIRED,
    S_SCORES,
    S_SLOT,
    S_SQUARE_LEFT,
    S_START,
    S_TOOK,
    Blocks,
    first_out_of_range,
)

_planes = Blocks()
_plane = _planes.add


P_HAND = _plane("own hand >= 1..4 copies", 4)
P_DRAWN = _plane("drawn card", 1)
P_PICKED = _plane("picked-up kind", 1)
P_SIDE = _plane("side cards per relative seat", 4)
P_RIVER = _plane("river per relative seat", 4)
P_CLAIM = _plane("claimable discard per relative seat", 4)
P_TRIPLET = _plane("shown triplets per relative seat", 4)
P_RUN = _plane("shown runs per relative seat", 4)
P_VISIBLE = _plane("visible copies", 1)
P_UNSEEN = _plane("unseen copies", 1)
P_OPT_LEGAL = _plane("option legal", 1)
P_OPT_DEF = _plane("option deficiency", 1)
P_OPT_BEST = _plane("option is the lowest deficiency", 1)
P_OPT_ACC = _plane("option acceptance", 1)
P_ANKAN_DEF = _plane("ankan deficiency", 1)
P_MINKAN_DEF = _plane("minkan deficiency", 1)
P_GREEDY = _plane("greedy's discard / exchange choices", 1)
P_GREEDY_KAN = _plane("greedy's kan choices", 1)
NUM_PLANES = _planes.size
PLANES = tuple(_planes.items)   # (name, number of planes), in order

SCALARS = NUM_PLANES * NUM_KINDS
F_HAND = 0
F_START = 4
F_PHASE = 8
F_TOOK = 12
F_LAP = 15
F_SLOT = 16
F_NWINS = 17
F_EXCH_LEFT = 18
F_RETIRED = 19
F_SCORES = 23
F_SQUARE_LEFT = 27
F_MELDS = 31
F_DEF_NOW = 35
F_ACC_NOW = 36
F_PICKUP_LEGAL = 37
F_PICKUP_DEF = 43
F_PICKUP_ACC = 49
F_WIN_LEGAL = 55
F_GREEDY = 56
NUM_SCALARS = 68
FEAT_SIZE = SCALARS + NUM_SCALARS
ACC_SCALE = 100.0   # acceptances are divided by this (and capped at 1)
PLANE_SHAPE = (NUM_PLANES, NUM_KINDS)


@kernel_jit
def _onehot(out, at, v, n):
    if 0 <= v < n:
        out[at + v] = 1.0


@kernel_jit
def features(obs, mask, chow_off, kuikae, dt, work, out):
    """Write the feature vector of observation ``obs`` (int16[436]) with action
    mask ``mask`` into ``out`` (float32[FEAT_SIZE]); ``work`` is the greedy
    policy's int64 scratch (``greedy.new_work()``), ``dt`` its deficiency table."""
    for i in range(FEAT_SIZE):
        out[i] = 0.0
    s = OBS_SCALAR
    phase = obs[s + S_PHASE]
    nlegal = 0
    for a in range(NUM_ACTIONS):
        nlegal += mask[a] != 0
    acting = nlegal > 0 and phase <= 2   # else not this seat's decision: no per-action block
    # the greedy quantities first: they leave the unseen copies per kind at work[W_UNSEEN:]
    if acting:
        dnow, acc = option_values(obs, mask, dt, chow_off, kuikae, work)
        candidates_from_values(obs, mask, dt, chow_off, kuikae, work)   # greedy's tie set, at work[W_TIE:]
    else:
        _, dnow, acc = hand_value(obs, dt, work)
    for k in range(NUM_KINDS):
        h = obs[OBS_HAND + k]
        for t in range(4):
            if h > t:
                out[(P_HAND + t) * NUM_KINDS + k] = 1.0
        out[P_DRAWN * NUM_KINDS + k] = obs[OBS_DRAWN + k]
        u = min(max(work[W_UNSEEN + k], 0), 4)
        out[P_UNSEEN * NUM_KINDS + k] = u * 0.25
        out[P_VISIBLE * NUM_KINDS + k] = 1.0 - u * 0.25
    _onehot(out, P_PICKED * NUM_KINDS, obs[s + S_PICK_KIND] - 1, NUM_KINDS)
    for r in range(4):
        for k in range(NUM_KINDS):
            out[(P_SIDE + r) * NUM_KINDS + k] = obs[OBS_SIDE + r * NUM_KINDS + k] * 0.25
        for i in range(18):
            v = obs[OBS_RIVER + r * 18 + i] - 1
            if 0 <= v < NUM_KINDS:
                out[(P_RIVER + r) * NUM_KINDS + v] += 0.25
        _onehot(out, (P_CLAIM + r) * NUM_KINDS, obs[OBS_CLAIM + r] - 1, NUM_KINDS)
        nm = 0
        for m in range(4):
            o = OBS_MELD + (r * 4 + m) * 3
            t, k = obs[o], obs[o + 1] - 1
            if t <= 0 or not 0 <= k < NUM_KINDS:
                continue
            nm += 1
            if t == 2:  # 順
                for kk in range(k, min(k + 3, NUM_KINDS)):
                    out[(P_RUN + r) * NUM_KINDS + kk] = 1.0
            else:       # 刻 / 暗 / 明
                out[(P_TRIPLET + r) * NUM_KINDS + k] = 1.0
        out[SCALARS + F_MELDS + r] = nm * 0.25

    f = SCALARS
    _onehot(out, f + F_HAND, obs[s + S_HAND], 4)
    _onehot(out, f + F_START, obs[s + S_START], 4)
    _onehot(out, f + F_PHASE, phase, 4)
    _onehot(out, f + F_TOOK, obs[s + S_TOOK], 3)
    out[f + F_LAP] = obs[s + S_LAP] / 19.0
    out[f + F_SLOT] = obs[s + S_SLOT] / 76.0
    out[f + F_NWINS] = obs[s + S_NWINS] / 3.0
    out[f + F_EXCH_LEFT] = obs[s + S_EXCH_LEFT] / 16.0
    for r in range(4):
        out[f + F_RETIRED + r] = obs[s + S_RETIRED + r]
        out[f + F_SCORES + r] = math.tanh(obs[s + S_SCORES + r] / 100.0)
        out[f + F_SQUARE_LEFT + r] = obs[s + S_SQUARE_LEFT + r] / SQUARE_SIZE
    if mask[A_TSUMO] or mask[A_RON] or mask[A_RON + 1] or mask[A_RON + 2]:
        out[f + F_WIN_LEGAL] = 1.0

    if acting:
        for j in range(12):
            out[f + F_GREEDY + j] = work[W_TIE + A_TSUMO + j]
        for k in range(NUM_KINDS):
            out[P_GREEDY * NUM_KINDS + k] = work[W_TIE + A_DISCARD + k] + work[W_TIE + A_EXCHANGE + k]
            out[P_GREEDY_KAN * NUM_KINDS + k] = work[W_TIE + A_ANKAN + k] + work[W_TIE + A_MINKAN + k]
    out[f + F_DEF_NOW] = min(dnow, 8) / 8.0
    out[f + F_ACC_NOW] = min(acc, ACC_SCALE) / ACC_SCALE
    if not acting:
        return
    for j in range(6):
        a = A_PUNG + j
        if mask[a]:
            out[f + F_PICKUP_LEGAL + j] = 1.0
            v = work[W_VAL + a]
            if v < INF:
                out[f + F_PICKUP_DEF + j] = min(v, 8) / 8.0
                out[f + F_PICKUP_ACC + j] = min(work[W_ACC + a], ACC_SCALE) / ACC_SCALE
    base = A_EXCHANGE if phase == PH_EXCHANGE else A_DISCARD
    best = INF
    for k in range(NUM_KINDS):
        if mask[base + k] and work[W_VAL + base + k] < best:
            best = work[W_VAL + base + k]
    for k in range(NUM_KINDS):
        a = base + k
        if mask[a]:
            v = work[W_VAL + a]
            out[P_OPT_LEGAL * NUM_KINDS + k] = 1.0
            out[P_OPT_DEF * NUM_KINDS + k] = min(v, 8) / 8.0
            out[P_OPT_BEST * NUM_KINDS + k] = 1.0 if v == best else 0.0
            out[P_OPT_ACC * NUM_KINDS + k] = min(work[W_ACC + a], ACC_SCALE) / ACC_SCALE
        if mask[A_ANKAN + k]:
            out[P_ANKAN_DEF * NUM_KINDS + k] = (min(work[W_VAL + A_ANKAN + k], 7) + 1) / 8.0
        if mask[A_MINKAN + k]:
            out[P_MINKAN_DEF * NUM_KINDS + k] = (min(work[W_VAL + A_MINKAN + k], 7) + 1) / 8.0


@kernel_jit
def features_rows(obs, mask, chow_off, kuikae, dt, work, out):
    """``features`` of each row of ``obs`` (n, 436) with ``mask`` (n, 156) into ``out`` (n, FEAT_SIZE)."""
    for i in range(obs.shape[0]):
        features(obs[i], mask[i], chow_off, kuikae, dt, work, out[i])


@njit(cache=True, parallel=True)
def features_rows_parallel(obs, mask, chow_off, kuikae, dt, works, out):
    """``features_rows`` over numba's threads; ``works[t]`` is thread t's scratch
    (``greedy.new_work()`` rows, one per thread of ``numba.config.NUMBA_NUM_THREADS``)."""
    for j in prange(obs.shape[0]):
        i = np.int64(j)   # (see batch.py: a bare prange index compiles the callees twice)
        features(obs[i], mask[i], chow_off, kuikae, dt, works[numba.get_thread_id()], out[i])


@kernel_jit
def first_bad_value(obs):
    """The first flat index (row * OBS_SIZE + index) of the rows ``obs`` (n, OBS_SIZE)
    outside what ``observe`` can write there (``observe.first_out_of_range``), or -1."""
    for r in range(obs.shape[0]):
        i = first_out_of_range(obs[r])
        if i >= 0:
            return r * OBS_SIZE + i
    return -1
