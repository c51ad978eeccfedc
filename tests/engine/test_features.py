"""The float ``features`` encoding (kernel/features.py) against an independent reference.

``feature_reference.reference_features`` is written from the module docstrings
only (features.py's channel table, greedy.py's definitions of deficiency,
unseen copies, acceptance and pick-up values) and finds deficiencies by brute
force. Here the kernel's features must equal it at every decision of games
under several rule sets, for the seat to act (with its mask) and for the
other seats (mask all zeros); named planes hold what their names say on a
hand-made position; swapping cards the observer cannot see leaves its features
byte-identical; ``VectorGame(obs_type="features")`` agrees with ``Game``; and
bad inputs to ``FeatureEncoder`` raise ``ValueError`` without crashing.
"""
import itertools
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from feature_reference import deficiency, reference_features
from helpers import biased_choice, card_places, counts, deal, squares_of, swap_cards

from majiang_env import Game, RuleConfig
from majiang_env.agents import game_obs, make_agent
from majiang_env.engine.encodings import FeatureEncoder, observation_space
from majiang_env.engine.kernel import features as F
from majiang_env.engine.kernel import observe as O
from majiang_env.engine.vector import VectorGame, game_seed

# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_MINKAN, A_TSUMO, A_DRAW = 0, 36, 72, 108, 110
A_PUNG, A_CHOW, A_EXCHANGE = 111, 114, 120
NUM_ACTIONS = 156

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_ACTION = np.zeros(NUM_ACTIONS, np.int8)

RULESETS = {
    "default": {},
    "chow_previous": {"chow_from": "previous"},
    "no_kuikae": {"kuikae": False},
    "discard_drawn": {"discard_drawn": True},
    "side_public": {"side_cards_public": True},
    "no_exchange": {"exchange": False},
}


# --------------------------------------------------------------------------- channel names
def _channel_names():
    names = []
    planes = sorted((v, k) for k, v in vars(F).items() if k.startswith("P_") and isinstance(v, int))
    widths = dict(zip((k for _, k in planes), (n for _, n in F.PLANES), strict=True))
    for _, name in planes:
        for j in range(widths[name]):
            names += [f"{name}[{j}] kind {k}" if widths[name] > 1 else f"{name} kind {k}"
                      for k in range(36)]
    scalars = sorted((v, k) for k, v in vars(F).items() if k.startswith("F_") and isinstance(v, int))
    for (start, name), (nxt, _) in zip(scalars, scalars[1:] + [(F.NUM_SCALARS, "")], strict=True):
        names += [f"{name}[{j}]" if nxt - start > 1 else name for j in range(nxt - start)]
    return names


CHANNELS = _channel_names()


def test_layout():
    assert len(CHANNELS) == F.FEAT_SIZE == F.SCALARS + F.NUM_SCALARS
    assert F.PLANE_SHAPE == (F.NUM_PLANES, 36) and F.SCALARS == F.NUM_PLANES * 36
    assert sum(n for _, n in F.PLANES) == F.NUM_PLANES
    assert observation_space("features").shape == (F.FEAT_SIZE,)


def assert_same(kernel, ref, where):
    """kernel == ref to float32 precision, else name each differing channel."""
    assert kernel.dtype == np.float32 and kernel.shape == (F.FEAT_SIZE,)
    if np.allclose(kernel, ref, atol=1e-6):
        return
    bad = np.flatnonzero(~np.isclose(kernel, ref, atol=1e-6))
    lines = [f"  {CHANNELS[i]}: kernel {kernel[i]!r} reference {ref[i]!r}" for i in bad[:12]]
    raise AssertionError(f"{where}: {len(bad)} channels differ\n" + "\n".join(lines))


# --------------------------------------------------------------------------- driving games
def _biased(seed):
    rng = random.Random(seed)
    return lambda obs: biased_choice(rng, np.flatnonzero(obs["action_mask"]).tolist())


AGENTS = {"random": "random", "greedy": "greedy", "biased": _biased}


