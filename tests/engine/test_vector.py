import importlib.metadata
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from helpers import card_places, hand_size

from majiang_env import Game, replay, selfplay
from majiang_env.engine.checks import ResetNeededError
from majiang_env.engine.kernel.layout import RIVER_LEN, StateView
from majiang_env.engine.vector import VectorGame, game_seed

NUM_ACTIONS = 156   # action ids 0-155 (docs/api.md)


def _random_actions(rng, mask):
    return np.array([rng.choice(np.flatnonzero(r)) for r in mask], np.int64)


def test_batch_equals_single_games_and_replays():
    B = 6
    vg = VectorGame(B, seed=11)
    obs, mask, player = vg.reset()
    games = [Game(seed=game_seed(11, i)) for i in range(B)]
    rng = np.random.default_rng(1)
    total = np.zeros((B, 4), np.int64)
    finished = 0
    for _ in range(900):
        for i, g in enumerate(games):
            assert (g.legal_mask() == mask[i]).all()
            assert g.current_player == player[i]
            assert (g.observe(g.current_player) == obs[i]).all()
            places = card_places(g)
            assert all(len(p) == 1 for p in places.values())
            assert (StateView(g.state).river_len <= RIVER_LEN).all()
            if g.phase == "take":
                assert hand_size(g, g.current_player) == 13
        a = _random_actions(rng, mask)
        gains = [g.step(int(a[i])) for i, g in enumerate(games)]
        obs, mask, player, rewards, done = vg.step(a)
        for i in range(B):
            assert (rewards[i] == gains[i]).all()
            total[i] += rewards[i]
            if done[i]:
                assert (total[i] == games[i].scores).all()
                total[i] = 0
                finished += 1
                games[i] = Game(seed=game_seed(11, int(vg.game_index[i])))
    assert finished > 0
    for i in range(B):
        rec = vg.record(i)
        assert replay(rec).record() == rec


def test_first_games_independent_of_batch_size():
    a = VectorGame(3, seed=5).reset()[0].copy()
    b = VectorGame(9, seed=5).reset()[0]
    assert (a == b[:3]).all()


def test_selfplay_deterministic_across_batch_sizes():
    s1 = selfplay(40, seed=3, num_envs=16)
    s2 = selfplay(40, seed=3, num_envs=5)
    s3 = selfplay(40, seed=3, num_envs=16)
    for k in ("games", "hands", "decisions", "mean_points", "wins"):
        assert s1[k] == s2[k] == s3[k]
    assert s1["games"] == 40 and s1["hands"] == 160
    assert abs(sum(s1["mean_points"])) < 1e-9  # zero-sum


def test_vector_bad_actions():
    vg = VectorGame(2, seed=0)
    vg.reset()
    before = vg._st.copy()
    for bad in (np.array([0, 0]), np.array([1, 2, 3]), np.array([0.5, 1.0]), np.array([-1, 200])):
        try:
            vg.step(bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"accepted {bad}")
    assert (vg._st == before).all()


def test_selfplay_first_game_ranges_add_up():
    whole = selfplay(30, seed=7, num_envs=8)
    parts = [selfplay(n, seed=7, num_envs=b, first_game=f) for f, n, b in ((0, 11, 4), (11, 1, 8), (12, 18, 5))]
    for k in ("games", "hands", "decisions", "wins"):
        assert whole[k] == (sum(p[k] for p in parts) if k != "wins"
                            else [sum(p[k][q] for p in parts) for q in range(4)])
    pts = [sum(round(p["mean_points"][q] * p["games"]) for p in parts) for q in range(4)]
    assert pts == [round(x * 30) for x in whole["mean_points"]]


def test_selfplay_progress_bar_same_stats(capsys):
    pytest.importorskip("tqdm")
    a = selfplay(37, seed=4, num_envs=8)
    b = selfplay(37, seed=4, num_envs=8, progress=True)
    for k in ("games", "hands", "decisions", "mean_points", "wins"):
        assert a[k] == b[k]
    assert "37/37" in capsys.readouterr().err


def test_threads_and_bad_arguments():
    a = selfplay(20, seed=2, num_envs=4, num_threads=1)
    b = selfplay(20, seed=2, num_envs=4)
    assert a["decisions"] == b["decisions"] and a["wins"] == b["wins"]
    # serial (one thread) and parallel (prange) batch calls give the same games
    v1, v2 = VectorGame(70, seed=1, num_threads=1), VectorGame(70, seed=1)
    assert not v1._parallel() and v2._parallel() == (numba.get_num_threads() > 1)
    rng = np.random.default_rng(0)
    o1, m1, _ = v1.reset()
    o2, m2, _ = v2.reset()
    for _ in range(300):
        act = np.array([rng.choice(np.flatnonzero(r)) for r in m1])
        o1, m1, *_ = v1.step(act)
        o2, m2, *_ = v2.step(act)
        assert (o1 == o2).all() and (m1 == m2).all()
    with pytest.raises(RuntimeError):
        VectorGame(2).step(np.zeros(2, np.int64))
    for bad in (0, -1, 2.0, True, 10 ** 6):
        with pytest.raises(ValueError):
            VectorGame(2, num_threads=bad)
    for bad in (0, -3, "8", None):
        with pytest.raises(ValueError):
            selfplay(2, num_envs=bad)
    with pytest.raises(ValueError):
        selfplay(True)


