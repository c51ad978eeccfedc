"""The agent registry: every agent by one name, for every face that takes an agent.

Every face that plays seats with agents (``SeatVectorEnv(opponents=...)``,
``SingleAgentEnv(opponents=...)``, the SB3 and RLlib adapters,
``selfplay(agents=...)``, ``VectorGame.policy_actions``, the arena and the
ladder, ``python -m majiang_env play --opponents``) resolves what it is given
here, with :func:`resolve`, so the same names work everywhere.

==============  ==========  ==============================================================
name            runs        what it is
==============  ==========  ==============================================================
``random``      kernel      uniform among the legal actions
``greedy``      kernel      wins when it can, else keeps the lowest deficiency
                            (``kernel/greedy.py``)
``search``      kernel      determinized rollouts that leave greedy's action only on clear
                            evidence (``kernel/search.py``)
``pretrained``  Python      the shipped learned policy (numpy; ``path=`` another weights file)
``ppo``         Python      a torch checkpoint of ``majiang_env.training.ppo`` (``path=``)
``ismcts``      Python      OpenSpiel's IS-MCTS over sampled worlds (extra ``openspiel``)
==============  ==========  ==============================================================

**How a face runs an agent.** One that has an in-kernel version (``random``,
``greedy``, ``search``) runs inside the compiled loops, from what its seat may
see. Any other runs in Python between kernel calls, batched: the face gathers
every slot where it is to act and makes one call. The Python protocols:

* **batched** (the one protocol of Python agents): ``agent.act_batch(obs, mask)
  -> actions``, ``obs`` int16 (n, 436) compact observations of the seats to act,
  ``mask`` int8 (n, 156) their legal actions, returning n integer action ids.
  An agent may set ``obs_type = "features"`` or ``"float"``: faces then pass
  that encoding instead. A plain function of two parameters ``fn(obs, mask)``
  is taken as batched; a callable of one parameter ``agent(obs_dict) -> action``
  (the PettingZoo convention, ``{"observation": ..., "action_mask": ...}``) is
  called once per row; :class:`Batched` marks a function as batched explicitly.
* **world** (planners): ``agent.act_world(world, seat) -> action``, ``world`` a
  ``Game`` sampled from what ``seat`` cannot see (``Game.sample_hidden``).

**Specs.** A face takes any of: a registered name; a name with parameters as
text, ``"search:samples=32,budget=none"`` (:func:`parse_agent` reads it,
:func:`format_agent` writes it; values are read by each parameter's type,
``none`` is None, ``true`` / ``false`` are booleans); the same as a pair
``("search", {"samples": 32})``; a weights file ``"run/pretrained.npz"``
(``pretrained:path=...``) or checkpoint ``"run/best.pt"`` (``ppo:path=...``);
an entry point ``"package.module:factory"``; an agent object; or a class (a
factory, called ``cls(seed)`` or ``cls(seed, rules=rules)``).

:func:`register_agent` adds a name, for every face at once.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field

import numpy as np

from .checks import is_int, show
from .kernel.players import AGENT_CODES, AGENT_PARAMS, agent_params
from .rules import NUM_ACTIONS

__all__ = ["AgentError", "AgentEntry", "AgentRef", "Batched", "Param", "KERNEL", "BATCHED", "WORLD",
           "agent_names", "agent_info", "kernel_agent_names", "format_agent", "make_agent", "parse_agent",
           "register_agent", "resolve", "unregister_agent"]

KERNEL, BATCHED, WORLD = "in-kernel", "batched", "world"
# what each way of running serves (the error for a face that cannot run an agent names them)
FACES_KERNEL = ("SeatVectorEnv", "SingleAgentEnv", "VectorGame.policy_actions", "selfplay", "the arena",
                "watch / play")


class AgentError(ValueError):
    """An agent that cannot serve where it was given, or that answered with something
    that is not a legal action (names the agent and, in a game, where)."""


# ---- parameters ------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One parameter of a registered agent: its default, its type (``int``, ``float``,
    ``bool``, ``str``, or a tuple of the allowed strings), bounds for numbers, and
    whether None (text ``none``) is allowed."""
    default: object
    kind: object
    lo: float | None = None
    hi: float | None = None
    none: bool = False
    doc: str = ""

    def read(self, text: str):
        """The value of ``text`` (the right of ``key=`` in a spec) by this parameter's type."""
        if text == "none" and (self.none or self.default is None):
            return None
        if isinstance(self.kind, tuple) or self.kind is str:
            return text
        if self.kind is bool:
            return {"1": True, "true": True, "0": False, "false": False}[text.lower()]
        return float(text) if self.kind is float else int(text)

    def check(self, agent: str, key: str, value):
        """``value`` if this parameter takes it, else ValueError naming the agent and the key."""
        if value is None and (self.none or self.default is None):
            return None
        if isinstance(self.kind, tuple):
            if not isinstance(value, str) or value not in self.kind:
                raise ValueError(f"{agent} parameter {key!r} must be one of {self.kind}, got {show(value)}")
        elif self.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{agent} parameter {key!r} must be True or False, got {show(value)}")
            value = bool(value)
        elif self.kind is str:
            if not isinstance(value, str) or not value:
                raise ValueError(f"{agent} parameter {key!r} must be a non-empty string, got {show(value)}")
        else:
            number = (is_int(value) if self.kind is int else
                      isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool))
            if not number or (self.lo is not None and not value >= self.lo) \
                    or (self.hi is not None and not value <= self.hi):
                what = "an int" if self.kind is int else "a number"
                span = f" in {self.lo}..{self.hi}" if self.lo is not None else ""
                raise ValueError(f"{agent} parameter {key!r} must be {what}{span}"
                                 + (" or None" if self.none else "") + f", got {show(value)}")
            value = int(value) if self.kind is int else float(value)
        return value


