import json
import random
import subprocess
import sys

import numpy as np
import pytest
from helpers import biased_choice, card_places, hand_size, play

from majiang_env import Game, RecordError, RuleConfig, replay
from majiang_env.engine.kernel import cards, scoring, step
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.tables import win_table

# action ids (docs/api.md)
A_DISCARD, A_TSUMO, A_PASS, A_DRAW, A_PUNG, A_CHOW, A_RON, A_EXCHANGE = 0, 108, 109, 110, 111, 114, 117, 120
NUM_ACTIONS = 156


def random_rules(rng):
    return RuleConfig(hands_per_game=rng.choice([1, 2, 4]), chow_from=rng.choice(["next", "previous"]),
                      exchange=rng.random() < 0.7, side_cards_public=rng.random() < 0.5,
                      discard_drawn=rng.random() < 0.3, kuikae=rng.random() < 0.5,
                      furiten=rng.random() < 0.3, require_yaku=rng.random() < 0.3,
                      wins_to_close=rng.choice([1, 2, 3]),
                      payment=rng.choice(["zero_sum", "winner_only"]))


# ---- RuleConfig ----------------------------------------------------------------
def test_rule_defaults_match_rules_md():
    r = RuleConfig()
    assert (r.hands_per_game, r.chow_from, r.exchange, r.side_cards_public, r.discard_drawn,
            r.kuikae, r.furiten, r.require_yaku, r.wins_to_close, r.payment) == \
        (4, "next", True, False, False, True, False, False, 3, "zero_sum")


@pytest.mark.parametrize("field,value", [("wins_to_close", 4), ("chow_from", "left"),
                                         ("payment", "x"), ("exchange", 1), ("hands_per_game", 0)])
def test_bad_rule_value(field, value):
    with pytest.raises(ValueError, match=field):
        RuleConfig(**{field: value})


# ---- tables: the win table's brute-force check is in test_tables.py (vectorised) ------


# ---- scoring ---------------------------------------------------------------------
def _state_with_hand(seat, kinds):
    st = np.zeros(L.SIZE, np.int32)
    used = {}
    for k in kinds:
        c = used.get(k, 0)
        used[k] = c + 1
        cards.add_card(st, seat, k * 4 + c)
    return st


def test_rules_example_scores_48():
    # 青123 青456 赤789 赤789 + 黄5 pair, winner 東 (seat 0)
    kinds = [0, 1, 2, 3, 4, 5, 15, 16, 17, 15, 16, 17, 22, 22]
    st = _state_with_hand(0, kinds)
    out = np.zeros(15, np.int64)
    assert scoring.is_win(st, win_table(), 0, -1)
    assert scoring.score_win(st, 0, -1, out) == 48


def test_own_colour_triplet_and_no_pattern():
    # 青777 赤123 黄456 緑123 + 緑44 pair (the only reading). By docs/rules.md §9:
    # - 青777 is an own-colour triplet (g = 0) for 東 (seat 0, colour 青): 7 points;
    # - runs 赤123 (v 1), 黄456 (v 4), 緑123 (v 1): 赤123 + 緑123 is 同順 (all v equal,
    #   2 melds, k = 2 colours: g = 1, p = 5) = 15; 赤123 + 黄456 and 黄456 + 緑123 are
    #   筋順 (step 3, k = 2) = 13; the three runs (v 1 1 4) make no shape;
    # - best disjoint reading: 7 + 15 = 22 for 東; for 南 (seat 1, 赤) 青777 is not its
    #   colour and no triplet pattern is left: 15.
    kinds = [6, 6, 6, 9 + 0, 9 + 1, 9 + 2, 18 + 3, 18 + 4, 18 + 5, 27 + 0, 27 + 1, 27 + 2, 30, 30]
    out = np.zeros(15, np.int64)
    assert [scoring.score_win(_state_with_hand(p, kinds), p, -1, out) for p in range(4)] == [22, 15, 15, 15]
    # 青777 黄222 赤123 緑567 + 青11 pair: the triplets (v 2, 7: step 5) and the runs
    # (v 1, 5: step 4) make no two-meld shape, so the only patterns are own-colour
    # triplets: 青777 for 東 (7), 黄222 for 西 (seat 2, 黄: 2), none for 南 and 北 (0
    # pattern points; such a win's base is 1, §9 "the lowest base is 1").
    kinds = [6, 6, 6, 19, 19, 19, 9, 10, 11, 31, 32, 33, 0, 0]
    assert [scoring.score_win(_state_with_hand(p, kinds), p, -1, out) for p in range(4)] == [7, 0, 2, 0]
    assert all(scoring.is_win(_state_with_hand(p, kinds), win_table(), p, -1) for p in range(4))


