"""examples/cleanrl_ppo.py: its GAE, and a few updates of the script end to end in a subprocess
(both opponent phases, a tiny arena), checked through its printed progress and its curve.json."""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "cleanrl_ppo.py")


def _module():
    spec = importlib.util.spec_from_file_location("cleanrl_ppo", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_gae_cuts_the_bootstrap_at_a_game_end():
    gae = _module().compute_gae
    # one env, 3 steps; the step before observation 2 ended a game (dones[2] = 1)
    rewards = torch.tensor([[1.0], [2.0], [4.0]])
    values = torch.tensor([[0.5], [0.25], [1.0]])
    dones = torch.tensor([[0.0], [0.0], [1.0]])
    next_value, next_done = torch.tensor([3.0]), torch.tensor([0.0])
    g, lam = 0.5, 0.5
    adv, ret = gae(rewards, values, dones, next_value, next_done, g, lam)
    d2 = 4.0 + g * 3.0 - 1.0                      # bootstraps from the value after the rollout
    d1 = 2.0 - 0.25                               # the game ended: no bootstrap, nothing from step 2
    d0 = 1.0 + g * 0.25 - 0.5
    expected = [d0 + g * lam * d1, d1, d2]
    assert torch.allclose(adv[:, 0], torch.tensor(expected))
    assert torch.allclose(ret, adv + values)


def test_script_trains_both_phases_and_writes_the_curve(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, SCRIPT, "--total-timesteps", "1536", "--random-fraction", "0.5",
           "--num-envs", "8", "--num-steps", "32", "--num-minibatches", "2", "--update-epochs", "1",
           "--hidden", "32", "--hands-per-game", "1", "--window", "20", "--torch-threads", "1",
           "--arena-deals", "3", "--out-dir", str(out)]
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    updates = [line for line in p.stdout.splitlines() if line.startswith("update ")]
    assert len(updates) == 6 and "SPS" in updates[0] and "return/game" in updates[0]
    assert "--- phase greedy" in p.stdout
    assert "arena: ppo vs 3 greedy" in p.stdout and "arena: ppo vs 3 random" in p.stdout

    res = json.loads((out / "curve.json").read_text())
    for key in ("args", "autoreset_mode", "train_seconds", "env_steps", "steps_per_second", "curve",
                "phases", "arena", "load_average"):
        assert key in res, key
    assert res["env_steps"] == 1536 and res["autoreset_mode"] == "SAME_STEP"
    assert [c["phase"] for c in res["curve"]] == ["random"] * 3 + ["greedy"] * 3
    for c in res["curve"]:
        for key in ("wall_seconds", "env_steps", "mean_return", "phase", "policy_loss", "value_loss", "entropy"):
            assert key in c, key
        assert math.isfinite(c["value_loss"]) and math.isfinite(c["policy_loss"])
    assert res["phases"]["random"]["games"] > 0 and res["phases"]["greedy"]["games"] > 0
    assert res["curve"][-1]["mean_return"] is not None
    assert [a["opponents"] for a in res["arena"]] == ["greedy", "random"]
    for a in res["arena"]:
        pph = a["points_per_hand"]
        assert a["deals"] == 3 and math.isfinite(pph["mean"]) and all(math.isfinite(x) for x in pph["ci"])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "no PNG" in p.stdout
    else:
        assert (out / "curve.png").stat().st_size > 0
