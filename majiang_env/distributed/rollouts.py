"""Rollout streams and two example policies, in one process (no Ray needed).

A ``RolloutStream`` is one ``VectorGame`` stepped by a policy, reproducible
from ``(seed, stream index)``; ``majiang_env.distributed.RolloutCollector``
runs several of them on Ray workers and returns exactly what the same streams
return here.

    from majiang_env.distributed.rollouts import RolloutStream, PreferencePolicy, concat
    streams = [RolloutStream(k, 256, seed=0) for k in range(4)]
    traj = concat([s.collect(64, PreferencePolicy()) for s in streams])   # arrays (64, 1024, ...)

Reproducibility: stream k of a run from seed s is a ``VectorGame(B,
seed=env_seed)`` stepped by the policy with the numpy Generator
``default_rng(policy_seq)``, where ``(env_seed, policy_seq) = stream_seeds(s, k)``.
The trajectories depend on (s, k, B, rules, policy, weights) only, provided
the policy draws its randomness from the ``rng`` it is given.

A policy is ``policy(obs, mask, player, rng) -> (B,) actions``; one with
weights has ``set_weights(w)`` (what a learner pushes to the workers).
"""
from __future__ import annotations

import numpy as np

from ..engine.checks import as_int, as_seed

__all__ = ["RolloutStream", "masked_random", "PreferencePolicy", "stream_seeds", "concat"]

_BIG = 2 ** 63 - 1
_STEP_BYTES = 2048          # more than one step of one env takes in collect's arrays (about 1.1 kB)


def check_policy(policy):
    """``policy`` if it can be called as a policy, else ValueError (None: ``masked_random``)."""
    policy = masked_random if policy is None else policy
    if not callable(policy):
        raise ValueError(f"policy must be callable as policy(obs, mask, player, rng), got {policy!r}")
    return policy


def check_steps(num_steps, envs):
    """``num_steps`` for ``collect``: an int >= 1 whose arrays numpy can describe."""
    T = as_int("num_steps", num_steps, 1, _BIG)
    if T * envs * _STEP_BYTES > _BIG:
        raise ValueError(f"num_steps={T} with {envs} envs per stream asks for more than 2**63 bytes of "
                         f"trajectory per stream; collect fewer steps per call")
    return T


def masked_random(obs, mask, player, rng):
    """Default policy: uniform among the legal ids of each row, from ``rng``."""
    return np.where(mask != 0, rng.random(mask.shape), -1.0).argmax(axis=1)


class PreferencePolicy:
    """A policy with weights, as an example of what a learner pushes: one logit
    per action id; each row samples a legal action with probability
    proportional to ``exp(logit)`` (Gumbel-max, from ``rng``).
    ``set_weights(w)`` takes a float array of shape (156,)."""

    def __init__(self, logits=None):
        self.logits = np.zeros(156)
        if logits is not None:
            self.set_weights(logits)

    def set_weights(self, logits):
        try:
            w = np.asarray(logits)
        except Exception:  # noqa: BLE001 - ragged nesting and the like
            w = np.asarray(None, object)
        if w.dtype.kind not in "iuf" or w.shape != (156,) or not np.isfinite(w).all():
            raise ValueError(f"weights must be 156 finite real logits (shape (156,)), got "
                             f"{type(logits).__name__} of dtype {w.dtype} and shape {w.shape}")
        self.logits = w.astype(np.float64)

    def __call__(self, obs, mask, player, rng):
        keys = self.logits - np.log(-np.log(rng.random(mask.shape)))
        return np.where(mask != 0, keys, -np.inf).argmax(axis=1)


def stream_seeds(seed: int, stream: int):
    """``(env_seed, policy_seed_sequence)`` of stream ``stream`` of a run from ``seed``."""
    seed = as_seed(seed)
    stream = as_int("stream", stream, 0, _BIG)
    env_seed = int(np.random.SeedSequence(seed, spawn_key=(stream, 0)).generate_state(1, np.uint64)[0])
    return env_seed, np.random.SeedSequence(seed, spawn_key=(stream, 1))


