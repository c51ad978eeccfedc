"""majiang_env: a reinforcement-learning environment for 馬将 (Majiang).

The public API is :data:`__all__`; every name in it is reached from here, and
the submodule a name lives in is not part of the contract (docs/api.md).

* the engine: ``Game`` (one game), ``RuleConfig`` (the rule set), ``replay``
  (a game record back into a ``Game``), ``VectorGame`` (B games per compiled
  call), ``selfplay`` (whole games inside the kernel);
* the environment faces: ``env`` / ``raw_env`` / ``parallel_env``
  (PettingZoo; the env card is ``help(majiang_env.majiang_v2)``),
  ``SingleAgentEnv`` (Gymnasium, one seat), ``SeatVectorEnv`` (Gymnasium vector
  env, one learning seat per game, opponents in the kernel);
* the agent registry: ``make_agent``, ``register_agent``, ``agent_names``,
  ``parse_agent`` / ``format_agent`` (the one text grammar), ``Batched``
  (``majiang_env.agents`` lists every agent);
* the error types.

Names are loaded on first use, so ``import majiang_env`` stays cheap.
``python -m majiang_env --help`` lists the command line (watch, play, arena,
ladder, train, bench, compile).

Two effects of importing the package, both documented in docs/guide.md:

* ``OMP_WAIT_POLICY`` is set to ``PASSIVE`` unless the process already set it.
  The batched kernels run numba parallel regions on OpenMP threads, whose
  spin-waiting steals the cores of a busy machine and makes a step several
  times slower (docs/performance.md, "Under load"). To keep libgomp's default,
  set ``OMP_WAIT_POLICY`` (e.g. ``ACTIVE``) before the import.
* ``gymnasium.make("majiang_env/SingleAgent-v1")`` (and ``make_vec``) is
  registered, by name only: nothing heavy is imported until it is made.
"""
import importlib
import importlib.metadata
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

try:
    __version__ = importlib.metadata.version("majiang_env")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
    __version__ = "0+unknown"

# public name -> the module that defines it
_PUBLIC = {
    "Game": "majiang_env.engine.game",
    "replay": "majiang_env.engine.records",
    "RecordError": "majiang_env.engine.records",
    "RuleConfig": "majiang_env.engine.rules",
    "VectorGame": "majiang_env.engine.vector",
    "selfplay": "majiang_env.engine.vector",
    "IllegalActionError": "majiang_env.engine.checks",
    "ActionSpaceError": "majiang_env.engine.checks",
    "ResetNeededError": "majiang_env.engine.checks",
    "env": "majiang_env.envs.pettingzoo",
    "raw_env": "majiang_env.envs.pettingzoo",
    "parallel_env": "majiang_env.envs.pettingzoo",
    "SingleAgentEnv": "majiang_env.envs.single_agent",
    "SeatVectorEnv": "majiang_env.envs.seat_vector",
    "AgentError": "majiang_env.engine.registry",
    "Batched": "majiang_env.engine.registry",
    "agent_names": "majiang_env.engine.registry",
    "format_agent": "majiang_env.engine.registry",
    "make_agent": "majiang_env.engine.registry",
    "parse_agent": "majiang_env.engine.registry",
    "register_agent": "majiang_env.engine.registry",
}
__all__ = sorted(_PUBLIC) + ["majiang_v2", "__version__"]


def __getattr__(name):
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    if name in ("majiang_v2", "majiang_v1"):   # majiang_v1: deprecated, its env() says to use majiang_v2
        return importlib.import_module(f"majiang_env.{name}")
    raise AttributeError(f"module 'majiang_env' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


def _register_gymnasium():
    import gymnasium as gym

    from .envs import SINGLE_AGENT_ID
    if SINGLE_AGENT_ID not in gym.registry:
        # make_vec(..., vectorization_mode="vector_entry_point") gives SeatVectorEnv
        gym.register(id=SINGLE_AGENT_ID, entry_point="majiang_env.envs.single_agent:SingleAgentEnv",
                     vector_entry_point="majiang_env.envs.seat_vector:SeatVectorEnv")


_register_gymnasium()
