"""Worlds a seat cannot tell apart: the cards it cannot see, redealt (docs/rules.md §11).

One implementation serves the search agent (``search.py`` determinizes with
:func:`determinize` before every rollout) and the planning API
(``Game.sample_hidden``, ``VectorGame.sample_hidden``: :func:`sample_world`).

**The unseen pool** of seat p (:func:`unseen_pool`) is the 144 card ids less
every card p sees: its own concealed hand, its own drawn card when p is to
act, its own side cards (every seat's when ``side_cards_public``), every river
card, and every shown meld card (the two shown cards of a 刻 / 順 / 明, the
three of a 暗, the kan cards). It is listed in ascending card id order.

**The hidden places**, in this fixed order, each keeping its size:

- each other seat's concealed hand (seats 0-3, skipping p), followed by that
  seat's side cards unless they are public;
- when another seat is to act and has drawn a card that is not in its hand
  yet (``discard_drawn`` off), that drawn card;
- every stand-in (seats 0-3, melds in the order made; 刻 / 順 / 明);
- the untaken rest of every square of the current hand (seats 0-3, positions
  ``SQPOS`` .. 35; p's own square included).

:func:`determinize` shuffles the pool (Fisher-Yates) and deals it into the
places. Pool and places are functions of what p sees, so the result is the
same whatever the true hidden cards are.

:func:`sample_world` is a determinization that is a whole game a planner may
read and play on: it also redeals every later hand's squares (a fresh
uniform deal each), recomputes the legal actions of the seat to act (when
that is another seat, they depend on its sampled hand) and withholds the
history that would tell the true cards: the taken part of every square of
this and earlier hands (-1), the actions of other seats in the decision log
(-1; the seats stay), the scoring scratch and the legal list past its length
(zeros). Once the game is over, "this hand" is its last one. A seat that has
won this hand plays no more in it; its concealed cards count as hidden, as in
the observation, though its win record (public, ``Game.wins``) shows them. Such a world has no
record (``Game.record`` refuses it). When another seat is to act and its
sampled hand leaves it one legal action, the world stands at that forced
decision (the engine would have made it at once in the true game).
"""

from ..rules import NUM_CARDS, NUM_KINDS, R_DISCARD_DRAWN, R_SIDE_PUBLIC, SQUARE_SIZE
from .cards import U64, add_card, mix64, rand_below
from .jit import kernel_jit
from .layout import (
    CUR,
    DECLOG,
    DRAWN,
    HAND,
    HCNT,
    HMASK,
    HNDEC,
    KEYS,
    LEGAL,
    M_CARD0,
    M_CARD1,
    M_KAN,
    M_STANDIN,
    M_TYPE,
    MAX_DEC,
    MAX_HANDS,
    MAX_LEGAL,
    MELD_W,
    MELDS,
    MT_ANKAN,
    NCOL,
    NHAND,
    NLEGAL,
    NMELD,
    NRIVER,
    NSIDE,
    PH_OVER,
    PHASE,
    RIVER,
    RIVER_LEN,
    SCRATCH,
    SCRATCH_SIZE,
    SIDE,
    SQPOS,
    SQUARES,
)
from .legal import legal


@kernel_jit
def unseen_pool(st, rules, p, pool):
    """List the card ids seat p cannot see in pool[0:n], ascending; return n.
    Reads only what p sees (own hand and drawn card, side cards p may see, rivers,
    shown meld cards)."""
    for c in range(NUM_CARDS):
        pool[c] = 0
    for k in range(NUM_KINDS):
        m = st[HMASK + p * NUM_KINDS + k]
        for c in range(4):
            if (m >> c) & 1:
                pool[k * 4 + c] = 1
    if st[DRAWN] >= 0 and st[CUR] == p:  # the drawn card of this turn, p's own
        pool[st[DRAWN]] = 1
    for q in range(4):
        if q == p or rules[R_SIDE_PUBLIC]:
            for i in range(st[NSIDE + q]):
                pool[st[SIDE + q * 4 + i]] = 1
        for i in range(st[NRIVER + q]):
            pool[st[RIVER + q * RIVER_LEN + i]] = 1
        for i in range(st[NMELD + q]):
            m = MELDS + (q * 4 + i) * MELD_W
            pool[st[m + M_CARD0]] = 1
            pool[st[m + M_CARD1]] = 1
            if st[m + M_TYPE] == MT_ANKAN:  # 暗: the third shown card
                pool[st[m + M_STANDIN]] = 1
            if st[m + M_KAN] >= 0:
                pool[st[m + M_KAN]] = 1
    n = 0
    for c in range(NUM_CARDS):  # compact in place: entry c is read before anything is written at c
        if pool[c] == 0:
            pool[n] = c
            n += 1
    return n


