"""majiang_env.distributed on a local 2-CPU Ray: equal to single-process runs,
and clear reports / recovery when a worker is killed mid-run (always inside a
chunk or a collect, by the worker itself, so no timing decides a test).

Ray starts once per test process (a session fixture), in its own temp dir and
on its own ports, so the two workers of ``pytest -n 2`` may each run some of
these tests without their Rays meeting. (``xdist_group`` asks ``--dist
loadgroup`` to keep them in one worker; pytest-xdist 3.8 cannot do that under
pytest 9, which ignores the node ids it rewrites, so nothing relies on it.)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from majiang_env import RuleConfig, selfplay  # noqa: E402
from majiang_env import distributed as dist  # noqa: E402
from majiang_env.agents import kernel_agent_names  # noqa: E402
from majiang_env.distributed import cluster, rollouts, selfplay_pool, workers  # noqa: E402
from majiang_env.engine.vector import VectorGame  # noqa: E402

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
def pool(ray_session):
    with dist.SelfplayPool(num_workers=2) as p:
        yield p


def _local(num_streams, envs, seed, policy, steps, weights=()):
    """The same streams run in this process, without Ray."""
    streams = [dist.RolloutStream(k, envs, seed=seed) for k in range(num_streams)]
    outs = [rollouts.concat([s.collect(steps, policy) for s in streams])]
    for w in weights:
        policy.set_weights(w)
        outs.append(rollouts.concat([s.collect(steps, policy) for s in streams]))
    return outs


FIELDS = ("obs", "mask", "player", "actions", "rewards", "done", "game", "last_obs", "last_mask", "last_player")


def _same(a, b):
    for k in FIELDS:
        assert np.array_equal(a[k], b[k]), k


def test_import_does_not_need_ray():
    code = ("import sys, majiang_env, majiang_env.distributed, majiang_env.distributed.rollouts as r; "
            "r.RolloutStream(0, 2).collect(3, r.PreferencePolicy()); assert 'ray' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _raises_value_error(cases):
    for i, f in enumerate(cases):
        with pytest.raises(ValueError):
            f()
            pytest.fail(f"case {i} did not raise")


def _raises_naming(cases):
    """``(words, f)``: ``f()`` raises a ValueError (not a TypeError, OverflowError,
    numba error...) whose message contains each of ``words``."""
    for words, f in cases:
        with pytest.raises(ValueError) as ei:
            f()
            pytest.fail(f"{words} did not raise")
        for w in words:
            assert w in str(ei.value), (w, str(ei.value))


def _wait_dead(actor, within=60.0):
    """Wait until a call to ``actor`` fails with RayActorError: ``ray.kill`` only
    asks Ray to kill it, and a call made right after may still be served."""
    deadline = time.monotonic() + within
    while True:
        try:
            ray.get(actor.info.remote(), timeout=5)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            pass
        assert time.monotonic() < deadline, f"the actor still answers {within:g} s after ray.kill"
        time.sleep(0.05)


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


BIG = 2 ** 64


def test_bad_arguments_name_the_value(ray_session):
    """Every public argument: bools, floats, strings, negatives and ints past
    2**64 are ValueErrors naming the argument and the value, before any work."""
    _raises_naming([
        (["num_cpus", "True"], lambda: dist.init(num_cpus=True)),
        (["num_cpus", str(BIG)], lambda: dist.init(num_cpus=BIG)),
        (["num_cpus", "2.0"], lambda: dist.init(num_cpus=2.0)),
        (["address", "5"], lambda: dist.init(address=5)),
        (["address", "'head'"], lambda: dist.init(address="head")),            # no port
        (["address", "'head:0'"], lambda: dist.init(address="head:0")),
        (["address", "'head:65536'"], lambda: dist.init(address="head:65536")),
        (["address", "'ray://'"], lambda: dist.init(address="ray://")),
        (["timeout", "0"], lambda: dist.init(timeout=0)),
        (["timeout", "-1"], lambda: dist.init(timeout=-1)),
        (["timeout", "True"], lambda: dist.init(timeout=True)),
        (["timeout", "nan"], lambda: dist.init(timeout=float("nan"))),
        (["timeout", "inf"], lambda: dist.init(timeout=float("inf"))),
        (["timeout", "'3'"], lambda: dist.init(timeout="3")),
        (["timeout", str(BIG)], lambda: dist.init(address="127.0.0.1:1", timeout=BIG)),
        (["num_workers", str(BIG)], lambda: dist.SelfplayPool(num_workers=BIG)),
        (["threads_per_worker", "True"], lambda: dist.SelfplayPool(threads_per_worker=True)),
        (["threads_per_worker", str(BIG)], lambda: dist.SelfplayPool(threads_per_worker=BIG)),
        (["max_failures", "1.0"], lambda: dist.SelfplayPool(max_failures=1.0)),
        (["max_failures", str(BIG)], lambda: dist.SelfplayPool(max_failures=BIG)),
        (["task_options", "'SPREAD'"], lambda: dist.SelfplayPool(task_options="SPREAD")),
        (["task_options", "'1'"], lambda: dist.SelfplayPool(task_options={"num_cpus": "1"})),
        (["task_options", "True"], lambda: dist.SelfplayPool(task_options={"num_cpus": True})),
        (["start_timeout", "0"], lambda: dist.RolloutCollector(2, 2, start_timeout=0)),
        (["start_timeout", "inf"], lambda: dist.RolloutCollector(2, 2, start_timeout=float("inf"))),
        (["start_timeout", "None"], lambda: dist.RolloutCollector(2, 2, start_timeout=None)),
        (["actor_options", "'SPREAD'"], lambda: dist.RolloutCollector(2, 2, actor_options="SPREAD")),
        (["actor_options", "'1'"], lambda: dist.RolloutCollector(2, 2, actor_options={"num_cpus": "1"})),
        (["actor_options", "True"], lambda: dist.RolloutCollector(2, 2, actor_options={"num_cpus": True})),
        (["num_streams", str(BIG)], lambda: dist.RolloutCollector(BIG, 2)),
        (["num_streams", "2.0"], lambda: dist.RolloutCollector(2.0, 2)),
        (["envs_per_stream", str(BIG)], lambda: dist.RolloutCollector(2, BIG)),
        (["envs_per_stream", "True"], lambda: dist.RolloutCollector(2, True)),
        (["num_workers", "True"], lambda: dist.RolloutCollector(2, 2, num_workers=True)),
        (["seed", str(BIG)], lambda: dist.RolloutCollector(2, 2, seed=BIG)),
        (["seed", "1.5"], lambda: dist.RolloutCollector(2, 2, seed=1.5)),
        (["recover", "'no'"], lambda: dist.RolloutCollector(2, 2, recover="no")),
        (["recover", "1"], lambda: dist.RolloutCollector(2, 2, recover=1)),
        (["start_timeout", "-1"], lambda: dist.RolloutCollector(2, 2, start_timeout=-1)),
        (["stream", str(BIG)], lambda: dist.stream_seeds(0, BIG)),
        (["stream", "True"], lambda: dist.stream_seeds(0, True)),
        (["stream", "1.0"], lambda: dist.stream_seeds(0, 1.0)),
        (["seed", str(BIG)], lambda: dist.stream_seeds(BIG, 0)),
        (["seed", "True"], lambda: dist.stream_seeds(True, 0)),
        (["stream index", str(BIG)], lambda: dist.RolloutStream(BIG, 2)),
        (["num_envs", str(BIG)], lambda: dist.RolloutStream(0, BIG)),
        (["num_steps", str(BIG)], lambda: dist.RolloutStream(0, 2).collect(BIG)),
        (["num_steps", "2.0"], lambda: dist.RolloutStream(0, 2).collect(2.0)),
        (["num_steps", str(2 ** 61)], lambda: dist.RolloutStream(0, 2).collect(2 ** 61)),   # 2**73 bytes
        (["policy", "5"], lambda: dist.RolloutStream(0, 2).collect(2, policy=5)),
        (["weights", "str"], lambda: dist.PreferencePolicy("abc")),
        (["weights", "dict"], lambda: dist.PreferencePolicy({})),
        (["weights", "bool"], lambda: dist.PreferencePolicy(np.ones(156, bool))),
        (["weights", "list"], lambda: dist.PreferencePolicy([[1.0, 2.0], [3.0]])),
        (["weights", "(3,)"], lambda: dist.PreferencePolicy(np.zeros(3))),
    ])
    with dist.SelfplayPool(num_workers=1) as p:
        _raises_naming([
            (["agents", "5"], lambda: p.selfplay(10, agents=5)),
            (["agents", "['x']"], lambda: p.selfplay(10, agents=("random",) * 3 + (["x"],))),
            (["num_games", str(BIG)], lambda: p.selfplay(BIG)),
            (["num_games", "True"], lambda: p.selfplay(True)),
            (["num_games", "10.0"], lambda: p.selfplay(10.0)),
            (["num_envs", str(BIG)], lambda: p.selfplay(10, num_envs=BIG)),
            (["num_envs", "8.0"], lambda: p.selfplay(10, num_envs=8.0)),
            (["chunk_games", str(BIG)], lambda: p.selfplay(10, chunk_games=BIG)),
            (["chunk_games", "True"], lambda: p.selfplay(10, chunk_games=True)),
            (["num_games", str(2 ** 62), "chunk_games"], lambda: p.selfplay(2 ** 62)),   # 2**50 chunks
            (["on_chunk", "5"], lambda: p.selfplay(10, on_chunk=5)),
        ])
        p.max_failures = "2"                                    # an attribute: checked at each call
        with pytest.raises(ValueError, match="max_failures"):
            p.selfplay(10)
        p.max_failures = 2
        assert p.selfplay(10, seed=1)["games"] == 10            # nothing was left half-done
    w = np.linspace(-1, 1, 156)
    with dist.RolloutCollector(1, 2, num_workers=1, policy=dist.PreferencePolicy()) as rc:
        _raises_naming([
            (["num_steps", str(BIG)], lambda: rc.collect(BIG)),
            (["num_steps", "True"], lambda: rc.collect(True)),
            (["num_steps", str(2 ** 61)], lambda: rc.collect(2 ** 61)),
            (["weights", "str"], lambda: rc.set_weights("abc")),
            (["weights", "(155,)"], lambda: rc.set_weights(w[:155])),
            (["policy", "5"], lambda: rc.set_policy(5)),
        ])
        rc.set_weights(w)                                       # and the collector still works
        _same(rc.collect(20), _local(1, 2, 0, dist.PreferencePolicy(w), 20)[0])


# A script run in a fresh process (Ray not initialised there): each address must
# fail with a ConnectionError naming it, within the timeout, leaving Ray down;
# then a local init() still works.
_UNREACHABLE = textwrap.dedent("""
    import json, os, socket, sys, tempfile, time
    import ray
    from majiang_env import distributed as dist
    sink = socket.socket()                  # a port that accepts connections but never answers
    sink.bind(("0.0.0.0", 0))
    sink.listen(16)
    addresses = ["127.0.0.1:1", "nonexistent.invalid:6379", "ray://127.0.0.1:1",
                 f"127.0.0.1:{sink.getsockname()[1]}", "auto"]
    os.environ["RAY_ADDRESS"] = "127.0.0.1:1"               # what "auto" then means
    out = []
    for a in addresses:
        t = time.monotonic()
        try:
            dist.init(address=a, timeout=3)
            err = None
        except Exception as e:
            err = [type(e).__name__, str(e)]
        out.append({"address": a, "error": err, "seconds": time.monotonic() - t,
                    "initialized": ray.is_initialized()})
    del os.environ["RAY_ADDRESS"]
    ctx = dist.init(num_cpus=1, _temp_dir=tempfile.mkdtemp(prefix="mjray_"))
    out.append({"later_init": ctx is not None and ray.cluster_resources().get("CPU") == 1})
    ray.shutdown()
    print("RESULT " + json.dumps(out))