def _kernel_params(name) -> dict:
    """The :class:`Param` of each parameter of in-kernel agent ``name`` (``players.AGENT_PARAMS``)."""
    out = {}
    for key, (_, default, lo, hi) in AGENT_PARAMS[name].items():
        if isinstance(lo, tuple):
            out[key] = Param(default, lo)
        elif isinstance(lo, bool):
            out[key] = Param(default, bool)
        else:
            kind = float if isinstance(lo, float) or isinstance(default, float) else int
            out[key] = Param(default, kind, lo, hi, none=key in ("budget", "width"))
    return out


# ---- the registry ------------------------------------------------------------------
@dataclass(frozen=True)
class AgentEntry:
    """A registered agent. ``kernel``: the in-kernel agent (``kernel/players.py``) that
    plays it inside the compiled loops, if any. ``factory``: its Python form,
    ``factory(seed, rules=..., **params)`` (a callable, or ``"module:attr"`` imported
    when first built), an object with ``act_batch`` (or, ``protocol="world"``,
    ``act_world``). ``extra``: the package extra the Python form needs."""
    name: str
    summary: str
    kernel: str | None = None
    factory: object = None
    params: dict = field(default_factory=dict)
    protocol: str = BATCHED
    extra: str | None = None

    def runs(self) -> str:
        return "kernel" if self.kernel else "Python"


_REGISTRY: dict[str, AgentEntry] = {}


def _add(entry: AgentEntry):
    _REGISTRY[entry.name] = entry


_add(AgentEntry("random", "uniform among the legal actions", kernel="random",
                factory="majiang_env.agents.baselines:RandomAgent"))
_add(AgentEntry("greedy", "wins when it can, else keeps the lowest deficiency (ties by acceptance)",
                kernel="greedy", factory="majiang_env.agents.baselines:GreedyAgent"))
_add(AgentEntry("search", "determinized greedy rollouts; leaves greedy's action only on clear evidence",
                kernel="search", params=_kernel_params("search")))
_add(AgentEntry("pretrained", "the shipped learned policy (numpy)",
                factory="majiang_env.agents.pretrained:PretrainedAgent",
                params={"path": Param(None, str, none=True, doc="another majiang-policy/1 weights file"),
                        "deterministic": Param(True, bool, doc="argmax (True) or sample")}))
