"""SeatVectorEnv: the same games as VectorGame / Game, Gymnasium 1.x vector conventions, bad input."""
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import majiang_env.envs.single_agent  # noqa: F401  (registers the env ids)
from majiang_env.engine.checks import IllegalActionError, ResetNeededError
from majiang_env.engine.encodings import FEAT_SIZE
from majiang_env.engine.kernel import learner
from majiang_env.engine.kernel.learner import learner_seat
from majiang_env.engine.kernel.observe import OBS_SCALAR, S_SCORES
from majiang_env.engine.vector import VectorGame
from majiang_env.envs.seat_vector import SeatVectorEnv

# action ids (docs/api.md)
A_TSUMO, A_RON, A_EXCHANGE, NUM_ACTIONS = 108, 117, 120, 156


def _run(env, steps, rng):
    """Step ``env`` with learner actions sampled in the kernel from random logits; log
    every learner decision per slot as (game index, action) and the rewards."""
    obs, info = env.reset(seed=7)
    log = {b: [] for b in range(env.num_envs)}
    games = {b: b for b in range(env.num_envs)}
    rewards = {}
    for _ in range(steps):
        seats = info["seat"]
        a = env.sample_actions(rng.normal(size=(env.num_envs, NUM_ACTIONS)))
        for b in range(env.num_envs):
            log[b].append((games[b], int(seats[b]), int(a[b])))
        obs, r, term, trunc, info = env.step(a)
        assert not trunc.any()
        for b in range(env.num_envs):
            rewards[games[b]] = rewards.get(games[b], 0) + r[b]
            if term[b]:
                games[b] += env.num_envs
    return log, rewards


def _replay(game_index, decisions, opponent, seed=7):
    """Replay one game in a 1-slot VectorGame: the learner's logged actions, and the
    opponents' in-kernel agent (same per-game stream as SeatVectorEnv)."""
    vg = VectorGame(1, seed=seed)
    vg.reset()
    # a 1-slot VectorGame plays games 0, 1, 2...: skip to game_index
    for _ in range(game_index):
        while not vg.step(vg.policy_actions("random"))[4][0]:
            pass
    seat, gained, it = decisions[0][1], 0, iter(decisions)
    while True:
        if vg.player[0] == seat:
            g, s, a = next(it, (None, None, None))
            if g is None:
                return gained, False
            assert g == game_index and s == seat
        else:
            a = int(vg.policy_actions(opponent)[0])
        _, _, _, r, done = vg.step(np.array([a]))
        gained += int(r[0, seat])
        if done[0]:
            return gained, True


@pytest.mark.parametrize("opponent,B,steps", [("greedy", 3, 150), ("random", 5, 150),
                                               (("search", {"samples": 2, "budget": 200}), 2, 60)])
def test_games_equal_vectorgame_with_the_same_agents(opponent, B, steps):
    """(The kernel's loop plays greedy and random opponents itself and hands a search
    opponent back to Python, which decides for every waiting slot in one call.)"""
    env = SeatVectorEnv(B, opponents=opponent, seat="random", num_threads=1)
    log, rewards = _run(env, steps, np.random.default_rng(0))
    for b in range(B):
        by_game = {}
        for g, s, a in log[b]:
            by_game.setdefault(g, []).append((g, s, a))
        for g, dec in by_game.items():
            gained, finished = _replay(g, dec, opponent)
            assert gained == rewards[g], (b, g)
            # the learner's seat of game g is drawn from the game's seed alone
            assert dec[0][1] == int(learner_seat(np.uint64(7), g, -1))


def test_same_seed_same_run_whatever_the_batch_size():
    a = _run(SeatVectorEnv(2, opponents="greedy", seat="random"), 120, np.random.default_rng(1))
    b = _run(SeatVectorEnv(2, opponents="greedy", seat="random"), 120, np.random.default_rng(1))
    assert a == b
    # game 0..3 of a 4-slot run start with the same learner decisions as in a 2-slot run
    c, _ = _run(SeatVectorEnv(4, opponents="greedy", seat="random"), 40, np.random.default_rng(2))
    d, _ = _run(SeatVectorEnv(2, opponents="greedy", seat="random"), 40, np.random.default_rng(2))
    first = lambda log, b: [x for x in log[b] if x[0] == b][:3]   # noqa: E731
    assert first(c, 0)[0][:2] == first(d, 0)[0][:2] and first(c, 1)[0][:2] == first(d, 1)[0][:2]


