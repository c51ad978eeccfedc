"""The agent registry: one name and one grammar for every face that takes an agent."""
import io

import numpy as np
import pytest

from majiang_env import Game, SeatVectorEnv, SingleAgentEnv, VectorGame, arena, selfplay
from majiang_env.agents import (
    AgentError,
    Batched,
    agent_names,
    format_agent,
    kernel_agent_names,
    make_agent,
    parse_agent,
    register_agent,
    resolve,
    unregister_agent,
)
from majiang_env.engine.checks import IllegalActionError
from majiang_env.views.play import watch

ONE_HAND = {"hands_per_game": 1}
# every built-in name that needs no extra and no file
NAMES = ["random", "greedy", "search:samples=1,budget=50", "pretrained"]


def _seat_vector(spec):
    env = SeatVectorEnv(3, opponents=spec, seat="random", hands_per_game=1)
    env.reset(seed=0)
    for _ in range(40):
        env.step(env.sample_actions(np.zeros((3, 156))))


def _single_agent(spec):
    env = SingleAgentEnv(opponents=spec, seat="random", hands_per_game=1)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))


def _selfplay(spec):
    s = selfplay(2, agents=(spec, "greedy", spec, "random"), num_envs=2, rules=ONE_HAND)
    assert s["games"] == 2


def _policy_actions(spec):
    vg = VectorGame(3, seed=0)
    _, mask, _ = vg.reset()
    a = vg.policy_actions(spec)
    assert mask[np.arange(3), a].all()


def _arena(spec):
    res = arena.run([spec, "greedy", "greedy", "greedy"], 2, rules=ONE_HAND, baseline=False)
    assert res.games == (2 if spec == "greedy" else 8)      # all greedy: one seating


def _watch(spec):
    g = watch([spec, "random", "greedy", spec], seed=1, rules=ONE_HAND, stdout=io.StringIO())
    assert g.done


FACES = {"SeatVectorEnv": _seat_vector, "SingleAgentEnv": _single_agent, "selfplay": _selfplay,
         "VectorGame.policy_actions": _policy_actions, "arena": _arena, "watch": _watch}


@pytest.mark.parametrize("face", sorted(FACES))
@pytest.mark.parametrize("spec", NAMES)
def test_every_name_serves_every_face(face, spec):
    FACES[face](spec)


def test_a_checkpoint_and_a_weights_file_are_agents_by_path(tmp_path):
    from majiang_env.agents.pretrained import DEFAULT_WEIGHTS
    assert resolve(str(DEFAULT_WEIGHTS)).entry.name == "pretrained"
    _arena(str(DEFAULT_WEIGHTS))
    torch = pytest.importorskip("torch")  # noqa: F841
    from majiang_env.training import ppo
    path = tmp_path / "net.pt"
    ppo.save(ppo.PolicyNet(16, kind_hidden=8), path)
    for face in ("SeatVectorEnv", "SingleAgentEnv", "selfplay", "arena"):
        FACES[face](str(path))
        FACES[face](f"ppo:path={path}")
    with pytest.raises(ValueError, match="checkpoint"):
        resolve("ppo")


def test_ismcts_is_a_planner_of_every_face():
    pytest.importorskip("pyspiel")
    g = watch(["ismcts:simulations=2", "random", "greedy", "random"], seed=1, rules=ONE_HAND, stdout=io.StringIO())
    assert g.done


def test_search_runs_in_the_kernel_only_and_says_where():
    assert "search" in kernel_agent_names() and "pretrained" not in kernel_agent_names()
    with pytest.raises(AgentError, match="SeatVectorEnv"):
        make_agent("search")


def test_the_text_grammar_round_trips():
    for text in ("greedy", "search:samples=32,budget=none", "search:search_wins=true,confidence=1.5",
                 "pretrained:deterministic=false"):
        name, params = parse_agent(text)
        assert format_agent(name, params) == text
        assert parse_agent(format_agent(name, params)) == (name, params)
    assert parse_agent("runs/x/policy.npz") == ("pretrained", {"path": "runs/x/policy.npz"})
    for bad, word in (("search:samples=0", "samples"), ("search:nope=1", "nope"), ("search:samples=x", "'x'"),
                      ("nobody", "unknown agent"), ("", "non-empty"), ("greedy:samples=2", "takes none")):
        with pytest.raises(ValueError, match=word):
            parse_agent(bad)
    with pytest.raises(ValueError, match="','"):
        format_agent("pretrained", {"path": "a,b.npz"})


