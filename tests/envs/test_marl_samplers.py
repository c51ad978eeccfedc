"""Masked samplers of MARL libraries over ``parallel_env()`` with no glue.

Every live agent of the Parallel form has a legal action: the agent to act its
legal ids, each other agent the pass 156 alone (the env card of ``majiang_v2``).
So a sampler that draws each agent's action from its own mask plays whole games
as it is: SuperSuit's vector envs here, TorchRL's ``PettingZooWrapper`` in
tests/envs/test_torchrl.py, PettingZoo's own ``parallel_api_test`` in
tests/envs/test_pettingzoo.py. SuperSuit is in the ``train`` extra (checked with
SuperSuit 3.11.0); its tests are skipped where it is not installed.
"""
import numpy as np
import pytest

import majiang_env
from majiang_env import Game

PASS, SPACE_N = 156, 157


def _masked_random(rng, masks):
    """One action per row, uniform over the row's legal ids."""
    masks = np.asarray(masks)
    assert masks.shape[-1] == SPACE_N and masks.any(-1).all()   # every row can be sampled
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def _check_step(masks, actions, rewards, agents_per_game=4):
    """Each game's rows: one agent to act (its mask without the pass), the others the pass alone,
    which the sampler drew; and no illegal move (env() would give -1000)."""
    masks = np.asarray(masks).reshape(-1, agents_per_game, SPACE_N)
    acting = masks[..., :PASS].any(-1)
    assert (acting.sum(-1) == 1).all()
    assert (masks[..., PASS] == ~acting).all()
    assert (np.asarray(actions).reshape(acting.shape)[~acting] == PASS).all()
    assert (np.asarray(rewards) > -1000).all()


def test_supersuit_markov_vector_env_plays_whole_games():
    ss = pytest.importorskip("supersuit")
    venv = ss.pettingzoo_env_to_vec_env_v1(majiang_env.parallel_env(hands_per_game=1))
    assert venv.num_envs == 4 and venv.action_space.n == SPACE_N   # one row per agent
    assert venv.observation_space["action_mask"].shape == (SPACE_N,)
    obs, infos = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(240):   # a one-hand game takes at most about 110 decisions
        actions = _masked_random(rng, obs["action_mask"])
        masks = obs["action_mask"]
        obs, rewards, terms, truncs, infos = venv.step(actions)
        _check_step(masks, actions, rewards)
        assert terms.all() == terms.any()    # the four agents end together
        games += int(terms.all())
        assert obs["observation"].shape == (4, 436) and obs["observation"].dtype == np.int16
    assert games >= 2
    venv.close()


@pytest.mark.parametrize("copies", [1, 2])
def test_supersuit_concat_vec_envs_on_the_dict_observation(copies):
    ss = pytest.importorskip("supersuit")
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(majiang_env.parallel_env(hands_per_game=1)),
                                 copies, num_cpus=0, base_class="gymnasium")
    assert venv.num_envs == 4 * copies
    obs, infos = venv.reset(seed=1)
    assert obs["action_mask"].shape == (4 * copies, SPACE_N)
    rng = np.random.default_rng(copies)
    games = 0
    for _ in range(230):
        actions = _masked_random(rng, obs["action_mask"])
        masks = obs["action_mask"]
        obs, rewards, terms, truncs, infos = venv.step(actions)
        _check_step(masks, actions, rewards)
        games += int(terms.sum()) // 4
    assert games >= 2 * copies
    venv.close()


def test_supersuit_stable_baselines3_vec_env():
    """The same vector env as an SB3 ``VecEnv`` (SuperSuit's ``base_class="stable_baselines3"``).
    Unseeded: that wrapper's ``seed()`` calls a method SuperSuit's ``ConcatVecEnv`` lacks
    (SuperSuit 3.11.0 with SB3 2.x); every assertion holds for any deal."""
    ss = pytest.importorskip("supersuit")
    pytest.importorskip("stable_baselines3")
    venv = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(majiang_env.parallel_env(hands_per_game=1)),
                                 2, num_cpus=0, base_class="stable_baselines3")
    obs = venv.reset()
    rng = np.random.default_rng(2)
    games = 0
    for _ in range(230):
        actions = _masked_random(rng, obs["action_mask"])
        masks = obs["action_mask"]
        obs, rewards, dones, infos = venv.step(actions)
        _check_step(masks, actions, rewards)
        games += int(dones.sum()) // 4
    assert games >= 4
    venv.close()


def test_library_policies_play_parallel_env_as_they_are():
    """``{agent: policy(obs[agent])}`` for every live agent: the library's policies answer
    the pass when it is the mask's only legal id, and play the game as in the AEC form."""
    from majiang_env.agents import GreedyAgent, RandomAgent
    from majiang_env.agents.pretrained import PretrainedAgent
    players = {"player_0": GreedyAgent(0), "player_1": RandomAgent(1), "player_2": PretrainedAgent(2),
               "player_3": GreedyAgent(3)}
    p = majiang_env.parallel_env(hands_per_game=1)
    obs, _ = p.reset(seed=4)
    ref = Game(p.unwrapped.rules, seed=4)
    while p.agents:
        acting = p.unwrapped.agent_selection
        actions = {a: players[a](obs[a]) for a in p.agents}
        assert all(actions[a] == PASS for a in p.agents if a != acting) and actions[acting] != PASS
        obs, rewards, terms, truncs, infos = p.step(actions)
        ref.step(actions[acting])
        assert all(r > -1000 for r in rewards.values())
    assert ref.done and p.unwrapped.game.record() == ref.record()