def decisions(rules, seed, agents):
    """Yield the game at every decision (forced ones too) of a game played by ``agents``."""
    g = Game(rules, seed=seed, auto_forced=False)
    pols = [AGENTS[a](seed * 4 + s) if callable(AGENTS[a]) else make_agent(AGENTS[a], seed=seed * 4 + s, rules=rules)
            for s, a in enumerate(agents)]
    while not g.done:
        yield g
        g.step(pols[g.current_player](game_obs(g)))


def _coverage(cov, g, mask):
    legal = np.flatnonzero(mask)
    cov["decisions"] += 1
    cov["exchange"] += int((legal >= A_EXCHANGE).any())
    cov["discard"] += int((legal < A_ANKAN).any())
    cov["pung"] += int(((legal >= A_PUNG) & (legal < A_CHOW)).any())
    cov["chow"] += int(((legal >= A_CHOW) & (legal < A_CHOW + 3)).any())
    cov["kan"] += int(((legal >= A_ANKAN) & (legal < A_TSUMO)).any())


GAMES = [(1, ("greedy", "greedy", "greedy", "greedy")), (2, ("biased", "random", "greedy", "biased"))]
BOX = observation_space("features")


def _games(name, games):
    """The games of rule set ``name``: other deals for each rule set."""
    off = 100 * list(RULESETS).index(name)
    return [(seed + off, agents) for seed, agents in games]


def _check_acting(rules, games, cov):
    enc = FeatureEncoder(rules)
    for seed, agents in games:
        for i, g in enumerate(decisions(rules, seed, agents)):
            seat, mask = g.current_player, g.legal_mask()
            obs = g.observe(seat)
            feat = g.observe(seat, "features")
            assert np.array_equal(feat, enc(obs, mask))
            assert ((feat >= BOX.low) & (feat <= BOX.high)).all()
            assert_same(feat, reference_features(obs, mask, rules),
                        f"seed {seed} decision {i} seat {seat} phase {g.phase} legal {g.legal_actions()}")
            _coverage(cov, g, mask)


def _check_others(rules, games):
    n = 0
    for seed, agents in games:
        for i, g in enumerate(decisions(rules, seed, agents)):
            for seat in range(4):
                if seat == g.current_player:
                    continue
                obs = g.observe(seat)
                assert_same(g.observe(seat, "features"), reference_features(obs, NO_ACTION, rules),
                            f"seed {seed} decision {i} observer {seat} (not to act; seat "
                            f"{g.current_player} acts, phase {g.phase})")
                n += 1
    return n


@pytest.mark.parametrize("name", list(RULESETS))
def test_acting_seat_matches_reference(name):
    rules = RuleConfig(hands_per_game=1, **RULESETS[name])
    cov = {k: 0 for k in ("decisions", "exchange", "discard", "pung", "chow", "kan")}
    _check_acting(rules, _games(name, GAMES), cov)
    assert cov["decisions"] > 200 and cov["discard"] > 50 and cov["pung"] + cov["chow"] > 0, cov
    assert (cov["exchange"] > 0) == rules.exchange, cov


@pytest.mark.parametrize("name", list(RULESETS))
def test_other_seats_match_reference(name):
    """Seats not to act (mask all zeros): no option is legal, but the planes and the
    scalars of the hand itself (among them F_DEF_NOW and F_ACC_NOW, "the hand now")
    are there as for the seat to act."""
    rules = RuleConfig(hands_per_game=1, **RULESETS[name])
    assert _check_others(rules, _games(name, GAMES[1:])) > 300


LONG = dict(RULESETS, mixed={"chow_from": "previous", "kuikae": False, "discard_drawn": True,
                             "side_cards_public": True})
LONG_AGENTS = [("greedy",) * 4, ("biased",) * 4, ("random", "greedy", "biased", "random"),
               ("biased", "greedy", "biased", "greedy")]


def _long_games(name):
    off = 1000 + 100 * list(LONG).index(name)
    return [(off + s, agents) for s, agents in enumerate(LONG_AGENTS)]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LONG))
def test_acting_seat_matches_reference_long(name):
    rules = RuleConfig(**LONG[name])       # 4 hands: scores, hand index and start seat vary
    cov = {k: 0 for k in ("decisions", "exchange", "discard", "pung", "chow", "kan")}
    _check_acting(rules, _long_games(name), cov)
    assert cov["kan"] > 0, cov


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LONG))
def test_other_seats_match_reference_long(name):
    _check_others(RuleConfig(**LONG[name]), _long_games(name))