def test_hand_closed_is_reported_by_the_kernel():
    """VectorGame.hand_closed and Game.closed_hand say when a hand closed, without the
    caller comparing hand indices; both agree with the Game replay of slot 0."""
    vg = VectorGame(3, seed=4)
    vg.reset()
    g = vg.game(0)
    rng = np.random.default_rng(4)
    closed = 0
    for _ in range(1500):
        acts = np.array([rng.choice(np.flatnonzero(vg.mask[i])) for i in range(3)])
        before = g.hand_index
        g.step(int(acts[0]))
        vg.step(acts)
        assert vg.hand_closed[0] == (g.closed_hand is not None) == (g.hand_index != before)
        if g.closed_hand is not None:
            assert g.closed_hand == before
            assert np.array_equal(vg.rewards[0], g.hand_deltas(before))
            closed += 1
        if g.done:
            g = vg.game(0)
    assert closed >= 4


@pytest.mark.parametrize("agents", [("greedy",) * 4, ("random", "greedy", "random", "greedy")])
def test_policy_actions_play_the_selfplay_games(agents):
    """In-kernel agents through VectorGame.policy_actions, one game per slot, give
    exactly selfplay's games (same decisions, points) whatever the batch size."""
    B = 6
    vg = VectorGame(B, seed=5)
    vg.reset()
    finished = np.zeros(B, bool)
    points, decisions = np.zeros(4, np.int64), 0
    while not finished.all():
        actions = vg.policy_actions([agents[p] for p in vg.player])
        _, _, _, rewards, done = vg.step(actions)
        decisions += int((~finished).sum())
        points += rewards[~finished].sum(0)
        finished |= done
    stats = selfplay(B, agents=agents, seed=5, num_envs=4)
    assert stats["decisions"] == decisions
    assert stats["mean_points"] == (points / B).tolist()


def test_policy_actions_arguments():
    vg = VectorGame(3, seed=0)
    with pytest.raises(ResetNeededError):
        vg.policy_actions("random")
    vg.reset()
    before = vg._st.copy()
    for bad in ["search?", 5, ["random"], ["random", "greedy", 3]]:
        with pytest.raises(ValueError, match="agent"):
            vg.policy_actions(bad)
    for rows in [[3], [-1], [[0]], [0.5], [True]]:
        with pytest.raises(ValueError, match="rows"):
            vg.policy_actions("random", rows)
    assert (vg._st == before).all()                  # a rejected call changes nothing
    a = vg.policy_actions("greedy", [2, 0])
    assert a.shape == (2,) and vg.mask[2, a[0]] and vg.mask[0, a[1]]


@pytest.mark.parametrize("B,obs_type", [(8, "compact"), (70, "features")])   # serial and parallel paths
def test_sample_step_equals_sample_actions_then_step(B, obs_type):
    """``sample_step(logits)`` draws the same actions from the same streams as
    ``sample_actions`` and then steps exactly as ``step`` does; -inf and nan at
    illegal ids are allowed as in ``sample_actions``."""
    rng = np.random.default_rng(B)
    one, two = VectorGame(B, seed=5, obs_type=obs_type), VectorGame(B, seed=5, obs_type=obs_type)
    one.reset()
    two.reset()
    for t in range(300):
        logits = rng.normal(scale=2.0, size=(B, NUM_ACTIONS)).astype(np.float32 if t % 2 else np.float64)
        logits[two.mask == 0] = np.nan if t % 3 else -np.inf
        a = one.sample_actions(logits)
        want = [x.copy() for x in one.step(a)]
        got = two.sample_step(logits)
        assert (got[0] == a).all() and (two.actions == a).all()
        for x, y in zip(want, got[1:], strict=True):
            assert np.array_equal(x, y)
        assert (one._st == two._st).all() and (one._agent_rng == two._agent_rng).all()


