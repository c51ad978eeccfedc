"""The search agent (majiang_env.engine.kernel.search): it never reads hidden cards, it
samples exactly the observer's unseen cards, it plays legal actions under every
rule set, and it is deterministic."""
import numpy as np
import pytest

from majiang_env import Game, RuleConfig, selfplay
from majiang_env.agents import resolve
from majiang_env.engine import tables
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel import search as S
from majiang_env.engine.kernel import worlds as W
from majiang_env.engine.kernel.observe import OBS_SIZE, observe
from majiang_env.engine.kernel.players import (
    AGENT_GREEDY,
    AGENT_PARAMS,
    AGENT_SEARCH,
    NUM_PARAMS,
    agent_action,
    agent_params,
    new_workspace,
)
from majiang_env.engine.rules import _CHOICES
from majiang_env.engine.vector import VectorGame

P5 = 5 ** np.arange(9)
# action ids (docs/api.md); cards (docs/rules.md §1, §3)
A_TSUMO, A_RON = 108, 117
NUM_KINDS, NUM_CARDS, SQUARE_SIZE = 36, 144, 36
CHEAP = {"samples": 2, "budget": None}


# ---- an independent reading of the state row -------------------------------------
def check_row(row, rules):
    """Every derived field of the concealed hands agrees with HMASK, and every card
    id lies in exactly one place (current squares' rest, hands, drawn card, side
    cards, meld cards, rivers)."""
    v = L.StateView(row)
    for p in range(4):
        cnt = np.array([bin(int(x)).count("1") for x in v.hand_masks[p]])
        assert (v.hand_counts[p] == cnt).all()
        for c in range(4):
            assert v.hand_keys[p, c] == (cnt[c * 9:c * 9 + 9] * P5).sum()
            assert v.face_counts[p, c] == cnt[c * 9:c * 9 + 9].sum()
        assert v.num_concealed[p] == cnt.sum()
    h = min(int(v.hand_index), rules.hands_per_game - 1)
    seen = np.zeros(NUM_CARDS, int)
    for p in range(4):
        seen[v.squares[h, p, v.square_taken[p]:]] += 1
        for k in range(NUM_KINDS):
            for c in range(4):
                if v.hand_masks[p, k] >> c & 1:
                    seen[k * 4 + c] += 1
        seen[v.side[p, :v.num_side[p]]] += 1
        for m in v.melds[p, :v.num_melds[p]]:
            seen[m[L.M_CARD0:L.M_STANDIN + 1]] += 1
        seen[v.river[p, :v.river_len[p]]] += 1
    if v.drawn_card >= 0 and not rules.discard_drawn:
        seen[v.drawn_card] += 1
    assert (seen == 1).all(), np.flatnonzero(seen != 1)


def hidden(row, rules, p):
    """What seat p cannot see (docs/rules.md §11), written independently of the
    kernel: ({seat: card ids of its concealed hand} for the other seats, row
    offsets of the other hidden places: others' side cards unless public,
    stand-ins, the rest of every square of the current hand)."""
    hands = {}
    for q in range(4):
        if q != p:
            masks = L.view(row, "hand_masks")[q]
            hands[q] = [k * 4 + c for k in range(NUM_KINDS) for c in range(4) if masks[k] >> c & 1]
    offs = []
    for q in range(4):
        if q != p and not rules.side_cards_public:
            offs += [L.SIDE + q * 4 + i for i in range(row[L.NSIDE + q])]
        for i in range(row[L.NMELD + q]):
            m = L.MELDS + (q * 4 + i) * L.MELD_W
            if row[m + L.M_TYPE] != L.MT_ANKAN:
                offs.append(m + L.M_STANDIN)
        sq = L.SQUARES + (int(row[L.HAND]) * 4 + q) * SQUARE_SIZE
        offs += list(range(sq + row[L.SQPOS + q], sq + SQUARE_SIZE))
    return hands, offs