# --------------------------------------------------------------------------- the reference itself
def _hand(kinds):
    return tuple(int(x) for x in counts(kinds))


def test_reference_deficiency_examples():
    """A few hands whose deficiency is easy to see, so the reference is trusted."""
    assert deficiency(_hand([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10, 10]), 0) == 0   # winning
    assert deficiency(_hand([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 10]), 0) == 1       # waiting
    assert deficiency(_hand([0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 1]), 0) == 8
    assert deficiency(_hand([0] * 4 + [1] * 4 + [2] * 4 + [3]), 0) == 1
    assert deficiency(_hand([7, 8, 9]), 3) == 2          # no wrap: 青8 青9 赤1 is no run
    assert deficiency(_hand([7, 8, 9, 9]), 3) == 1
    assert deficiency(_hand([0] * 4), 3) == 2            # 4 copies: a triplet and 1 left, no 5th
    assert deficiency(_hand([5, 5]), 4) == 0
    assert deficiency(_hand([5]), 4) == 1


def _all_targets(n_melds):
    """Every whole-hand target of 1 pair + (4 - n_melds) melds, as counts, with no
    kind more than 4 times: the definition, without splitting by colour."""
    melds = [np.eye(36, dtype=np.int64)[k] * 3 for k in range(36)]
    melds += [np.eye(36, dtype=np.int64)[f * 9 + n:f * 9 + n + 3].sum(0) for f in range(4) for n in range(7)]
    rows = []
    for combo in itertools.combinations_with_replacement(range(len(melds)), 4 - n_melds):
        base = sum((melds[i] for i in combo), np.zeros(36, np.int64))
        for k in range(36):
            t = base.copy()
            t[k] += 2
            if t.max() <= 4:
                rows.append(t)
    return np.array(rows)


