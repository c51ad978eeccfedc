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
                     GROUP, NUM_ACTIONS, A_DISCARD, A_ANKAN, A_MINKAN, A_TSUMO, A_PASS, A_DRAW,
                     A_PUNG, A_CHOW, A_RON, A_EXCHANGE)
from .layout import (HAND, START, PHASE, CUR, SLOT, NWINS, EXCH, CLOSED, TOOK, PICK_KIND, DRAWN,
                     NLEGAL, LEGAL, WIN_PENDING, HNDEC, SCORES, DELTAS, SQUARES, SQPOS, HMASK, HCNT,
                     KEYS, NCOL, NHAND, SIDE, NSIDE, MELDS, NMELD, RIVER, RSLOT, RFLAG, NRIVER, RKIND,
                     LAST, RETIRED, WINS, WIN_W, DECLOG, MAX_DEC, MELD_W, RIVER_LEN, NUM_EXCHANGE,
                     NUM_SLOTS, LAST_LAP_SLOT, GAME_RESET, HAND_RESET, TURN_RESET,
                     M_TYPE, M_KIND, M_CARD0, M_CARD1, M_STANDIN, M_CLAIMED, M_KAN,
                     MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN, MT_CONCEALED_TRIPLET, MT_CONCEALED_RUN,
                     W_SEAT, W_FROM, W_CARD, W_BASE, W_PATTERNS, MAX_WINS, RF_PICKED, RF_WON, RF_KAN,
                     SC_CNT, SC_WORK, SC_MTYPE, SC_MFACE, SC_MVAL, SC_MKAN, SC_OTYPE, SC_OKIND,
                     SC_TMP, SC_VAL, SC_VS, SC_OUT, TOOK_DRAW, TOOK_PICKUP,
                     PH_EXCHANGE, PH_TAKE, PH_DISCARD, PH_OVER)

POW5 = np.array([5 ** j for j in range(9)], np.int32)
U64 = np.uint64

