"""Each observation channel means what majiang_env/engine/kernel/observe.py and the env
card say, checked on hand-made positions; and hidden cards never show."""
import random

import numpy as np
import pytest
from helpers import biased_choice, card_places, counts, deal, squares_of, swap_cards

from majiang_env import Game, RuleConfig
from majiang_env.engine.kernel import observe as O

# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_MINKAN, A_DRAW = 0, 36, 72, 110
A_PUNG, A_CHOW, A_RON, A_EXCHANGE = 111, 114, 117, 120

S = O.OBS_SCALAR
NO_EXCHANGE = RuleConfig(hands_per_game=1, exchange=False)


def seg(obs, start, r, width):
    return obs[start + r * width:start + (r + 1) * width]


def meld(obs, r, i):
    return obs[O.OBS_MELD + (r * 4 + i) * 3:O.OBS_MELD + (r * 4 + i) * 3 + 3].tolist()


HANDS = [
    [4, 0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 28, 35],     # seat 0 discards 青5 (kind 4)
    [4, 4, 30, 12, 13, 14, 21, 22, 23, 31, 32, 33, 34],   # seat 1 pungs it
    [3, 3, 3, 8, 15, 16, 17, 24, 25, 26, 5, 6, 7],        # seat 2 draws, discards 青9
    [5, 6, 0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 28],       # seat 3 chows 青5 from seat 0
]
DRAWS = [[8], [29], [17], [30]]


@pytest.fixture
def game():
    return Game(NO_EXCHANGE, seed=0, auto_forced=False, squares=deal(HANDS, DRAWS))


def test_hand_drawn_and_scalars(game):
    g = game
    assert g.current_player == 0 and g.legal_actions() == [A_DRAW]
    for seat in range(4):
        o = g.observe(seat)
        assert (seg(o, O.OBS_HAND, 0, 36) == counts(HANDS[seat])).all()
        assert o[S] == seat and o[S + 1] == 0 and o[S + 2] == (0 - seat) % 4
        assert o[S + 3] == 1 and o[S + 4] == 1 and o[S + 5] == 0 and o[S + 6] == 0
        assert o[S + 9] == 0  # exchange off: no 変 decisions
        assert (o[S + 18:S + 22] == 23).all()  # 36 - 13 dealt
    g.step(A_DRAW)  # seat 0 draws 青9 (kind 8)
    o0 = g.observe(0)
    assert o0[O.OBS_DRAWN + 8] == 1 and o0[O.OBS_DRAWN:O.OBS_DRAWN + O.OBS_DRAWN_LEN].sum() == 1
    assert (seg(o0, O.OBS_HAND, 0, 36) == counts(HANDS[0])).all()  # not in the hand yet
    assert o0[S + 4] == 2 and o0[S + 7] == 1 and o0[S + 8] == 0
    assert not g.is_legal(A_DISCARD + 8)  # the drawn card cannot be discarded (default rules)
    for seat in (1, 2, 3):
        o = g.observe(seat)
        assert o[O.OBS_DRAWN:O.OBS_DRAWN + O.OBS_DRAWN_LEN].sum() == 0 and o[S + 7] == 0
        assert o[S + 18 + (0 - seat) % 4] == 22  # seat 0's square shrank, seen by all
    g.step(A_DISCARD + 4)
    o0 = g.observe(0)
    assert (seg(o0, O.OBS_HAND, 0, 36) == counts(HANDS[0][1:] + [8])).all()  # drawn card joined
    assert o0[O.OBS_DRAWN:O.OBS_DRAWN + O.OBS_DRAWN_LEN].sum() == 0


def test_discard_drawn_shows_drawn_card_once():
    rules = RuleConfig(hands_per_game=1, exchange=False, discard_drawn=True)
    g = Game(rules, seed=0, auto_forced=False, squares=deal(HANDS, DRAWS))
    g.step(A_DRAW)
    o = g.observe(0)
    assert o[O.OBS_DRAWN + 8] == 1
    assert (seg(o, O.OBS_HAND, 0, 36) == counts(HANDS[0])).all()
    assert g.is_legal(A_DISCARD + 8)


