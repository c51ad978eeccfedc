"""The command line beyond watch and play: arena, ladder, train, bench, compile (majiang_env.cli)."""
import json
import re

import pytest

from majiang_env.cli import COMMANDS, main, parser


def test_every_command_has_help_with_its_defaults(capsys):
    for cmd in COMMANDS:
        if cmd == "train":
            continue                      # the recipe's own parser (needs torch): below
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert f"majiang_env {cmd}" in out
        if cmd in ("arena", "ladder", "bench"):
            assert "(default:" in out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(c in out for c in COMMANDS)


def test_arena_prints_an_interval_and_writes_json(capsys, tmp_path):
    path = tmp_path / "a.json"
    assert main(["arena", "greedy", "pretrained", "--deals", "3", "--hands", "1", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"pretrained\s+3\s+[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\]", out), out
    assert "gain over pretrained" in out and "load average" in out
    d = json.loads(path.read_text())
    assert d["deals"] == 3 and d["lineup"] == ["greedy", "pretrained", "pretrained", "pretrained"]
    assert main(["arena", "greedy", "random", "--deals", "2", "--hands", "1", "--lineup", "alternate"]) == 0
    assert "greedy" in capsys.readouterr().out


@pytest.mark.parametrize("argv,word", [
    (["arena", "greedy", "nobody"], "unknown agent 'nobody'"),
    (["arena", "greedy"], "two agents"),
    (["arena", "greedy", "random", "--deals", "1"], "2.."),
    (["arena", "greedy", "random", "--deals", "x"], "integer"),
    (["ladder", "search:samples=0"], "samples"),
    (["watch", "--agents", "greedy", "greedy", "greedy", "gready"], "gready"),
    (["play", "--opponents", "search:nope=1"], "nope"),
    (["bench", "--repeats", "0"], "1..100")])
def test_bad_values_are_usage_errors_before_any_work(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


def test_ladder_rows(capsys):
    assert main(["ladder", "random", "greedy", "--deals", "2", "--hands", "1"]) == 0
    out = capsys.readouterr().out
    assert "| greedy | 2 | +0.00" in out and "| random | 2 |" in out


def test_bench_prints_the_table(capsys, tmp_path):
    path = tmp_path / "b.json"
    assert main(["bench", "--decisions", "2000", "--repeats", "1", "--num-envs", "8", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| face | loop |" in out and "selfplay" in out and "agent" in out and "bare" in out
    rows = json.loads(path.read_text())["rows"]
    assert all(r["decisions_per_second"] > 0 for r in rows)


def test_compile_reports_the_cache(capsys):
    assert main(["compile"]) == 0
    out = capsys.readouterr().out
    assert "cache: " in out and "MiB" in out and "NUMBA_CACHE_DIR" in out


def test_train_is_the_recipe(capsys):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as e:
        main(["train", "--help"])
    assert e.value.code == 0 and "recipe" in capsys.readouterr().out


def test_the_parser_takes_any_registered_spec():
    args = parser().parse_args(["arena", "search:samples=2", "runs/x.npz", "--deals", "4"])
    assert args.agents == ["search:samples=2", "runs/x.npz"] and args.deals == 4