class RolloutStream:
    """Stream ``index`` of a rollout run: one ``VectorGame`` of ``num_envs`` games
    stepped by a policy. ``collect(T, policy)`` returns the next T steps:

        obs (T, B, 436) int16, mask (T, B, 156) int8, player (T, B): before step t
        actions (T, B) int64; rewards (T, B, 4), done (T, B): returned by step t
        game (T, B): the game index being played at step t
        last_obs, last_mask, last_player: after the last step (for bootstrapping)

    Same-step autoreset as ``VectorGame``: after ``done[t, i]``, ``obs[t + 1, i]``
    is the first decision of the next game. ``get_state()`` / ``set_state(s)``
    checkpoint the stream (about 13 kB per game)."""

    def __init__(self, index, num_envs, seed=0, rules=None):
        from ..engine.vector import VectorGame
        self.index = as_int("stream index", index, 0, _BIG)
        env_seed, policy_seq = stream_seeds(seed, self.index)
        self.vg = VectorGame(num_envs, rules=rules, seed=env_seed)
        self.rng = np.random.default_rng(policy_seq)
        self.obs, self.mask, self.player = self.vg.reset()

    def collect(self, num_steps, policy=masked_random):
        vg, B = self.vg, self.vg.num_envs
        T = check_steps(num_steps, B)
        policy = check_policy(policy)
        obs, mask, player = self.obs, self.mask, self.player
        out = {"obs": np.empty((T,) + obs.shape, obs.dtype), "mask": np.empty((T,) + mask.shape, mask.dtype),
               "player": np.empty((T, B), player.dtype), "actions": np.empty((T, B), np.int64),
               "rewards": None, "done": np.empty((T, B), np.bool_), "game": np.empty((T, B), np.int64)}
        for t in range(T):
            out["obs"][t], out["mask"][t], out["player"][t] = obs, mask, player
            out["game"][t] = vg.game_index
            a = np.asarray(policy(obs, mask, player, self.rng))
            out["actions"][t] = a
            obs, mask, player, rewards, done = vg.step(a)
            if out["rewards"] is None:
                out["rewards"] = np.empty((T,) + rewards.shape, rewards.dtype)
            out["rewards"][t], out["done"][t] = rewards, done
        self.obs, self.mask, self.player = obs, mask, player
        out["last_obs"], out["last_mask"], out["last_player"] = obs.copy(), mask.copy(), player.copy()
        return out

    # A checkpoint is every per-game array of the VectorGame (its writeable
    # ndarray attributes with num_envs rows: state rows, buffers, game indices)
    # plus the policy generator; tables shared by all games stay out of it, and
    # so do the read-only views of those buffers that the VectorGame hands out.
    def get_state(self):
        B = self.vg.num_envs
        arrays = {k: v.copy() for k, v in vars(self.vg).items()
                  if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == B and v.flags.writeable}
        return {"vg": arrays, "rng": self.rng.bit_generator.state,
                "last": (self.obs.copy(), self.mask.copy(), self.player.copy())}

    def set_state(self, state):
        for k, v in state["vg"].items():
            have = getattr(self.vg, k, None)
            if not isinstance(have, np.ndarray) or have.shape != v.shape or have.dtype != v.dtype:
                raise RuntimeError(f"stream {self.index}: saved VectorGame.{k} is {v.dtype}{v.shape}, this "
                                   f"process has {getattr(have, 'dtype', None)}{getattr(have, 'shape', None)}: "
                                   f"it runs a different majiang_env version than the one that saved it")
            have[...] = v
        self.rng.bit_generator.state = state["rng"]
        self.obs, self.mask, self.player = (x.copy() for x in state["last"])


def concat(parts):
    """The ``collect`` outputs of several streams (same T) as one batch, in the
    given order: env i of part k is column ``k * B + i``. A ``seconds`` entry,
    if the parts have one, becomes a list."""
    out = {}
    for key in parts[0]:
        if key == "seconds":
            out[key] = [p[key] for p in parts]
        else:
            out[key] = np.concatenate([p[key] for p in parts], axis=0 if key.startswith("last_") else 1)
    return out
