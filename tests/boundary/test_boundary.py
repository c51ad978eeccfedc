"""Regression tests for boundary holes found by review: each failed before its fix.

The broad fuzz tests are in test_fuzz_boundary.py and test_fuzz_records.py;
these pin the exact cases the issue names.
"""
import json
import random
import subprocess
import sys

import numpy as np
import pytest
from helpers import biased_choice

import majiang_env
from majiang_env import Game, IllegalActionError, RecordError, replay, selfplay
from majiang_env.engine.checks import ActionSpaceError, ResetNeededError
from majiang_env.engine.vector import VectorGame, game_seed
from majiang_env.envs.single_agent import SingleAgentEnv


def _finished(seed=0, **rules):
    g = Game(seed=seed, rules=rules or None)
    rng = random.Random(seed)
    while not g.done:
        g.step(biased_choice(rng, g.legal_actions()))
    return g


# ---- 1. seats and indices ---------------------------------------------------

@pytest.mark.parametrize("seat", [-1, 4, 100000, -100000, 2 ** 64, 1.7, 1.0, "1", True, np.bool_(True),
                                  None, [1], np.float32(1)])
def test_observe_rejects_bad_seats(seat):
    g = Game(seed=1)
    before = g.record(legal=True)
    with pytest.raises(ValueError, match="seat"):
        g.observe(seat)
    assert g.record(legal=True) == before


