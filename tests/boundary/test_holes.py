"""One test per boundary hole found by an adversarial probe, named after what it checks.

Each pins the exact case; the fuzzers (test_fuzz_boundary.py,
tests/engine/test_fuzz_records.py) cover the class of input around it. The
policy they check is the one of ``majiang_env.engine.checks``: a bad value
raises the documented error type, naming the value and what is allowed, and
changes nothing.
"""
import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import majiang_env
from majiang_env import Game, RecordError, replay
from majiang_env.arena import Batched
from majiang_env.engine.checks import ActionSpaceError, IllegalActionError
from majiang_env.engine.rules import A_DRAW, NUM_ACTIONS
from majiang_env.engine.vector import VectorGame
from majiang_env.envs.seat_vector import SeatVectorEnv
from majiang_env.envs.single_agent import SingleAgentEnv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HUGE = 10 ** 5000          # past Python's int-to-str limit (4300 digits): repr() and str() of it fail
MIXED_RULES = {1: 2, "x": 3}


def _first_legal(mask):
    return int(np.flatnonzero(mask)[0])


def _stopped_before_forced(seed=0):
    """A ``Game(auto_forced=False)`` stopped just before a forced decision (one legal action)."""
    g = Game(seed=seed, auto_forced=False, rules={"hands_per_game": 1})
    n = 0
    while n == 0 or len(g.legal_actions()) != 1:
        g.step(g.legal_actions()[-1])
        n += 1
    assert not g.done and g.legal_actions() == [A_DRAW]
    return g


# ---- 1. replay returns the game at the record's end -------------------------------

def test_replay_of_a_record_ending_before_a_forced_decision_is_that_record():
    g = _stopped_before_forced()
    rec = g.record()
    for r in (replay(rec), replay(rec, auto_forced=True), replay(rec, auto_forced=False), replay(json.dumps(rec))):
        assert r.record() == rec
        assert r.legal_actions() == [A_DRAW] and r.current_player == g.current_player
    assert replay(rec, auto_forced=True).auto_forced is True
    # the forced decision is the caller's next step; with auto_forced=True the forced ones after it follow
    r = replay(rec)
    r.step(A_DRAW)
    assert r.done or len(r.legal_actions()) > 1
    assert len(r.record()["hands"][0]["decisions"]) > len(rec["hands"][0]["decisions"])


# ---- 2. ints past the int-to-str limit -------------------------------------------

def _says_huge(e):
    assert "5001 digits" in str(e), str(e)


def test_ints_past_the_int_to_str_limit_raise_the_documented_errors():
    g = Game(seed=0)
    before = g.record()
    with pytest.raises(ActionSpaceError) as e:
        g.step(HUGE)
    _says_huge(e.value)
    assert g.record() == before
    with pytest.raises(ValueError, match="seed") as e:
        Game(seed=HUGE)
    _says_huge(e.value)
    with pytest.raises(ValueError, match="hands_per_game") as e:
        Game(rules={"hands_per_game": HUGE})
    _says_huge(e.value)
    for field, value in (("seed", HUGE), ("index", HUGE)):
        rec = g.record()
        (rec if field == "seed" else rec["hands"][0])[field] = value
        with pytest.raises(RecordError) as e:
            replay(rec)
        _says_huge(e.value)
    rec = _stopped_before_forced().record()
    rec["hands"][0]["decisions"][0][0] = HUGE
    with pytest.raises(RecordError, match="seat"):
        replay(rec)
    aec = majiang_env.env()
    aec.reset(seed=0)
    with pytest.raises(AssertionError) as e:     # what PettingZoo's AssertOutOfBoundsWrapper gives
        aec.step(HUGE)
    assert isinstance(e.value, ActionSpaceError)
    _says_huge(e.value)
    raw = majiang_env.raw_env()
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError) as e:
        raw.step(HUGE)
    _says_huge(e.value)
    single = SingleAgentEnv(hands_per_game=1)
    single.reset(seed=0)
    with pytest.raises(ActionSpaceError) as e:
        single.step(HUGE)
    _says_huge(e.value)
    vg = VectorGame(3, seed=0)
    vg.reset()
    with pytest.raises(IllegalActionError) as e:
        vg.step([HUGE, 0, 0])
    _says_huge(e.value)


