"""The greedy baseline policy, compiled: one implementation for ``selfplay`` and ``majiang_env.agents.GreedyAgent``.

The policy decides from what the acting seat may see: its observation vector
(``observe.py``, exactly ``Game.observe(seat)``), the legal mask, and a
splitmix64 stream ``rng`` (``cards.rand_below``) for ties. It never reads the
game state, so it cannot use hidden information.

**Deficiency** (shanten-like) of a hand with n shown melds: the fewest cards
missing for 1 頭 + (4 - n) 門 from its concealed cards (melds: triplets or runs
of one face colour, no wrap; no seven pairs). A target may use a kind at most
4 times; cards of the hand may go unused. 0 means a winning shape.
``tables.deficiency_table()`` holds it per colour (base-5 key of the colour's 9
counts, column m * 2 + p: m melds and p pairs; bits 0-3 the deficiency, bits
4-12 which numbers would lower it); :func:`deficiency` combines the 4 colours
(the cheapest split of the melds and the pair between them). A decision looks
up the 4 rows of its hand once and then only the one changed colour per
option; so does an option's acceptance (:func:`_option_acceptance`): the
other colours' part of it depends only on which of their columns the best
split uses, computed once per hand (:func:`_other_colours_mask`).

**Unseen** copies of a kind: 4 minus the copies the observer sees: own hand,
own drawn card, side cards (own, and others' when public), every river card,
shown meld cards (刻 and 明: the 2 shown hand cards, the kan card of 明 lies in
a river; 順: the two run kinds other than the claimed discard's; 暗: 3 cards).
Stand-ins are never seen. **Acceptance** of a hand: the number of unseen
cards whose addition would lower its deficiency.

**The hand an option leaves.** H = own concealed hand (observation), d = the
drawn card (if any). Whatever ``discard_drawn`` says, a discard-phase option
that gives up kind y leaves H + d - y (by default d joins the hand after the
discard; the mask already forbids discarding it then, and the observation
shows it only in the drawn channel under either rule, see ``observe.py``).
暗 of k leaves H + d - 4 k with one more meld; 明 of k leaves H + d - k (the
same as 打 k).

**Policy**, for the acting seat:

1. a single legal action is returned as it is;
2. 栄 (117-119) or 模 (108) whenever legal (seeded choice among several 栄);
3. 変 (120-155): set aside the kind that leaves the lowest deficiency;
4. discard phase (打, 暗, 明): the option whose left hand has the lowest
   deficiency;
5. take phase: 引 keeps deficiency D = deficiency(H). A pick-up (刻 111-113,
   順 114-116) is worth the lowest deficiency after showing its two cards and
   making its best discard-phase option (打 of any kind, 暗; with
   ``kuikae=False`` the picked-up kind k goes only by a 明, i.e. after a 刻 of
   k or with an older 刻 of k). A pick-up is chosen only when that
   is strictly lower than D (a pick-up is then a sure step, a draw only a
   chance of one); otherwise 引.

Ties in 3-5 are broken by the acceptance of the left hand (for a pick-up: of
its best discard), then by a uniform seeded choice among the remaining
actions in id order, which draws one number from ``rng`` only when more than
one remains. 栄 / 模 ties draw likewise. The rule fields the observation does
not carry are parameters: ``chow_off`` (1 next seat, 3 previous: whose claim
a 順 uses) and ``kuikae``.

``work`` is a caller-owned int64[W_SIZE] scratch buffer: no allocation per
decision.
"""
import numpy as np

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
)
from .cards import rand_below
from .jit import kernel_jit
from .layout import MT_PUNG
from .observe import OBS_CLAIM, OBS_DRAWN, OBS_HAND, OBS_MELD, OBS_RIVER, OBS_SIDE

P5 = np.array([5 ** j for j in range(9)], np.int64)
KEY_SIZE = 5 ** 9
INF = 99

