"""Worlds for planning, tested from their contracts only (the docstrings of ``Game.clone``,
``Game.sample_hidden``, ``VectorGame.copy_rows`` / ``sample_hidden`` and docs/rules.md §11),
never from their code. What a seat cannot see is read here independently from the state
row (``layout.StateView``): the other concealed hands, others' side cards unless public,
stand-ins, the untaken squares of the current hand, another seat's drawn card; later
hands' squares and the past hands' hidden cards must not matter either."""
import functools
import random

import numpy as np
import pytest

from majiang_env import Game, RuleConfig, VectorGame
from majiang_env.agents import GreedyAgent, game_obs
from majiang_env.engine import tables
from majiang_env.engine.game import game_from_state
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel.legal import legal as kernel_legal

P5 = 5 ** np.arange(9)
A_EXCHANGE, SQ = 120, 36
RULES = {   # every switch the worlds depend on, both ways
    "default": RuleConfig(),
    "public_drawn_previous": RuleConfig(side_cards_public=True, discard_drawn=True, chow_from="previous"),
    "no_exchange_one_hand": RuleConfig(exchange=False, hands_per_game=1, discard_drawn=True, kuikae=False),
    "one_hand_previous_win1": RuleConfig(hands_per_game=1, chow_from="previous", wins_to_close=1),
}
# chi-square critical values at p = 0.001 (scipy.stats.chi2.ppf(0.999, df)), for the dfs used below
CHI2_999 = {15: 37.70, 31: 61.10, 32: 62.49, 33: 63.87, 34: 65.25, 35: 66.62}


def biased(rng, legal):
    """Random play that prefers wins, then calls and kans, so melds and wins occur."""
    wins = [a for a in legal if a == 108 or 117 <= a < 120]
    calls = [a for a in legal if 36 <= a < 108 or 111 <= a < 117]
    if wins:
        return rng.choice(wins)
    return rng.choice(calls) if calls and rng.random() < 0.7 else rng.choice(legal)


def play_out(g, rng):
    while not g.done:
        g.step(rng.choice(g.legal_actions()))


@functools.lru_cache(maxsize=None)
def positions(name):
    """State rows of a biased-random and a greedy game: exchange, take and discard
    phases (after 引 and after a pick-up), in hand 0 and later hands, before and after
    a win of the hand, and the finished games."""
    rules, out = RULES[name], []
    for seed, greedy in ((11, False), (12, True)):
        g, rng, seen, n = Game(rules, seed=seed), random.Random(seed), set(), 0
        agents = [GreedyAgent(seed=p, rules=rules) for p in range(4)]
        while not g.done:
            v = L.StateView(g.state)
            key = (int(v.phase), int(v.took), min(int(v.hand_index), 1), int(v.num_wins) > 0)
            n += 1
            if key not in seen and n % 5 == 0:
                seen.add(key)
                out.append(np.array(g.state))
            g.step(agents[g.current_player](game_obs(g)) if greedy else biased(rng, g.legal_actions()))
        out.append(np.array(g.state))
    return out


def game_at(row, rules):
    return game_from_state(np.array(row), rules, 0)


def cases():
    return [(name, i) for name in RULES for i in range(len(positions(name)))]


# ---- an independent reading of what a seat cannot see -------------------------------
def current(v, rules):
    return min(int(v.hand_index), rules.hands_per_game - 1)


def hand_cards(v, q):
    return [k * 4 + c for k in range(36) for c in range(4) if v.hand_masks[q, k] >> c & 1]


def hidden(row, rules, s):
    """({q: concealed card ids} for q != s, row offsets of the other hidden cards)."""
    v = L.StateView(row)
    hands = {q: hand_cards(v, q) for q in range(4) if q != s}
    offs, h = [], current(v, rules)
    for q in range(4):
        if q != s and not rules.side_cards_public:
            offs += [L.SIDE + q * 4 + i for i in range(v.num_side[q])]
        for m in range(v.num_melds[q]):
            if v.melds[q, m, L.M_TYPE] != L.MT_ANKAN:   # 暗: its third card is shown
                offs.append(L.MELDS + (q * 4 + m) * L.MELD_W + L.M_STANDIN)
        base = L.SQUARES + (h * 4 + q) * SQ
        offs += range(base + v.square_taken[q], base + SQ)
    if v.drawn_card >= 0 and v.to_act != s and not rules.discard_drawn:   # else it is in the hand
        offs.append(L.DRAWN)
    return hands, offs


