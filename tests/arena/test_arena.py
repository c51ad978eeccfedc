"""The duplicate-deal arena (majiang_env.arena): seatings, exact games, statistics, boundaries."""
import importlib.util
import json
import math
import pathlib
import sys

import numpy as np
import pytest

from majiang_env import Game, arena, selfplay
from majiang_env.agents import GreedyAgent, RandomAgent, make_agent, parse_agent
from majiang_env.engine.rules import make_rules
from majiang_env.engine.vector import game_seed

A_TSUMO, A_RON, A_EXCHANGE = 108, 117, 120   # action ids (docs/api.md)


class DetGreedy:
    """The greedy policy made a pure function of the observation (its tie-break
    stream restarts at every call), so every way of calling it decides alike."""

    def __init__(self):
        self.g = GreedyAgent(seed=0)

    def __call__(self, obs):
        self.g.rng[0] = 12345
        return self.g(obs)


def lowest(obs):
    """Wins when it can, else the lowest legal id."""
    legal = np.flatnonzero(obs["action_mask"])
    wins = [a for a in legal if a == A_TSUMO or A_RON <= a < A_RON + 3]
    return int(wins[0] if wins else legal[0])


def batched(f):
    return arena.Batched(lambda obs, mask: np.array([f({"observation": o, "action_mask": m})
                                                     for o, m in zip(obs, mask, strict=True)]))


def play_game(seed, players, rules):
    """A whole Game with players[seat] deciding: scores, wins per seat, deal-in hands per seat."""
    g = Game(rules, seed=seed)
    while not g.done:
        p = g.current_player
        g.step(players[p]({"observation": g.observe(p), "action_mask": g.legal_mask()}))
    wins, dins = np.zeros(4, int), np.zeros(4, int)
    for h in range(rules.hands_per_game):
        ws = g.wins(h)
        for w in ws:
            wins[w["seat"]] += 1
        for q in {w["from"] for w in ws if w["from"] is not None}:
            dins[q] += 1
    return np.array(g.scores), wins, dins


def test_seatings_cover_every_seat():
    assert arena.seatings([0, 1, 1, 1]) == [(0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)]
    assert arena.seatings([0, 1, 1, 1], permutations=True) == arena.seatings([0, 1, 1, 1])
    assert arena.seatings([0, 0, 0, 0], permutations=True) == [(0, 0, 0, 0)]
    assert arena.seatings([0, 1, 0, 1]) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    for lineup, perms, n in (([0, 1, 2, 3], False, 4), ([0, 1, 2, 3], True, 24), ([0, 0, 1, 2], True, 12),
                             ([0, 0, 1, 1], False, 4)):
        s = np.array(arena.seatings(lineup, perms))
        assert len(s) == n
        for a in set(lineup):   # every agent holds every seat equally often
            per_seat = (s == a).sum(0)
            assert (per_seat == per_seat[0]).all() and per_seat.sum() == n * lineup.count(a)


def test_games_are_the_deals_in_every_seating():
    """Each (deal, seating) is the game Game(seed=game_seed(seed, d)) with the seating's
    agents in its seats: points, wins and deal-ins equal a plain Game loop's."""
    rules = make_rules(hands_per_game=2)
    det, low = DetGreedy(), lowest
    res = arena.run([det, low, low, low], 3, seed=11, rules=rules, names=["det", "low", "low", "low"],
                    num_envs=2)
    assert res.seatings == [(0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)]
    assert res.points.shape == (3, 4, 4) and res.games == 3 * 5    # 4 rotations + the all-"low" baseline
    players = {0: DetGreedy(), 1: lowest}
    for d in range(3):
        for k, seats in enumerate(res.seatings):
            pts, wins, dins = play_game(game_seed(11, d), [players[a] for a in seats], rules)
            assert res.points[d, k].tolist() == pts.tolist()
            assert res.wins[d, k].tolist() == wins.tolist()
            assert res.deal_ins[d, k].tolist() == dins.tolist()
        pts, wins, dins = play_game(game_seed(11, d), [lowest] * 4, rules)
        assert res.baseline_points[d].tolist() == pts.tolist()
        assert res.baseline_deal_ins[d].tolist() == dins.tolist()
    assert res.wins.sum() > 0 and res.deal_ins.sum() > 0


