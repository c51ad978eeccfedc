"""The search agent: determinized rollouts (perfect-information Monte Carlo), in the kernel.

At a decision of seat p (``row[CUR]``) with more than one legal action:

1. **Determinize.** The cards p cannot see (docs/rules.md §11), the *unseen
   pool*, are shuffled with a stream drawn from ``rng`` and dealt into the
   *hidden places* (other seats' hands and hidden side cards, stand-ins, the
   untaken rest of the current hand's squares), each keeping its size:
   ``worlds.determinize``, the same function ``Game.sample_hidden`` builds on
   (``worlds.py`` lists the pool and the places). Both are functions of what
   p sees, so the sampled state (and hence the decision) is the same whatever
   the true hidden cards are: permuting them leaves it unchanged for the same
   ``rng`` (``tests/engine/test_search.py``).

   **Opponent model.** A uniform deal gives the other seats random hands,
   much further from winning than the hands greedy players hold after some
   turns, so rollouts under-rate the opponents. With ``P_OPPONENTS =
   OPP_GREEDY`` (the default) each other seat's sampled hand is then improved
   by greedy draw-and-discard steps that swap cards with the other hidden
   places (:func:`improve_opponents`): still a placement of exactly the
   unseen cards into the same hidden places, computed from the
   determinization alone, so everything above still holds.
   ``OPP_UNIFORM`` keeps the uniform deal (plain determinization); it
   measured within noise of the greedy model, 0.5-3 points per hand below it
   (see **Strength**).
2. **Roll out.** On every determinization each candidate action (step 3) is
   played in a copy, then every seat plays the greedy policy (``greedy.py``, from its own
   observation of the copy) until the current hand closes. The copy's rules
   end the game with the current hand (``hands_per_game`` cut to it), so the
   rollout never deals a later hand from the real squares, and apply forced
   actions at once (``auto_forced``). The same determinizations and the same
   rollout stream serve every action (common random numbers).
3. **Choose.** The greedy policy's own action g (from p's observation) is the
   default. Every other candidate i is compared with it on the same
   determinizations: d_s = (p's points with i) - (p's points with g) in
   sample s; i replaces g only when the lower confidence bound
   ``mean(d) - z * sd(d) / sqrt(samples)`` is above 0, and the candidate with
   the highest bound wins (ties: more rollouts won by p, then the lowest id).
   Rollouts are noisy (p's point change over the rest of a hand varies by
   tens of points between samples, against differences of a few points
   between sensible actions), so the plain best mean mostly follows noise and
   plays worse than greedy (research/bench_search.py); the bound makes the
   search leave the greedy action only on clear evidence.

   **Candidates** (``P_WIDTH`` = w >= 0): in the 変 and discard phases the
   options whose greedy deficiency (``greedy.option_values``) is at most the
   best option's + w, and every win; in the take phase every legal action.
   w < 0: every legal action. Fewer candidates cost fewer rollouts and fewer
   chances to follow noise.

What it never reads: the real row's hidden places (opponents' hands, others'
side cards unless public, stand-ins, squares), the decision log, or any later
hand's squares. It reads the real row only for what p sees (``row`` copied,
then every hidden place overwritten before a rollout starts).

**Parameters** (``params``, float64[``players.NUM_PARAMS``]):

=================  ==============================================================
``P_SAMPLES``      determinizations per decision; <= 0: ``DEFAULT_SAMPLES``
``P_BUDGET``       cap on rollout decisions per decision (all actions, all
                   samples): after each round of one determinization x every
                   action, the search stops once it has played this many;
                   0: ``DEFAULT_BUDGET``, < 0: no cap. At least one round runs.
``P_SEARCH_WINS``  1: 栄 / 模 are searched like any action; 0 (default): a legal
                   win is taken at once (the greedy policy's choice among wins)
``P_CONFIDENCE``   z of the lower confidence bound (step 3); <= 0:
                   ``DEFAULT_CONFIDENCE``
``P_WIDTH``        candidate width w (step 3); stored as w + 1, so 0 (the
                   zero vector) means ``DEFAULT_WIDTH``; < 0 stored: every
                   legal action
``P_OPPONENTS``    ``OPP_UNIFORM`` (1) or ``OPP_GREEDY`` (2): the opponent
                   model of step 1; 0: ``DEFAULT_OPPONENTS`` (``OPP_GREEDY``)
=================  ==============================================================

The budget is counted in rollout decisions, not seconds: numba's nopython
mode has no clock, a ctypes clock would stop the kernel's on-disk cache, and a
decision that depended on the machine's load could not be reproduced. One
rollout decision costs about what one greedy decision does (~5 us on one core
of the development machine), so a budget of B costs about B x 5 us; see
``research/bench_search.py`` for measured times.

**Strength** (``python research/bench_search.py --deals 128 --threads 2
--config default ...``: one search seat against three greedy seats vs a greedy
seat in the same seat of the same deals, 4 rotations, default rules, 95% t
interval over deals): the default gains +1.4 +- 3.2 points per hand over
greedy (128 deals; 9.6 ms per searched decision on a loaded 2-core machine),
``opponents="uniform"`` +0.8 +- 3.5, 8 samples / budget 2,000 -1.9 +- 3.5
(3.2 ms), 32 samples / budget 16,000 +0.3 +- 3.5 (16.6 ms), and the plain
best mean over every legal action with uniform deals (``confidence=0,
width=None, opponents="uniform"``) -47 +- 4 (64 deals; it wins 8% of its
hands instead of 50%: in uniform deals the opponents look slow, so it
presumably plays for big hands and loses the race). In a development experiment (z = 1, every legal action, 16
samples, 32 deals; not part of the package) the same search with the true
hidden cards in place of samples gained +118 +- 5 per hand, with the true
opponents' hands but sampled squares +15 +- 5, with the true squares but
the opponents' hands shuffled among them +57 +- 6: most of what it could
gain lies in the cards no sampler can know.

**Cost.** (samples) x (candidates) rollouts, each to the end of the hand:
most at the 変 and early turns, least near the end; capped by the budget.
Decisions with one legal action, one candidate, or (by default) a legal win,
return at once, without a rollout.

**Randomness.** The search draws one number from ``rng`` per searched decision
(after the greedy policy's root call, which draws only to break its ties); every
determinization and rollout stream is derived from it, and ``rng`` is left
where that one draw put it, so the agent's stream advances independently of
the searching itself. Same seed, same decisions.

**Scratch.** ``rows[0]`` holds the current determinization, ``rows[1]`` the
rollout, ``rows[2]`` the search's own int32 buffers (``X_*``: the rollout
rules, the pool, wins and candidate flags per legal action), ``rows[3]`` seen
as float64 the paired sums (``F_*``) and as int64 the opponent model's buffers
(``I_*``, after the sums); ``obs``, ``mask``, ``work`` serve the greedy
policy. Nothing is allocated per decision.
"""
import numpy as np

