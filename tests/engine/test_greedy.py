"""The greedy baseline (majiang_env.engine.kernel.greedy, agents.GreedyAgent, in-kernel selfplay)."""

import numpy as np
import pytest
from greedy_reference import RefPolicy

import majiang_env
from majiang_env import Game, RuleConfig, selfplay
from majiang_env.agents import GreedyAgent, RandomAgent, game_obs
from majiang_env.engine import tables
from majiang_env.engine.kernel import greedy as KA
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel.cards import U64, mix64, rand_below
from majiang_env.engine.kernel.observe import (
    OBS_CLAIM,
    OBS_DRAWN,
    OBS_HAND,
    OBS_MELD,
    OBS_SCALAR,
    OBS_SIDE,
    OBS_SIZE,
    S_LAP,
)
from majiang_env.engine.kernel.players import NUM_PARAMS
from majiang_env.engine.vector import _play_games, game_seed

B, R, Y, G = 0, 9, 18, 27  # first kind of each face colour: blue 1 = B + 0, red 5 = R + 4, ...
# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_TSUMO, A_DRAW, A_PUNG, A_CHOW, A_RON, A_EXCHANGE = 0, 36, 108, 110, 111, 114, 117, 120
NUM_ACTIONS, NUM_KINDS = 156, 36


def _obs(hand, drawn=None, side=(), claims=None, melds=(), discard_drawn=False):
    o = np.zeros(OBS_SIZE, np.int16)
    o[OBS_SCALAR + S_LAP] = 1  # the first lap: every scalar within what the environment writes
    for k in hand:
        o[OBS_HAND + k] += 1
    if drawn is not None:
        o[OBS_DRAWN + drawn] = 1
        if discard_drawn:  # observe.py: shown as drawn, not twice
            o[OBS_HAND + drawn] -= 1
    for k in side:
        o[OBS_SIDE + k] += 1
    for r, k in (claims or {}).items():
        o[OBS_CLAIM + r] = k + 1
    for i, (t, k, claimed) in enumerate(melds):
        o[OBS_MELD + i * 3:OBS_MELD + i * 3 + 3] = (t, k + 1, claimed + 1)
    return o


def _mask(actions):
    m = np.zeros(NUM_ACTIONS, np.int8)
    m[list(actions)] = 1
    return m


def _discard_mask(hand):
    return _mask(A_DISCARD + k for k in sorted(set(hand)))


def _act(obs, mask, seed=0, rules=None):
    return GreedyAgent(seed, rules=rules)({"observation": obs, "action_mask": mask})


def _def(counts, n=0):
    return KA.deficiency(np.asarray(counts, np.int64), n, tables.deficiency_table(), KA.new_work())


def _counts(kinds):
    c = np.zeros(NUM_KINDS, np.int64)
    for k in kinds:
        c[k] += 1
    return c


# blue 123 456 789, red 11 56: ready (waits on red 4 / red 7)
READY = [B + 0, B + 1, B + 2, B + 3, B + 4, B + 5, B + 6, B + 7, B + 8, R + 0, R + 0, R + 4, R + 5]


# ---- hand-built positions --------------------------------------------------------
def test_takes_a_win_when_legal():
    o = _obs(READY, drawn=R + 6)
    assert _act(o, _mask([A_DISCARD + k for k in sorted(set(READY))] + [A_TSUMO])) == A_TSUMO
    assert _act(_obs(READY, claims={2: R + 3}), _mask([A_DRAW, A_RON + 1])) == A_RON + 1
    for seed in range(10):
        claims = {1: R + 3, 3: R + 6}
        assert _act(_obs(READY, claims=claims), _mask([A_DRAW, A_PUNG, A_RON, A_RON + 2]), seed) in (A_RON, A_RON + 2)


@pytest.mark.parametrize("discard_drawn", [False, True])
def test_keeps_a_ready_hand_ready(discard_drawn):
    rules = RuleConfig(discard_drawn=discard_drawn)
    # drew red 6: 打 red 6 keeps the 4-7 wait (8 unseen); 打 red 5 would wait on 1/6 (4 unseen)
    o = _obs(READY, drawn=R + 5, discard_drawn=discard_drawn)
    assert _act(o, _discard_mask(READY), rules=rules) == A_DISCARD + R + 5
    # drew a useless green 9: only discard_drawn lets it go at once, and greedy does
    hand14 = READY + [G + 8]
    o = _obs(hand14, drawn=G + 8, discard_drawn=True)
    assert _act(o, _discard_mask(hand14), rules=RuleConfig(discard_drawn=True)) == A_DISCARD + G + 8
    o = _obs(READY, drawn=G + 8)
    for seed in range(5):  # default: it cannot; whatever it picks is legal and not the drawn card
        k = _act(o, _discard_mask(READY), seed) - A_DISCARD
        assert k in READY and k != G + 8
    # the hand it keeps is the best it can: deficiency 2 (the green 9 joins the hand)
    assert _def(_counts(READY + [G + 8]) - _counts([k])) == 2


