"""sb3-contrib's MaskablePPO on the batched env, with settings that print progress.

    python examples/sb3_maskable_ppo.py                      # about 2 minutes on 2 cores
    python examples/sb3_maskable_ppo.py --timesteps 20000 --arena-deals 100

``SB3VecEnv(64, opponents="random", obs_type="float")`` is 64 games with one
learning seat each, stepped in one compiled call; ``--obs-type float`` (the
default) is the observation normalised for an MLP such as SB3's ``MlpPolicy``
(docs/observation.md); MaskablePPO reads the legal actions through
``action_masks()``. SB3's defaults (``n_steps=2048``, 10 epochs
at batch 64) make one rollout of 131,072 steps and then 20,480 gradient steps
before the first line is printed; with ``n_steps=64``, ``batch_size=256`` and 4
epochs each rollout is 4,096 steps and SB3 prints its table after every one
(``verbose=1``; ``VecMonitor`` adds the mean return per game, ``ep_rew_mean``,
in points/100).

The budget is ``--timesteps`` learner steps (200,000 by default), the same
work whatever the machine's load. Before the clock starts, a warm-up reset and
steps compile the env's numba kernels (or load them from numba's cache); the
compile seconds are printed and written apart (``compile_seconds``), and the
training time and steps/s count only ``model.learn``.

At the end the policy plays the duplicate-deal arena (``majiang_env.arena``)
in one seat against three ``--opponents`` seats, on deals it never trained on,
and prints its mean points per hand with a 95% interval over deals.
Needs the ``train`` extra.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

from majiang_env import arena
from majiang_env.engine.encodings import make_encoder
from majiang_env.integrations.sb3 import SB3VecEnv


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--timesteps", type=int, default=200_000, help="learner steps to train")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--n-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=4)
    p.add_argument("--opponents", choices=["random", "greedy"], default="random")
    p.add_argument("--obs-type", choices=["float", "features", "compact"], default="float")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument("--arena-deals", type=int, default=300, help="0: no arena")
    p.add_argument("--arena-seed", type=int, default=1_000_003, help="deals unseen in training")
    p.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    return p.parse_args(argv)


def arena_agent(model, obs_type):
    """The trained policy as a batched arena agent (compact observations in, encoded as in training)."""
    encoder = make_encoder(obs_type)

    def act(obs, mask):
        x = obs if encoder is None else encoder.batch(obs, mask)
        actions, _ = model.predict(x, action_masks=mask != 0, deterministic=True)
        return np.asarray(actions)

    return arena.Batched(act, name="maskable_ppo")


def warm_up(env, steps=4):
    """Reset and step ``env`` a few times on legal actions, so that numba compiles its kernels
    (or loads them from its cache) before any clock starts; MaskablePPO's ``learn`` resets it
    again (with the model's seed), so training is unchanged. Returns the seconds it took."""
    t = time.perf_counter()
    env.reset()
    for _ in range(steps):
        env.step(env.action_masks().argmax(axis=1))
    return time.perf_counter() - t


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    t = time.perf_counter()
    env = SB3VecEnv(args.num_envs, opponents=args.opponents, seat="random", obs_type=args.obs_type, reward_scale=0.01)
    compile_seconds = warm_up(env)
    print(f"compiled in {compile_seconds:.1f} s (numba kernels compiled or loaded from numba's cache; "
          f"env built in {time.perf_counter() - t - compile_seconds:.1f} s), before the training clock")
    venv = VecMonitor(env)
    model = MaskablePPO("MlpPolicy", venv, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.n_epochs, seed=args.seed, verbose=1)
    start = time.perf_counter()
    model.learn(args.timesteps)
    seconds = time.perf_counter() - start
    out = {"timesteps": args.timesteps, "compile_seconds": round(compile_seconds, 1),
           "train_seconds": round(seconds, 1), "steps_per_second": round(args.timesteps / seconds),
           "opponents": args.opponents, "obs_type": args.obs_type}
    print(f"trained {args.timesteps:,} steps in {seconds:.0f} s ({args.timesteps / seconds:,.0f} steps/s; "
          f"compile {compile_seconds:.1f} s before that)")
    if args.arena_deals:
        res = arena.run([arena_agent(model, args.obs_type), args.opponents, args.opponents, args.opponents],
                        deals=args.arena_deals, seed=args.arena_seed,
                        names=["maskable_ppo", args.opponents, args.opponents, args.opponents], baseline=False)
        fig = next(f for f in res.figures() if f["agent"] == "maskable_ppo")
        ci = fig["points_per_hand"]
        print(f"arena, {res.deals} deals x 4 seats against 3 {args.opponents}: "
              f"{ci['mean']:+.2f} [{ci['ci'][0]:+.2f}, {ci['ci'][1]:+.2f}] points per hand")
        out["arena"] = {"deals": res.deals, "points_per_hand": ci, "win_rate": fig["win_rate"]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