from ..rules import (
    A_EXCHANGE,
    A_RON,
    A_TSUMO,
    NUM_CARDS,
    NUM_KINDS,
    R_AUTO_FORCED,
    R_CHOW_OFF,
    R_HANDS,
    R_KUIKAE,
    R_SIDE_PUBLIC,
    R_SIZE,
    SQUARE_SIZE,
)
from .cards import POW5, U64, add_card, mix64, rand_below
from .greedy import INF, W_VAL, deficiency, greedy_action, option_values
from .jit import kernel_jit
from .layout import (
    CUR,
    DECLOG,
    DELTAS,
    HAND,
    HCNT,
    HMASK,
    KEYS,
    LEGAL,
    M_STANDIN,
    M_TYPE,
    MAX_LEGAL,
    MELD_W,
    MELDS,
    MT_ANKAN,
    NCOL,
    NHAND,
    NLEGAL,
    NMELD,
    NSIDE,
    PH_TAKE,
    PHASE,
    RETIRED,
    SIDE,
    SIZE,
    SQPOS,
    SQUARES,
)
from .legal import write_mask
from .observe import observe
from .step import advance
from .worlds import determinize

# ---- parameters (indices into params) ----------------------------------------
P_SAMPLES = 0
P_BUDGET = 1
P_SEARCH_WINS = 2
P_CONFIDENCE = 3
P_WIDTH = 4
P_OPPONENTS = 5
OPP_UNIFORM, OPP_GREEDY = 1, 2
DEFAULT_SAMPLES = 16
DEFAULT_BUDGET = 8000
DEFAULT_CONFIDENCE = 2.5
DEFAULT_WIDTH = 0
DEFAULT_OPPONENTS = OPP_GREEDY

