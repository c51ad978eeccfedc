"""The command lines of the training recipe and of ``benchmarks/head_to_head.py``: every
value is checked when parsed, so a bad one is a usage error (exit status 2) at once,
before any work and without any output; a small run writes all its outputs."""
import importlib.util
import json
import pathlib
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

RECIPE_BAD = [
    ["--final-deals", "1"], ["--eval-deals", "1"], ["--eval-deals", "0"], ["--hidden", "0"], ["--hidden", "5000"],
    ["--hidden", "2.5"], ["--minutes", "0"], ["--minutes", "-1"], ["--minutes", "nan"], ["--minutes", "inf"],
    ["--updates", "0"], ["--imitate-decisions", "-1"], ["--eval-every-updates", "0"], ["--lr", "0"],
    ["--lr", "nan"], ["--ent-coef", "-1"], ["--num-envs", "0"], ["--epochs", "0"], ["--minibatch", "0"],
    ["--seed", "-1"], ["--seed", "x"], ["--shaping", "nan"], ["--imitate", "5"], ["--eval-every", "1"],
    ["--minutes", "5", "--imitate", "5"], ["--minutes", "5", "--eval-every", "0"], ["--imitate", "-1"],
    ["--critic", "both"],
]


@pytest.fixture(scope="module")
def recipe():
    pytest.importorskip("torch")
    from majiang_env.training import recipe
    return recipe


@pytest.mark.parametrize("bad", RECIPE_BAD, ids=" ".join)
def test_recipe_refuses_a_bad_value_at_once(recipe, bad, tmp_path, capsys):
    out = tmp_path / "run"
    t = time.perf_counter()
    with pytest.raises(SystemExit) as e:
        recipe.main([*bad, "--out", str(out)])
    assert e.value.code == 2 and time.perf_counter() - t < 5
    assert "usage:" in capsys.readouterr().err
    assert not out.exists()


def test_recipe_refuses_an_output_that_is_a_file(recipe, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(SystemExit) as e:
        recipe.main(["--out", str(f)])
    assert e.value.code == 2


def test_the_docstring_examples_parse(recipe):
    for line in recipe.__doc__.split("\n\n")[1].replace("\\\n", " ").splitlines():
        argv = line.split("#")[0].split()[3:]
        ap = recipe.parser()
        args = ap.parse_args(argv)
        recipe._check(ap, args)
    args = recipe.parser().parse_args(["--minutes", "5"])
    recipe._check(recipe.parser(), args)
    assert 0 < args.imitate < 5 and args.eval_every == 0.5


@pytest.mark.parametrize("timed", [False, True], ids=["by updates", "by minutes"])
def test_a_small_run_writes_every_output(recipe, tmp_path, timed, capsys):
    from majiang_env.agents.pretrained import PretrainedAgent
    out = tmp_path / "run"
    budget = ["--minutes", "0.05"] if timed else ["--updates", "2", "--eval-every-updates", "1",
                                                   "--imitate-decisions", "2048"]
    rep = recipe.main([*budget, "--eval-deals", "2", "--final-deals", "2", "--num-envs", "8", "--minibatch", "64",
                       "--hidden", "8", "--out", str(out)])
    for name in ("best.pt", "pretrained.npz", "curve.json"):
        assert (out / name).exists(), name
    assert json.loads((out / "curve.json").read_text())["final"]["deals"] == 2
    PretrainedAgent(path=out / "pretrained.npz")
    text = capsys.readouterr().out
    assert "cloning greedy" in text and "cloned greedy" in text
    if not timed:
        assert len(rep["history"]) == 2 and [c["label"] for c in rep["curve"]] == ["cloned", "ppo 1", "ppo 2"]
    else:
        assert "warming up" in text


def _head_to_head():
    spec = importlib.util.spec_from_file_location("bench_head_to_head", ROOT / "benchmarks" / "head_to_head.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_head_to_head_refuses_a_bad_value_at_once(tmp_path, capsys):
    from majiang_env.agents.pretrained import DEFAULT_WEIGHTS
    h2h = _head_to_head()
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    results = tmp_path / "nowhere" / "r.json"
    good = str(DEFAULT_WEIGHTS)
    for argv in ([good, "--deals", "1"], [good, "--deals", "0"], [good, "--deals", "x"], [good, "--seed", "-1"],
                 [str(tmp_path / "missing.npz")], [str(junk)], [good, "--name", "shipped"], [good, "--name", ""],
                 [good, "--write-results", str(results)]):
        t = time.perf_counter()
        with pytest.raises(SystemExit) as e:
            h2h.main(argv)
        assert e.value.code == 2 and time.perf_counter() - t < 10, argv
        assert "usage:" in capsys.readouterr().err
    assert not results.parent.exists()
    assert np.isfinite(h2h.compare(good, "copy", 2, 0)[0]["points_per_hand"]["mean"])
