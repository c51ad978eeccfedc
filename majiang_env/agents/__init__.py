"""Every agent of majiang_env, and the training recipes.

===================  =========================================  =======  =============================
agent                what it is                                 runs in  by name
===================  =========================================  =======  =============================
``RandomAgent``      uniform among the legal actions            numpy    ``"random"``
``GreedyAgent``      wins when it can, else keeps the lowest    kernel   ``"greedy"``
                     deficiency (``engine/kernel/greedy.py``)   (numba)
``search``           determinized rollouts that leave greedy's  kernel   ``"search"``; with parameters
                     action only on clear evidence              only     ``search(samples=32)`` is
                     (``engine/kernel/search.py``)                       ``"search:samples=32"``
``PretrainedAgent``  the shipped learned policy (trained by     numpy    ``"pretrained"``
                     ``majiang_env.training.recipe``)
``ppo.PPOAgent``     a network of ``majiang_env.training.ppo`` as an agent    torch    none: pass the object
``ISMCTSAgent``      OpenSpiel's IS-MCTS over sampled worlds    pyspiel  none: pass the object
                     (``agents/openspiel_agents.py``)
===================  =========================================  =======  =============================

Where a name works:

- **In-kernel** names (``"random"``, ``"greedy"``, ``"search"``) are played inside
  the compiled step: ``selfplay(agents=...)``, ``VectorGame.policy_actions``,
  ``SeatVectorEnv(opponents=...)`` and ``majiang_env.arena.run`` take the name, or
  the pair ``("search", {"samples": 32})`` for parameters; the text
  ``"search:samples=32"`` (``python benchmarks/arena.py --agents``,
  ``arena.load_agent``) is read by ``majiang_env.engine.vector.parse_agent`` into
  that pair. ``"random"`` and ``"greedy"`` in the kernel are the same policies as
  the classes here, on the kernel's random streams.
- **Python** names (``"random"``, ``"greedy"``, ``"pretrained"``;
  ``majiang_env.agents.POLICIES``): ``SingleAgentEnv(opponents=...)``,
  ``python -m majiang_env --agents`` and the play mode.

A Python agent is a callable ``agent(obs) -> action`` over the observation dict
``{"observation": int16[436], "action_mask": int8[156]}`` of the seat to act and
returns a legal action id; with a bare ``Game``, build the dict with
:func:`game_obs`. ``RandomAgent`` and ``GreedyAgent`` are
``majiang_env.agents``'s classes: the library resolves the names itself and
never imports this package.

Training (needs torch): ``majiang_env.training.ppo`` (masked PPO, ``python -m majiang_env.training.ppo``) and
``majiang_env.training.recipe`` (the recipe of the shipped policy). Agents are compared in
the duplicate-deal arena, ``majiang_env.arena``.
"""
from ..engine.vector import parse_agent
from .baselines import POLICIES, GreedyAgent, RandomAgent, check_observation, game_obs, make_policy, split_pass  # noqa: F401
from .pretrained import PretrainedAgent

__all__ = ["RandomAgent", "GreedyAgent", "PretrainedAgent", "game_obs", "search"]
_OPENSPIEL = ("ISMCTSAgent", "GreedyRolloutEvaluator")   # need OpenSpiel: imported on first use


def __getattr__(name):
    if name in _OPENSPIEL:
        from . import ismcts
        return getattr(ismcts, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def search(**params) -> str:
    """The name of the in-kernel search agent with ``params``:
    ``search(samples=32, budget=None)`` -> ``"search:samples=32,budget=none"``.

    Parameters not given take the kernel's defaults (``search()`` is
    ``"search"``): ``samples`` (int >= 1, determinizations per decision),
    ``budget`` (int >= 1 rollout decisions per decision, None: no cap),
    ``search_wins`` (bool), ``confidence`` (z of the lower confidence bound a
    candidate must clear to replace greedy's action), ``width`` (int >= 0 deficiency slack of the
    candidates, None: every legal action), ``opponents`` (``"uniform"`` or
    ``"greedy"``: the model of the other seats' hidden hands). Their ranges:
    ``majiang_env.engine.kernel.players.AGENT_PARAMS``. ValueError for an
    unknown parameter or a value out of range. The name is read back by
    ``majiang_env.engine.vector.parse_agent`` (``("search", params)``)."""
    def text(v):
        if v is None:
            return "none"
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    spec = "search" + (":" + ",".join(f"{k}={text(v)}" for k, v in params.items()) if params else "")
    parse_agent(spec)            # checks every name and value
    return spec