# ---- scratch: rows[X_ROW] ------------------------------------------------------
ROW_BASE, ROW_SIM, X_ROW = 0, 1, 2
X_RULES = 0                  # R_SIZE: the rollout's rules
X_POOL = 16                  # NUM_CARDS: seen flags, then the unseen pool
X_WINS = X_POOL + NUM_CARDS  # MAX_LEGAL: rollouts won per legal action
X_CAND = X_WINS + MAX_LEGAL  # MAX_LEGAL: 1 for the candidates
X_END = X_CAND + MAX_LEGAL
F_ROW = 3                    # rows[F_ROW] seen as float64:
F_SUM = 0                    # MAX_LEGAL: sum over samples of (action's points - greedy action's)
F_SQ = MAX_LEGAL             # MAX_LEGAL: sum of squares of those differences
I_CNT = 2 * MAX_LEGAL        # rows[F_ROW] seen as int64, from here: NUM_KINDS counts (opponent model)
I_PLACES = I_CNT + NUM_KINDS  # NUM_CARDS: row offsets of the hidden places outside hands (opponent model)
assert 2 * (I_PLACES + NUM_CARDS) <= SIZE
assert R_SIZE <= X_POOL and X_END <= SIZE and SIZE % 2 == 0

GOLDEN = U64(0x9E3779B97F4A7C15)