@kernel_jit
def determinize(src, rules, p, dst, pool, rng):
    """dst = a copy of src whose hidden places (as seat p sees src) hold the unseen
    pool shuffled with the stream rng[0] (module docstring). Returns the number of
    cards dealt minus the pool size: 0 always (tests check it)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]
    n = unseen_pool(src, rules, p, pool)
    for i in range(n - 1, 0, -1):
        j = rand_below(rng, 0, i + 1)
        t = pool[i]
        pool[i] = pool[j]
        pool[j] = t
    j = 0
    public = rules[R_SIDE_PUBLIC]
    for q in range(4):
        if q == p:
            continue
        for k in range(NUM_KINDS):
            dst[HMASK + q * NUM_KINDS + k] = 0
            dst[HCNT + q * NUM_KINDS + k] = 0
        for c in range(4):
            dst[KEYS + q * 4 + c] = 0
            dst[NCOL + q * 4 + c] = 0
        dst[NHAND + q] = 0
        first = j
        for _ in range(src[NHAND + q]):
            add_card(dst, q, pool[j])
            j += 1
        if src[DRAWN] >= 0 and src[CUR] == q:  # another seat's drawn card: hidden from p
            if rules[R_DISCARD_DRAWN]:
                dst[DRAWN] = pool[first]   # it is in q's hand: one of the cards just dealt
            else:
                dst[DRAWN] = pool[j]
                j += 1
        if not public:
            for i in range(src[NSIDE + q]):
                dst[SIDE + q * 4 + i] = pool[j]
                j += 1
    for q in range(4):
        for i in range(src[NMELD + q]):
            m = MELDS + (q * 4 + i) * MELD_W
            if src[m + M_TYPE] != MT_ANKAN:
                dst[m + M_STANDIN] = pool[j]
                j += 1
    h = src[HAND] - 1 if src[PHASE] == PH_OVER else src[HAND]   # over: the last hand's table stays
    if h >= 0:
        sq = SQUARES + h * NUM_CARDS
        for q in range(4):
            for pos in range(src[SQPOS + q], SQUARE_SIZE):
                dst[sq + q * SQUARE_SIZE + pos] = pool[j]
                j += 1
    return j - n


@kernel_jit
def sample_world(src, rules, wt, p, dst, pool, rng):
    """dst = a world seat p cannot tell from src (module docstring), drawn with the
    stream rng[0]; returns the legal count of dst (0 when the game is over)."""
    determinize(src, rules, p, dst, pool, rng)
    over = src[PHASE] == PH_OVER
    h = src[HAND] - 1 if over else src[HAND]   # the hand on the table
    for hh in range(MAX_HANDS):
        sq = SQUARES + hh * NUM_CARDS
        if hh > h:                             # a later hand: a fresh deal
            for i in range(NUM_CARDS):
                dst[sq + i] = i
            for i in range(NUM_CARDS - 1, 0, -1):
                j = rand_below(rng, 0, i + 1)
                t = dst[sq + i]
                dst[sq + i] = dst[sq + j]
                dst[sq + j] = t
        elif hh < h:                           # an earlier hand: withheld
            for i in range(NUM_CARDS):
                dst[sq + i] = -1
        else:                                  # this hand: its taken part withheld
            for q in range(4):
                for pos in range(src[SQPOS + q]):
                    dst[sq + q * SQUARE_SIZE + pos] = -1
        if hh <= h:
            for d in range(min(src[HNDEC + hh], MAX_DEC)):
                o = DECLOG + (hh * MAX_DEC + d) * 2
                if src[o] != p:
                    dst[o + 1] = -1
    for i in range(SCRATCH_SIZE):
        dst[SCRATCH + i] = 0
    n = 0 if over else legal(dst, rules, wt)
    dst[NLEGAL] = n
    for i in range(n, MAX_LEGAL):    # the list's tail: not left from the true game
        dst[LEGAL + i] = 0
    return n


@kernel_jit
def world_stream(seed):
    """The stream ``sample_world`` draws from for a world of ``seed``."""
    return mix64(U64(seed) ^ U64(0x3C6EF372FE94F82B))


@kernel_jit
def sample_rows(srcs, rules, wt, seats, seeds, st, dst, pool, rng):
    """st[dst[k]] = the world ``world_stream(seeds[k])`` samples from srcs[k] for
    seat seats[k], for each k (``VectorGame.sample_hidden``)."""
    for k in range(dst.shape[0]):
        rng[0] = world_stream(seeds[k])
        sample_world(srcs[k], rules, wt, seats[k], st[dst[k]], pool, rng)
