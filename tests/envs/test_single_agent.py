"""SingleAgentEnv (majiang_env.envs.single_agent): Gymnasium checks, masks, rewards, seeding, MaskablePPO."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from majiang_env import agents
from majiang_env.agents import make_agent
from majiang_env.engine.kernel.observe import OBS_SIZE
from majiang_env.envs.single_agent import ENV_ID, SingleAgentEnv

A_DISCARD, A_DRAW, NUM_ACTIONS = 0, 110, 156   # action ids (docs/api.md)

needs_greedy = pytest.mark.skipif(not hasattr(agents, "GreedyAgent"), reason="agents.GreedyAgent not available")


def play(env, seed, pick=0, limit=10_000):
    """One episode with a seeded random legal policy; returns (observations, rewards, last info)."""
    rng = np.random.default_rng(pick)
    obs, info = env.reset(seed=seed)
    seen, rewards = [obs], []
    for _ in range(limit):
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any() and np.array_equal(mask, info["action_mask"] > 0)
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        seen.append(obs)
        rewards.append(r)
        assert not trunc
        if term:
            return seen, rewards, info
    raise AssertionError("episode did not end")


def test_check_env():
    check_env(gym.make(ENV_ID).unwrapped)  # made with a spec: the render modes are checked too
    check_env(SingleAgentEnv(opponents="random", seat="random", hands_per_game=1), skip_render_check=True)


def test_registered_by_import_majiang_env():
    """``import majiang_env`` is enough for gymnasium.make / make_vec (a fresh process)."""
    import subprocess
    import sys
    code = ("import gymnasium, majiang_env; e = gymnasium.make('majiang_env/SingleAgent-v1'); "
            "v = gymnasium.make_vec('majiang_env/SingleAgent-v1', num_envs=2, "
            "vectorization_mode='vector_entry_point'); print(type(e.unwrapped).__name__, type(v).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["SingleAgentEnv", "SeatVectorEnv"], out.stderr[-2000:]


def test_gym_make_and_render():
    env = gym.make(ENV_ID, render_mode="rgb_array", seat=2)
    check_env(env.unwrapped)
    env.reset(seed=1)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    env = SingleAgentEnv(render_mode="ansi", seat=1)
    env.reset(seed=1)
    assert "East" in env.render()
    assert SingleAgentEnv().render() is None


@pytest.mark.parametrize("seat", [0, 3, "random"])
def test_episode_rewards_add_up_to_scores(seat):
    env = SingleAgentEnv(seat=seat, reward_scale=0.5)
    for seed in range(3):
        obs, rewards, info = play(env, seed, pick=seed)
        assert obs[0].dtype == np.int16 and obs[0].shape == env.observation_space.shape
        assert np.isclose(sum(rewards), 0.5 * info["scores"][env.seat])
        assert not env.action_masks().any() and not info["action_mask"].any()
        with pytest.raises(RuntimeError):
            env.step(A_DRAW)


def test_observation_is_the_seat_view_and_mask_is_the_game_mask():
    env = SingleAgentEnv(seat=2)
    obs, info = env.reset(seed=5)
    g = env.game
    assert g.current_player == 2
    assert np.array_equal(obs, g.observe(2)) and np.array_equal(info["action_mask"], g.legal_mask())


def test_reset_seed_reproduces_episode():
    a = play(SingleAgentEnv(seat="random"), seed=11, pick=4)
    b = play(SingleAgentEnv(seat="random"), seed=11, pick=4)
    assert len(a[0]) == len(b[0]) and all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))
    assert a[1] == b[1]
    c = play(SingleAgentEnv(seat="random"), seed=12, pick=4)
    assert len(c[0]) != len(a[0]) or any(not np.array_equal(x, y) for x, y in zip(a[0], c[0], strict=True))


def test_seat_random_draws_every_seat():
    env = SingleAgentEnv(seat="random")
    seats = set()
    for s in range(40):
        env.reset(seed=s)
        seats.add(env.seat)
        assert env.game.current_player == env.seat
    assert seats == {0, 1, 2, 3}


def test_opponent_specs():
    calls = []

    def first_legal(obs):
        calls.append(1)
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = SingleAgentEnv(opponents=[agents.RandomAgent, first_legal, "random"], seat=0)
    play(env, seed=0)
    assert calls and isinstance(env.opponents[0], agents.RandomAgent)
    assert env.opponents[1] is first_legal
    inst = agents.RandomAgent(3)
    env = SingleAgentEnv(opponents=inst)
    env.reset(seed=0)
    assert env.opponents == [inst] * 3
    with pytest.raises(ValueError):
        SingleAgentEnv(opponents="nobody")
    with pytest.raises(ValueError):
        SingleAgentEnv(opponents=["random", "random"])
    with pytest.raises(ValueError):
        SingleAgentEnv(opponents=[1, 2, 3])
    with pytest.raises(ValueError):
        SingleAgentEnv(seat=4)
    with pytest.raises(ValueError):
        SingleAgentEnv(seat=True)
    with pytest.raises(ValueError):
        SingleAgentEnv(illegal="ignore")


def test_make_agent():
    a = make_agent("random", seed=5)
    b = make_agent(agents.RandomAgent, seed=5)
    obs = {"observation": np.zeros(OBS_SIZE, np.int16), "action_mask": np.ones(NUM_ACTIONS, np.int8)}
    assert [a(obs) for _ in range(5)] == [b(obs) for _ in range(5)]


@needs_greedy
def test_greedy_opponents_reproducible():
    a = play(SingleAgentEnv(opponents="greedy", seat="random"), seed=3, pick=1)
    b = play(SingleAgentEnv(opponents="greedy", seat="random"), seed=3, pick=1)
    assert a[1] == b[1] and len(a[0]) == len(b[0])
    assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))


def test_illegal_actions():
    env = SingleAgentEnv(seat=1)
    obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, r, term, trunc, info = env.step(bad)
    assert term and r == -1000.0 and info["illegal"]
    with pytest.raises(RuntimeError):
        env.step(bad)
    env = SingleAgentEnv(seat=1, illegal="raise")
    env.reset(seed=0)
    before = env.game.record()
    with pytest.raises(ValueError):
        env.step(bad)
    with pytest.raises(ValueError):
        env.step(NUM_ACTIONS)
    assert env.game.record() == before
    with pytest.raises(RuntimeError):
        SingleAgentEnv().step(A_DISCARD)


def test_maskable_ppo_smoke():
    sb3c = pytest.importorskip("sb3_contrib")
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    env = SingleAgentEnv(seat="random", reward_scale=1 / 30, hands_per_game=1)
    model = sb3c.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1,
                             policy_kwargs={"net_arch": [32]}, seed=0, device="cpu")
    model.learn(128)
    obs, _ = env.reset(seed=1)
    for _ in range(300):
        mask = env.action_masks()
        a, _ = model.predict(obs, action_masks=mask, deterministic=False)
        assert mask[int(a)]
        obs, r, term, trunc, _ = env.step(a)
        if term:
            break
    assert term


def test_a_game_that_ends_before_the_seats_first_decision_is_skipped(monkeypatch):
    """reset(seed=18835) draws a first game that an opponent wins before seat 3
    acts (one hand, no exchange, the first win closes it): reset starts another,
    and the episode's rewards add up to the final score."""
    import majiang_env.envs.single_agent as W
    made = []

    class Counted(W.Game):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(W, "Game", Counted)
    env = W.SingleAgentEnv(opponents="random", seat=3, reward_scale=0.5, hands_per_game=1, exchange=False,
                           wins_to_close=1)
    obs, info = env.reset(seed=18835)
    assert len(made) == 2 and not env.game.done and info["action_mask"].any()
    total, done = 0.0, False
    while not done:
        _, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        total += r
    assert total == 0.5 * info["scores"][3]
    with pytest.raises(ValueError):
        W.SingleAgentEnv(reward_scale=10 ** 400)
    with pytest.raises(ValueError):
        W.SingleAgentEnv(reward_scale="1")


def test_points_of_hands_closed_before_the_seats_first_decision_are_paid():
    """reset(seed=38591): the first hand closes (-23 for seat 3) before seat 3 acts;
    the points come with the first step, and the episode adds up to the score."""
    env = SingleAgentEnv(opponents="greedy", seat=3, hands_per_game=2, exchange=False, wins_to_close=1)
    obs, info = env.reset(seed=38591)
    assert env._carry == -23
    total, done = 0.0, False
    while not done:
        _, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        total += r
    assert total == info["scores"][3]
    with pytest.raises(ValueError, match="illegal_reward"):
        SingleAgentEnv(illegal_reward=float("nan"))
    with pytest.raises(ValueError, match="digits"):
        SingleAgentEnv(reward_scale=10 ** 5000)