""")


def _run_script(code, env=None, timeout=240):
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, p.stdout[-3000:] + p.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_init_unreachable_address_fails_within_timeout():
    *results, later = _run_script(_UNREACHABLE)
    for r in results:
        assert r["error"] is not None and r["error"][0] == "ConnectionError", r
        assert repr(r["address"]) in r["error"][1] and "timeout=3 s" in r["error"][1], r
        assert r["seconds"] < 30, r                  # 3 s asked; generous for a busy machine
        assert not r["initialized"], r
    why = {r["address"]: r["error"][1] for r in results}
    assert "cannot resolve host 'nonexistent.invalid'" in why["nonexistent.invalid:6379"]
    assert "no Ray GCS answered" in why[results[3]["address"]]
    assert "RAY_ADDRESS='127.0.0.1:1'" in why["auto"]
    assert later == {"later_init": True}


_JOIN = textwrap.dedent("""
    import json, sys, time
    import ray
    from majiang_env import distributed as dist
    t = time.monotonic()
    try:
        dist.init(address=sys.argv[1], timeout=20)
        out = {"cpus": ray.cluster_resources().get("CPU"), "error": None}
        ray.shutdown()
    except ConnectionError as e:
        out = {"error": str(e)}
    out["seconds"] = time.monotonic() - t
    print("RESULT " + json.dumps(out))