def test_observe_minus_one_does_not_read_seat_3():
    """A past leak: observe(-1) returned seat 3's concealed-hand bitmask."""
    code = ("from majiang_env import Game\n"
            "g = Game(seed=1)\n"
            "for s in (-1, 100000, -100000, 2**31, 2**63):\n"
            "    try:\n"
            "        g.observe(s)\n"
            "    except ValueError:\n"
            "        pass\n"
            "    else:\n"
            "        raise SystemExit(f'observe({s}) was accepted')\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_numpy_integer_seats_equal_int_seats():
    g = Game(seed=2)
    for s in range(4):
        want = g.observe(s)
        for t in (np.int8, np.int64, np.uint8, np.uint64):
            assert np.array_equal(g.observe(t(s)), want)


def test_hand_and_batch_indices_are_validated():
    g = Game(seed=3, rules={"hands_per_game": 2})
    for h in (-1, 2, 4, 1.0, True, "0", None):
        with pytest.raises(ValueError, match="hand index"):
            g.wins(h)
        with pytest.raises(ValueError, match="hand index"):
            g.hand_deltas(h)
    vg = VectorGame(3, seed=0)
    with pytest.raises(ResetNeededError):
        vg.game(0)
    vg.reset()
    for i in (-1, 3, 1.0, True, None, "1", np.int64(-1)):
        with pytest.raises(ValueError, match="env index"):
            vg.game(i)
        with pytest.raises(ValueError, match="env index"):
            vg.record(i)
    assert vg.record(np.int64(2)) == Game(seed=game_seed(0, 2)).record()
    for bad in ((-1, 0), (0, -1), (2 ** 64, 0), (0, 2 ** 64), (None, 0), (0, 1.0), (True, 0)):
        with pytest.raises(ValueError):
            game_seed(*bad)


def test_agent_names_are_validated():
    e = majiang_env.raw_env()
    e.reset(seed=0)
    for bad in ("player_4", "player_-1", 0, None, ("player_0",)):
        with pytest.raises(ValueError, match="agent must be one of"):
            e.observe(bad)


# ---- 2. the mask buffer of VectorGame ---------------------------------------

def test_vector_arrays_are_read_only_and_validation_ignores_them():
    vg = VectorGame(4, seed=0)
    obs, mask, player = vg.reset()
    for arr in (obs, mask, player, vg.rewards, vg.done, vg.game_index):
        with pytest.raises(ValueError, match="read-only"):
            arr[...] = 1
    before = vg._st.copy()
    # even a caller who forces the view writable cannot make an illegal action legal
    code = ("import numpy as np\n"
            "from majiang_env.engine.vector import VectorGame\n"
            "from majiang_env import IllegalActionError\n"
            "vg = VectorGame(4, seed=0)\n"
            "obs, mask, player = vg.reset()\n"
            "try:\n"
            "    mask.flags.writeable = True\n"
            "except ValueError:\n"
            "    mask = vg._mask\n"
            "mask[:] = 1\n"
            "for a in (0, 36, 108, 111):\n"
            "    acts = np.array([a] * 4)\n"
            "    try:\n"
            "        vg.step(acts)\n"
            "    except IllegalActionError:\n"
            "        continue\n"
            "    raise SystemExit(f'illegal action {a} was stepped')\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    assert np.array_equal(before, vg._st)


def test_vector_step_rejects_a_bad_row_and_changes_no_game():
    vg = VectorGame(5, seed=1)
    vg.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        legal = [vg.game(i).legal_actions() for i in range(5)]
        acts = np.array([rng.choice(a) for a in legal])
        before = vg._st.copy()
        bad = acts.copy()
        i = int(rng.integers(5))
        bad[i] = next(a for a in range(156) if a not in legal[i])
        with pytest.raises(IllegalActionError, match=f"env {i}"):
            vg.step(bad)
        for wrong in (acts.astype(float), acts[:4], acts.astype(bool), acts.astype(object),
                      np.array(acts[:4].tolist() + [2 ** 64 - 1], np.uint64)):
            with pytest.raises(IllegalActionError):
                vg.step(wrong)
        assert np.array_equal(before, vg._st)
        vg.step(acts)


# ---- 3. a rejected raw_env step changes nothing -------------------------------

def _env_state(e):
    return (e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards), dict(e.terminations),
            dict(e.truncations), json.dumps(e.infos), json.dumps(e.game.record(legal=True)))


def test_illegal_raw_env_step_changes_nothing():
    e = majiang_env.raw_env()
    e.reset(seed=5)
    rng = random.Random(5)
    for _ in range(40):
        e.step(biased_choice(rng, e.game.legal_actions()))
    e._cumulative_rewards[e.agent_selection] = 7  # as after a hand this agent won
    before = _env_state(e)
    legal = e.game.legal_actions()
    for bad in [next(x for x in range(156) if x not in legal), -1, 156, 1.5, "3", None, True]:
        with pytest.raises(IllegalActionError):
            e.step(bad)
        assert _env_state(e) == before


# ---- 6. one action-type policy -----------------------------------------------

BAD_TYPES = [True, False, np.bool_(True), 120.5, 120.0, np.float32(120), "120", b"1", None, [120],
             (120,), {120: 1}, 1j, float("nan")]


def _fresh_envs():
    e = majiang_env.env()
    e.reset(seed=0)
    p = majiang_env.parallel_env()
    p.reset(seed=0)
    s = SingleAgentEnv(seat=0)
    s.reset(seed=0)
    s2 = SingleAgentEnv(seat=0, illegal="raise")
    s2.reset(seed=0)
    return e, p, s, s2


@pytest.mark.parametrize("bad", BAD_TYPES + [-1, 156, 2 ** 64 + 1])
def test_bad_action_types_are_rejected_everywhere(bad):
    g = Game(seed=0)
    before = g.record(legal=True)
    with pytest.raises(ActionSpaceError):
        g.step(bad)
    if not isinstance(bad, int) or isinstance(bad, bool):
        with pytest.raises(ActionSpaceError):
            g.is_legal(bad)
    assert g.record(legal=True) == before
    e, p, s, s2 = _fresh_envs()
    pz_bad = 157 if bad == 156 else bad   # the PettingZoo faces' Discrete(157) holds 156, the pass
    for env, value in ((e, pz_bad), (s, bad), (s2, bad)):
        with pytest.raises(ActionSpaceError):
            env.step(value)
    with pytest.raises(ActionSpaceError):
        p.step({a: pz_bad for a in p.agents})
    assert e.game.record() == p.aec_env.unwrapped.game.record() == before_game(0)
    assert s.game.record() == s2.game.record()


def before_game(seed):
    return Game(seed=seed).record()


def test_is_legal_out_of_range_ints_are_false():
    g = Game(seed=0)
    assert g.is_legal(-1) is False and g.is_legal(156) is False and g.is_legal(2 ** 70) is False
    legal = g.legal_actions()
    assert all(g.is_legal(a) for a in legal) and not any(g.is_legal(a) for a in range(156) if a not in legal)


@pytest.mark.parametrize("kind", [np.int8, np.int16, np.int64, np.uint8, np.uint64, "0d"])
def test_numpy_integer_actions_are_accepted_everywhere(kind):
    conv = (lambda a: np.array(a)) if kind == "0d" else kind
    e, p, s, s2 = _fresh_envs()
    g = Game(seed=0)
    for target in (g, e, s, s2):
        legal = (target.legal_actions() if target is g else
                 np.flatnonzero(target.action_masks()).tolist() if target in (s, s2) else
                 np.flatnonzero(target.observe(target.agent_selection)["action_mask"]).tolist())
        target.step(conv(legal[0]))
    sel = p.aec_env.agent_selection
    p.step({sel: conv(np.flatnonzero(p.aec_env.observe(sel)["action_mask"])[0])})
    assert e.game.record() == g.record() == p.aec_env.unwrapped.game.record()


def test_env_in_range_illegal_keeps_the_classic_convention():
    e = majiang_env.env()
    e.reset(seed=4)
    agent = e.agent_selection
    bad = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    e.step(np.int64(bad))
    assert all(e.terminations.values()) and e.rewards[agent] == -1000


def test_calls_before_reset_are_clear_errors():
    r = majiang_env.raw_env()
    for call in (lambda: r.step(0), lambda: r.observe("player_0"), lambda: r.last(), lambda: r.render()):
        with pytest.raises(ResetNeededError, match="reset"):
            call()
    r2 = majiang_env.raw_env(render_mode="ansi")
    with pytest.raises(ResetNeededError, match="reset"):
        r2.render()
    e = majiang_env.env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), lambda: e.last()):
        with pytest.raises(ResetNeededError, match="reset"):
            call()
    p = majiang_env.parallel_env()
    with pytest.raises(ResetNeededError, match="reset"):
        p.step({"player_0": 0})
    p.reset(seed=0)
    with pytest.raises(ActionSpaceError, match="acting agent"):
        p.step({})
    with pytest.raises(ResetNeededError):
        VectorGame(2).step(np.zeros(2, np.int64))