@pytest.mark.parametrize("n_melds", [2, 3])
def test_reference_deficiency_against_whole_hand_targets(n_melds):
    targets = _all_targets(n_melds)
    rng = np.random.default_rng(n_melds)
    for i in range(40):
        hand = np.zeros(36, np.int64)
        size = 13 - 3 * n_melds + int(rng.integers(0, 3))
        for c in rng.choice(144 if i % 2 else 36, size, replace=False):   # or one colour only
            hand[c // 4] += 1
        want = int(np.clip(targets - hand, 0, None).sum(1).min())
        assert deficiency(tuple(int(x) for x in hand), n_melds) == want, hand


# --------------------------------------------------------------------------- named planes
# Seat 0 discards 青5 (kind 4); seat 1 pungs it; seat 2 draws; seat 3 chows 青5 from seat 0
HANDS = [
    [4, 0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 28, 35],
    [4, 4, 30, 12, 13, 14, 21, 22, 23, 31, 32, 33, 34],
    [3, 3, 3, 8, 15, 16, 17, 24, 25, 26, 5, 6, 7],
    [5, 6, 0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 28],
]
DRAWS = [[8], [29], [17], [30]]
NO_EXCHANGE = RuleConfig(hands_per_game=1, exchange=False)


def planes_and_scalars(g, seat):
    f = g.observe(seat, "features")
    return f[:F.SCALARS].reshape(F.PLANE_SHAPE), f[F.SCALARS:]


def onehot(n, i):
    v = np.zeros(n)
    v[i] = 1
    return v


def test_named_planes_on_a_hand_made_position():
    g = Game(NO_EXCHANGE, seed=0, auto_forced=False, squares=deal(HANDS, DRAWS))
    P, s = planes_and_scalars(g, 0)
    h = counts(HANDS[0])
    for j in range(4):
        assert (P[F.P_HAND + j] == (h >= j + 1)).all()
    assert (s[F.F_PHASE:F.F_PHASE + 4] == onehot(4, 1)).all()          # take
    assert (s[F.F_TOOK:F.F_TOOK + 3] == onehot(3, 0)).all()
    assert s[F.F_LAP] == pytest.approx(1 / 19) and s[F.F_EXCH_LEFT] == 0
    assert (s[F.F_SQUARE_LEFT:F.F_SQUARE_LEFT + 4] == pytest.approx(23 / 36))

    g.step(A_DRAW)                                        # seat 0 draws 青9 (kind 8)
    P, s = planes_and_scalars(g, 0)
    assert (P[F.P_DRAWN] == onehot(36, 8)).all()
    assert (P[F.P_HAND] == (h >= 1)).all()                # the drawn card is not in the hand
    assert (s[F.F_PHASE:F.F_PHASE + 4] == onehot(4, 2)).all()
    assert (s[F.F_TOOK:F.F_TOOK + 3] == onehot(3, 1)).all()            # 引
    assert s[F.F_SQUARE_LEFT] == pytest.approx(22 / 36)
    assert (P[F.P_OPT_LEGAL] == (h >= 1)).all()           # 打 any kind of the hand, not the drawn 8
    # hand now 青123 赤123 黄123 緑12 + 青5 青9 緑9: three runs, 緑12 waits, a pair missing
    assert s[F.F_DEF_NOW] == pytest.approx(2 / 8)
    assert P[F.P_VISIBLE, 8] == 0.25 and P[F.P_UNSEEN, 8] == 0.75
    assert P[F.P_VISIBLE, 3] == 0 and P[F.P_UNSEEN, 3] == 1
    # 打 緑9 (35) keeps the deficiency at 2, 打 青1 (0) breaks a run: 3
    assert P[F.P_OPT_DEF, 35] == pytest.approx(2 / 8) and P[F.P_OPT_BEST, 35] == 1
    assert P[F.P_OPT_DEF, 0] == pytest.approx(3 / 8) and P[F.P_OPT_BEST, 0] == 0
    assert P[F.P_OPT_DEF, 8] == 0 and P[F.P_OPT_ACC, 8] == 0
    P1, s1 = planes_and_scalars(g, 1)                     # another seat sees none of it
    assert (P1[F.P_DRAWN] == 0).all() and P1[F.P_VISIBLE, 8] == 0
    assert (P1[F.P_OPT_LEGAL] == 0).all() and (s1[F.F_TOOK:F.F_TOOK + 3] == onehot(3, 0)).all()
    assert s1[F.F_SQUARE_LEFT + 3] == pytest.approx(22 / 36)      # seat 0 is seat 1's r = 3

    g.step(A_DISCARD + 4)                                 # seat 0: 打 青5
    P1, s1 = planes_and_scalars(g, 1)
    assert (P1[F.P_RIVER + 3] == onehot(36, 4) / 4).all() and (P1[F.P_RIVER + 0] == 0).all()
    assert (P1[F.P_CLAIM + 3] == onehot(36, 4)).all() and (P1[F.P_CLAIM:F.P_CLAIM + 3] == 0).all()
    assert P1[F.P_VISIBLE, 4] == 0.75                     # 2 in seat 1's hand, 1 in the river
    assert (s1[F.F_PICKUP_LEGAL:F.F_PICKUP_LEGAL + 6] == onehot(6, 2)).all()   # 刻 from offset 3
    # after 刻 青5: 赤456 黄456 緑45678 with one meld; 打 緑4 or 緑8 leaves deficiency 1
    # (緑5678 waits 緑5 or 緑8, 緑4567 waits 緑4 or 緑7: 3 unseen copies each, acceptance 6)
    assert s1[F.F_PICKUP_DEF + 2] == pytest.approx(1 / 8)
    assert s1[F.F_PICKUP_ACC + 2] == pytest.approx(6 / 100)
    P0, _ = planes_and_scalars(g, 0)
    assert (P0[F.P_RIVER] == onehot(36, 4) / 4).all() and (P0[F.P_CLAIM:F.P_CLAIM + 4] == 0).all()

    g.step(A_PUNG + 2)                                    # seat 1: 刻 青5
    for seat in range(4):
        P, s = planes_and_scalars(g, seat)
        r = (1 - seat) % 4
        assert (P[F.P_TRIPLET + r] == onehot(36, 4)).all()
        assert s[F.F_MELDS + r] == 0.25
        assert (P[F.P_PICKED] == (onehot(36, 4) if seat == 1 else 0)).all()
        assert P[F.P_VISIBLE, 4] == 0.75                  # river 1 + the 2 shown
    _, s1 = planes_and_scalars(g, 1)
    assert (s1[F.F_TOOK:F.F_TOOK + 3] == onehot(3, 2)).all()         # 拾
    g.step(A_DISCARD + 30)                                # seat 1: 打 緑4
    g.step(A_DRAW)
    g.step(A_DISCARD + 8)                                 # seat 2: 引, 打 青9
    g.step(A_CHOW)                                        # seat 3: 順 青567 on seat 0's 青5
    for seat in range(4):
        P, _ = planes_and_scalars(g, seat)
        run = np.zeros(36)
        run[4:7] = 1
        assert (P[F.P_RUN + (3 - seat) % 4] == run).all()


def test_kan_planes():
    """暗 and 明 legal after a 刻: (deficiency left + 1) / 8; win flag off."""
    hands = [list(h) for h in HANDS]
    hands[1] = [4, 4, 4, 12, 12, 12, 12, 22, 23, 31, 32, 33, 34]
    g = Game(NO_EXCHANGE, seed=0, auto_forced=False, squares=deal(hands, DRAWS))
    g.step(A_DRAW)
    g.step(A_DISCARD + 4)
    g.step(A_PUNG + 2)                                    # seat 1: 刻 青5, a third 青5 in hand
    assert g.is_legal(A_ANKAN + 12) and g.is_legal(A_MINKAN + 4)
    P, s = planes_and_scalars(g, 1)
    # 暗 赤4 leaves 青5 黄5 黄6 緑5 緑6 緑7 緑8 with 2 melds: 緑567, 黄56 + 1, a pair + 1 -> 2
    assert P[F.P_ANKAN_DEF, 12] == pytest.approx(3 / 8)
    # 明 青5 leaves 赤4 x4 黄5 黄6 緑5-8 with 1 meld: 赤444 緑567, 黄56 + 1, pair + 1 -> 2
    assert P[F.P_MINKAN_DEF, 4] == pytest.approx(3 / 8)
    assert np.count_nonzero(P[F.P_ANKAN_DEF]) == 1 and np.count_nonzero(P[F.P_MINKAN_DEF]) == 1
    assert s[F.F_WIN_LEGAL] == 0


@pytest.mark.parametrize("kuikae", [True, False])
def test_chow_value_follows_kuikae(kuikae):
    """Seat 3 may chow seat 0's 青5 as the low card of 青567 and keeps another 青5.
    With kuikae the best discard after it is that 青5 (waiting on 緑9, 3 unseen);
    without, the 青5 must stay and 緑9 goes (waiting on 青5, 2 unseen)."""
    hands = [list(h) for h in HANDS]
    hands[3] = [4, 5, 6, 0, 1, 2, 9, 10, 11, 18, 19, 20, 35]
    rules = RuleConfig(hands_per_game=1, exchange=False, kuikae=kuikae)
    g = Game(rules, seed=0, auto_forced=False, squares=deal(hands, DRAWS))
    for a in (A_DRAW, 4, A_DRAW, 30, A_DRAW, 8):          # 打 青5, 緑4, 青9
        g.step(a)
    assert g.current_player == 3 and g.legal_actions() == [A_DRAW, A_CHOW]
    obs, mask = g.observe(3), g.legal_mask()
    f = g.observe(3, "features")
    assert_same(f, reference_features(obs, mask, rules), f"kuikae={kuikae}")
    s = f[F.SCALARS:]
    assert (s[F.F_PICKUP_LEGAL:F.F_PICKUP_LEGAL + 6] == onehot(6, 3)).all()
    assert s[F.F_PICKUP_DEF + 3] == pytest.approx(1 / 8)
    assert s[F.F_PICKUP_ACC + 3] == pytest.approx((3 if kuikae else 2) / 100)


def test_exchange_planes():
    g = Game(RuleConfig(hands_per_game=1), seed=4, auto_forced=False)
    assert g.phase == "exchange"
    P, s = planes_and_scalars(g, g.current_player)
    legal = [a - A_EXCHANGE for a in g.legal_actions()]
    assert (P[F.P_OPT_LEGAL] == np.isin(np.arange(36), legal)).all()
    assert (s[F.F_PHASE:F.F_PHASE + 4] == onehot(4, 0)).all() and s[F.F_EXCH_LEFT] == 1.0
    assert P[F.P_OPT_BEST].sum() >= 1
    assert (P[F.P_OPT_BEST] <= P[F.P_OPT_LEGAL]).all()


# --------------------------------------------------------------------------- hidden information
def _hidden_from(places, seat, g):
    if len(places) != 1:
        return False
    w = places[0]
    if w.startswith("square"):
        return True                      # no square is seen, not even one's own
    if w.startswith("hand"):
        return int(w[4:]) != seat
    if w.startswith("side"):
        return int(w[4:]) != seat and not g.rules.side_cards_public
    return w == "drawn" and g.current_player != seat


def _swap_run(rules, seed, c1, c2, observers, rng):
    """Play the deal and the deal with c1 and c2 exchanged in lockstep; while both
    cards lie hidden from an observer in both games (each where the other lies in
    the other game), the observer's features must be the same bytes. Returns the
    number of (decision, observer) comparisons."""
    a = Game(rules, seed=seed, auto_forced=False)
    b = Game(rules, seed=seed, auto_forced=False, squares=swap_cards(squares_of(a), c1, c2))
    kinds = {c1 >> 2, c2 >> 2}
    n = 0
    observers = list(observers)
    while not a.done and observers:
        pa, pb = card_places(a), card_places(b)
        observers = [o for o in observers if pa[c1] == pb[c2] and pa[c2] == pb[c1]
                     and all(_hidden_from(p, o, g) for p, g in ((pa[c1], a), (pa[c2], a),
                                                                  (pb[c1], b), (pb[c2], b)))]
        for o in observers:
            assert a.observe(o).tobytes() == b.observe(o).tobytes()
            if a.current_player == o:
                assert (a.legal_mask() == b.legal_mask()).all()
            fa, fb = a.observe(o, "features"), b.observe(o, "features")
            assert fa.tobytes() == fb.tobytes(), \
                f"seed {seed}: swapping cards {c1} and {c2} changes what seat {o} sees: " + \
                ", ".join(CHANNELS[i] for i in np.flatnonzero(fa != fb)[:8])
            n += 1
        both = sorted(set(a.legal_actions()) & set(b.legal_actions()))
        if not both:
            break
        # keep the two cards hidden for long: avoid giving up or showing their kinds
        quiet = [x for x in both if not (x < A_TSUMO and x % 36 in kinds)
                 and not (x >= A_EXCHANGE and x - A_EXCHANGE in kinds)
                 and not (A_PUNG <= x < A_CHOW + 3)]
        x = rng.choice(quiet or both)
        a.step(x)
        b.step(x)
    return n


@pytest.mark.parametrize("name", ["default", "side_public", "discard_drawn"])
def test_swapping_hidden_cards_keeps_features(name):
    """A card of one opponent's hand swapped with one of another opponent's hand,
    or with a card at the end of a square (not taken until the last lap)."""
    rules = RuleConfig(hands_per_game=1, **RULESETS[name])
    rng = random.Random(7)
    total = runs = 0
    for seed in range(3):
        sq = squares_of(Game(rules, seed=seed))[0]
        # two opponents' dealt cards; the observers are the other two seats
        c1, c2 = int(sq[1, rng.randrange(13)]), int(sq[2, rng.randrange(13)])
        if c1 >> 2 != c2 >> 2:
            n = _swap_run(rules, seed, c1, c2, (0, 3), rng)
            total += n
            runs += n > 0
        # a dealt card of seat 3 and the last card of seat q's square: every other seat observes
        q = seed % 4
        c1, c2 = int(sq[3, rng.randrange(13)]), int(sq[q, 35])
        if c1 >> 2 != c2 >> 2:
            n = _swap_run(rules, seed, c1, c2, (0, 1, 2), rng)
            total += n
            runs += n > 0
    assert runs >= 4 and total >= 150, (runs, total)


# --------------------------------------------------------------------------- VectorGame
@pytest.mark.parametrize("B, kw", [(3, {}), (64, {"kuikae": False, "chow_from": "previous"})])
def test_vector_features_equal_game(B, kw):
    """Slot by slot, the features of the player to act equal ``Game.observe``'s for
    that slot's game (one-hand games, so slots finish and start the next game)."""
    rules = RuleConfig(hands_per_game=1, **kw)
    seed = 21
    vg = VectorGame(B, rules=rules, seed=seed, obs_type="features")
    obs, mask, player = vg.reset()
    assert obs.dtype == np.float32 and obs.shape == (B, F.FEAT_SIZE)
    games = [Game(rules, seed=game_seed(seed, i)) for i in range(B)]
    rng = np.random.default_rng(3)
    restarted = 0
    for _ in range(300):
        for i, g in enumerate(games):
            assert g.current_player == player[i] and (g.legal_mask() == mask[i]).all()
            assert obs[i].tobytes() == g.observe(int(player[i]), "features").tobytes(), f"slot {i}"
        a = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int64)
        for i, g in enumerate(games):
            g.step(int(a[i]))
        obs, mask, player, _, done = vg.step(a)
        for i in np.flatnonzero(done):
            games[i] = Game(rules, seed=game_seed(seed, int(vg.game_index[i])))
            restarted += 1
    assert restarted >= 1