def test_exchange_sets_aside_the_four_useless_cards():
    junk = [Y + 0, Y + 4, Y + 8, G + 4]
    for seed in range(6):
        hand = list(READY) + junk
        side = []
        agent = GreedyAgent(seed)
        for _ in range(4):
            mask = _mask([A_EXCHANGE + k for k in set(hand)])
            a = agent({"observation": _obs(hand, side=side), "action_mask": mask})
            assert A_EXCHANGE <= a < NUM_ACTIONS
            hand.remove(a - A_EXCHANGE)
            side.append(a - A_EXCHANGE)
        assert sorted(side) == sorted(junk)
        assert sorted(hand) == sorted(READY)


def test_pickup_only_when_it_lowers_the_deficiency():
    # blue 123 456, red 55, yellow 77, green 1 5 9: deficiency 3; 刻 red 5 then 打 green 1 -> 2
    hand = [B + 0, B + 1, B + 2, B + 3, B + 4, B + 5, R + 4, R + 4, Y + 6, Y + 6, G + 0, G + 4, G + 8]
    assert _def(_counts(hand)) == 3
    assert _act(_obs(hand, claims={1: R + 4}), _mask([A_DRAW, A_PUNG])) == A_PUNG
    # blue 123 456 789, red 55, yellow 12, green 9: deficiency 1; a 刻 of red 5 keeps 1 -> draw
    hand = [B + 0, B + 1, B + 2, B + 3, B + 4, B + 5, B + 6, B + 7, B + 8, R + 4, R + 4, Y + 0, Y + 1]
    assert _act(_obs(hand, claims={2: R + 4}), _mask([A_DRAW, A_PUNG + 1])) == A_DRAW
    # 順: blue 123 456, red 56, yellow 77, green 1 5 9; red 7 is the high card of 567
    hand = [B + 0, B + 1, B + 2, B + 3, B + 4, B + 5, R + 4, R + 5, Y + 6, Y + 6, G + 0, G + 4, G + 8]
    assert _act(_obs(hand, claims={1: R + 6}), _mask([A_DRAW, A_CHOW + 2])) == A_CHOW + 2
    prev = RuleConfig(chow_from="previous")
    assert _act(_obs(hand, claims={3: R + 6}), _mask([A_DRAW, A_CHOW + 2]), rules=prev) == A_CHOW + 2


def test_after_a_pickup_discards_with_the_meld_counted():
    # shown 刻 red 5 (claimed red 5); concealed blue 123 456, yellow 77, green 1 5 9, red 9
    hand = [B + 0, B + 1, B + 2, B + 3, B + 4, B + 5, Y + 6, Y + 6, G + 0, G + 4, G + 8]
    o = _obs(hand, melds=[(1, R + 4, R + 4)])
    k = _act(o, _discard_mask(hand)) - A_DISCARD
    assert k in (G + 0, G + 8)  # keep green 5 (more ways to a run) and the pair
    assert _def(_counts(hand) - _counts([k]), 1) == 2


# ---- the independent reading (tests/greedy_reference.py) on positions from real games ---
RULE_SETS = [RuleConfig(), RuleConfig(discard_drawn=True, kuikae=False),
             RuleConfig(chow_from="previous", side_cards_public=True),
             RuleConfig(exchange=False, wins_to_close=1)]


@pytest.mark.parametrize("rules", RULE_SETS, ids=["default", "drawn_kuikae", "prev_public", "noexch"])
def test_tie_sets_match_an_independent_reading(rules):
    ref = RefPolicy(1 if rules.chow_from == "next" else 3, rules.kuikae)
    dt = tables.deficiency_table()
    w = KA.new_work()
    rng = np.random.default_rng(0)
    checked = {"exchange": 0, "take": 0, "discard": 0}
    for gi in range(2):
        g = Game(rules, seed=100 + gi)
        players = [GreedyAgent(gi, rules=rules), RandomAgent(gi), GreedyAgent(gi + 7, rules=rules), RandomAgent(gi + 1)]
        while not g.done:
            p = g.current_player
            o = game_obs(g)
            if rng.random() < 0.35:
                n = KA.greedy_candidates(o["observation"], o["action_mask"], dt, ref.chow_off, int(rules.kuikae), w)
                mine = set(np.flatnonzero(w[KA.W_TIE:KA.W_TIE + NUM_ACTIONS]).tolist())
                assert len(mine) == n
                assert mine == ref.ties(o["observation"], o["action_mask"]), (g.phase, g.legal_actions())
                checked[g.phase] += 1
            g.step(players[p](o))
    assert checked["take"] > 5 and checked["discard"] > 5, checked
    assert checked["exchange"] > (5 if rules.exchange else -1), checked


