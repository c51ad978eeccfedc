"""Distributed self-play and rollout collection on Ray (``pip install "majiang_env[distributed]"``).

``SelfplayPool`` runs ``selfplay`` chunks as Ray tasks; ``RolloutCollector``
keeps ``RolloutStream``s (``majiang_env.distributed.rollouts``) on Ray actors. One driver
hands out the work and gathers the results. Ray is imported only when a
function of this module needs it, so ``import majiang_env.distributed`` works
without it.

    from majiang_env import distributed as dist
    dist.init(num_cpus=2)            # a new local Ray; dist.init(address="auto") joins a running cluster
    with dist.SelfplayPool(num_workers=2) as pool:
        stats = pool.selfplay(100_000, seed=0)      # same stats as majiang_env.selfplay(100_000, seed=0)
    with dist.RolloutCollector(num_streams=4, envs_per_stream=256, seed=0,
                               policy=dist.PreferencePolicy()) as rc:
        traj = rc.collect(64)        # obs, mask, player, actions, rewards, done, game: (64, 1024, ...)
        rc.set_weights(new_logits)   # the learner's new parameters, on every worker before the next collect

Reproducibility (seeds derive per game and per stream, never per worker, so a
run does not depend on how many workers it had or which of them failed)
    * ``SelfplayPool.selfplay(n, seed=s)`` splits games ``0 .. n-1`` into chunks
      of consecutive indices and runs chunk ``[a, b)`` as
      ``selfplay(b - a, seed=s, first_game=a)``; game j is dealt from
      ``game_seed(s, j)`` and its in-kernel agents draw from that seed alone,
      so the merged stats equal ``selfplay(n, seed=s)`` exactly (games, hands,
      decisions, mean_points, wins).
    * Stream k of ``RolloutCollector(seed=s)`` is ``RolloutStream(k, B, seed=s)``;
      ``collect`` concatenates the streams in stream order, so the trajectories
      equal those of the same streams run in one process
      (``rollouts.concat([stream.collect(T, policy) for stream in streams])``).
    * ``seed=None`` draws a seed on the driver; it is returned (``stats["seed"]``,
      ``collector.seed``) so the run can be repeated.

Failures
    A chunk whose worker process died (killed, out of memory, node lost) or a
    rollout actor that died is reported with a ``RuntimeWarning`` and a record
    in ``stats["failures"]`` / ``collector.failures``. While at most
    ``max_failures`` deaths have happened in the call, the lost work is run
    again (a chunk as a new task; a dead actor is replaced by a fresh one that
    rebuilds its streams from their last state) and the result is the same as
    without the failure. Past that the call waits for the work still running
    and raises ``WorkerDiedError``, whose ``partial`` keeps every finished
    chunk's or stream's data.

    Selfplay chunks are pure functions of their game range, so they are plain
    Ray tasks and Ray starts new worker processes by itself; but Ray's own
    retries (``max_retries``) are off, because Ray re-runs a task silently and
    counts retries per task: the pool re-submits a lost chunk itself, so that
    each death is reported and ``max_failures`` bounds the deaths of a call.
    A Python exception in a chunk or a policy is a bug, not a failure: it is
    raised at once, never retried.

Modules: ``cluster`` (``init``: starting or joining Ray), ``selfplay_pool``
(``SelfplayPool``, ``merge_stats``), ``collector`` (``RolloutCollector``),
``workers`` (what both share: ``WorkerDiedError``, the worker count, the source
fingerprint) and ``rollouts`` (``RolloutStream`` and the example policies; no Ray).
"""
from __future__ import annotations

from .cluster import _ray as _ray  # the ray module, imported on first use (benchmarks read its version)
from .cluster import init
from .collector import RolloutCollector
from .rollouts import PreferencePolicy, RolloutStream, masked_random, stream_seeds
from .selfplay_pool import SelfplayPool, merge_stats
from .workers import WorkerDiedError

__all__ = ["init", "SelfplayPool", "RolloutCollector", "RolloutStream", "WorkerDiedError",
           "masked_random", "PreferencePolicy", "stream_seeds", "merge_stats"]
