"""``python_majiang`` (majiang_env.envs.openspiel): OpenSpiel's own random simulation test under
the rule variants, the same games as ``Game``, resampling, the parameter boundary; the
arena's ``act_world`` agents and ``majiang_env.agents.ismcts.ISMCTSAgent``."""
import numpy as np
import pytest

from majiang_env import Game, arena
from majiang_env.agents import GreedyAgent, game_obs

VARIANTS = [
    {},
    {"exchange": False},
    {"side_cards_public": True},
    {"discard_drawn": True},
    {"chow_from": "previous"},
    {"payment": "winner_only"},
    {"kuikae": False, "furiten": True, "require_yaku": True},
    {"wins_to_close": 1},
]


@pytest.fixture(scope="module")
def mos():
    pytest.importorskip("pyspiel")
    import majiang_env.envs.openspiel as mos
    return mos


def one_hand(**rules):
    return {"hands_per_game": 1, **rules}


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "default")
def test_openspiel_random_sim_test(mos, variant):
    import pyspiel
    game = mos.load_game(one_hand(**variant))
    pyspiel.random_sim_test(game, num_sims=1, serialize=variant in ({}, {"exchange": False}), verbose=False)


def test_random_sim_test_two_hands_compact_observation(mos):
    import pyspiel
    game = pyspiel.load_game("python_majiang", {"hands_per_game": 2, "obs_type": "compact"})
    assert game.observation_tensor_shape() == [436]
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_game_type_and_bounds_follow_the_rules(mos):
    import pyspiel
    zs = mos.load_game(one_hand())
    t = zs.get_type()
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL and zs.num_players() == 4
    assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert (zs.num_distinct_actions(), zs.max_chance_outcomes(), zs.max_game_length()) == (156, 256, 16 + 152)
    assert (zs.min_utility(), zs.max_utility(), zs.utility_sum()) == (-900.0, 300.0, 0.0)
    wo = mos.load_game({"payment": "winner_only", "exchange": False})
    assert wo.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert (wo.min_utility(), wo.max_utility(), wo.max_game_length()) == (0.0, 1200.0, 4 * 152)
    assert zs.observation_tensor_shape() == [1364] and not t.provides_information_state_tensor
    assert set(zs.get_parameters()) == set(mos.RULE_FIELDS) | {"obs_type"}


@pytest.mark.parametrize("variant", VARIANTS + [{"hands_per_game": 2}],
                         ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "default")
def test_same_game_as_the_engine(mos, variant):
    """The 8 chance bytes deal Game(seed); then legal actions, rewards and returns match
    the engine's step by step, over whole games of random play."""
    rules = {"hands_per_game": 1, **variant}
    game = mos.load_game(rules)
    rng = np.random.default_rng(len(variant))
    for seed in (3, 2 ** 64 - 5):
        g = Game(rules, seed=seed)
        s = game.new_initial_state()
        for b in mos.seed_actions(seed):
            assert s.is_chance_node() and sum(p for _, p in s.chance_outcomes()) == pytest.approx(1.0)
            s.apply_action(b)
        assert s.engine.record() == g.record()
        total, moves = np.zeros(4), []
        while not g.done:
            assert s.current_player() == g.current_player and s.legal_actions() == g.legal_actions()
            assert all(s.legal_actions(p) == [] for p in range(4) if p != g.current_player)
            la = g.legal_actions()
            a = la[rng.integers(len(la))]
            pts = g.step(a)
            s.apply_action(a)
            moves.append(a)
            assert s.rewards() == pts.tolist() and s.returns() == g.scores.tolist()
            total += pts
        assert s.is_terminal() and s.returns() == total.tolist() == g.scores.tolist()
        assert s.history() == mos.seed_actions(seed) + moves


def play_to(s, n, rng):
    for _ in range(n):
        if s.is_terminal():
            break
        la = s.legal_actions()
        s.apply_action(la[rng.integers(len(la))])
    return s


