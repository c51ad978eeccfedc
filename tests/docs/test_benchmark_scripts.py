"""The benchmark scripts behind the published figures write their results files
(``--write-results``, ``benchmarks/results_io.py``): each run with its command, machine, date,
commit and load average, replacing the rows it measured again. Tiny runs, into tmp_path."""
import importlib.util
import json
import pathlib

import pytest

BENCH = pathlib.Path(__file__).parents[2] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def runs(path):
    data = json.loads(path.read_text())
    assert data["format"] == "majiang-results/1"
    for run in data["runs"]:
        assert {"command", "machine", "date", "commit", "load_average", "rows"} <= set(run)
        assert run["command"].startswith("python benchmarks/") and run["machine"]["cores"] >= 1
    return data["runs"]


def test_write_replaces_rows_of_the_same_name_and_variant(tmp_path):
    rio = load("results_io")
    path = tmp_path / "x.json"
    a = rio.run_record("python benchmarks/x.py", [{"row": "a", "v": 1}, {"row": "b", "v": 1}], variant="omp")
    rio.write(path, a)
    rio.write(path, rio.run_record("python benchmarks/x.py", [{"row": "b", "v": 2}], variant="tbb"))
    assert [[r["row"] for r in run["rows"]] for run in runs(path)] == [["a", "b"], ["b"]]   # another variant
    rio.write(path, rio.run_record("python benchmarks/x.py --only b", [{"row": "b", "v": 3}], variant="omp"))
    got = runs(path)
    assert [[(r["row"], r["v"]) for r in run["rows"]] for run in got] == [[("a", 1)], [("b", 2)], [("b", 3)]]
    rio.write(path, [rio.run_record("python benchmarks/x.py", [{"row": "a", "v": 4}], variant="omp"),
                     rio.run_record("python benchmarks/x.py", [{"row": "a", "v": 5}], variant="omp")])  # repeats
    assert [[r["v"] for r in run["rows"]] for run in runs(path)] == [[2], [3], [4], [5]]
    assert rio.resolve("peers") == rio.RESULTS / "peers.json" and rio.resolve("a/b.json") == pathlib.Path("a/b.json")
    with pytest.raises(ValueError):
        rio.run_record("python benchmarks/x.py", [{"v": 1}])
    assert rio.command_line(["--x", "a b"], BENCH / "y.py") == "python benchmarks/y.py --x 'a b'"


def test_fastpath_game_and_vector_write_their_rows(tmp_path, capsys):
    path = tmp_path / "fastpath.json"
    load("bench_fastpath").main(["--only", "aec", "single/random", "selfplay", "--seconds", "0.05", "--rounds", "1",
                                 "--sizes", "8", "--write-results", str(path)])
    (run,) = runs(path)
    assert [r["row"] for r in run["rows"]] == ["single/random", "aec", "selfplay B=8"]
    assert all(r["rates"]["0 busy"] > 0 for r in run["rows"]) and "0 busy" in run["load_average"]
    assert run["variant"].startswith(("omp", "tbb", "workqueue"))
    path = tmp_path / "game.json"
    load("bench_game").main(["--games", "2", "--write-results", str(path)])
    (run,) = runs(path)
    assert run["rows"][0]["row"] == "game" and run["rows"][0]["decisions_per_s"] > 0
    path = tmp_path / "vector.json"
    load("bench_vector").main(["--sizes", "8", "--seconds", "0.05", "--memory-check", "16",
                               "--write-results", str(path)])
    (run,) = runs(path)
    assert [r["row"] for r in run["rows"]] == ["B=8", "memory B=16"] and run["rows"][0]["selfplay"] > 0
    assert "wrote" in capsys.readouterr().out


def test_obs_writes_a_row_per_opponents_size_and_obs_type_and_renders(tmp_path, capsys):
    path = tmp_path / "benchmarks" / "results" / "obs.json"
    load("bench_obs").main(["--sizes", "8", "--seconds", "0.05", "--rounds", "1", "--write-results", str(path)])
    (run,) = runs(path)
    names = [r["row"] for r in run["rows"]]
    assert names == [f"seat/{o}/{t} B=8" for o in ("greedy", "random") for t in ("compact", "float", "features")] \
        + ["encode/float", "encode/features"]
    assert all(r["rates"]["0 busy"] > 0 for r in run["rows"]) and run["numba_threads"] == 1
    text = load("render_docs").obs_types({"obs": json.loads(path.read_text())}, str)
    assert "| greedy | 8 | idle |" in text and "bench_obs.py" in text and "rows/s" in text
    assert "float/features" in capsys.readouterr().out


def test_compare_peers_writes_one_run_per_repeat_and_the_renderer_reads_it(tmp_path):
    path = tmp_path / "benchmarks" / "results" / "peers.json"
    path.parent.mkdir(parents=True)
    load("compare_peers").main(["--seconds", "0.1", "--rounds", "1", "--batch", "8", "--selfplay-sizes", "8",
                                "--step-threads", "1", "--repeat", "2", "--write-results", str(path)])
    got = runs(path)
    assert [run["run"] for run in got] == [1, 2]
    rows = {r["row"]: r for r in got[0]["rows"]}
    assert rows["majiang/aec"]["decisions_per_s"] > 0 and rows["connect_four"]["decisions_per_s"] > 0
    assert {"majiang/vector/numpy B=8 threads=1", "majiang/vector/kernel B=8 threads=1",
            "majiang/selfplay B=8"} <= set(rows)
    if "decisions_per_s" not in rows["riichienv"]:
        assert rows["riichienv"]["error"] == "not installed"
    rd = load("render_docs")
    results = {**rd.load_results(), "peers": json.loads(path.read_text())}
    text = rd.render_text("<!-- results:peers -->\n<!-- /results:peers -->\n", results, tmp_path / "x.md")
    assert "runs 1 / 2" in text and "majiang_v2 env() AEC loop" in text


