"""Self-play PPO on RLlib (new API stack): one masked policy for the four seats.

    pip install -e '.[rllib,train]'
    python examples/rllib_ppo.py [--iterations 20] [--env-runners 1] [--envs-per-runner 4]
                                 [--batch 4000] [--minibatch 500] [--epochs 4] [--hidden 256 256]
                                 [--hands-per-game 4] [--seed 0] [--num-cpus N]
                                 [--eval-games 256] [--eval-opponents random] [--checkpoint DIR]
                                 [--torch-threads N] [--illegal-raises] [--json]

The budget is in steps, not seconds: ``--iterations`` PPO iterations of about
``--batch`` env steps (decisions) each (``train_batch_size_per_learner``), about
20 x 4,000 = 80,000 by default whatever the machine's load; the summary counts
the env steps sampled (``env_steps_sampled``). ``ray.init`` and building the
algorithm (its env runners build their envs, and RLlib's env check steps them)
are timed apart (``build_seconds``), before the first iteration.

The environment is ``majiang_env.integrations.rllib.MajiangMultiAgentEnv`` (the features
observation with the action mask), the module RLlib's action-masking PPO
module, the config ``majiang_env.integrations.rllib.ppo_config``. Every iteration prints its
wall time, the env steps (decisions) it sampled, the games finished, their mean
length and the policy's loss and entropy. Afterwards the learned module plays
``--eval-games`` games as the learning seat of a ``SeatVectorEnv`` against
in-kernel ``--eval-opponents`` (its logits sampled in the kernel) and the mean
score per game is printed: a trained policy should beat random opponents
(> 0), and the greedy ones after long enough training. ``--json`` prints one
JSON line with the figures at the end (used by tests/integrations/test_rllib.py).
``--illegal-raises``: an illegal action stops the run (``env_config``
``illegal="raise"``) instead of ending its game with a penalty; RLlib's env
check at start-up, which steps an unmasked random action, is then skipped.
"""
import argparse
import json
import os
import time

import numpy as np
import ray

from majiang_env.envs.seat_vector import SeatVectorEnv
from majiang_env.integrations.rllib import SHARED, logits_fn, ppo_config


def evaluate(module, games: int, opponents: str, rules: dict, seed: int) -> float:
    """Mean final score of the learned module as the learner of ``games`` games."""
    B = min(games, 64)
    envs = SeatVectorEnv(B, opponents=opponents, seat="random", obs_type="features", **rules)
    fn = logits_fn(module)
    obs, _ = envs.reset(seed=seed)
    scores = []
    while len(scores) < games:
        obs, _, term, _, info = envs.step(envs.sample_actions(fn(obs, envs.action_masks())))
        if term.any():
            scores += info["final_info"]["scores"][term, 0].tolist()
    return float(np.mean(scores[:games]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--env-runners", type=int, default=1, help="remote EnvRunner actors (0: sample in the driver)")
    ap.add_argument("--envs-per-runner", type=int, default=4, help="games each EnvRunner steps together")
    ap.add_argument("--batch", type=int, default=4000, help="train_batch_size_per_learner (env steps)")
    ap.add_argument("--minibatch", type=int, default=500)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--hands-per-game", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-cpus", type=int, default=None, help="for ray.init (default: all)")
    ap.add_argument("--object-store-mb", type=int, default=None, help="for ray.init")
    ap.add_argument("--eval-games", type=int, default=256, help="0: no evaluation")
    ap.add_argument("--eval-opponents", default="random")
    ap.add_argument("--checkpoint", default=None, help="save the algorithm here at the end")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch threads of the driver, where the learner runs (on a busy machine: 1)")
    ap.add_argument("--illegal-raises", action="store_true", help="an illegal action stops the run")
    ap.add_argument("--json", action="store_true", help="print a JSON summary line at the end")
    args = ap.parse_args()

    if args.torch_threads:
        import torch
        torch.set_num_threads(args.torch_threads)
    t0 = time.perf_counter()
    ray.init(num_cpus=args.num_cpus, include_dashboard=False,
             object_store_memory=args.object_store_mb and args.object_store_mb * 2 ** 20)
    rules = {"hands_per_game": args.hands_per_game}
    env_config = dict(rules, illegal="raise") if args.illegal_raises else rules
    config = ppo_config(env_config, num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                        hidden=args.hidden, train_batch_size=args.batch, minibatch_size=args.minibatch,
                        num_epochs=args.epochs, seed=args.seed)
    if args.illegal_raises:
        config = config.environment(disable_env_checking=True)
    algo = config.build_algo()
    t_build = time.perf_counter() - t0
    print(f"load average {os.getloadavg()[0]:.2f}; ray.init + build {t_build:.1f} s; "
          f"{args.env_runners} env runners x {args.envs_per_runner} games, batch {args.batch}")
    print(f"{'iter':>4} {'seconds':>8} {'env steps':>10} {'steps/s':>8} {'games':>6} {'game len':>9} "
          f"{'loss':>8} {'entropy':>8}")
    times, sampled, first = [], 0, None
    for i in range(args.iterations):
        t = time.perf_counter()
        result = algo.train()
        dt = time.perf_counter() - t
        times.append(dt)
        runners = result.get("env_runners", {})
        learner = result.get("learners", {}).get(SHARED, {})
        steps = int(runners.get("num_env_steps_sampled", 0))
        sampled += steps
        if first is None:
            first = {k: np.asarray(v).copy() for k, v in algo.get_module(SHARED).get_state().items()}
        print(f"{i + 1:>4} {dt:>8.2f} {steps:>10,} {steps / dt:>8,.0f} {int(runners.get('num_episodes', 0)):>6} "
              f"{float(runners.get('episode_len_mean', float('nan'))):>9.1f} "
              f"{float(learner.get('total_loss', float('nan'))):>8.3f} "
              f"{float(learner.get('entropy', float('nan'))):>8.3f}", flush=True)
    module = algo.get_module(SHARED)
    changed = any(not np.array_equal(np.asarray(v), first[k]) for k, v in module.get_state().items()) \
        if first is not None else False
    summary = {"iterations": args.iterations, "build_seconds": round(t_build, 2),
               "iteration_seconds": [round(x, 2) for x in times], "env_steps_sampled": sampled,
               "weights_changed_after_first_iteration": bool(changed)}
    if args.eval_games:
        score = evaluate(module, args.eval_games, args.eval_opponents, rules, args.seed)
        summary["eval_mean_score"] = score
        print(f"learned policy vs {args.eval_opponents}: mean score {score:+.1f} per game over {args.eval_games} games")
    if args.checkpoint:
        path = algo.save_to_path(os.path.abspath(args.checkpoint))
        summary["checkpoint"] = str(path)
        print(f"checkpoint: {path}")
    algo.stop()
    ray.shutdown()
    if args.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
