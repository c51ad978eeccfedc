"""Shared test helpers: policies that drive games and a card-location check."""
import random

import numpy as np

from majiang_env.kernel import layout as L
from majiang_env.rules import A_ANKAN, A_EXCHANGE, A_PASS, A_PUNG, A_RON, A_TSUMO

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