# work buffer layout (int64): each part's length in its comment, offsets cumulative
W_CNT = 0                       # NUM_KINDS counts of H + d
W_UNSEEN = W_CNT + NUM_KINDS    # NUM_KINDS unseen copies per kind
W_KEYS = W_UNSEEN + NUM_KINDS   # 4 colour keys of the base hand
W_ROWS = W_KEYS + 4             # 80: 4 x 10 deficiencies, then 4 x 10 improving-number bits, of the base hand
W_O1 = W_ROWS + 80              # 4 x 10: the other three colours combined, per colour
W_TMP = W_O1 + 40               # 2 x 10 scratch
W_KEYS2 = W_TMP + 20            # 4 keys of a candidate hand
W_ROWS2 = W_KEYS2 + 4           # 80, as W_ROWS
W_O12 = W_ROWS2 + 80            # 4 x 10
W_VAL = W_O12 + 40              # NUM_ACTIONS: deficiency per action
W_ACC = W_VAL + NUM_ACTIONS     # NUM_ACTIONS: acceptance per action
W_TIE = W_ACC + NUM_ACTIONS     # NUM_ACTIONS: tie flags
W_Q = W_TIE + NUM_ACTIONS       # 4 x 4 x 10: w[W_Q + (c * 4 + c2) * 10] = colours other than c, c2 combined
W_IB = W_Q + 160                # 4 x 10: per colour c and column of W_O1[c], its improving kinds, or -1
W_SIZE = W_IB + 40



def new_work():
    return np.zeros(W_SIZE, np.int64)


@kernel_jit
def _comb(w, a, b, out):
    """w[out] = cheapest split of (m, p) between the 10-vectors w[a] and w[b]."""
    for i in range(10):
        w[out + i] = INF
    for m1 in range(5):
        for p1 in range(2):
            x = w[a + m1 * 2 + p1]
            if x >= INF:
                continue
            for m2 in range(5 - m1):
                for p2 in range(2 - p1):
                    v = x + w[b + m2 * 2 + p2]
                    o = out + (m1 + m2) * 2 + p1 + p2
                    if v < w[o]:
                        w[o] = v


@kernel_jit
def _prepare(dt, w, keys, rows, o1):
    """Table rows of the 4 colour keys at w[keys] (deficiency at w[rows], improving
    bits at w[rows + 40]); w[o1 + 10 c] = the other colours than c combined."""
    for c in range(4):
        k = w[keys + c]
        for i in range(10):
            v = dt[k, i]
            w[rows + c * 10 + i] = v & 15
            w[rows + 40 + c * 10 + i] = v >> 4
    _comb(w, rows, rows + 10, W_TMP)             # colours 0 + 1
    _comb(w, rows + 20, rows + 30, W_TMP + 10)   # colours 2 + 3
    _comb(w, rows + 10, W_TMP + 10, o1)
    _comb(w, rows, W_TMP + 10, o1 + 10)
    _comb(w, W_TMP, rows + 30, o1 + 20)
    _comb(w, W_TMP, rows + 20, o1 + 30)


@kernel_jit
def _prepare_pairs(w, rows):
    """w[W_Q + (c * 4 + c2) * 10] = the two colours other than c and c2 combined; the
    masks of :func:`_other_colours_mask`, which read them, are reset (w[W_IB] = -1)."""
    for i in range(40):
        w[W_IB + i] = -1
    for c in range(4):
        for c2 in range(c + 1, 4):
            x = -1
            for o in range(4):
                if o != c and o != c2:
                    if x < 0:
                        x = o
                    else:
                        _comb(w, rows + x * 10, rows + o * 10, W_Q + (c * 4 + c2) * 10)
                        for i in range(10):
                            w[W_Q + (c2 * 4 + c) * 10 + i] = w[W_Q + (c * 4 + c2) * 10 + i]


@kernel_jit
def _def_with(dt, w, o1, c, key, need):
    """Deficiency when colour c has ``key`` and the others are as in w[o1]."""
    best = INF
    for m in range(need + 1):
        for p in range(2):
            v = (dt[key, m * 2 + p] & 15) + w[o1 + c * 10 + (need - m) * 2 + 1 - p]
            if v < best:
                best = v
    return best


@kernel_jit
def _unseen_of(w, c, bits):
    """Unseen cards of colour c's numbers set in ``bits``."""
    s = 0
    for j in range(9):
        if (bits >> j) & 1:
            u = w[W_UNSEEN + c * 9 + j]
            if u > 0:
                s += u
    return s


