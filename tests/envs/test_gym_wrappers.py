"""``SeatVectorEnv`` under Gymnasium's vector wrappers: the NEXT_STEP autoreset
mode and its semantics (the reset step, final observations), checked against
the SAME_STEP mode, which plays the same games."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vw

from majiang_env import SeatVectorEnv

B = 4
RULES = {"hands_per_game": 1}


def lowest_legal(mask):
    """A policy that depends only on the legal mask, so both modes play the same games."""
    return mask.argmax(axis=1)


def make(mode, **kw):
    return SeatVectorEnv(B, opponents="greedy", seat="random", autoreset_mode=mode, **RULES, **kw)


def streams_same_step(steps, seed=3):
    """Per slot: (obs, reward, terminated) of every step, with SAME_STEP's
    restart unfolded into a final step and a reset step, as NEXT_STEP gives them."""
    env = make(AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=seed)
    out = [[(obs[i].copy(), 0.0, False)] for i in range(B)]
    for _ in range(steps):
        obs, rew, term, trunc, info = env.step(lowest_legal(env.action_masks()))
        assert not trunc.any()
        for i in range(B):
            if term[i]:
                out[i].append((info["final_obs"][i].copy(), float(rew[i]), True))
                out[i].append((obs[i].copy(), 0.0, False))
            else:
                out[i].append((obs[i].copy(), float(rew[i]), False))
    return out


def test_metadata_names_the_instance_mode():
    assert make(AutoresetMode.NEXT_STEP).metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert make(AutoresetMode.SAME_STEP).metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert make("NextStep").metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert SeatVectorEnv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP   # the class default
    for bad in (AutoresetMode.DISABLED, "next_step", "NEXT", 1, None):
        with pytest.raises(ValueError, match="autoreset_mode"):
            make(bad)


def test_next_step_semantics_match_same_step_games():
    """NEXT_STEP: the ending step returns the game's last observation (terminated,
    the hand's reward); the next step ignores the slot's action and returns the
    next game's first observation with reward 0; everything else as SAME_STEP."""
    steps = 60
    want = streams_same_step(steps)
    env = make(AutoresetMode.NEXT_STEP)
    obs, _ = env.reset(seed=3)
    got = [[(obs[i].copy(), 0.0, False)] for i in range(B)]
    ended = np.zeros(B, bool)
    finished = 0
    for _ in range(steps):
        actions = lowest_legal(env.action_masks())
        actions[ended] = 10 ** 6          # ignored on a reset step: not even checked
        obs, rew, term, trunc, info = env.step(actions)
        assert not trunc.any()
        for i in range(B):
            got[i].append((obs[i].copy(), float(rew[i]), bool(term[i])))
            if ended[i]:
                assert rew[i] == 0 and not term[i]
        if term.any():
            assert info["_scores"][term].all() and (info["scores"][term].sum(axis=1) == 0).all()
        finished += int(term.sum())
        ended = term.copy()
    assert finished >= B     # every slot ended at least one game in this stretch
    for i in range(B):
        n = min(len(got[i]), len(want[i]))
        for k in range(n):
            assert np.array_equal(got[i][k][0], want[i][k][0]), (i, k)
            assert got[i][k][1:] == want[i][k][1:], (i, k)


def test_next_step_illegal_action_of_a_live_slot_still_raises():
    env = make(AutoresetMode.NEXT_STEP)
    env.reset(seed=0)
    bad = lowest_legal(env.action_masks())
    bad[0] = np.flatnonzero(env.action_masks()[0] == 0)[0]
    with pytest.raises(ValueError, match="not legal"):
        env.step(bad)


WRAPPERS = {
    "NormalizeObservation": lambda e: vw.NormalizeObservation(vw.DtypeObservation(e, np.float32)),
    "DtypeObservation": lambda e: vw.DtypeObservation(e, np.float32),
    "TransformObservation": lambda e: vw.TransformObservation(
        e, lambda o: o.astype(np.float32) / 100.0,
        single_observation_space=gym.spaces.Box(-400.0, 400.0, e.single_observation_space.shape, np.float32)),
    "RecordEpisodeStatistics": vw.RecordEpisodeStatistics,
    "NormalizeReward": vw.NormalizeReward,
    "ClipReward": lambda e: vw.ClipReward(e, -1.0, 1.0),
    "TransformReward": lambda e: vw.TransformReward(e, lambda r: r / 100.0),
    "FlattenObservation": vw.FlattenObservation,
}


@pytest.mark.parametrize("name", sorted(WRAPPERS))
def test_gymnasium_vector_wrappers_run_whole_episodes(name):
    env = make(AutoresetMode.NEXT_STEP)
    wrapped = WRAPPERS[name](env)
    obs, info = wrapped.reset(seed=1)
    assert obs.shape[0] == B
    episodes, returns, total = 0, np.zeros(B), np.zeros(B)
    for _ in range(400):
        obs, rew, term, trunc, info = wrapped.step(lowest_legal(env.action_masks()))
        assert obs.shape[0] == B and np.isfinite(np.asarray(obs, np.float64)).all()
        total += rew
        if name == "RecordEpisodeStatistics" and term.any():
            assert info["_episode"][term].all()
            assert np.allclose(info["episode"]["r"][term], total[term])
        if name == "ClipReward":
            assert (np.abs(rew) <= 1.0).all()
        returns[term] = total[term]
        total[term] = 0
        episodes += int(term.sum())
        if episodes >= 2 * B:
            break
    assert episodes >= 2 * B
    if name in ("DtypeObservation", "NormalizeObservation", "TransformObservation"):
        assert obs.dtype == np.float32