def test_a_registered_agent_serves_every_face_at_once():
    seen = []

    def lowest(obs, mask):
        seen.append(len(obs))
        return np.asarray(mask).argmax(1)

    register_agent("lowest", lambda seed: Batched(lowest))
    try:
        assert "lowest" in agent_names()
        for face in FACES.values():
            face("lowest")
        assert seen and max(seen) > 1                   # called batched, several rows at once
        with pytest.raises(ValueError, match="registered already"):
            register_agent("lowest", lambda seed: Batched(lowest))
    finally:
        unregister_agent("lowest")
    assert "lowest" not in agent_names()
    with pytest.raises(ValueError, match="built-in"):
        register_agent("greedy", lambda seed: Batched(lowest))


def test_a_python_agent_gets_the_encoding_it_names():
    shapes = []

    def fn(obs, mask):
        shapes.append((obs.dtype, obs.shape[1]))
        return np.asarray(mask).argmax(1)

    for obs_type in ("compact", "float"):
        env = SeatVectorEnv(2, opponents=Batched(fn, obs_type="features"), obs_type=obs_type, hands_per_game=1)
        env.reset(seed=0)
        for _ in range(10):
            env.step(env.sample_actions(np.zeros((2, 156))))
    n = len(shapes)
    env = SeatVectorEnv(2, opponents=Batched(fn), obs_type="float", hands_per_game=1)   # the env's own
    env.reset(seed=0)
    for _ in range(10):
        env.step(env.sample_actions(np.zeros((2, 156))))
    from majiang_env.engine.encodings import FEAT_SIZE, FLOAT_SIZE
    assert n and {s[1] for s in shapes[:n]} == {FEAT_SIZE} and {s[1] for s in shapes[n:]} == {FLOAT_SIZE}


@pytest.mark.parametrize("make", [
    lambda out: np.ma.array(out, mask=np.arange(len(out)) == 0),          # a masked array hides nothing
    lambda out: np.where(np.arange(len(out)) == 0, -1, out),
    lambda out: np.where(np.arange(len(out)) == 0, 10 ** 6, out),
    lambda out: out.astype(float)])
def test_a_bad_answer_never_reaches_the_kernel(make):
    def bad(obs, mask):
        out = np.asarray(mask).argmax(1).astype(np.int64)
        out[0] = -1 if out[0] != 0 else out[0]
        return make(out)

    env = SeatVectorEnv(2, opponents=bad, seat=0, hands_per_game=1)
    with pytest.raises(IllegalActionError):
        env.reset(seed=0)
        for _ in range(100):
            env.step(env.action_masks().argmax(1))
    with pytest.raises(AgentError):
        arena.run([bad, "greedy", "greedy", "greedy"], 2, rules=ONE_HAND)
    with pytest.raises(AgentError):
        selfplay(2, agents=(bad, "greedy", "greedy", "greedy"), num_envs=2, rules=ONE_HAND)
    vg = VectorGame(2, seed=0)
    vg.reset()
    with pytest.raises(AgentError):
        vg.policy_actions(bad)


def test_python_agents_in_selfplay_play_the_same_games_as_the_game_loop():
    """selfplay with a deterministic Python agent equals playing each game with Game."""
    s = selfplay(3, agents=("pretrained", "greedy", "pretrained", "greedy"), seed=4, num_envs=2, rules=ONE_HAND)
    t = selfplay(3, agents=("pretrained", "greedy", "pretrained", "greedy"), seed=4, num_envs=3, rules=ONE_HAND)
    assert s["mean_points"] == t["mean_points"] and s["decisions"] == t["decisions"]


def test_unknown_specs_name_the_known_agents():
    for face in (lambda s: SeatVectorEnv(1, opponents=s), lambda s: SingleAgentEnv(opponents=s),
                 lambda s: selfplay(1, agents=(s, "greedy", "greedy", "greedy")),
                 lambda s: arena.run([s, "greedy", "greedy", "greedy"], 2)):
        with pytest.raises(ValueError, match="known: random, greedy, search, pretrained"):
            face("nobody")
    assert Game(seed=0)     # nothing above changed the engine