# Kernel functions allocate nothing, so they are compiled without numba's
# reference counting (``_nrt=False``): with it, numba updates the count of every
# array it got from Python, with an atomic instruction, around each of the small
# functions a decision runs through -- about half of a decision's time on one
# thread (docs/performance.md, "Before and after"). An allocation in such a
# function fails to compile ("NRT required"); the few functions that allocate
# (``players.new_workspace``, the parallel loops) use plain ``njit``.
kernel_jit = njit(cache=True, _nrt=False)
# The small rule functions a decision runs through are inlined into their callers
# by LLVM (``forceinline``), so splitting the rules into one function each costs
# no calls. Not for a function that holds an agent: numba compiles each function
# called from compiled code on its own and then optimizes it again inside each
# caller, so forcing a big body into its callers multiplies the compile time
# (the wrappers of ``learner.py``'s step took minutes each, docs/performance.md
# "Cold start"); they are plain calls, once per slot and step.
rule_jit = njit(cache=True, forceinline=True, _nrt=False)


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
@rule_jit
def add_card(st, p, card):
    k = card >> 2
    st[HMASK + p * 36 + k] |= 1 << (card & 3)
    st[HCNT + p * 36 + k] += 1
    st[KEYS + p * 4 + k // 9] += POW5[k % 9]
    st[NCOL + p * 4 + k // 9] += 1
    st[NHAND + p] += 1


@rule_jit
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


@rule_jit
def take_from_square(st, p):
    h = st[HAND]
    pos = st[SQPOS + p]
    st[SQPOS + p] = pos + 1
    return st[SQUARES + h * 144 + p * 36 + pos]


# ---- hand set-up (the resets are generated from the lifetimes in layout.py) ------
@rule_jit
def reset_fields(st, table):
    """Set every field of ``table`` (rows of offset, length, value) to its initial value."""
    for f in range(table.shape[0]):
        v = table[f, 2]
        for i in range(table[f, 0], table[f, 0] + table[f, 1]):
            st[i] = v


@kernel_jit
def start_hand(st, rules, h):
    """Reset the hand's fields, deal 13 cards (17 with 変) to each seat from its square."""
    reset_fields(st, HAND_RESET)
    st[HAND] = h
    st[START] = h % 4
    ncards = 17 if rules[R_EXCHANGE] else 13
    for p in range(4):
        for _ in range(ncards):
            add_card(st, p, take_from_square(st, p))
    st[CUR] = st[START]
    st[PHASE] = PH_EXCHANGE if rules[R_EXCHANGE] else PH_TAKE


@kernel_jit
def new_game(st, rules):
    """Start hand 0 of a game whose squares are already in st[SQUARES]."""
    reset_fields(st, GAME_RESET)
    start_hand(st, rules, 0)


# ---- claimable discards and win checks --------------------------------------
@rule_jit
def claimable(st, p, q):
    """Kind of q's discard that p may use now, or -1 (docs/rules.md §5)."""
    n = st[NRIVER + q]
    if n == 0:
        return -1
    if st[RSLOT + q * RIVER_LEN + n - 1] <= st[LAST + p]:
        return -1
    return st[RIVER + q * RIVER_LEN + n - 1] >> 2


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


# ---- scoring (docs/rules.md §9) ---------------------------------------------
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
    Meld types in ``out``: layout MT_* (MT_CONCEALED_TRIPLET / _RUN for melds read from the hand).
    """
    cnt = st[SC_CNT:SC_CNT + 36]  # work space in the state row (layout SC_*): no allocation
    work = st[SC_WORK:SC_WORK + 36]
    mtype = st[SC_MTYPE:SC_MTYPE + 4]  # 0 run, 1 triplet
    mface = st[SC_MFACE:SC_MFACE + 4]
    mv = st[SC_MVAL:SC_MVAL + 4]
    mkan = st[SC_MKAN:SC_MKAN + 4]
    otype = st[SC_OTYPE:SC_OTYPE + 4]
    okind = st[SC_OKIND:SC_OKIND + 4]
    tmp = st[SC_TMP:SC_TMP + 6]
    val = st[SC_VAL:SC_VAL + 16]
    vs = st[SC_VS:SC_VS + 4]
    for k in range(36):
        cnt[k] = st[HCNT + p * 36 + k]
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


@kernel_jit
def drop_patternless_wins(st, rules, n):
    """require_yaku: remove the 模 / 栄 actions whose best reading scores no pattern."""
    p = st[CUR]
    out = st[SC_OUT:SC_OUT + WIN_W - W_PATTERNS]
    j = 0
    for i in range(n):
        a = st[LEGAL + i]
        keep = True
        if a == A_TSUMO:
            extra = -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2
            keep = score_win(st, p, extra, out) > 0
        elif A_RON <= a < A_EXCHANGE:
            q = (p + a - A_RON + 1) & 3
            keep = score_win(st, p, st[RIVER + q * RIVER_LEN + st[NRIVER + q] - 1] >> 2, out) > 0
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
        m = MELDS + (p * 4 + i) * MELD_W
        if st[m + M_TYPE] == MT_PUNG and st[HCNT + p * 36 + st[m + M_KIND]] > 0:
            return True
    return False


@rule_jit
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


@rule_jit
def legal_exchange(st, p, n):
    """変 (docs/rules.md §3): set aside any kind held; list from LEGAL + n, return the new n."""
    hc = HCNT + p * 36
    for k in range(36):
        ok = st[hc + k] > 0
        st[LEGAL + n] = A_EXCHANGE + k
        n += ok
    return n


@rule_jit
def legal_pungs(st, rules, p, kinds, n):
    """刻 (docs/rules.md §4.1, §5): a claimable discard of kind k with two more k in hand."""
    hc = HCNT + p * 36
    for d in range(1, 4):
        k = kinds[d - 1]
        if k >= 0 and st[hc + k] >= 2 and pick_ok(st, rules, p, k, k, k):
            st[LEGAL + n] = A_PUNG + d - 1
            n += 1
    return n


@rule_jit
def legal_chows(st, rules, p, k, n):
    """順 (docs/rules.md §4.1, §5): the chow-source seat's claimable discard of kind k (or -1)
    completes a run of one colour as its low, middle or high card."""
    if k < 0:
        return n
    hc = HCNT + p * 36
    num = k % 9
    if num <= 6 and st[hc + k + 1] > 0 and st[hc + k + 2] > 0 and pick_ok(st, rules, p, k, k + 1, k + 2):
        st[LEGAL + n] = A_CHOW
        n += 1
    if 1 <= num <= 7 and st[hc + k - 1] > 0 and st[hc + k + 1] > 0 and pick_ok(st, rules, p, k, k - 1, k + 1):
        st[LEGAL + n] = A_CHOW + 1
        n += 1
    if num >= 2 and st[hc + k - 2] > 0 and st[hc + k - 1] > 0 and pick_ok(st, rules, p, k, k - 2, k - 1):
        st[LEGAL + n] = A_CHOW + 2
        n += 1
    return n


@rule_jit
def legal_rons(st, rules, wt, p, kinds, n):
    """栄 (docs/rules.md §7): a claimable discard that completes the winning shape
    (not a kind of the own river under furiten)."""
    for d in range(1, 4):
        k = kinds[d - 1]
        if k >= 0 and not (rules[R_FURITEN] and st[RKIND + p * 36 + k] > 0) and is_win(st, wt, p, k):
            st[LEGAL + n] = A_RON + d - 1
            n += 1
    return n


@rule_jit
def legal_take(st, rules, wt, p):
    """Take phase (docs/rules.md §4-§6): 引, then 刻 / 順 (not in the last lap), then 栄."""
    st[LEGAL] = A_DRAW
    n = 1
    kinds = (claimable(st, p, (p + 1) & 3), claimable(st, p, (p + 2) & 3),
             claimable(st, p, (p + 3) & 3))
    if st[SLOT] < LAST_LAP_SLOT:
        n = legal_pungs(st, rules, p, kinds, n)
        n = legal_chows(st, rules, p, kinds[rules[R_CHOW_OFF] - 1], n)
    return legal_rons(st, rules, wt, p, kinds, n)


@rule_jit
def legal_discards(st, rules, p, n):
    """打 (docs/rules.md §4.2): any kind held, except the kind just picked up when kuikae is off."""
    hc = HCNT + p * 36
    banned = st[PICK_KIND] if (st[TOOK] == TOOK_PICKUP and not rules[R_KUIKAE]) else -1
    quad = False
    for k in range(36):
        c = st[hc + k]
        ok = c > 0 and k != banned
        st[LEGAL + n] = A_DISCARD + k
        n += ok
        quad |= c == 4
    return n, quad


@rule_jit
def legal_ankans(st, p, n):
    """暗 (docs/rules.md §4.2): four of a kind in the concealed hand."""
    hc = HCNT + p * 36
    for k in range(36):
        if st[hc + k] == 4:
            st[LEGAL + n] = A_ANKAN + k
            n += 1
    return n


@rule_jit
def legal_minkans(st, p, n):
    """明 (docs/rules.md §4.2): the fourth card of one of the own 刻 melds in hand."""
    hc = HCNT + p * 36
    m = MELDS + p * 4 * MELD_W
    mk = 0  # bits of the pung kinds with a fourth card in hand, listed in kind order
    for i in range(st[NMELD + p]):
        k = st[m + i * MELD_W + M_KIND]
        if st[m + i * MELD_W + M_TYPE] == MT_PUNG and st[hc + k] > 0:
            mk |= 1 << k
    k = 0
    while mk:
        if mk & 1:
            st[LEGAL + n] = A_MINKAN + k
            n += 1
        mk >>= 1
        k += 1
    return n


@rule_jit
def legal_discard_phase(st, rules, wt, p):
    """Discard phase: 打, 暗, 明 (not in the last lap), 模 after a draw that wins,
    and pass in the last lap (docs/rules.md §4.2, §6)."""
    n = 0
    last_lap = st[SLOT] >= LAST_LAP_SLOT
    if not last_lap:
        n, quad = legal_discards(st, rules, p, n)
        if quad:
            n = legal_ankans(st, p, n)
        n = legal_minkans(st, p, n)
    if st[TOOK] == TOOK_DRAW and is_win(st, wt, p, -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2):
        st[LEGAL + n] = A_TSUMO
        n += 1
    if last_lap:
        st[LEGAL + n] = A_PASS
        n += 1
    return n


@kernel_jit
def legal_shapes(st, rules, wt):
    """Write the legal actions of the player to act as the ascending list
    st[LEGAL:LEGAL + n] (``write_mask`` turns it into the action mask); return n.
    模 and 栄 are listed by the winning shape alone (``legal`` adds require_yaku).
    Entries are written unconditionally and kept by advancing n, which keeps
    the loops branch-light."""
    ph = st[PHASE]
    p = st[CUR]
    if ph == PH_OVER:
        n = 0
    elif ph == PH_EXCHANGE:
        n = legal_exchange(st, p, 0)
    elif ph == PH_TAKE:
        n = legal_take(st, rules, wt, p)
    else:
        n = legal_discard_phase(st, rules, wt, p)
    st[NLEGAL] = n
    return n


# ---- applying actions --------------------------------------------------------
@rule_jit
def to_river(st, p, card, kan):
    n = st[NRIVER + p]
    st[RIVER + p * RIVER_LEN + n] = card
    st[RSLOT + p * RIVER_LEN + n] = st[SLOT]
    st[RFLAG + p * RIVER_LEN + n] = RF_KAN if kan else 0
    st[NRIVER + p] = n + 1
    st[RKIND + p * 36 + (card >> 2)] += 1


@rule_jit
def add_meld(st, p, t, k, c0, c1, c2, claimed, kan):
    m = MELDS + (p * 4 + st[NMELD + p]) * MELD_W
    st[m + M_TYPE] = t
    st[m + M_KIND] = k
    st[m + M_CARD0] = c0
    st[m + M_CARD1] = c1
    st[m + M_STANDIN] = c2
    st[m + M_CLAIMED] = claimed
    st[m + M_KAN] = kan
    st[NMELD + p] += 1


@kernel_jit
def end_hand(st, rules):
    """Close the hand (reported in st[CLOSED]); start the next one or end the game."""
    st[CLOSED] = st[HAND]
    h = st[HAND] + 1
    if h >= rules[R_HANDS]:
        st[PHASE] = PH_OVER
        st[CUR] = -1
        st[HAND] = h
        return
    start_hand(st, rules, h)


@rule_jit
def end_turn(st, rules):
    """The drawn card joins the hand; the next seat that has not won takes its
    turn, or the hand closes (docs/rules.md §6, §8: slots run out, or enough wins)."""
    p = st[CUR]
    if st[DRAWN] >= 0 and not rules[R_DISCARD_DRAWN]:
        add_card(st, p, st[DRAWN])
    reset_fields(st, TURN_RESET)
    st[LAST + p] = st[SLOT]
    s = st[SLOT] + 1
    while s < NUM_SLOTS and st[RETIRED + (st[START] + s) % 4]:
        s += 1
    if s >= NUM_SLOTS or st[NWINS] >= rules[R_WINS_TO_CLOSE]:
        end_hand(st, rules)
        return
    st[SLOT] = s
    st[CUR] = (st[START] + s) % 4
    st[PHASE] = PH_TAKE


@rule_jit
def log_decision(st, p, action):
    h = st[HAND]
    nd = st[HNDEC + h]
    if nd < MAX_DEC:
        o = DECLOG + (h * MAX_DEC + nd) * 2
        st[o] = p
        st[o + 1] = action
    st[HNDEC + h] = nd + 1


@rule_jit
def apply_exchange(st, p, k):
    """変: set aside one card of kind k; after 4 each, the next seat; after 16, the take phase."""
    c = remove_lowest(st, p, k)
    st[SIDE + p * 4 + st[NSIDE + p]] = c
    st[NSIDE + p] += 1
    e = st[EXCH] + 1
    st[EXCH] = e
    if e == NUM_EXCHANGE:
        st[PHASE] = PH_TAKE
        st[CUR] = st[START]
    elif e % 4 == 0:
        st[CUR] = (p + 1) % 4


@rule_jit
def apply_draw(st, rules, p):
    """引: take the next card of the own square as the drawn card."""
    c = take_from_square(st, p)
    st[DRAWN] = c
    st[TOOK] = TOOK_DRAW
    if rules[R_DISCARD_DRAWN]:
        add_card(st, p, c)
    st[PHASE] = PH_DISCARD


@rule_jit
def claimed_seat(rules, p, action):
    """The seat whose claimable discard a 刻 / 順 / 栄 action takes."""
    if action < A_CHOW:
        return (p + action - A_PUNG + 1) % 4
    if action < A_RON:
        return (p + rules[R_CHOW_OFF]) % 4
    return (p + action - A_RON + 1) % 4


@rule_jit
def apply_pickup(st, p, action, ri):
    """刻 / 順: show the claimed discard (river entry ri) with two hand cards and a
    stand-in from the own square (docs/rules.md §4.1)."""
    card = st[RIVER + ri]
    k = card >> 2
    st[RFLAG + ri] |= RF_PICKED << p
    if action < A_CHOW:
        c0 = remove_lowest(st, p, k)
        c1 = remove_lowest(st, p, k)
        add_meld(st, p, MT_PUNG, k, c0, c1, take_from_square(st, p), card, -1)
    else:
        low = k - (action - A_CHOW)
        c0 = remove_lowest(st, p, low if low != k else low + 1)  # the two run kinds
        c1 = remove_lowest(st, p, low + 2 if low + 2 != k else low + 1)  # other than k
        add_meld(st, p, MT_CHOW, low, c0, c1, take_from_square(st, p), card, -1)
    st[TOOK] = TOOK_PICKUP
    st[PICK_KIND] = k
    st[PHASE] = PH_DISCARD


@rule_jit
def set_win_pending(st, p, frm, card, extra):
    st[WIN_PENDING] = p
    st[WIN_PENDING + 1] = frm
    st[WIN_PENDING + 2] = card
    st[WIN_PENDING + 3] = extra


@rule_jit
def apply_ron(st, p, q, ri):
    """栄 on seat q's discard (river entry ri): marked, left pending for scoring."""
    card = st[RIVER + ri]
    st[RFLAG + ri] |= RF_WON << p
    set_win_pending(st, p, q, card, card >> 2)


@rule_jit
def apply_tsumo(st, rules, p):
    """模 on the drawn card: left pending for scoring."""
    set_win_pending(st, p, -1, st[DRAWN], -1 if rules[R_DISCARD_DRAWN] else st[DRAWN] >> 2)


@rule_jit
def apply_discard(st, p, k):
    """打: the lowest copy of kind k goes to the own river."""
    to_river(st, p, remove_lowest(st, p, k), False)


@rule_jit
def apply_ankan(st, p, k):
    """暗: the four k become a meld with three shown cards; the fourth is the kan
    card, placed in the own river (docs/rules.md §4.2)."""
    c0 = remove_lowest(st, p, k)
    c1 = remove_lowest(st, p, k)
    c2 = remove_lowest(st, p, k)
    c3 = remove_lowest(st, p, k)
    add_meld(st, p, MT_ANKAN, k, c1, c2, c3, -1, c0)
    to_river(st, p, c0, True)


@rule_jit
def apply_minkan(st, p, k):
    """明: the own 刻 of kind k becomes a kan; the card from hand is the kan card,
    placed in the own river (docs/rules.md §4.2)."""
    c = remove_lowest(st, p, k)
    for i in range(st[NMELD + p]):
        m = MELDS + (p * 4 + i) * MELD_W
        if st[m + M_TYPE] == MT_PUNG and st[m + M_KIND] == k:
            st[m + M_TYPE] = MT_MINKAN
            st[m + M_KAN] = c
    to_river(st, p, c, True)


@kernel_jit
def apply(st, rules, action):
    """Apply a legal action of the player to act (no checks). Returns True for 栄 /
    模: the win is left in st[WIN_PENDING] and ``play`` scores it and ends the
    turn. Keeping the scoring search out makes this function call no separately
    compiled code that needs reference counting."""
    p = st[CUR]
    log_decision(st, p, action)
    if action >= A_EXCHANGE:
        apply_exchange(st, p, action - A_EXCHANGE)
        return False
    if action == A_DRAW:
        apply_draw(st, rules, p)
        return False
    if action > A_DRAW:  # take from a river
        q = claimed_seat(rules, p, action)
        ri = q * RIVER_LEN + st[NRIVER + q] - 1
        if action >= A_RON:
            apply_ron(st, p, q, ri)
            return True
        apply_pickup(st, p, action, ri)
        return False
    if action == A_TSUMO:
        apply_tsumo(st, rules, p)
        return True
    if action < A_ANKAN:
        apply_discard(st, p, action - A_DISCARD)
    elif action < A_MINKAN:
        apply_ankan(st, p, action - A_ANKAN)
    elif action < A_TSUMO:
        apply_minkan(st, p, action - A_MINKAN)
    end_turn(st, rules)  # 打 / 暗 / 明 / pass
    return False


# ---- one decision: the entry points of the Python faces and batch loops --------
# A decision runs ``apply`` and ``legal_shapes`` (with their rule functions
# inlined, ``rule_jit``), which use no reference counting; the rare win scoring
# and require_yaku search are called only when needed.
@rule_jit
def legal(st, rules, wt):
    """Legal actions of the player to act, as the list st[LEGAL:]; returns the count.
    Inlined into its one caller, ``settle``: as a call, its caller passed the three
    arrays on the stack and it read them back in wider loads than were stored,
    which waited for the decision's stores to drain (7% of a ``SeatVectorEnv``
    step in a profile)."""
    n = legal_shapes(st, rules, wt)
    if rules[R_REQ_YAKU] and n > 1:
        last = st[LEGAL + n - 1]  # wins sort last: 模 (then pass), 栄
        if A_RON <= last < A_EXCHANGE or last == A_TSUMO or (last == A_PASS and st[LEGAL + n - 2] == A_TSUMO):
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
    while True:
        n = legal(st, rules, wt)
        if n != 1 or not rules[R_AUTO_FORCED]:
            return n
        play(st, rules, st[LEGAL])


@kernel_jit
def advance(st, rules, wt, action):
    """Apply ``action``, then (when auto_forced) every forced action; return the legal
    count. st[CLOSED] tells which hand closed during the call (-1: none)."""
    st[CLOSED] = -1
    play(st, rules, action)
    return settle(st, rules, wt)


@kernel_jit
def step(st, rules, wt, action, mask):
    """``Game.step``'s kernel call: ``advance`` with ``action``, then write the new
    action mask; returns the legal count."""
    n = advance(st, rules, wt, action)
    write_mask(st, mask)
    return n


@kernel_jit
def write_mask(st, mask):
    """The action mask (int8[156]) of the legal list st[LEGAL:LEGAL + st[NLEGAL]]."""
    for a in range(NUM_ACTIONS):
        mask[a] = 0
    for i in range(st[NLEGAL]):
        mask[st[LEGAL + i]] = 1