def test_in_kernel_agents_play_the_selfplay_games():
    res = arena.run(["greedy", "random", "random", "random"], 40, seed=3, baseline=False)
    s = selfplay(40, agents=("greedy", "random", "random", "random"), seed=3, num_envs=8)
    assert res.points[:, 0].sum(0).tolist() == [round(x * 40) for x in s["mean_points"]]
    assert res.wins[:, 0].sum(0).tolist() == s["wins"]
    assert res.decisions == sum(selfplay(40, agents=tuple(res.names[a] for a in seats), seed=3)["decisions"]
                                for seats in res.seatings)


def test_in_kernel_agents_with_parameters_play_the_selfplay_games():
    fast = ("search", {"samples": 2, "budget": 200})
    res = arena.run([fast, "greedy", "greedy", "greedy"], 3, seed=5, baseline=False)
    assert res.names == ["search:samples=2,budget=200", "greedy"]
    for seats in res.seatings:   # each seating's games are selfplay's games with the same agents
        agents = tuple(fast if a == 0 else "greedy" for a in seats)
        s = selfplay(3, agents=agents, seed=5, num_envs=3)
        k = res.seatings.index(seats)
        assert res.points[:, k].sum(0).tolist() == [round(x * 3) for x in s["mean_points"]]
    assert parse_agent("search:samples=2,budget=200") == fast
    assert parse_agent("search") == ("search", {})
    for bad, word in (("search:samples=0", "samples"), ("search:nope=1", "nope"), ("search:samples=x", "'x'")):
        with pytest.raises(ValueError, match=word):
            parse_agent(bad)
    with pytest.raises(ValueError, match="samples"):
        arena.run([("search", {"samples": -1}), "greedy", "greedy", "greedy"], 1)


def test_batch_size_and_calling_convention_do_not_change_the_games():
    det = DetGreedy()
    runs = [arena.run(["greedy", "random", "greedy", "random"], 4, seed=5, num_envs=n) for n in (1, 3, None)]
    runs += [arena.run([f, "random", "greedy", "random"], 6, seed=5, num_envs=n, names=["p", "r", "g", "r"])
             for f, n in ((det, 1), (det, 6), (batched(det), 1), (batched(det), 4))]
    for r in runs[1:3]:
        for x in ("points", "wins", "deal_ins", "baseline_points"):
            assert np.array_equal(getattr(r, x), getattr(runs[0], x))
    for r in runs[4:]:
        for x in ("points", "wins", "deal_ins", "baseline_points"):
            assert np.array_equal(getattr(r, x), getattr(runs[3], x))
    assert runs[3].kinds[0] == "batched" and runs[5].kinds[0] == "batched"   # a callable is called per row


def test_deterministic_for_a_seed():
    a = arena.run(["greedy", "random", "random", "random"], 5, seed=7)
    b = arena.run(["greedy", "random", "random", "random"], 5, seed=7)
    c = arena.run(["greedy", "random", "random", "random"], 5, seed=8)
    assert np.array_equal(a.points, b.points) and np.array_equal(a.deal_ins, b.deal_ins)

    def strip(r):
        return [{k: v for k, v in f.items() if k != "seconds_per_decision"} for f in r.figures()]

    assert strip(a) == strip(b)
    assert not np.array_equal(a.points, c.points)


def test_identical_agents_give_an_interval_around_zero():
    """Two copies of one policy in symmetric lineup positions (each between two greedy
    seats), with their own random streams: the paired difference varies, and covers 0."""
    res = arena.run([RandomAgent(1), "greedy", RandomAgent(2), "greedy"], 30, seed=2,
                    names=["a", "g", "b", "g"], reference="b")
    f = {x["agent"]: x for x in res.figures()}
    d = f["a"]["vs_reference"]["points_per_hand"]
    assert d["sd"] > 1 and d["ci"][0] < 0 < d["ci"][1]
    assert f["a"]["points_per_hand"]["ci"][1] < 0          # yet each copy clearly loses to greedy
    # under zero-sum payments the seats of one table add to 0, and so do the all-b baseline's
    assert abs(sum(f[n]["points_per_hand"]["mean"] * f[n]["seats"] for n in f)) < 1e-9
    assert np.all(res.baseline_points.sum(1) == 0)


