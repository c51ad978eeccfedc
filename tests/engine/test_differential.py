"""Differential test: the kernel against the pure-Python reference (tests/reference.py).

Random games (uniform legal actions, and a policy biased towards calls, kans
and wins) are played by the kernel and written as records with legal sets;
the reference replays each record and checks every legal set, every win,
every delta and the scores.
"""
import os
import random

import pytest
from helpers import biased_choice, play
from reference import check_record
from test_engine import random_rules

from majiang_env import Game, RuleConfig


def uniform(rng, legal):
    return rng.choice(legal)


def run_hands(n_hands, seed0):
    hands = 0
    seed = seed0
    while hands < n_hands:
        rng = random.Random(seed)
        rules = RuleConfig() if seed % 3 == 0 else random_rules(rng)
        policy = biased_choice if seed % 2 else uniform
        g = play(Game(rules, seed=seed, auto_forced=bool(seed % 4)), rng, policy=policy)
        check_record(g.record(legal=True))
        hands += rules.hands_per_game
        seed += 1
    return hands


@pytest.mark.parametrize("part", range(4))
def test_kernel_matches_reference(part):
    # 4 x 260 = 1,040 hands in CI
    assert run_hands(260, 10_000 * part) >= 260


@pytest.mark.slow
@pytest.mark.parametrize("part", range(2))
def test_kernel_matches_reference_50k(part):
    # run with: python -m pytest -m slow -n 2 tests/engine/test_differential.py
    n = int(os.environ.get("MAJIANG_DIFF_HANDS", "50000")) // 2
    assert run_hands(n, 1_000_000 * (part + 1)) >= n
