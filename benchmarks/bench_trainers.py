"""Trainer throughput: sb3-contrib ``MaskablePPO`` end to end on ``majiang_env.integrations.sb3.SB3VecEnv``
(one ``SeatVectorEnv`` of B games) next to ``DummyVecEnv`` over B ``SingleAgentEnv``s, with
the same PPO settings, the same opponents and the features observation.

    python benchmarks/bench_trainers.py [--envs 64] [--opponents random] [--n-steps 64]
                                        [--batch-size 256] [--epochs 4] [--steps 8192] [--repeat 3]
                                        [--torch-threads N] [--env-threads N] [--only adapter|dummy]
                                        [--write-results [PATH]]

Each row is the best of ``--repeat`` runs of ``model.learn(--steps)`` on one model
(the first, untimed ``learn`` of one rollout compiles and warms up); the runs
of the two rows alternate. Columns: end-to-end learner steps/s (rollouts and
PPO updates), steps/s inside ``collect_rollouts`` alone, the share of the
rollout time spent in the environment (``step`` and ``action_masks``; the rest
is the policy's forward pass and SB3's bookkeeping), and end-to-end steps per
second of this process's CPU time (less sensitive to other jobs). The load average (``uptime``) is printed before
and after: on a shared machine, compare rows of the same run only.

``--torch-threads`` / ``--env-threads`` (``SeatVectorEnv(num_threads=...)``)
matter on a busy machine: on 2 cores at load average 9, torch on 2 threads
ran PPO updates about 40x slower than on 1, and ``SeatVectorEnv(64)`` with 2
numba threads stepped about 8x slower than with 1.

``--write-results`` writes the rows to ``benchmarks/results/trainers.json`` (one row per
env and settings), from which ``benchmarks/render_docs.py`` renders the tables of
docs/performance.md and docs/guide.md.
"""
import argparse
import os
import sys
import time

import numba
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnvWrapper, VecMonitor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

from majiang_env.envs.single_agent import SingleAgentEnv  # noqa: E402
from majiang_env.integrations.sb3 import SB3VecEnv  # noqa: E402


class EnvTimer(VecEnvWrapper):
    """Adds up the seconds spent in the wrapped VecEnv's step and action masks."""

    def __init__(self, venv):
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        t = time.perf_counter()
        out = self.venv.step_wait()
        self.seconds += time.perf_counter() - t
        return out

    def env_method(self, method_name, *args, indices=None, **kwargs):
        t = time.perf_counter()
        out = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
        self.seconds += time.perf_counter() - t
        return out


def make_env(kind, B, opponents, env_threads=None):
    if kind == "adapter":
        venv = SB3VecEnv(B, opponents=opponents, seat="random", obs_type="features", reward_scale=0.01,
                         num_threads=env_threads)
    else:
        venv = DummyVecEnv([lambda: SingleAgentEnv(opponents=opponents, seat="random", obs_type="features",
                                                   reward_scale=0.01)] * B)
    return EnvTimer(VecMonitor(venv))


class Run:
    """One model on one env, with its rollout time measured."""

    def __init__(self, kind, args):
        self.env = make_env(kind, args.envs, args.opponents, args.env_threads)
        self.model = MaskablePPO("MlpPolicy", self.env, n_steps=args.n_steps, batch_size=args.batch_size,
                                 n_epochs=args.epochs, seed=0, policy_kwargs={"net_arch": [64, 64]},
                                 device="cpu")
        self.rollout = 0.0
        collect = self.model.collect_rollouts

        def timed(*a, **k):
            t = time.perf_counter()
            out = collect(*a, **k)
            self.rollout += time.perf_counter() - t
            return out

        self.model.collect_rollouts = timed
        self.model.learn(args.envs * args.n_steps)   # warm-up: compile, first allocations
        self.best = None

    def measure(self, steps):
        self.env.seconds, self.rollout = 0.0, 0.0
        n0 = self.model.num_timesteps
        t, c = time.perf_counter(), time.process_time()
        self.model.learn(steps, reset_num_timesteps=False)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        n = self.model.num_timesteps - n0
        row = (n / wall, n / self.rollout, self.env.seconds / self.rollout, n / cpu)
        self.best = row if self.best is None or row[0] > self.best[0] else self.best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=64, help="B, games stepped together")
    ap.add_argument("--opponents", default="random", help="in-kernel / SingleAgentEnv opponent name")
    ap.add_argument("--n-steps", type=int, default=64, help="PPO n_steps per env (rollout = B x n_steps)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--steps", type=int, default=8192, help="learner steps per timed learn()")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is printed")
    ap.add_argument("--torch-threads", type=int, default=None)
    ap.add_argument("--env-threads", type=int, default=None, help="numba threads of SeatVectorEnv (default: all)")
    ap.add_argument("--only", choices=["adapter", "dummy"], default=None)
    results_io.add_argument(ap, "trainers")
    args = ap.parse_args(argv)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    print(f"load average {os.getloadavg()[0]:.2f} at start; {os.cpu_count()} CPUs, "
          f"{args.env_threads or numba.get_num_threads()} numba threads in SeatVectorEnv, "
          f"{torch.get_num_threads()} torch threads")
    print(f"MaskablePPO MlpPolicy [64, 64], B={args.envs}, n_steps={args.n_steps}, batch_size={args.batch_size}, "
          f"n_epochs={args.epochs}, opponents={args.opponents!r}, obs_type='features'; "
          f"best of {args.repeat} x learn({args.steps})")
    rows = [("adapter", f"SB3VecEnv({args.envs})"), ("dummy", f"DummyVecEnv({args.envs} x SingleAgentEnv)")]
    runs = {kind: Run(kind, args) for kind, _ in rows if not args.only or kind == args.only}
    for _ in range(args.repeat):      # interleaved, so a burst of load on the machine hits both
        for run in runs.values():
            run.measure(args.steps)
    print(f"{'env':<34} {'end-to-end steps/s':>19} {'rollout steps/s':>16} {'env share':>10} "
          f"{'steps/CPU-s':>12}")
    for kind, label in rows:
        if kind in runs:
            e2e, roll, share, per_cpu = runs[kind].best
            print(f"{label:<34} {e2e:>19,.0f} {roll:>16,.0f} {share:>9.0%} {per_cpu:>12,.0f}")
    if len(runs) == 2:
        a, d = runs["adapter"].best, runs["dummy"].best
        print(f"adapter / dummy: {a[0] / d[0]:.1f}x end to end, {a[1] / d[1]:.1f}x in rollouts, "
              f"{a[3] / d[3]:.1f}x per CPU-second")
    for run in runs.values():
        run.env.close()
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    if args.write_results:
        setting = (f"B={args.envs}, n_steps {args.n_steps}, batch {args.batch_size}, {args.epochs} epochs, "
                   f"{args.opponents} opponents")
        out = [{"row": f"{label}: {setting}", "setting": setting, "env": label, "end_to_end": runs[kind].best[0],
                "rollout": runs[kind].best[1], "env_share": runs[kind].best[2], "per_cpu_second": runs[kind].best[3]}
               for kind, label in rows if kind in runs]
        run = results_io.run_record(results_io.command_line(argv, __file__), out, steps=args.steps,
                                    repeat=args.repeat, torch_threads=torch.get_num_threads())
        results_io.report(results_io.write(args.write_results, run))


if __name__ == "__main__":
    main()