_add(AgentEntry("ppo", "a torch checkpoint of majiang_env.training.ppo (path=...)",
                factory="majiang_env.training.ppo.network:checkpoint_agent",
                params={"path": Param(None, str, none=True, doc="the .pt checkpoint (ppo.save)"),
                        "deterministic": Param(True, bool, doc="argmax (True) or sample")},
                extra="train"))
_add(AgentEntry("ismcts", "OpenSpiel's IS-MCTS over worlds sampled from what its seat cannot see",
                factory="majiang_env.agents.ismcts:ISMCTSAgent", protocol=WORLD, extra="openspiel",
                params={"simulations": Param(100, int, 1, 10 ** 7), "uct_c": Param(40.0, float, 0.0, 1e9),
                        "evaluator": Param("greedy", ("greedy", "random")), "rollouts": Param(1, int, 1, 10_000),
                        "final_policy": Param("max_visits", ("max_visits", "max_value", "visits"))}))
BUILTIN = tuple(_REGISTRY)


def register_agent(name: str, factory, *, params=None, summary: str = "", protocol: str = BATCHED,
                   replace: bool = False) -> AgentEntry:
    """Register an agent under ``name`` for every face.

    ``factory``: a callable (or ``"module:attr"`` text) called as
    ``factory(seed, **params)`` (also ``rules=`` when it takes a ``rules``
    parameter) that returns the agent: an object with ``act_batch(obs, mask)``
    (``protocol="batched"``, the default; a per-observation callable is taken
    too) or with ``act_world(world, seat)`` (``protocol="world"``). ``params``:
    ``{key: default}`` or ``{key: Param(...)}``; text specs read a value by its
    default's type. ``replace=True`` may replace a name registered before (not
    a built-in one). Returns the entry. ValueError for a bad name or argument."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"an agent name must be an identifier (letters, digits, _), got {show(name)}")
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a built-in agent; pick another name")
    if name in _REGISTRY and not replace:
        raise ValueError(f"agent {name!r} is registered already (replace=True replaces it)")
    if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
        raise ValueError(f"factory must be a callable or 'module:attr' text, got {show(factory)}")
    if protocol not in (BATCHED, WORLD):
        raise ValueError(f"protocol must be {BATCHED!r} or {WORLD!r}, got {show(protocol)}")
    if params is None:
        params = {}
    if not isinstance(params, dict) or any(not isinstance(k, str) or not k.isidentifier() for k in params):
        raise ValueError(f"params must be a dict of identifier -> default (or Param), got {show(params)}")
    made = {}
    for k, v in params.items():
        if isinstance(v, Param):
            made[k] = v
        elif isinstance(v, bool):
            made[k] = Param(v, bool)
        elif isinstance(v, (int, float)):
            made[k] = Param(v, type(v))
        elif v is None or isinstance(v, str):
            made[k] = Param(v, str, none=True)
        else:
            raise ValueError(f"params[{k!r}]: a default must be a bool, int, float, str, None or a Param, "
                             f"got {show(v)}")
    entry = AgentEntry(name, summary or f"registered agent {name!r}", factory=factory, params=made,
                       protocol=protocol)
    _REGISTRY[name] = entry
    return entry


def unregister_agent(name: str):
    """Remove a name added by :func:`register_agent` (not a built-in one)."""
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a built-in agent")
    if name not in _REGISTRY:
        raise ValueError(f"no agent {show(name)} is registered; known: {agent_names()}")
    del _REGISTRY[name]


def agent_names() -> list:
    """Every registered name, the built-in ones first."""
    return list(BUILTIN) + sorted(n for n in _REGISTRY if n not in BUILTIN)


def kernel_agent_names() -> list:
    """The names that have an in-kernel version (they run inside the compiled loops)."""
    return [n for n in agent_names() if _REGISTRY[n].kernel is not None]


def agent_info(name: str) -> AgentEntry:
    """The entry of a registered name, or ValueError listing the known names."""
    entry = _REGISTRY.get(name) if isinstance(name, str) else None
    if entry is None:
        raise ValueError(f"unknown agent {show(name)}; known: {', '.join(agent_names())} (or a weights "
                         "file .npz / .pt, or module:factory)")
    return entry


# ---- the text grammar --------------------------------------------------------------
WEIGHT_SUFFIXES = {".npz": "pretrained", ".pt": "ppo"}


def parse_agent(text: str):
    """``(name, params)`` of a text spec: ``"greedy"`` -> ``("greedy", {})``;
    ``"search:samples=32,budget=none"`` -> ``("search", {"samples": 32, "budget": None})``;
    ``"runs/x/pretrained.npz"`` -> ``("pretrained", {"path": "runs/x/pretrained.npz"})``.
    Every key and value is checked; ValueError names the part that is wrong.
    :func:`format_agent` writes the text back."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"an agent spec must be a non-empty string, got {show(text, 80)}")
    for suffix, name in WEIGHT_SUFFIXES.items():
        if text.endswith(suffix) and "=" not in text:
            return name, {"path": text}
    name, _, rest = text.partition(":")
    entry = agent_info(name)
    params = {}
    if rest:
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq or key not in entry.params:
                raise ValueError(f"{show(text, 200)}: {part!r} is not key=value with a parameter of {name!r} "
                                 f"({', '.join(sorted(entry.params)) or 'it takes none'})")
            try:
                params[key] = entry.params[key].read(value)
            except (KeyError, ValueError):
                raise ValueError(f"{show(text, 200)}: cannot read {value!r} as the value of {key!r}") from None
    check_params(entry, params)
    return name, params