# ---- whole games --------------------------------------------------------------------
@pytest.mark.parametrize("rules", RULE_SETS + [RuleConfig(require_yaku=True, hands_per_game=2)])
@pytest.mark.parametrize("auto_forced", [True, False])
def test_every_action_legal_in_games(rules, auto_forced):
    for gi in range(2):
        g = Game(rules, seed=gi, auto_forced=auto_forced)
        greedy = [GreedyAgent(gi * 4 + p, rules=rules) for p in range(4)]
        rnd = RandomAgent(gi)
        while not g.done:
            p = g.current_player
            o = game_obs(g)
            a = greedy[p](o) if (p + gi) % 4 != 3 else rnd(o)
            assert o["action_mask"][a] == 1
            st = g._st
            if (g.phase == "discard" and st[L.TOOK] == 1 and not rules.discard_drawn and a < A_DISCARD + NUM_KINDS
                    and st[L.HCNT + p * NUM_KINDS + (st[L.DRAWN] >> 2)] == 0):
                assert a != A_DISCARD + (st[L.DRAWN] >> 2)  # the drawn card is never discarded at once
            g.step(a)
        assert g.scores.sum() == 0


def test_aec_loop_with_greedy_agents():
    env = majiang_env.env()
    env.reset(seed=3)
    players = {"player_0": GreedyAgent(0), "player_1": RandomAgent(1),
               "player_2": GreedyAgent(2), "player_3": RandomAgent(3)}
    total = {a: 0 for a in env.possible_agents}
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        env.step(None if term or trunc else players[agent](obs))
        steps += 1
    assert steps > 100
    assert sum(total.values()) == 0
    assert total["player_0"] + total["player_2"] > 0


# ---- the kernel's greedy seats are the Python agents --------------------------------
@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig(chow_from="previous", kuikae=False, discard_drawn=True)])
def test_selfplay_kernel_decisions_equal_python_agents(rules):
    seats = ("greedy", "random", "greedy", "greedy")
    codes = np.array([1 if s == "greedy" else 0 for s in seats], np.int32)
    dt = tables.deficiency_table()
    seed = 5
    for gi in range(3):
        st = np.zeros((1, L.SIZE), np.int32)
        stats = np.zeros((1, 11), np.int64)
        _play_games(st, rules.to_array(True), tables.win_table(), seed, gi, 1, codes, np.zeros((4, NUM_PARAMS)),
                   stats, dt)
        kernel_game = Game(rules, seed=game_seed(seed, gi))
        kernel_game._st[:] = st[0]
        # the same game in Python: one rng stream shared by all seats, as in the kernel
        g = Game(rules, seed=game_seed(seed, gi))
        rng = np.array([mix64(U64(game_seed(seed, gi)) ^ U64(0xA5A5A5A5))], np.uint64)
        agents = [GreedyAgent(rules=rules) for _ in range(4)]
        for a in agents:
            a.rng = rng
        while not g.done:
            p = g.current_player
            o = game_obs(g)
            if seats[p] == "greedy":
                a = agents[p](o)
            else:
                legal = np.flatnonzero(o["action_mask"])  # the kernel's random seat: j-th legal id
                a = legal[rand_below(rng, 0, legal.size)]
            g.step(int(a))
        assert g.record() == kernel_game.record()
        assert stats[0, 2] == sum(len(h["decisions"]) for h in g.record()["hands"]) - _forced(g)


def _forced(g):
    """Decisions applied by auto_forced (not counted by selfplay)."""
    rec = g.record(legal=True)
    return sum(1 for h in rec["hands"] for d in h["decisions"] if len(d[2]) == 1)


def test_selfplay_with_greedy_deterministic_across_batch_sizes():
    ag = ("greedy", "random", "greedy", "random")
    s1 = selfplay(24, agents=ag, seed=3, num_envs=8)
    s2 = selfplay(24, agents=ag, seed=3, num_envs=5)
    s3 = selfplay(24, agents=ag, seed=3, num_envs=1)
    for k in ("games", "hands", "decisions", "mean_points", "wins"):
        assert s1[k] == s2[k] == s3[k]
    assert abs(sum(s1["mean_points"])) < 1e-9
    assert s1["wins"][0] + s1["wins"][2] > 5 * (s1["wins"][1] + s1["wins"][3])
    with pytest.raises(ValueError):
        selfplay(1, agents=("greedy", "random", "random", "clever"))


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig(kuikae=False, chow_from="previous"),
                                   RuleConfig(exchange=False, side_cards_public=True)])
