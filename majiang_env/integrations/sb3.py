"""Stable-Baselines3 face of the batched engine: ``SB3VecEnv``, an SB3 ``VecEnv`` over ``SeatVectorEnv``.

```python
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor
from majiang_env.integrations.sb3 import SB3VecEnv

venv = VecMonitor(SB3VecEnv(64, opponents="greedy", seat="random"))   # obs_type="float" by default
model = MaskablePPO("MlpPolicy", venv, seed=0).learn(100_000)
```

The B games of one ``majiang_env.envs.seat_vector.SeatVectorEnv`` are stepped in one
compiled call; sb3-contrib's ``MaskablePPO`` reads the legal actions through
``env_method("action_masks")`` as with any VecEnv. Needs ``stable-baselines3``
(the ``train`` extra); importing this module without it raises ``ImportError``.

| SB3 | here |
|---|---|
| ``SB3VecEnv(num_envs, **kwargs)`` | builds ``SeatVectorEnv(num_envs, **kwargs)`` (``opponents``, ``seat``, ``obs_type``, ``reward_scale``, rule overrides), with ``obs_type="float"`` unless given: the observation an ``MlpPolicy`` reads well (docs/observation.md); ``SB3VecEnv(vector_env)`` wraps one already made (also ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) |
| ``reset()`` | observations (B, ...); ``reset_infos[i]`` holds ``{"seat": learner's seat}`` |
| ``step(actions)`` | ``actions``: integers of shape (B,) (a list, or any integer array of that shape; checked in ``step_async``, ``IllegalActionError`` and nothing changes otherwise); ``obs, rewards (float32), dones, infos``; a finished slot already holds its next game (SB3's autoreset), ``infos[i]["terminal_observation"]`` is the learner's last observation of the finished game, ``infos[i]["TimeLimit.truncated"]`` False (games end, they are never cut), ``infos[i]["scores"]`` the final scores (the learner first); ``reset_infos[i]`` the new game's info |
| ``seed(s)`` | ``s``: None or an int in 0..2**64-1 (``ValueError`` otherwise); the run seed of the next ``reset()``: slot i plays games i, i + B, ... of run ``s`` (``SeatVectorEnv`` seeds), so the whole run is reproducible; returns ``[s] * B`` |
| ``env_method("action_masks")`` | row i of ``SeatVectorEnv.action_masks()`` for each index (``get_attr("action_masks")``: the bound method); ``get_attr("learner_seat")``: row i per index |
| other ``get_attr`` / ``env_method`` | the one engine's attribute or method (found through gymnasium vector wrappers), the same value for every index; ``set_attr`` and such ``env_method`` calls act on all slots at once, so ``indices`` must then cover every slot. ``set_attr`` sets only what ``SeatVectorEnv`` lets change (``reward_scale``, ``copy``, ``num_threads``, checked there); any other name raises ``ValueError`` |
| ``env_is_wrapped(cls)`` | False for every slot: there are no per-slot ``gymnasium.Wrapper``s; wrap the VecEnv (``VecMonitor``, ``VecNormalize``) instead |
| ``set_options`` | ``SeatVectorEnv`` takes no reset options: non-empty ones raise at the next reset |

Episode statistics (``ep_rew_mean`` in SB3's logs) come from ``VecMonitor``, as
for any VecEnv that is not a ``DummyVecEnv`` of ``Monitor``-wrapped envs.
``close()`` closes the vector env, which has nothing to release: the VecEnv stays
usable after it (``reset()`` and ``step()`` work as before).
"""  # noqa: E501 (the env card's table rows)
from __future__ import annotations

from typing import Any

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("majiang_env.integrations.sb3 needs stable-baselines3 (and sb3-contrib for MaskablePPO): "
                      "pip install 'majiang_env[train]'") from e

from gymnasium.vector import AutoresetMode

from ..engine.checks import IllegalActionError, as_int, int_array, show

__all__ = ["SB3VecEnv", "PER_SLOT"]

# names whose value is an array with one row per slot: get_attr / env_method return rows
PER_SLOT = ("action_masks", "learner_seat")


def unbatch_info(info: dict, n: int) -> list:
    """Gymnasium's vector ``info`` (arrays with ``_key`` masks, nested dicts) as ``n`` per-env dicts."""
    out = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_"):
            continue
        present = info.get("_" + key)
        rows = range(n) if present is None else np.flatnonzero(present)
        if isinstance(value, dict):
            sub = unbatch_info(value, n)
            for i in rows:
                out[i][key] = sub[i]
        else:
            for i in rows:
                out[i][key] = value[i]
    return out