@kernel_jit
def remove_card(st, p, card):
    """Take card id ``card`` out of p's concealed hand (the inverse of ``cards.add_card``)."""
    k = card >> 2
    st[HMASK + p * NUM_KINDS + k] &= ~(1 << (card & 3))
    st[HCNT + p * NUM_KINDS + k] -= 1
    st[KEYS + p * 4 + k // 9] -= POW5[k % 9]
    st[NCOL + p * 4 + k // 9] -= 1
    st[NHAND + p] -= 1


@kernel_jit
def improve_opponents(st, rules, p, rng, dt, work, iw):
    """The ``OPP_GREEDY`` model, on a determinization ``st``: every other seat that
    still plays makes one greedy step per card it has taken from its square beyond
    its first 13 (変, draws, stand-ins): it takes the card of a random hidden place
    outside the hands (others' hidden side cards, stand-ins, squares' rests) and
    puts back there the card whose loss leaves its hand the lowest deficiency
    (``greedy.deficiency``; ties: the card just taken, then the lowest kind). A
    swap between hidden places: the hidden multiset stays, visible places are not
    touched. ``iw``: int64 scratch (``I_*``); ``work``: the greedy work buffer."""
    places = iw[I_PLACES:I_PLACES + NUM_CARDS]
    cnt = iw[I_CNT:I_CNT + NUM_KINDS]
    n = 0
    for q in range(4):
        if q != p and not rules[R_SIDE_PUBLIC]:
            for i in range(st[NSIDE + q]):
                places[n] = SIDE + q * 4 + i
                n += 1
        for i in range(st[NMELD + q]):
            m = MELDS + (q * 4 + i) * MELD_W
            if st[m + M_TYPE] != MT_ANKAN:
                places[n] = m + M_STANDIN
                n += 1
        sq = SQUARES + st[HAND] * NUM_CARDS + q * SQUARE_SIZE
        for pos in range(st[SQPOS + q], SQUARE_SIZE):
            places[n] = sq + pos
            n += 1
    if n == 0:
        return
    for q in range(4):
        if q == p or st[RETIRED + q]:
            continue
        nm = st[NMELD + q]
        for _ in range(st[SQPOS + q] - 13):
            off = places[rand_below(rng, 0, n)]
            c = st[off]
            add_card(st, q, c)
            for k in range(NUM_KINDS):
                cnt[k] = st[HCNT + q * NUM_KINDS + k]
            best = INF
            bk = -1
            for k in range(NUM_KINDS):
                if cnt[k] > 0:
                    cnt[k] -= 1
                    v = deficiency(cnt, nm, dt, work)
                    cnt[k] += 1
                    if v < best or (v == best and k == c >> 2):
                        best = v
                        bk = k
            if bk == c >> 2:
                out = c
            else:
                m = st[HMASK + q * NUM_KINDS + bk]
                b = 0
                while not (m >> b) & 1:
                    b += 1
                out = bk * 4 + b
            remove_card(st, q, out)
            st[off] = out


@kernel_jit
def greedy_move(st, rules, rng, dt, obs, mask, work):
    """The greedy policy's action for the seat to act in st (as ``players.agent_action``)."""
    observe(st, rules, st[CUR], obs)
    write_mask(st, mask)
    return greedy_action(obs, mask, rng, dt, rules[R_CHOW_OFF], rules[R_KUIKAE], work)


@kernel_jit
def rollout(st, rules, wt, rng, dt, obs, mask, work, action):
    """Play ``action``, then the greedy policy for every seat until the game ends
    (``rules`` ends it with the current hand); return the decisions played."""
    n = advance(st, rules, wt, action)
    steps = 1
    while n > 0:
        n = advance(st, rules, wt, greedy_move(st, rules, rng, dt, obs, mask, work))
        steps += 1
    return steps


@kernel_jit
def is_win_action(a):
    return a == A_TSUMO or (A_RON <= a < A_EXCHANGE)


@kernel_jit
def mark_candidates(row, rules, dt, width, obs, mask, work, g, cand):
    """cand[i] = 1 for the legal actions i the search compares with g (module
    docstring, step 3); obs and mask must hold p's observation and mask."""
    n = row[NLEGAL]
    if width < 0 or row[PHASE] == PH_TAKE:
        for i in range(n):
            cand[i] = 1
        return
    option_values(obs, mask, dt, rules[R_CHOW_OFF], rules[R_KUIKAE], work)
    best = INF
    for i in range(n):
        v = work[W_VAL + row[LEGAL + i]]
        if v < best:
            best = v
    for i in range(n):
        a = row[LEGAL + i]
        cand[i] = 1 if (a == g or is_win_action(a) or work[W_VAL + a] <= best + width) else 0


@kernel_jit
def search_action(row, rules, wt, rng, dt, params, obs, mask, work, rows):
    """The search agent's action for the seat to act in ``row`` (module docstring)."""
    n = row[NLEGAL]
    if n <= 1:
        return row[LEGAL]
    p = row[CUR]
    h = row[HAND]
    g = greedy_move(row, rules, rng, dt, obs, mask, work)
    if params[P_SEARCH_WINS] <= 0 and is_win_action(g):
        return g  # the greedy policy takes a legal win whenever there is one
    samples = int(params[P_SAMPLES]) if params[P_SAMPLES] > 0 else DEFAULT_SAMPLES
    budget = np.int64(params[P_BUDGET]) if params[P_BUDGET] != 0 else DEFAULT_BUDGET
    z = params[P_CONFIDENCE] if params[P_CONFIDENCE] > 0 else DEFAULT_CONFIDENCE
    width = int(params[P_WIDTH]) - 1 if params[P_WIDTH] != 0 else DEFAULT_WIDTH
    model = int(params[P_OPPONENTS]) if params[P_OPPONENTS] > 0 else DEFAULT_OPPONENTS
    x = rows[X_ROW]
    cand = x[X_CAND:X_CAND + MAX_LEGAL]
    mark_candidates(row, rules, dt, width, obs, mask, work, g, cand)
    ncand = 0
    for i in range(n):
        ncand += cand[i]
    if ncand <= 1:
        return g
    rng[0] = rng[0] + GOLDEN  # the one draw of this decision
    key = mix64(rng[0])
    cont = rng[0]
    base = rows[ROW_BASE]
    sim = rows[ROW_SIM]
    f = rows[F_ROW].view(np.float64)
    iw = rows[F_ROW].view(np.int64)
    rr = x[X_RULES:X_RULES + R_SIZE]
    for i in range(R_SIZE):
        rr[i] = rules[i]
    rr[R_HANDS] = h + 1
    rr[R_AUTO_FORCED] = 1
    pool = x[X_POOL:X_POOL + NUM_CARDS]
    gi = 0
    for i in range(n):
        x[X_WINS + i] = 0
        f[F_SUM + i] = 0.0
        f[F_SQ + i] = 0.0
        if row[LEGAL + i] == g:
            gi = i
    d = DELTAS + h * 4 + p
    spent = np.int64(0)
    rounds = 0
    for s in range(samples):
        rng[0] = mix64(key ^ (U64(s + 1) * GOLDEN))
        determinize(row, rules, p, base, pool, rng)
        if model == OPP_GREEDY:
            improve_opponents(base, rules, p, rng, dt, work, iw)
        stream = rng[0]
        vg = 0
        for j in range(n):
            i = (gi + j) % n  # the greedy action first: the others are measured against it
            if not cand[i]:
                continue
            for c in range(DECLOG):  # the rollout never reads the decision log
                sim[c] = base[c]
            rng[0] = stream
            spent += rollout(sim, rr, wt, rng, dt, obs, mask, work, row[LEGAL + i])
            v = sim[d] - base[d]
            x[X_WINS + i] += sim[RETIRED + p]
            if j == 0:
                vg = v
            else:
                f[F_SUM + i] += v - vg
                f[F_SQ + i] += (v - vg) * (v - vg)
        rounds += 1
        if budget > 0 and spent >= budget:
            break
    rng[0] = cont
    best = gi
    best_t = 0.0
    if rounds > 1:
        for i in range(n):
            if i == gi or not cand[i]:
                continue
            m = f[F_SUM + i] / rounds
            var = (f[F_SQ + i] - rounds * m * m) / (rounds - 1)
            t = m - z * np.sqrt(max(var, 0.0) / rounds)
            if t > best_t or (t == best_t and best != gi and x[X_WINS + i] > x[X_WINS + best]):
                best = i
                best_t = t
    return row[LEGAL + best]