def test_observation_is_the_learner_view_of_game():
    env = SeatVectorEnv(3, opponents="greedy", seat=2, obs_type="features")
    obs, info = env.reset(seed=3)
    assert obs.shape == (3, FEAT_SIZE) and obs.dtype == np.float32
    assert (info["seat"] == 2).all()
    env2 = SeatVectorEnv(3, opponents="greedy", seat=2)
    obs2, _ = env2.reset(seed=3)
    rng = np.random.default_rng(0)
    finals = 0
    for _ in range(200):
        mask = env.action_masks()
        assert (mask == env2.action_masks()).all() and mask.any(1).all()
        a = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, r, term, _, info = env.step(a)
        obs2, r2, term2, _, info2 = env2.step(a)
        assert (r == r2).all() and (term == term2).all()
        if term.any():
            finals += 1
            assert info["_final_obs"].tolist() == term.tolist()
            for i in np.flatnonzero(term):
                assert info["final_obs"][i].shape == (FEAT_SIZE,)
                assert info2["final_obs"][i].shape == (436,)
                # the learner's last view: the game is over (phase 3), scores sum to 0 by default
                assert info2["final_obs"][i][412 + 4] == 3
                assert info["final_info"]["scores"][i].sum() == 0
    assert finals > 0


def test_step_returns_new_arrays_scaled_rewards_and_each_finished_game_final_scores():
    """What a step returns is the caller's (later steps do not change it); rewards are
    reward_scale x the point changes; a finished game's final scores (relative to the
    learner) are its last view's and start with the learner's summed rewards."""
    env = SeatVectorEnv(3, opponents="random", seat="random", reward_scale=0.5, num_threads=1)
    plain = SeatVectorEnv(3, opponents="random", seat="random", num_threads=1)
    env.reset(seed=4)
    plain.reset(seed=4)
    rng, kept, total, finished = np.random.default_rng(0), [], np.zeros(3), 0
    for _ in range(700):
        a = env.sample_actions(rng.normal(size=(3, NUM_ACTIONS)))
        out = env.step(a)
        _, r2, term2, _, _ = plain.step(a)
        obs, r, term, trunc, info = out
        assert np.array_equal(r, 0.5 * r2) and np.array_equal(term, term2) and r.dtype == np.float64
        kept.append((out, [x.copy() for x in (r, term, trunc, info["seat"], info["_seat"])]))
        total += r2
        if term.any():
            assert info["_final_obs"].tolist() == info["_final_info"].tolist() == term.tolist()
            for i in range(3):
                if term[i]:
                    finished += 1
                    scores = info["final_info"]["scores"][i]
                    assert np.array_equal(scores, info["final_obs"][i][OBS_SCALAR + S_SCORES:][:4])
                    assert scores[0] == total[i] and scores.sum() == 0
                    total[i] = 0
                else:
                    assert info["final_obs"][i] is None and not info["final_info"]["scores"][i].any()
    assert finished >= 3
    for (_, r, term, trunc, info), saved in kept:
        got = (r, term, trunc, info["seat"], info["_seat"])
        assert all(np.array_equal(x, y) for x, y in zip(got, saved, strict=True))


EARLY_END = dict(hands_per_game=1, exchange=False, wins_to_close=1)   # a game can end before a seat acts


def test_a_game_that_ends_before_the_learners_first_decision_is_skipped():
    """(From an adversarial test: such a slot used to stay over and the next step
    raised ResetNeededError.) At reset and at autoreset the slot goes on to its
    next game; each reported game's rewards still add up to its final score."""
    env = SeatVectorEnv(40, opponents="greedy", seat=3, **EARLY_END)
    env.reset(seed=597)   # slot 39's game 39 is won before seat 3 acts
    assert env._gidx[39] == 79 and env.action_masks().any(1).all()
    B = 2000
    env = SeatVectorEnv(B, opponents="greedy", seat="random", **EARLY_END)
    env.reset(seed=0)
    rng, total, skips, games = np.random.default_rng(0), np.zeros(B), 0, env._gidx.copy()
    for _ in range(110):
        _, r, term, _, info = env.step(env.sample_actions(rng.normal(size=(B, NUM_ACTIONS))))
        total += r
        for i in np.flatnonzero(term):
            assert info["final_info"]["scores"][i][0] == total[i]
            total[i] = 0
        assert (env._gidx[~term] == games[~term]).all() and (env._gidx[term] - games[term] >= B).all()
        skips += int((env._gidx - games > B).sum())
        games = env._gidx.copy()
    assert skips >= 1   # the run passes through the skip (slot 87, step 102)