def test_ladder_and_arena_write_their_rows(tmp_path):
    path = tmp_path / "ladder.json"
    assert load("ladder").main(["--deals", "2", "--no-search", "--only", "random", "greedy",
                                "--write-results", str(path)]) == 0
    (run,) = runs(path)
    assert [r["row"] for r in run["rows"]] == ["random", "greedy"] and run["seed"] == 0
    assert run["rows"][1]["points_per_hand"]["mean"] == 0
    path = tmp_path / "arena.json"
    arena = load("arena")
    for deals in (2, 2, 3):
        assert arena.main(["--agents", "greedy", "random", "random", "random", "--deals", str(deals),
                           "--no-progress", "--write-results", str(path)]) == 0
    got = runs(path)      # the second run of 2 deals replaced the first
    assert [run["rows"][0]["row"] for run in got] == ["--agents greedy random random random --deals 2",
                                                     "--agents greedy random random random --deals 3"]
    figs = {f["agent"]: f for f in got[0]["rows"][0]["figures"]}
    assert figs["greedy"]["points_per_hand"]["mean"] > 0 and "gain" in figs["greedy"]


def test_cold_rows_and_total():
    cold = load("bench_cold")
    rows = cold.rows({"a": 1.04, "b": 2.0}, {"a": 0.16, "b": 0.0})
    assert rows == [{"row": "a", "empty_cache_s": 1.0, "cached_s": 0.2}, {"row": "b", "empty_cache_s": 2.0,
                                                                          "cached_s": 0.0}]


def test_head_to_head_plays_the_same_deals_and_renders(tmp_path, capsys):
    from majiang_env.agents.pretrained import DEFAULT_WEIGHTS
    path = tmp_path / "head_to_head.json"
    rows = load("head_to_head").main([str(DEFAULT_WEIGHTS), "--name", "copy", "--deals", "3",
                                      "--write-results", str(path)])
    assert [r["row"] for r in rows] == ["copy vs 3 greedy", "shipped vs 3 greedy", "copy vs shipped"]
    # the shipped weights against themselves: the same games, so no difference at all
    assert rows[0]["points_per_hand"] == rows[1]["points_per_hand"] and rows[0]["minus_shipped"]["mean"] == 0
    assert rows[2]["points_per_hand"]["mean"] == 0
    (run,) = runs(path)
    assert run["variant"] == "copy" and all(r["deals"] == 3 for r in run["rows"])
    text = load("render_docs").head_to_head({"head_to_head": json.loads(path.read_text())}, str)
    assert "| copy vs shipped | 3 |" in text and "head_to_head.py" in text
    assert "minus shipped" in capsys.readouterr().out


def test_record_curve_adds_a_variant_beside_the_shipped_run_and_draws_them(tmp_path):
    pytest.importorskip("matplotlib")
    rc = load("record_curve")
    point = {"label": "start", "train_minutes": 0.2, "decisions": 0, "points": -40.0, "low": -42.0, "high": -38.0,
             "load1": 1.5}
    fig = {"mean": 0.4, "ci": [0.3, 0.5]}
    curve = {"args": {"minutes": 60.0, "imitate": 0.0, "eval_every": 6.0, "eval_deals": 300, "final_deals": 4000,
                      "critic": "state", "shaping": 0.3, "hidden": 256, "seed": 0, "out": "runs/x", "lr": None},
             "train_seconds": 3600.0, "imitation": None,
             "curve": [point, {**point, "label": "ppo 1", "train_minutes": 6.0, "decisions": 10, "points": -5.0}],
             "final": {"checkpoint": "ppo 1", "deals": 4000, "rotations": 4, "points": -4.0, "low": -4.5,
                       "high": -3.5, "seconds": 60.0,
                       "arena": {"results": [{"agent": "policy", "win_rate": fig, "deal_in_rate": fig}]}}}
    src = tmp_path / "curve.json"
    src.write_text(json.dumps(curve))
    dest = tmp_path / "train_strong.json"
    shipped = load("results_io").run_record("python -m majiang_env.training.recipe --imitate 5",
                                            [{"row": "ppo 1", "train_minutes": 5.0, "decisions": 1, "deals": 300,
                                              "points_per_hand": {"mean": 1.0, "ci": [0.0, 2.0]}},
                                             {"row": "final", "checkpoint": "ppo 1", "deals": 4000,
                                              "points_per_hand": {"mean": 1.0, "ci": [0.5, 1.5]}}])
    load("results_io").write(dest, shipped)
    rc.record(src, "from scratch", dest=dest)
    data = json.loads(dest.read_text())
    assert [r.get("variant", "") for r in data["runs"]] == ["", "from scratch"]   # the shipped run's rows are kept
    new = data["runs"][1]
    # a run of the wall-clock budget: its minutes are named, the default budget being by updates
    assert new["command"] == ("python -m majiang_env.training.recipe --minutes 60 --imitate 0 --eval-every 6 "
                              "--critic state --shaping 0.3 --out runs/x")
    assert [r["row"] for r in new["rows"]] == ["start", "ppo 1", "final"] and new["load_average"].startswith("1.5")
    text = load("render_docs").curves({"train_strong": data}, str)
    assert "| from scratch |" in text and "−4.00 [−4.50, −3.50] (4,000 deals)" in text
    png = rc.plot(tmp_path / "curves.png", dest=dest)
    assert png.stat().st_size > 1000