# --------------------------------------------------------------------------- bad inputs
S = O.OBS_SCALAR
# (what, index, value) outside what the environment produces (docs/observation.md)
BAD_SEGMENT_VALUES = [
    ("hand count 5", O.OBS_HAND + 3, 5), ("hand count -1", O.OBS_HAND, -1),
    ("drawn 2", O.OBS_DRAWN + 7, 2), ("side count 5", O.OBS_SIDE + 40, 5),
    ("river kind 37", O.OBS_RIVER + 5, 37), ("river kind -1", O.OBS_RIVER, -1),
    ("meld kind 37", O.OBS_MELD + 1, 37), ("claim kind 37", O.OBS_CLAIM + 2, 37),
    ("claim -2", O.OBS_CLAIM + 1, -2), ("int16 overflow", O.OBS_HAND, 70000),
]
BAD_SCALAR_VALUES = [
    ("seat 4", S + O.S_SEAT, 4), ("hand index 5", S + O.S_HAND, 5), ("start seat -1", S + O.S_START, -1),
    ("lap 0", S + O.S_LAP, 0), ("lap 1000", S + O.S_LAP, 1000), ("phase 4", S + O.S_PHASE, 4),
    ("slot 76", S + O.S_SLOT, 76), ("wins 4", S + O.S_NWINS, 4), ("took 3", S + O.S_TOOK, 3),
    ("picked kind+1 37", S + O.S_PICK_KIND, 37), ("exchange left 17", S + O.S_EXCH_LEFT, 17),
    ("retired 2", S + O.S_RETIRED, 2), ("square left 37", S + O.S_SQUARE_LEFT, 37),
    ("square left -1", S + O.S_SQUARE_LEFT + 1, -1), ("reserved 1", S + 22, 1),
    ("river flag 512", O.OBS_RFLAG, 512), ("meld type 5", O.OBS_MELD, 5),
]

