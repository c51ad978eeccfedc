"""The full state for centralised critics through the env faces: PettingZoo's
``state()`` / ``state_space`` (``raw_env``, ``env()``, ``parallel_env()``) and
``SeatVectorEnv(critic_state=True)``'s ``info["state"]``. Each state is checked
against the env's game and, with the independent reader of ``tests/state_reader.py``,
against the observation returned with it (the same moment of the same game)."""
import warnings

import gymnasium as gym
import numpy as np
import pytest
import state_reader as R
from gymnasium.vector import AutoresetMode
from pettingzoo.test.state_test import state_test

from majiang_env import ResetNeededError, SeatVectorEnv, env, parallel_env, raw_env
from majiang_env.engine.game import game_from_state
from majiang_env.engine.kernel.fullstate import STATE_HIGH, STATE_LOW, STATE_SIZE

SIZE = R.SIZE


def _agent_seat(agent):
    return int(agent.rsplit("_", 1)[1])


# ---- PettingZoo ----------------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"side_cards_public": True, "hands_per_game": 1},
                                     {"discard_drawn": True, "exchange": False, "hands_per_game": 2}])
def test_aec_state_is_the_games_full_state_at_every_step(options):
    e = env(**options)
    assert isinstance(e.state_space, gym.spaces.Box) and e.state_space.shape == (SIZE,)
    assert e.state_space.dtype == np.int16
    assert np.array_equal(e.state_space.low, STATE_LOW) and np.array_equal(e.state_space.high, STATE_HIGH)
    side_public = options.get("side_cards_public", False)
    for seed in (0, 1):
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        steps = 0
        for agent in e.agent_iter():
            x = e.state()
            assert isinstance(x, np.ndarray) and x.dtype == np.int16 and x.shape == (SIZE,)
            assert np.array_equal(x, e.unwrapped.game.full_state())
            assert e.state_space.contains(x)
            obs, _, term, trunc, _ = e.last()
            assert np.array_equal(obs["observation"], R.observation_of(x, _agent_seat(agent), side_public))
            if term or trunc:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        assert steps > 50
        assert R.read(e.state())["to_act"] == -1


def test_parallel_state_is_the_games_full_state_at_every_step():
    p = parallel_env(hands_per_game=2)
    assert p.state_space == env().state_space
    for seed in (3, 4):
        obs, _ = p.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while p.agents:
            x = p.state()
            assert np.array_equal(x, p.unwrapped.game.full_state())
            assert p.state_space.contains(x)
            for agent, o in obs.items():
                assert np.array_equal(o["observation"], R.observation_of(x, _agent_seat(agent), False))
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
            obs, *_ = p.step(actions)
        assert R.read(p.state())["to_act"] == -1


def test_state_before_reset_raises_reset_needed():
    for e in (raw_env(), env(), parallel_env()):
        with pytest.raises(ResetNeededError, match="reset"):
            e.state()
        assert e.state_space.shape == (SIZE,)     # the space is there from construction


def test_pettingzoo_state_test_passes_without_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state_test(env(), parallel_env(), num_cycles=200)
    assert not [w for w in caught if "tate" in str(w.message)], [str(w.message) for w in caught]


def test_state_is_never_an_observation():
    e = raw_env()
    e.reset(seed=0)
    for agent in e.possible_agents:
        o = e.observe(agent)
        assert set(o) == {"observation", "action_mask"} and o["observation"].shape != (SIZE,)


# ---- SeatVectorEnv -----------------------------------------------------------------------
def _first_legal(obs, mask):
    return mask.argmax(axis=1)


