"""majiang_env.integrations.sb3: SB3's VecEnv contract over SeatVectorEnv, and MaskablePPO training on it."""
import importlib
import sys

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.evaluation import evaluate_policy  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan, VecEnvWrapper, VecMonitor  # noqa: E402

from majiang_env.engine.encodings import FEAT_SIZE  # noqa: E402
from majiang_env.envs.seat_vector import SeatVectorEnv  # noqa: E402
from majiang_env.envs.single_agent import SingleAgentEnv  # noqa: E402
from majiang_env.integrations.sb3 import SB3VecEnv  # noqa: E402

NUM_ACTIONS = 156   # action ids 0-155 (docs/api.md)


def _legal(mask, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in mask])


def test_steps_terminal_observations_and_rewards_equal_the_underlying_env():
    B = 4
    ref = SeatVectorEnv(B, opponents="greedy", seat="random", obs_type="features", reward_scale=0.01)
    env = SB3VecEnv(B, opponents="greedy", seat="random", obs_type="features", reward_scale=0.01)
    assert env.seed(5) == [5] * B
    obs = env.reset()
    robs, rinfo = ref.reset(seed=5)
    assert np.array_equal(obs, robs) and obs.shape == (B, FEAT_SIZE)
    assert [i["seat"] for i in env.reset_infos] == rinfo["seat"].tolist()
    rng = np.random.default_rng(0)
    totals, finished = np.zeros(B), 0
    for _ in range(300):
        masks = np.stack(env.env_method("action_masks"))
        assert np.array_equal(masks, ref.action_masks())
        a = _legal(masks, rng)
        obs, rew, dones, infos = env.step(a)
        robs, rrew, rterm, rtrunc, rinfo = ref.step(a)
        assert np.array_equal(obs, robs) and np.array_equal(dones, rterm | rtrunc)
        assert rew.dtype == np.float32 and np.allclose(rew, rrew)
        totals += rew
        for i in range(B):
            if dones[i]:
                finished += 1
                assert np.array_equal(infos[i]["terminal_observation"], rinfo["final_obs"][i])
                assert infos[i]["TimeLimit.truncated"] is False
                scores = infos[i]["scores"]
                assert np.array_equal(scores, rinfo["final_info"]["scores"][i])
                # the learner's rewards over the game add up to its final score (learner first)
                assert np.isclose(totals[i], 0.01 * scores[0])
                assert env.reset_infos[i]["seat"] == rinfo["seat"][i]
                totals[i] = 0
            else:
                assert "terminal_observation" not in infos[i]
            assert infos[i]["seat"] == rinfo["seat"][i]
    assert finished > 0


def test_vec_env_api_attrs_methods_and_seeds():
    env = SB3VecEnv(SeatVectorEnv(3, opponents="random", seat="random"))
    assert env.num_envs == 3 and env.action_space.n == NUM_ACTIONS and env.observation_space.shape == (436,)
    assert env.render_mode is None
    assert is_masking_supported(env)
    env.seed(11)
    first = env.reset()
    env.seed(11)
    assert np.array_equal(env.reset(), first)
    masks = get_action_masks(env)
    assert masks.shape == (3, NUM_ACTIONS) and masks.dtype == bool and np.array_equal(masks, env.action_masks())
    assert [m.tolist() for m in env.env_method("action_masks", indices=[2, 0])] == \
        [masks[2].tolist(), masks[0].tolist()]
    seats = env.get_attr("learner_seat")
    assert seats == env.venv.learner_seat.tolist()
    assert env.get_attr("obs_type", indices=1) == ["compact"]
    assert env.get_attr("reward_scale") == [1.0] * 3
    env.set_attr("reward_scale", 2.0)
    assert env.venv.reward_scale == 2.0
    with pytest.raises(ValueError, match="every slot"):
        env.set_attr("reward_scale", 1.0, indices=[0])
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    assert not env.has_attr("no_such_attribute")
    assert env.env_is_wrapped(Monitor) == [False] * 3
    env.set_options({"x": 1})
    with pytest.raises(ValueError, match="options"):
        env.reset()
    with pytest.raises(ValueError, match="SeatVectorEnv"):
        SB3VecEnv(SeatVectorEnv(2), opponents="greedy")
    env.close()


def test_wraps_make_vec_and_sb3_vec_wrappers():
    import gymnasium as gym

    import majiang_env.envs.single_agent  # noqa: F401  (registers the ids)
    venv = gym.make_vec("majiang_env/SingleAgent-v1", num_envs=4, vectorization_mode="vector_entry_point",
                        obs_type="features")
    env = VecCheckNan(VecMonitor(SB3VecEnv(venv)), raise_exception=True)
    env.seed(0)
    env.reset()
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(250):
        _, _, dones, infos = env.step(_legal(get_action_masks(env), rng))
        episodes += sum("episode" in i for i in infos)
    assert episodes > 0   # VecMonitor's episode statistics, which SB3's logger reads


def test_single_agent_env_passes_sb3_check_env():
    check_env(SingleAgentEnv(opponents="random", obs_type="features"), warn=True)


class _AssertLegal(VecEnvWrapper):
    """Checks every action MaskablePPO sends against the masks before stepping."""

    def __init__(self, venv):
        super().__init__(venv)
        self.checked = 0

    def reset(self):
        return self.venv.reset()

    def step_async(self, actions):
        masks = self.venv.action_masks()
        assert masks[np.arange(len(actions)), actions].all(), "an illegal action was sent"
        self.checked += len(actions)
        self.venv.step_async(actions)

    def step_wait(self):
        return self.venv.step_wait()


@pytest.fixture
def one_torch_thread():
    """torch on one thread: two pytest workers on 2 busy cores with 2 torch threads each
    made PPO updates many times slower (OpenMP threads waiting on each other)."""
    import torch
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_maskable_ppo_learns_on_the_adapter_with_legal_actions_only(one_torch_thread):
    env = _AssertLegal(VecMonitor(SB3VecEnv(16, opponents="greedy", seat="random", obs_type="features",
                                            reward_scale=0.01)))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, n_epochs=2, seed=0,
                        policy_kwargs={"net_arch": [64, 64]})
    model.learn(2048)
    assert model.num_timesteps >= 2048 and env.checked >= 2048
    assert len(model.ep_info_buffer) > 0
    mean, _ = evaluate_policy(model, env, n_eval_episodes=4, warn=False)
    assert np.isfinite(mean)


def test_import_error_without_stable_baselines3(monkeypatch):
    for name in [m for m in sys.modules if m == "stable_baselines3" or m.startswith("stable_baselines3.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    monkeypatch.delitem(sys.modules, "majiang_env.integrations.sb3")
    with pytest.raises(ImportError, match=r"majiang_env\[train\]"):
        importlib.import_module("majiang_env.integrations.sb3")
