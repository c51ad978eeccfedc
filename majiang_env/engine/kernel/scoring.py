"""Winning and scoring: the winning shape (docs/rules.md §7), the best reading of
a winning hand and its patterns (§9), and the win's payments (§9, §8).

``is_win`` decides the shape from the hand's keys and the winning-shape table
``wt`` (``tables.py``); ``score_win`` searches the readings of the hand for the
highest pattern total (高点法) in ``st[SCRATCH:]`` (no allocation);
``record_win`` writes the win record and settles the payments.
"""
import numpy as np

from ..rules import GROUP, NUM_KINDS, R_PAYMENT
from .cards import POW5
from .jit import kernel_jit
from .layout import (
    DELTAS,
    HAND,
    HCNT,
    KEYS,
    M_KIND,
    M_TYPE,
    MAX_WINS,
    MELD_W,
    MELDS,
    MT_ANKAN,
    MT_CHOW,
    MT_CONCEALED_RUN,
    MT_CONCEALED_TRIPLET,
    MT_MINKAN,
    NCOL,
    NMELD,
    NWINS,
    RETIRED,
    SC_CNT,
    SC_MFACE,
    SC_MKAN,
    SC_MTYPE,
    SC_MVAL,
    SC_OKIND,
    SC_OTYPE,
    SC_OUT,
    SC_TMP,
    SC_VAL,
    SC_VS,
    SC_WORK,
    SCORES,
    W_BASE,
    W_CARD,
    W_FROM,
    W_PATTERNS,
    W_SEAT,
    WIN_PENDING,
    WIN_W,
    WINS,
    WP_CARD,
    WP_EXTRA,
    WP_FROM,
    WP_SEAT,
)

# Colour residues (count mod 3 per face colour) as a base-3 code -> the colour
# that must hold the pair, or -1 when no 1 頭 + 門 split is possible (14 cards:
# exactly one colour is 2 mod 3, the others 0 mod 3).
POW3 = np.array([1, 3, 9, 27], np.int32)
PAIR_COLOUR = np.full(81, -1, np.int32)
for _c in range(4):
    PAIR_COLOUR[2 * POW3[_c]] = _c


# ---- the winning shape (docs/rules.md §7) ------------------------------------
@kernel_jit
def is_win(st, wt, p, extra):
    """Concealed hand of p (+ one card of kind ``extra`` if >= 0) is 1 pair + melds.

    The residue test needs no table look-up and no data-dependent branch, and
    rejects almost every hand; only the survivors read the win table."""
    ec = extra // 9 if extra >= 0 else -1
    code = 0
    for c in range(4):
        code += ((st[NCOL + p * 4 + c] + (c == ec)) % 3) * POW3[c]
    pair = PAIR_COLOUR[code]
    if pair < 0:
        return False
    for c in range(4):
        key = st[KEYS + p * 4 + c]
        if c == ec:
            key += POW5[extra % 9]
        if not (wt[key] & (2 if c == pair else 1)):
            return False
    return True


# ---- patterns (docs/rules.md §9) ---------------------------------------------
@kernel_jit
def subset_points(seat, mtype, mface, mv, mkan, mask, vs):
    """Points of one pattern made of the melds in ``mask`` (0 if none); vs: work space (4)."""
    n = 0
    t = -1
    faces = 0
    for i in range(4):
        if (mask >> i) & 1:
            if n == 0:
                t = mtype[i]
                if mask == 1 << i:  # one meld: an own-colour triplet scores its number (完: 10)
                    if t == 1 and mface[i] == seat:
                        return 10 if mkan[i] else mv[i]
                    return 0
            elif mtype[i] != t:
                return 0
            faces |= 1 << mface[i]
            j = n  # insertion sort of the values
            while j > 0 and vs[j - 1] > mv[i]:
                vs[j] = vs[j - 1]
                j -= 1
            vs[j] = mv[i]
            n += 1
    k = (faces & 1) + ((faces >> 1) & 1) + ((faces >> 2) & 1) + ((faces >> 3) & 1)
    g = GROUP[n, k]
    if g < 0:
        return 0
    # t: 0 run, 1 triplet
    edge_hi = 7 if t == 0 else 9
    shape = 0
    d = vs[1] - vs[0]
    stepped = True
    for a in range(1, n):
        if vs[a] - vs[a - 1] != d:
            stepped = False
    if stepped and 0 <= d <= 3:
        shape = 5 if d == 0 else d  # 同 = 5, 連/跳/筋 = 1/2/3
    else:
        lo = False
        hi = False
        ok = True
        for a in range(n):
            if vs[a] == 1:
                lo = True
            elif vs[a] == edge_hi:
                hi = True
            else:
                ok = False
        if ok and lo and hi:
            shape = 4
    if shape == 0:
        return 0
    return 10 * g + shape + (5 if t == 1 else 0)


@kernel_jit
def best_patterns(seat, mtype, mface, mv, mkan, out, val, vs):
    """Best total of <= 3 disjoint patterns over 4 melds; out = (pts, mask) x 3.
    val (16) and vs (4): work space."""
    val[0] = 0
    for m in range(1, 16):
        val[m] = subset_points(seat, mtype, mface, mv, mkan, m, vs)
    best = -1
    for a in range(16):
        if a and val[a] == 0:
            continue
        for b in range(a, 16):
            if b and (val[b] == 0 or (b & a)):
                continue
            for c in range(b, 16):
                if c and (val[c] == 0 or (c & (a | b))):
                    continue
                if (a == b and a != 0) or (b == c and b != 0):
                    continue
                tot = val[a] + val[b] + val[c]
                if tot > best:
                    best = tot
                    out[0] = val[a]
                    out[1] = a
                    out[2] = val[b]
                    out[3] = b
                    out[4] = val[c]
                    out[5] = c
    return best


