"""Shared test helpers: policies that drive games, hand-made deals, a card-location check
and a swap of hidden cards."""
import random

import numpy as np

from majiang_env.engine.kernel import layout as L
from majiang_env.engine.rules import A_ANKAN, A_EXCHANGE, A_PASS, A_PUNG, A_RON, A_TSUMO

WINS = {A_TSUMO} | set(range(A_RON, A_EXCHANGE))
CALLS = set(range(A_ANKAN, A_PASS)) | set(range(A_PUNG, A_EXCHANGE))  # kans, 模, pick-ups, 栄


def biased_choice(rng: random.Random, legal):
    """Prefer wins, then calls and kans, so those rule paths run often."""
    wins = [a for a in legal if a in WINS]
    if wins:
        return rng.choice(wins)
    calls = [a for a in legal if a in CALLS]
    if calls and rng.random() < 0.7:
        return rng.choice(calls)
    return rng.choice(legal)


def card_places(g):
    """Every card id -> list of places it is in (should be exactly one)."""
    st = g.state
    h = min(int(st[L.HAND]), g.rules.hands_per_game - 1)
    places = {c: [] for c in range(144)}
    for p in range(4):
        sq = st[L.SQUARES + h * 144 + p * 36:L.SQUARES + h * 144 + p * 36 + 36]
        for c in sq[st[L.SQPOS + p]:]:
            places[int(c)].append(f"square{p}")
        for k in range(36):
            m = st[L.HMASK + p * 36 + k]
            for c in range(4):
                if m >> c & 1:
                    places[k * 4 + c].append(f"hand{p}")
        for i in range(st[L.NSIDE + p]):
            places[int(st[L.SIDE + p * 4 + i])].append(f"side{p}")
        for i in range(st[L.NMELD + p]):
            m = L.MELDS + (p * 4 + i) * L.MELD_W
            for c in st[m + L.M_CARD0:m + L.M_STANDIN + 1]:
                places[int(c)].append(f"meld{p}")
        for i in range(st[L.NRIVER + p]):
            places[int(st[L.RIVER + p * 18 + i])].append(f"river{p}")
    d = int(st[L.DRAWN])
    if d >= 0 and not g.rules.discard_drawn:
        places[d].append("drawn")
    return places


def hand_size(g, p):
    st = g.state
    return int(st[L.NHAND + p]) + 3 * int(st[L.NMELD + p])


def play(g, rng, policy=biased_choice, check=None):
    while not g.done:
        if check:
            check(g)
        g.step(policy(rng, g.legal_actions()))
    return g


def deal(hands, draws):
    """Squares of one hand: seat p is dealt the kinds ``hands[p]`` and then takes
    the kinds ``draws[p]`` (draws and stand-ins, in order); the rest is filler."""
    copies = [0] * 36
    squares = []
    for p in range(4):
        sq = []
        for k in hands[p] + draws[p]:
            sq.append(k * 4 + copies[k])
            copies[k] += 1
        squares.append(sq)
    rest = [c for c in range(144) if c % 4 >= copies[c // 4]]
    for sq in squares:
        while len(sq) < 36:
            sq.append(rest.pop())
    return np.array([squares])


def counts(kinds):
    c = np.zeros(36, np.int16)
    for k in kinds:
        c[k] += 1
    return c


def squares_of(g):
    """The deal of every hand of ``g``: int (hands_per_game, 4, 36) card ids."""
    nh = g.rules.hands_per_game
    return np.array(g.state[L.SQUARES:L.SQUARES + nh * 144]).reshape(nh, 4, 36)


def swap_cards(squares, c1, c2):
    """A copy of ``squares`` with card ids c1 and c2 exchanged wherever they lie."""
    swapped = squares.copy()
    swapped[squares == c1] = c2
    swapped[squares == c2] = c1
    return swapped