@kernel_jit
def _acceptance(w, rows, o1, need, dcur):
    """Unseen cards whose addition lowers the deficiency ``dcur`` of the hand whose rows
    are prepared at w[rows], w[o1]. One more card of colour c lowers the hand's
    deficiency exactly when it lowers colour c's deficiency in a column that attains
    ``dcur`` (a card lowers any column by at most 1): the table's improving bits."""
    s = 0
    for c in range(4):
        bits = 0
        for m in range(need + 1):
            for p in range(2):
                i = c * 10 + m * 2 + p
                if w[rows + i] + w[o1 + c * 10 + (need - m) * 2 + 1 - p] == dcur:
                    bits |= w[rows + 40 + i]
        s += _unseen_of(w, c, bits)
    return s


@kernel_jit
def _other_colours_mask(w, rows, o1, c, col):
    """The kinds of the colours other than c whose addition lowers column ``col``
    (m * 2 + p) of w[o1 + 10 c], the base hand's other colours combined (hand
    prepared at w[rows], pairs at W_Q): bit c2 * 9 + j for number j of colour
    c2. As in :func:`_acceptance`: the improving bits of each colour c2 in the
    splits that attain it. Computed once per base hand (w[W_IB], -1 until then)."""
    at = W_IB + c * 10 + col
    if w[at] < 0:
        t = w[o1 + c * 10 + col]
        n, q = col // 2, col % 2
        bits = 0
        for c2 in range(4):
            if c2 == c:
                continue
            pair = W_Q + (c * 4 + c2) * 10
            for m in range(n + 1):
                for p in range(q + 1):
                    i = c2 * 10 + m * 2 + p
                    if w[rows + i] + w[pair + (n - m) * 2 + q - p] == t:
                        bits |= w[rows + 40 + i] << (c2 * 9)
        w[at] = bits
    return w[at]


@kernel_jit
def _option_acceptance(dt, w, rows, o1, c, key, need, v):
    """Acceptance of the base hand prepared at w[rows], w[o1] (pairs at W_Q,
    :func:`_prepare_pairs`) with colour c's key set to ``key``; v is that hand's
    deficiency. A card lowers it exactly when, in a split (colour c's column,
    the others' column) that attains v, it lowers colour c's column (the
    table's bits) or the others' column (:func:`_other_colours_mask`, which
    does not depend on ``key``): one look-up per option."""
    own = 0
    other = 0
    for m in range(need + 1):
        for p in range(2):
            x = dt[key, m * 2 + p]
            col = (need - m) * 2 + 1 - p
            if (x & 15) + w[o1 + c * 10 + col] == v:
                own |= x >> 4
                other |= _other_colours_mask(w, rows, o1, c, col)
    s = _unseen_of(w, c, own)
    for c2 in range(4):
        if c2 != c:
            s += _unseen_of(w, c2, (other >> (c2 * 9)) & 511)
    return s


@kernel_jit
def _full(dt, w, keys, rows, o1, need):
    """Deficiency of the hand at w[keys] (prepares w[rows], w[o1])."""
    _prepare(dt, w, keys, rows, o1)
    best = INF
    for m in range(need + 1):
        for p in range(2):
            v = w[rows + m * 2 + p] + w[o1 + (need - m) * 2 + 1 - p]
            if v < best:
                best = v
    return best


@kernel_jit
def deficiency(counts, n_melds, dt, w):
    """Deficiency of a concealed hand (NUM_KINDS counts, each 0-4) with ``n_melds`` shown melds."""
    for c in range(4):
        k = 0
        for j in range(9):
            k += counts[c * 9 + j] * P5[j]
        w[W_KEYS2 + c] = k
    return _full(dt, w, W_KEYS2, W_ROWS2, W_O12, 4 - n_melds)


@kernel_jit
def read_obs(obs, w):
    """Fill w[W_CNT] (H + d), w[W_UNSEEN], w[W_KEYS]; return the own meld count."""
    for k in range(NUM_KINDS):
        c = obs[OBS_HAND + k] + obs[OBS_DRAWN + k]
        c = 0 if c < 0 else (4 if c > 4 else c)
        w[W_CNT + k] = c
        w[W_UNSEEN + k] = 4 - c
    for r in range(4):
        for k in range(NUM_KINDS):
            w[W_UNSEEN + k] -= obs[OBS_SIDE + r * NUM_KINDS + k]
        for i in range(18):
            v = obs[OBS_RIVER + r * 18 + i]
            if v > 0:
                w[W_UNSEEN + v - 1] -= 1
    nm = 0
    for r in range(4):
        for i in range(4):
            o = OBS_MELD + (r * 4 + i) * 3
            t = obs[o]
            k = obs[o + 1] - 1
            if t <= 0 or k < 0 or k >= NUM_KINDS:
                continue
            if r == 0:
                nm += 1
            if t == 1 or t == 4:
                w[W_UNSEEN + k] -= 2
            elif t == 3:
                w[W_UNSEEN + k] -= 3
            elif t == 2:
                claimed = obs[o + 2] - 1
                for kk in range(k, min(k + 3, NUM_KINDS)):
                    if kk != claimed:
                        w[W_UNSEEN + kk] -= 1
    for c in range(4):
        key = 0
        for j in range(9):
            key += w[W_CNT + c * 9 + j] * P5[j]
        w[W_KEYS + c] = key
    return min(nm, 4)


