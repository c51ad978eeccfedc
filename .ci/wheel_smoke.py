"""Smoke test of the installed wheel, run by .ci/run from a folder outside the checkout,
in a fresh venv that holds only the wheel (with the ``openspiel`` extra).

    python wheel_smoke.py README.md

Checks what a user gets from ``pip install majiang_env``: one top-level name, every
public name, the README quick start, the command line, every registered agent by
name in one SeatVectorEnv and one SingleAgentEnv episode, the OpenSpiel game, and
an arena run with an interval. Exits non-zero (with the reason) on the first failure.
"""
import importlib
import importlib.metadata
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np


def step(what):
    print(f"wheel smoke: {what}", flush=True)


def cli(*args, timeout=900):
    r = subprocess.run([sys.executable, "-m", "majiang_env", *args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"python -m majiang_env {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def compiles_after_compile() -> list:
    """The majiang_env functions numba compiles from now on (numba's compile event), as a list
    that fills as they happen."""
    from numba.core import event
    seen = []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            if (getattr(func, "__module__", "") or "").startswith("majiang_env"):
                seen.append(f"{func.__module__}.{func.__name__}")

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    return seen


def play_every_agent(names, SeatVectorEnv, SingleAgentEnv, AgentError):
    step(f"every registered agent by name: {', '.join(names)}")
    specs = {"ismcts": "ismcts:simulations=2", "search": "search:samples=2,budget=200"}
    for name in names:
        spec = specs.get(name, name)
        if name == "ppo":   # a checkpoint of the trainer: torch is not installed here
            try:
                SeatVectorEnv(2, opponents="ppo:path=none.pt")
            except (AgentError, ValueError) as e:
                assert "train" in str(e), e
                continue
            raise AssertionError("the ppo agent was made without torch")
        env = SeatVectorEnv(2, opponents=spec, seat="random", hands_per_game=1)
        env.reset(seed=0)
        done = np.zeros(2, bool)
        for _ in range(200):
            _, _, term, _, _ = env.step(env.sample_actions(np.zeros((2, 156))))
            done |= term
            if done.all():
                break
        assert done.all(), f"SeatVectorEnv with {spec} did not finish its games"
        one = SingleAgentEnv(opponents=spec, seat="random", hands_per_game=1)
        one.reset(seed=0)
        over = False
        while not over:
            _, _, over, _, _ = one.step(int(np.flatnonzero(one.action_masks())[0]))
        print(f"  {spec}: SeatVectorEnv and SingleAgentEnv episodes played", flush=True)


def main(readme):
    here = Path.cwd().resolve()
    import majiang_env
    where = Path(majiang_env.__file__).resolve()
    step(f"majiang_env {majiang_env.__version__} from {where.parent}")
    assert "site-packages" in str(where), f"majiang_env was imported from {where}, not from the installed wheel"
    assert here not in where.parents, "the smoke must run outside the package"

    step("one top-level name")
    dist = importlib.metadata.distribution("majiang_env")
    tops = {f.parts[0] for f in dist.files if f.parts[0].endswith(".py") or "." not in f.parts[0]}
    tops = {t.removesuffix(".py") for t in tops} - {"__pycache__", "bin"}
    assert tops == {"majiang_env"}, f"the wheel installs top-level names {sorted(tops)}"
    try:
        importlib.import_module("agents")
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("import agents works: the wheel installed a second top-level package")

    step("every public name")
    for name in majiang_env.__all__:
        assert getattr(majiang_env, name) is not None, name
    shipped = [f for f in dist.files if str(f).endswith(".npz")]
    assert shipped, "the wheel ships no weights file"

    step("the README quick start")
    text = Path(readme).read_text(encoding="utf-8")
    block = re.search(r"## Quick start\s+```python\n(.*?)```", text, re.S).group(1)
    exec(compile(block, "README quick start", "exec"), {"__name__": "__readme__"})

    step("the command line")
    assert "arena" in cli("--help") and "compile" in cli("--help")
    out = cli("compile")
    assert "cache: " in out and "site-packages" in out, out
    cli("watch", "--hands", "1")

    from majiang_env import SeatVectorEnv, SingleAgentEnv
    from majiang_env.agents import AgentError, agent_names
    names = agent_names()
    compiled = compiles_after_compile()    # after `compile`, nothing below may compile again
    play_every_agent(names, SeatVectorEnv, SingleAgentEnv, AgentError)
    if compiled:   # reported, not fatal: a variant `compile` does not reach yet costs time, not correctness
        print(f"  note: compiled after `compile`: {sorted(set(compiled))}", flush=True)

    step("the OpenSpiel game")
    import pyspiel

    import majiang_env.envs.openspiel  # noqa: F401  (registers python_majiang)
    game = pyspiel.load_game("python_majiang")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(200):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert game.deserialize_state(state.serialize()).history() == state.history()

    step("an arena run")
    watcher = ("import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); import wheel_smoke; "
               "seen = wheel_smoke.compiles_after_compile(); sys.argv[0] = 'majiang_env'; "
               "code = __import__('majiang_env.cli').cli.main(sys.argv[1:]); "
               "print('compiled:', sorted(set(seen)), file=sys.stderr); sys.exit(code)")
    r = subprocess.run([sys.executable, "-c", watcher, str(Path(__file__).parent), "arena", "greedy", "pretrained",
                        "--deals", "200"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    print("  " + next((x for x in r.stderr.splitlines() if x.startswith("compiled:")), "compiled: ?"), flush=True)
    out = r.stdout
    print(out, flush=True)
    assert re.search(r"pretrained\s+3\s+[+-]\d+\.\d \[[+-]\d+\.\d, [+-]\d+\.\d\]", out), out
    from majiang_env.views.play import watch
    watch(["pretrained", "greedy", "random", "search"], rules={"hands_per_game": 1}, stdout=io.StringIO())
    step("passed")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main(sys.argv[1])