def _text(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    return str(v)


def format_agent(name: str, params=None) -> str:
    """The text spec of ``name`` with ``params`` (checked), read back by :func:`parse_agent`:
    ``format_agent("search", {"samples": 32})`` -> ``"search:samples=32"``."""
    entry = agent_info(name)
    params = check_params(entry, {} if params is None else params)
    text = name + (":" + ",".join(f"{k}={_text(v)}" for k, v in params.items()) if params else "")
    if any(("," in _text(v) or "=" in _text(v)) for v in params.values()):
        raise ValueError(f"a parameter value of {show(params, 120)} holds ',' or '=': it has no text spec "
                         "(pass the pair (name, params) instead)")
    return text


def check_params(entry: AgentEntry, params) -> dict:
    """``params`` (a dict) with every value checked against ``entry``'s parameters."""
    if not isinstance(params, dict):
        raise ValueError(f"parameters of agent {entry.name!r} must be a dict, got {show(params, 80)}")
    unknown = [k for k in params if k not in entry.params]
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(show(k) for k in unknown)} for agent {entry.name!r}; "
                         f"it takes {', '.join(sorted(entry.params)) or 'none'}")
    return {k: entry.params[k].check(entry.name, k, v) for k, v in params.items()}


# ---- specs resolved ------------------------------------------------------------------
class Batched:
    """Marks ``fn(obs (n, ...), mask (n, 156)) -> actions (n,)`` as a batched agent;
    ``obs_type``: the encoding ``fn`` wants (``"compact"``, ``"features"``, ``"float"``;
    None: the face's own, e.g. a ``SeatVectorEnv``'s ``obs_type``)."""

    def __init__(self, fn, name: str | None = None, obs_type: str | None = None):
        if not callable(fn):
            raise ValueError(f"Batched needs a callable fn(obs, mask), got {show(fn, 80)}")
        if obs_type not in (None, "compact", "features", "float"):
            raise ValueError(f"obs_type must be None (the face's own), 'compact', 'features' or 'float', "
                             f"got {show(obs_type)}")
        self.fn = fn
        self.obs_type = obs_type
        self.name = name or getattr(fn, "__name__", type(fn).__name__)

    def act_batch(self, obs, mask):
        return self.fn(obs, mask)

    def __repr__(self):
        return f"Batched({self.name})"


class BadAnswer(AgentError):
    """An answer of a per-observation agent that is not a legal id of its row ``i``
    (the face reraises it as ``AgentError`` naming the agent and where)."""

    def __init__(self, i, value):
        super().__init__(f"answer {show(value, 60)} ({type(value).__name__}) of row {i}")
        self.row, self.value = i, value


