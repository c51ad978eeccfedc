"""``majiang_env.training.ppo`` training throughput: decisions/s end to end (rollouts and PPO updates), idle
and with busy background processes, for the default ``PPOConfig`` and variations of it.

    python benchmarks/bench_ppo.py [--seconds 20] [--busy 0 1] [--only default fp32 ...] [--write-results [PATH]]

Each row builds a ``Trainer`` (self-play, ``VectorGame(num_envs, obs_type="features")``),
runs one untimed update (compiling and warming up), then trains for ``--seconds``
and reports the decisions it trained on per second of training wall time
(``Trainer.spent``: rollouts and updates), and the rollout and update rates apart.
Rows:

* ``default``: ``PPOConfig()`` (1,024 games x 32 decisions per update, 1 epoch
  of 4,096-sample minibatches, 2 torch and 2 numba threads, ``precision="auto"``:
  bfloat16 matrix products where the CPU has them in hardware);
* ``fp32``: the same in float32;
* ``1 thread``: one torch and one numba thread;
* ``256 games``: 256 games x 128 decisions per update (the same samples per update);
* ``old defaults``: the first defaults of ``PPOConfig`` (256 games x 128,
  3 epochs, one torch and one numba thread, float32), on today's code.

Needs the ``train`` extra (torch). ``--busy N`` runs the rows again with N
processes that each spin one core (started and stopped here). ``--write-results``
writes the run to ``benchmarks/results/ppo.json`` (rendered into docs/performance.md
by ``benchmarks/render_docs.py``).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402
from bench_fastpath import busy  # noqa: E402

from majiang_env.training import ppo  # noqa: E402

ROWS = {
    "default": {},
    "fp32": {"precision": "fp32"},
    "1 thread": {"threads": 1, "numba_threads": 1},
    "256 games": {"num_envs": 256, "rollout": 128},
    "old defaults": {"num_envs": 256, "rollout": 128, "epochs": 3, "threads": 1, "numba_threads": 1,
                     "precision": "fp32"},
}


def run(kw, seconds):
    trainer = ppo.Trainer(ppo.PPOConfig(**kw))
    trainer.run(updates=1, log=None)
    d0, s0, n0 = trainer.decisions, trainer.spent, len(trainer.history)
    trainer.run(seconds=seconds, log=None)
    new = trainer.history[n0:]
    d = trainer.decisions - d0
    return d / (trainer.spent - s0), d / sum(r["rollout_s"] for r in new), d / sum(r["learn_s"] for r in new)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--busy", type=int, nargs="+", default=[0])
    ap.add_argument("--only", nargs="+", default=None, choices=sorted(ROWS), metavar="ROW")
    results_io.add_argument(ap, "ppo")
    args = ap.parse_args(argv)
    rows = {name: {"row": name, "config": ROWS[name], "decisions_per_s": {}, "rollout_per_s": {},
                   "update_per_s": {}} for name in (args.only or list(ROWS))}
    loads = {}
    names = args.only or list(ROWS)
    print(f"precision 'auto' means {ppo.matmul_dtype('auto')} on this CPU; {os.cpu_count()} CPUs; "
          f"python {sys.version.split()[0]}")
    for nb in args.busy:
        procs = busy(nb)
        try:
            time.sleep(1.0 if nb else 0.0)
            res = {name: run(ROWS[name], args.seconds) for name in names}
            load = os.getloadavg()[0]
        finally:
            for p in procs:
                p.kill()
                p.wait()
        print(f"\n{nb} busy process(es), load average {load:.2f}, {args.seconds:g} s of training per row")
        print(f"{'row':<16} {'decisions/s':>12} {'rollout/s':>12} {'update/s':>12}")
        for name in names:
            print(f"{name:<16} " + " ".join(f"{x:>12,.0f}" for x in res[name]))
            for key, x in zip(("decisions_per_s", "rollout_per_s", "update_per_s"), res[name], strict=True):
                rows[name][key][f"{nb} busy"] = x
        loads[f"{nb} busy"] = round(load, 2)
    if args.write_results:
        run = results_io.run_record(results_io.command_line(argv, __file__), list(rows.values()),
                                    load_average=loads, seconds=args.seconds,
                                    precision_auto=str(ppo.matmul_dtype("auto")))
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