def test_single_agent_env_seat_is_validated():
    for seat in (1.0, True, 4, -1, "1", None):
        with pytest.raises(ValueError, match="seat"):
            SingleAgentEnv(seat=seat)
    assert SingleAgentEnv(seat=np.int64(2)).seat == 2


# ---- 4, 5. records -------------------------------------------------------------

def test_record_json_round_trip():
    for g in (_finished(0), _finished(1, hands_per_game=1), Game(seed=2)):
        for legal in (False, True):
            rec = g.record(legal=legal)
            assert rec == json.loads(json.dumps(rec))
            assert replay(rec).record(legal=legal) == rec


def _with_win(seed=0):
    g = _finished(seed)
    rec = json.loads(json.dumps(g.record(legal=True)))
    h = next(h for h, hand in enumerate(rec["hands"]) if hand["wins"])
    return rec, h


def _card_one_to_true(rec):
    for hand in rec["hands"]:
        for row in hand["squares"]:
            if 1 in row:
                row[row.index(1)] = True


def _mutations():
    rec, h = _with_win()
    w = f"hands[{h}].wins[0]"
    yield "wins[0] = 5", lambda r: r["hands"][h]["wins"].__setitem__(0, 5), f"{w}"
    yield "start_seat = 1", lambda r: r["hands"][0].__setitem__("start_seat", 1), "start_seat"
    yield "start_seat deleted", lambda r: r["hands"][0].pop("start_seat"), "start_seat"
    yield "start_seat '0'", lambda r: r["hands"][0].__setitem__("start_seat", "0"), "start_seat"
    yield "patterns fake", lambda r: r["hands"][h]["wins"][0].__setitem__("patterns", []), "patterns"
    yield "melds fake", lambda r: r["hands"][h]["wins"][0].__setitem__("melds", [["pung", "青1"]] * 4), "melds"
    yield "pair fake", lambda r: r["hands"][h]["wins"][0].__setitem__("pair", "青1" if
                                                                      r["hands"][h]["wins"][0]["pair"] != "青1"
                                                                      else "青2"), "pair"
    yield "index False", lambda r: r["hands"][0].__setitem__("index", False), "index"
    yield "delta float", lambda r: r["hands"][h]["deltas"].__setitem__(0, float(r["hands"][h]["deltas"][0])), \
        "deltas"
    yield "score float", lambda r: r["scores"].__setitem__(1, float(r["scores"][1])), "scores"
    yield "base float", lambda r: r["hands"][h]["wins"][0].__setitem__(
        "base", float(r["hands"][h]["wins"][0]["base"])), "base"
    yield "True card", _card_one_to_true, "squares"
    yield "rules {}", lambda r: r.__setitem__("rules", {}), "rules"
    yield "rules missing key", lambda r: r["rules"].pop("payment"), "rules"
    yield "unknown top key", lambda r: r.__setitem__("extra", 1), "extra"
    yield "unknown hand key", lambda r: r["hands"][0].__setitem__("extra", 1), "extra"
    yield "unknown win key", lambda r: r["hands"][h]["wins"][0].__setitem__("extra", 1), "wins"
    yield "seed bool", lambda r: r.__setitem__("seed", True), "seed"


