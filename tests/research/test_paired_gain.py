"""research/paired_gain.py: paired gains over greedy, oracle players included; its results file."""
import importlib.util
import json
import pathlib

import numpy as np
import pytest

from majiang_env import Game, RuleConfig
from majiang_env.engine.kernel.greedy import W_VAL, greedy_action
from majiang_env.engine.kernel.observe import OBS_RIVER, OBS_SCALAR, OBS_SIZE, S_RETIRED
from majiang_env.engine.rules import A_ANKAN, A_MINKAN, A_RON
from majiang_env.engine.vector import game_seed

RESEARCH = pathlib.Path(__file__).parents[2] / "research"


def load(name):
    spec = importlib.util.spec_from_file_location(f"research_{name}", RESEARCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def pg():
    return load("paired_gain")


def test_pairing_gains_and_all_greedy_figures(pg, monkeypatch):
    t = pg.Tables(RuleConfig())
    gain, stats = pg.gains(t, ["oracle", "latest"], 3, seed=5)
    wins = points = rons = 0
    for d in range(3):
        seed = game_seed(5, d)
        base = pg.play(seed, t)
        assert np.array_equal(base, pg.play(seed, t))                  # same seed, same game
        for x in ("oracle", "latest"):                                  # the gain of the seat played
            want = sum(pg.play(seed, t, s, x)[s] - base[s] for s in range(4)) / 16
            assert gain[x][d] == pytest.approx(want)
        game = Game(t.rules, seed=seed)                                 # the all-greedy game, replayed
        rngs = [np.array([(seed * 4 + s + 1) % 2 ** 64], np.uint64) for s in range(4)]
        while not game.done:
            p = game.current_player
            game.step(greedy_action(game.observe(p), game.legal_mask(), rngs[p], t.dt, t.chow_off, t.kuikae, t.w))
        assert np.array_equal(game.scores, base)
        for h in range(4):
            for w in game.wins(h):
                wins += 1
                points += 3 * w["base"]
                rons += 3 * w["base"] * (w["from"] is not None)
    assert stats[3:].tolist() == [wins, points, rons] and 0 < stats[1] <= stats[0]
    assert gain["oracle"].mean() > 0
    # a player that keeps greedy's action plays exactly the all-greedy game: the pairing is exact
    monkeypatch.setattr(pg, "choose", lambda player, game, t, p, obs, mask, a: a)
    for d in range(3):
        seed = game_seed(5, d)
        for s in range(4):
            assert np.array_equal(pg.play(seed, t, s, "oracle"), pg.play(seed, t))
    with pytest.raises(ValueError):
        pg.play(seed, t, 0, "oracle", stats=np.zeros(6, np.int64))


def test_deals_in_predicts_the_rons_of_greedy_seats_and_the_oracle_avoids_them(pg):
    """deals_in (the oracle's reading of the real hands) is checked against what happens: greedy
    seats win on every discard they can, at their next turn, unless they win on another discard
    then or the hand closes first; and no seat wins on a discard deals_in called safe."""
    t = pg.Tables(RuleConfig())
    predicted = won_on = avoided = 0
    for seed in range(8):
        game = Game(t.rules, seed=seed)
        rngs = [np.array([seed * 4 + s + 1], np.uint64) for s in range(4)]
        latest = {}                          # discarder -> [predicted, won on]
        while not game.done:
            p = game.current_player
            obs, mask = game.observe(p), game.legal_mask()
            a = greedy_action(obs, mask, rngs[p], t.dt, t.chow_off, t.kuikae, t.w)
            if pg.is_discard(game, a):
                b = pg.choose("oracle", game, t, p, obs, mask, a)
                va = t.w[W_VAL + a]
                safe = [c for c in pg.DISCARDS if mask[c] and t.w[W_VAL + c] == va
                        and not pg.deals_in(game, t, p, c - pg.A_DISCARD)]
                hit = pg.deals_in(game, t, p, a - pg.A_DISCARD)
                if hit:
                    assert b in safe if safe else b == a            # never the +1 step without slack
                    avoided += bool(safe)
                else:
                    assert b == a
                won_on += sum(w for pr, w in [latest.get(p, [False, False])] if pr and w)
                latest[p] = [hit, False]
                predicted += hit
            elif game.phase == "discard" and a in (*range(A_ANKAN, A_ANKAN + 36), *range(A_MINKAN, A_MINKAN + 36)):
                latest[p] = [None, False]                           # a kan card: not predicted here
            elif A_RON <= a < A_RON + 3:
                q = (p + a - A_RON + 1) % 4
                assert latest[q][0] is not False                    # every 栄 on a 打 was predicted
                latest[q][1] = True
            hand = game.hand_index
            game.step(a)
            if game.hand_index != hand:                             # a new hand: count, forget
                won_on += sum(1 for pr, w in latest.values() if pr and w)
                latest = {}
    assert predicted > 0 and avoided > 0 and won_on >= 0.8 * predicted


def test_latest_rule_and_search_path(pg, monkeypatch, capsys):
    obs = np.zeros(OBS_SIZE, np.int16)
    obs[OBS_RIVER + 1 * 18:OBS_RIVER + 1 * 18 + 3] = [5, 9, 12]       # seat r=1 discarded kinds 4, 8, 11
    obs[OBS_RIVER + 2 * 18] = 12                                        # r=2: kind 11
    obs[OBS_SCALAR + S_RETIRED + 3] = 1                                 # r=3 has won: safe against it
    assert [pg.latest_safe(obs, k) for k in (11, 8, 4, 0)] == [3, 1, 1, 1]
    # the search seat gets a copy of its own stream as it was before greedy's draw
    t = pg.Tables(RuleConfig())
    real = pg.greedy_action
    last = []                                   # per greedy call: (stream before its draw, action)

    def greedy(obs, mask, rng, *args):
        before = int(rng[0])
        a = real(obs, mask, rng, *args)
        last[:] = [before, a]
        return a

    calls = []

    def search(row, rules, wt, rng, dt, params, *space):
        calls.append(int(rng[0]) == last[0] and params is t.params)
        rng[0] += np.uint64(12345)              # the real search advances its stream too
        return last[1]                          # and this one then plays greedy's action

    monkeypatch.setattr(pg, "greedy_action", greedy)
    seed = game_seed(0, 0)
    base = pg.play(seed, t)
    monkeypatch.setattr(pg, "search_action", search)
    assert np.array_equal(pg.play(seed, t, 2, "search"), base)
    assert len(calls) > 50 and all(calls)
    monkeypatch.undo()
    pg.main(["--deals", "2", "--players", *pg.PLAYERS, "--search", "samples=2,budget=100"])
    out = capsys.readouterr().out
    for name in pg.PLAYERS:
        assert any(line.startswith(name + " ") for line in out.splitlines()), out


def test_tenpai_value_reads_the_own_hand_from_the_observation(pg):
    """wait_value, on the hand own_hand_row rebuilds from the observation, equals the same sum on
    the real state's own hand (concealed cards, the drawn card, shown melds) at every waiting
    discard of greedy games; tenpai-value leaves greedy's discard only for a better wait."""
    from majiang_env.engine.kernel import cards, scoring
    from majiang_env.engine.kernel import layout as L
    from majiang_env.engine.kernel.greedy import W_UNSEEN
    t = pg.Tables(RuleConfig())
    checked = melded = changed = 0
    for seed in range(6):
        game = Game(t.rules, seed=seed)
        rng = np.array([seed + 1], np.uint64)
        while not game.done:
            p = game.current_player
            obs, mask = game.observe(p), game.legal_mask()
            a = greedy_action(obs, mask, rng, t.dt, t.chow_off, t.kuikae, t.w)
            if pg.is_discard(game, a):
                c = pg.choose("tenpai-value", game, t, p, obs, mask, a)    # fills t.w like option_values
                if c != a:
                    assert t.w[W_VAL + a] == t.w[W_VAL + c] == 1
                    assert pg.wait_value(t, p, c - pg.A_DISCARD) > pg.wait_value(t, p, a - pg.A_DISCARD)
                    changed += 1
                for b in pg.DISCARDS:
                    if not (mask[b] and t.w[W_VAL + b] == 1):
                        continue
                    assert pg.own_hand_row(t, obs) == p
                    got = pg.wait_value(t, p, b - pg.A_DISCARD)
                    st = game.state.copy()
                    if st[L.DRAWN] >= 0:
                        cards.add_card(st, p, st[L.DRAWN])
                    cards.remove_lowest(st, p, b - pg.A_DISCARD)
                    want = sum(int(t.w[W_UNSEEN + x]) * max(scoring.score_win(st, p, x, t.win), 1)
                               for x in range(36) if t.w[W_UNSEEN + x] > 0 and scoring.is_win(st, t.wt, p, x))
                    assert got == want
                    checked += 1
                    melded += st[L.NMELD + p] > 0
            game.step(a)
    assert checked > 100 and melded > 10 and changed > 5


def test_hidden_players_weigh_the_unknown_cards_as_draws_from_the_unseen_pool(pg):
    """expected_deal_ins (hidden1 / hidden2) equals a brute-force count: every ordered way to draw
    the hidden cards, as distinct copies, from the observer's unseen cards less the other hands'
    known cards, each hand judged by the reference's winning-shape search; the hidden cards are
    the last ones each seat took from its square and still holds (checked at every discard, with
    nothing hidden equal to the oracle's reading); the players leave greedy's discard only for
    one of the same deficiency with fewer expected deal-ins, and the +1 players their own choice
    only for the safest discard one deficiency step worse, safer by more than the step risk."""
    import itertools

    from reference import decompositions

    from majiang_env.engine.kernel import layout as L
    from majiang_env.engine.kernel import scoring
    from majiang_env.engine.kernel.greedy import W_UNSEEN, option_values
    t = pg.Tables(RuleConfig(), step_risk=0.02)     # low enough for both players to step in these games
    assert pg.Tables(RuleConfig()).step_risk == pg.STEP_RISK == 0.05
    checked = {1: 0, 2: 0}
    stepped = {1: 0, 2: 0}
    nonzero = changed = 0
    for seed in range(3):
        game = Game(t.rules, seed=seed)
        rng = np.array([seed + 1], np.uint64)
        n = 0
        while not game.done:
            p = game.current_player
            obs, mask = game.observe(p), game.legal_mask()
            a = greedy_action(obs, mask, rng, t.dt, t.chow_off, t.kuikae, t.w)
            if pg.is_discard(game, a):
                n += 1
                st = game.state
                known = {k: {} for k in (0, 1, 2)}      # k -> seat -> (held counts less the hidden cards, hidden)
                for q in range(4):
                    if q == p:
                        continue
                    took = st[L.SQUARES + st[L.HAND] * 144 + q * 36:][:st[L.SQPOS + q]]
                    in_hand = [c for c in took if st[L.HMASK + q * 36 + c // 4] >> (c % 4) & 1]
                    for k in known:
                        held = [st[L.HCNT + q * 36 + x] for x in range(36)]
                        for c in in_hand[::-1][:k]:
                            held[c // 4] -= 1
                        known[k][q] = (held, min(k, len(in_hand)))
                        row = st.copy()                         # hide_recent, at every discard
                        assert pg.hide_recent(row, q, k) == known[k][q][1]
                        assert row[L.HCNT + q * 36:L.HCNT + q * 36 + 36].tolist() == held
                active = [q for q in known[0] if not st[L.RETIRED + q]]
                kinds = [c - pg.A_DISCARD for c in pg.DISCARDS if mask[c]]
                option_values(obs, mask, t.dt, t.chow_off, t.kuikae, t.w)
                exact = pg.expected_deal_ins(game, t, p, 0, kinds)    # nothing hidden: the oracle's reading
                for y in kinds:
                    assert exact[y] == sum(scoring.is_win(st, t.wt, q, y) for q in active)
                    assert (exact[y] > 0) == pg.deals_in(game, t, p, y)
                va = t.w[W_VAL + a]
                tied = [c - pg.A_DISCARD for c in pg.DISCARDS if mask[c] and t.w[W_VAL + c] == va]
                worse = [c - pg.A_DISCARD for c in pg.DISCARDS if mask[c] and t.w[W_VAL + c] == va + 1]
                risks = {k: pg.expected_deal_ins(game, t, p, k, tied + worse) for k in (1, 2)}
                chosen = {}
                for player, (k, slack) in pg.HIDDEN.items():
                    b = chosen[player] = pg.choose(player, game, t, p, obs, mask, a)   # refills t.w alike
                    risk = risks[k]
                    if not slack and b != a:
                        assert b - pg.A_DISCARD in tied and risk[b - pg.A_DISCARD] < risk[a - pg.A_DISCARD]
                        changed += 1
                    if slack:       # the same choice as without slack, unless a worse step is safer by the step risk
                        own = chosen[f"hidden{k}"]
                        if b != own:
                            assert b - pg.A_DISCARD in worse
                            assert risk[b - pg.A_DISCARD] < risk[own - pg.A_DISCARD] - t.step_risk
                            assert risk[b - pg.A_DISCARD] == min(risk[y] for y in worse)
                            stepped[k] += 1
                        elif worse:
                            assert min(risk[y] for y in worse) >= risk[own - pg.A_DISCARD] - t.step_risk - 1e-9
                        continue
                    if n % (12 if k == 1 else 60) or st[L.SLOT] < 24:
                        continue
                    pool = [int(t.w[W_UNSEEN + x]) - sum(h[x] for h, _ in known[k].values()) for x in range(36)]
                    cards = [x for x in range(36) for _ in range(max(pool[x], 0))]
                    for y in tied[:3]:
                        want = 0.0
                        for q in active:
                            held, hidden = known[k][q]
                            need = 4 - st[L.NMELD + q]
                            draws = list(itertools.permutations(range(len(cards)), hidden))
                            wins = 0
                            for idx in draws:
                                counts = list(held)
                                for i in idx:
                                    counts[cards[i]] += 1
                                counts[y] += 1
                                wins += bool(decompositions(counts, need))
                            want += wins / len(draws)
                        assert risk[y] == pytest.approx(want)
                        nonzero += want > 0
                        checked[k] += 1
            game.step(a)
    assert checked[1] > 20 and checked[2] > 5 and nonzero > 0 and changed > 10
    assert stepped[1] > 0 and stepped[2] > 0, stepped


def test_write_results_replaces_the_rows_it_measured(pg, tmp_path, capsys):
    """--write-results adds a run with the machine, date, commit and load; a later run replaces
    the rows of the same players (and settings) and keeps the others."""
    path = tmp_path / "paired.json"
    pg.main(["--deals", "2", "--players", "oracle", "latest", "--write-results", str(path)])
    data = json.loads(path.read_text())
    (run,) = data["runs"]
    assert {"command", "machine", "date", "commit", "load_average", "rows"} <= set(run)
    assert run["command"].startswith("python research/paired_gain.py --deals 2")
    assert set(run["machine"]) == {"cpu", "cores"} and len(run["load_average"]) == 3
    assert [r["row"] for r in run["rows"]] == ["oracle", "latest"]
    lo, hi = run["rows"][0]["gain"]["ci"]
    assert lo <= run["rows"][0]["gain"]["mean"] <= hi and run["all_greedy"]["discards_per_hand"] > 0
    pg.main(["--deals", "2", "--seed", "1", "--players", "latest", "hidden1+1", "--write-results", str(path)])
    runs = json.loads(path.read_text())["runs"]
    assert [[r["row"] for r in run["rows"]] for run in runs] == [["oracle"], ["latest", "hidden1+1"]]
    assert runs[1]["rows"][1]["variant"] == "step risk 0.05"
    assert "wrote" in capsys.readouterr().out