# ---- whole games: invariants, replay, determinism ---------------------------------
def _invariant_check(g):
    places = card_places(g)
    bad = {c: p for c, p in places.items() if len(p) != 1}
    assert not bad, f"cards not in exactly one place: {bad}"
    st = g._st
    for p in range(4):
        assert st[L.NRIVER + p] <= 18
    if g.phase == "take":
        assert hand_size(g, g.current_player) == 13


def _deltas_from_wins(g, h):
    """Hand h's point changes derived from its wins by docs/rules.md §9: a win's base is its
    pattern points, or 1 without a pattern; the winner gains 3 x base; under zero_sum
    the owner of the claimed discard pays all of it for 栄, and each other seat pays
    base for 模; under winner_only nobody pays."""
    want = [0, 0, 0, 0]
    for w in g.wins(h):
        base = w["base"]
        assert base == max(1, sum(p["points"] for p in w["patterns"]))
        want[w["seat"]] += 3 * base
        if g.rules.payment == "zero_sum" and w["from"] is not None:  # 栄
            want[w["from"]] -= 3 * base
        elif g.rules.payment == "zero_sum":  # 模
            for q in range(4):
                if q != w["seat"]:
                    want[q] -= base
    return want


@pytest.mark.parametrize("seed", range(12))
def test_invariants_and_replay(seed):
    rng = random.Random(seed)
    rules = RuleConfig() if seed < 4 else random_rules(rng)
    g = play(Game(rules, seed=seed), rng, check=_invariant_check)
    assert g.current_player == -1 and g.legal_actions() == []
    if rules.payment == "zero_sum":
        assert g.scores.sum() == 0
        for h in range(rules.hands_per_game):
            assert g.hand_deltas(h).sum() == 0
    for h in range(rules.hands_per_game):
        assert g.hand_deltas(h).tolist() == _deltas_from_wins(g, h)
    assert g.scores.tolist() == [sum(int(g.hand_deltas(h)[p]) for h in range(rules.hands_per_game))
                                 for p in range(4)]
    rec = g.record(legal=True)
    json.dumps(rec)
    g2 = replay(rec)
    assert g2.record() == g.record()
    assert (g2.scores == g.scores).all()


def test_wins_happen_with_biased_policy():
    wins = 0
    for seed in range(20):
        g = play(Game(seed=seed), random.Random(seed))
        wins += sum(len(g.wins(h)) for h in range(4))
        for h in range(4):
            assert g.hand_deltas(h).tolist() == _deltas_from_wins(g, h)
    assert wins >= 5


def test_no_game_is_over_before_its_first_chosen_decision():
    """A win is always chosen (never forced) and a hand cannot run out on forced moves alone, so a
    new game always waits for a decision; the AEC and RLlib envs' reset relies on it. Checked under
    the rules that end a game soonest."""
    rules = RuleConfig(hands_per_game=1, exchange=False, wins_to_close=1)
    for seed in range(5000):
        g = Game(rules, seed=seed)
        assert not g.done and g.legal_mask().sum() >= 2


def test_same_seed_same_record_in_fresh_process():
    code = ("import random, json, majiang_env as m\n"
            "import sys; sys.path.insert(0, 'tests')\n"
            "from helpers import play\n"
            "g = play(m.Game(seed=77), random.Random(5))\n"
            "print(json.dumps(g.record()))")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=str(__import__('pathlib').Path(__file__).parents[2])).stdout
            for _ in range(2)]
    assert outs[0] == outs[1]
    g = play(Game(seed=77), random.Random(5))
    assert json.loads(outs[0]) == json.loads(json.dumps(g.record()))


# ---- hand-built rule cases ------------------------------------------------------------
def test_drawn_card_not_discardable_by_default():
    for discard_drawn in (False, True):
        g = Game(RuleConfig(exchange=False, discard_drawn=discard_drawn), seed=3, auto_forced=False)
        g.step(A_DRAW)
        drawn = int(g._st[L.DRAWN]) >> 2
        held = int(g._st[L.HCNT + g.current_player * 36 + drawn])
        assert bool(g.legal_mask()[A_DISCARD + drawn]) == (held > 0 or discard_drawn)