@pytest.mark.parametrize("name,mutate,field", list(_mutations()), ids=[m[0] for m in _mutations()])
def test_malformed_records_raise_record_error_naming_the_field(name, mutate, field):
    rec, _ = _with_win()
    assert replay(rec).record(legal=True) == rec
    mutate(rec)
    with pytest.raises(RecordError, match=field.replace("[", r"\[").replace("]", r"\]")):
        replay(rec)


def test_hostile_record_texts():
    for text in ("[" * 100000, "{" * 100000, '{"a": ' * 50000, "", "null", "1e999", '"x"', b"\xff\xfe"):
        with pytest.raises(RecordError):
            replay(text)


def test_replay_auto_forced_must_be_a_bool():
    rec = Game(seed=0).record()
    for bad in ("no", 0, 1, None):
        with pytest.raises(ValueError, match="auto_forced"):
            replay(rec, auto_forced=bad)
    with pytest.raises(ValueError, match="auto_forced"):
        Game(auto_forced="no")


# ---- 7. selfplay arguments -------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(first_game=2 ** 64 + 1), dict(first_game=2 ** 63),
                                    dict(first_game=-1), dict(first_game=1.0),
                                    dict(agents=(["random"], "random", "random", "random")),
                                    dict(agents="random"), dict(agents=("random",) * 3),
                                    dict(agents=("greedy", "random", "random", None)),
                                    dict(num_games=-1), dict(num_games=2.0), dict(num_games=True),
                                    dict(num_envs=0), dict(num_envs=2 ** 40), dict(num_envs=1.5),
                                    dict(seed=-1), dict(seed=2 ** 64), dict(seed="0"),
                                    dict(num_threads=0), dict(num_threads=1.0), dict(progress="yes")])
def test_selfplay_rejects_bad_arguments(kwargs):
    args = dict(num_games=2, num_envs=2)
    args.update(kwargs)
    with pytest.raises(ValueError):
        selfplay(**args)


def test_selfplay_accepts_the_largest_first_game():
    s = selfplay(num_games=1, num_envs=1, first_game=2 ** 63 - 2)
    assert s["games"] == 1