def _run(critic, mode, steps, seed=0, opponents="greedy", B=4, **kw):
    """A seeded run with seeded random logits: every step's outputs (and infos)."""
    envs = SeatVectorEnv(B, opponents=opponents, seat="random", autoreset_mode=mode, critic_state=critic,
                         hands_per_game=1, **kw)
    rng = np.random.default_rng(seed)
    out = [envs.reset(seed=seed)]
    for _ in range(steps):
        masks = envs.action_masks()
        out.append(envs.step(envs.sample_actions(rng.normal(size=(B, 156)))) + (masks,))
    return envs, out


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_option_changes_no_observation_mask_or_reward(mode):
    _, on = _run(True, mode, 60)
    _, off = _run(False, mode, 60)
    assert _same(on[0][0], off[0][0]) and "state" in on[0][1] and "state" not in off[0][1]
    for a, b in zip(on[1:], off[1:], strict=True):
        for x, y in zip(a[:4] + a[5:], b[:4] + b[5:], strict=True):   # obs, rewards, terms, truncs, masks
            assert _same(x, y)
        ia, ib = a[4], b[4]
        assert set(ia) - set(ib) == {"state", "_state"}
        assert _same(ia["seat"], ib["seat"])
        if "final_obs" in ib:
            assert all(_same(u, v) for u, v in zip(ia["final_obs"][ib["_final_obs"]],
                                                   ib["final_obs"][ib["_final_obs"]], strict=True))
            assert set(ia["final_info"]) - set(ib["final_info"]) == {"state"}
        assert a[0].shape[1] != STATE_SIZE


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
@pytest.mark.parametrize("opponents", ["greedy", ["random", _first_legal, "greedy"]], ids=["kernel", "callable"])
def test_info_state_is_each_slots_game_at_the_learners_decision(mode, opponents):
    envs = SeatVectorEnv(3, opponents=opponents, seat="random", autoreset_mode=mode, critic_state=True,
                         hands_per_game=1)
    assert envs.single_state_space.shape == (SIZE,) and envs.state_space.shape == (3, SIZE)
    assert envs.critic_state is True
    rng = np.random.default_rng(1)
    obs, info = envs.reset(seed=7)
    finished = 0
    pending = np.zeros(3, bool)        # NEXT_STEP: slots whose returned state is a finished game's last
    for _ in range(400):
        states = info["state"]
        assert states.dtype == np.int16 and states.shape == (3, SIZE) and info["_state"].all()
        assert envs.state_space.contains(states)
        assert np.array_equal(envs.states, states) and not envs.states.flags.writeable
        for i in range(3):
            seat = int(info["seat"][i])
            assert np.array_equal(obs[i], R.observation_of(states[i], seat, False))   # the same moment
            if not pending[i]:     # the slot's game now, at the learner's decision
                assert np.array_equal(states[i], game_from_state(envs._st[i], envs.rules, 0).full_state())
                assert R.read(states[i])["to_act"] == seat
        obs, _, term, _, info = envs.step(envs.sample_actions(rng.normal(size=(3, 156))))
        finished += int(term.sum())
        if mode == AutoresetMode.NEXT_STEP:
            pending = term.copy()
            for i in np.flatnonzero(term):
                assert R.read(info["state"][i])["phase"] == 3        # the game's last state (over)
        elif term.any():
            for i in np.flatnonzero(term):
                last = info["final_info"]["state"][i]
                assert R.read(last)["phase"] == 3
                assert np.array_equal(info["final_obs"][i], R.observation_of(last, _seat_of_final(info, i), False))
    assert finished >= 3


def _seat_of_final(info, i):
    """The learner's seat in slot i's finished game: the seat whose observation final_obs is (its S_SEAT)."""
    return int(info["final_obs"][i][412])


def test_states_attribute_and_bad_option():
    with pytest.raises(ValueError, match="critic_state"):
        SeatVectorEnv(2, critic_state="yes")
    off = SeatVectorEnv(2)
    off.reset(seed=0)
    with pytest.raises(ValueError, match="critic_state"):
        _ = off.states
    assert off.single_state_space.shape == (SIZE,)
    on = SeatVectorEnv(2, critic_state=True, copy=False)
    with pytest.raises(ResetNeededError):
        _ = on.states
    _, info = on.reset(seed=0)
    with pytest.raises(ValueError):
        on.states[0, 0] = 1
    with pytest.raises(AttributeError):
        on.critic_state = False
    assert np.array_equal(info["state"], on.states)