class PerObservation:
    """A callable ``agent(obs_dict) -> action`` as a batched agent: called once per row,
    with the compact observation (the PettingZoo convention)."""
    obs_type = "compact"

    def __init__(self, fn, name: str | None = None):
        self.fn = fn
        self.name = name or _object_name(fn)

    def act_batch(self, obs, mask):
        out = np.empty(len(obs), np.int64)
        for i in range(len(obs)):
            given = v = self.fn({"observation": obs[i].copy(), "action_mask": mask[i].copy()})
            if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu":
                v = v[()]
            if not is_int(v) or not 0 <= int(v) < NUM_ACTIONS or not mask[i, int(v)]:
                raise BadAnswer(i, given)
            out[i] = int(v)
        return out

    def __call__(self, obs):
        return self.fn(obs)

    def __repr__(self):
        return f"PerObservation({self.name})"


def _object_name(obj) -> str:
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(obj, "__name__", None) or type(obj).__name__


def _required_positional(fn) -> int | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return sum(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in sig.parameters.values())


def as_protocol(obj):
    """(protocol, the object as an agent) of an agent object: an object with
    ``act_world`` (world) or ``act_batch`` (batched), a function of two parameters
    (batched) or a callable of one (per observation); None for anything else."""
    if callable(getattr(obj, "act_world", None)):
        return WORLD, obj
    if callable(getattr(obj, "act_batch", None)):
        return BATCHED, obj
    if callable(obj) and not isinstance(obj, type):
        if _required_positional(obj) == 2:
            return BATCHED, Batched(obj, _object_name(obj))
        return BATCHED, PerObservation(obj)
    return None


def _import(text: str, where: str):
    mod, _, attr = text.partition(":")
    try:
        obj = importlib.import_module(mod)
    except (ImportError, TypeError, ValueError) as e:   # also relative ("..") and empty module names
        raise ValueError(f"{where}: cannot import module {show(mod)} ({e})") from None
    for part in attr.split("."):
        if not part or not hasattr(obj, part):
            raise ValueError(f"{where}: module {show(mod)} has no attribute {show(attr)}")
        obj = getattr(obj, part)
    return obj


def _call_factory(factory, seed, rules, params):
    try:
        takes_rules = "rules" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_rules = False
    return factory(seed, rules=rules, **params) if takes_rules else factory(seed, **params)


@dataclass(eq=False)
class AgentRef:
    """A spec resolved (:func:`resolve`): what a face needs to run it.

    ``name``: its display name (the text spec, or the object's ``name``);
    ``kernel``: ``(code, parameter vector)`` when it runs in the kernel, else None;
    ``protocol``: how its Python form is called (``"batched"`` or ``"world"``), None
    when it has none (kernel only: ``search``); ``entry`` and ``params``: the
    registered entry and parameters (None for an object)."""
    name: str
    kernel: tuple | None
    protocol: str | None
    entry: AgentEntry | None = None
    params: dict = field(default_factory=dict)
    obj: object = None
    factory: object = None
    source: object = None     # the object the caller gave (obj may wrap it)

    @property
    def kind(self) -> str:
        """``"in-kernel"``, ``"batched"`` or ``"world"``: how faces run it."""
        return KERNEL if self.kernel is not None else self.protocol

    def same(self, other: AgentRef) -> bool:
        """Whether two refs are one agent (the same object, or the same name and parameters)."""
        if self.obj is not None or other.obj is not None:
            return (self.source if self.source is not None else self.obj) is \
                (other.source if other.source is not None else other.obj)
        if self.factory is not None or other.factory is not None:
            return self.factory is other.factory
        return self.entry is other.entry and self.params == other.params

    def build(self, seed=None, rules=None):
        """Its Python form: an object with ``act_batch`` (batched) or ``act_world``
        (world), seeded with ``seed``; the object itself when one was given. An
        agent that runs only in the kernel raises :class:`AgentError` naming the
        faces that run it."""
        if self.obj is not None:
            return self.obj
        if self.protocol is None:
            raise AgentError(f"agent {self.name!r} runs only inside the kernel, on the game's full state "
                             f"(it simulates the game): it serves {', '.join(FACES_KERNEL)}, and cannot act "
                             "from an observation alone")
        factory = self.factory
        if factory is None:
            factory = self.entry.factory
            if isinstance(factory, str):
                try:
                    factory = _import(factory, f"agent {self.name!r}")
                except ValueError as e:
                    extra = self.entry.extra
                    raise AgentError(f"{e}" + (f"; agent {self.name!r} needs the {extra!r} extra "
                                               f"(pip install 'majiang_env[{extra}]')" if extra else "")) from None
        params = {k: v for k, v in self.params.items() if v is not None or k != "path"}
        hint = ("a class or factory is called as f(seed), or f(seed, rules=...) when it takes rules; for a "
                "class built otherwise, pass an instance")
        try:
            made = _call_factory(factory, seed, rules, params)
        except TypeError as e:
            if self.entry is not None and self.entry.name in BUILTIN:
                raise
            raise AgentError(f"agent {self.name!r}: its factory could not be called ({e}); {hint}") from None
        got = as_protocol(made)
        if got is None or isinstance(made, type):
            raise AgentError(f"agent {self.name!r}: its factory returned {show(made, 80)}, not an agent "
                             f"(an object with act_batch(obs, mask) or act_world(world, seat), or a callable); "
                             f"{hint}")
        return got[1]


