"""research/bench_search.py: time per searched decision, and strength through the arena."""
import importlib.util
import json
import pathlib

RESEARCH = pathlib.Path(__file__).parents[2] / "research"


def test_strength_is_the_arena_gain_and_the_run_is_written(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("research_bench_search", RESEARCH / "bench_search.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.parse_config("default") == {} and mod.parse_config("samples=2,budget=none")["samples"] == 2
    path = tmp_path / "search.json"
    mod.main(["--deals", "2", "--config", "samples=2,budget=100", "--timing-games", "1",
              "--write-results", str(path)])
    (row,) = json.loads(path.read_text())["runs"][0]["rows"]
    assert row["row"] == "samples=2,budget=100" and row["deals"] == 2 and row["timed_decisions"] > 0
    # the same lineup through the arena gives the same gain: strength is the arena's figure
    from majiang_env import arena
    res = arena.run([("search", {"samples": 2, "budget": 100}), "greedy", "greedy", "greedy"], 2,
                    names=["search", "greedy", "greedy", "greedy"], reference="greedy")
    f = next(f for f in res.figures() if f["agent"] == "search")
    assert row["gain"]["mean"] == f["gain"]["points_per_hand"]["mean"]
    assert "samples=2,budget=100" in capsys.readouterr().out
