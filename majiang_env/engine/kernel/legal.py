"""Legal actions: which discards may be claimed (docs/rules.md §5) and the legal
list of each phase (変 §3, take §4.1, discard §4.2, the last lap §6), with the
rule options kuikae, furiten and require_yaku (§10).

``legal`` writes the legal action ids of the seat to act, ascending, to
``st[LEGAL:LEGAL + n]``; ``write_mask`` turns that list into the action mask.
One function per action family: ``legal_exchange`` (変), ``legal_pungs`` (刻),
``legal_chows`` (順), ``legal_rons`` (栄), ``legal_discards`` (打),
``legal_ankans`` (暗), ``legal_minkans`` (明); 模 and pass are in
``legal_discard_phase``.
"""
from ..rules import (
    A_ANKAN,
    A_CHOW,
    A_DISCARD,
    A_DRAW,
    A_EXCHANGE,
    A_MINKAN,
    A_PASS,
    A_PUNG,
    A_RON,
    A_TSUMO,
    NUM_ACTIONS,
    NUM_KINDS,
    R_CHOW_OFF,
    R_DISCARD_DRAWN,
    R_FURITEN,
    R_KUIKAE,
    R_REQ_YAKU,
)
from .jit import kernel_jit, rule_jit
from .layout import (
    CUR,
    DRAWN,
    HCNT,
    LAST,
    LAST_LAP_SLOT,
    LEGAL,
    M_KIND,
    M_TYPE,
    MELD_W,
    MELDS,
    MT_PUNG,
    NLEGAL,
    NMELD,
    NRIVER,
    PH_EXCHANGE,
    PH_OVER,
    PH_TAKE,
    PHASE,
    PICK_KIND,
    RIVER,
    RIVER_LEN,
    RKIND,
    RSLOT,
    SC_OUT,
    SLOT,
    TOOK,
    TOOK_DRAW,
    TOOK_PICKUP,
    W_PATTERNS,
    WIN_W,
)
from .scoring import is_win, score_win


# ---- claimable discards (docs/rules.md §5) -------------------------------------
@rule_jit
def claimable(st, p, q):
    """Kind of q's discard that p may use now, or -1 (docs/rules.md §5)."""
    n = st[NRIVER + q]
    if n == 0:
        return -1
    if st[RSLOT + q * RIVER_LEN + n - 1] <= st[LAST + p]:
        return -1
    return st[RIVER + q * RIVER_LEN + n - 1] >> 2


# ---- kuikae = False (docs/rules.md §4.2) ----------------------------------------
@kernel_jit
def discard_options_exist(st, p, banned):
    """After a pick-up: is there any 打 (not of kind ``banned``), 暗 or 明?"""
    for k in range(NUM_KINDS):
        c = st[HCNT + p * NUM_KINDS + k]
        if c > 0 and k != banned:
            return True
        if c == 4:
            return True
    for i in range(st[NMELD + p]):
        m = MELDS + (p * 4 + i) * MELD_W
        if st[m + M_TYPE] == MT_PUNG and st[HCNT + p * NUM_KINDS + st[m + M_KIND]] > 0:
            return True
    return False


@rule_jit
def pick_ok(st, rules, p, k, k1, k2):
    """kuikae=False: picking up kind k with hand kinds k1, k2 must leave a discard option."""
    if rules[R_KUIKAE]:
        return True
    st[HCNT + p * NUM_KINDS + k1] -= 1
    st[HCNT + p * NUM_KINDS + k2] -= 1
    ok = discard_options_exist(st, p, k)
    st[HCNT + p * NUM_KINDS + k1] += 1
    st[HCNT + p * NUM_KINDS + k2] += 1
    return ok


# ---- 変 (docs/rules.md §3) --------------------------------------------------------
@rule_jit
def legal_exchange(st, p, n):
    """変 (docs/rules.md §3): set aside any kind held; list from LEGAL + n, return the new n."""
    hc = HCNT + p * NUM_KINDS
    for k in range(NUM_KINDS):
        ok = st[hc + k] > 0
        st[LEGAL + n] = A_EXCHANGE + k
        n += ok
    return n


# ---- the take phase (docs/rules.md §4.1, §5, §6, §7) -------------------------------
@rule_jit
def legal_pungs(st, rules, p, kinds, n):
    """刻 (docs/rules.md §4.1, §5): a claimable discard of kind k with two more k in hand."""
    hc = HCNT + p * NUM_KINDS
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
    hc = HCNT + p * NUM_KINDS
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
        if k >= 0 and not (rules[R_FURITEN] and st[RKIND + p * NUM_KINDS + k] > 0) and is_win(st, wt, p, k):
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


# ---- the discard phase (docs/rules.md §4.2, §6) -------------------------------------
@rule_jit
def legal_discards(st, rules, p, n):
    """打 (docs/rules.md §4.2): any kind held, except the kind just picked up when kuikae is off."""
    hc = HCNT + p * NUM_KINDS
    banned = st[PICK_KIND] if (st[TOOK] == TOOK_PICKUP and not rules[R_KUIKAE]) else -1
    quad = False
    for k in range(NUM_KINDS):
        c = st[hc + k]
        ok = c > 0 and k != banned
        st[LEGAL + n] = A_DISCARD + k
        n += ok
        quad |= c == 4
    return n, quad


@rule_jit
def legal_ankans(st, p, n):
    """暗 (docs/rules.md §4.2): four of a kind in the concealed hand."""
    hc = HCNT + p * NUM_KINDS
    for k in range(NUM_KINDS):
        if st[hc + k] == 4:
            st[LEGAL + n] = A_ANKAN + k
            n += 1
    return n


@rule_jit
def legal_minkans(st, p, n):
    """明 (docs/rules.md §4.2): the fourth card of one of the own 刻 melds in hand."""
    hc = HCNT + p * NUM_KINDS
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


# ---- the legal list of a decision ---------------------------------------------------
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


@kernel_jit
def drop_patternless_wins(st, rules, n):
    """require_yaku (docs/rules.md §7): remove the 模 / 栄 actions whose best reading
    scores no pattern."""
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


@rule_jit
def legal(st, rules, wt):
    """Legal actions of the player to act, as the list st[LEGAL:]; returns the count.
    Inlined into its one caller, ``step.settle``: as a call, its caller passed the three
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
def write_mask(st, mask):
    """The action mask (int8[156]) of the legal list st[LEGAL:LEGAL + st[NLEGAL]]."""
    for a in range(NUM_ACTIONS):
        mask[a] = 0
    for i in range(st[NLEGAL]):
        mask[st[LEGAL + i]] = 1