# ---- 3. play mode ----------------------------------------------------------------

def test_play_mode_answers_a_5000_digit_line_and_asks_again():
    from majiang_env.views.play import play
    out = io.StringIO()
    assert play(seat=0, seed=0, rules={"hands_per_game": 1}, stdin=io.StringIO("9" * 5000 + "\nq\n"),
                stdout=out) == 0
    text = out.getvalue()
    assert "there is no move" in text and text.count("your move (") == 2 and "you left the game" in text
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    for data in (("9" * 5000 + "\n-" + "1" * 5000 + "\nq\n").encode(), b"\xff\xfe bad bytes\n1\nq\n"):
        run = subprocess.run([sys.executable, "-m", "majiang_env", "play", "--seed", "0", "--hands", "1"],
                             input=data, capture_output=True, cwd=ROOT, env=env, timeout=600)
        assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr[-2000:]
        assert b"left the game" in run.stdout


# ---- 4 and 9. rules dicts with keys of mixed types ------------------------------------

@pytest.mark.parametrize("make", [
    lambda r: Game(rules=r), lambda r: VectorGame(2, rules=r), lambda r: majiang_env.selfplay(1, rules=r),
    lambda r: majiang_env.env(rules=r), lambda r: majiang_env.raw_env(rules=r),
    lambda r: majiang_env.parallel_env(rules=r), lambda r: SingleAgentEnv(rules=r),
    lambda r: majiang_env.RuleConfig.from_dict(r)],
    ids=["Game", "VectorGame", "selfplay", "env", "raw_env", "parallel_env", "SingleAgentEnv", "from_dict"])
def test_rules_with_keys_of_mixed_types_raise_value_error(make):
    with pytest.raises(ValueError, match=r"unknown RuleConfig field\(s\): \[1, 'x'\]"):
        make(MIXED_RULES)


def test_seat_vector_env_rules_with_keys_of_mixed_types_raise_value_error():
    for rules in (MIXED_RULES, {None: 1, "hands_per_game": 1}, {(1,): 2, 2.5: 1}):
        with pytest.raises(ValueError, match="unknown RuleConfig field"):
            SeatVectorEnv(2, rules=rules)


# ---- 5. SingleAgentEnv checks opponents' answers ------------------------------------

class _Opponent:
    """Plays the first legal action, or ``bad(action, mask)`` while ``bad`` is set; counts its calls."""

    def __init__(self):
        self.bad, self.calls = None, 0

    def __call__(self, obs):
        self.calls += 1
        a = _first_legal(obs["action_mask"])
        return a if self.bad is None else self.bad(a, obs["action_mask"])


def _env_state(env):
    return json.dumps(env.game.record(legal=True)), env.action_masks().tobytes(), env.seat


@pytest.mark.parametrize("bad", [lambda a, m: a + 0.7, lambda a, m: float(a), lambda a, m: str(a),
                                 lambda a, m: np.float32(a), lambda a, m: bool(a), lambda a, m: [a],
                                 lambda a, m: None, lambda a, m: NUM_ACTIONS + a, lambda a, m: -1,
                                 lambda a, m: HUGE, lambda a, m: int(np.flatnonzero(m == 0)[0])],
                         ids=["float+0.7", "float", "str", "float32", "bool", "list", "None", "out of range",
                              "-1", "huge", "illegal"])