def test_sample_step_bad_logits_change_nothing():
    vg = VectorGame(70, seed=2)
    with pytest.raises(ResetNeededError):
        vg.sample_step(np.zeros((70, NUM_ACTIONS)))
    vg.reset()
    for _ in range(5):
        vg.sample_step(np.zeros((70, NUM_ACTIONS)))
    before = [x.copy() for x in (vg._st, vg._agent_rng, vg.actions, vg.obs, vg.mask, vg.player, vg.rewards,
                                 vg.done)]
    legal = np.flatnonzero(vg.mask[40])[0]
    bad_inputs = [np.zeros((69, NUM_ACTIONS)), np.zeros((70, NUM_ACTIONS), int), np.zeros((70, NUM_ACTIONS - 1)),
                  "x"]
    try:
        import torch
        bad_inputs += [torch.zeros((70, NUM_ACTIONS), requires_grad=True),
                       torch.zeros((70, NUM_ACTIONS), dtype=torch.bfloat16)]
    except ImportError:
        pass
    for bad in bad_inputs:
        with pytest.raises(ValueError, match="logits must be"):
            vg.sample_step(bad)
    for value, row in ((np.nan, 40), (np.inf, 40), (np.nan, 0), (np.inf, 69)):
        lg = np.random.default_rng(row).normal(size=(70, NUM_ACTIONS))
        lg[row, np.flatnonzero(vg.mask[row])[0] if row != 40 else legal] = value
        with pytest.raises(ValueError, match=f"row {row}"):
            vg.sample_step(lg)
    after = (vg._st, vg._agent_rng, vg.actions, vg.obs, vg.mask, vg.player, vg.rewards, vg.done)
    assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True))


def test_sample_actions_follows_the_softmax_over_legal_actions():
    """In-kernel sampling: each legal action's frequency matches softmax(logits) over
    the legal ids (within 5 standard errors); -inf excludes an action; the logits
    of illegal actions are never read (nan there changes nothing)."""
    rng = np.random.default_rng(0)
    N = 20_000
    for seed in (11, 12, 13):
        vg = VectorGame(1, seed=seed)
        vg.reset()
        while vg.mask[0].sum() < 5:   # a position with several legal actions
            vg.step(vg.policy_actions("random"))
        legal = np.flatnonzero(vg.mask[0])
        logits = np.full((1, NUM_ACTIONS), np.nan)
        logits[0, legal] = rng.normal(scale=1.5, size=len(legal))
        logits[0, legal[0]] = -np.inf
        counts = np.zeros(NUM_ACTIONS)
        for _ in range(N):
            counts[vg.sample_actions(logits)[0]] += 1
        x = logits[0, legal[1:]]
        p = np.exp(x - x.max())
        p /= p.sum()
        f = counts[legal[1:]] / N
        assert counts[legal[1:]].sum() == N
        assert np.all(np.abs(f - p) <= 5 * np.sqrt(p * (1 - p) / N) + 1e-12), (seed, f, p)


_LAYER_RUN = """
import hashlib, json, numba, numpy as np, majiang_env
from majiang_env.engine.vector import VectorGame
from majiang_env.envs.seat_vector import SeatVectorEnv
NUM_ACTIONS = 156
h = hashlib.sha256()
s = majiang_env.selfplay(96, seed=3, num_envs=64)
stats = [s["decisions"], s["hands"], np.asarray(s["mean_points"]).tolist(), np.asarray(s["wins"]).tolist()]
h.update(json.dumps(stats).encode())
vg = VectorGame(96, seed=5)
vg.reset()
for _ in range(150):
    _, obs, mask, _, rewards, _ = vg.sample_step(np.zeros((96, NUM_ACTIONS)))
    h.update(obs.tobytes()); h.update(rewards.tobytes())
env = SeatVectorEnv(96, opponents="random", seat="random")
env.reset(seed=7)
for _ in range(150):
    obs, r, term, _, _ = env.step(env.sample_actions(np.zeros((96, NUM_ACTIONS))))
    h.update(obs.tobytes()); h.update(r.tobytes()); h.update(term.tobytes())
print(json.dumps([numba.threading_layer(), h.hexdigest()]))
"""


def _run_with_layer(layer):
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer, NUMBA_NUM_THREADS="2")
    env.pop("LD_LIBRARY_PATH", None)
    out = subprocess.run([sys.executable, "-c", _LAYER_RUN], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _installed(dist):
    try:
        importlib.metadata.version(dist)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.skipif(not (sys.platform.startswith("linux") and _installed("tbb")),
                    reason="the tbb package (in the test extra on Linux x86-64) is not installed")
def test_tbb_threading_layer_loads_and_plays_the_same_games():
    """With ``NUMBA_THREADING_LAYER=tbb`` (the ``tbb`` extra), ``import majiang_env``
    makes numba's TBB layer loadable and the batched kernels play exactly the games
    of the default OpenMP layer: selfplay, VectorGame and SeatVectorEnv, two threads."""
    tbb, omp = _run_with_layer("tbb"), _run_with_layer("omp")
    assert tbb[0] == "tbb" and omp[0] == "omp"
    assert tbb[1] == omp[1]
