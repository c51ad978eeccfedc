"""RLlib face of the game: a ``MultiAgentEnv`` with masked observations, and a shared-policy PPO config.

```python
import ray
from majiang_env.integrations.rllib import ppo_config

ray.init()
algo = ppo_config(num_env_runners=2).build_algo()
for i in range(100):
    result = algo.train()
```

RLlib's new API stack (RLModule, EnvRunner, Learner); needs the ``rllib`` extra
(``pip install 'majiang_env[rllib]'``); importing this module without RLlib
raises ``ImportError``. ``examples/rllib_ppo.py`` runs the example from the
command line.

``MajiangMultiAgentEnv(config)`` — one episode is one game (``hands_per_game``
hands) played by the four agents of the AEC env:

| | |
|---|---|
| agents | ``player_0`` ... ``player_3`` (seat i, as in ``majiang_env.env()``) |
| observation | ``Dict({"observations": Box(float32, (FEAT_SIZE,)), "action_mask": Box(0, 1, (156,), float32)})``: ``Game.observe(seat, obs_type="features")`` and the legal actions, the form RLlib's action-masking module reads |
| action | ``Discrete(156)``, the ids of docs/api.md |
| turn order | each ``step`` returns the observation of the one agent to act next (often the same agent again: take, then discard; the 変 decisions); forced decisions are played by the engine |
| reward | ``reward_scale`` x the points the agent gained since its previous observation (hands that closed in between, whoever acted), paid with its next observation, as the AEC env's cumulative rewards; over a game they add up to the agent's final score |
| end | when the game is over every agent gets a last observation (all-zero mask), its outstanding reward, ``terminateds[agent] = True`` and ``terminateds["__all__"] = True``; ``infos[agent]["score"]`` is its final score. Never truncated |
| seeds | ``reset(seed=s)`` starts run ``s``: the env's game j is ``Game(seed=game_seed(s, j))`` (``majiang_env.engine.vector.game_seed``), j = 0, 1, ... counting the resets; ``reset()`` plays the run's next game. RLlib seeds each env runner's env from ``config.debugging(seed=...)`` |
| config | ``env_config`` keys: ``obs_type`` (``"features"``, default; ``"compact"`` gives the int16 view as float32), ``reward_scale`` (default 0.01: points are tens to hundreds), ``rules`` (a ``RuleConfig`` or dict) and any ``RuleConfig`` field override (``hands_per_game=1``) |

An action the mask forbids (the masking module never samples one; RLlib's env
check at start-up steps an unmasked random action): with ``illegal="terminate"``
(``env_config`` key, default, as ``majiang_env.env()``) the game ends, the
offender gets ``reward_scale x illegal_reward`` (default -1000 points) and
``infos[agent]["illegal"] = True``, the others their outstanding rewards; with
``illegal="raise"`` the engine's ``IllegalActionError`` propagates.

Bad calls raise and change nothing: ``reset(seed=...)`` takes None or an int in
0..2**64-1 (numpy integers too; not a bool, float or str: ``ValueError``);
``step`` takes a dict ``{agent: action}`` with the acting agent's action
(anything else: ``ActionSpaceError``, a ``ValueError``), an action being an int,
a numpy integer or a 0-d integer array (another type: ``ActionSpaceError``,
whatever ``illegal`` is); ``step`` before ``reset`` or after the game's end:
``ResetNeededError``. ``close()`` has nothing to release; the env stays usable.

``MaskedPPOTorchRLModule`` is RLlib's default PPO module (``DefaultPPOTorchRLModule``,
its catalog and ``model_config``) with action masking, as RLlib's example
``ray.rllib.examples.rl_modules.classes.action_masking_rlm`` does it (that one
builds on a deprecated base class): the networks see ``"observations"``; the
logits of illegal actions are set to the float minimum (probability 0, no NaN
in rows without a legal action) in exploration, inference and training alike.

``ppo_config(...)`` builds the ``PPOConfig``: one module ``"shared"`` that all
four seats map to (``shared_policy``), so one network learns from every seat's
decisions in self-play.

``logits_fn(module)`` turns the trained module (``algo.get_module("shared")``)
into ``fn(obs_batch, mask_batch) -> logits`` (numpy, (B, 156)) for the batched
engine: ``SeatVectorEnv.sample_actions(fn(obs, envs.action_masks()))`` plays
it as the learner, ``lambda o, m: fn(o, m).argmax(1)`` as an opponent.
"""  # noqa: E501 (the env card's table rows)
from __future__ import annotations