def test_single_agent_env_refuses_opponent_answers_the_learner_may_not_give(bad):
    opp, ref = _Opponent(), _Opponent()
    env, twin = SingleAgentEnv(opponents=opp, hands_per_game=1), SingleAgentEnv(opponents=ref, hands_per_game=1)
    env.reset(seed=3)
    twin.reset(seed=3)
    for _ in range(100):      # until a step hands the turn to an opponent
        a = _first_legal(env.action_masks())
        state = _env_state(env)
        opp.bad, opp.calls = bad, 0
        try:
            env.step(a)
        except IllegalActionError as e:
            assert "opponent at seat" in str(e) and opp.calls == 1
            break
        assert opp.calls == 0, "an opponent's answer that is not a legal action id was played"
        twin.step(a)
    else:
        pytest.fail("no opponent was asked")
    assert _env_state(env) == state            # nothing changed: the learner's action was taken back
    opp.bad = None
    got, want = env.step(a), twin.step(a)
    assert np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]


def test_single_agent_env_accepts_integer_answers_of_every_accepted_form():
    for form in (np.int64, np.uint8, np.array, int):
        opp = _Opponent()
        opp.bad = lambda a, m, form=form: form(a)
        env = SingleAgentEnv(opponents=opp, hands_per_game=1)
        env.reset(seed=3)
        env.step(_first_legal(env.action_masks()))


# ---- 6. PretrainedAgent weights -------------------------------------------------------

def _weights():
    from majiang_env.agents.pretrained import DEFAULT_WEIGHTS
    with np.load(DEFAULT_WEIGHTS) as z:
        return {k: z[k] for k in z.files}


def _save(path, arrays):
    np.savez(path, **arrays)
    return path


def test_pretrained_agent_plays_legal_actions_when_legal_logits_are_extreme(tmp_path):
    from majiang_env.agents import game_obs
    from majiang_env.agents.pretrained import PretrainedAgent
    for low in (-2e9, -3e38):
        w = _weights()
        for k in ("kind_out.weight", "kind_out.bias", "pi.weight"):
            w[k] = np.zeros_like(w[k])
        w["kind_bias"] = np.full_like(w["kind_bias"], low)
        w["pi.bias"] = np.full_like(w["pi.bias"], low)
        agent = PretrainedAgent(path=_save(tmp_path / f"low{low}.npz", w))
        g = Game(seed=1, rules={"hands_per_game": 1})
        while not g.done:
            a = agent(game_obs(g))
            assert g.is_legal(a), (a, g.legal_actions())
            g.step(a)