_CHILD = r"""
import json, sys
import numpy as np
from majiang_env import Game, RuleConfig
from majiang_env.engine.encodings import FeatureEncoder, observation_space
A_DRAW, NUM_ACTIONS = 110, 156   # docs/api.md
spec = json.loads(sys.argv[1])
g = Game(RuleConfig(hands_per_game=1), seed=5, auto_forced=False)
while g.phase == "exchange":
    g.step(g.legal_actions()[0])
g.step(A_DRAW)
obs, mask = g.observe(g.current_player), g.legal_mask()
enc = FeatureEncoder()
box = observation_space("features")
res = {}

def probe(name, fn):
    sys.stderr.write("PROBE " + name + "\n"); sys.stderr.flush()
    try:
        out = fn()
    except ValueError as e:
        res[name] = "ValueError"
        return
    except Exception as e:
        res[name] = "other " + type(e).__name__ + ": " + str(e)[:200]
        return
    out = np.asarray(out)
    if out.shape != box.shape or out.dtype != np.float32 or not np.isfinite(out).all():
        res[name] = "bad result %r %r" % (out.dtype, out.shape)
    else:
        res[name] = "returned " + ("in box" if ((out >= box.low) & (out <= box.high)).all()
                                   else "outside the box: min %r max %r" % (out.min(), out.max()))

for name, i, v in spec["values"]:
    o = obs.astype(np.int64)
    o[i] = v
    o = o if name == "int16 overflow" else o.astype(np.int16)
    probe(name, lambda: enc(o, mask))
shapes = {"obs 435": (obs[:435], mask), "obs 437": (np.r_[obs, 0].astype(np.int16), mask),
          "obs 2-d": (obs[None], mask), "obs scalar": (np.int16(0), mask),
          "mask 155": (obs, mask[:155]), "mask 2-d": (obs, mask[:, None]),
          "obs float64": (obs.astype(np.float64), mask), "obs float32": (obs.astype(np.float32), mask),
          "mask float": (obs, mask.astype(np.float32)), "obs bool": (obs != 0, mask),
          "obs object": (obs.astype(object), mask), "obs complex": (obs.astype(complex), mask),
          "obs str": ("x" * 436, mask), "obs None": (None, mask), "mask None": (obs, None),
          "obs list of floats": ([0.5] * 436, mask)}
for name, (o, m) in shapes.items():
    probe(name, lambda: enc(o, m))
# in-range garbage: every field at random within what the environment produces, random masks
rng = np.random.default_rng(0)
for t in range(spec["fuzz"]):
    o = np.zeros(436, np.int16)
    o[0:36] = rng.integers(0, 5, 36); o[36 + rng.integers(36)] = rng.integers(2)
    o[72:216] = rng.integers(0, 5, 144); o[216:288] = rng.integers(0, 37, 72)
    o[288:360] = rng.integers(0, 512, 72)
    o[360:408] = rng.integers(0, 37, 48); o[360:408:3] = rng.integers(0, 5, 16)
    o[408:412] = rng.integers(0, 37, 4)
    s = 412
    o[s:s + 22] = [rng.integers(4), rng.integers(4), rng.integers(4), rng.integers(1, 20),
                   rng.integers(4), rng.integers(76), rng.integers(4), rng.integers(3),
                   rng.integers(37), rng.integers(17), *rng.integers(0, 2, 4),
                   *rng.integers(-3000, 3000, 4), *rng.integers(0, 37, 4)]
    m = (rng.random(NUM_ACTIONS) < rng.random()).astype(np.int8)
    probe("fuzz %d" % t, lambda: enc(o, m))
print(json.dumps(res))
"""


