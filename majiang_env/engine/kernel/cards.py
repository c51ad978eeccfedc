"""Cards: the random deal (splitmix64), the squares, and cards in and out of a
concealed hand (docs/rules.md §1, §3).

A concealed hand is kept four ways at once (layout ``HMASK``, ``HCNT``,
``KEYS``, ``NCOL``, ``NHAND``); ``add_card`` and ``remove_lowest`` are the only
functions that change it, so the four stay in step.
"""
import numpy as np

from ..rules import NUM_CARDS, NUM_KINDS, SQUARE_SIZE
from .jit import kernel_jit, rule_jit
from .layout import HAND, HCNT, HMASK, KEYS, NCOL, NHAND, SQPOS, SQUARES

POW5 = np.array([5 ** j for j in range(9)], np.int32)   # KEYS: base-5 digit of each number
U64 = np.uint64


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


# ---- the deal (docs/rules.md §3) --------------------------------------------
@kernel_jit
def deal_squares(st, seed):
    """Shuffle the 144 cards for every hand from the game seed (Fisher-Yates in place)."""
    for h in range(4):
        sq = SQUARES + h * NUM_CARDS
        r = mix64(seed ^ mix64(U64(h + 1)))  # a splitmix64 stream, as in rand_below
        for i in range(NUM_CARDS):
            st[sq + i] = i
        for i in range(NUM_CARDS - 1, 0, -1):
            z = mix64(r)
            r = r + U64(0x9E3779B97F4A7C15)
            j = np.int64(((z >> U64(32)) * U64(i + 1)) >> U64(32))
            t = st[sq + i]
            st[sq + i] = st[sq + j]
            st[sq + j] = t


@rule_jit
def take_from_square(st, p):
    """The next card of p's own square (a seat only ever takes from its own square)."""
    h = st[HAND]
    pos = st[SQPOS + p]
    st[SQPOS + p] = pos + 1
    return st[SQUARES + h * NUM_CARDS + p * SQUARE_SIZE + pos]


# ---- cards in hands --------------------------------------------------------
@rule_jit
def add_card(st, p, card):
    """Card id ``card`` joins p's concealed hand."""
    k = card >> 2
    st[HMASK + p * NUM_KINDS + k] |= 1 << (card & 3)
    st[HCNT + p * NUM_KINDS + k] += 1
    st[KEYS + p * 4 + k // 9] += POW5[k % 9]
    st[NCOL + p * 4 + k // 9] += 1
    st[NHAND + p] += 1


@rule_jit
def remove_lowest(st, p, k):
    """The lowest copy of kind k leaves p's concealed hand; returns its card id."""
    m = st[HMASK + p * NUM_KINDS + k]
    c = 0
    while not (m >> c) & 1:
        c += 1
    st[HMASK + p * NUM_KINDS + k] = m & ~(1 << c)
    st[HCNT + p * NUM_KINDS + k] -= 1
    st[KEYS + p * 4 + k // 9] -= POW5[k % 9]
    st[NCOL + p * 4 + k // 9] -= 1
    st[NHAND + p] -= 1
    return k * 4 + c