@pytest.mark.parametrize("variant", [{}, {"side_cards_public": True, "discard_drawn": True}, {"hands_per_game": 2}])
def test_resample_keeps_the_players_view(mos, variant):
    import pyspiel
    game = mos.load_game(one_hand(**variant))
    rng = np.random.default_rng(1)
    sampler = pyspiel.UniformProbabilitySampler(0., 1.)
    s = game.new_initial_state()
    for b in mos.seed_actions(99):
        s.apply_action(b)
    changed = 0
    for _ in range(12):
        for p in range(4):
            r = s.resample_from_infostate(p, sampler)
            assert r.engine.sampled and r.engine.seed is None and r.history() == []
            assert r.information_state_string(p) == s.information_state_string(p)
            assert r.observation_tensor(p) == s.observation_tensor(p)
            assert r.observation_string(p) == s.observation_string(p)
            assert r.current_player() == s.current_player() and r.returns() == s.returns()
            if s.current_player() == p:
                assert r.legal_actions() == s.legal_actions()
            q = (p + 1) % 4
            changed += r.observation_tensor(q) != s.observation_tensor(q)
            w = r.resample_from_infostate(p, None)                 # a world of a world: the same view
            assert w.information_state_string(p) == s.information_state_string(p)
        play_to(s, 9, rng)
    assert changed > 20      # the other seats' hidden cards really are redealt


def test_information_state_string_follows_what_the_player_saw(mos):
    game = mos.load_game(one_hand())
    s = game.new_initial_state()
    assert s.information_state_string(0) == "seat 0, before the deal"
    for b in mos.seed_actions(5):
        s.apply_action(b)
    seen = {p: {s.information_state_string(p)} for p in range(4)}
    rng = np.random.default_rng(0)
    for _ in range(40):
        play_to(s, 1, rng)
        for p in range(4):
            k = s.information_state_string(p)
            assert k not in seen[p]            # every action is seen (at least as a turn passing)
            seen[p].add(k)
    assert len({s.information_state_string(p) for p in range(4)}) == 4


def test_clone_serialize_and_worlds(mos):
    game = mos.load_game(one_hand())
    s = play_to(game.new_initial_state(), 8 + 30, np.random.default_rng(2))
    c = s.clone()
    assert str(c) == str(s) and c.engine is not s.engine and c.history() == s.history()
    c.apply_action(c.legal_actions()[0])
    assert str(c) != str(s) and len(s.history()) == 38
    d = game.deserialize_state(s.serialize())
    assert str(d) == str(s) and d.engine.record() == s.engine.record() and d.history() == s.history()
    w = s.resample_from_infostate(s.current_player(), None)
    dw = game.deserialize_state(w.serialize())
    assert str(dw) == str(w) and dw.engine.sampled and dw.engine.seed is None
    mid = play_to(game.new_initial_state(), 3, np.random.default_rng(0))   # during the deal
    r = mid.resample_from_infostate(0, None)
    assert r.is_chance_node() and len(r.history()) == 3


def test_parameters_boundary(mos):
    import pyspiel
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'seed'"):
        pyspiel.load_game("python_majiang", {"seed": 3})
    with pytest.raises(pyspiel.SpielError, match="Wrong type for parameter hands_per_game"):
        pyspiel.load_game("python_majiang", {"hands_per_game": "2"})
    with pytest.raises(ValueError, match="hands_per_game = 5 is not allowed"):
        pyspiel.load_game("python_majiang", {"hands_per_game": 5})
    with pytest.raises(ValueError, match="chow_from = 'left' is not allowed"):
        pyspiel.load_game("python_majiang", {"chow_from": "left"})
    with pytest.raises(ValueError, match="obs_type must be one of"):
        pyspiel.load_game("python_majiang", {"obs_type": "pixels"})
    with pytest.raises(ValueError, match="unknown RuleConfig field"):
        mos.load_game({"hand_per_game": 1})
    s = play_to(mos.load_game(one_hand()).new_initial_state(), 8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="seat"):
        s.resample_from_infostate(4, None)
    with pytest.raises(ValueError, match="probability_sampler"):
        s.resample_from_infostate(0, 0.5)
    with pytest.raises(ValueError, match="probability_sampler returned"):
        s.resample_from_infostate(0, lambda: 7.0)
    with pytest.raises(ValueError, match="not legal"):
        s.apply_action(0 if 0 not in s.legal_actions() else 155)
    with pytest.raises(ValueError, match="needs a majiang_env.Game"):
        mos.state_from_game("game")


def test_state_from_game_keeps_no_seed_of_a_world(mos):
    g = Game({"hands_per_game": 1}, seed=8)
    for _ in range(20):
        g.step(g.legal_actions()[0])
    s = mos.state_from_game(g)
    assert s.engine.record() == g.record() and s.history() == [] and not s.is_chance_node()
    w = g.sample_hidden(g.current_player, 4)
    ws = mos.state_from_game(w)
    assert ws.engine.seed is None and ws.information_state_string(g.current_player) == s.information_state_string(
        g.current_player)