def test_river_claims_flags_and_melds(game):
    g = game
    g.step(A_DRAW)
    g.step(A_DISCARD + 4)                                   # seat 0: 打 青5
    for seat in range(4):
        o = g.observe(seat)
        r0 = (0 - seat) % 4                     # seat 0 relative to the observer
        assert seg(o, O.OBS_RIVER, r0, 18).tolist() == [5] + [0] * 17
        claim = o[O.OBS_CLAIM:O.OBS_CLAIM + 4].tolist()
        assert claim == [0 if r != r0 or seat == 0 else 5 for r in range(4)]
    assert g.current_player == 1 and g.is_legal(A_PUNG + 2)
    g.step(A_PUNG + 2)                                 # seat 1: 刻 on seat 0's 青5 (offset 3)
    o1 = g.observe(1)
    assert meld(o1, 0, 0) == [1, 5, 5]
    assert o1[O.OBS_HAND + 4] == 0 and o1[S + 7] == 2 and o1[S + 8] == 5
    assert o1[O.OBS_DRAWN:O.OBS_DRAWN + O.OBS_DRAWN_LEN].sum() == 0
    for seat in range(4):
        o = g.observe(seat)
        assert meld(o, (1 - seat) % 4, 0) == [1, 5, 5]
        # the discard stays in the river, marked as picked up by seat 1
        assert o[O.OBS_RFLAG + (0 - seat) % 4 * 18] == 1 << (1 - seat) % 4
        assert o[S + 18 + (1 - seat) % 4] == 22    # 13 dealt + the stand-in
    g.step(A_DISCARD + 30)                                  # seat 1: 打 緑4
    g.step(A_DRAW)
    g.step(A_DISCARD + 8)                                   # seat 2: 引, 打 青9
    o3 = g.observe(3)
    # seat 3 may use seat 0's (r1), seat 1's (r2) and seat 2's (r3) latest discards
    assert o3[O.OBS_CLAIM:O.OBS_CLAIM + 4].tolist() == [0, 5, 31, 9]
    assert g.is_legal(A_CHOW)
    g.step(A_CHOW)                                 # seat 3: 順 青5-6-7, 青5 the low card
    for seat in range(4):
        o = g.observe(seat)
        assert meld(o, (3 - seat) % 4, 0) == [2, 5, 5]
        flags = o[O.OBS_RFLAG + (0 - seat) % 4 * 18]
        assert flags == (1 << (1 - seat) % 4) | (1 << (3 - seat) % 4)
    g.step(A_DISCARD + 0)                                   # seat 3: 打 青1
    o0 = g.observe(0)
    assert o0[S + 5] == 4 and o0[S + 3] == 2    # slot 4: lap 2
    assert o0[O.OBS_CLAIM:O.OBS_CLAIM + 4].tolist() == [0, 31, 9, 1]
    assert seg(o0, O.OBS_RIVER, 2, 18)[0] == 9 and seg(o0, O.OBS_RIVER, 3, 18)[0] == 1


@pytest.mark.parametrize("public", [False, True])
def test_side_cards(public):
    g = Game(RuleConfig(side_cards_public=public), seed=3)
    assert g.phase == "exchange"
    while g.phase == "exchange":
        g.step(g.legal_actions()[0])
    sides = [[c for c, where in card_places(g).items() if where == [f"side{p}"]] for p in range(4)]
    for seat in range(4):
        o = g.observe(seat)
        assert o[S + 9] == 0  # all 16 変 decisions made
        for r in range(4):
            p = (seat + r) % 4
            want = counts([c >> 2 for c in sides[p]]) if (r == 0 or public) else np.zeros(36)
            assert (seg(o, O.OBS_SIDE, r, 36) == want).all()


def test_win_flags_retired_and_scores():
    """After a 栄 every observer sees who won on which discard, who retired, and the scores."""
    rng = random.Random(1)
    seen = 0
    for seed in range(40):
        g = Game(seed=seed, auto_forced=False)
        while not g.done and seen < 3:
            a = biased_choice(rng, g.legal_actions())
            p = g.current_player
            h = g.hand_index
            g.step(a)
            if A_RON <= a < A_EXCHANGE and g.hand_index == h:
                q = (p + a - A_RON + 1) % 4
                for o_seat in range(4):
                    o = g.observe(o_seat)
                    n = int((seg(o, O.OBS_RIVER, (q - o_seat) % 4, 18) > 0).sum())
                    flag = o[O.OBS_RFLAG + (q - o_seat) % 4 * 18 + n - 1]
                    assert flag & (16 << (p - o_seat) % 4)
                    assert o[S + 10 + (p - o_seat) % 4] == 1
                    assert o[S + 6] >= 1
                    assert o[S + 14:S + 18].tolist() == np.roll(g.scores, -o_seat).tolist()
                seen += 1
        if seen >= 3:
            break
    assert seen >= 3