def _win_first(obs, mask):
    """An external opponent: 模 or 栄 when legal, else the first legal id."""
    m = mask.astype(bool)
    a = m.argmax(1)
    for win in (A_TSUMO, A_RON, A_RON + 1, A_RON + 2):
        a = np.where(m[:, win], win, a)
    return a


def test_early_ends_with_external_opponents_and_points_before_the_first_decision():
    """The skip through the external-opponent rounds (slot 15 of seed 36: game 15 is
    won before seat 3 acts), and points of a hand closed before the learner's first
    decision in a two-hand game: paid with the game's first step (slot 107 of seed
    141 holds -21 after reset)."""
    env = SeatVectorEnv(500, opponents=[_win_first] * 3, seat=3, **EARLY_END)
    env.reset(seed=36)
    assert env._gidx[15] == 515 and env.action_masks().any(1).all() and not env._acc.any()
    env = SeatVectorEnv(1000, opponents="greedy", seat=3, **{**EARLY_END, "hands_per_game": 2})
    env.reset(seed=141)
    assert env._acc[107] == -21
    total, term = 0, np.zeros(1000, bool)
    while not term[107]:
        _, r, term, _, info = env.step(env.action_masks().argmax(1))
        total += r[107]
    assert total == info["final_info"]["scores"][107][0]


def test_vector_conventions_and_make_vec():
    env = gym.make_vec("majiang_env/SingleAgent-v1", num_envs=4, vectorization_mode="vector_entry_point",
                       opponents="greedy", obs_type="features")
    assert isinstance(env.unwrapped, SeatVectorEnv) and env.num_envs == 4
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.single_action_space == gym.spaces.Discrete(NUM_ACTIONS)
    assert env.single_observation_space.shape == (FEAT_SIZE,)
    assert env.observation_space.shape == (4, FEAT_SIZE)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    a = env.unwrapped.sample_actions(np.zeros((4, NUM_ACTIONS)))
    obs, r, term, trunc, info = env.step(a)
    assert r.shape == (4,) and term.dtype == bool and trunc.dtype == bool
    env.close()


def test_external_batched_opponent_is_called_once_per_round():
    calls = []

    def first_legal(obs, mask):
        calls.append(len(obs))
        assert obs.shape[1:] == (436,) and mask.shape == (len(obs), NUM_ACTIONS)
        return mask.argmax(1)

    env = SeatVectorEnv(6, opponents=["greedy", first_legal, "random"], seat=0)
    env.reset(seed=0)
    for _ in range(30):
        env.step(env.sample_actions(np.zeros((6, NUM_ACTIONS))))
    assert calls and max(calls) <= 6


def test_bad_input_changes_nothing():
    env = SeatVectorEnv(3, opponents="random")
    with pytest.raises(ResetNeededError):
        env.step(np.zeros(3, int))
    env.reset(seed=1)
    st = env._st.copy()
    mask = env.action_masks()
    illegal = np.array([np.flatnonzero(~m)[0] for m in mask])
    legal = mask.argmax(1)
    last_bad = np.where(np.arange(3) == 2, illegal, legal)
    # legal - NUM_ACTIONS: as a numpy index into the mask it would read the legal id's entry
    for bad in [illegal, np.zeros(2, int), np.full(3, 0.5), [True] * 3, "abc", np.full(3, NUM_ACTIONS),
                np.full(3, -1), legal - NUM_ACTIONS, np.full(3, 2 ** 40), last_bad]:
        with pytest.raises(IllegalActionError):
            env.step(bad)
    with pytest.raises(IllegalActionError, match=r"not legal in env 2 "):
        env.step(last_bad)
    for bad in [np.zeros((2, NUM_ACTIONS)), np.full((3, NUM_ACTIONS), np.nan), np.zeros((3, NUM_ACTIONS), int)]:
        with pytest.raises(ValueError):
            env.sample_actions(bad)
    assert (env._st == st).all()
    for kwargs in [dict(num_envs=0), dict(opponents="nobody"), dict(opponents=["random"] * 2),
                   dict(seat=4), dict(seat="1"), dict(obs_type="pixels"), dict(reward_scale=float("nan")),
                   dict(opponents=("search", {"bogus": 1})), dict(hands_per_game=9)]:
        with pytest.raises(ValueError):
            SeatVectorEnv(**{"num_envs": 2, **kwargs})
    with pytest.raises(ValueError):
        env.reset(options={"x": 1})

    def bad_opponent(obs, mask):
        return np.full(len(obs), A_EXCHANGE + 35)   # 変 緑9: not legal for opponent 0 in this deal

    env = SeatVectorEnv(2, opponents=bad_opponent, seat=3)      # seat 3: the opponents act first
    with pytest.raises(IllegalActionError, match="opponent 0"):
        env.reset(seed=0)
    with pytest.raises(ResetNeededError):
        env.step(np.zeros(2, int))