def test_ismcts_bot_plays_legal_actions(mos):
    from open_spiel.python.algorithms import ismcts

    from majiang_env.agents.ismcts import GreedyRolloutEvaluator
    game = mos.load_game(one_hand())
    bot = ismcts.ISMCTSBot(game, GreedyRolloutEvaluator(1, 0), 40.0, 8, random_state=np.random.RandomState(0))
    s = play_to(game.new_initial_state(), 8, np.random.default_rng(0))
    for _ in range(6):
        a = bot.step(s)
        assert a in s.legal_actions()
        s.apply_action(a)
        play_to(s, 3, np.random.default_rng(1))


# ---- the arena's act_world agents ------------------------------------------------------------

class WorldGreedy:
    """The greedy policy, fed from the world the arena hands over: the same games as GreedyAgent."""

    name = "world-greedy"

    def __init__(self, seed):
        self.greedy = GreedyAgent(seed)
        self.worlds = 0

    def act_world(self, world, seat):
        assert world.sampled and world.seed is None and world.current_player == seat
        with pytest.raises(ValueError, match="sampled by sample_hidden"):
            world.record()
        self.worlds += 1
        return self.greedy(game_obs(world, seat))


def test_arena_act_world_agent_sees_its_seats_view():
    rules = {"hands_per_game": 1}
    w = WorldGreedy(7)
    a = arena.run([w, "greedy", "greedy", "greedy"], deals=3, seed=5, rules=rules, baseline=False, num_envs=2)
    b = arena.run([GreedyAgent(7), "greedy", "greedy", "greedy"], deals=3, seed=5, rules=rules, baseline=False,
                  num_envs=2)
    assert w.worlds == a.agent_decisions[0] > 0 and a.kinds[0] == "world"
    assert np.array_equal(a.points, b.points) and np.array_equal(a.wins, b.wins)


def test_ismcts_agent_in_the_arena(mos):
    from majiang_env.agents.ismcts import ISMCTSAgent
    ag = ISMCTSAgent(seed=0, simulations=3)
    res = arena.run([ag, "greedy", "greedy", "greedy"], deals=1, seed=0, rules={"hands_per_game": 1}, baseline=False)
    f = next(f for f in res.figures() if f["agent"] == "ismcts:3")
    assert f["kind"] == "world" and f["decisions"] > 20
    g = Game({"hands_per_game": 1}, seed=1)
    with pytest.raises(ValueError, match="not the real game"):
        ag.act_world(g, g.current_player)
    with pytest.raises(ValueError, match="simulations"):
        ISMCTSAgent(simulations=0)
    with pytest.raises(ValueError, match="evaluator"):
        ISMCTSAgent(evaluator="alphazero")
    from majiang_env import agents
    assert agents.ISMCTSAgent is ISMCTSAgent


def test_bench_ismcts_writes_its_rows(mos, tmp_path, capsys):
    import importlib.util
    import json
    import pathlib
    path = pathlib.Path(__file__).parents[2] / "benchmarks" / "bench_ismcts.py"
    spec = importlib.util.spec_from_file_location("bench_ismcts", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "ismcts.json"
    assert bench.main(["--sims", "2", "3", "--deals", "2", "--no-reference", "--write-results", str(out)]) == 0
    (run,) = json.loads(out.read_text())["runs"]
    assert run["command"].startswith("python benchmarks/bench_ismcts.py") and run["machine"]["cores"] >= 1
    assert [r["row"] for r in run["rows"]] == ["IS-MCTS, 2 simulations", "IS-MCTS, 3 simulations"]
    assert all(r["deals"] == 2 and r["hands_per_game"] == 1 and r["ms_per_decision"] > 0 for r in run["rows"])
    assert "IS-MCTS, 2 simulations" in capsys.readouterr().out


def test_without_openspiel_the_import_error_names_the_extra():
    import subprocess
    import sys
    code = ("import sys; sys.modules['pyspiel'] = None; sys.modules['open_spiel'] = None\n"
            "for name in ('majiang_env.envs.openspiel', 'majiang_env.agents.ismcts'):\n"
            "    try:\n        __import__(name)\n    except ImportError as e:\n        print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stdout
    assert out.count('pip install "majiang_env[openspiel]"') == 2, out