def test_tie_set_from_option_values_equals_the_policys(rules):
    """``candidates_from_values`` (the features' path) marks exactly greedy's tie set,
    with every legal mask and a random legal sub-mask, from dirty scratch buffers."""
    from majiang_env.engine.vector import VectorGame
    dt = tables.deficiency_table()
    chow_off, kuikae = (1 if rules.chow_from == "next" else 3), int(rules.kuikae)
    rng = np.random.default_rng(0)
    vg = VectorGame(16, rules=rules, seed=3, num_threads=1)
    vg.reset()
    w1, w2 = KA.new_work(), KA.new_work()
    for t in range(150):
        for i in range(vg.num_envs):
            legal = np.flatnonzero(vg.mask[i])
            masks = [vg.mask[i].copy()]
            if len(legal) > 2:
                sub = np.zeros(NUM_ACTIONS, np.int8)
                sub[rng.choice(legal, rng.integers(2, len(legal)), replace=False)] = 1
                masks.append(sub)
            for m in masks:
                w1[:] = rng.integers(-5, 200, KA.W_SIZE)
                w2[:] = rng.integers(-5, 200, KA.W_SIZE)
                n1 = KA.greedy_candidates(vg.compact[i], m, dt, chow_off, kuikae, w1)
                KA.option_values(vg.compact[i], m, dt, chow_off, kuikae, w2)
                n2 = KA.candidates_from_values(vg.compact[i], m, dt, chow_off, kuikae, w2)
                ties = slice(KA.W_TIE, KA.W_TIE + NUM_ACTIONS)
                assert n1 == n2 and np.array_equal(w1[ties], w2[ties])
        vg.step(vg.policy_actions("greedy") if t % 2 else vg.sample_actions(rng.normal(size=(16, NUM_ACTIONS))))


@pytest.mark.parametrize("rules", RULE_SETS, ids=["default", "drawn_kuikae", "prev_public", "noexch"])
def test_option_values_equal_a_brute_force_reading(rules):
    """``option_values`` (deficiency and acceptance of every legal option, uncapped)
    against the brute force of ``tests/feature_reference.py``: every option's left
    hand, and every unseen card added to it, looked up one by one."""
    from feature_reference import acceptance, deficiency, pickup_shown, pickup_value, read, visible_copies

    from majiang_env.engine.vector import VectorGame
    dt = tables.deficiency_table()
    chow_off, kuikae = (1 if rules.chow_from == "next" else 3), int(rules.kuikae)
    vg = VectorGame(4, rules=rules, seed=11, num_threads=1)
    vg.reset()
    w = KA.new_work()
    rng = np.random.default_rng(1)
    seen = {"give": 0, "kan": 0, "pickup": 0}
    for t in range(100):
        for i in range(vg.num_envs):
            obs, mask = vg.compact[i], vg.mask[i]
            if mask.sum() <= 1 or mask[A_TSUMO] or mask[A_RON:A_RON + 3].any():
                continue
            KA.option_values(obs, mask, dt, chow_off, kuikae, w)
            v = read(obs)
            now = v["hand"] + v["drawn"]
            n = len(v["melds"][0])
            unseen = tuple(int(x) for x in 4 - visible_copies(v))
            for a in np.flatnonzero(mask):
                if A_PUNG <= a < A_RON:
                    claimed, shown = pickup_shown(a, v["claim"], chow_off)
                    want = pickup_value(now, n, v["melds"][0], a, claimed, shown, kuikae, unseen)
                    seen["pickup"] += 1
                elif a < A_TSUMO or a >= A_EXCHANGE:
                    k, times, dm = KA._option(a)   # 打 / 暗 / 明 / 変: kind given up, copies, melds added
                    left = now.copy()
                    left[k] -= times
                    left = tuple(int(x) for x in left)
                    want = (deficiency(left, n + dm), acceptance(left, n + dm, unseen))
                    seen["kan" if A_ANKAN <= a < A_TSUMO else "give"] += 1
                else:
                    continue
                assert (w[KA.W_VAL + a], w[KA.W_ACC + a]) == want, (t, i, a)
        vg.step(vg.policy_actions("greedy") if rng.random() < 0.7 else vg.sample_actions(rng.normal(size=(4, 156))))
    assert seen["give"] > 300 and seen["pickup"] > 10, seen
