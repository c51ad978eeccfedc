"""benchmarks/search_ceiling.py (paired measurement of what reading hidden hands is worth) and
benchmarks/profile_step.py (perf map of the compiled kernel)."""
import importlib.util
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from majiang_env import RuleConfig
from majiang_env.vector import game_seed

BENCH = pathlib.Path(__file__).parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_search_ceiling_pairs_games_and_reports_every_player(capsys, monkeypatch):
    sc = load("search_ceiling")
    t = sc.Tables(RuleConfig())
    plays = []
    for d in range(3):
        seed = game_seed(0, d)
        base = sc.play(seed, t)
        assert np.array_equal(base, sc.play(seed, t))          # same seed, same game
        plays.append((seed, base))
    # a player that keeps greedy's action plays exactly the all-greedy game: the pairing is exact
    monkeypatch.setattr(sc, "choose", lambda player, game, t, p, obs, mask, a: a)
    for seed, base in plays:
        for s in range(4):
            assert np.array_equal(sc.play(seed, t, s, "oracle"), base)
    monkeypatch.undo()
    # the oracle leaves greedy's discard only for one that no seat can win on next turn
    changed = 0
    for seed, base in plays:
        for s in range(4):
            changed += not np.array_equal(sc.play(seed, t, s, "oracle"), base)
    assert changed > 0
    sc.main(["--deals", "2", "--players", "oracle", "latest", "search"])
    out = capsys.readouterr().out
    for name in ("oracle", "latest", "search"):
        assert any(line.startswith(name + " ") for line in out.splitlines()), out


def test_oracle_discards_never_deal_in_when_a_safe_equal_option_exists():
    sc = load("search_ceiling")
    t = sc.Tables(RuleConfig())
    from majiang_env import Game
    from majiang_env.kernel.greedy import W_VAL, greedy_action
    checked = 0
    for seed in range(6):
        game = Game(t.rules, seed=seed)
        rng = np.array([seed + 1], np.uint64)
        while not game.done:
            p = game.current_player
            obs, mask = game.observe(p), game.legal_mask()
            a = greedy_action(obs, mask, rng, t.dt, t.chow_off, t.kuikae, t.w)
            if game.phase == "discard" and sc.A_DISCARD <= a < sc.A_DISCARD + 36:
                b = sc.choose("oracle", game, t, p, obs, mask, a)
                assert mask[b]
                va = t.w[W_VAL + a]
                safe = [c for c in sc.DISCARDS if mask[c] and t.w[W_VAL + c] == va
                        and not sc.deals_in(game, t, p, c - sc.A_DISCARD)]
                if safe:
                    assert not sc.deals_in(game, t, p, b - sc.A_DISCARD) and t.w[W_VAL + b] == va
                    checked += sc.deals_in(game, t, p, a - sc.A_DISCARD)
            game.step(a)
    assert checked > 0      # positions where greedy's own discard would have dealt in


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")
def test_profile_step_writes_a_perf_map_naming_the_kernel():
    runs = [subprocess.run([sys.executable, str(BENCH / "profile_step.py"), "--seconds", "0.2", "--envs", "8"],
                           capture_output=True, text=True, timeout=600) for _ in range(2)]   # 1st may compile
    for r in runs:
        assert r.returncode == 0, r.stderr
    line = runs[1].stdout.splitlines()[-1]
    assert line.startswith("/tmp/perf-") and "functions" in line, runs[1].stdout
    path = line.split(":")[0]
    names = pathlib.Path(path).read_text()
    pathlib.Path(path).unlink()
    assert "majiang_env.kernel.core.settle" in names
    for row in names.splitlines():
        address, size, _ = row.split(" ", 2)
        assert int(address, 16) > 0 and int(size, 16) > 0