def unseen(row, rules, s):
    hands, offs = hidden(row, rules, s)
    return sorted(sum(hands.values(), []) + np.asarray(row)[offs].tolist())


def set_hand(row, q, cards):
    v = L.StateView(row)
    for f in (v.hand_masks, v.hand_counts, v.hand_keys, v.face_counts):
        f[q] = 0
    for c in cards:
        k = c // 4
        v.hand_masks[q, k] |= 1 << (c % 4)
        v.hand_counts[q, k] += 1
        v.hand_keys[q, k // 9] += P5[k % 9]
        v.face_counts[q, k // 9] += 1
    v.num_concealed[q] = len(cards)


def permuted(row, rules, s, rng):
    """Another state that seat s cannot tell from ``row``: the hidden card ids permuted
    consistently (hands, side cards, stand-ins, the current squares, the drawn card,
    the exchange decisions that set them aside), the past hands' squares of the other
    seats and their past 変 decisions changed, the later hands redealt, the scoring work
    space scribbled on, and the legal list of another seat to act recomputed."""
    v0, out = L.StateView(row), np.array(row)
    v, h = L.StateView(out), current(v0, rules)
    hands, offs = hidden(row, rules, s)
    ids = np.array(sum(hands.values(), []) + row[offs].tolist(), np.int64)
    pi = np.arange(144)
    pi[ids] = ids[rng.permutation(len(ids))]
    for q, cards in hands.items():
        set_hand(out, q, pi[cards])
    out[offs] = pi[row[offs]]
    v.squares[h] = pi[v0.squares[h]]                       # the taken part too (consistency)
    if v0.drawn_card >= 0 and v0.to_act != s and rules.discard_drawn:
        v.drawn_card[...] = pi[v0.drawn_card]
    for hh in range(h + 1):
        log = v.decision_log[hh, :v0.num_decisions[hh]]
        for q in range(4):
            if q == s or rules.side_cards_public:
                continue
            ex = np.flatnonzero((log[:, 0] == q) & (log[:, 1] >= A_EXCHANGE))
            if hh == h:
                log[ex, 1] = A_EXCHANGE + v.side[q, :len(ex)] // 4
            else:
                log[ex, 1] = A_EXCHANGE + rng.integers(0, 36, len(ex))
                v.squares[hh, q] = rng.permutation(v0.squares[hh, q])
    for hh in range(h + 1, L.MAX_HANDS):
        v.squares[hh] = rng.permutation(144).reshape(4, SQ)
    v.scratch[:] = rng.integers(-9, 99, L.SCRATCH_SIZE)   # work space: no meaning between calls
    if 0 <= v0.to_act != s:
        kernel_legal(out, rules.to_array(True), tables.win_table())
    return out


def count_places(row, rules):
    """How often each card id lies in the current hand's places (should be once each;
    a withheld square card, -1, is not counted)."""
    v, seen = L.StateView(row), np.zeros(144, int)
    h = current(v, rules)
    for q in range(4):
        rest = v.squares[h, q, v.square_taken[q]:]
        np.add.at(seen, rest[rest >= 0], 1)
        np.add.at(seen, hand_cards(v, q), 1)
        np.add.at(seen, v.side[q, :v.num_side[q]], 1)
        for m in v.melds[q, :v.num_melds[q]]:
            np.add.at(seen, m[L.M_CARD0:L.M_STANDIN + 1], 1)
        np.add.at(seen, v.river[q, :v.river_len[q]], 1)
    if v.drawn_card >= 0 and not rules.discard_drawn:
        seen[v.drawn_card] += 1
    return seen


def check_cards(w, rules):
    """Every card id once in the places of ``w``'s current hand. Once the game is over
    there is no current hand: a world of a finished game withholds (-1) the last hand's
    squares, so only the cards left in them may be missing, and only then."""
    seen, v = count_places(w.state, rules), L.StateView(w.state)
    h = current(v, rules)
    withheld = sum(int((v.squares[h, q, v.square_taken[q]:] < 0).sum()) for q in range(4))
    assert (seen <= 1).all() and (seen == 0).sum() == withheld, np.flatnonzero(seen != 1)
    assert not withheld or (w.done and w.sampled)


def check_hand_fields(row):
    v = L.StateView(row)
    for q in range(4):
        cnt = np.array([bin(int(x)).count("1") for x in v.hand_masks[q]])
        assert (v.hand_counts[q] == cnt).all() and v.num_concealed[q] == cnt.sum()
        for f in range(4):
            assert v.hand_keys[q, f] == (cnt[f * 9:f * 9 + 9] * P5).sum()
            assert v.face_counts[q, f] == cnt[f * 9:f * 9 + 9].sum()


PUBLIC = ("hand_index", "start_seat", "phase", "to_act", "slot", "num_wins", "num_exchanged", "closed_hand",
          "took", "picked_kind", "scores", "deltas", "num_decisions", "square_taken", "num_concealed",
          "num_side", "num_melds", "river", "river_slots", "river_flags", "river_len", "river_kinds",
          "last_slot", "retired", "wins", "win_pending")


# ---- 1. no peeking ---------------------------------------------------------------------
@pytest.mark.parametrize("name,i", cases())
def test_world_depends_only_on_what_the_seat_sees(name, i):
    rules, row = RULES[name], positions(name)[i]
    g, rng = game_at(row, rules), np.random.default_rng(i)
    for s in range(4):
        other = game_at(permuted(row, rules, s, rng), rules)
        assert np.array_equal(other.observe(s), g.observe(s))          # the premise: s cannot tell them apart
        assert unseen(other.state, rules, s) == unseen(row, rules, s)
        for seed in (0, 2 ** 63 + 5):
            w = g.sample_hidden(s, seed)
            assert np.array_equal(other.sample_hidden(s, seed).state, w.state), (s, seed)
            # a world of s looks like the game to s, so it yields the same worlds
            assert np.array_equal(w.sample_hidden(s, 7).state,
                                  g.sample_hidden(s, 7).state), (s, seed)


def test_stale_legal_entries_are_not_carried_into_a_world():
    g, rng = Game(seed=4), random.Random(1)
    for _ in range(80):                 # seat 0 to act in its discard phase, lap 15
        g.step(rng.choice(g.legal_actions()))
    for s in (1, 2, 3):
        w = g.sample_hidden(s, 1)
        assert np.array_equal(w.observe(s), g.observe(s))
        assert np.array_equal(w.sample_hidden(s, 2).state, g.sample_hidden(s, 2).state), s


# ---- 2, 3. the seat's view and the public history unchanged; exactly the unseen cards redealt -----
@pytest.mark.parametrize("name,i", cases())
def test_world_keeps_the_view_and_redeals_exactly_the_unseen_cards(name, i):
    rules, row = RULES[name], positions(name)[i]
    g, v = game_at(row, rules), L.StateView(row)
    assert (count_places(row, rules) == 1).all()       # the reading of the places is complete
    for s in range(4):
        w = g.sample_hidden(s, 100 + s)
        u = L.StateView(w.state)
        assert w.sampled and not g.sampled
        for obs_type in ("compact", "features"):
            a, b = g.observe(s, obs_type), w.observe(s, obs_type)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (s, obs_type)
        assert (w.current_player, w.phase, w.hand_index, w.lap, w.done, w.rules, w.auto_forced) == \
               (g.current_player, g.phase, g.hand_index, g.lap, g.done, g.rules, g.auto_forced)
        assert np.array_equal(w.scores, g.scores)
        if g.current_player == s:
            assert np.array_equal(w.legal_mask(), g.legal_mask()) and w.legal_actions() == g.legal_actions()
            assert int(u.drawn_card) == int(v.drawn_card)
        for f in PUBLIC:
            assert np.array_equal(getattr(u, f), getattr(v, f)), (s, f)
        shown = [L.M_TYPE, L.M_KIND, L.M_CARD0, L.M_CARD1, L.M_CLAIMED, L.M_KAN]
        assert np.array_equal(u.melds[..., shown], v.melds[..., shown])
        ankan = v.melds[..., L.M_TYPE] == L.MT_ANKAN
        assert np.array_equal(u.melds[..., L.M_STANDIN][ankan], v.melds[..., L.M_STANDIN][ankan])
        for f in ("hand_masks", "hand_counts", "hand_keys", "face_counts", "side"):
            assert np.array_equal(getattr(u, f)[s], getattr(v, f)[s]), (s, f)
        assert np.array_equal(u.side, v.side) or not rules.side_cards_public
        assert (int(u.drawn_card) >= 0) == (int(v.drawn_card) >= 0)
        for h in range(min(int(v.hand_index), 3) + 1):     # s's own decisions stay in the log
            log, mine = v.decision_log[h, :v.num_decisions[h]], u.decision_log[h, :v.num_decisions[h]]
            assert np.array_equal(log[:, 0], mine[:, 0]) and np.array_equal(log[log[:, 0] == s], mine[log[:, 0] == s])
        with pytest.raises(ValueError):
            w.record()
        g.record()
        # 3: the places keep their sizes and hold exactly the cards s cannot see
        check_cards(w, rules)
        check_hand_fields(w.state)
        hands, offs = hidden(row, rules, s)
        hands2, offs2 = hidden(w.state, rules, s)
        assert offs == offs2 and {q: len(c) for q, c in hands.items()} == {q: len(c) for q, c in hands2.items()}
        if g.done:      # the last hand's squares withheld (check_cards): the rest from the unseen cards
            got, pool = unseen(w.state, rules, s), unseen(row, rules, s)
            assert set(got) - {-1} <= set(pool) and len(got) == len(pool)
            continue
        assert unseen(w.state, rules, s) == unseen(row, rules, s), s
        assert not (np.asarray(w.state)[offs] < 0).any()
        if v.drawn_card >= 0 and rules.discard_drawn:    # the drawn card is also in the drawer's hand
            assert u.hand_masks[u.to_act, u.drawn_card // 4] >> (u.drawn_card % 4) & 1
        for h in range(int(v.hand_index) + 1, rules.hands_per_game):    # later hands: fresh deals
            assert np.array_equal(np.sort(u.squares[h].ravel()), np.arange(144))
            assert not np.array_equal(u.squares[h], v.squares[h])


# ---- 4. uniform, deterministic ---------------------------------------------------------------
def chi2(observed, expected):
    return float(((observed - expected) ** 2 / expected).sum())


def test_worlds_are_uniform_over_the_unseen_cards():
    g, rng = Game(seed=21), random.Random(5)
    while not (g.lap >= 6 and g.current_player == 1 and g.phase == "take"
               and (L.StateView(g.state).melds[..., L.M_TYPE] == L.MT_PUNG).any()):
        g.step(biased(rng, g.legal_actions()))   # (a finished game would raise here)
    s, q, v = 0, 2, L.StateView(g.state)
    pool = np.array(unseen(g.state, g.rules, s))
    m, n = np.argwhere(v.melds[..., L.M_TYPE] == L.MT_PUNG)[0]
    places = {"next card of q's square": L.SQUARES + (int(v.hand_index) * 4 + q) * SQ + int(v.square_taken[q]),
              "q's first side card": L.SIDE + q * 4,
              "a stand-in": L.MELDS + (m * 4 + n) * L.MELD_W + L.M_STANDIN,
              "the last card of s's own square": L.SQUARES + (int(v.hand_index) * 4 + s) * SQ + SQ - 1}
    assert all(g.state[o] in pool for o in places.values())
    N, cols = 4000, list(places.values()) + list(range(L.HCNT + q * 36, L.HCNT + q * 36 + 36))
    got = np.array([np.asarray(g.sample_hidden(s, seed).state)[cols] for seed in range(N)])
    hand, got = got[:, len(places):], got[:, :len(places)]
    kinds = np.bincount(pool // 4, minlength=36)
    present = kinds > 0
    df = int(present.sum()) - 1
    assert df in CHI2_999, df
    for j, where in enumerate(places):
        obs = np.bincount(got[:, j] // 4, minlength=36)
        assert obs[~present].sum() == 0, where
        stat = chi2(obs[present], N * kinds[present] / len(pool))
        assert stat < CHI2_999[df], (where, stat, df)
    # the next square card and the side card jointly: a draw without replacement (faces)
    faces = np.bincount(pool // 36, minlength=4)
    joint = np.zeros((4, 4))
    np.add.at(joint, (got[:, 0] // 36, got[:, 1] // 36), 1)
    exp = np.outer(faces, faces) - np.diag(faces)
    assert chi2(joint.ravel(), N * exp.ravel() / (len(pool) * (len(pool) - 1))) < CHI2_999[15]
    # q's hand as a whole: its kind counts summed over the worlds (sampling without replacement
    # makes this statistic smaller than a multinomial's, so the test is conservative)
    exp = N * int(v.num_concealed[q]) * kinds[present] / len(pool)
    assert chi2(hand.sum(0)[present], exp) < CHI2_999[df] and hand.sum(0)[~present].sum() == 0
    # every card of the pool, not only every kind, reaches the next square card, and the worlds of
    # seeds k and k + 1 (VectorGame's pairs) are not related: the same card there about 1 / pool
    assert set(got[:, 0].tolist()) == set(pool.tolist())
    same, mean = int((got[1:, 0] == got[:-1, 0]).sum()), (N - 1) / len(pool)
    assert abs(same - mean) < 5 * np.sqrt(mean), (same, mean)


def test_same_seed_same_world_other_seed_other_world():
    rules = RULES["default"]
    for row in positions("default")[::3]:
        g = game_at(row, rules)
        for s in range(4):
            assert np.array_equal(g.sample_hidden(s, 9).state, g.sample_hidden(np.int8(s), np.uint64(9)).state)
            worlds = {g.sample_hidden(s, seed).state.tobytes() for seed in [*range(40), 2 ** 64 - 1]}
            assert len(worlds) == 41, s


def test_a_world_may_leave_its_actor_one_action_and_waits_there():
    """Seat 1 may 引 or 栄 in the last lap; in a world of seat 0 its redealt hand has no
    栄, so the world waits at a forced 引 (it is not applied: the history stays)."""
    g, rng = Game(RuleConfig(hands_per_game=1), seed=72), random.Random(72)
    while not (g.lap == 19 and g.phase == "take" and len(g.legal_actions()) > 1):
        g.step(biased(rng, g.legal_actions()))
    assert g.current_player == 1 and g.legal_actions() == [110, 117]
    w = g.sample_hidden(0, 0)
    assert w.legal_actions() == [110] and (w.current_player, w.phase, w.lap) == (1, "take", 19)
    assert np.array_equal(w.observe(0), g.observe(0))
    w.step(110)
    play_out(w, rng)
    check_cards(w, g.rules)


# ---- 5. playable worlds; clone -------------------------------------------------------------
@pytest.mark.parametrize("name", RULES)
def test_worlds_play_to_the_end(name):
    rules, rng = RULES[name], random.Random(3)
    for i, row in enumerate(positions(name)):
        g = game_at(row, rules)
        for s in {g.current_player % 4, i % 4}:          # the seat to act and another
            w = g.sample_hidden(s, i)
            ww = w.sample_hidden((s + 1) % 4, i)         # a world of a world
            for x in (w, ww):
                play_out(x, rng)
                assert x.done and x.sampled
                check_cards(x, rules)
        assert np.array_equal(g.state, row)              # sampling never touches the game


@pytest.mark.parametrize("name", RULES)
def test_clone_is_independent_and_plays_identically(name):
    rules = RULES[name]
    for i, row in enumerate(positions(name)[::2]):
        g = game_at(row, rules)
        g.observe(0, "features")
        c = g.clone()
        assert np.array_equal(c.state, g.state) and not np.shares_memory(c.state, g.state)
        assert (c.rules, c.seed, c.auto_forced, c.sampled) == (g.rules, g.seed, g.auto_forced, False)
        assert c.record() == g.record()
        if g.done:
            continue
        before, legal = np.array(g.state), c.legal_actions()
        c.step(legal[-1])
        assert np.array_equal(g.state, before) and g.legal_actions() == legal
        c2, snap = g.clone(), np.array(c.state)
        assert np.array_equal(g.step(legal[0]), c2.step(legal[0]))
        assert np.array_equal(c.state, snap) and np.array_equal(g.state, c2.state)
        r1, r2 = random.Random(i), random.Random(i)
        while not g.done:                               # identical actions, identical games
            a1, a2 = r1.choice(g.legal_actions()), r2.choice(c2.legal_actions())
            assert a1 == a2
            assert np.array_equal(g.step(a1), c2.step(a2))
            assert np.array_equal(g.state, c2.state) and np.array_equal(g.legal_mask(), c2.legal_mask())
        assert np.array_equal(g.observe(2, "features"), c2.observe(2, "features"))


def test_clone_keeps_auto_forced_off_and_a_sampled_world_stays_sampled():
    g = Game(seed=6, auto_forced=False)
    for _ in range(30):
        g.step(g.legal_actions()[0])
    c, w = g.clone(), g.sample_hidden(1, 3).clone()
    assert not c.auto_forced and w.sampled
    for _ in range(200):                                # it stops at forced decisions too
        a = c.legal_actions()[-1]
        assert np.array_equal(g.step(a), c.step(a)) and np.array_equal(g.state, c.state)
    with pytest.raises(ValueError):
        w.record()


# ---- 6. VectorGame -------------------------------------------------------------------------
def vg_snapshot(vg):
    return [np.array(a) for a in (vg._st, vg._mask, vg._compact, vg._player, vg._agent_rng, vg._game_index,
                                  vg._done, vg._rewards)]


def same(arrays, others):
    return all(np.array_equal(a, b) for a, b in zip(arrays, others, strict=True))


@pytest.fixture(scope="module", params=["default", "public_drawn_previous", "no_exchange_one_hand"])
def vgame(request):
    rules = RULES[request.param]       # one of them with the features observation
    vg = VectorGame(8, rules=rules, seed=3, obs_type="features" if rules.discard_drawn else "compact")
    vg.reset()
    for t in range(60):
        vg.step(vg.policy_actions("greedy" if t % 2 else "random"))
    return vg


def test_copy_rows_copies_and_copies_are_independent(vgame):
    vg = vgame
    obs, mask, player = vg.copy_rows([0, 1, 1], [4, 5, 6])
    for src, dst in ((0, 4), (1, 5), (1, 6)):
        assert np.array_equal(vg._st[dst], vg._st[src]) and obs[dst].tobytes() == obs[src].tobytes()
        assert np.array_equal(mask[dst], mask[src]) and player[dst] == player[src]
    for _ in range(25):                                 # the agent streams are copied too
        acts = vg.policy_actions("random")
        assert acts[4] == acts[0] and acts[5] == acts[1] == acts[6]
        vg.step(acts)
        if vg.done[[0, 1, 4, 5, 6]].any():
            break
        assert np.array_equal(vg._st[4], vg._st[0]) and np.array_equal(vg._st[5], vg._st[1])
    vg.copy_rows(2, 7)                                  # a copy stepped differently leaves its source alone
    ref = vg.game(2)
    acts = vg.policy_actions("greedy")
    other = [a for a in np.flatnonzero(vg.mask[7]) if a != acts[2]]
    acts[7] = other[0] if other else acts[2]
    vg.step(acts)
    ref.step(int(acts[2]))
    if not vg.done[2]:
        assert np.array_equal(vg.game(2).state, ref.state)
    g3, g4 = vg.game(3), vg.game(4)                     # overlapping src and dst: sources read first
    vg.copy_rows([3, 4], [4, 5])
    assert np.array_equal(vg._st[4], g3.state) and np.array_equal(vg._st[5], g4.state)


def test_vector_sample_hidden_equals_game_sample_hidden(vgame):
    vg = vgame
    for seat, seed, seeds in ((np.array([0, 2, 1, 3]), 1000, 1000 + np.arange(4)),
                              (1, np.array([5, 9, 2 ** 63, 0], np.uint64), [5, 9, 2 ** 63, 0])):
        src, dst = np.array([0, 0, 1, 2]), np.array([4, 5, 6, 7])
        games = [vg.game(i) for i in src]
        obs, mask, player = vg.sample_hidden(src, dst, seat, seed)
        seats = np.broadcast_to(seat, 4)
        for k in range(4):
            want = games[k].sample_hidden(int(seats[k]), int(seeds[k]))
            assert np.array_equal(vg._st[dst[k]], want.state), k
            assert np.array_equal(vg.game(src[k]).state, games[k].state)
            assert np.array_equal(mask[dst[k]], want.legal_mask()) and player[dst[k]] == want.current_player
            assert obs[dst[k]].tobytes() == want.observe(want.current_player, vg.obs_type).tobytes()
            assert np.array_equal(vg.compact[dst[k]], want.observe(want.current_player))
            assert vg.game(dst[k]).sampled
            with pytest.raises(ValueError):
                vg.record(int(dst[k]))
        vg.record(int(src[0]))
    g0, g1 = vg.game(0), vg.game(1)                     # overlapping src and dst: sources read first
    vg.sample_hidden([0, 1], [1, 2], 3, 50)
    assert np.array_equal(vg._st[1], g0.sample_hidden(3, 50).state)
    assert np.array_equal(vg._st[2], g1.sample_hidden(3, 51).state)
    for _ in range(2000):                               # worlds play on; a new game there has a record
        vg.step(vg.policy_actions("random"))
        if vg.done[4]:
            break
    assert vg.done[4] and not vg.game(4).sampled
    vg.record(4)


BAD_SAMPLE = [(8, 1, 0, 0), (0, 8, 0, 0), (-1, 1, 0, 0), (0, -1, 0, 0), ([0, 1], [2, 3, 4], 0, 0),
              (0, [2, 3], [0, 1, 2], 0), (0, [2, 3], 0, [1, 2, 3]), (0, [2, 2], 0, 0), (0, 1, 4, 0),
              (0, 1, -1, 0), (0, 1, "0", 0), (0.0, 1, 0, 0), (0, 1, 0, 1.5), (0, 1, 0, -1), (0, 1, 0, 2 ** 64),
              (0, [1, 2], 0, 2 ** 64 - 1), (0, [1, 2], 0, np.array([1.0, 2.0]))]    # seed + 1 = 2**64
BAD_COPY = [(8, 1), (0, 8), (-1, 1), (0, [2, 2]), ([0, 1], [2, 3, 4]), (1.0, 2), ("0", 1)]


def test_vector_bad_arguments_raise_and_change_nothing():
    vg = VectorGame(8, seed=1)
    for method, args in (("copy_rows", (0, 1)), ("sample_hidden", (0, 1, 0, 0)), ("sample_hidden", BAD_SAMPLE[0])):
        with pytest.raises((ValueError, RuntimeError)):   # ResetNeededError before reset
            getattr(vg, method)(*args)
    vg.reset()
    vg.step(vg.policy_actions("random"))
    for method, args in [("sample_hidden", a) for a in BAD_SAMPLE] + [("copy_rows", a) for a in BAD_COPY]:
        before = vg_snapshot(vg)
        with pytest.raises(ValueError):
            getattr(vg, method)(*args)
        assert same(before, vg_snapshot(vg)), (method, args)


def test_vector_sample_hidden_refuses_seed_none():
    vg = VectorGame(4, seed=1)
    vg.reset()
    before = vg_snapshot(vg)
    with pytest.raises(ValueError):
        vg.sample_hidden(0, 1, 0, None)
    assert same(before, vg_snapshot(vg))


# ---- 7. Game.sample_hidden's boundary -------------------------------------------------------
@pytest.mark.parametrize("seat,seed", [(4, 0), (-1, 0), ("0", 0), (1.0, 0), (True, 0), (None, 0), ([0], 0),
                                       (0, None), (0, -1), (0, 2 ** 64), (0, 1.5), (0, True), (0, "3"),
                                       (0, np.float64(2.0)), (0, [1])])
def test_game_sample_hidden_bad_arguments(seat, seed):
    g = game_at(positions("default")[3], RULES["default"])
    before, mask, obs = np.array(g.state), g.legal_mask(), g.observe(0)
    with pytest.raises(ValueError) as err:
        g.sample_hidden(seat, seed)
    good_seat = type(seat) is int and 0 <= seat < 4
    assert ("seed" if good_seat else "seat") in str(err.value)
    assert np.array_equal(g.state, before) and np.array_equal(g.legal_mask(), mask)
    assert np.array_equal(g.observe(0), obs)

