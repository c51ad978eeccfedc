"""Every agent of majiang_env, by one name for every face.

The registry (``majiang_env.engine.registry``, re-exported here) resolves an
agent spec for every face that takes one: ``SeatVectorEnv(opponents=...)``,
``SingleAgentEnv(opponents=...)``, the SB3 and RLlib adapters,
``selfplay(agents=...)``, ``VectorGame.policy_actions``, the arena and the
ladder, ``python -m majiang_env play --opponents`` and ``arena``.

==============  ==========  ==============================================================
name            runs        what it is
==============  ==========  ==============================================================
``random``      kernel      uniform among the legal actions (:class:`RandomAgent`)
``greedy``      kernel      wins when it can, else keeps the lowest deficiency
                            (:class:`GreedyAgent`, ``engine/kernel/greedy.py``)
``search``      kernel      determinized greedy rollouts (``engine/kernel/search.py``);
                            kernel only
``pretrained``  Python      the shipped learned policy (:class:`PretrainedAgent`, numpy)
``ppo``         Python      a torch checkpoint of ``majiang_env.training.ppo`` (``path=``)
``ismcts``      Python      OpenSpiel's IS-MCTS over sampled worlds (:class:`ISMCTSAgent`)
==============  ==========  ==============================================================

A spec is a name, text with parameters (``"search:samples=32"``,
:func:`parse_agent` / :func:`format_agent`), a pair ``("search", {"samples":
32})``, a weights file (``"run/pretrained.npz"``, ``"run/best.pt"``), an entry
point ``"module:factory"``, an agent object or a class. :func:`make_agent`
builds the Python form of any spec; :func:`register_agent` adds a name for every
face at once. The batched protocol is ``agent.act_batch(obs, mask) -> actions``
(:class:`Batched` wraps a function ``fn(obs, mask)``); planners implement
``agent.act_world(world, seat)``. docs/api.md, "Agents", is the full contract.

Training (needs torch): ``majiang_env.training.ppo`` (masked PPO) and
``majiang_env.training.recipe`` (the recipe of the shipped policy).
"""
from ..engine.registry import (
    AgentError,
    Batched,
    agent_info,
    agent_names,
    format_agent,
    kernel_agent_names,
    make_agent,
    parse_agent,
    register_agent,
    resolve,
    unregister_agent,
)
from .baselines import GreedyAgent, RandomAgent, check_observation, game_obs, split_pass  # noqa: F401
from .pretrained import PretrainedAgent

__all__ = ["RandomAgent", "GreedyAgent", "PretrainedAgent", "ISMCTSAgent", "game_obs", "search",
           "AgentError", "Batched", "agent_info", "agent_names", "format_agent", "kernel_agent_names",
           "make_agent", "parse_agent", "register_agent", "resolve", "unregister_agent"]
_OPENSPIEL = ("ISMCTSAgent", "GreedyRolloutEvaluator")   # need OpenSpiel: imported on first use


def __getattr__(name):
    if name in _OPENSPIEL:
        from . import ismcts
        return getattr(ismcts, name)
    raise AttributeError(f"module 'majiang_env.agents' has no attribute {name!r}")


def search(**params) -> str:
    """The text spec of the in-kernel search agent with ``params``:
    ``search(samples=32, budget=None)`` -> ``"search:samples=32,budget=none"``
    (:func:`format_agent` of ``"search"``; parameters not given take the kernel's
    defaults). ``samples`` (int >= 1, determinizations per decision), ``budget``
    (int >= 1 rollout decisions per decision, None: no cap), ``search_wins``
    (bool), ``confidence`` (z of the lower confidence bound a candidate must
    clear to replace greedy's action), ``width`` (int >= 0 deficiency slack of the
    candidates, None: every legal action), ``opponents`` (``"uniform"`` or
    ``"greedy"``: the model of the other seats' hidden hands). ValueError for an
    unknown parameter or a value out of range."""
    return format_agent("search", params)