def test_last_lap_only_draw_ron_then_tsumo_pass():
    rng = random.Random(1)
    # auto_forced=False: the last lap's decisions are mostly forced (a lone 引, a lone
    # pass), and with auto_forced they would be applied without ever being checked here
    g = Game(RuleConfig(exchange=False, hands_per_game=1), seed=11, auto_forced=False)
    last_lap = []
    while not g.done:
        legal = g.legal_actions()
        if g.lap == 19:
            last_lap.append((g.current_player, g.phase))
            if g.phase == "take":
                assert set(legal) <= {A_DRAW, A_RON, A_RON + 1, A_RON + 2}
            else:
                assert A_PASS in legal and set(legal) <= {A_TSUMO, A_PASS}
        else:
            assert A_PASS not in legal
        g.step(rng.choice([a for a in legal if a not in (A_TSUMO, A_RON, A_RON + 1, A_RON + 2)] or legal))
    # The policy never wins, so the hand runs to its end (docs/rules.md §6, §8): 19 laps of
    # one take and one discard-phase action per seat, 19 * 4 * 2 = 152 decisions; lap 19
    # is reached and ends with 引 then pass for seats 0-3 (hand 0 starts at seat 0);
    # an exhaustive draw pays nothing.
    assert last_lap == [(p, ph) for p in range(4) for ph in ("take", "discard")]
    decisions = g.record()["hands"][0]["decisions"]
    assert len(decisions) == 152
    assert decisions[-8:] == [[p, a] for p in range(4) for a in (A_DRAW, A_PASS)]
    assert g.scores.tolist() == [0, 0, 0, 0] and g.wins(0) == []


def _expected_chows(st, p, q):
    n = st[L.NRIVER + q]
    if n == 0 or st[L.RSLOT + q * 18 + n - 1] <= st[L.LAST + p]:
        return set()
    k = int(st[L.RIVER + q * 18 + n - 1]) >> 2
    num, have = k % 9, lambda kk: st[L.HCNT + p * 36 + kk] > 0
    out = set()
    if num <= 6 and have(k + 1) and have(k + 2):
        out.add(A_CHOW)
    if 1 <= num <= 7 and have(k - 1) and have(k + 1):
        out.add(A_CHOW + 1)
    if num >= 2 and have(k - 2) and have(k - 1):
        out.add(A_CHOW + 2)
    return out


@pytest.mark.parametrize("chow_from", ["next", "previous"])
def test_claimable_only_latest_and_since_previous_turn(chow_from):
    off = 1 if chow_from == "next" else 3
    seen_chow = 0
    for seed in range(6):
        rng = random.Random(seed)
        g = Game(RuleConfig(exchange=False, chow_from=chow_from), seed=seed, auto_forced=False)
        while not g.done:
            st = g._st
            p = g.current_player
            legal = set(g.legal_actions())
            if g.phase == "take" and g.lap < 19:
                for d in range(1, 4):
                    q = (p + d) % 4
                    n = st[L.NRIVER + q]
                    fresh = n > 0 and st[L.RSLOT + q * 18 + n - 1] > st[L.LAST + p]
                    if not fresh:
                        assert (A_PUNG + d - 1) not in legal and (A_RON + d - 1) not in legal
                # 順 only from the chow-source seat: a run with another seat's discard is not offered
                chows = legal & {A_CHOW, A_CHOW + 1, A_CHOW + 2}
                assert chows == _expected_chows(st, p, (p + off) % 4)
                seen_chow += bool(chows)
            g.step(biased_choice(rng, sorted(legal)))
    assert seen_chow > 0


def test_kan_card_can_be_won_on_and_picked_up():
    """A 暗/明 card lies in the river like a discard: claimable (for 刻/順/栄) by others."""
    found = 0
    for seed in range(40):
        rng = random.Random(seed)
        g = Game(RuleConfig(exchange=False), seed=seed, auto_forced=False)
        while not g.done:
            st = g._st
            p = g.current_player
            if g.phase == "take":
                for d in range(1, 4):
                    q = (p + d) % 4
                    n = st[L.NRIVER + q]
                    if n and st[L.RFLAG + q * 18 + n - 1] & 256 and st[L.RSLOT + q * 18 + n - 1] > st[L.LAST + p]:
                        k = int(st[L.RIVER + q * 18 + n - 1]) >> 2
                        legal = set(g.legal_actions())
                        assert ((A_PUNG + d - 1) in legal) == (st[L.HCNT + p * 36 + k] >= 2 and g.lap < 19)
                        assert ((A_RON + d - 1) in legal) == scoring.is_win(st, win_table(), p, k)
                        found += 1
            g.step(biased_choice(rng, g.legal_actions()))
    assert found > 0


