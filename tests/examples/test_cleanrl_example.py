"""examples/cleanrl_ppo.py: its budget (steps by default, a wall-clock budget only when asked), its
GAE, and a few updates of the script end to end in a subprocess (both opponent phases, a tiny arena),
checked through its printed progress and its curve.json; a step budget stops at that many steps."""
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


def test_the_default_budget_is_steps_and_seconds_only_when_asked():
    mod = _module()
    args = mod.parse_args([])
    assert args.total_timesteps == mod.DEFAULT_TIMESTEPS and args.total_timesteps > 0
    assert args.total_seconds is None
    timed = mod.parse_args(["--total-seconds", "60"])
    assert timed.total_seconds == 60.0 and timed.total_timesteps is None
    assert mod.parse_args(["--total-timesteps", "1000"]).total_timesteps == 1000
    for argv in (["--total-timesteps", "1000", "--total-seconds", "60"], ["--total-timesteps", "0"]):
        with pytest.raises(SystemExit):
            mod.parse_args(argv)


def test_a_step_budget_stops_at_whole_env_steps_and_plots_over_steps(tmp_path, capsys):
    mod = _module()
    # 1,001 decisions of 8 games: 126 env steps (1,008 decisions), phase switch at 63 (504);
    # the rollouts of 32 steps end short at each phase's end
    res = mod.main(["--total-timesteps", "1001", "--num-envs", "8", "--num-steps", "32", "--num-minibatches", "2",
                    "--update-epochs", "1", "--hidden", "16", "--hands-per-game", "1", "--torch-threads", "1",
                    "--arena-deals", "0", "--out-dir", str(tmp_path / "run")])
    text = capsys.readouterr().out
    assert "compiled in" in text
    assert res["env_steps"] == 1008 and res["budget"] == {"total_timesteps": 1001, "env_steps": 1008}
    assert res["phase_switch_step"] == 504 and res["compile_seconds"] >= 0
    assert [c["env_steps"] for c in res["curve"]] == [256, 504, 760, 1008]
    assert [c["phase"] for c in res["curve"]] == ["random"] * 2 + ["greedy"] * 2
    if res["png"]:
        again = mod.main(["--replot", str(tmp_path / "run" / "curve.json"), str(tmp_path / "again.png")])
        assert again and (tmp_path / "again.png").stat().st_size > 0


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
    assert "--- phase greedy" in p.stdout and "compiled in" in p.stdout
    assert "budget: 1,536 learner decisions" in p.stdout
    assert "arena: ppo vs 3 greedy" in p.stdout and "arena: ppo vs 3 random" in p.stdout

    res = json.loads((out / "curve.json").read_text())
    for key in ("args", "autoreset_mode", "train_seconds", "env_steps", "steps_per_second", "curve",
                "phases", "arena", "load_average"):
        assert key in res, key
    assert res["env_steps"] == 1536 and res["autoreset_mode"] == "SAME_STEP"
    assert res["budget"] == {"total_timesteps": 1536, "env_steps": 1536} and res["args"]["total_seconds"] is None
    assert res["compile_seconds"] >= 0 and res["phase_switch_step"] == 768
    assert res["curve"][-1]["env_steps"] == 1536
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