""")


def test_init_joins_a_cluster_by_address(ray_session):
    """Another process joins this test's Ray by its GCS address. That Ray uses
    token authentication when Ray's default says so: with RAY_AUTH_MODE=token
    the process connects; without it, the error says so at once (Ray alone
    would retry for 20 s and then report a bare "Failed to connect")."""
    gcs = ray.get_runtime_context().gcs_address
    code = _JOIN.replace("sys.argv[1]", repr(gcs))
    ok = _run_script(code, env={"RAY_AUTH_MODE": "token"})
    assert ok["error"] is None and ok["cpus"] == 2, ok
    no_token = _run_script(code, env={"RAY_AUTH_MODE": "disabled"})
    if no_token["error"] is not None:                # a cluster with token authentication
        assert repr(gcs) in no_token["error"] and "RAY_AUTH_MODE=token" in no_token["error"], no_token
        assert no_token["seconds"] < 15, no_token
    else:
        assert no_token["cpus"] == 2, no_token


class _SlowRay:
    """Stands in for the ray module: ``init`` connects when the test sets
    ``release`` (at once if ``blocked`` is False), so no timing decides the test."""

    def __init__(self, blocked=True):
        self.up, self.calls = False, []
        self.release, self.finished = threading.Event(), threading.Event()
        if not blocked:
            self.release.set()

    def init(self, address=None, **kwargs):
        self.calls.append(("init", address))
        self.release.wait(120)
        self.up = True
        return "context"

    def shutdown(self):
        self.calls.append(("shutdown", None))
        self.up = False
        self.finished.set()


def test_init_abandons_a_slow_ray_init_and_cleans_up(ray_session, monkeypatch):
    """The last stage of init(address=...): a ray.init past the deadline is
    abandoned with a ConnectionError; when it connects later that Ray is shut
    down again, and the next init waits for it (within its own timeout)."""
    monkeypatch.setattr(cluster, "_PENDING", None)
    fake = _SlowRay()
    t = time.monotonic()
    with pytest.raises(ConnectionError, match=r"address='x:1' \(timeout=0.3 s\): ray.init did not finish"):
        cluster._init_bounded(fake, "x:1", {}, time.monotonic() + 0.3,
                           lambda why: ConnectionError(f"address='x:1' (timeout=0.3 s): {why}"))
    assert time.monotonic() - t < 30 and cluster._PENDING is not None and not fake.up
    with pytest.raises(RuntimeError, match="still inside ray.init"):
        dist.init(timeout=0.2)                         # the abandoned call outlasts this one's timeout
    fake.release.set()                                 # now it connects, late: that Ray is shut down again
    assert fake.finished.wait(30) and fake.calls == [("init", "x:1"), ("shutdown", None)] and not fake.up
    assert dist.init(timeout=20) is None and cluster._PENDING is None   # joined; the session's Ray is up

    fake = _SlowRay()                                  # the next init waits for an abandoned one to end
    with pytest.raises(ConnectionError):
        cluster._init_bounded(fake, "x:1", {}, time.monotonic() + 0.1, ConnectionError)
    threading.Timer(0.5, fake.release.set).start()
    assert dist.init(timeout=30) is None and cluster._PENDING is None
    assert fake.calls == [("init", "x:1"), ("shutdown", None)]

    fast = _SlowRay(blocked=False)                     # one that finishes in time returns its context
    assert cluster._init_bounded(fast, "x:1", {}, time.monotonic() + 30, ConnectionError) == "context"
    assert fast.calls == [("init", "x:1")] and cluster._PENDING is None


def test_worker_with_other_sources_is_flagged(ray_session, monkeypatch):
    assert dist.init(num_cpus=2) is None                     # Ray is up: init leaves it alone
    monkeypatch.setattr(workers, "_CODE", "not-the-same")      # as if the driver ran other sources
    with pytest.warns(RuntimeWarning, match="install the same version on every node"):
        with dist.SelfplayPool(num_workers=1) as p:
            p.selfplay(10)
    with pytest.warns(RuntimeWarning, match="install the same version on every node"):
        dist.RolloutCollector(1, 2, num_workers=1).shutdown()


def test_selfplay_equals_single_process(pool):
    random4 = ("random",) * 4
    cases = [(300, 5, 16, None, None, random4), (97, 2 ** 64 - 1, 8, 10, None, random4),
             (40, 0, 1024, 7, RuleConfig(hands_per_game=2), random4), (0, 1, 4, None, None, random4)]
    if "greedy" in kernel_agent_names():                                   # every in-kernel agent, once one exists
        cases.append((60, 3, 8, 9, None, ("greedy", "random", "greedy", "random")))
    for n, seed, num_envs, chunk, rules, agents in cases:
        ref = selfplay(n, agents=agents, seed=seed, num_envs=64, rules=rules)
        got = pool.selfplay(n, agents=agents, seed=seed, num_envs=num_envs, chunk_games=chunk, rules=rules)
        assert {k: got[k] for k in KEYS} == {k: ref[k] for k in KEYS}, agents
        assert got["failures"] == [] and got["seed"] == seed
        assert [c["first_game"] for c in got["chunks"]] == sorted(c["first_game"] for c in got["chunks"])
    assert all(c["pid"] > 0 and c["host"] for c in got["chunks"])
    got = pool.selfplay(50, seed=None, num_envs=8)               # a drawn seed is reported and replays
    assert {k: got[k] for k in KEYS} == {k: selfplay(50, seed=got["seed"])[k] for k in KEYS}


def _dies_once(marker):
    """A stand-in for the pool's chunk task: the first chunk to start while the
    file ``marker`` exists removes it and kills its own worker process
    (SIGKILL), so one worker dies, once, inside a chunk; other chunks run as usual."""
    run = selfplay_pool._selfplay_chunk

    def chunk(*args):
        try:
            os.remove(marker)
        except FileNotFoundError:
            return run(*args)
        os.kill(os.getpid(), SIGKILL)
    return chunk


def test_selfplay_killed_worker_is_replaced_and_results_unchanged(ray_session, tmp_path, monkeypatch):
    n, seed, marker = 600, 11, tmp_path / "kill"
    ref = selfplay(n, seed=seed, num_envs=64)
    marker.touch()
    monkeypatch.setattr(selfplay_pool, "_selfplay_chunk", _dies_once(str(marker)))
    with dist.SelfplayPool(num_workers=2) as pool:
        with pytest.warns(RuntimeWarning, match=r"the worker running chunk [01] \(games \d+-\d+\) died "
                                                r"\(WorkerCrashedError.*running that chunk again"):
            got = pool.selfplay(n, seed=seed, num_envs=8, chunk_games=25)
    assert not marker.exists()
    assert {k: got[k] for k in KEYS} == {k: ref[k] for k in KEYS}
    assert len(got["failures"]) == 1 and pool.failures == got["failures"]
    f = got["failures"][0]
    a = 25 * f["chunk"]
    assert f["games"] == f"{a}-{a + 24}" and f["error"].startswith("WorkerCrashedError: ")
    assert [c["first_game"] for c in got["chunks"]] == list(range(0, n, 25))   # every game exactly once


def test_selfplay_killed_worker_fails_clearly_keeping_finished_chunks(ray_session, tmp_path, monkeypatch):
    n, seed, marker = 600, 12, tmp_path / "kill"
    marker.touch()
    monkeypatch.setattr(selfplay_pool, "_selfplay_chunk", _dies_once(str(marker)))
    with dist.SelfplayPool(num_workers=2, max_failures=0) as pool:
        with pytest.raises(dist.WorkerDiedError, match=r"the worker running chunk [01] .*max_failures=0") as ei:
            pool.selfplay(n, seed=seed, num_envs=8, chunk_games=25)
        part = ei.value.partial
        assert len(ei.value.failures) == 1 and part["failures"] == ei.value.failures
        assert 0 < part["games"] < n                     # the other chunk running when the worker died finished
        played = sorted([(c["first_game"], c["first_game"] + c["games"]) for c in part["chunks"]]
                        + part["unfinished"])
        assert played == [(a, min(n, a + 25)) for a in range(0, n, 25)]   # finished + unfinished = the whole run
        for c in part["chunks"]:                                            # every finished chunk's data is kept, right
            ref = selfplay(c["games"], seed=seed, num_envs=8, first_game=c["first_game"])
            assert {k: c[k] for k in KEYS} == {k: ref[k] for k in KEYS}
        got = pool.selfplay(100, seed=seed, num_envs=8)                     # the pool goes on: Ray started a new
        assert {k: got[k] for k in KEYS} == {k: selfplay(100, seed=seed)[k] for k in KEYS}   # worker process


def test_selfplay_error_in_a_chunk_is_raised_not_retried(ray_session, monkeypatch):
    def broken(*args):
        raise KeyError("a bug in the chunk")
    monkeypatch.setattr(selfplay_pool, "_selfplay_chunk", broken)
    with dist.SelfplayPool(num_workers=2) as p:
        with pytest.raises(KeyError, match="a bug in the chunk"):
            p.selfplay(100, num_envs=8, chunk_games=10)
        assert p.failures == []


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
        _wait_dead(rc.workers[0])
        with pytest.warns(RuntimeWarning, match="worker 0"):
            c = rc.collect(60)
        assert len(rc.failures) == 2 and rc.failures[1]["streams"] == [0, 2]
    for got, want in zip((a, b, c), local, strict=True):
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
