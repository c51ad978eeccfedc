"""The rules of 馬将 as numba functions over one game's int32 state row.

Each function does one rule step; ``st`` is one row of the layout in
``layout.py``, ``rules`` the array of ``RuleConfig.to_array()``, ``wt`` the
winning-shape table of ``tables.py``. No bounds are checked here: callers
(``game.py``, ``vector.py``) validate every action before it gets here.

Every function here is compiled by ``kernel_jit`` (cached) and allocates
nothing: the scoring search works in ``st[SCRATCH:]``.
"""
import numpy as np
from numba import njit

from ..rules import (R_HANDS, R_CHOW_OFF, R_EXCHANGE, R_DISCARD_DRAWN, R_KUIKAE,
                     R_FURITEN, R_REQ_YAKU, R_WINS_TO_CLOSE, R_PAYMENT, R_AUTO_FORCED,
                     GROUP)
from .layout import (HAND, START, PHASE, CUR, SLOT, NWINS, EXCH, TOOK, PICK_KIND, DRAWN, NLEGAL, LEGAL, WIN_PENDING,
                     HNDEC, SCORES, DELTAS, SQUARES, SQPOS, HMASK, HCNT, KEYS, NCOL, NHAND, SIDE,
                     NSIDE, MELDS, NMELD, RIVER, RSLOT, RFLAG, NRIVER, RKIND, LAST, RETIRED,
                     WINS, WIN_W, DECLOG, MAX_DEC, MELD_W, SCRATCH, MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN,
                     PH_EXCHANGE, PH_TAKE, PH_DISCARD, PH_OVER)

POW5 = np.array([5 ** j for j in range(9)], np.int32)
U64 = np.uint64

kernel_jit = njit(cache=True)


# ---- random numbers (splitmix64) ------------------------------------------
@kernel_jit
def mix64(x):
    x = x + U64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


@kernel_jit
def rand_below(rng, i, n):
    """Uniform int in [0, n) from the splitmix64 stream rng[i]."""
    rng[i] = rng[i] + U64(0x9E3779B97F4A7C15)
    z = rng[i]
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    z = z ^ (z >> U64(31))
    return np.int64(((z >> U64(32)) * U64(n)) >> U64(32))


@kernel_jit
def deal_squares(st, seed):
    """Shuffle the 144 cards for every hand from the game seed (Fisher-Yates in place)."""
    for h in range(4):
        sq = SQUARES + h * 144
        r = mix64(seed ^ mix64(U64(h + 1)))  # a splitmix64 stream, as in rand_below
        for i in range(144):
            st[sq + i] = i
        for i in range(143, 0, -1):
            z = mix64(r)
            r = r + U64(0x9E3779B97F4A7C15)
            j = np.int64(((z >> U64(32)) * U64(i + 1)) >> U64(32))
            t = st[sq + i]
            st[sq + i] = st[sq + j]
            st[sq + j] = t


