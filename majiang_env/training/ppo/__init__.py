"""Masked PPO for 馬将 on the in-kernel features — compact, CPU, torch.

Needs the ``train`` extra (``pip install torch==2.13.0 && pip install -e ".[train]"``).

    python -m majiang_env.training.ppo --quick                       # smoke run: ~15 s of training
    python -m majiang_env.training.ppo                               # 8 min of self-play, then evaluations
    python -m majiang_env.training.ppo --opponents greedy --imitate 3 --minutes 30  # clone, then PPO
    python -m majiang_env.training.ppo --minutes 10 --out ppo.pt --json result.json

How it trains
-------------
* Observations are the kernel's float ``features`` encoding
  (``majiang_env.engine.encodings``; it carries the per-action deficiency block the
  greedy policy decides by), computed inside the compiled step. Actions are
  sampled **in the kernel** from the network's logits (``sample_actions``:
  the softmax over the legal actions, on each game's own stream), so Python
  pays neither for masking nor for sampling.
* ``opponents="self"`` (default): ``VectorGame(num_envs, obs_type="features")``,
  all four seats played by the current policy, every decision of every seat a
  sample. ``opponents="greedy"`` (or any in-kernel agent name, or a list of
  three): ``SeatVectorEnv`` — the policy in one seat (drawn per game), the
  other three played inside the kernel; only the learner's decisions are samples.
* Policy: an MLP actor-critic; logits of illegal actions are set to -1e9 before
  the softmax, so the policy scores and evaluates only legal actions.
* Critic: by default the network's own value head, from the same features.
  ``PPOConfig(critic="state")`` trains a separate :class:`StateCritic` on the
  full-information state instead (every seat's cards and the squares, seats
  rotated to the deciding seat): a privileged critic, as in asymmetric
  actor-critic. It exists only in training: the policy that is saved, exported
  and evaluated reads the observation alone.
* Credit: each seat's decisions in one hand are one episode for that seat
  (GAE over that seat's own decisions). A hand's point change goes to each
  seat's last decision in that hand. Hands still running at the end of a
  rollout are carried into the next one (with the log-probabilities and values
  of the policy that acted), so no episode is cut.
* Reward shaping (self-play only, on by default): ``win_bonus`` on a winning
  decision (模, 栄) plus ``point_scale`` × the hand's point change.
  Against fixed opponents the reward is ``point_scale`` × points only.

Optional warm start (``--imitate MINUTES``, :func:`imitate`): behaviour cloning
of an agent (``"greedy"`` by default, decided in the kernel, so its labels cost
almost nothing) while it plays all four seats, then PPO from that network.

One update of :func:`train` is :func:`collect_rollout` (into a
:class:`Rollouts` buffer), :func:`training_batch` (the finished hands, GAE by
:func:`compute_advantages`; the rest is carried) and :func:`ppo_update`.

Evaluation: :func:`evaluate` puts the policy in one seat of the duplicate-deal
arena (``majiang_env.arena``) against three baseline seats, every deal in its
4 rotations, and reports points per hand with a 95% interval over deals; the
learning-curve checks of :func:`train` (``eval_every``) are the same arena runs.

Modules: ``config`` (:class:`PPOConfig`, threads, precision, allocator),
``network`` (:class:`PolicyNet`, :class:`PPOAgent`, checkpoints), ``rollout``
(games, the transition buffer, imitation data), ``update`` (GAE, the PPO step,
:class:`Trainer`, :func:`train`, :func:`imitate`), ``evaluation`` and ``cli``
(``python -m majiang_env.training.ppo``).
"""
from .cli import main
from .config import PPOConfig, keep_freed_memory, matmul_dtype
from .evaluation import evaluate
from .network import N_FEATURES, PolicyNet, PPOAgent, StateCritic, export_numpy, load, save
from .rollout import WIN_ACTIONS, Rollouts, collect_rollout
from .update import Trainer, compute_advantages, imitate, ppo_update, train, training_batch

__all__ = ["N_FEATURES", "PolicyNet", "PPOAgent", "StateCritic", "PPOConfig", "Trainer", "train", "imitate",
           "evaluate", "save", "load", "export_numpy", "WIN_ACTIONS", "main",
           "Rollouts", "collect_rollout", "compute_advantages", "training_batch", "ppo_update",
           "keep_freed_memory", "matmul_dtype"]