def hand_fields(p):
    """Row offsets of seat p's concealed-hand fields."""
    return np.r_[L.HMASK + p * NUM_KINDS:L.HMASK + (p + 1) * NUM_KINDS,
                 L.HCNT + p * NUM_KINDS:L.HCNT + (p + 1) * NUM_KINDS,
                 L.KEYS + p * 4:L.KEYS + p * 4 + 4, L.NCOL + p * 4:L.NCOL + p * 4 + 4, L.NHAND + p]


def set_hand(row, p, cards):
    row[hand_fields(p)] = 0
    for card in cards:
        k = card // 4
        row[L.HMASK + p * NUM_KINDS + k] |= 1 << (card % 4)
        row[L.HCNT + p * NUM_KINDS + k] += 1
        row[L.KEYS + p * 4 + k // 9] += P5[k % 9]
        row[L.NCOL + p * 4 + k // 9] += 1
        row[L.NHAND + p] += 1


def hidden_multiset(row, rules, p):
    hands, offs = hidden(row, rules, p)
    return sorted(sum(hands.values(), []) + row[offs].tolist())


def permute_hidden(row, rules, p, rng):
    """A copy of ``row`` with the cards of p's hidden places permuted at random
    (same sizes per place): another state p cannot tell from ``row``."""
    hands, offs = hidden(row, rules, p)
    cards = np.array(sum(hands.values(), []) + row[offs].tolist())
    cards = cards[rng.permutation(len(cards))]
    out = row.copy()
    j = 0
    for q, old in hands.items():
        set_hand(out, q, cards[j:j + len(old)])
        j += len(old)
    out[offs] = cards[j:]
    return out


def obs_of(row, rules, p):
    o = np.zeros(OBS_SIZE, np.int16)
    observe(row, rules.to_array(True), p, o)
    return o


# ---- positions of real games ----------------------------------------------------
RULE_SETS = [RuleConfig(), RuleConfig(side_cards_public=True), RuleConfig(exchange=False),
             RuleConfig(discard_drawn=True, kuikae=False),
             RuleConfig(chow_from="previous", furiten=True, require_yaku=True, wins_to_close=2)]
RULE_IDS = ["default", "side_public", "no_exchange", "discard_drawn", "previous_furiten_yaku"]


def positions(rules, games=2, every=4, seed=0):
    """State rows at decisions (more than one legal action) of greedy games."""
    wt, dt = tables.win_table(), tables.deficiency_table()
    r = rules.to_array(True)
    obs, mask, work, rows = new_workspace()
    out = []
    for gi in range(games):
        g = Game(rules, seed=seed + gi)
        rng = np.array([gi + 1], np.uint64)
        k = 0
        while not g.done:
            row = np.array(g.state)
            if row[L.NLEGAL] > 1:
                k += 1
                if k % every == 0:
                    out.append(row)
            g.step(int(agent_action(row, r, wt, AGENT_GREEDY, rng, dt, np.zeros(NUM_PARAMS), obs, mask, work,
                                    rows)))
    return out


def search(row, rules, seed, opts=CHEAP):
    """(action, rng after, workspace rows after) of the search agent on a fresh workspace."""
    obs, mask, work, rows = new_workspace()
    rng = np.array([seed], np.uint64)
    a = agent_action(row, rules.to_array(True), tables.win_table(), AGENT_SEARCH, rng,
                     tables.deficiency_table(), agent_params("search", opts), obs, mask, work, rows)
    return int(a), int(rng[0]), rows


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_sampler_draws_exactly_the_unseen_cards(rules):
    r = rules.to_array(True)
    pool = np.zeros(NUM_CARDS, np.int32)
    _, _, work, scratch = new_workspace()
    stand_ins = improved = 0
    for row in positions(rules):
        check_row(row, rules)
        p = int(row[L.CUR])
        hands, offs = hidden(row, rules, p)
        stand_ins += sum(L.MELDS <= o < L.MELDS + 4 * 4 * L.MELD_W for o in offs)
        n = W.unseen_pool(row, r, p, pool)
        assert pool[:n].tolist() == hidden_multiset(row, rules, p)      # ascending: sorted
        for seed in range(4):
            det = np.zeros(L.SIZE, np.int32)
            assert W.determinize(row, r, p, det, pool, np.array([seed], np.uint64)) == 0
            if seed >= 2:      # the optional opponent model only swaps cards between hidden places
                before = det.copy()
                S.improve_opponents(det, r, p, np.array([seed], np.uint64), tables.deficiency_table(), work,
                                    scratch[3].view(np.int64))
                improved += not (det == before).all()
            check_row(det, rules)
            assert hidden_multiset(det, rules, p) == hidden_multiset(row, rules, p)
            fixed = np.ones(L.SIZE, bool)                  # visible places and everything else
            fixed[offs] = False
            for q in hands:
                fixed[hand_fields(q)] = False
            assert (det[fixed] == row[fixed]).all()
            for q in hands:
                assert det[L.NHAND + q] == row[L.NHAND + q]
            assert (obs_of(det, rules, p) == obs_of(row, rules, p)).all()
    assert stand_ins > 0 and improved > 10


@pytest.mark.parametrize("rules", RULE_SETS, ids=RULE_IDS)
def test_no_peeking(rules):
    """Permuting the hidden cards (as p sees the state) changes neither the sampled
    determinization nor the decision, the agent's stream or any scratch row."""
    r = rules.to_array(True)
    rng = np.random.default_rng(0)
    pool = np.zeros(NUM_CARDS, np.int32)
    changed = differs = 0
    for i, row in enumerate(positions(rules, every=6)):
        p = int(row[L.CUR])
        other = permute_hidden(row, rules, p, rng)
        check_row(other, rules)
        assert (obs_of(other, rules, p) == obs_of(row, rules, p)).all()
        changed += not (other == row).all()
        d1, d2 = np.zeros(L.SIZE, np.int32), np.zeros(L.SIZE, np.int32)
        W.determinize(row, r, p, d1, pool, np.array([i], np.uint64))
        W.determinize(other, r, p, d2, pool, np.array([i], np.uint64))
        assert (d1 == d2).all()
        opts = CHEAP if i % 2 else {"samples": 3, "budget": 2000, "width": None, "opponents": "uniform"}
        a1, s1, w1 = search(row, rules, i, opts)
        a2, s2, w2 = search(other, rules, i, opts)
        assert a1 == a2 and s1 == s2 and (w1 == w2).all()
        assert a1 in row[L.LEGAL:L.LEGAL + row[L.NLEGAL]]
        differs += a1 != search(row, rules, i + 1000, opts)[0]
    assert changed > 20
    assert differs > 0      # the decision does depend on the stream: the test can see a difference


def test_single_legal_action_and_wins_take_no_search():
    rules = RuleConfig()
    wt, dt, r = tables.win_table(), tables.deficiency_table(), rules.to_array(False)
    obs, mask, work, rows = new_workspace()
    forced = wins = 0
    stream = np.array([9], np.uint64)
    for gi in range(4):
        g = Game(rules, seed=3 + gi, auto_forced=False)
        while not g.done:
            row = np.array(g.state)
            legal = row[L.LEGAL:L.LEGAL + row[L.NLEGAL]].tolist()
            win = [a for a in legal if a == A_TSUMO or A_RON <= a < A_RON + 3]
            if len(legal) == 1 or win:
                rows[:] = -7
                rng = np.array([5], np.uint64)
                a = agent_action(row, r, wt, AGENT_SEARCH, rng, dt, agent_params("search"), obs, mask, work, rows)
                assert a in (legal if len(legal) == 1 else win)
                assert (rows == -7).all()                  # no rollout ran
                forced += len(legal) == 1
                wins += bool(win)
            a = agent_action(row, r, wt, AGENT_GREEDY, stream, dt, np.zeros(NUM_PARAMS), obs, mask, work, rows)
            g.step(int(a))
    assert forced > 10 and wins > 2


def test_search_wins_option_searches_a_legal_win():
    rules = RuleConfig()
    for row in positions(rules, games=3, every=1):
        legal = row[L.LEGAL:L.LEGAL + row[L.NLEGAL]].tolist()
        if any(a == A_TSUMO or A_RON <= a < A_RON + 3 for a in legal):
            _, _, rows = search(row, rules, 1, {"samples": 2, "search_wins": True})
            assert (rows[S.ROW_BASE] != 0).any()           # it did sample and roll out
            return
    pytest.fail("no position with a legal win")


# ---- legal actions under every rule set -----------------------------------------
def variants():
    """The default rules and every rule set that changes one field from it."""
    out = [RuleConfig(hands_per_game=1), RuleConfig(hands_per_game=2)]
    for field, values in _CHOICES.items():
        if field == "hands_per_game":
            continue
        for v in values:
            if v != getattr(RuleConfig(), field):
                out.append(RuleConfig(hands_per_game=1, **{field: v}))
    return out


def play_legal(rules, games, seed, opts=None, num_envs=32):
    """Play ``games`` one-hand games with the search agent in one seat (rotating
    with the game) and random agents elsewhere through VectorGame, whose step
    rejects any illegal action; return the search decisions made."""
    opts = opts or {"samples": 1, "budget": 1}
    vg = VectorGame(min(num_envs, games), rules=rules, seed=seed)
    vg.reset()
    finished = searched = 0
    while finished < games:
        seat = vg.game_index % 4
        agents = [("search", opts) if p == s else "random" for p, s in zip(vg.player, seat, strict=True)]
        searched += int((vg.player == seat).sum())
        _, _, _, _, done = vg.step(vg.policy_actions(agents))
        finished += int(done.sum())
    return searched


def test_legal_in_every_position_of_400_games_over_all_rule_variants():
    rules = variants()
    assert len(rules) == 12
    per = -(-400 // len(rules))
    searched = sum(play_legal(r, per, seed=i) for i, r in enumerate(rules))
    assert searched > 400 * 15


@pytest.mark.slow
@pytest.mark.parametrize("rules", variants(), ids=lambda r: ",".join(
    f"{k}={v}" for k, v in r.to_dict().items() if v != getattr(RuleConfig(), k) and k != "hands_per_game")
    or "default")
def test_legal_in_every_position_of_1000_games_per_rule_variant(rules):
    assert play_legal(rules, 1000, seed=7, opts={"samples": 2, "budget": 500}, num_envs=64) > 1000 * 15


# ---- determinism and the Python faces ---------------------------------------------
def test_same_seed_same_games():
    agents = (("search", CHEAP), "greedy", "random", ("search", {"samples": 1}))
    s1 = selfplay(4, agents=agents, seed=11, num_envs=4, rules=RuleConfig(hands_per_game=2))
    s2 = selfplay(4, agents=agents, seed=11, num_envs=1, rules=RuleConfig(hands_per_game=2))
    for k in ("games", "hands", "decisions", "mean_points", "wins"):
        assert s1[k] == s2[k]


def test_policy_actions_play_the_selfplay_games():
    """The search agent through VectorGame.policy_actions (parameters passed the
    same way) plays exactly selfplay's games."""
    agents = (("search", CHEAP), "greedy", "greedy", ("search", {"samples": 1, "budget": 100}))
    rules = RuleConfig(hands_per_game=1)
    B = 3
    vg = VectorGame(B, rules=rules, seed=5)
    vg.reset()
    finished = np.zeros(B, bool)
    points, decisions = np.zeros(4, np.int64), 0
    while not finished.all():
        _, _, _, rewards, done = vg.step(vg.policy_actions([agents[p] for p in vg.player]))
        decisions += int((~finished).sum())
        points += rewards[~finished].sum(0)
        finished |= done
    stats = selfplay(B, agents=agents, seed=5, num_envs=2, rules=rules)
    assert stats["decisions"] == decisions
    assert stats["mean_points"] == (points / B).tolist()


def test_policy_actions_draw_in_row_order_when_search_and_loop_agents_mix():
    """Rows of search and of loop agents (random, greedy) go through one kernel call
    in row order, so even repeated slots draw from their stream as one at a time."""
    agents = [("search", {"samples": 1, "budget": 50}), "random", "random", "greedy", "random"]
    together, alone = VectorGame(1, seed=3), VectorGame(1, seed=3)
    together.reset()
    alone.reset()
    both = together.policy_actions(agents, [0] * len(agents))
    each = [int(alone.policy_actions(a, [0])[0]) for a in agents]
    assert both.tolist() == each


def test_parameters_are_checked():
    assert set(AGENT_PARAMS["search"]) == {"samples", "budget", "search_wins", "confidence", "width", "opponents"}
    assert agent_params("search", {"opponents": "greedy"})[S.P_OPPONENTS] == S.OPP_GREEDY == S.DEFAULT_OPPONENTS
    assert agent_params("search", {"opponents": "uniform"})[S.P_OPPONENTS] == S.OPP_UNIFORM
    v = agent_params("search", {"samples": 3, "budget": None, "search_wins": True, "confidence": 0.5,
                                "width": None})
    assert v.shape == (NUM_PARAMS,) and v[S.P_SAMPLES] == 3 and v[S.P_BUDGET] < 0 and v[S.P_SEARCH_WINS] == 1
    assert v[S.P_CONFIDENCE] == 0.5 and v[S.P_WIDTH] < 0
    assert agent_params("search", {"width": 2})[S.P_WIDTH] == 3          # stored as w + 1
    d = agent_params("search")
    assert d[S.P_SAMPLES] == S.DEFAULT_SAMPLES and d[S.P_BUDGET] == S.DEFAULT_BUDGET
    assert d[S.P_CONFIDENCE] == S.DEFAULT_CONFIDENCE and d[S.P_WIDTH] == S.DEFAULT_WIDTH + 1
    assert (agent_params("greedy") == 0).all()
    for bad in [{"samples": 0}, {"samples": 2.5}, {"samples": True}, {"budget": -3}, {"budget": "big"},
                {"search_wins": 1}, {"confidence": -1}, {"confidence": float("nan")}, {"width": -1},
                {"opponents": "smart"}, {"opponents": 1}, {"depth": 3}]:
        with pytest.raises(ValueError, match="search"):
            agent_params("search", bad)
    with pytest.raises(ValueError, match="greedy"):
        agent_params("greedy", {"samples": 2})
    with pytest.raises(ValueError):
        agent_params("clever")
    assert resolve(("search", {"samples": 2})).kernel[0] == AGENT_SEARCH
    for bad in [("search", {"samples": 0}), ("search", 3), ("clever", {}), ("search",), 7]:
        with pytest.raises(ValueError, match="agent"):
            resolve(bad)
        with pytest.raises(ValueError, match="agents"):
            selfplay(1, agents=(bad, "greedy", "greedy", "greedy"))
    vg = VectorGame(2, seed=0)
    vg.reset()
    before = vg._st.copy()
    with pytest.raises(ValueError, match="samples"):
        vg.policy_actions(("search", {"samples": -1}))
    with pytest.raises(ValueError, match="agent"):
        vg.policy_actions([("search", {}), "greedy", "random"])
    assert (vg._st == before).all()
    a = vg.policy_actions(("search", {"samples": 1}), [1])
    assert vg.mask[1, a[0]]
