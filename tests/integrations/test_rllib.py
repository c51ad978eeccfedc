"""majiang_env.integrations.rllib: the MultiAgentEnv contract, and two PPO iterations of
examples/rllib_ppo.py on a local Ray.

The training run is a subprocess: its Ray (2 CPUs, one EnvRunner actor, its
own temp dir) never meets the Ray of tests/distributed/test_distributed.py in the same
pytest worker.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from majiang_env.agents import GreedyAgent  # noqa: E402
from majiang_env.engine.checks import IllegalActionError  # noqa: E402
from majiang_env.engine.game import Game  # noqa: E402
from majiang_env.engine.vector import game_seed  # noqa: E402
from majiang_env.integrations.rllib import AGENTS, MajiangMultiAgentEnv, MaskedPPOTorchRLModule, logits_fn  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_rllib_own_env_check_passes():
    check_multiagent_environments(MajiangMultiAgentEnv({"hands_per_game": 1}))


# Actions: greedy's, or with probability 0.2 a random legal one, so hands are won and points move.
# The second config ends games soonest (one hand, no 変, the first win closes it): every reset
# still hands a decision to some agent, and games that end early still pay every agent its score.
@pytest.mark.parametrize("config, games", [({"hands_per_game": 2}, 3),
                                           ({"hands_per_game": 1, "exchange": False, "wins_to_close": 1}, 20)])
def test_games_follow_the_engine_and_rewards_add_up_to_scores(config, games):
    env = MajiangMultiAgentEnv({**config, "reward_scale": 0.5})
    rng = np.random.default_rng(0)
    greedy = [GreedyAgent(seed=s, rules=env.rules) for s in range(4)]
    scored = 0
    obs, infos = env.reset(seed=9)
    for j in range(games):                    # game j of run 9, the later ones by reset()
        if j:
            obs, infos = env.reset()
        ref = Game(env.rules, seed=game_seed(9, j))
        totals = dict.fromkeys(AGENTS, 0.0)
        while True:
            (agent, o), = obs.items()
            seat = AGENTS.index(agent)
            assert seat == ref.current_player and env.observation_spaces[agent].contains(o)
            assert np.array_equal(o["observations"], ref.observe(seat, "features"))
            assert np.array_equal(o["action_mask"], ref.legal_mask())
            if rng.random() < 0.2:
                a = int(rng.choice(np.flatnonzero(o["action_mask"])))
            else:
                a = int(greedy[seat]({"observation": ref.observe(seat), "action_mask": ref.legal_mask()}))
            ref.step(a)
            obs, rewards, terms, truncs, infos = env.step({agent: np.int64(a)})
            assert not truncs["__all__"]
            for k, r in rewards.items():
                assert k in obs      # a reward comes with the agent's next observation
                totals[k] += r
            if terms["__all__"]:
                break
            assert len(obs) == 1
        assert ref.done and set(obs) == set(AGENTS) and all(terms[a] for a in AGENTS)
        scored += bool(ref.scores.any())
        for s, a in enumerate(AGENTS):
            assert not obs[a]["action_mask"].any()
            assert infos[a]["score"] == ref.scores[s]
            assert totals[a] == pytest.approx(0.5 * ref.scores[s])
    assert scored >= games // 2


def test_illegal_actions_terminate_or_raise():
    env = MajiangMultiAgentEnv({"reward_scale": 0.01})
    obs, _ = env.reset(seed=1)
    (agent, o), = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    obs, rewards, terms, _, infos = env.step({agent: bad})
    assert terms["__all__"] and infos[agent]["illegal"] and rewards[agent] == pytest.approx(-10.0)
    assert set(obs) == set(AGENTS)
    env = MajiangMultiAgentEnv({"illegal": "raise"})
    obs, _ = env.reset(seed=1)
    with pytest.raises(IllegalActionError):
        env.step({agent: bad})
    with pytest.raises(ValueError, match="is to act"):
        env.step({"nobody": 0})
    with pytest.raises(ValueError):
        MajiangMultiAgentEnv({"illegal": "ignore"})
    with pytest.raises(ValueError):
        MajiangMultiAgentEnv({"no_such_rule": 1})


def _observations(n, seed=0):
    """n observations of random play, the last one a finished game's (all-zero mask)."""
    env = MajiangMultiAgentEnv({"hands_per_game": 1})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = []
    while True:
        (agent, o), = obs.items()
        out.append(o)
        obs, _, terms, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if terms["__all__"]:
            return env, out[-(n - 1):] + [obs[AGENTS[0]]]


def test_masked_module_gives_illegal_actions_no_probability():
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    env, samples = _observations(32)
    module = RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                          observation_space=env.observation_spaces["player_0"],
                          action_space=env.action_spaces["player_0"],
                          model_config={"fcnet_hiddens": [32], "vf_share_layers": False}).build()
    assert module.observation_space == env.observation_spaces["player_0"]
    obs = np.stack([o["observations"] for o in samples])
    mask = np.stack([o["action_mask"] for o in samples])
    assert not mask[-1].any() and mask[:-1].any(1).all()

    def batch():
        return {Columns.OBS: {"observations": torch.as_tensor(obs), "action_mask": torch.as_tensor(mask)}}

    for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = forward(batch())[Columns.ACTION_DIST_INPUTS].detach()
        assert (logits[torch.as_tensor(mask) == 0] == FLOAT_MIN).all()
        dist = module.get_exploration_action_dist_cls().from_logits(logits)
        assert torch.isfinite(dist.logp(dist.sample())).all()
        for _ in range(5):
            a = dist.sample().numpy()
            assert mask[np.arange(len(a) - 1), a[:-1]].all()
    assert module.compute_values(batch()).shape == (len(obs),)
    assert np.array_equal(logits_fn(module)(obs, mask),
                          module.forward_inference(batch())[Columns.ACTION_DIST_INPUTS].detach().numpy())
    with pytest.raises(ValueError, match="Dict observation space"):
        RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                     observation_space=env.observation_spaces["player_0"]["observations"],
                     action_space=env.action_spaces["player_0"]).build()


def test_two_ppo_iterations_of_the_example_on_local_ray():
    with tempfile.TemporaryDirectory(prefix="mjrl_") as tmp:
        env = dict(os.environ, RAY_TMPDIR=tmp, PYTHONPATH=ROOT)
        cmd = [sys.executable, os.path.join(ROOT, "examples", "rllib_ppo.py"), "--iterations", "2",
               "--env-runners", "1", "--envs-per-runner", "2", "--batch", "256", "--minibatch", "128",
               "--epochs", "1", "--hidden", "64", "64", "--hands-per-game", "1", "--num-cpus", "2",
               "--object-store-mb", "200", "--eval-games", "8", "--illegal-raises", "--torch-threads", "1", "--json"]
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400, cwd=tmp)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["iterations"] == 2 and len(summary["iteration_seconds"]) == 2
    assert summary["env_steps_sampled"] >= 512
    assert summary["weights_changed_after_first_iteration"]
    assert np.isfinite(summary["eval_mean_score"])
