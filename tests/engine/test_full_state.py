"""The full-information state (``Game.full_state()``, ``majiang-state/1``): read back
with the independent reader of ``tests/state_reader.py`` over whole games under
several rule sets, it equals the kernel row field by field, places every card
exactly once, stays within its bounds and projects to every seat's observation."""
import random

import numpy as np
import pytest
import state_reader as R
from helpers import biased_choice

from majiang_env import Game, RuleConfig
from majiang_env.engine.game import game_from_state
from majiang_env.engine.kernel import fullstate as F
from majiang_env.engine.kernel import layout as L

RULE_SETS = [RuleConfig(), RuleConfig(side_cards_public=True), RuleConfig(exchange=False),
             RuleConfig(discard_drawn=True, kuikae=False),
             RuleConfig(chow_from="previous", furiten=True, require_yaku=True, wins_to_close=2, hands_per_game=2)]
RULE_IDS = ["default", "side_public", "no_exchange", "discard_drawn", "previous_furiten_yaku"]


def check_against_row(x, row, rules):
    """Every part of the state read back equals what the kernel row holds."""
    s, v = R.read(x), L.StateView(row)
    over = int(v.phase) == L.PH_OVER
    cur, drawn = int(v.to_act), int(v.drawn_card)
    assert (s["hand_index"], s["start_seat"], s["phase"], s["to_act"], s["slot"], s["num_wins"]) == (
        int(v.hand_index), int(v.start_seat), int(v.phase), cur, int(v.slot), int(v.num_wins))
    assert s["lap"] == int(v.slot) // 4 + 1
    assert (s["took"], s["picked"]) == (int(v.took), int(v.picked_kind) + 1)
    assert s["exchange_left"] == (16 - int(v.num_exchanged) if rules.exchange else 0)
    assert s["retired"].tolist() == v.retired.tolist()
    assert s["scores"].tolist() == v.scores.tolist()
    assert s["square_left"].tolist() == (36 - v.square_taken).tolist()
    h = int(v.hand_index) - 1 if over else int(v.hand_index)
    for p in range(4):
        hand = s["hand"][p].copy()
        if p == cur and s["drawn"][p]:
            assert drawn >= 0 and s["drawn"][p] == drawn // 4 + 1
            if rules.discard_drawn:              # the row's hand holds it already
                hand[drawn // 4] += 1
        else:
            assert s["drawn"][p] == 0
        assert hand.tolist() == v.hand_counts[p].tolist()
        side = np.bincount(v.side[p, :int(v.num_side[p])] // 4, minlength=36)
        assert s["side"][p].tolist() == side.tolist()
        untaken = v.squares[h, p, int(v.square_taken[p]):] // 4 + 1
        assert s["square"][p].tolist() == untaken.tolist() + [0] * (36 - len(untaken))
        n = int(v.river_len[p])
        assert s["river"][p].tolist() == (v.river[p, :n] // 4 + 1).tolist() + [0] * (18 - n)
        assert s["river_flags"][p].tolist() == v.river_flags[p, :n].tolist() + [0] * (18 - n)
        for i in range(4):
            got = s["melds"][p, i].tolist()
            if i >= int(v.num_melds[p]):
                assert got == [0, 0, 0, 0]
                continue
            m = v.melds[p, i]
            t = int(m[L.M_TYPE])
            claimed = int(m[L.M_CLAIMED]) // 4 + 1 if m[L.M_CLAIMED] >= 0 else 0
            standin = 0 if t == L.MT_ANKAN else int(m[L.M_STANDIN]) // 4 + 1
            assert got == [t, int(m[L.M_KIND]) + 1, claimed, standin]
        assert s["claims"][p, p] == 0
    if drawn < 0 or over:
        assert not s["drawn"].any()


def play_checked(rules, seed, every_seat=True):
    """Play a game with biased random choices; check the state at every decision."""
    g = Game(rules, seed=seed)
    rng = random.Random(seed)
    n = 0
    while True:
        x = g.full_state()
        assert x.dtype == np.int16 and x.shape == (F.STATE_SIZE,)
        assert ((x >= F.STATE_LOW) & (x <= F.STATE_HIGH)).all()
        check_against_row(x, g.state, rules)
        assert R.kind_totals(R.read(x)).tolist() == [4] * 36      # every card in exactly one place
        for seat in range(4) if every_seat else [max(g.current_player, 0)]:
            assert np.array_equal(R.observation_of(x, seat, rules.side_cards_public), g.observe(seat))
        if g.done:
            return n
        g.step(biased_choice(rng, g.legal_actions()))
        n += 1


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_state_reads_back_exactly_over_whole_games(rules):
    decisions = sum(play_checked(rules, seed) for seed in range(3))
    assert decisions > 200


def test_documented_layout():
    assert F.STATE_FORMAT == R.FORMAT
    offsets = [F.STATE_HAND, F.STATE_DRAWN, F.STATE_SIDE, F.STATE_SQUARE, F.STATE_RIVER, F.STATE_RFLAG,
               F.STATE_MELD, F.STATE_CLAIM, F.STATE_SCALAR, F.STATE_SIZE]
    assert offsets == [R.HAND, R.DRAWN, R.SIDE, R.SQUARE, R.RIVER, R.RFLAG, R.MELD, R.CLAIM, R.SCALAR, R.SIZE]
    assert [off for _, off, _ in F.STATE_SEGMENTS] == offsets[:-1]
    ends = [off + int(np.prod(shape)) for _, off, shape in F.STATE_SEGMENTS]
    assert ends == offsets[1:]
    assert (F.STATE_LOW < F.STATE_HIGH).all()     # no entry of the Box is degenerate


def test_bounds_are_reached_where_they_say():
    """The bounds are the real ones: the hand and square extremes occur, the scalars'
    documented ranges hold (seat to act -1 once over, lap 1..19)."""
    g = Game(RuleConfig(hands_per_game=1), seed=3)
    rng = random.Random(3)
    seen_lo, seen_hi = np.full(F.STATE_SIZE, 99999), np.full(F.STATE_SIZE, -99999)
    while True:
        x = g.full_state().astype(np.int64)
        seen_lo, seen_hi = np.minimum(seen_lo, x), np.maximum(seen_hi, x)
        if g.done:
            break
        g.step(biased_choice(rng, g.legal_actions()))
    sc = F.STATE_SCALAR
    assert seen_lo[sc + F.SS_TO_ACT] == -1 and seen_hi[sc + F.SS_LAP] <= 19
    assert seen_hi[F.STATE_SQUARE:F.STATE_RIVER].max() <= 36 and seen_hi[sc + F.SS_SQUARE_LEFT] <= 36
    assert (seen_lo >= F.STATE_LOW).all() and (seen_hi <= F.STATE_HIGH).all()


def test_hidden_cards_are_in_the_state_but_not_in_any_observation():
    """Swapping the hands of seats 1 and 2 changes the state, never the observation of
    seat 0 or 3: the state holds what the observations withhold."""
    g = Game(seed=5)
    g2 = game_from_state(np.array(g.state), g.rules, g.seed)
    s = L.StateView(g2._st)
    for name in ("hand_masks", "hand_counts", "hand_keys", "face_counts", "num_concealed"):
        a = getattr(s, name)
        a[[1, 2]] = a[[2, 1]]
    x, x2 = R.read(g.full_state()), R.read(g2.full_state())
    assert np.array_equal(x2["hand"], x["hand"][[0, 2, 1, 3]]) and not np.array_equal(x2["hand"], x["hand"])
    for seat in (0, 3):
        assert np.array_equal(g.observe(seat), g2.observe(seat))


def test_game_over_shows_the_last_hand_and_sampled_worlds_read():
    g = Game(RuleConfig(hands_per_game=1), seed=11)
    rng = random.Random(0)
    mid = None
    while not g.done:
        if mid is None and g.lap >= 5:
            mid = g.sample_hidden(g.current_player, seed=1)
        g.step(biased_choice(rng, g.legal_actions()))
    s = R.read(g.full_state())
    assert s["to_act"] == -1 and s["hand_index"] == 1 and s["phase"] == L.PH_OVER
    assert R.kind_totals(s).tolist() == [4] * 36
    w = mid.full_state()                          # a sampled world: the same public table, every card placed
    check_against_row(w, mid.state, mid.rules)
    assert R.kind_totals(R.read(w)).tolist() == [4] * 36


def test_full_states_batched_equals_one_by_one():
    games = [Game(seed=s) for s in range(3)]
    rng = random.Random(1)
    for g in games:
        for _ in range(20 + 7 * g.seed):
            g.step(rng.choice(g.legal_actions()))
    rows = np.stack([np.array(g.state) for g in games])
    out = np.zeros((3, F.STATE_SIZE), np.int16)
    F.full_states(rows, games[0].rules.to_array(True), out)
    assert np.array_equal(out, np.stack([g.full_state() for g in games]))


def test_rotate_seats():
    g = Game(RuleConfig(side_cards_public=True), seed=2)
    rng = random.Random(2)
    xs, cur = [], []
    while not g.done and len(xs) < 60:
        xs.append(g.full_state())
        cur.append(g.current_player)
        g.step(biased_choice(rng, g.legal_actions()))
    for x in xs[::7]:
        for s in range(4):
            y = F.rotate_seats(x, s)
            assert np.array_equal(F.rotate_seats(y, (4 - s) % 4), x)
            a, b = R.read(x), R.read(y)
            for part in ("hand", "side", "square", "river", "melds", "drawn", "retired", "scores", "square_left"):
                assert np.array_equal(b[part], np.roll(a[part], -s, axis=0)), part
            assert b["to_act"] == (a["to_act"] - s) % 4 and b["start_seat"] == (a["start_seat"] - s) % 4
            assert np.array_equal(b["claims"], np.roll(np.roll(a["claims"], -s, 0), -s, 1))
            # seat s's view of the table is seat 0's view of the rotated one (but for its seat number)
            want = R.observation_of(x, s, True)
            want[412] = 0
            assert np.array_equal(R.observation_of(y, 0, True), want)
    batch = np.stack(xs[:8])
    seats = np.arange(8) % 4
    one_by_one = [F.rotate_seats(x, s) for x, s in zip(xs[:8], seats, strict=True)]
    assert np.array_equal(F.rotate_seats(batch, seats), np.stack(one_by_one))
    for bad in (4, -1, 1.0, True, "0"):
        with pytest.raises(ValueError, match="seat"):
            F.rotate_seats(xs[0], bad)
    with pytest.raises(ValueError, match="shape"):
        F.rotate_seats(xs[0][:10], 0)


def test_the_checks_catch_a_wrong_entry():
    """The read-back checks can fail: any one entry changed in any segment is caught."""
    rules = RuleConfig()
    g = Game(rules, seed=4)
    rng = random.Random(4)
    for _ in range(120):
        g.step(biased_choice(rng, g.legal_actions()))
    x = g.full_state()
    check_against_row(x, g.state, rules)
    for _, off, shape in F.STATE_SEGMENTS:
        for i in (off, off + int(np.prod(shape)) - 1):
            bad = x.copy()
            bad[i] = bad[i] + 1 if bad[i] < F.STATE_HIGH[i] else bad[i] - 1
            with pytest.raises(AssertionError):
                check_against_row(bad, g.state, rules)