@kernel_jit
def _set_keys(w, dst, src):
    for c in range(4):
        w[dst + c] = w[src + c]


@kernel_jit
def _mark_best(w, mask, lo, hi, val):
    """Tie flags over actions lo..hi-1 with mask set and the lowest w[val + a]; return count."""
    best = INF
    for a in range(lo, hi):
        if mask[a] and w[val + a] < best:
            best = w[val + a]
    n = 0
    for a in range(lo, hi):
        f = 1 if (mask[a] and w[val + a] == best) else 0
        w[W_TIE + a] = f
        n += f
    return n


@kernel_jit
def _keep_most_accepted(w, lo, hi):
    """Among flagged actions keep those with the highest w[W_ACC + a]; return count."""
    best = -1
    for a in range(lo, hi):
        if w[W_TIE + a] and w[W_ACC + a] > best:
            best = w[W_ACC + a]
    n = 0
    for a in range(lo, hi):
        if w[W_TIE + a]:
            if w[W_ACC + a] == best:
                n += 1
            else:
                w[W_TIE + a] = 0
    return n


@kernel_jit
def _remove(w, keys, k, times):
    w[keys + k // 9] -= times * P5[k % 9]


@kernel_jit
def _option(a):
    """(kind given up, copies, melds added) of a 変 / 打 / 暗 / 明 action."""
    if a >= A_EXCHANGE:
        return a - A_EXCHANGE, 1, 0
    if a < A_ANKAN:
        return a - A_DISCARD, 1, 0
    if a < A_MINKAN:
        return a - A_ANKAN, 4, 1
    return a - A_MINKAN, 1, 0


@kernel_jit
def _hand_options(dt, w, mask, lo, hi, need, valued):
    """変 or discard phase: tie set over actions lo..hi-1; return its size. ``valued``:
    w[W_VAL], w[W_ACC] already hold every option's values (``option_values``)."""
    if not valued:
        _prepare(dt, w, W_KEYS, W_ROWS, W_O1)
    for a in range(lo, hi):
        if not mask[a]:
            continue
        if a == A_PASS:  # pass: only when 模 was declined, a forced choice
            w[W_VAL + a] = INF - 1
            continue
        if not valued:
            k, times, dm = _option(a)
            c = k // 9
            w[W_VAL + a] = _def_with(dt, w, W_O1, c, w[W_KEYS + c] - times * P5[k % 9], need - dm)
    n = _mark_best(w, mask, lo, hi, W_VAL)
    if n > 1:
        if not valued:
            _prepare_pairs(w, W_ROWS)
            for a in range(lo, hi):
                if w[W_TIE + a]:
                    k, times, dm = _option(a)
                    c = k // 9
                    w[W_ACC + a] = _option_acceptance(dt, w, W_ROWS, W_O1, c, w[W_KEYS + c] - times * P5[k % 9],
                                                      need - dm, w[W_VAL + a])
        n = _keep_most_accepted(w, lo, hi)
    return n


@kernel_jit
def _pickup_shown(obs, a, chow_off):
    """(claimed kind, shown kind 1, shown kind 2) of pick-up action a, or (-1, ...)."""
    if a < A_CHOW:
        k = obs[OBS_CLAIM + a - A_PUNG + 1] - 1
        return k, k, k
    k = obs[OBS_CLAIM + chow_off] - 1
    low = k - (a - A_CHOW)
    if k < 0 or low < 0 or low // 9 != k // 9 or low % 9 > 6:
        return -1, -1, -1
    if a == A_CHOW:
        return k, low + 1, low + 2
    if a == A_CHOW + 1:
        return k, low, low + 2
    return k, low, low + 1


@kernel_jit
def _pickup_value(dt, w, k, need, k_ok, want_acc):
    """Best discard-phase option after a pick-up whose hand keys are at w[W_KEYS2]:
    returns (lowest deficiency, highest acceptance among the options reaching it)."""
    _prepare(dt, w, W_KEYS2, W_ROWS2, W_O12)
    best = INF
    for pass_ in range(2 if want_acc else 1):
        if pass_ == 1:
            _prepare_pairs(w, W_ROWS2)
        acc = -1
        for y in range(NUM_KINDS):
            c = y // 9
            cnt = (w[W_KEYS2 + c] // P5[y % 9]) % 5
            if cnt == 0:
                continue
            for kan in range(2):
                if kan == 0 and not k_ok and y == k:
                    continue
                if kan == 1 and cnt < 4:
                    continue
                key = w[W_KEYS2 + c] - (4 if kan else 1) * P5[y % 9]
                v = _def_with(dt, w, W_O12, c, key, need - kan)
                if pass_ == 0:
                    if v < best:
                        best = v
                elif v == best:
                    u = _option_acceptance(dt, w, W_ROWS2, W_O12, c, key, need - kan, best)
                    if u > acc:
                        acc = u
        if pass_ == 1:
            return best, acc
    return best, -1


@kernel_jit
def _k_ok(obs, a, k, kuikae):
    """May the turn's discard-phase option give up the picked-up kind k? Always with
    kuikae; else only by 明: after a 刻 (a < A_CHOW) or with an own older 刻 of k."""
    if kuikae or a < A_CHOW:
        return True
    for i in range(4):
        if obs[OBS_MELD + i * 3] == MT_PUNG and obs[OBS_MELD + i * 3 + 1] == k + 1:
            return True
    return False


@kernel_jit
def _take_options(dt, w, mask, obs, need, chow_off, kuikae, valued):
    """Take phase: tie set among pick-ups that beat 引, else 引 alone. ``valued``: as
    in :func:`_hand_options`."""
    d_draw = _full(dt, w, W_KEYS, W_ROWS, W_O1, need)
    for a in range(A_PUNG, A_RON):
        w[W_TIE + a] = 0
        if not mask[a] or valued:
            continue
        k, s1, s2 = _pickup_shown(obs, a, chow_off)
        if k < 0 or s1 < 0:
            w[W_VAL + a] = INF
            continue
        _set_keys(w, W_KEYS2, W_KEYS)
        _remove(w, W_KEYS2, s1, 1)
        _remove(w, W_KEYS2, s2, 1)
        v, _ = _pickup_value(dt, w, k, need - 1, _k_ok(obs, a, k, kuikae), False)
        w[W_VAL + a] = v
    n = _mark_best(w, mask, A_PUNG, A_RON, W_VAL)
    best = INF
    for a in range(A_PUNG, A_RON):
        if w[W_TIE + a]:
            best = w[W_VAL + a]
    if n == 0 or best >= d_draw:
        for a in range(A_PUNG, A_RON):
            w[W_TIE + a] = 0
        w[W_TIE + A_DRAW] = 1
        return 1
    w[W_TIE + A_DRAW] = 0
    if n > 1:
        if not valued:
            for a in range(A_PUNG, A_RON):
                if w[W_TIE + a]:
                    k, s1, s2 = _pickup_shown(obs, a, chow_off)
                    _set_keys(w, W_KEYS2, W_KEYS)
                    _remove(w, W_KEYS2, s1, 1)
                    _remove(w, W_KEYS2, s2, 1)
                    _, acc = _pickup_value(dt, w, k, need - 1, _k_ok(obs, a, k, kuikae), True)
                    w[W_ACC + a] = acc
        n = _keep_most_accepted(w, A_PUNG, A_RON)
    return n


@kernel_jit
def _candidates(obs, mask, dt, chow_off, kuikae, w, valued):
    for a in range(NUM_ACTIONS):
        w[W_TIE + a] = 0
    nlegal = 0
    last = -1
    for a in range(NUM_ACTIONS):
        if mask[a]:
            nlegal += 1
            last = a
    if nlegal <= 1:
        if last >= 0:
            w[W_TIE + last] = 1
        return nlegal
    nwin = 0
    for a in (A_TSUMO, A_RON, A_RON + 1, A_RON + 2):
        if mask[a]:
            w[W_TIE + a] = 1
            nwin += 1
    if nwin:
        return nwin
    nm = read_obs(obs, w)
    need = 4 - nm
    if mask[A_DRAW]:
        return _take_options(dt, w, mask, obs, need, chow_off, kuikae, valued)
    for a in range(A_EXCHANGE, NUM_ACTIONS):
        if mask[a]:
            return _hand_options(dt, w, mask, A_EXCHANGE, NUM_ACTIONS, need, valued)
    return _hand_options(dt, w, mask, A_DISCARD, A_DRAW, need, valued)  # the discard phase's ids


@kernel_jit
def greedy_candidates(obs, mask, dt, chow_off, kuikae, w):
    """Mark the greedy policy's final tie set in w[W_TIE:W_TIE + 156]; return its size."""
    return _candidates(obs, mask, dt, chow_off, kuikae, w, False)


@kernel_jit
def candidates_from_values(obs, mask, dt, chow_off, kuikae, w):
    """``greedy_candidates`` right after ``option_values(obs, mask, ...)`` on the same
    ``w``: the same tie set, from the values and acceptances that call left (it
    knows the acceptance of every legal option of finite deficiency; a tie among
    options of deficiency INF, which no legal position has, would read 0 there).
    ``tests/engine/test_greedy.py`` compares the two tie sets."""
    return _candidates(obs, mask, dt, chow_off, kuikae, w, True)


@kernel_jit
def greedy_action(obs, mask, rng, dt, chow_off, kuikae, w):
    """The greedy policy's action (see the module docstring); -1 if the mask is empty."""
    n = greedy_candidates(obs, mask, dt, chow_off, kuikae, w)
    if n <= 0:
        return -1
    j = rand_below(rng, 0, n) if n > 1 else 0
    for a in range(NUM_ACTIONS):
        if w[W_TIE + a]:
            if j == 0:
                return a
            j -= 1
    return -1


@kernel_jit
def hand_value(obs, dt, w):
    """(melds still needed, deficiency of the hand now, its acceptance) of the
    observer's H + d; leaves the hand prepared in w (W_KEYS, W_ROWS, W_O1)."""
    need = 4 - read_obs(obs, w)
    dnow = _full(dt, w, W_KEYS, W_ROWS, W_O1, need)
    return need, dnow, _acceptance(w, W_ROWS, W_O1, need, dnow)


@kernel_jit
def option_values(obs, mask, dt, chow_off, kuikae, w):
    """The quantities the greedy policy decides by, for every legal option (the
    feature encoding's per-action block reads them).

    Returns (deficiency of the hand now, its acceptance); the hand is H + d (the
    own concealed hand and the drawn card), as in the module docstring. Fills
    w[W_VAL + a] with the deficiency a legal option a leaves (変 / 打 / 暗 / 明:
    of the hand it leaves; a pick-up: after its best discard-phase option) and
    w[W_ACC + a] with that hand's acceptance; INF and 0 for every other id."""
    for a in range(NUM_ACTIONS):
        w[W_VAL + a] = INF
        w[W_ACC + a] = 0
    need, dnow, acc = hand_value(obs, dt, w)
    if mask[A_DRAW]:
        for a in range(A_PUNG, A_RON):
            if not mask[a]:
                continue
            k, s1, s2 = _pickup_shown(obs, a, chow_off)
            if k < 0 or s1 < 0:
                continue
            _set_keys(w, W_KEYS2, W_KEYS)
            _remove(w, W_KEYS2, s1, 1)
            _remove(w, W_KEYS2, s2, 1)
            v, u = _pickup_value(dt, w, k, need - 1, _k_ok(obs, a, k, kuikae), True)
            w[W_VAL + a] = v
            w[W_ACC + a] = u
        return dnow, acc
    _prepare_pairs(w, W_ROWS)
    for a in range(NUM_ACTIONS):
        if not mask[a] or (A_TSUMO <= a < A_EXCHANGE):
            continue
        k, times, dm = _option(a)
        c = k // 9
        key = w[W_KEYS + c] - times * P5[k % 9]
        v = _def_with(dt, w, W_O1, c, key, need - dm)
        w[W_VAL + a] = v
        if v < INF:
            w[W_ACC + a] = _option_acceptance(dt, w, W_ROWS, W_O1, c, key, need - dm, v)
    return dnow, acc