import numpy as np

try:
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(f"majiang_env.integrations.rllib needs RLlib and torch: "
                      f"pip install 'majiang_env[rllib,train]' ({e})") from e

from ..engine.checks import ActionSpaceError, ResetNeededError, action_id, as_finite, as_int, show
from ..engine.encodings import check_obs_type, observation_space
from ..engine.game import Game
from ..engine.rules import NUM_ACTIONS, make_rules
from ..engine.vector import game_seed

__all__ = ["MajiangMultiAgentEnv", "MaskedPPOTorchRLModule", "ppo_config", "shared_policy", "logits_fn",
           "AGENTS", "SHARED"]

AGENTS = [f"player_{i}" for i in range(4)]
SHARED = "shared"


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module over ``obs["observations"]``, with the logits of the
    actions that ``obs["action_mask"]`` marks 0 set to the float minimum."""

    def __init__(self, *, observation_space=None, action_space=None, **kwargs):
        if not isinstance(observation_space, gym.spaces.Dict) \
                or not {"observations", "action_mask"} <= set(observation_space.spaces):
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with keys "
                             f"'observations' and 'action_mask', got {show(observation_space)}")
        self._masked_space = observation_space
        # the networks are built for the inner space ...
        super().__init__(observation_space=observation_space["observations"], action_space=action_space,
                         **kwargs)

    def setup(self):
        super().setup()
        self.observation_space = self._masked_space   # ... the module declares what the env gives

    @staticmethod
    def _split(batch):
        """(batch with the plain observations, mask) of a batch whose observations are the dict."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            raise ValueError("MaskedPPOTorchRLModule expects observations {'observations', 'action_mask'}")
        return dict(batch, **{Columns.OBS: obs["observations"]}), obs["action_mask"]

    @staticmethod
    def _masked(out, mask):
        logits = out[Columns.ACTION_DIST_INPUTS]
        out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask <= 0, FLOAT_MIN)
        return out

    def _forward(self, batch, **kwargs):
        batch, mask = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        batch, mask = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if embeddings is None:
            batch, _ = self._split(batch)
        return super().compute_values(batch, embeddings)


def shared_policy(agent_id, episode=None, **kwargs) -> str:
    """RLlib ``policy_mapping_fn``: every seat plays with the one module ``SHARED``."""
    return SHARED