def resolve(spec, where: str = "agent") -> AgentRef:
    """The :class:`AgentRef` of any spec a face takes (module docstring), or ValueError
    naming ``where`` and what is allowed."""
    if isinstance(spec, AgentRef):
        return spec
    if isinstance(spec, str):
        name, _, rest = spec.partition(":")
        if (rest and "=" not in rest and name not in _REGISTRY
                and not any(spec.endswith(s) for s in WEIGHT_SUFFIXES)):       # module:factory
            obj = _import(spec, f"{where} {show(spec)}")
            short = rest.rpartition(".")[2]          # shown as the attribute's name
            if isinstance(obj, type) or inspect.isfunction(obj):
                return AgentRef(short, None, WORLD if callable(getattr(obj, "act_world", None)) else BATCHED,
                                factory=obj)
            got = as_protocol(obj)
            if got is None:
                raise ValueError(f"{where}: {show(spec)} is neither an agent nor a factory")
            return AgentRef(short, None, got[0], obj=got[1], source=obj)
        try:
            name, params = parse_agent(spec)
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        return _entry_ref(spec, name, params)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and isinstance(spec[1], dict):
        try:
            entry = agent_info(spec[0])
            params = check_params(entry, spec[1])
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        try:
            text = format_agent(spec[0], params)
        except ValueError:
            text = spec[0]
        return _entry_ref(text, spec[0], params)
    if isinstance(spec, type):
        return AgentRef(spec.__name__, None, WORLD if callable(getattr(spec, "act_world", None)) else BATCHED,
                        factory=spec)
    got = as_protocol(spec)
    if got is None:
        raise ValueError(f"{where} must be an agent name ({', '.join(agent_names())}), a spec like "
                         f"'search:samples=32', a pair (name, params), a weights file, an agent object "
                         f"(act_batch(obs, mask), act_world(world, seat), or a callable) or a class; "
                         f"got {show(spec, 100)} ({type(spec).__name__})")
    return AgentRef(_object_name(spec), None, got[0], obj=got[1], source=spec)


def _entry_ref(text, name, params) -> AgentRef:
    entry = _REGISTRY[name]
    kernel = None
    if entry.kernel is not None:
        kernel = (AGENT_CODES[entry.kernel], agent_params(entry.kernel, params))
    protocol = entry.protocol if entry.factory is not None else None
    if name == "ppo" and params.get("path") is None:
        raise ValueError(f"agent 'ppo' needs a checkpoint: 'ppo:path=FILE.pt' or 'FILE.pt', got {show(text)}")
    return AgentRef(text, kernel, protocol, entry=entry, params=dict(params))


def make_agent(spec, seed=None, rules=None):
    """The Python form of any agent spec (:func:`resolve`), seeded with ``seed``: an
    object with ``act_batch(obs, mask)`` (most also take one observation dict,
    ``agent(obs)``) or, for a planner, ``act_world(world, seat)``. ``rules``: the
    rules of the games it will see (a ``RuleConfig``, dict or None). An agent that
    runs only in the kernel (``search``) raises :class:`AgentError` naming the faces
    that run it."""
    return resolve(spec).build(seed, rules)