# ---- the best reading of a winning hand (高点法, docs/rules.md §9) -------------
@kernel_jit
def score_win(st, p, extra, out):
    """Best reading of p's winning hand (+ kind ``extra``); returns the pattern points.

    out (length WIN_W - 4 = 15): 3 x (points, meld mask), 4 x (meld type, kind), pair kind.
    Meld types in ``out``: layout MT_* (MT_CONCEALED_TRIPLET / _RUN for melds read from the hand).
    """
    cnt = st[SC_CNT:SC_CNT + NUM_KINDS]  # work space in the state row (layout SC_*): no allocation
    work = st[SC_WORK:SC_WORK + NUM_KINDS]
    mtype = st[SC_MTYPE:SC_MTYPE + 4]  # 0 run, 1 triplet
    mface = st[SC_MFACE:SC_MFACE + 4]
    mv = st[SC_MVAL:SC_MVAL + 4]
    mkan = st[SC_MKAN:SC_MKAN + 4]
    otype = st[SC_OTYPE:SC_OTYPE + 4]
    okind = st[SC_OKIND:SC_OKIND + 4]
    tmp = st[SC_TMP:SC_TMP + 6]
    val = st[SC_VAL:SC_VAL + 16]
    vs = st[SC_VS:SC_VS + 4]
    for k in range(NUM_KINDS):
        cnt[k] = st[HCNT + p * NUM_KINDS + k]
    if extra >= 0:
        cnt[extra] += 1
    nm = st[NMELD + p]
    for i in range(nm):
        t = st[MELDS + (p * 4 + i) * MELD_W + M_TYPE]
        k = st[MELDS + (p * 4 + i) * MELD_W + M_KIND]
        mtype[i] = 0 if t == MT_CHOW else 1
        mkan[i] = 1 if (t == MT_ANKAN or t == MT_MINKAN) else 0
        mface[i] = k // 9
        mv[i] = k % 9 + 1
        otype[i] = t
        okind[i] = k
    need = 4 - nm
    best = -1
    for pk in range(NUM_KINDS):
        if cnt[pk] < 2:
            continue
        for choice in range(1 << need):
            for k in range(NUM_KINDS):
                work[k] = cnt[k]
            work[pk] -= 2
            ok = True
            for d in range(need):
                k = 0
                while k < NUM_KINDS and work[k] == 0:
                    k += 1
                if k == NUM_KINDS:
                    ok = False
                    break
                i = nm + d
                mface[i] = k // 9
                mv[i] = k % 9 + 1
                mkan[i] = 0
                okind[i] = k
                if (choice >> d) & 1:
                    if k % 9 > 6 or work[k + 1] == 0 or work[k + 2] == 0:
                        ok = False
                        break
                    work[k] -= 1
                    work[k + 1] -= 1
                    work[k + 2] -= 1
                    mtype[i] = 0
                    otype[i] = MT_CONCEALED_RUN
                else:
                    if work[k] < 3:
                        ok = False
                        break
                    work[k] -= 3
                    mtype[i] = 1
                    otype[i] = MT_CONCEALED_TRIPLET
            if not ok:
                continue
            for k in range(NUM_KINDS):
                if work[k] != 0:
                    ok = False
            if not ok:
                continue
            tot = best_patterns(p, mtype, mface, mv, mkan, tmp, val, vs)
            if tot > best:
                best = tot
                for j in range(6):
                    out[j] = tmp[j]
                for i in range(4):
                    out[6 + 2 * i] = otype[i]
                    out[7 + 2 * i] = okind[i]
                out[14] = pk
    return best


# ---- the win's record and payments (docs/rules.md §9, §8) ---------------------
@kernel_jit
def record_win(st, rules):
    """Score the win of this turn (st[WIN_PENDING]) and settle its payments; the
    winner sits out the rest of the hand (§8)."""
    p = st[WIN_PENDING + WP_SEAT]
    frm = st[WIN_PENDING + WP_FROM]
    card = st[WIN_PENDING + WP_CARD]
    extra = st[WIN_PENDING + WP_EXTRA]
    h = st[HAND]
    w = WINS + (h * MAX_WINS + st[NWINS]) * WIN_W
    out = st[SC_OUT:SC_OUT + WIN_W - W_PATTERNS]
    pts = score_win(st, p, extra, out)
    base = pts if pts > 0 else 1
    st[w + W_SEAT] = p
    st[w + W_FROM] = frm
    st[w + W_CARD] = card
    st[w + W_BASE] = base
    for j in range(WIN_W - W_PATTERNS):
        st[w + W_PATTERNS + j] = out[j]
    gain = 3 * base
    d = DELTAS + h * 4
    st[d + p] += gain
    st[SCORES + p] += gain
    if rules[R_PAYMENT] == 0:
        if frm >= 0:
            st[d + frm] -= gain
            st[SCORES + frm] -= gain
        else:
            for q in range(4):
                if q != p:
                    st[d + q] -= base
                    st[SCORES + q] -= base
    st[NWINS] += 1
    st[RETIRED + p] = 1