class MajiangMultiAgentEnv(MultiAgentEnv):
    """One game of 馬将 for RLlib, four agents with masked observations (module docstring)."""

    def __init__(self, config=None):
        super().__init__()
        cfg = dict(config or {})
        self.obs_type = check_obs_type(cfg.pop("obs_type", "features"))
        self.reward_scale = as_finite("reward_scale", cfg.pop("reward_scale", 0.01))
        self.illegal = cfg.pop("illegal", "terminate")
        if self.illegal not in ("terminate", "raise"):
            raise ValueError(f"illegal must be 'terminate' or 'raise', got {show(self.illegal)}")
        self.illegal_reward = as_finite("illegal_reward", cfg.pop("illegal_reward", -1000.0))
        self.rules = make_rules(cfg.pop("rules", None), **cfg)
        inner = observation_space(self.obs_type)
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(inner.low.astype(np.float32), inner.high.astype(np.float32),
                                           inner.shape, np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        })
        self.possible_agents = list(AGENTS)
        self.agents = []
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: gym.spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self.game = None
        self._run_seed = None
        self._games = 0
        self._pending = np.zeros(4)

    def _obs(self, seat: int) -> dict:
        g = self.game
        live = not g.done and g.current_player == seat
        mask = g.legal_mask().astype(np.float32) if live else np.zeros(NUM_ACTIONS, np.float32)
        return {"observations": g.observe(seat, self.obs_type).astype(np.float32, copy=False),
                "action_mask": mask}

    def _pay(self, seat: int) -> float:
        r, self._pending[seat] = float(self._pending[seat]), 0.0
        return r

    def reset(self, *, seed=None, options=None):
        if options is not None and (not isinstance(options, dict) or options):
            raise ValueError(f"options: this env takes none, got {show(options)}")
        if seed is not None:
            self._run_seed, self._games = as_int("seed", seed, 0, 2 ** 64 - 1), 0
        elif self._run_seed is None:
            self._run_seed, self._games = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1), 0
        self.game = Game(self.rules, seed=game_seed(self._run_seed, self._games))
        self._games += 1
        self._pending[:] = 0.0
        self.agents = list(AGENTS)
        seat = self.game.current_player
        return {AGENTS[seat]: self._obs(seat)}, {AGENTS[seat]: {}}

    def step(self, action_dict):
        g = self.game
        if g is None:
            raise ResetNeededError("call reset() before step(), and after the game ended")
        agent = AGENTS[g.current_player]
        if not isinstance(action_dict, dict):
            raise ActionSpaceError(f"step takes a dict {{agent: action}}, got {show(action_dict)} "
                                   f"({type(action_dict).__name__})")
        if agent not in action_dict:
            raise ActionSpaceError(f"{agent} is to act, got actions for "
                                   f"{show(sorted(map(show, action_dict)), 200)}")
        action = action_dict[agent]
        action_id(action, lambda: f"{agent} is to act; legal ids {g.legal_actions()}")   # not an integer: raise
        if self.illegal == "terminate" and not g.is_legal(action):
            self._pending[g.current_player] += self.illegal_reward * self.reward_scale
            return self._end(illegal=agent)
        self._pending += g.step(action) * self.reward_scale
        if g.done:
            return self._end()
        seat = g.current_player
        nxt = AGENTS[seat]
        return ({nxt: self._obs(seat)}, {nxt: self._pay(seat)}, {"__all__": False}, {"__all__": False},
                {nxt: {}})

    def _end(self, illegal=None):
        """The last step: every agent's last observation, outstanding reward, terminated."""
        scores = self.game.scores
        obs = {a: self._obs(s) for s, a in enumerate(AGENTS)}
        if illegal is not None:
            for o in obs.values():
                o["action_mask"][:] = 0.0
        rewards = {a: self._pay(s) for s, a in enumerate(AGENTS)}
        terminateds = dict.fromkeys(AGENTS, True)
        terminateds["__all__"] = True
        infos = {a: {"score": int(scores[s])} for s, a in enumerate(AGENTS)}
        if illegal is not None:
            infos[illegal]["illegal"] = True
        self.game = None
        return obs, rewards, terminateds, dict.fromkeys(AGENTS + ["__all__"], False), infos


def ppo_config(env_config=None, *, num_env_runners: int = 0, num_envs_per_env_runner: int = 1,
               hidden=(256, 256), train_batch_size: int = 4000, minibatch_size: int = 500,
               num_epochs: int = 4, lr: float = 3e-4, seed=None) -> PPOConfig:
    """A ``PPOConfig`` for self-play on ``MajiangMultiAgentEnv``: one masked module
    ``"shared"`` for the four seats. Change anything further on the returned config."""
    config = (
        PPOConfig()
        .environment(MajiangMultiAgentEnv, env_config=dict(env_config or {}))
        .multi_agent(policies={SHARED}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            SHARED: RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                                 model_config={"fcnet_hiddens": list(hidden), "fcnet_activation": "relu",
                                               "vf_share_layers": False}),
        }))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def logits_fn(module):
    """``fn(obs, mask) -> logits``: a masked PPO module's action logits (float32 (B, 156),
    illegal actions at the float minimum) for a batch of observations and masks."""
    import torch

    def fn(obs, mask):
        batch = {Columns.OBS: {"observations": torch.as_tensor(np.asarray(obs, np.float32)),
                               "action_mask": torch.as_tensor(np.asarray(mask, np.float32))}}
        with torch.no_grad():
            out = module.forward_inference(batch)
        return out[Columns.ACTION_DIST_INPUTS].numpy()
    return fn