# ---- cards in hands --------------------------------------------------------
@kernel_jit
def add_card(st, p, card):
    k = card >> 2
    st[HMASK + p * 36 + k] |= 1 << (card & 3)
    st[HCNT + p * 36 + k] += 1
    st[KEYS + p * 4 + k // 9] += POW5[k % 9]
    st[NCOL + p * 4 + k // 9] += 1
    st[NHAND + p] += 1


@kernel_jit
def remove_lowest(st, p, k):
    m = st[HMASK + p * 36 + k]
    c = 0
    while not (m >> c) & 1:
        c += 1
    st[HMASK + p * 36 + k] = m & ~(1 << c)
    st[HCNT + p * 36 + k] -= 1
    st[KEYS + p * 4 + k // 9] -= POW5[k % 9]
    st[NCOL + p * 4 + k // 9] -= 1
    st[NHAND + p] -= 1
    return k * 4 + c


@kernel_jit
def take_from_square(st, p):
    h = st[HAND]
    pos = st[SQPOS + p]
    st[SQPOS + p] = pos + 1
    return st[SQUARES + h * 144 + p * 36 + pos]


# ---- hand set-up -----------------------------------------------------------
@kernel_jit
def start_hand(st, rules, h):
    st[HAND] = h
    st[START] = h % 4
    st[NWINS] = 0
    st[EXCH] = 0
    st[TOOK] = 0
    st[PICK_KIND] = -1
    st[DRAWN] = -1
    for i in range(SQPOS, WINS):
        st[i] = 0
    for p in range(4):
        st[LAST + p] = -1
    ncards = 17 if rules[R_EXCHANGE] else 13
    for p in range(4):
        for _ in range(ncards):
            add_card(st, p, take_from_square(st, p))
    st[SLOT] = 0
    st[CUR] = st[START]
    st[PHASE] = PH_EXCHANGE if rules[R_EXCHANGE] else PH_TAKE


@kernel_jit
def new_game(st, rules):
    """Start hand 0 of a game whose squares are already in st[SQUARES]."""
    for i in range(SCORES, SQUARES):
        st[i] = 0
    for i in range(WINS, DECLOG):
        st[i] = 0
    start_hand(st, rules, 0)


# ---- claimable discards and win checks --------------------------------------
@kernel_jit
def claimable(st, p, q):
    """Kind of q's discard that p may use now, or -1 (RULES.md §5)."""
    n = st[NRIVER + q]
    if n == 0:
        return -1
    if st[RSLOT + q * 18 + n - 1] <= st[LAST + p]:
        return -1
    return st[RIVER + q * 18 + n - 1] >> 2


# Colour residues (count mod 3 per face colour) as a base-3 code -> the colour
# that must hold the pair, or -1 when no 1 頭 + 門 split is possible (14 cards:
# exactly one colour is 2 mod 3, the others 0 mod 3).
POW3 = np.array([1, 3, 9, 27], np.int32)
PAIR_COLOUR = np.full(81, -1, np.int32)
for _c in range(4):
    PAIR_COLOUR[2 * POW3[_c]] = _c


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


# ---- scoring (RULES.md §9) --------------------------------------------------
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


@kernel_jit
def score_win(st, p, extra, out):
    """Best reading of p's winning hand (+ kind ``extra``); returns the pattern points.

    out (length WIN_W - 4 = 15): 3 x (points, meld mask), 4 x (meld type, kind), pair kind.
    Meld types in ``out``: 1..4 as layout MT_*, 5 = concealed triplet, 6 = concealed run.
    """
    w = SCRATCH  # work space in the state row: no allocation
    cnt = st[w:w + 36]
    work = st[w + 36:w + 72]
    mtype = st[w + 72:w + 76]  # 0 run, 1 triplet
    mface = st[w + 76:w + 80]
    mv = st[w + 80:w + 84]
    mkan = st[w + 84:w + 88]
    otype = st[w + 88:w + 92]
    okind = st[w + 92:w + 96]
    tmp = st[w + 96:w + 102]
    val = st[w + 102:w + 118]
    vs = st[w + 118:w + 122]
    for k in range(36):
        cnt[k] = st[HCNT + p * 36 + k]
    if extra >= 0:
        cnt[extra] += 1
    nm = st[NMELD + p]
    for i in range(nm):
        t = st[MELDS + (p * 4 + i) * MELD_W]
        k = st[MELDS + (p * 4 + i) * MELD_W + 1]
        mtype[i] = 0 if t == MT_CHOW else 1
        mkan[i] = 1 if (t == MT_ANKAN or t == MT_MINKAN) else 0
        mface[i] = k // 9
        mv[i] = k % 9 + 1
        otype[i] = t
        okind[i] = k
    need = 4 - nm
    best = -1
    for pk in range(36):
        if cnt[pk] < 2:
            continue
        for choice in range(1 << need):
            for k in range(36):
                work[k] = cnt[k]
            work[pk] -= 2
            ok = True
            for d in range(need):
                k = 0
                while k < 36 and work[k] == 0:
                    k += 1
                if k == 36:
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
                    otype[i] = 6
                else:
                    if work[k] < 3:
                        ok = False
                        break
                    work[k] -= 3
                    mtype[i] = 1
                    otype[i] = 5
            if not ok:
                continue
            for k in range(36):
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


@kernel_jit
def record_win(st, rules):
    """Score the win of this turn (st[WIN_PENDING]) and settle its payments."""
    p = st[WIN_PENDING]
    frm = st[WIN_PENDING + 1]
    card = st[WIN_PENDING + 2]
    extra = st[WIN_PENDING + 3]
    h = st[HAND]
    w = WINS + (h * 3 + st[NWINS]) * WIN_W
    out = st[SCRATCH + 122:SCRATCH + 137]
    pts = score_win(st, p, extra, out)
    base = pts if pts > 0 else 1
    st[w] = p
    st[w + 1] = frm
    st[w + 2] = card
    st[w + 3] = base
    for j in range(15):
        st[w + 4 + j] = out[j]
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


@kernel_jit
def drop_patternless_wins(st, rules, n):
    """require_yaku: remove the 模 / 栄 actions whose best reading scores no pattern."""
    p = st[CUR]
    out = st[SCRATCH + 122:SCRATCH + 137]
    j = 0
    for i in range(n):
        a = st[LEGAL + i]
        keep = True
        if a == 108:  # 模
            extra = -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2
            keep = score_win(st, p, extra, out) > 0
        elif 117 <= a <= 119:  # 栄
            q = (p + a - 116) & 3
            keep = score_win(st, p, st[RIVER + q * 18 + st[NRIVER + q] - 1] >> 2, out) > 0
        if keep:
            st[LEGAL + j] = a
            j += 1
    st[NLEGAL] = j
    return j


# ---- legal actions -----------------------------------------------------------
@kernel_jit
def discard_options_exist(st, p, banned):
    """After a pick-up: is there any 打 (not of kind ``banned``), 暗 or 明?"""
    for k in range(36):
        c = st[HCNT + p * 36 + k]
        if c > 0 and k != banned:
            return True
        if c == 4:
            return True
    for i in range(st[NMELD + p]):
        if st[MELDS + (p * 4 + i) * MELD_W] == MT_PUNG and st[HCNT + p * 36 + st[MELDS + (p * 4 + i) * MELD_W + 1]] > 0:
            return True
    return False


@kernel_jit
def pick_ok(st, rules, p, k, k1, k2):
    """kuikae=False: picking up kind k with hand kinds k1, k2 must leave a discard option."""
    if rules[R_KUIKAE]:
        return True
    st[HCNT + p * 36 + k1] -= 1
    st[HCNT + p * 36 + k2] -= 1
    ok = discard_options_exist(st, p, k)
    st[HCNT + p * 36 + k1] += 1
    st[HCNT + p * 36 + k2] += 1
    return ok


@kernel_jit
def legal_shapes(st, rules, wt):
    """Write the legal actions of the player to act as the ascending list
    st[LEGAL:LEGAL + n] (``write_mask`` turns it into the action mask); return n.
    模 and 栄 are listed by the winning shape alone (``legal`` adds require_yaku).
    Each entry is written unconditionally and kept by advancing n, which keeps
    the loops branch-light."""
    ph = st[PHASE]
    p = st[CUR]
    n = 0
    if ph == PH_OVER:
        st[NLEGAL] = 0
        return 0
    hc = HCNT + p * 36
    if ph == PH_EXCHANGE:
        for k in range(36):
            ok = st[hc + k] > 0
            st[LEGAL + n] = 120 + k
            n += ok
        st[NLEGAL] = n
        return n
    last_lap = st[SLOT] >= 72
    if ph == PH_TAKE:
        st[LEGAL] = 110
        n = 1
        ck = rules[R_CHOW_OFF]
        kinds = (claimable(st, p, (p + 1) & 3), claimable(st, p, (p + 2) & 3),
                 claimable(st, p, (p + 3) & 3))
        if not last_lap:
            for d in range(1, 4):  # 刻 111-113
                k = kinds[d - 1]
                if k >= 0 and st[hc + k] >= 2 and pick_ok(st, rules, p, k, k, k):
                    st[LEGAL + n] = 110 + d
                    n += 1
            k = kinds[ck - 1]  # 順 114-116: the discard is the low / middle / high card
            if k >= 0:
                num = k % 9
                if num <= 6 and st[hc + k + 1] > 0 and st[hc + k + 2] > 0 and pick_ok(st, rules, p, k, k + 1, k + 2):
                    st[LEGAL + n] = 114
                    n += 1
                if 1 <= num <= 7 and st[hc + k - 1] > 0 and st[hc + k + 1] > 0 and pick_ok(st, rules, p, k, k - 1, k + 1):
                    st[LEGAL + n] = 115
                    n += 1
                if num >= 2 and st[hc + k - 2] > 0 and st[hc + k - 1] > 0 and pick_ok(st, rules, p, k, k - 2, k - 1):
                    st[LEGAL + n] = 116
                    n += 1
        for d in range(1, 4):  # 栄 117-119
            k = kinds[d - 1]
            if k >= 0 and not (rules[R_FURITEN] and st[RKIND + p * 36 + k] > 0) and is_win(st, wt, p, k):
                st[LEGAL + n] = 116 + d
                n += 1
        st[NLEGAL] = n
        return n
    # discard phase
    tsumo = st[TOOK] == 1 and is_win(st, wt, p, -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2)
    if not last_lap:
        banned = st[PICK_KIND] if (st[TOOK] == 2 and not rules[R_KUIKAE]) else -1
        kan4 = False
        for k in range(36):  # 打
            c = st[hc + k]
            ok = c > 0 and k != banned
            st[LEGAL + n] = k
            n += ok
            kan4 |= c == 4
        if kan4:
            for k in range(36):  # 暗
                if st[hc + k] == 4:
                    st[LEGAL + n] = 36 + k
                    n += 1
        m = MELDS + p * 4 * MELD_W
        mk = 0  # 明: bits of the pung kinds with a fourth card in hand
        for i in range(st[NMELD + p]):
            if st[m + i * MELD_W] == MT_PUNG and st[hc + st[m + i * MELD_W + 1]] > 0:
                mk |= 1 << st[m + i * MELD_W + 1]
        k = 0
        while mk:
            if mk & 1:
                st[LEGAL + n] = 72 + k
                n += 1
            mk >>= 1
            k += 1
    if tsumo:
        st[LEGAL + n] = 108
        n += 1
    if last_lap:
        st[LEGAL + n] = 109
        n += 1
    st[NLEGAL] = n
    return n


# ---- applying actions --------------------------------------------------------
@kernel_jit
def to_river(st, p, card, kan):
    n = st[NRIVER + p]
    st[RIVER + p * 18 + n] = card
    st[RSLOT + p * 18 + n] = st[SLOT]
    st[RFLAG + p * 18 + n] = 256 if kan else 0
    st[NRIVER + p] = n + 1
    st[RKIND + p * 36 + (card >> 2)] += 1


@kernel_jit
def add_meld(st, p, t, k, c0, c1, c2, claimed, kan):
    m = MELDS + (p * 4 + st[NMELD + p]) * MELD_W
    st[m] = t
    st[m + 1] = k
    st[m + 2] = c0
    st[m + 3] = c1
    st[m + 4] = c2
    st[m + 5] = claimed
    st[m + 6] = kan
    st[NMELD + p] += 1


@kernel_jit
def end_hand(st, rules):
    h = st[HAND] + 1
    if h >= rules[R_HANDS]:
        st[PHASE] = PH_OVER
        st[CUR] = -1
        st[HAND] = h
        return
    start_hand(st, rules, h)


@kernel_jit
def end_turn(st, rules):
    p = st[CUR]
    if st[DRAWN] >= 0 and not rules[R_DISCARD_DRAWN]:
        add_card(st, p, st[DRAWN])
    st[DRAWN] = -1
    st[TOOK] = 0
    st[PICK_KIND] = -1
    st[LAST + p] = st[SLOT]
    s = st[SLOT] + 1
    while s < 76 and st[RETIRED + (st[START] + s) % 4]:
        s += 1
    if s >= 76 or st[NWINS] >= rules[R_WINS_TO_CLOSE]:
        end_hand(st, rules)
        return
    st[SLOT] = s
    st[CUR] = (st[START] + s) % 4
    st[PHASE] = PH_TAKE


@kernel_jit
def apply(st, rules, action):
    """Apply a legal action of the player to act (no checks). Returns True for 栄 /
    模: the win is left in st[WIN_PENDING] and ``play`` scores it and ends the
    turn. Keeping the scoring search out makes this function call no separately
    compiled code, so numba compiles it with no reference counting at all."""
    p = st[CUR]
    h = st[HAND]
    nd = st[HNDEC + h]
    if nd < MAX_DEC:
        o = DECLOG + (h * MAX_DEC + nd) * 2
        st[o] = p
        st[o + 1] = action
    st[HNDEC + h] = nd + 1
    if action >= 120:  # 変
        c = remove_lowest(st, p, action - 120)
        st[SIDE + p * 4 + st[NSIDE + p]] = c
        st[NSIDE + p] += 1
        e = st[EXCH] + 1
        st[EXCH] = e
        if e == 16:
            st[PHASE] = PH_TAKE
            st[CUR] = st[START]
        elif e % 4 == 0:
            st[CUR] = (p + 1) % 4
        return False
    if action == 110:  # 引
        c = take_from_square(st, p)
        st[DRAWN] = c
        st[TOOK] = 1
        if rules[R_DISCARD_DRAWN]:
            add_card(st, p, c)
        st[PHASE] = PH_DISCARD
        return False
    if action > 110:  # take from a river
        if action < 114:
            q = (p + action - 110) % 4
        elif action < 117:
            q = (p + rules[R_CHOW_OFF]) % 4
        else:
            q = (p + action - 116) % 4
        ri = q * 18 + st[NRIVER + q] - 1
        card = st[RIVER + ri]
        k = card >> 2
        if action >= 117:  # 栄
            st[RFLAG + ri] |= 16 << p
            st[WIN_PENDING] = p
            st[WIN_PENDING + 1] = q
            st[WIN_PENDING + 2] = card
            st[WIN_PENDING + 3] = k
            return True
        st[RFLAG + ri] |= 1 << p
        if action < 114:
            c0 = remove_lowest(st, p, k)
            c1 = remove_lowest(st, p, k)
            add_meld(st, p, MT_PUNG, k, c0, c1, take_from_square(st, p), card, -1)
        else:
            low = k - (action - 114)
            c0 = remove_lowest(st, p, low if low != k else low + 1)  # the two run kinds
            c1 = remove_lowest(st, p, low + 2 if low + 2 != k else low + 1)  # other than k
            add_meld(st, p, MT_CHOW, low, c0, c1, take_from_square(st, p), card, -1)
        st[TOOK] = 2
        st[PICK_KIND] = k
        st[PHASE] = PH_DISCARD
        return False
    # discard phase
    if action < 36:  # 打
        to_river(st, p, remove_lowest(st, p, action), False)
    elif action < 72:  # 暗
        k = action - 36
        c0 = remove_lowest(st, p, k)
        c1 = remove_lowest(st, p, k)
        c2 = remove_lowest(st, p, k)
        c3 = remove_lowest(st, p, k)
        add_meld(st, p, MT_ANKAN, k, c1, c2, c3, -1, c0)
        to_river(st, p, c0, True)
    elif action < 108:  # 明
        k = action - 72
        c = remove_lowest(st, p, k)
        for i in range(st[NMELD + p]):
            m = MELDS + (p * 4 + i) * MELD_W
            if st[m] == MT_PUNG and st[m + 1] == k:
                st[m] = MT_MINKAN
                st[m + 6] = c
        to_river(st, p, c, True)
    elif action == 108:  # 模
        st[WIN_PENDING] = p
        st[WIN_PENDING + 1] = -1
        st[WIN_PENDING + 2] = st[DRAWN]
        st[WIN_PENDING + 3] = -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2
        return True
    end_turn(st, rules)
    return False


# ---- one decision: the entry points of the Python faces and batch loops --------
# These few lines are inlined into each caller (numba IR level), so a decision
# calls only ``apply`` and ``legal_shapes``, which use no reference counting;
# the rare win scoring and require_yaku search are called only when needed.
@kernel_jit
def legal(st, rules, wt):
    """Legal actions of the player to act, as the list st[LEGAL:]; returns the count."""
    n = legal_shapes(st, rules, wt)
    if rules[R_REQ_YAKU] and n > 1:
        last = st[LEGAL + n - 1]  # wins sort last: 模 108 (then pass 109), 栄 117-119
        if 117 <= last <= 119 or last == 108 or (last == 109 and st[LEGAL + n - 2] == 108):
            n = drop_patternless_wins(st, rules, n)
    return n


@kernel_jit
def play(st, rules, action):
    """Apply ``action`` of the player to act, scoring a win and ending the turn."""
    if apply(st, rules, action):
        record_win(st, rules)
        end_turn(st, rules)


@kernel_jit
def settle(st, rules, wt):
    """Compute the legal actions now, applying forced actions when auto_forced."""
    n = legal(st, rules, wt)
    if rules[R_AUTO_FORCED]:
        while n == 1:
            play(st, rules, st[LEGAL])
            n = legal(st, rules, wt)
    return n


@kernel_jit
def advance(st, rules, wt, action):
    """Apply ``action``, then (when auto_forced) every forced action; return the legal count."""
    play(st, rules, action)
    return settle(st, rules, wt)


@kernel_jit
def write_mask(st, mask):
    """The action mask (int8[156]) of the legal list st[LEGAL:LEGAL + st[NLEGAL]]."""
    for a in range(156):
        mask[a] = 0
    for i in range(st[NLEGAL]):
        mask[st[LEGAL + i]] = 1
