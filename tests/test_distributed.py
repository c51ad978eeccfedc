"""majiang_env.distributed on a local 2-CPU Ray: equal to single-process runs,
and clear reports / recovery when a worker is killed mid-run.

Ray starts once per test process (a session fixture), in its own temp dir and
on its own ports, so the two workers of ``pytest -n 2`` may each run some of
these tests without their Rays meeting. (``xdist_group`` asks ``--dist
loadgroup`` to keep them in one worker; pytest-xdist 3.8 cannot do that under
pytest 9, which ignores the node ids it rewrites, so nothing relies on it.)
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from majiang_env import RuleConfig, selfplay  # noqa: E402
from majiang_env import distributed as dist  # noqa: E402
from majiang_env.vector import AGENTS, VectorGame  # noqa: E402

pytestmark = pytest.mark.xdist_group(name="ray")
KEYS = ("games", "hands", "decisions", "mean_points", "wins")
SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)

# policies defined here travel to the workers by value (the workers cannot import this file)
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class KillOncePolicy(dist.PreferencePolicy):
    """PreferencePolicy that kills its own worker process at a call that is a
    multiple of ``every`` while the file ``marker`` exists; the file is removed
    first, so one worker dies, once. Its actions are those of PreferencePolicy."""

    def __init__(self, marker=None, every=25):
        super().__init__()
        self.marker, self.every, self.calls = marker, every, 0

    def __call__(self, obs, mask, player, rng):
        self.calls += 1
        if self.marker and self.calls % self.every == 0 and os.path.exists(self.marker):
            try:
                os.remove(self.marker)
            except FileNotFoundError:
                pass
            else:
                os.kill(os.getpid(), SIGKILL)
        return super().__call__(obs, mask, player, rng)


@pytest.fixture(scope="session")
def ray_session():
    selfplay(2, num_envs=2)                              # compile / load the numba cache before workers start
    vg = VectorGame(1)
    vg.step(dist.masked_random(*vg.reset(), np.random.default_rng(0)))
    tmp = tempfile.mkdtemp(prefix="mjray_")              # short: Ray's socket paths live under it
    assert not ray.is_initialized()
    dist.init(num_cpus=2, _temp_dir=tmp, object_store_memory=200 * 2 ** 20)
    yield
    ray.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def pool(ray_session):                                   # its actors hold both CPUs: one pool at a time
    with dist.SelfplayPool(num_workers=2) as p:
        yield p


def _local(num_streams, envs, seed, policy, steps, weights=()):
    """The same streams run in this process, without Ray."""
    streams = [dist.RolloutStream(k, envs, seed=seed) for k in range(num_streams)]
    outs = [dist._concat([s.collect(steps, policy) for s in streams])]
    for w in weights:
        policy.set_weights(w)
        outs.append(dist._concat([s.collect(steps, policy) for s in streams]))
    return outs


FIELDS = ("obs", "mask", "player", "actions", "rewards", "done", "game", "last_obs", "last_mask", "last_player")


def _same(a, b):
    for k in FIELDS:
        assert np.array_equal(a[k], b[k]), k


def test_import_does_not_need_ray():
    code = "import sys, majiang_env, majiang_env.distributed; assert 'ray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def _raises_value_error(cases):
    for i, f in enumerate(cases):
        with pytest.raises(ValueError):
            f()
            pytest.fail(f"case {i} did not raise")


def test_bad_input(ray_session):
    _raises_value_error([
        lambda: dist.init(num_cpus=0),
        lambda: dist.init(num_cpus=2, address="auto"),
        lambda: dist.init(address=""),
        lambda: dist.SelfplayPool(num_workers=0),
        lambda: dist.SelfplayPool(num_workers=2.0),
        lambda: dist.SelfplayPool(num_workers=True),
        lambda: dist.SelfplayPool(num_workers=3),            # the cluster has 2 CPUs
        lambda: dist.SelfplayPool(threads_per_worker=0),
        lambda: dist.SelfplayPool(max_failures=-1),
        lambda: dist.RolloutCollector(0, 4),
        lambda: dist.RolloutCollector(2, 0),
        lambda: dist.RolloutCollector(1, 4, num_workers=2),
        lambda: dist.RolloutCollector(2, 4, seed=-5),
        lambda: dist.RolloutCollector(2, 4, policy="random"),
        lambda: dist.PreferencePolicy(np.zeros(3)),
        lambda: dist.RolloutStream(0, 4).collect(0),
        lambda: dist.stream_seeds(0, -1),
    ])
    with dist.SelfplayPool(num_workers=1) as p:
        _raises_value_error([
            lambda: p.selfplay(-1),
            lambda: p.selfplay(10, seed=-1),
            lambda: p.selfplay(10, seed=2 ** 64),
            lambda: p.selfplay(10, seed="0"),
            lambda: p.selfplay(10, agents=("random",) * 3),
            lambda: p.selfplay(10, agents=("random",) * 3 + ("nobody",)),
            lambda: p.selfplay(10, num_envs=0),
            lambda: p.selfplay(10, chunk_games=0),
            lambda: p.selfplay(10, rules={"hands_per_game": 9}),
        ])
    with pytest.raises(RuntimeError, match="shut down"):
        p.selfplay(10)
    with dist.RolloutCollector(1, 2, num_workers=1) as rc:      # the default policy has no weights
        with pytest.raises(ValueError, match="set_weights"):
            rc.set_weights(np.zeros(156))
        with pytest.raises(ValueError, match="num_steps"):
            rc.collect(0)


def test_worker_with_other_sources_is_flagged(ray_session, monkeypatch):
    assert dist.init(num_cpus=2) is None                     # Ray is up: init leaves it alone
    monkeypatch.setattr(dist, "_CODE", "not-the-same")      # as if the driver ran other sources
    with pytest.warns(RuntimeWarning, match="install the same version on every node"):
        dist.SelfplayPool(num_workers=1).shutdown()


def test_selfplay_equals_single_process(pool):
    random4 = ("random",) * 4
    cases = [(300, 5, 16, None, None, random4), (97, 2 ** 64 - 1, 8, 10, None, random4),
             (40, 0, 1024, 7, RuleConfig(hands_per_game=2), random4), (0, 1, 4, None, None, random4)]
    if "greedy" in AGENTS:                                   # every in-kernel agent, once one exists
        cases.append((60, 3, 8, 9, None, ("greedy", "random", "greedy", "random")))
    for n, seed, num_envs, chunk, rules, agents in cases:
        ref = selfplay(n, agents=agents, seed=seed, num_envs=64, rules=rules)
        got = pool.selfplay(n, agents=agents, seed=seed, num_envs=num_envs, chunk_games=chunk, rules=rules)
        assert {k: got[k] for k in KEYS} == {k: ref[k] for k in KEYS}, agents
        assert got["failures"] == [] and got["seed"] == seed
        assert [c["first_game"] for c in got["chunks"]] == sorted(c["first_game"] for c in got["chunks"])
    assert {c["worker"] for c in got["chunks"]} <= {0, 1}
    got = pool.selfplay(50, seed=None, num_envs=8)               # a drawn seed is reported and replays
    assert {k: got[k] for k in KEYS} == {k: selfplay(50, seed=got["seed"])[k] for k in KEYS}


def _killer(pid):
    """An ``on_chunk`` callback that kills process ``pid`` after the first finished chunk."""
    killed = []

    def kill_once(chunk):
        if not killed:
            killed.append(chunk["chunk"])
            os.kill(pid, SIGKILL)
    return kill_once


def test_selfplay_killed_worker_is_replaced_and_results_unchanged(pool):
    n, seed = 600, 11
    ref = selfplay(n, seed=seed, num_envs=64)
    victim = pool.info[1]["pid"]
    kill_once = _killer(victim)

    with pytest.warns(RuntimeWarning, match=rf"worker 1 \(pid {victim} .*\) died while running chunk"):
        got = pool.selfplay(n, seed=seed, num_envs=8, chunk_games=25, on_chunk=kill_once)
    assert {k: got[k] for k in KEYS} == {k: ref[k] for k in KEYS}
    assert len(got["failures"]) == 1
    f = got["failures"][0]
    assert f["worker"] == 1 and f["pid"] == victim and "Actor" in f["error"] and f["chunk"] in f["lost chunks"]
    assert pool.info[1]["pid"] != victim                        # a fresh actor took its place
    assert [c["first_game"] for c in got["chunks"]] == list(range(0, n, 25))   # every game exactly once
    assert any(c["pid"] != victim and c["worker"] == 1 for c in got["chunks"])


def test_selfplay_killed_worker_fails_clearly_keeping_finished_chunks(pool):
    n, seed = 600, 12
    victim = pool.info[0]["pid"]
    kill_once = _killer(victim)

    pool.max_failures = 0
    try:
        with pytest.raises(dist.WorkerDiedError, match=rf"worker 0 \(pid {victim} .*max_failures=0") as ei:
            pool.selfplay(n, seed=seed, num_envs=8, chunk_games=25, on_chunk=kill_once)
    finally:
        pool.max_failures = 2
    part = ei.value.partial
    assert ei.value.failures[0]["worker"] == 0 and part["failures"] == ei.value.failures
    assert 0 < part["games"] < n
    played = sorted([(c["first_game"], c["first_game"] + c["games"]) for c in part["chunks"]] + part["unfinished"])
    assert played == [(a, min(n, a + 25)) for a in range(0, n, 25)]   # finished + unfinished = the whole run
    for c in part["chunks"]:                                            # every finished chunk's data is kept, right
        ref = selfplay(c["games"], seed=seed, num_envs=8, first_game=c["first_game"])
        assert {k: c[k] for k in KEYS} == {k: ref[k] for k in KEYS}
    # the pool replaces the dead worker on its next call
    got = pool.selfplay(100, seed=seed, num_envs=8)
    assert {k: got[k] for k in KEYS} == {k: selfplay(100, seed=seed)[k] for k in KEYS}
    assert victim not in pool.pids()


def test_rollouts_equal_streams_without_ray(ray_session):
    w = np.linspace(-2, 2, 156)
    local = _local(3, 2, 7, dist.PreferencePolicy(), 500, weights=[w])
    with dist.RolloutCollector(3, 2, seed=7, policy=dist.PreferencePolicy(), num_workers=2) as rc:
        first = rc.collect(500)
        rc.set_weights(w)
        second = rc.collect(500)
    _same(first, local[0])
    _same(second, local[1])
    assert first["obs"].shape == (500, 6, 436) and first["rewards"].shape == (500, 6, 4)
    assert first["done"].any() and second["done"].any()
    assert (first["rewards"].sum(axis=(0, 2)) == 0).all()       # zero-sum hands


def test_rollout_worker_killed_mid_collect_recovers(ray_session, tmp_path):
    marker = tmp_path / "kill"
    w = np.linspace(1, -1, 156)
    local = _local(4, 2, 3, KillOncePolicy(), 60, weights=[w, w])
    with dist.RolloutCollector(4, 2, seed=3, policy=KillOncePolicy(str(marker)), num_workers=2) as rc:
        a = rc.collect(60)
        marker.touch()                 # a worker dies at its next 25th policy call: inside the next collect
        rc.set_weights(w)
        with pytest.warns(RuntimeWarning, match=r"worker \d \(pid \d+ .*\) died while running streams"):
            b = rc.collect(60)
        assert not marker.exists() and len(rc.failures) == 1 and "Actor" in rc.failures[0]["error"]
        ray.kill(rc.workers[0])        # and one killed between collects, by Ray
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(rc.workers[0].info.remote())
        with pytest.warns(RuntimeWarning, match="worker 0"):
            c = rc.collect(60)
        assert len(rc.failures) == 2 and rc.failures[1]["streams"] == [0, 2]
    for got, want in zip((a, b, c), local):
        _same(got, want)


def test_rollout_worker_killed_without_recovery_fails_clearly(ray_session):
    local = _local(4, 2, 9, dist.masked_random, 30)[0]
    with dist.RolloutCollector(4, 2, seed=9, num_workers=2, recover=False) as rc:
        victim = rc.info[1]["pid"]
        os.kill(victim, SIGKILL)
        with pytest.raises(dist.WorkerDiedError,
                           match=rf"worker 1 \(pid {victim} .*streams \[1, 3\].*recover=False") as ei:
            rc.collect(30)
        with pytest.raises(RuntimeError, match="make a new one"):
            rc.collect(30)
    part = ei.value.partial                # worker 0's streams finished: their data is kept, and right
    assert sorted(part) == [0, 2]
    for k in (0, 2):
        cols = slice(2 * k, 2 * k + 2)
        for f in ("obs", "mask", "player", "actions", "rewards", "done", "game"):
            assert np.array_equal(part[k][f], local[f][:, cols]), f