def _corrupt_files(tmp_path):
    """(name, path) of weights files that are not valid majiang-policy/1 files."""
    good = _save(tmp_path / "good.npz", _weights())
    raw = good.read_bytes()
    out = []

    def put(name, data=None, arrays=None):
        p = tmp_path / f"{name}.npz"
        if arrays is not None:
            _save(p, arrays)
        else:
            p.write_bytes(data)
        out.append((name, p))

    put("empty", b"")
    put("truncated", raw[:len(raw) // 2])
    put("not a zip", b"this is not a weights file\n" * 10)
    put("zip header only", raw[:40])
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    put("zip without arrays", (tmp_path / "plain.zip").read_bytes())
    w = _weights()
    del w["pi.bias"]
    put("missing array", arrays=w)
    put("wrong format", arrays=dict(_weights(), format=np.array("other/1")))
    put("format as a list", arrays=dict(_weights(), format=np.array(["majiang-policy/1"])))
    put("unknown array", arrays=dict(_weights(), extra=np.zeros(3, np.float32)))
    for key, value in (("body.0.weight", np.zeros(5, np.float32)), ("body.2.weight", np.zeros((7, 256), np.float32)),
                       ("kind_bias", np.zeros((36, 3), np.float32)), ("pi.bias", np.zeros(11, np.float32)),
                       ("ctx.bias", np.zeros((), np.float32)), ("kind_in.weight", np.zeros((64, 35), np.float32)),
                       ("body.0.bias", np.arange(256)), ("pi.weight", np.zeros((12, 256), bool)),
                       ("kind_out.bias", np.array([np.nan, 0, 0, 0], np.float32)),
                       ("body.2.bias", np.full(256, 1e300)), ("ctx.weight", np.zeros((64, 256), complex))):
        put(f"{key} {value.dtype} {value.shape}", arrays=dict(_weights(), **{key: value}))
    put("object array", arrays=dict(_weights(), **{"pi.bias": np.array([None] * 12, dtype=object)}))
    np.save(tmp_path / "one.npy", np.zeros(3))
    out.append(("a .npy file", tmp_path / "one.npy"))
    return out


def test_corrupt_weights_files_raise_one_error_naming_the_file_at_load(tmp_path):
    from majiang_env.agents import pretrained
    for name, path in _corrupt_files(tmp_path):
        with pytest.raises(ValueError) as e:
            pretrained.PretrainedAgent(path=path)
        assert type(e.value).__name__ == "WeightsError", (name, type(e.value), e.value)
        assert str(path) in str(e.value), (name, str(e.value))
    with pytest.raises(FileNotFoundError):
        pretrained.PretrainedAgent(path=tmp_path / "none.npz")
    with pytest.raises(ValueError, match="path"):
        pretrained.PretrainedAgent(path=5)


# ---- 7. SB3VecEnv ----------------------------------------------------------------------

def test_sb3_vec_env_checks_actions_attributes_and_seeds():
    pytest.importorskip("stable_baselines3")
    from majiang_env.integrations.sb3 import SB3VecEnv
    env = SB3VecEnv(8, hands_per_game=1)
    env.seed(0)
    obs = env.reset()
    masks = env.action_masks()
    with pytest.raises(IllegalActionError, match="actions"):
        env.step(None)
    legal = np.array([_first_legal(m) for m in masks])
    with pytest.raises(IllegalActionError, match=r"shape \(8,\)"):
        env.step(legal.reshape(2, 4))
    for name, value in (("obs_type", "features"), ("reward_scale", float("nan")), ("rules", {"kuikae": False}),
                        ("copy", "yes"), ("num_threads", 0), ("seat_option", 2), ("reward_scale", HUGE),
                        ("_ready", False), (5, 1)):
        with pytest.raises(ValueError):
            env.set_attr(name, value)
    venv = env.venv
    assert venv.obs_type == "float" and venv.reward_scale == 1.0 and venv.copy is True   # SB3VecEnv's default obs
    env.set_attr("reward_scale", 0.5)
    assert venv.reward_scale == 0.5
    for seed in (1.7, "1", True, -1, 2 ** 64, HUGE):
        with pytest.raises(ValueError, match="seed"):
            env.seed(seed)
    assert np.array_equal(env.step(legal)[0][0].shape, obs[0].shape)


# ---- 8. RLlib env ----------------------------------------------------------------------

def test_rllib_env_checks_seeds_and_action_dicts():
    pytest.importorskip("ray.rllib")
    pytest.importorskip("torch")
    from majiang_env.integrations.rllib import MajiangMultiAgentEnv
    env = MajiangMultiAgentEnv({"hands_per_game": 1})
    obs, _ = env.reset(seed=5)
    before = json.dumps(env.game.record())
    for seed in ("5", 1.5, True, -1, 2 ** 64, HUGE, np.float64(5)):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
    assert json.dumps(env.game.record()) == before
    (agent, o), = obs.items()
    for bad in (None, 3, [agent], "player_0"):
        with pytest.raises(ValueError):
            env.step(bad)
    for action in (1.5, "3", None, True):
        with pytest.raises(ActionSpaceError):
            env.step({agent: action})
    assert json.dumps(env.game.record()) == before
    env.step({agent: _first_legal(o["action_mask"])})
    env.reset(seed=np.int64(5))


# ---- 10. Game.record(legal=...) --------------------------------------------------------

def test_game_record_legal_takes_true_or_false_only():
    g = Game(seed=0)
    for flag in (1, 0, "yes", None, np.int64(1), 1.0, [True]):
        with pytest.raises(ValueError, match="legal must be True or False"):
            g.record(legal=flag)
    assert g.record(legal=np.bool_(True)) == g.record(legal=True)


# ---- 11. SingleAgentEnv.reset(seed=...) -------------------------------------------------

def test_single_agent_env_reset_seed_raises_value_error_and_changes_nothing():
    env = SingleAgentEnv(hands_per_game=1, seat="random")
    env.reset(seed=7)
    state = _env_state(env)
    for seed in (-1, 1.5, "1", True, 2 ** 64, HUGE, np.float32(1)):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)
        assert _env_state(env) == state
    a = env.reset(seed=np.int64(9))[0]
    assert np.array_equal(a, env.reset(seed=9)[0])


# ---- 12. the arena -------------------------------------------------------------------

@pytest.mark.parametrize("agent", [lambda obs: HUGE, lambda obs: -HUGE, lambda obs: 2.5,
                                   Batched(lambda o, m: [HUGE] * len(m)),
                                   Batched(lambda o, m: [[1], [1, 2]])],
                         ids=["huge", "minus huge", "float", "batched huge", "batched ragged"])
def test_arena_agent_answers_raise_agent_error(agent):
    from majiang_env.arena import AgentError, run
    with pytest.raises(AgentError, match="agent"):
        run([agent, "greedy", "greedy", "greedy"], deals=1, rules={"hands_per_game": 1}, baseline=False)


# ---- documented decisions: close(), re-entry, agent classes -------------------------------

def test_every_env_face_stays_usable_after_close():
    for make in (majiang_env.raw_env, majiang_env.env):
        e = make(hands_per_game=1)
        e.reset(seed=0)
        e.close()
        e.reset(seed=1)
        e.step(_first_legal(e.observe(e.agent_selection)["action_mask"]))
    p = majiang_env.parallel_env(hands_per_game=1)
    obs, _ = p.reset(seed=0)
    p.close()
    p.reset(seed=1)
    s = SingleAgentEnv(hands_per_game=1)
    s.reset(seed=0)
    s.close()
    s.step(_first_legal(s.action_masks()))
    s.reset(seed=1)
    v = SeatVectorEnv(2, hands_per_game=1)
    v.reset(seed=0)
    v.close()
    v.step(np.array([_first_legal(m) for m in v.action_masks()]))
    v.reset(seed=1)


def test_action_masks_from_inside_an_opponent_callable():
    box = {}

    def peeking(obs, mask):
        try:
            box["env"].action_masks()
        except RuntimeError as e:
            box["error"] = str(e)
        return np.array([_first_legal(m) for m in mask])

    box["env"] = v = SeatVectorEnv(2, opponents=peeking, hands_per_game=1)
    v.reset(seed=0)
    while "error" not in box:
        v.step(np.array([_first_legal(m) for m in v.action_masks()]))
    assert "inside one of its opponent callables" in box["error"]

    seen = []

    def single_peek(obs):
        seen.append(s.action_masks().any())
        return _first_legal(obs["action_mask"])

    s = SingleAgentEnv(opponents=single_peek, seat=3, hands_per_game=1)
    s.reset(seed=0)
    assert seen and not any(seen)          # the learner is not to act while an opponent is


def test_seat_vector_env_builds_an_agent_class_as_a_factory():
    """A class is a factory in every face (the registry): built once, seeded, never called
    with the observations."""
    from majiang_env.agents.pretrained import PretrainedAgent

    class Batch:
        def act_batch(self, obs, mask):
            return mask.argmax(1)

    from majiang_env.agents import GreedyAgent
    with pytest.raises(ValueError, match="pass an instance"):
        SeatVectorEnv(2, opponents=Batch)          # not a factory: Batch() takes no seed
    for cls in (PretrainedAgent, GreedyAgent):
        env = SeatVectorEnv(2, opponents=cls, hands_per_game=1)
        env.reset(seed=0)
        for _ in range(5):
            env.step(env.action_masks().argmax(1))
    SeatVectorEnv(2, opponents=Batch())


@pytest.mark.parametrize("params", [{1: 2, "x": 3}, {"samples": 10 ** 5000}, {10 ** 5000: 1}])
def test_in_kernel_agent_parameters_of_any_type_raise_value_error(params):
    from majiang_env import SeatVectorEnv
    with pytest.raises(ValueError, match="parameter"):
        SeatVectorEnv(2, opponents=("search", params))
