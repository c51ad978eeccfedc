"""The guide's trainer snippets run as written (the SB3 one with a smaller budget)."""
import re
import textwrap
from pathlib import Path

import pytest

GUIDE = (Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text(encoding="utf-8")


def snippet(marker):
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", GUIDE, re.S)]
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"one guide snippet with {marker!r}, found {len(found)}"
    return found[0]


def test_gymnasium_wrappers_snippet_runs():
    code = snippet("NormalizeObservation(")
    scope = {}
    exec(compile(code, "guide.md", "exec"), scope)
    assert scope["obs"].dtype.name == "float32" and scope["obs"].shape[0] == 8


def test_sb3_snippet_runs_with_a_small_budget():
    pytest.importorskip("sb3_contrib")
    code = snippet("n_steps=64, batch_size=256")
    assert "model.learn(200_000)" in code
    scope = {}
    exec(compile(code.replace("model.learn(200_000)", "model.learn(512)").replace("SB3VecEnv(64", "SB3VecEnv(8"),
                 "guide.md", "exec"), scope)
    assert scope["model"].num_timesteps >= 512


def test_pimc_snippet_runs_with_one_world():
    code = snippet("def pimc_action(")
    assert "pimc_action(game, worlds=8)" in code
    scope = {}
    exec(compile(code.replace("pimc_action(game, worlds=8)", "pimc_action(game, worlds=1)"), "guide.md", "exec"),
         scope)
    game = scope["game"]
    a = scope["pimc_action"](game, worlds=2, seed=3)
    assert a in game.legal_actions() and 120 <= a < 156       # a 変 at the first decision


def test_openspiel_ismcts_snippet_runs_with_few_simulations():
    pytest.importorskip("pyspiel")
    code = snippet("ismcts.ISMCTSBot(")
    assert ", 40.0, 100, random_state" in code
    scope = {}
    exec(compile(code.replace(", 40.0, 100, random_state", ", 40.0, 4, random_state"), "guide.md", "exec"), scope)
    assert scope["state"].get_game().get_type().short_name == "python_majiang"