def test_kan_melds_and_flags():
    """暗: type 3, claimed field 0, the kan card in the river flagged (bit 8); 明 after a 刻."""
    hands = [list(HANDS[0]), list(HANDS[1]), list(HANDS[2]), list(HANDS[3])]
    hands[1] = [4, 4, 4, 12, 12, 12, 12, 22, 23, 31, 32, 33, 34]  # four 赤4 for 暗, pung 青5
    hands[2] = [3, 3, 3, 8, 15, 16, 17, 24, 25, 26, 5, 6, 7]
    g = Game(NO_EXCHANGE, seed=0, auto_forced=False, squares=deal(hands, DRAWS))
    g.step(A_DRAW)
    g.step(A_DISCARD + 4)
    g.step(A_PUNG + 2)                    # seat 1: 刻 青5 (keeps a third 青5 in hand)
    assert g.is_legal(A_ANKAN + 12) and g.is_legal(A_MINKAN + 4)
    g.step(A_MINKAN + 4)           # 明 on the 青5 刻
    o = g.observe(0)
    assert meld(o, 1, 0) == [4, 5, 5]
    assert seg(o, O.OBS_RIVER, 1, 18)[0] == 5 and o[O.OBS_RFLAG + 18] == 256
    g.step(A_DRAW)
    g.step(A_DISCARD + 8)                      # seat 2
    g.step(A_DRAW)
    g.step(A_DISCARD + 0)                      # seat 3
    g.step(A_DRAW)
    g.step(A_DISCARD + 0)                      # seat 0
    g.step(A_DRAW)
    assert g.is_legal(A_ANKAN + 12)
    g.step(A_ANKAN + 12)           # seat 1: 暗 赤4
    o = g.observe(2)
    assert meld(o, 3, 1) == [3, 13, 0]
    assert seg(o, O.OBS_RIVER, 3, 18)[1] == 13 and o[O.OBS_RFLAG + 3 * 18 + 1] == 256


@pytest.mark.parametrize("seed", range(4))
def test_no_hand_leak(seed):
    """Swap two cards held in the hands of two opponents of the observer (seats 1
    and 2) for the whole deal: while each stays in its hand (or, earlier, its
    square), seats 0 and 3 see byte-identical observations and masks at every
    decision."""
    rng = random.Random(seed)
    g = Game(seed=seed, auto_forced=False)
    actions = []
    while not (g.phase == "take" and g.current_player == 0 and g.lap >= 3):
        a = rng.choice(g.legal_actions())
        actions.append(a)
        g.step(a)
    places = card_places(g)
    held = [[c for c, w in places.items() if w == [f"hand{p}"]] for p in (1, 2)]
    squares = squares_of(g)
    compared = 0
    # a card of a kind the other seat does not hold, so no copy of it moves instead
    pairs = [(c1, c2) for c1 in held[0] for c2 in held[1]
             if g.observe(2)[c1 >> 2] == 0 and g.observe(1)[c2 >> 2] == 0]
    for c1, c2 in pairs:
        swapped = swap_cards(squares, c1, c2)
        a_game, b_game = Game(seed=seed, auto_forced=False), Game(seed=seed, auto_forced=False,
                                                                  squares=swapped)
        ok, n = True, 0
        for a in actions + [None] * 40:
            pa, pb = card_places(a_game), card_places(b_game)
            if not (pa[c1] == pb[c2] in (["hand1"], ["square1"])
                    and pa[c2] == pb[c1] in (["hand2"], ["square2"])):
                break
            for seat in (0, 3):
                assert a_game.observe(seat).tobytes() == b_game.observe(seat).tobytes()
            if a_game.current_player in (0, 3):
                assert a_game.legal_actions() == b_game.legal_actions()
            both = sorted(set(a_game.legal_actions()) & set(b_game.legal_actions()))
            if a is None:
                if not both:
                    break
                a = rng.choice(both)
            if a not in both:
                ok = False
                break
            a_game.step(a)
            b_game.step(a)
            n += 1
        if ok and n > len(actions):
            compared = n
            break
    assert compared > len(actions)