@pytest.fixture(scope="module")
def bad_input_results():
    """Run every probe in a child process, so that a crash fails the test, not pytest."""
    spec = {"values": BAD_SEGMENT_VALUES + BAD_SCALAR_VALUES, "fuzz": 300}
    p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], check=False, cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    last = [ln for ln in p.stderr.splitlines() if ln.startswith("PROBE")][-1:]
    assert p.returncode == 0, f"the child crashed (rc {p.returncode}) at {last}: {p.stderr[-2000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_bad_shapes_and_dtypes_raise(bad_input_results):
    shapes = {k: v for k, v in bad_input_results.items() if k.startswith(("obs ", "mask "))}
    assert len(shapes) == 16
    assert {k: v for k, v in shapes.items() if v != "ValueError"} == {}


def test_out_of_range_segment_values_raise(bad_input_results):
    """Counts and kinds outside their segment's range (and values past int16)."""
    got = {w: bad_input_results[w] for w, _, _ in BAD_SEGMENT_VALUES}
    assert {w: r for w, r in got.items() if r != "ValueError"} == {}


def test_out_of_range_scalar_values_raise(bad_input_results):
    """Scalars, river flags and meld types outside the ranges docs/observation.md gives."""
    got = {w: bad_input_results[w] for w, _, _ in BAD_SCALAR_VALUES}
    assert {w: r for w, r in got.items() if r != "ValueError"} == {}


def test_in_range_garbage_never_crashes(bad_input_results):
    """Observations with every value in its range but no game behind them (a river
    may even hold 5 copies of a kind), and masks that do not fit them: no crash,
    a finite vector (or a ValueError)."""
    fuzz = {k: v for k, v in bad_input_results.items() if k.startswith("fuzz ")}
    assert len(fuzz) == 300
    assert {k: v for k, v in fuzz.items() if not v.startswith(("ValueError", "returned"))} == {}