def test_a_slot_not_waiting_for_the_learner_needs_reset():
    """The state an exception inside a step could leave (a slot waiting for an
    external opponent when the learner is asked): step() refuses and changes nothing."""
    env = SeatVectorEnv(3, opponents="random")
    env.reset(seed=2)
    env._status[1] = learner.OPPONENT
    st = env._st.copy()
    with pytest.raises(ResetNeededError):
        env.step(env.action_masks().argmax(1))
    assert (env._st == st).all() and not env._ready
    with pytest.raises(ResetNeededError):
        env.action_masks()


def test_no_action_reaches_the_kernel_past_a_masked_array_or_an_interrupted_round():
    """From an adversarial review: a masked array's hidden values are checked (not
    skipped by its own ``all``), and an opponent callable that raises, or steps the
    env itself, leaves the env needing reset() instead of checking the learner's next
    actions against a stale mask."""
    env = SeatVectorEnv(4, opponents="random", seat=0)
    env.reset(seed=1)
    st = env._st.copy()
    a = env.action_masks().argmax(1)
    for hidden in (-1, 200, 2_000_000_000):
        bad = np.ma.array(np.where(np.arange(4) == 0, hidden, a), mask=np.arange(4) == 0)
        with pytest.raises(IllegalActionError):
            env.step(bad)
    with pytest.raises(IllegalActionError):
        env.step([np.array(True)] * 4)
    assert (env._st == st).all()

    def masked_opponent(obs, mask):
        out = mask.argmax(1).astype(np.int64)
        out[0] = -1
        return np.ma.array(out, mask=np.arange(len(out)) == 0)

    env = SeatVectorEnv(4, opponents=masked_opponent, seat=0)
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="opponent 0"):
        for _ in range(200):
            env.step(env.action_masks().argmax(1))

    calls = [0]

    def flaky(obs, mask):
        calls[0] += 1
        if calls[0] == 2:
            raise RuntimeError("policy bug")
        return mask.argmax(1)

    env = SeatVectorEnv(8, opponents=flaky, seat=0)
    env.reset(seed=3)
    with pytest.raises(RuntimeError):
        for _ in range(200):
            env.step(env.action_masks().argmax(1))
    with pytest.raises(ResetNeededError):
        env.step(np.zeros(8, int))
    env.reset(seed=3)                    # usable again
    env.step(env.action_masks().argmax(1))

    for call in ("step", "reset", "sample_actions"):
        refused = []

        def reentrant(obs, mask):   # called within this iteration: env2, call, refused are its own
            try:
                {"step": lambda: env2.step(np.zeros(2, int)), "reset": lambda: env2.reset(seed=7),  # noqa: B023
                 "sample_actions": lambda: env2.sample_actions(np.zeros((2, NUM_ACTIONS)))}[call]()  # noqa: B023
            except RuntimeError as e:
                refused.append(str(e))  # noqa: B023
            return mask.argmax(1)        # the callable swallows the refusal and plays on

        env2 = SeatVectorEnv(2, opponents=reentrant, seat=3)      # seat 3: the opponents act first
        twin = SeatVectorEnv(2, opponents=lambda obs, mask: mask.argmax(1), seat=3)
        env2.reset(seed=0)
        twin.reset(seed=0)
        for _ in range(20):
            a = env2.action_masks().argmax(1)
            env2.step(a)
            twin.step(a)
        assert refused and all(call in r for r in refused)
        assert (env2._st == twin._st).all()   # nothing the callable tried changed a game
