"""Self-checks of the pure-Python reference (tests/reference.py)."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
import reference as ref  # noqa: E402

# action ids (docs/api.md); cards (docs/rules.md §1, §3)
A_TSUMO, A_PASS, A_RON, A_EXCHANGE, NUM_ACTIONS = 108, 109, 117, 120, 156
NUM_CARDS, SQUARE_SIZE = 144, 36


def K(face, number):
    return face * 9 + number - 1


def test_rules_example_base_48():
    conc = [K(0, 1), K(0, 2), K(0, 3), K(0, 4), K(0, 5), K(0, 6),
            K(1, 7), K(1, 8), K(1, 9), K(1, 7), K(1, 8), K(1, 9), K(2, 5), K(2, 5)]
    assert ref.best_base(0, [], conc) == 48
    # the same with the runs shown as chows
    assert ref.best_base(0, [("chow", K(0, 1)), ("chow", K(1, 7))],
                         conc[3:6] + conc[9:]) == 48


def test_small_scoring_cases():
    pair = [K(3, 5), K(3, 5)]
    # no pattern -> base 1
    junk = [K(0, 1), K(0, 2), K(0, 3), K(1, 5), K(1, 6), K(1, 7),
            K(2, 2), K(2, 2), K(2, 2), K(3, 8), K(3, 8), K(3, 8)]
    assert ref.best_total(1, [], junk + pair) == 0
    assert ref.best_base(1, [], junk + pair) == 1
    # own colour triplet of 2 for seat 2 -> 2 points
    assert ref.best_total(2, [], junk + pair) == 2
    # own colour kan scores 10
    assert ref.best_base(2, [("ankan", K(2, 2))], junk[:6] + junk[9:] + pair) == 10
    # two runs step 3 in two colours: g=1, p=3
    assert ref.best_total(1, [("chow", K(0, 1)), ("chow", K(1, 4))],
                          junk[6:] + pair) == 13
    # not a winning shape
    assert ref.best_base(0, [], junk[:-1] + pair + [K(0, 9)]) == 0
    # four triplets, one colour, step 1 -> g=9, p=6
    t = []
    for n in (1, 2, 3, 4):
        t += [K(0, n)] * 3
    assert ref.best_total(1, [], t + pair) >= 96


def _random_squares(rng, hands):
    out = []
    for _ in range(hands):
        cards = list(range(NUM_CARDS))
        rng.shuffle(cards)
        out.append([cards[SQUARE_SIZE * p:SQUARE_SIZE * (p + 1)] for p in range(4)])
    return out


def _random_rules(rng):
    return {
        "hands_per_game": rng.choice([1, 2, 4]),
        "chow_from": rng.choice(["next", "previous"]),
        "exchange": rng.choice([True, False]),
        "side_cards_public": False,
        "discard_drawn": rng.choice([True, False]),
        "kuikae": rng.choice([True, False]),
        "furiten": rng.choice([True, False]),
        "require_yaku": rng.choice([True, False]),
        "wins_to_close": rng.choice([1, 2, 3]),
        "payment": rng.choice(["zero_sum", "winner_only"]),
    }


def _play(rng, rules, prefer_wins=False):
    sq = _random_squares(rng, rules["hands_per_game"])
    g = ref.RefGame(rules, sq)
    steps = 0
    while not g.done:
        loc = g.card_locations()
        assert len(loc) == NUM_CARDS
        me = g.current_player
        assert 0 <= me < 4
        if g.phase == "take":
            assert g.drawn[me] is None
            assert len(g.hand[me]) + 3 * len(g.melds[me]) == 13
        legal = g.legal_actions()
        assert legal and legal == sorted(set(legal))
        if g.phase == "discard" and g._lap() < ref.LAST_LAP:
            assert A_PASS not in legal
        wins = [a for a in legal if a == A_TSUMO or A_RON <= a < A_EXCHANGE]
        if prefer_wins and wins:
            a = rng.choice(wins)
        else:
            a = rng.choice(legal)
        illegal = [x for x in range(NUM_ACTIONS) if x not in legal]
        try:
            g.step(rng.choice(illegal))
            raise AssertionError("illegal action accepted")
        except ValueError:
            pass
        g.step(a)
        steps += 1
        assert steps < 10000
    assert g.current_player == -1
    assert len(g.hand_results) == rules["hands_per_game"]
    tot = [0, 0, 0, 0]
    for res in g.hand_results:
        assert len(res["wins"]) <= rules["wins_to_close"]
        for p in range(4):
            tot[p] += res["deltas"][p]
        if rules["payment"] == "zero_sum":
            assert sum(res["deltas"]) == 0
        else:
            assert all(d >= 0 for d in res["deltas"])
    assert tot == g.scores
    return g


def test_random_games_default_rules():
    rng = random.Random(1)
    for _ in range(6):
        _play(rng, dict(ref.DEFAULT_RULES, hands_per_game=1), prefer_wins=True)


def test_random_games_random_rules():
    rng = random.Random(2)
    nwins = 0
    for _ in range(25):
        g = _play(rng, _random_rules(rng), prefer_wins=rng.random() < 0.7)
        nwins += sum(len(r["wins"]) for r in g.hand_results)
    assert nwins > 0


def _record_of(rng, rules):
    sq = _random_squares(rng, rules["hands_per_game"])
    g = ref.RefGame(rules, sq)
    hands = []
    while not g.done:
        hi = g.hand_index
        if len(hands) <= hi:
            hands.append({"index": hi, "start_seat": hi % 4,
                          "squares": sq[hi], "decisions": []})
        legal = g.legal_actions()
        a = rng.choice(legal)
        hands[hi]["decisions"].append([g.current_player, a, legal])
        g.step(a)
    for hi, h in enumerate(hands):
        h["wins"] = [dict(w) for w in g.hand_results[hi]["wins"]]
        h["deltas"] = list(g.hand_results[hi]["deltas"])
    return {"format": "majiang-record/1", "rules": rules, "seed": 0,
            "hands": hands, "scores": list(g.scores)}


def test_check_record_roundtrip_and_detects_tampering():
    rng = random.Random(3)
    rules = dict(ref.DEFAULT_RULES, hands_per_game=2)
    rec = _record_of(rng, rules)
    ref.check_record(rec)
    bad = _record_of(random.Random(3), rules)
    bad["hands"][0]["decisions"][20][2] = bad["hands"][0]["decisions"][20][2] + [NUM_ACTIONS - 1]
    try:
        ref.check_record(bad)
    except AssertionError as e:
        assert "hand 0 decision 20" in str(e)
    else:
        raise AssertionError("tampered legal set not detected")
    bad = _record_of(random.Random(3), rules)
    bad["scores"][0] += 1
    try:
        ref.check_record(bad)
    except AssertionError:
        pass
    else:
        raise AssertionError("tampered scores not detected")


def test_four_hand_game():
    # (no wall-clock assert here: speed is measured in benchmarks/, not in unit tests)
    _play(random.Random(4), dict(ref.DEFAULT_RULES, hands_per_game=4))
