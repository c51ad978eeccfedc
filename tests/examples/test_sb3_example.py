"""examples/sb3_maskable_ppo.py, the guide's SB3 example, with a tiny budget:
it prints SB3's progress table after each rollout and ends with an arena figure."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
PATH = Path(__file__).resolve().parents[2] / "examples" / "sb3_maskable_ppo.py"


def test_sb3_example_prints_progress_and_an_arena_figure(capsys, tmp_path):
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--timesteps", "1024", "--num-envs", "8", "--n-steps", "64", "--batch-size", "128",
                    "--n-epochs", "1", "--arena-deals", "3", "--json", str(tmp_path / "r.json")])
    text = capsys.readouterr().out
    assert text.count("total_timesteps") >= 2          # one table per rollout of 8 x 64 steps
    assert "arena, 3 deals" in text and "compiled in" in text
    assert np.isfinite(out["arena"]["points_per_hand"]["mean"]) and out["timesteps"] == 1024
    assert out["compile_seconds"] >= 0 and mod.parse_args([]).timesteps == 200_000   # a step budget
    assert (tmp_path / "r.json").is_file()