def test_mirrored_seatings_cancel_exactly():
    """With all 24 orders, every seating of two copies of an in-kernel policy has its
    mirror (the copies swapped), which is the same game: the difference is exactly 0."""
    res = arena.run(["greedy", "greedy", "random", "random"], 4, seed=2, names=["a", "b", "r", "r"],
                    reference="b", permutations=True, baseline=False)
    assert len(res.seatings) == 12
    d = {x["agent"]: x for x in res.figures()}["a"]["vs_reference"]["points_per_hand"]
    assert d["mean"] == 0 and d["ci"] == [0, 0]


def test_stronger_agent_is_detected_with_few_deals():
    res = arena.run(["greedy", "random", "random", "random"], 8, seed=1)
    f = {x["agent"]: x for x in res.figures()}
    assert res.names[res.reference] == "random"
    assert f["greedy"]["gain"]["points_per_hand"]["ci"][0] > 0
    assert f["greedy"]["win_rate"]["ci"][0] > f["random"]["win_rate"]["ci"][1]
    assert f["random"]["points_per_hand"]["ci"][1] < 0
    assert res.table().splitlines()[3].split()[1] == "greedy"       # first in the ladder


def test_outputs_json_table_and_progress(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)       # no tqdm: no bar, same run
    res = arena.run(["greedy", "random", "random", "random"], 3, seed=0, progress=True)
    d = json.loads(res.to_json(tmp_path / "a.json"))
    assert json.loads((tmp_path / "a.json").read_text()) == d
    assert d["agents"] == ["greedy", "random"] and d["deals"] == 3 and d["seed"] == 0
    assert d["deal_seeds"] == [game_seed(0, i) for i in range(3)] and d["games"] == 15
    assert d["seatings"][1] == ["random", "greedy", "random", "random"] and d["reference"] == "random"
    r = d["results"][0]
    for k in ("points_per_hand", "win_rate", "deal_in_rate"):
        assert set(r[k]) == {"mean", "ci", "half_width", "sd", "n"} and r[k]["n"] == 3
        assert set(r["gain"][k]) == set(r[k])
    assert "vs_reference" in r and "vs_reference" not in d["results"][1]
    one = arena.run(["greedy"] * 4, 1, seed=0).to_dict()["results"][0]["points_per_hand"]
    assert one["ci"] is None and json.dumps(one)
    assert "greedy" in res.table() and "gain over random" in res.table()


def test_t_quantile():
    for df, t in ((1, 12.7062), (10, 2.2281), (30, 2.0423), (31, 2.0395), (40, 2.0211), (60, 2.0003),
                  (120, 1.9799), (10 ** 6, 1.95996)):
        assert abs(arena.t_quantile(df) - t) < 2e-4
    m = arena.mean_ci([1.0, 2.0, 3.0, 4.0])
    assert m["mean"] == 2.5 and math.isclose(m["half_width"], 3.1824 * np.std([1, 2, 3, 4], ddof=1) / 2)