class SB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a same-step-autoreset gymnasium vector env, by default a
    ``SeatVectorEnv`` (module docstring)."""

    def __init__(self, env=16, **kwargs):
        import gymnasium as gym
        if isinstance(env, gym.vector.VectorEnv):
            if kwargs:
                raise ValueError(f"keyword arguments are for building a SeatVectorEnv, not for wrapping "
                                 f"one: {sorted(kwargs)}")
            venv = env
        else:
            from ..envs.seat_vector import SeatVectorEnv
            venv = SeatVectorEnv(env, **{"obs_type": "float", **kwargs})   # an MLP's observation by default
        mode = venv.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"SB3VecEnv needs a vector env with autoreset_mode SAME_STEP (SB3's own "
                             f"convention), got {show(mode)}")
        self.venv = venv
        self._actions = None
        self._seed = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # ---- stepping ------------------------------------------------------------
    def reset(self):
        if any(self._options):
            opts = self._options[0]
            if any(o != opts for o in self._options):
                raise ValueError("SB3VecEnv runs one engine: reset options must be the same for every slot")
        else:
            opts = None
        obs, info = self.venv.reset(seed=self._seed, options=opts)
        self._seed = None
        self._reset_options()
        self.reset_infos = unbatch_info(info, self.num_envs)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Take ``actions`` for the next ``step_wait``: integers of shape (B,), else
        ``IllegalActionError`` (and nothing is taken)."""
        a = int_array("actions", actions, IllegalActionError)
        if a.shape != (self.num_envs,):
            raise IllegalActionError(f"actions must be an integer array of shape ({self.num_envs},), "
                                     f"got {a.dtype} {a.shape}")
        self._actions = a

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, term, trunc, info = self.venv.step(actions)
        dones = np.logical_or(term, trunc)
        final_obs = info.pop("final_obs", None)
        info.pop("_final_obs", None)
        final_info = info.pop("final_info", None)
        info.pop("_final_info", None)
        infos = unbatch_info(info, self.num_envs)
        if dones.any():
            finals = unbatch_info(final_info, self.num_envs) if final_info is not None else None
            for i in np.flatnonzero(dones):
                self.reset_infos[i] = dict(infos[i])
                if finals is not None:
                    infos[i].update(finals[i])
                infos[i]["terminal_observation"] = final_obs[i]
                infos[i]["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
        return obs, np.asarray(rewards, np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def seed(self, seed: int | None = None) -> list:
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seed = as_int("seed", seed, 0, 2 ** 64 - 1)
        return [self._seed] * self.num_envs

    def action_masks(self) -> np.ndarray:
        """bool (B, 156): the learner's legal actions in every slot (one array, not a list)."""
        return self._lookup("action_masks")()

    # ---- attributes and methods ------------------------------------------------
    def _lookup(self, name: str):
        """``name`` on the vector env or the first gymnasium vector wrapper below it that has it."""
        if not isinstance(name, str):
            raise ValueError(f"an attribute or method name must be a str, got {show(name)}")
        e = self.venv
        while e is not None:
            try:
                return getattr(e, name)
            except AttributeError:
                e = getattr(e, "env", None)
        raise AttributeError(f"{type(self.venv.unwrapped).__name__} has no attribute {show(name)}")

    def _all(self, indices, what: str) -> list:
        idx = list(self._get_indices(indices))
        if sorted(idx) != list(range(self.num_envs)):
            raise ValueError(f"{what} acts on the one engine of all {self.num_envs} slots; "
                             f"indices must cover every slot, got {idx}")
        return idx

    def get_attr(self, attr_name: str, indices=None) -> list:
        idx = list(self._get_indices(indices))
        value = self._lookup(attr_name)
        if attr_name in PER_SLOT and not callable(value):
            return [value[i] for i in idx]
        return [value for _ in idx]   # a method: the bound method, as DummyVecEnv gives

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set ``attr_name`` on the one engine (``indices`` must cover every slot): a
        name ``SeatVectorEnv`` lets change (``SETTABLE``), checked by it; ValueError
        for any other name and any bad value, and nothing changes."""
        self._all(indices, f"set_attr({show(attr_name)})")
        settable = getattr(type(self.venv.unwrapped), "SETTABLE", None)
        if not isinstance(attr_name, str) or attr_name.startswith("_") \
                or (settable is not None and attr_name not in settable):
            raise ValueError(f"set_attr({show(attr_name)}): this attribute cannot be set on a made env; "
                             f"the ones that can are {list(settable or ())} (make a new env for the others)")
        e = self.venv
        while not hasattr(e, attr_name) and getattr(e, "env", None) is not None:
            e = e.env
        target = e if hasattr(e, attr_name) else self.venv
        setattr(target, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        method = self._lookup(method_name)
        if method_name in PER_SLOT:
            rows = method(*method_args, **method_kwargs)
            return [rows[i] for i in self._get_indices(indices)]
        idx = self._all(indices, f"env_method({show(method_name)})")
        result = method(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        raise NotImplementedError("SB3VecEnv does not render")

    def __repr__(self):
        return f"SB3VecEnv({self.venv.unwrapped!r})"