# ---- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-1, NUM_ACTIONS, 10 ** 9, 1.0, "3", None, True])
def test_bad_actions_raise_and_change_nothing(bad):
    g = Game(seed=4)
    before = g._st.copy()
    with pytest.raises(ValueError) as e:
        g.step(bad)
    assert "legal ids" in str(e.value) and "phase" in str(e.value)
    assert (g._st == before).all()


def test_illegal_action_and_after_game_over():
    g = Game(seed=4)
    with pytest.raises(ValueError, match="not legal"):
        g.step(A_DRAW)  # exchange phase: drawing is illegal
    play(g, random.Random(0))
    with pytest.raises(ValueError, match="over"):
        g.step(A_DRAW)


def test_corrupted_records():
    g = play(Game(RuleConfig(hands_per_game=1), seed=9), random.Random(9))
    rec = g.record()

    def spoiled(change):
        r = json.loads(json.dumps(rec))
        change(r)
        return r

    def copy_first_square_card(r):
        r["hands"][0]["squares"][0][0] = r["hands"][0]["squares"][0][1]

    cases = [spoiled(lambda r: r.update(format="majiang-record/0")),
             spoiled(copy_first_square_card),
             spoiled(lambda r: r["hands"][0]["decisions"][20].__setitem__(1, A_EXCHANGE + 35)),
             spoiled(lambda r: r["hands"][0]["decisions"][3].__setitem__(0, 3)),
             spoiled(lambda r: r.update(scores=[1, 2, 3, 4])),
             spoiled(lambda r: r["rules"].update(payment="nope")),
             spoiled(lambda r: r["hands"][0]["decisions"].__setitem__(5, "x")),
             spoiled(lambda r: r.pop("hands")),
             json.dumps(rec)[:200]]
    for bad in cases:
        with pytest.raises(RecordError):
            replay(bad)


def test_layout_lifetimes_reset_every_field():
    """A state row full of garbage, dealt and reset by new_game, equals a fresh one:
    every field is reset by the lifetime it declares in kernel/layout.py."""
    from majiang_env.engine.kernel import layout as L
    g = Game(seed=5)
    rng = np.random.default_rng(0)
    for fill in (rng.integers(-2 ** 31, 2 ** 31 - 1, L.SIZE, dtype=np.int64), np.full(L.SIZE, -1),
                 np.full(L.SIZE, 7)):
        st = fill.astype(np.int32)
        cards.deal_squares(st, np.uint64(g.seed))
        step.new_game(st, g._rules)
        fresh = np.zeros(L.SIZE, np.int32)
        cards.deal_squares(fresh, np.uint64(g.seed))
        step.new_game(fresh, g._rules)
        assert np.array_equal(st, fresh), [f[0] for f in L.FIELDS
                                           if not np.array_equal(st[f[1]:f[1] + int(np.prod(f[2]))],
                                                                 fresh[f[1]:f[1] + int(np.prod(f[2]))])]
    lives = {f[3] for f in L.FIELDS}
    assert lives == {L.DEAL, L.GAME, L.HAND_LIFE, L.TURN}
    covered = sum(int(np.prod(f[2])) for f in L.FIELDS)
    assert covered == L.SIZE  # no slot of the row is outside a declared field


def test_named_views_of_the_state_row():
    """Every field of kernel/layout.py has an identifier; ``layout.view`` and ``StateView``
    give it as a numpy view of its shape at its offset, writing through to the row; a
    batch of rows gives views with a leading batch axis."""
    row = np.arange(L.SIZE, dtype=np.int32)
    s = L.StateView(row)
    for f in L.FIELDS:
        v = getattr(s, f.name)
        assert f.name.isidentifier() and v.shape == f.shape and np.shares_memory(v, row)
        assert v.ravel().tolist() == list(range(f.offset, f.offset + v.size))
        assert np.array_equal(L.view(row, f.name), v)
    assert int(s.to_act) == L.CUR and s.hand_counts[2, 5] == L.HCNT + 2 * 36 + 5
    s.melds[1, 2, L.M_KIND] = -7
    assert row[L.MELDS + (1 * 4 + 2) * L.MELD_W + L.M_KIND] == -7
    batch = np.zeros((3, L.SIZE), np.int32)
    assert L.view(batch, "melds").shape == (3, 4, 4, L.MELD_W) and L.StateView(batch).to_act.shape == (3,)
    L.view(batch, "to_act")[1] = 2
    assert batch[:, L.CUR].tolist() == [0, 2, 0]
    with pytest.raises(AttributeError):
        _ = s.no_such_field