def test_bad_arguments_are_named():
    ok = ["greedy", "random", "random", "random"]
    for bad, word in (
            (dict(agents=ok[:3]), "agents"), (dict(agents="greedy"), "agents"),
            (dict(agents=["nobody"] + ok[1:]), "'nobody'"), (dict(agents=[3] + ok[1:]), "agents[0]"),
            (dict(deals=0), "deals"), (dict(deals=2.5), "deals"), (dict(deals=True), "deals"),
            (dict(seed=-1), "seed"), (dict(seed="x"), "seed"), (dict(permutations="yes"), "permutations"),
            (dict(baseline=1), "baseline"), (dict(num_envs=0), "num_envs"), (dict(rules={"nope": 1}), "nope"),
            (dict(names=["a", "b"]), "names"), (dict(names=["a", "a", "b", "b"]), "names[1]"),
            (dict(reference="greedyy"), "reference"), (dict(progress=None), "progress")):
        kw = {"agents": ok, "deals": 2, **bad}
        with pytest.raises(ValueError, match=word.replace("[", r"\[").replace("]", r"\]")):
            arena.run(kw.pop("agents"), **kw)
    with pytest.raises(ValueError, match="module"):
        make_agent("no_such_module_xyz:f")
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("greedyy")
    assert isinstance(make_agent("majiang_env.agents:GreedyAgent", seed=1), GreedyAgent)


@pytest.mark.parametrize("agent,word", [
    (lambda obs: 999, "999"), (lambda obs: "x", "'x'"), (lambda obs: 1.0, "float"),
    (lambda obs: int(np.flatnonzero(obs["action_mask"] == 0)[0]), "not a legal action"),
    (arena.Batched(lambda o, m: np.full(len(o), A_EXCHANGE + 35)), str(A_EXCHANGE + 35)),
    (arena.Batched(lambda o, m: np.zeros(len(o) + 1, np.int64)), "shape"),
    (arena.Batched(lambda o, m: m.argmax(1).astype(float)), "float")])
def test_illegal_actions_name_the_agent(agent, word):
    with pytest.raises(arena.AgentError, match="'bad'") as e:
        arena.run([agent, "random", "random", "random"], 2, names=["bad", "r", "r", "r"])
    assert word in str(e.value)


def test_command_line(tmp_path, capsys):
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "arena.py"
    spec = importlib.util.spec_from_file_location("bench_arena", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    main = mod.main
    out = tmp_path / "r.json"
    assert main(["--agents", "majiang_env.agents:GreedyAgent", "greedy", "random", "random",
                 "--deals", "2", "--no-progress", "--json", str(out), "--reference", "random"]) == 0
    text = capsys.readouterr().out
    assert "GreedyAgent" in text and "gain over random" in text
    assert json.loads(out.read_text())["agents"] == ["GreedyAgent", "greedy", "random"]
    with pytest.raises(SystemExit):
        main(["--agents", "greedy", "nobody", "random", "random", "--deals", "2"])


def test_ladder_script(tmp_path, capsys):
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "ladder.py"
    spec = importlib.util.spec_from_file_location("bench_ladder", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "l.json"
    assert mod.main(["--deals", "2", "--no-search", "--add", "fast search=search:samples=2,budget=100",
                     "--json", str(out)]) == 0
    text = capsys.readouterr().out
    rows = {r["agent"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"random", "greedy", "pretrained", "fast search"} and "| random | 2 |" in text
    assert rows["greedy"]["points_per_hand"]["mean"] == 0          # zero-sum and symmetric
    assert rows["random"]["points_per_hand"]["mean"] < 0
    with pytest.raises(SystemExit):
        mod.main(["--deals", "2", "--no-search", "--add", "bad"])


def test_adversarial_specs_found_by_a_tester(tmp_path):
    # the same in-kernel agent written two ways is one agent
    res = arena.run(["greedy", ("greedy", {}), ("greedy", {}), ("greedy", {})], 1,
                    rules={"hands_per_game": 1}, baseline=False)
    assert res.names == ["greedy"] and len(res.seatings) == 1
    # relative or empty module names are named in a ValueError
    for bad in ("..:x", ":GreedyAgent"):
        with pytest.raises(ValueError, match="cannot import module"):
            make_agent(bad)
    # the ladder: a row named like another row or like the opponents, or a bad spec, stops before any play
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "ladder.py"
    spec = importlib.util.spec_from_file_location("bench_ladder2", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for args in (["--add", "greedy=random"], ["--add", "x=greedy", "--add", "x=random"],
                 ["--add", "x=search:samples=0"], ["--add", "x=..:x"]):
        with pytest.raises(SystemExit):
            mod.main(["--deals", "100000", "--no-search"] + args)
