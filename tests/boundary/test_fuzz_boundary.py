"""Bad-input fuzz over every public entry point of ``majiang_env``.

Written from the public contract only (docs/api.md, README, the docstrings and the
error policy of the boundary), not from the implementation:

* actions: Python ``int`` (not ``bool``), numpy integer scalars (not
  ``np.bool_``) and 0-d integer arrays; anything else, any id outside 0..155
  (0..156 for the PettingZoo faces, whose 156 is the pass of an agent not to
  act) and any illegal in-range id raise ``IllegalActionError`` (``env()`` /
  ``parallel_env()`` / ``SingleAgentEnv(illegal="terminate")``: an in-range
  illegal id ends the game instead); ``Game.is_legal``: bad types raise,
  out-of-range ints give False;
* seats (``Game.observe``, ``render_ansi``, ``SingleAgentEnv(seat=)``), hand
  indices (``Game.wins``, ``Game.hand_deltas``), batch indices
  (``VectorGame.game``, ``VectorGame.record``), seeds and flags: ``ValueError``;
  agent names: ``ValueError``; calls before ``reset()``: ``RuntimeError``;
* rule sets (every face that takes one): ``ValueError``, whatever the dict's
  keys (of mixed types too); ints past Python's int-to-str limit (4300
  digits) anywhere a value is checked: the documented error, its message
  naming the value;
* the other faces: ``SingleAgentEnv`` opponents' answers (as strict as the
  learner's actions) and ``reset(seed=)``; ``SeatVectorEnv`` opponents (a class
  is refused at construction; re-entry is a ``RuntimeError``); the play mode's
  input lines; ``SB3VecEnv`` actions, ``set_attr`` and ``seed``; the RLlib env's
  seeds and action dicts; arena agents' answers (``AgentError``);
  ``PretrainedAgent(path=)`` weights files (``WeightsError`` at load, or a
  policy that always plays legal actions);
* a rejected call changes nothing (game state, rewards, cumulative rewards,
  infos, agent selection, buffers, numba's thread count).

Every probe runs in a child process (this file run as a script; the harness is
tests/childproc.py, shared with tests/engine/test_fuzz_records.py), so that a
segfault or a hang in the compiled kernel fails the test instead of killing
pytest: the child announces each probe on stderr before making it, and the
parent turns a crash or a silence into a failure of that probe, then resumes
the section after it. ``python tests/boundary/test_fuzz_boundary.py --child
'{"sections": ["game_step"]}'`` runs one section by hand (its results are JSON
lines on stdout); ``python tests/boundary/test_fuzz_boundary.py game_step``
runs it as the tests do and prints a summary.
"""
# ruff: noqa: B023  (the probes' lambdas are called at once, inside the loop iteration that made them)
import json
import os
import re
import sys

import pytest

HERE = os.path.abspath(__file__)
TESTS = os.path.dirname(os.path.dirname(HERE))
if TESTS not in sys.path:   # the child runs this file as a script; the harness is tests/childproc.py
    sys.path.insert(0, TESTS)
import childproc  # noqa: E402
from childproc import safe_repr  # noqa: E402
from childproc import short as _short  # noqa: E402

# section -> child group (one child process per group, run on demand)
GROUPS = {
    "game": ["game_step", "game_is_legal", "game_ctor", "game_wins", "game_hand_deltas",
             "game_observe", "hidden_info", "render_ansi"],
    "vector": ["vector_step", "vector_game", "vector_record", "vector_before_reset",
               "vector_tamper", "game_seed"],
    "selfplay": ["selfplay"],
    "pz": ["raw_step", "raw_observe", "pz_before_reset", "env_step", "parallel_step"],
    "single": ["single_raise", "single_terminate", "single_seat", "single_seed", "single_opponents"],
    "faces": ["rules_faces", "seat_vector_opponents", "play_input", "arena_answers", "pretrained_files"],
    "trainers": ["sb3", "rllib"],
}
SECTION_GROUP = {s: g for g, ss in GROUPS.items() for s in ss}
# the least number of probes each section must make
MIN_PROBES = {s: 1000 for s in SECTION_GROUP}
MIN_PROBES.update({"pz_before_reset": 20, "vector_before_reset": 10, "single_seat": 30,
                   "vector_tamper": 100, "hidden_info": 1000, "single_seed": 50, "single_opponents": 300,
                   "rules_faces": 250, "seat_vector_opponents": 40, "play_input": 100, "arena_answers": 150,
                   "pretrained_files": 300, "sb3": 300, "rllib": 300})
# sections that need an optional dependency (the test is skipped without it)
NEEDS = {"sb3": "stable_baselines3", "rllib": "ray.rllib"}
MESSAGE_SECTIONS = ["game_step", "game_is_legal", "game_ctor", "game_observe", "render_ansi",
                    "vector_step", "game_seed", "selfplay", "raw_step", "raw_observe", "env_step",
                    "parallel_step", "single_raise", "single_terminate", "single_seed", "single_opponents",
                    "rules_faces", "seat_vector_opponents", "sb3", "rllib", "arena_answers"]

_CACHE = {}


def _results(section):
    g = SECTION_GROUP[section]
    if g not in _CACHE:
        _CACHE[g] = childproc.run_sections(HERE, GROUPS[g])
    return _CACHE[g][section]


def _format(section, fails, probes):
    return childproc.format_fails(section, fails, probes)


@pytest.mark.parametrize("section", list(SECTION_GROUP))
def test_boundary(section):
    if section in NEEDS:
        pytest.importorskip(NEEDS[section])
    r = _results(section)
    assert not r["errors"], "%s: the section did not run through:\n%s" % (section, "\n".join(r["errors"]))
    fails = [f for f in r["fails"] if not f["msg"]]
    assert not fails, _format(section, fails, r["probes"])
    assert r["probes"] >= MIN_PROBES[section], "%s: only %d probes" % (section, r["probes"])


@pytest.mark.parametrize("section", MESSAGE_SECTIONS)
def test_error_messages(section):
    """IllegalActionError names the action (repr) and the legal ids; VectorGame's
    names the env index; seat errors name the value; argument errors name the
    argument."""
    r = _results(section)
    fails = [f for f in r["fails"] if f["msg"]]
    assert not fails, _format(section, fails, r["probes"])


# ---------------------------------------------------------------------------
# child side
# ---------------------------------------------------------------------------

def _desc(v):
    return "%s %s" % (type(v).__name__, _short(v, 80))


class Rep(childproc.Reporter):
    """Probe counter and failure sink of one section (JSON lines on stdout)."""

    def fail(self, kind, text, msg=False):
        self.emit_fail(kind=kind, text=text[:600], msg=msg)


def _call(fn):
    try:
        return True, fn()
    except Exception as e:  # noqa: BLE001
        return False, e


def _exc(e):
    return "%s: %s" % (type(e).__name__, _short(str(e), 200))


def _expect_raise(rep, what, fn, exc):
    """Run ``fn``; it must raise ``exc``. Returns (raised_expected, exception or None)."""
    ok, res = _call(fn)
    if ok:
        rep.fail("accepted", "%s returned %s" % (what, _short(res, 80)))
        return False, None
    if not isinstance(res, exc):
        rep.fail("wrong exception", "%s raised %s (want %s)" % (what, _exc(res), exc.__name__))
        return False, res
    return True, res


def _ints_in(msg):
    return {int(t) for t in re.findall(r"(?<![\w.])-?\d+(?![\w.])", msg)}


def _names_huge(msg):
    """Whether ``msg`` names an int too long for repr: as ``1.000e+5000 (an int of about 5001 digits)``."""
    return "digits" in msg


def _check_action_msg(rep, what, e, value, legal, kind=None):
    """The message names the action (its repr; for an in-range id of an accepted
    type its number is enough; an int past the int-to-str limit by its digits)
    and every legal id."""
    msg = str(e)
    r = safe_repr(value)
    if r is None:
        if not _names_huge(msg):
            rep.fail("message", "%s: message %r does not name the huge value" % (what, _short(msg, 200)), msg=True)
        return
    named = r in msg or (kind == "illegal" and int(value) in _ints_in(msg))
    if len(r) <= 40 and not named:
        rep.fail("message", "%s: message %r lacks repr %r of the action" % (what, _short(msg, 200), r), msg=True)
        return
    missing = sorted(set(legal) - _ints_in(msg))
    if missing:
        rep.fail("message", "%s: message %r lacks legal ids %s" % (what, _short(msg, 200), missing[:8]), msg=True)


def _check_value_msg(rep, what, e, value):
    msg = str(e)
    r = safe_repr(value)
    if r is None:
        if not _names_huge(msg):
            rep.fail("message", "%s: message %r does not name the huge value" % (what, _short(msg, 200)), msg=True)
        return
    s = str(value)
    if len(r) <= 40 and r not in msg and s not in msg:
        rep.fail("message", "%s: message %r does not name the value %r" % (what, _short(msg, 200), r), msg=True)


def _check_name_msg(rep, what, e, name):
    msg = str(e)
    if name not in msg and not (name == "rules" and "RuleConfig" in msg):
        rep.fail("message", "%s: message %r does not name the argument %r" % (what, _short(msg, 200), name), msg=True)


# ------------------------------- values ------------------------------------

HUGE = 10 ** 5000   # past Python's int-to-str limit (4300 digits): repr() and str() of it fail

# rule sets that are not RuleConfig field dicts: keys of other types (mixed with str ones, so that
# sorting them fails), unknown names, values out of range or of another type, huge ints
BAD_RULES = ["default", "next", 4, 4.0, True, [], (1,), object(), {"hands_per_game": 0},
             {"hands_per_game": 5}, {"hands_per_game": 1.5}, {"hands_per_game": "1"},
             {"bogus": 1}, {"chow_from": "left"}, {"payment": None}, {"wins_to_close": 0},
             {"kuikae": "yes"}, {1: 2, "x": 3}, {None: 1, "hands_per_game": 1}, {(1,): 2, 2.5: 3},
             {1: 1}, {b"kuikae": False}, {frozenset(): 1, "a": 2}, {"hands_per_game": HUGE},
             {"hands_per_game": 1, HUGE: 1}, {"Kuikae": False}, {"kuikae ": True}]


def _values():
    from decimal import Decimal
    from fractions import Fraction

    import numpy as np

    NP_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
               np.intp, np.longlong]

    def np_int_forms(a):
        """Accepted (valid-type) forms of the int ``a``: numpy scalars and 0-d arrays."""
        out = []
        for t in NP_INTS:
            info = np.iinfo(t)
            if info.min <= a <= info.max:
                out.append(t(a))
        for dt in ("<i8", ">i8", "<u2", ">u2", "i4", "u1"):
            info = np.iinfo(np.dtype(dt))
            if info.min <= a <= info.max:
                out.append(np.array(a, dtype=dt))
        return out

    OUT_OF_RANGE = [-1, -2, -155, -156, 156, 157, 199, 255, 256, 257, 1000, 2**15 - 1, 2**15, 2**16,
                    2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, -2**63,
                    -2**63 - 1, 2**64 - 1, 2**64, 2**64 + 1, -2**64, -2**70, 2**70, 10**30, -10**30,
                    2**1000, HUGE, -HUGE, HUGE + 7,
                    np.int64(-1), np.int64(156), np.int64(2**40), np.int64(-2**63), np.int64(2**63 - 1),
                    np.int32(-1), np.int32(2**31 - 1), np.int32(-2**31), np.int16(-1), np.int16(156),
                    np.int16(-32768), np.int8(-1), np.int8(-128), np.uint8(156), np.uint8(255),
                    np.uint16(156), np.uint16(65535), np.uint32(156), np.uint32(2**32 - 1), np.uint64(156),
                    np.uint64(2**63), np.uint64(2**64 - 1), np.array(-1), np.array(156), np.array(2**40),
                    np.array(-2**40), np.array(255, dtype=np.uint8), np.array(2**64 - 1, dtype=np.uint64),
                    np.array(-1, dtype=">i8"), np.array(156, dtype=">i2")]

    def wraps(a):
        """Out-of-range ints that equal ``a`` modulo 2**8, 2**16, 2**32 or 2**64."""
        return [a + 256, a - 256, a + 2**16, a - 2**16, a + 2**31, a + 2**32, a - 2**32, a + 2**63,
                a - 2**63, a + 2**64, a - 2**64, a + 2**65, a + 2**128,
                np.int64(a + 2**32), np.int64(a - 2**32), np.int64(a + 2**62), np.int64(a - 2**63),
                np.uint64(a + 2**63), np.uint64(a + 2**32), np.uint32(a + 2**16), np.uint16(a + 256),
                np.int16(a - 256), np.int32(a - 2**16), np.array(a + 2**32), np.array(a - 2**32),
                np.array(a + 256, dtype=np.uint16)]

    def odd_forms(a):
        """Values of a wrong type that look like the int ``a``."""
        return [float(a), np.float32(a), np.float64(a), np.float16(a), a + 0.5, float(a) + 1e-9,
                str(a), " %d" % a, str(a).encode(), np.str_(str(a)), bytearray(str(a).encode()),
                [a], (a,), {a: a}, {"action": a}, {a}, frozenset([a]), complex(a), complex(a, 1),
                np.complex64(a), Fraction(a), Decimal(a), np.array([a]), np.array([[a]]), np.array([a, a]),
                np.array(a, dtype=float), np.array(a, dtype=np.float32), np.array(a, dtype=object),
                np.array([a], dtype=object), np.array(a, dtype=complex), np.array(str(a)),
                np.array([a], dtype=np.int64)[0:1], range(a, a + 1), memoryview(bytes([a % 256])),
                np.datetime64(a, "s"), (lambda: a), np.longdouble(a)]

    ODD = [True, False, np.bool_(True), np.bool_(False), np.array(True), np.array([True]),
           np.array(False), None, float("nan"), float("inf"), -float("inf"), np.float32("nan"),
           np.float64("-inf"), "", " ", "nan", "None", b"", b"\x00", [], (), {}, set(), object(), Ellipsis,
           int, np.int64, type, slice(1), np.array([], dtype=np.int64), np.zeros((2, 2), dtype=int),
           np.zeros((0, 3), dtype=np.int8), np.array([1, 2, 3]), "1" * 1000, float(2**64), np.float64(1e300),
           np.array(None), np.array([None]), np.array({}), Exception("x")]

    BAD_SEATS = [-1, 4, 100000, -100000, 1.0, 1.7, "1", True, np.bool_(True), None,
                 5, -4, -5, 2**31, 2**32, 2**32 + 1, 2**64, 2**64 + 3, -2**70, 2**63, -2**63,
                 np.int64(-1), np.int64(4), np.uint8(4), np.int8(-1), np.uint64(2**64 - 1), np.int64(2**32 + 1),
                 np.uint32(2**32 - 1), np.int16(-32768), np.array(1), np.array([1]), np.array(1.0), 0.0,
                 float("nan"), float("inf"), "0", "player_1", b"1", [1], (1,), {1: 1}, {1}, False,
                 np.bool_(False), 1 + 0j, np.float64(2), np.float32(0), Decimal(1), Fraction(1), object(),
                 HUGE, -HUGE]

    def bad_index(n):
        """Bad 0-based indices for a range of size ``n``."""
        return [-1, -2, -n, -n - 1, n, n + 1, n + 4, 100, 2**31, 2**32, 2**32 + 1, 2**63, 2**64,
                2**64 + 1, -2**64, -2**70, 10**30, np.int64(-1), np.int64(n), np.uint8(n), np.int8(-1),
                np.uint64(2**64 - 1), np.int32(-1), np.int64(2**32), 0.0, 1.0, 0.5, float("nan"), float("inf"),
                "0", "1", b"0", None, True, False, np.bool_(True), np.bool_(False), [0], (0,), {0: 0}, {0},
                0j, np.float64(0), np.float32(1), np.array(0), np.array([0]), np.array(0.0),
                Decimal(0), Fraction(0), object(), slice(0, 1), Ellipsis, np.str_("0"), HUGE, -HUGE]

    BAD_SEEDS = [-1, -2, -2**63, -2**64, -2**70, 2**64, 2**64 + 1, 2**65, 2**128, 10**30,
                 np.int64(-1), np.int8(-1), 0.0, 1.0, 1.5, float("nan"), float("inf"), "0", "1", b"1",
                 True, False, np.bool_(True), np.bool_(False), [1], (1,), {1: 1}, {1}, 1j, np.float64(1),
                 np.float32(1), np.array([1]), np.array(1.0), np.array(1, dtype=object), np.array(1),
                 Decimal(1), Fraction(1), object(), bytearray(b"1"), HUGE, -HUGE, [HUGE]]

    return dict(np=np, np_int_forms=np_int_forms, OUT_OF_RANGE=OUT_OF_RANGE, wraps=wraps,
                odd_forms=odd_forms, ODD=ODD, BAD_SEATS=BAD_SEATS, bad_index=bad_index,
                BAD_SEEDS=BAD_SEEDS)


V = None


def action_probes(legal, rng, n_other=260):
    """(value, kind) probes at a decision with legal ids ``legal``: kind is
    "illegal" (an in-range id that is not legal), "range" (an integer outside
    0..155) or "type" (not an accepted action type)."""
    L = set(legal)
    illegal = [a for a in range(156) if a not in L]
    out = [(a, "illegal") for a in illegal]
    other = []
    for a in rng.sample(illegal, min(10, len(illegal))):
        other += [(v, "illegal") for v in V["np_int_forms"](a)]
    other += [(v, "range") for v in V["OUT_OF_RANGE"]]
    for a in list(legal)[:6]:
        other += [(v, "range") for v in V["wraps"](a)]
    for a in list(legal)[:3] + rng.sample(illegal, min(2, len(illegal))):
        other += [(v, "type") for v in V["odd_forms"](a)]
    other += [(v, "type") for v in V["ODD"]]
    rng.shuffle(other)
    # the ODD constants (bools included) at every decision, the rest sampled
    must = [(v, k) for v, k in other if k == "type" and any(v is c for c in V["ODD"])]
    rest = [(v, k) for v, k in other if not any(v is c for c in V["ODD"])]
    return out + must + rest[:n_other]


# ------------------------------- games -------------------------------------

GAME_CONFIGS = [  # RuleConfig overrides, auto_forced, seed
    ({}, True, 11),
    ({"hands_per_game": 1}, False, 12),
    ({"hands_per_game": 1, "exchange": False}, True, 13),
    ({"hands_per_game": 2, "discard_drawn": True, "kuikae": False, "chow_from": "previous"}, True, 14),
    ({"hands_per_game": 1, "wins_to_close": 1, "furiten": True, "require_yaku": True,
      "payment": "winner_only", "side_cards_public": True}, False, 15),
]
PROBE_AT = {0, 1, 4, 13, 31, 77, 160, 290}


class GamePlayer:
    """A seeded random-legal game that can be rebuilt from its history."""

    def __init__(self, rules_kw, auto_forced, seed):
        self.args = (rules_kw, auto_forced, seed)
        self.hist = []
        self.g = self._new()

    def _new(self):
        from majiang_env import Game, RuleConfig
        kw, af, seed = self.args
        return Game(rules=RuleConfig(**kw), seed=seed, auto_forced=af)

    def restore(self):
        self.g = self._new()
        for a in self.hist:
            self.g.step(a)


def game_snap(g):
    import numpy as np
    return (g.current_player, g.done, tuple(g.legal_actions()), np.asarray(g.scores).tobytes(),
            g.legal_mask().tobytes(), tuple(g.observe(s).tobytes() for s in range(4)),
            str(g.phase), g.lap, g.hand_index)


def game_full(g):
    return json.dumps(g.record(legal=True), sort_keys=True)


def flat_decisions(rec):
    return [d[:2] for h in rec["hands"] for d in h["decisions"]]


def game_points(rng, rep, valid_forms=False):
    """Yield a GamePlayer at the PROBE_AT decisions of every GAME_CONFIGS game and
    once more when it is finished. With ``valid_forms`` each move is made with a
    random accepted form of the id and checked to have applied exactly that id."""
    for kw, af, seed in GAME_CONFIGS:
        gp = GamePlayer(kw, af, seed)
        d = 0
        while not gp.g.done:
            if d in PROBE_AT:
                yield gp
            legal = gp.g.legal_actions()
            a = rng.choice(legal)
            if valid_forms:
                forms = [a] + V["np_int_forms"](a)
                f = rng.choice(forms)
                before = flat_decisions(gp.g.record())
                seat = gp.g.current_player
                ok, res = _call(lambda: gp.g.step(f))
                gp.hist.append(a)
                if not ok:
                    rep.fail("valid rejected", "Game.step(%s) at a decision with legal %s raised %s"
                             % (_desc(f), legal, _exc(res)))
                    gp.restore()
                else:
                    after = flat_decisions(gp.g.record())
                    if after[:len(before) + 1] != before + [[seat, a]]:
                        rep.fail("valid misapplied", "Game.step(%s): the record's next decision is %s, not %s"
                                 % (_desc(f), after[len(before):len(before) + 1], [seat, a]))
                        gp.restore()
            else:
                gp.g.step(a)
                gp.hist.append(a)
            d += 1
        yield gp


def sec_game_step(rep, rng):
    from majiang_env import IllegalActionError
    for gp in game_points(rng, rep, valid_forms=True):
        g = gp.g
        legal = g.legal_actions()
        snap, full = game_snap(g), game_full(g)
        for v, kind in action_probes(legal, rng):
            what = "Game.step(%s) [%s; legal %s]" % (_desc(v), kind, legal if len(legal) < 20 else "...")
            if not rep.start(what):
                continue
            good, e = _expect_raise(rep, what, lambda: g.step(v), IllegalActionError)
            if good:
                _check_action_msg(rep, what, e, v, legal, kind)
            if game_snap(g) != snap:
                rep.fail("state changed", "%s changed the game" % what)
                gp.restore()
                g = gp.g
        if game_full(g) != full:
            rep.fail("state changed", "rejected Game.step calls changed record(legal=True) (%s)" % (gp.args,))
            gp.restore()


def sec_game_is_legal(rep, rng):
    import numpy as np

    from majiang_env import IllegalActionError
    for gp in game_points(rng, rep):
        g = gp.g
        legal = g.legal_actions()
        snap, full = game_snap(g), game_full(g)
        probes = action_probes(legal, rng) + [(a, "legal") for a in legal] + \
            [(f, "legal") for a in legal[:3] for f in V["np_int_forms"](a)]
        for v, kind in probes:
            what = "Game.is_legal(%s) [%s]" % (_desc(v), kind)
            if not rep.start(what):
                continue
            if kind == "type":
                good, e = _expect_raise(rep, what, lambda: g.is_legal(v), IllegalActionError)
                if good:  # the action's repr (is_legal has no duty to list the legal ids)
                    _check_action_msg(rep, what, e, v, [])
            else:
                ok, res = _call(lambda: g.is_legal(v))
                want = kind == "legal"
                if not ok:
                    rep.fail("wrong exception", "%s raised %s (want %s)" % (what, _exc(res), want))
                elif not isinstance(res, (bool, np.bool_)) or bool(res) is not want:
                    rep.fail("wrong answer", "%s returned %s (want %s)" % (what, _short(res), want))
            if game_snap(g) != snap:
                rep.fail("state changed", "%s changed the game" % what)
                gp.restore()
                g = gp.g
        if game_full(g) != full:
            rep.fail("state changed", "Game.is_legal calls changed record(legal=True)")
            gp.restore()


def _valid_squares(rng, hands):
    import numpy as np
    out = []
    for _ in range(hands):
        p = list(range(144))
        rng.shuffle(p)
        out.append(np.array(p, dtype=np.int64).reshape(4, 36))
    return np.array(out)


def _bad_squares(rng, hpg):
    """(description, squares) that are not a (hpg, 4, 36) integer array of the 144 ids per hand."""
    np = V["np"]
    base = _valid_squares(rng, hpg)
    out = []

    def at():
        return rng.randrange(hpg), rng.randrange(4), rng.randrange(36)

    for _ in range(40):
        s = base.copy()
        i, j = at(), at()
        while i[0] != j[0] or i == j:
            j = at()
        s[i] = s[j]
        out.append(("duplicate card %d in hand %d" % (s[j], i[0]), s))
    for v in (144, 145, 255, 256, 1000, -1, -144, 2**31 - 1, -2**31, 2**40, -2**62):
        for _ in range(3):
            s = base.copy()
            s[at()] = v
            out.append(("card id %d" % v, s))
    for off in (2**32, -2**32, 2**16, 256, -256, 768, 2**33, 2**48, 2**62):
        for _ in range(3):
            s = base.copy()
            i = at()
            s[i] = s[i] + off
            out.append(("card id + %d (equal modulo a power of two)" % off, s))
    for _ in range(3):
        s = base.astype(np.uint64)
        s[at()] += np.uint64(2**63)
        out.append(("uint64 card id + 2**63", s))
        s = base.astype(np.uint64)
        s[at()] += np.uint64(2**32)
        out.append(("uint64 card id + 2**32", s))
        s = base.astype(np.uint16)
        s[at()] += np.uint16(256)
        out.append(("uint16 card id + 256", s))
    for dt in (np.float64, np.float32, np.float16, bool, object, complex, str, "U3", "S3", "datetime64[s]"):
        try:
            out.append(("dtype %s" % np.dtype(dt), base.astype(dt)))
        except (TypeError, ValueError):
            pass
    f = base.astype(float)
    f[0, 0, 0] = np.nan
    out.append(("float with nan", f))
    f = base.astype(float)
    f[0, 1, 2] += 0.5
    out.append(("float with a fraction", f))
    # (the number of hands given is not probed: the contract does not say it must be hands_per_game)
    shapes = [(hpg, 4, 35), (hpg, 4, 37), (hpg, 3, 36), (hpg, 5, 36), (hpg, 144),
              (144 * hpg,), (hpg, 4, 36, 1), (1, hpg, 4, 36), (hpg, 36, 4)]
    if hpg == 1:
        shapes.append((4, 36))
    for shp in shapes:
        n = int(np.prod(shp))
        flat = np.concatenate([np.arange(144)] * (n // 144 + 1))[:n]
        out.append(("shape %s" % (shp,), flat.reshape(shp)))
    out.append(("4x36 transposed to 36x4 (same ids)", base.transpose(0, 2, 1)))
    lst = base.tolist()
    l1 = json.loads(json.dumps(lst))
    l1[0][0][0] = float(l1[0][0][0])
    out.append(("list with a float", l1))
    l1 = json.loads(json.dumps(lst))
    k = l1[0][0].index(1) if 1 in l1[0][0] else None
    if k is None:
        for p in range(4):
            if 1 in l1[0][p]:
                l1[0][p][l1[0][p].index(1)] = True
    else:
        l1[0][0][k] = True
    out.append(("list with True in place of card 1", l1))
    for desc, change in (("list with a str", lambda x: x[0][1].__setitem__(5, str(x[0][1][5]))),
                         ("list with None", lambda x: x[0][2].__setitem__(7, None)),
                         ("ragged list", lambda x: x[0][3].pop()),
                         ("ragged list, 37 ids", lambda x: x[0][3].append(0))):
        l1 = json.loads(json.dumps(lst))
        change(l1)
        out.append((desc, l1))
    o = base.astype(object)
    o[0, 0, 0] = True if base[0, 0, 0] == 1 else o[0, 0, 0] + 0.0
    out.append(("object array with a bool/float", o))
    out += [("a str", "squares"), ("an int", 5), ("a dict", {}), ("a float", 1.0), ("an object", object()),
            ("True", True), ("bytes", bytes(144)), ("a 0-d array", np.array(0)), ("empty list", []),
            ("list of empty lists", [[], [], [], []])]
    return out


def sec_game_ctor(rep, rng):
    from majiang_env import Game, RuleConfig
    np = V["np"]
    ref = Game(seed=99)
    ref.step(ref.legal_actions()[0])
    ref_snap, ref_full = game_snap(ref), game_full(ref)
    rules_opts = [None, RuleConfig(hands_per_game=1)]
    for v in V["BAD_SEEDS"]:
        for rules in rules_opts:
            for af in (True, False):
                what = "Game(seed=%s, rules=%s, auto_forced=%s)" % (_desc(v), rules and "hpg=1", af)
                if rep.start(what):
                    good, e = _expect_raise(rep, what, lambda: Game(rules=rules, seed=v, auto_forced=af), ValueError)
                    if good:
                        _check_name_msg(rep, what, e, "seed")
    BAD_FLAGS = [0, 1, -1, 2, 1.0, 0.0, "True", "False", "", "yes", None, [], [True], (True,), {}, np.int64(1),
                 np.int8(0), np.float64(1), 1j, np.array([True]), np.array(1), object(), b"1", "1",
                 float("nan"), np.uint8(1), HUGE]
    from majiang_env import replay
    flagged = Game(rules=RuleConfig(hands_per_game=1), seed=3, auto_forced=False)
    flagged.step(flagged.legal_actions()[0])
    flagged_rec = flagged.record()
    for v in BAD_FLAGS:     # the other flags: Game.record(legal=), replay(auto_forced=)
        for what, call, name in (("Game.record(legal=%s)" % _desc(v), lambda: flagged.record(legal=v), "legal"),
                                 ("replay(rec, auto_forced=%s)" % _desc(v),
                                  lambda: replay(flagged_rec, auto_forced=v), "auto_forced")):
            if rep.start(what):
                good, e = _expect_raise(rep, what, call, ValueError)
                if good:
                    _check_name_msg(rep, what, e, name)
    if flagged.record() != flagged_rec:
        rep.fail("state changed", "rejected Game.record(legal=...) calls changed the game")
    for v in BAD_FLAGS:
        for seed in (0, 1, 2**64 - 1):
            for rules in rules_opts:
                what = "Game(seed=%d, auto_forced=%s)" % (seed, _desc(v))
                if rep.start(what):
                    good, e = _expect_raise(rep, what, lambda: Game(rules=rules, seed=seed, auto_forced=v), ValueError)
                    if good:
                        _check_name_msg(rep, what, e, "auto_forced")
    for v in BAD_RULES + [RuleConfig]:
        for seed in (0, 7):
            for af in (True, False):
                what = "Game(rules=%s, seed=%d)" % (_desc(v), seed)
                if rep.start(what):
                    _expect_raise(rep, what, lambda: Game(rules=v, seed=seed, auto_forced=af), ValueError)
    for hpg in (1, 2, 4):
        rules = RuleConfig(hands_per_game=hpg)
        # the valid squares of this shape are accepted (sanity of the probes below)
        good_sq = _valid_squares(rng, hpg)
        ok, res = _call(lambda: Game(rules=rules, seed=0, squares=good_sq))
        if not ok:
            rep.fail("valid rejected", "Game(squares=<valid (%d,4,36) int64>) raised %s" % (hpg, _exc(res)))
        for _ in range(1 if hpg == 4 else 2):
            for desc, sq in _bad_squares(rng, hpg):
                for af in (True, False):
                    what = "Game(hands_per_game=%d, squares=<%s>, auto_forced=%s)" % (hpg, desc, af)
                    if rep.start(what):
                        good, e = _expect_raise(rep, what, lambda: Game(rules=rules, seed=0, auto_forced=af,
                                                                        squares=sq), ValueError)
                        if good:
                            _check_name_msg(rep, what, e, "squares")
    if game_snap(ref) != ref_snap or game_full(ref) != ref_full:
        rep.fail("state changed", "rejected Game(...) calls changed another, existing game")


def _index_section(rep, rng, method):
    for gp in game_points(rng, rep):
        g = gp.g
        hpg = g.rules.hands_per_game
        snap = game_snap(g)
        for h in range(hpg):
            ok, res = _call(lambda: getattr(g, method)(h))
            if not ok:
                rep.fail("valid rejected", "Game.%s(%d) (hands_per_game=%d) raised %s" % (method, h, hpg, _exc(res)))
        for v in V["bad_index"](hpg):
            what = "Game.%s(%s) (hands_per_game=%d)" % (method, _desc(v), hpg)
            if not rep.start(what):
                continue
            _expect_raise(rep, what, lambda: getattr(g, method)(v), ValueError)
            if game_snap(g) != snap:
                rep.fail("state changed", "%s changed the game" % what)
                gp.restore()
                g = gp.g


def sec_game_wins(rep, rng):
    _index_section(rep, rng, "wins")


def sec_game_hand_deltas(rep, rng):
    _index_section(rep, rng, "hand_deltas")


def _seat_views(g):
    return [g.observe(s).tobytes() for s in range(4)]


def sec_game_observe(rep, rng):
    np = V["np"]
    for gp in game_points(rng, rep):
        g = gp.g
        snap = game_snap(g)
        views = _seat_views(g)
        for s in range(4):
            for f in [np.int8(s), np.int64(s), np.uint8(s), np.int16(s), np.uint64(s)]:
                ok, res = _call(lambda: g.observe(f))
                if not ok:
                    rep.fail("valid rejected", "Game.observe(%s) raised %s" % (_desc(f), _exc(res)))
                elif np.asarray(res).tobytes() != views[s]:
                    rep.fail("wrong view", "Game.observe(%s) differs from Game.observe(%d)" % (_desc(f), s))
        for v in V["BAD_SEATS"]:
            what = "Game.observe(%s)" % _desc(v)
            if not rep.start(what):
                continue
            ok, res = _call(lambda: g.observe(v))
            if ok:
                leak = [s for s in range(4) if isinstance(res, np.ndarray) and res.tobytes() == views[s]]
                rep.fail("accepted", "%s returned %s"
                         % (what, ("seat %d's view" % leak[0]) if leak else _short(res, 60)))
            elif not isinstance(res, ValueError):
                rep.fail("wrong exception", "%s raised %s (want ValueError)" % (what, _exc(res)))
            else:
                _check_value_msg(rep, what, res, v)
            if game_snap(g) != snap:
                rep.fail("state changed", "%s changed the game" % what)
                gp.restore()
                g = gp.g


def sec_render_ansi(rep, rng):
    from majiang_env.views.render import render_ansi
    for gp in game_points(rng, rep):
        g = gp.g
        snap = game_snap(g)
        for s in (None, 0, 3):
            ok, res = _call(lambda: render_ansi(g, s))
            if not ok or not isinstance(res, str):
                rep.fail("valid rejected", "render_ansi(game, %r) gave %s" % (s, _exc(res) if not ok else _short(res)))
        for v in V["BAD_SEATS"]:
            if v is None:
                continue
            what = "render_ansi(game, %s)" % _desc(v)
            if not rep.start(what):
                continue
            good, e = _expect_raise(rep, what, lambda: render_ansi(g, v), ValueError)
            if good:
                _check_value_msg(rep, what, e, v)
            if game_snap(g) != snap:
                rep.fail("state changed", "%s changed the game" % what)
                gp.restore()
                g = gp.g


def sec_hidden_info(rep, rng):
    """Two deals that differ only in cards hidden from the observer (in two
    other seats' concealed hands, or deep in their squares), played with the
    same decisions: the observer's bytes must be equal at every decision, for
    every accepted seat form; bad seat forms raise and never return a view."""
    from itertools import combinations

    from majiang_env import Game, RuleConfig
    np = V["np"]
    bad_forms = [-1, 4, 100000, -100000, 1.0, 1.7, "1", True, np.bool_(True), None,
                 -2, -3, -4, 5, 2**32, 2**32 + 3, 2**64 - 1, np.int64(-1), np.uint8(255), np.int8(-1)]
    for rules in (RuleConfig(hands_per_game=1), RuleConfig(hands_per_game=1, exchange=False)):
        for seed in (21, 22):
            base = np.array(Game(rules=rules, seed=seed).record()["hands"][0]["squares"], dtype=np.int64)
            for o in range(4):
                for p, q in combinations([s for s in range(4) if s != o], 2):
                    for where in ("hand", "square"):
                        lo, hi = (0, 13) if where == "hand" else (26, 36)
                        while True:
                            i, j = rng.randrange(lo, hi), rng.randrange(lo, hi)
                            if base[p, i] // 4 != base[q, j] // 4:
                                break
                        sw = base.copy()
                        sw[p, i], sw[q, j] = base[q, j], base[p, i]
                        g1 = Game(rules=rules, seed=seed, auto_forced=False, squares=base[None])
                        g2 = Game(rules=rules, seed=seed, auto_forced=False, squares=sw[None])
                        if where == "hand" and g1.observe(p).tobytes() == g2.observe(p).tobytes():
                            rep.fail("test setup", "the swap did not change seat %d's own view" % p)
                        step = 0
                        while not g1.done and not g2.done:
                            forms = [o, np.int8(o), np.int64(o), np.uint8(o)]
                            want = g1.observe(o).tobytes()
                            for f in forms:
                                what = "observe(%s) after %d equal decisions (swap %s of seats %d,%d)" % (
                                    _desc(f), step, where, p, q)
                                if not rep.start(what):
                                    continue
                                a, b = _call(lambda: g1.observe(f)), _call(lambda: g2.observe(f))
                                if not a[0] or not b[0]:
                                    rep.fail("valid rejected", "%s raised %s"
                                             % (what, _exc(a[1] if not a[0] else b[1])))
                                    continue
                                if a[1].tobytes() != want:
                                    rep.fail("wrong view", "%s differs from observe(%d)" % (what, o))
                                if b[1].tobytes() != a[1].tobytes():
                                    rep.fail("hidden card leak", "%s: seat %d's bytes differ between deals that differ "
                                             "only in seats %d/%d's hidden cards" % (what, o, p, q))
                            if step % 15 == 0:
                                views = _seat_views(g1)
                                for v in bad_forms:
                                    what = "observe(%s) at decision %d" % (_desc(v), step)
                                    if not rep.start(what):
                                        continue
                                    ok, res = _call(lambda: g1.observe(v))
                                    if ok:
                                        leak = [s for s in range(4) if isinstance(res, np.ndarray)
                                                and res.tobytes() == views[s]]
                                        rep.fail("hidden card leak" if leak else "accepted",
                                                 "%s returned %s" % (what, ("seat %d's view" % leak[0]) if leak
                                                                     else _short(res, 60)))
                                    elif not isinstance(res, ValueError):
                                        rep.fail("wrong exception", "%s raised %s" % (what, _exc(res)))
                            if g1.current_player != g2.current_player:
                                break
                            common = sorted(set(g1.legal_actions()) & set(g2.legal_actions()))
                            if not common:
                                break
                            a = rng.choice(common)
                            g1.step(a)
                            g2.step(a)
                            step += 1


# ------------------------------- vector ------------------------------------

class VecPlayer:
    def __init__(self, B, seed):
        from majiang_env.engine.vector import VectorGame
        self.B, self.seed, self.hist = B, seed, []
        self.vg = VectorGame(B, seed=seed)
        self.out = self.vg.reset()

    def legal(self):
        return [self.vg.game(i).legal_actions() for i in range(self.B)]

    def restore(self):
        from majiang_env.engine.vector import VectorGame
        self.vg = VectorGame(self.B, seed=self.seed)
        self.out = self.vg.reset()
        for a in self.hist:
            self.out = self.vg.step(a)

    def advance(self, rng):
        np = V["np"]
        a = np.array([rng.choice(ids) for ids in self.legal()], dtype=np.int64)
        self.out = self.vg.step(a)
        self.hist.append(a)


def vec_snap(vg):
    return tuple(getattr(vg, n).tobytes() for n in ("obs", "mask", "player", "rewards", "done", "game_index"))


def vec_full(vg):
    return json.dumps([vg.record(i) for i in range(vg.num_envs)], sort_keys=True)


def sec_vector_step(rep, rng):
    from majiang_env import IllegalActionError
    np = V["np"]
    for B, seed, steps in ((5, 3, 14), (64, 4, 3)):
        vp = VecPlayer(B, seed)
        for _ in range(steps):
            for _ in range(rng.randrange(1, 25)):
                vp.advance(rng)
            vg = vp.vg
            legal = vp.legal()
            for i in range(B):
                if sorted(np.flatnonzero(vp.out[1][i]).tolist()) != legal[i]:
                    rep.fail("mask mismatch", "mask[%d] != game(%d).legal_actions()" % (i, i))
            good = np.array([rng.choice(ids) for ids in legal], dtype=np.int64)
            snap, full = vec_snap(vg), vec_full(vg)
            probes = []
            for r in rng.sample(range(B), min(B, 3)):
                bad = action_probes(legal[r], rng, n_other=120)
                for v, kind in rng.sample(bad, min(len(bad), 70 if B < 64 else 25)):
                    if kind == "type":
                        arr = [int(x) for x in good]
                        arr[r] = v
                        # a wrong-typed entry is a dtype error: the env index need not be named
                        probes.append(("list, entry %d = %s [type]" % (r, _desc(v)), arr, -1))
                        continue
                    iv = int(v)
                    if np.iinfo(np.int64).min <= iv <= np.iinfo(np.int64).max:
                        arr = good.copy()
                        arr[r] = iv
                        probes.append(("int64 array, entry %d = %d [%s]" % (r, iv, kind), arr, r))
                    arr = [int(x) for x in good]
                    arr[r] = iv
                    probes.append(("list of ints, entry %d = %s [%s]" % (r, _short(iv, 60), kind), arr, r))
                for dt, val in (("u1", 200), ("u1", 156), ("i2", -1), ("u8", 2**63 + int(good[r])),
                                ("u8", 2**64 - 1), ("i4", 2**31 - 1), ("i4", -2**31), ("u2", 256 + int(good[r])),
                                ("i2", 256 + int(good[r])), (">i8", 2**32 + int(good[r])), ("u4", 2**32 - 1)):
                    arr = good.astype(dt)
                    arr[r] = val
                    probes.append(("%s array, entry %d = %d [range]" % (dt, r, val), arr, r))
                ill = [a for a in range(156) if a not in legal[r]]
                for dt in ("u1", "i2", ">i8", "u8"):
                    arr = good.astype(dt)
                    arr[r] = rng.choice(ill)
                    probes.append(("%s array, entry %d = %d [illegal]" % (dt, r, int(arr[r])), arr, r))
            gl = good.tolist()
            whole = [good.astype(bool), good.astype(float), good.astype(np.float32), good.astype(object),
                     good.astype(complex), good.astype(str), good[:-1], np.concatenate([good, good[:1]]),
                     good.reshape(B, 1), good.reshape(1, B), np.stack([good, good], 1), good[:0],
                     np.array(int(good[0])), int(good[0]), np.int64(good[0]), None, "", str(gl), {0: 1},
                     set(gl), gl[:-1], gl + [gl[0]], [[x] for x in gl], [float(x) for x in gl],
                     [bool(x % 2) for x in gl], np.ones(B, dtype=bool), np.zeros(B, dtype=bool),
                     np.full(B, np.nan), np.array([gl, gl]), good.astype("datetime64[s]"), object(),
                     np.array([str(x) for x in gl], dtype=object), b"\x00" * B, 1.5]
            for w in whole:
                probes.append(("actions = %s [shape/dtype]" % _desc(w), w, None))
            for what_, arr, r in probes:
                what = "VectorGame(%d).step(%s)" % (B, what_)
                if not rep.start(what):
                    continue
                ok, e = _expect_raise(rep, what, lambda: vg.step(arr), IllegalActionError)
                if ok and r is not None and r >= 0:
                    if r not in _ints_in(str(e)):
                        rep.fail("message", "%s: message %r does not name env %d" % (what, _short(str(e), 200), r),
                                 msg=True)
                if vec_snap(vg) != snap:
                    rep.fail("state changed", "%s changed the batch's buffers" % what)
                    vp.restore()
                    vg = vp.vg
            if vec_full(vg) != full:
                rep.fail("state changed", "rejected VectorGame.step calls changed a game of the batch")
                vp.restore()
            # accepted forms apply exactly the given actions (strided, big-endian, list)
            for form in ("strided", "big-endian", "list", "uint8"):
                vg = vp.vg
                legal = vp.legal()
                a = np.array([rng.choice(ids) for ids in legal], dtype=np.int64)
                seats = [vg.game(i).current_player for i in range(B)]
                before = [flat_decisions(vg.record(i)) for i in range(B)]
                if form == "strided":
                    buf = np.zeros(2 * B, dtype=np.int64)
                    buf[::2] = a
                    arg = buf[::2]
                elif form == "big-endian":
                    arg = a.astype(">i8")
                elif form == "list":
                    arg = a.tolist()
                else:
                    arg = a.astype(np.uint8)
                ok, res = _call(lambda: vg.step(arg))
                vp.hist.append(a)
                if not ok:
                    rep.fail("valid rejected", "VectorGame.step(<%s legal actions>) raised %s" % (form, _exc(res)))
                    vp.restore()
                    continue
                vp.out = res
                done = res[4]
                for i in range(B):
                    if done[i]:
                        continue
                    after = flat_decisions(vg.record(i))
                    if after[:len(before[i]) + 1] != before[i] + [[seats[i], int(a[i])]]:
                        rep.fail("valid misapplied", "VectorGame.step(<%s>): slot %d applied %s, not %s"
                                 % (form, i, after[len(before[i]):len(before[i]) + 1], [seats[i], int(a[i])]))
                        vp.restore()
                        break


def _vec_index_section(rep, rng, method):
    for B, seed in ((3, 8), (6, 9)):
        vp = VecPlayer(B, seed)
        for _ in range(10):
            for _ in range(rng.randrange(1, 30)):
                vp.advance(rng)
            vg = vp.vg
            snap, full = vec_snap(vg), vec_full(vg)
            for i in (0, B - 1):
                ok, res = _call(lambda: getattr(vg, method)(i))
                if not ok:
                    rep.fail("valid rejected", "VectorGame(%d).%s(%d) raised %s" % (B, method, i, _exc(res)))
            for v in V["bad_index"](B):
                what = "VectorGame(%d).%s(%s)" % (B, method, _desc(v))
                if not rep.start(what):
                    continue
                _expect_raise(rep, what, lambda: getattr(vg, method)(v), ValueError)
                if vec_snap(vg) != snap:
                    rep.fail("state changed", "%s changed the batch" % what)
                    vp.restore()
                    vg = vp.vg
            if vec_full(vg) != full:
                rep.fail("state changed", "VectorGame.%s probes changed a game of the batch" % method)
                vp.restore()


def sec_vector_game(rep, rng):
    _vec_index_section(rep, rng, "game")


def sec_vector_record(rep, rng):
    _vec_index_section(rep, rng, "record")


def sec_vector_before_reset(rep, rng):
    from majiang_env.engine.vector import VectorGame
    np = V["np"]
    for B in (1, 4, 64):
        calls = [("step(zeros)", lambda vg: vg.step(np.zeros(B, dtype=np.int64))),
                 ("step(120s)", lambda vg: vg.step(np.full(B, 120, dtype=np.int64))),
                 ("step(list)", lambda vg: vg.step([120] * B)),
                 ("game(0)", lambda vg: vg.game(0)), ("record(0)", lambda vg: vg.record(0))]
        for name, f in calls:
            what = "VectorGame(%d) before reset(): %s" % (B, name)
            if rep.start(what):
                vg = VectorGame(B, seed=1)
                _expect_raise(rep, what, lambda: f(vg), RuntimeError)


def _tamper_views(arrs):
    """Ways a caller may force the returned arrays writable; yields (how, writer)."""
    import ctypes
    np = V["np"]

    def setflags(a, val):
        a.setflags(write=True)
        a[...] = val

    def base(a, val):
        b = a
        while isinstance(b, np.ndarray) and not b.flags.writeable and b.base is not None:
            b = b.base
        if not isinstance(b, np.ndarray) or not b.flags.writeable:
            raise ValueError("no writable base")
        if b.dtype == a.dtype and b.size == a.size:
            b.reshape(a.shape)[...] = val
        else:
            b[...] = val

    def raw(a, val):
        tmp = np.ascontiguousarray(np.broadcast_to(np.asarray(val, dtype=a.dtype), a.shape))
        if not a.flags.c_contiguous:
            raise ValueError("not contiguous")
        ctypes.memmove(a.ctypes.data, tmp.ctypes.data, a.nbytes)

    return [("setflags(write=True)", setflags), (".base", base), ("ctypes.memmove", raw)]


def sec_vector_tamper(rep, rng):
    """Writing into the returned arrays must fail, and nothing written into them
    (even after forcing them writable) may let an illegal action through or
    change how a legal one is applied."""
    from majiang_env import IllegalActionError
    np = V["np"]
    for B, seed in ((5, 31), (64, 32)):
        vp = VecPlayer(B, seed)
        vp.advance(rng)
        names = ("obs", "mask", "player", "rewards", "done")
        for n, a in zip(names, vp.out, strict=True):
            what = "VectorGame(%d): %s[...] = 1 on the array step() returned" % (B, n)
            if rep.start(what):
                _expect_raise(rep, what, lambda: a.__setitem__(Ellipsis, 1), ValueError)
            what = "VectorGame(%d): vg.%s[...] = 1" % (B, n)
            if rep.start(what):
                _expect_raise(rep, what, lambda: getattr(vp.vg, n).__setitem__(Ellipsis, 1), ValueError)
        for _ in range(6 if B < 64 else 3):
            for _ in range(rng.randrange(1, 20)):
                vp.advance(rng)
            for how, writer in _tamper_views(None):
                vg = vp.vg
                legal = vp.legal()
                seats = [vg.game(i).current_player for i in range(B)]
                obs, mask, player = vp.out[0], vp.out[1], vp.out[2]
                full = vec_full(vg)
                # 1. mark every action legal and move the turn: an illegal action must still be refused
                ok1 = _call(lambda: writer(mask, 1))[0]
                ok2 = _call(lambda: writer(player, (np.asarray(seats) + 1) % 4))[0]
                _call(lambda: writer(obs, 0))
                for r in rng.sample(range(B), min(B, 3)):
                    ill = [a for a in range(156) if a not in legal[r]]
                    a = np.array([rng.choice(ids) for ids in legal], dtype=np.int64)
                    a[r] = rng.choice(ill)
                    what = "VectorGame(%d) after %s wrote mask=1/player+1 (%s): illegal %d in env %d" % (
                        B, how, "written" if ok1 or ok2 else "write refused", a[r], r)
                    if not rep.start(what):
                        continue
                    _expect_raise(rep, what, lambda: vg.step(a), IllegalActionError)
                    if vec_full(vg) != full:
                        rep.fail("tamper let through", "%s: a game of the batch changed" % what)
                        vp.restore()
                        vg = vp.vg
                        break
                else:
                    # 2. zero the mask and move the turn: legal actions still apply, for the right seats
                    _call(lambda: writer(mask, 0))
                    _call(lambda: writer(player, (np.asarray(seats) + 2) % 4))
                    a = np.array([rng.choice(ids) for ids in legal], dtype=np.int64)
                    before = [flat_decisions(vg.record(i)) for i in range(B)]
                    what = "VectorGame(%d) after %s wrote mask=0/player+2: legal step" % (B, how)
                    if rep.start(what):
                        ok, res = _call(lambda: vg.step(a))
                        vp.hist.append(a)
                        if not ok:
                            rep.fail("tamper changed validation", "%s raised %s" % (what, _exc(res)))
                            vp.restore()
                        else:
                            vp.out = res
                            for i in range(B):
                                after = flat_decisions(vg.record(i))
                                if not res[4][i] and after[:len(before[i]) + 1] != before[i] + [[seats[i], int(a[i])]]:
                                    rep.fail("tamper changed play", "%s: env %d applied %s, not %s" % (
                                        what, i, after[len(before[i]):len(before[i]) + 1], [seats[i], int(a[i])]))
                                    vp.restore()
                                    break
                    else:
                        vp.hist.append(a)
                        vp.out = vg.step(a)
        # many more illegal probes after a raw write of the whole mask buffer
        vg = vp.vg
        for _ in range(4):
            legal = vp.legal()
            full = vec_full(vg)
            _call(lambda: _tamper_views(None)[2][1](vp.out[1], 1))
            for r in range(min(B, 8)):
                ill = [a for a in range(156) if a not in legal[r]]
                for bad in rng.sample(ill, 5):
                    a = np.array([ids[0] for ids in legal], dtype=np.int64)
                    a[r] = bad
                    what = "VectorGame(%d) after a raw mask write: illegal %d in env %d" % (B, bad, r)
                    if not rep.start(what):
                        continue
                    _expect_raise(rep, what, lambda: vg.step(a), IllegalActionError)
            if vec_full(vg) != full:
                rep.fail("tamper let through",
                         "VectorGame(%d): an illegal action changed a game after a raw mask write" % B)
                vp.restore()
                vg = vp.vg
            vp.advance(rng)
            vg = vp.vg


def sec_game_seed(rep, rng):
    from majiang_env.engine.vector import game_seed
    np = V["np"]
    ref = [game_seed(0, 0), game_seed(5, 3), game_seed(2**64 - 1, 7)]
    seeds = [0, 1, 7, 12345, 2**32, 2**63, 2**64 - 1]
    indices = [0, 1, 3, 7, 100, 12345, 2**32, 2**40, 2**50, 2**60]
    bad_idx = [-1, -2, -2**63, -2**70, 2**64, 2**64 + 1, 2**128, np.int64(-1), np.int8(-1), 0.0, 1.0,
               float("nan"), "0", b"0", None, True, False, np.bool_(True), np.bool_(False), [0], (0,), {0: 0},
               1j, np.float64(0), np.array([0]), np.array(0.0), np.array(0), object()]
    for v in V["BAD_SEEDS"]:
        for p in indices + [2, 5, 9]:
            what = "game_seed(%s, %d)" % (_desc(v), p)
            if rep.start(what):
                good, e = _expect_raise(rep, what, lambda: game_seed(v, p), ValueError)
                if good:
                    _check_name_msg(rep, what, e, "seed")
    for v in bad_idx:
        for p in seeds + [3, 99, 2**40, 2**50, 42, 2**20, 2**60, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47]:
            what = "game_seed(%d, %s)" % (p, _desc(v))
            if rep.start(what):
                good, e = _expect_raise(rep, what, lambda: game_seed(p, v), ValueError)
                if good:
                    _check_name_msg(rep, what, e, "index")
    if [game_seed(0, 0), game_seed(5, 3), game_seed(2**64 - 1, 7)] != ref:
        rep.fail("state changed", "game_seed results changed after rejected calls")


def sec_selfplay(rep, rng):
    from decimal import Decimal

    import numba

    from majiang_env import selfplay
    np = V["np"]
    nan = float("nan")
    ref = selfplay(num_games=1, seed=0, num_envs=1)
    threads = numba.get_num_threads()
    BAD = {
        "num_games": [-1, -2**70, 2**64 + 1, 2**200, 1.0, 1.5, nan, "1", b"1", None, True, False, np.bool_(True),
                      [1], (1,), {1: 1}, 1j, np.float64(1), np.array(1.0), np.array([1]), Decimal(1), object()],
        "agents": [("random",) * 3, ("random",) * 5, (), "random", "rand", "greedy", b"rrrr",
                   (["random"], "random", "random", "random"), ["random"], ("random", "random", "random", None),
                   (1, 2, 3, 4), (0, 0, 0, 0), ("bogus",) * 4, ("random", "random", "random", "gredy"),
                   ("", "", "", ""), {"random": 1}, None, 5, 1.0, True, [["random"]] * 4,
                   ("random", "random", "random", b"random"), ("random", "random", "random", ("random",)),
                   ("random", "random", "random", 0), (True,) * 4, (1.0,) * 4, object()],
        "seed": [-1, -2**70, 2**64, 2**64 + 1, HUGE, -HUGE, 1.0, nan, "0", b"0", True, False, np.bool_(False), [0],
                 (0,),
                 {}, 1j, np.float32(0), np.array([0]), np.array(0.0), object()],
        "num_envs": [0, -1, -2**70, 2**64 + 1, 1.0, 2.5, nan, "1", b"1", None, True, False, np.bool_(True), [1],
                     (1,), 1j, np.float64(1), np.array([1]), object()],
        "first_game": [-1, -2**70, 2**63, 2**63 + 1, 2**64, 2**64 + 1, 2**100, 1.0, nan, "0", None, True, False,
                       np.bool_(False), [0], np.float64(0), np.array([0]), np.uint64(2**63),
                       np.uint64(2**64 - 1), object()],
        "num_threads": [0, -1, -2**70, 2**64 + 1, 10**6, 1.0, nan, "1", b"1", True, False, np.bool_(True), [1],
                        (1,), 1j, np.float64(1), np.array([1]), object()],
        "rules": BAD_RULES,
        "progress": ["yes", 1, 0, 1.0, [], {}, np.int64(1), object()],
    }
    partners = [dict(num_games=1, num_envs=1, seed=0, agents=("random",) * 4, first_game=0, num_threads=None),
                dict(num_games=2, num_envs=2, seed=5, agents=("greedy", "random", "random", "random"),
                     first_game=3, num_threads=1),
                dict(num_games=1, num_envs=4, seed=2**64 - 1, agents=("random", "greedy", "greedy", "random"),
                     first_game=7, num_threads=None),
                dict(num_games=2, num_envs=1, seed=9, agents=("greedy",) * 4, first_game=0, num_threads=1)]
    for p in partners:
        ok, res = _call(lambda: selfplay(**p))
        if not ok:
            rep.fail("valid rejected", "selfplay(%s) raised %s" % (p, _exc(res)))
    reps = 0
    while rep.n < 1100:
        for arg, vals in BAD.items():
            for v in vals:
                base = dict(partners[(reps + len(arg)) % len(partners)])
                base[arg] = v
                what = "selfplay(%s=%s) (others %s)" % (arg, _desc(v), {k: x for k, x in base.items() if k != arg})
                if rep.start(what):
                    good, e = _expect_raise(rep, what, lambda: selfplay(**base), ValueError)
                    if good:
                        _check_name_msg(rep, what, e, arg)
                    if numba.get_num_threads() != threads:
                        rep.fail("state changed", "%s left numba's thread count at %d (was %d)"
                                 % (what, numba.get_num_threads(), threads))
                        numba.set_num_threads(threads)
                reps += 1
        again = selfplay(num_games=1, seed=0, num_envs=1)
        for k in ("games", "hands", "decisions", "mean_points", "wins"):
            if again[k] != ref[k]:
                rep.fail("state changed", "after rejected calls selfplay(1, seed=0) gives %s=%s, was %s"
                         % (k, again[k], ref[k]))


# ------------------------------- PettingZoo ----------------------------------

AGENTS = ["player_%d" % i for i in range(4)]


def canon(x):
    np = V["np"]
    if isinstance(x, dict):
        return ("D", tuple(sorted((repr(k), canon(v)) for k, v in x.items())))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(canon(v) for v in x))
    if isinstance(x, np.ndarray):
        return ("A", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.generic):
        return ("G", x.dtype.str, x.tobytes())
    return (type(x).__name__, repr(x))


def pz_snap(e):
    u = e.unwrapped
    parts = [repr(e.agent_selection), tuple(e.agents)]
    for n in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
        parts.append(canon(getattr(u, n)))
        if hasattr(type(e), n) or n in vars(e):
            parts.append(canon(getattr(e, n)))
    for a in AGENTS:
        o = u.observe(a)
        parts.append(canon(o))
    g = getattr(u, "game", None)
    if g is not None:
        parts.append(json.dumps(g.record()))
    return tuple(parts)


class PZPlayer:
    """A seeded random-legal AEC episode (raw_env or env) that can be rebuilt."""

    def __init__(self, make, seed):
        self.make, self.seed, self.hist = make, seed, []
        self.e = make()
        self.e.reset(seed=seed)

    def restore(self):
        self.e = self.make()
        self.e.reset(seed=self.seed)
        for a in self.hist:
            self.e.step(a)

    def legal(self):
        np = V["np"]
        return np.flatnonzero(self.e.observe(self.e.agent_selection)["action_mask"]).tolist()

    def alive(self):
        a = self.e.agent_selection
        return bool(self.e.agents) and not (self.e.terminations[a] or self.e.truncations[a])


def pz_points(rng, make_env, extra=()):
    configs = [({"hands_per_game": 1}, 41), ({}, 42), ({"hands_per_game": 1, "exchange": False}, 43)]
    for kw, seed in configs:
        pp = PZPlayer(lambda kw=kw: make_env(kw), seed)
        d = 0
        while pp.alive():
            if d in PROBE_AT or d in extra:
                yield pp
            a = rng.choice(pp.legal())
            pp.e.step(a)
            pp.hist.append(a)
            d += 1


def _pz_pass_probes(probes):
    """156 is in the PettingZoo faces' Discrete(157) (the pass of an agent not to act):
    for the agent to act it is an illegal id there, not an out-of-range one."""
    np = V["np"]

    def is_pass(v):
        return isinstance(v, (int, np.integer, np.ndarray)) and not isinstance(v, bool) and np.ndim(v) == 0 \
            and int(v) == 156
    return [(v, "illegal" if k == "range" and is_pass(v) else k) for v, k in probes]


def _pz_step_section(rep, rng, make_env, name, illegal_ends):
    from majiang_env import IllegalActionError
    for pp in pz_points(rng, make_env):
        e = pp.e
        legal = pp.legal()
        snap = pz_snap(e)
        probes = action_probes(legal, rng, n_other=150)
        if illegal_ends:
            ill = [p for p in probes if p[1] == "illegal"]
            keep = rng.sample(ill, min(4, len(ill))) + [(f, "illegal") for f in V["np_int_forms"](ill[0][0])[:3]]
            probes = [p for p in probes if p[1] != "illegal"] + keep
        for v, kind in _pz_pass_probes(probes):
            what = "%s.step(%s) [%s]" % (name, _desc(v), kind)
            if not rep.start(what):
                continue
            if illegal_ends and kind == "illegal":
                offender = e.agent_selection
                ok, res = _call(lambda: e.step(v))
                if not ok:
                    rep.fail("wrong exception", "%s raised %s (want: the game ends, offender -1000)"
                             % (what, _exc(res)))
                else:
                    rw, te, tr = dict(e.rewards), dict(e.terminations), dict(e.truncations)
                    want = {a: (-1000 if a == offender else 0) for a in AGENTS}
                    if any(float(rw.get(a, 1e9)) != want[a] for a in AGENTS):
                        rep.fail("wrong outcome", "%s: rewards %s, want %s" % (what, rw, want))
                    if not all(te.get(a) for a in AGENTS) or not all(tr.get(a) for a in AGENTS):
                        rep.fail("wrong outcome", "%s: terminations %s truncations %s, want all True" % (what, te, tr))
                pp.restore()
                e = pp.e
                continue
            good, ex = _expect_raise(rep, what, lambda: e.step(v), IllegalActionError)
            if good:
                _check_action_msg(rep, what, ex, v, legal, kind)
            if pz_snap(e) != snap:
                rep.fail("state changed", "%s changed the env (state, rewards, infos or agent selection)" % what)
                pp.restore()
                e = pp.e


def sec_raw_step(rep, rng):
    import majiang_env
    _pz_step_section(rep, rng, lambda kw: majiang_env.raw_env(**kw), "raw_env()", illegal_ends=False)


def sec_env_step(rep, rng):
    import majiang_env
    _pz_step_section(rep, rng, lambda kw: majiang_env.env(**kw), "env()", illegal_ends=True)


def sec_raw_observe(rep, rng):
    import majiang_env
    np = V["np"]
    bad = ["player_4", "player_-1", "player_00", "player_01", "player_ 1", " player_0", "player_0 ", "PLAYER_0",
           "Player_0", "player_0\x00", "player_", "player", "", "player_1.0", "player_+1", "player_10",
           "player_\u0663", "player_\u00b3", "player_\uff11", "player_4294967296", "player_-4294967295",
           "player_18446744073709551616", "agent_0", "0", "1", "seat_0", "player_0player_1",
           0, 1, 3, -1, 4, None, True, False, 1.0, b"player_0", ("player_0",), ["player_0"], {"player_0": 1},
           np.int64(0), np.array("player_0"), np.array(["player_0"]), object(), Ellipsis, {"player_0"}]
    for pp in pz_points(rng, lambda kw: majiang_env.raw_env(**kw), extra=(2, 7, 20, 50)):
        e = pp.e
        snap = pz_snap(e)
        for v in bad:
            what = "raw_env().observe(%s)" % _desc(v)
            if not rep.start(what):
                continue
            good, ex = _expect_raise(rep, what, lambda: e.observe(v), ValueError)
            if good:
                _check_value_msg(rep, what, ex, v)
            if pz_snap(e) != snap:
                rep.fail("state changed", "%s changed the env" % what)
                pp.restore()
                e = pp.e


def sec_pz_before_reset(rep, rng):
    import majiang_env
    for name, make in (("raw_env()", majiang_env.raw_env), ("env()", majiang_env.env)):
        calls = [("step(110)", lambda e: e.step(110)), ("step(120)", lambda e: e.step(120)),
                 ("step(None)", lambda e: e.step(None)), ("observe('player_0')", lambda e: e.observe("player_0")),
                 ("last()", lambda e: e.last())]
        for cname, f in calls:
            for kw in ({}, {"hands_per_game": 1}):
                what = "%s before reset(): %s" % (name, cname)
                if rep.start(what):
                    e = make(**kw)
                    _expect_raise(rep, what, lambda: f(e), RuntimeError)
    for cname, acts in (("step({'player_0': 120})", {"player_0": 120}), ("step({})", {}),
                        ("step({'player_0': 110})", {"player_0": 110})):
        for kw in ({}, {"hands_per_game": 1}):
            what = "parallel_env() before reset(): %s" % cname
            if rep.start(what):
                p = majiang_env.parallel_env(**kw)
                _expect_raise(rep, what, lambda: p.step(acts), RuntimeError)


def sec_parallel_step(rep, rng):
    import majiang_env
    from majiang_env import IllegalActionError
    np = V["np"]

    class PP:
        def __init__(self, kw, seed):
            self.kw, self.seed, self.hist = kw, seed, []
            self._new()

        def _new(self):
            self.p = majiang_env.parallel_env(**self.kw)
            self.obs, _ = self.p.reset(seed=self.seed)

        def restore(self):
            self._new()
            for a in self.hist:
                self.obs = self.p.step(a)[0]

        def acting(self):
            return self.p.aec_env.agent_selection

        def legal(self):
            return np.flatnonzero(self.obs[self.acting()]["action_mask"]).tolist()

    def snap(pp):
        return (tuple(pp.p.agents), pz_snap(pp.p.aec_env))

    for kw, seed in (({"hands_per_game": 1}, 51), ({}, 52), ({"hands_per_game": 1, "exchange": False}, 53)):
        pp = PP(kw, seed)
        d = 0
        while pp.p.agents:
            if d in PROBE_AT:
                legal = pp.legal()
                who = pp.acting()
                s0 = snap(pp)
                probes = action_probes(legal, rng, n_other=150)
                ill = [x for x in probes if x[1] == "illegal"]
                probes = [x for x in probes if x[1] != "illegal"] + rng.sample(ill, min(4, len(ill)))
                for v, kind in _pz_pass_probes(probes):
                    what = "parallel_env().step({%r: %s}) [%s]" % (who, _desc(v), kind)
                    if not rep.start(what):
                        continue
                    if kind == "illegal":
                        ok, res = _call(lambda: pp.p.step({who: v}))
                        if not ok:
                            rep.fail("wrong exception", "%s raised %s (want: the game ends)" % (what, _exc(res)))
                        else:
                            rw, te, tr = res[1], res[2], res[3]
                            want = {a: (-1000 if a == who else 0) for a in AGENTS}
                            if any(float(rw.get(a, 1e9)) != want[a] for a in AGENTS):
                                rep.fail("wrong outcome", "%s: rewards %s, want %s" % (what, rw, want))
                            if not all(te.get(a) for a in AGENTS) or not all(tr.get(a) for a in AGENTS):
                                rep.fail("wrong outcome", "%s: terminations %s truncations %s" % (what, te, tr))
                        pp.restore()
                        continue
                    good, ex = _expect_raise(rep, what, lambda: pp.p.step({who: v}), IllegalActionError)
                    if good:
                        _check_action_msg(rep, what, ex, v, legal, kind)
                    if snap(pp) != s0:
                        rep.fail("state changed", "%s changed the env" % what)
                        pp.restore()
            a = {pp.acting(): rng.choice(pp.legal())}
            pp.obs = pp.p.step(a)[0]
            pp.hist.append(a)
            d += 1


# ------------------------------- SingleAgentEnv ------------------------------

def _single_section(rep, rng, illegal_mode):
    from majiang_env import IllegalActionError
    from majiang_env.envs.single_agent import SingleAgentEnv
    np = V["np"]

    class SP:
        def __init__(self, kw, seed):
            self.kw, self.seed, self.hist = kw, seed, []
            self._new()

        def _new(self):
            self.e = SingleAgentEnv(**self.kw)
            self.e.reset(seed=self.seed)
            self.over = False

        def restore(self):
            self._new()
            for a in self.hist:
                self.e.step(a)

    def snap(e):
        return (json.dumps(e.game.record()), e.action_masks().tobytes(), repr(e.seat))

    kws = [dict(seat=0, hands_per_game=1), dict(seat=2, hands_per_game=1, exchange=False), dict(seat=3),
           dict(seat=1, opponents="greedy", hands_per_game=1)]
    for j, kw in enumerate(kws):
        if illegal_mode is not None:
            kw = dict(kw, illegal=illegal_mode)
        sp = SP(kw, 60 + j)
        d = 0
        while True:
            legal = np.flatnonzero(sp.e.action_masks()).tolist()
            if not legal:
                break
            if d in PROBE_AT or d in (2, 8, 20):
                e = sp.e
                s0 = snap(e)
                full = json.dumps(e.game.record(legal=True))
                probes = action_probes(legal, rng, n_other=150)
                if illegal_mode is None:
                    ill = [x for x in probes if x[1] == "illegal"]
                    probes = [x for x in probes if x[1] != "illegal"] + rng.sample(ill, min(5, len(ill)))
                for v, kind in probes:
                    what = "SingleAgentEnv(%s).step(%s) [%s]" % (kw, _desc(v), kind)
                    if not rep.start(what):
                        continue
                    if illegal_mode is None and kind == "illegal":
                        ok, res = _call(lambda: e.step(v))
                        if not ok:
                            rep.fail("wrong exception", "%s raised %s (want: the episode ends)" % (what, _exc(res)))
                        else:
                            _, reward, term, trunc, info = res
                            if not (term or trunc) or reward != -1000.0 or info.get("illegal") is not True:
                                rep.fail("wrong outcome", "%s: reward %r terminated %r truncated %r info[illegal] %r"
                                         % (what, reward, term, trunc, info.get("illegal")))
                        sp.restore()
                        e = sp.e
                        continue
                    good, ex = _expect_raise(rep, what, lambda: e.step(v), IllegalActionError)
                    if good:
                        _check_action_msg(rep, what, ex, v, legal, kind)
                    if snap(e) != s0:
                        rep.fail("state changed", "%s changed the env" % what)
                        sp.restore()
                        e = sp.e
                if json.dumps(sp.e.game.record(legal=True)) != full:
                    rep.fail("state changed", "rejected SingleAgentEnv.step calls changed the game record")
                    sp.restore()
            a = rng.choice(legal)
            out = sp.e.step(a)
            sp.hist.append(a)
            d += 1
            if out[2] or out[3]:
                break


def sec_single_raise(rep, rng):
    _single_section(rep, rng, "raise")


def sec_single_terminate(rep, rng):
    _single_section(rep, rng, None)


def sec_single_seat(rep, rng):
    from majiang_env.envs.single_agent import SingleAgentEnv
    bad = [v for v in V["BAD_SEATS"] if v is not None] + ["Random", "RANDOM", "random ", "", "east", "0", "seat_0"]
    for v in bad:
        what = "SingleAgentEnv(seat=%s)" % _desc(v)
        if not rep.start(what):
            continue

        def make():
            e = SingleAgentEnv(seat=v, hands_per_game=1)
            e.reset(seed=0)
            return e.seat

        good, ex = _expect_raise(rep, what, make, ValueError)
        if good:
            _check_value_msg(rep, what, ex, v)


# ------------------------------- child main ----------------------------------

# ------------------------------- every face that takes a rule set ------------

def sec_rules_faces(rep, rng):
    """Every constructor that takes a rule set refuses a bad one (BAD_RULES, and bad
    keyword overrides where it takes them) with ValueError naming the rules."""
    import majiang_env
    from majiang_env import Game, RuleConfig, selfplay
    from majiang_env.engine.rules import make_rules
    from majiang_env.engine.vector import VectorGame
    from majiang_env.envs.seat_vector import SeatVectorEnv
    from majiang_env.envs.single_agent import SingleAgentEnv
    faces = [("Game", lambda r: Game(rules=r, seed=0)), ("VectorGame", lambda r: VectorGame(2, rules=r)),
             ("selfplay", lambda r: selfplay(1, rules=r, num_envs=1)),
             ("env", lambda r: majiang_env.env(rules=r)), ("raw_env", lambda r: majiang_env.raw_env(rules=r)),
             ("parallel_env", lambda r: majiang_env.parallel_env(rules=r)),
             ("SingleAgentEnv", lambda r: SingleAgentEnv(rules=r)),
             ("SeatVectorEnv", lambda r: SeatVectorEnv(2, rules=r)),
             ("RuleConfig.from_dict", RuleConfig.from_dict), ("make_rules", make_rules)]
    for name, make in faces:
        for v in BAD_RULES:
            what = "%s(rules=%s)" % (name, _desc(v))
            if rep.start(what):
                good, e = _expect_raise(rep, what, lambda: make(v), ValueError)
                if good:
                    _check_name_msg(rep, what, e, "rules")
    overrides = [{"hands_per_game": HUGE}, {"bogus": 1}, {"kuikae": 1}, {"chow_from": HUGE}, {"exchange": None},
                 {"payment": ["zero_sum"]}, {"wins_to_close": 3.0}]
    takes_options = [("env", majiang_env.env), ("raw_env", majiang_env.raw_env),
                     ("parallel_env", majiang_env.parallel_env), ("SingleAgentEnv", SingleAgentEnv),
                     ("SeatVectorEnv", lambda **kw: SeatVectorEnv(2, **kw)),
                     ("make_rules", lambda **kw: make_rules(None, **kw))]
    for name, make in takes_options:
        for kw in overrides:
            what = "%s(**%s)" % (name, _short(kw, 80))
            if rep.start(what):
                good, e = _expect_raise(rep, what, lambda: make(**kw), ValueError)
                if good:
                    _check_name_msg(rep, what, e, "RuleConfig")


# ------------------------------- SingleAgentEnv: seeds and opponents ----------

def sec_single_seed(rep, rng):
    """``reset(seed=)`` takes None or an int in 0..2**64-1 (numpy integers too); anything else
    raises ValueError naming the seed and changes nothing."""
    from majiang_env.envs.single_agent import SingleAgentEnv
    np = V["np"]
    env = SingleAgentEnv(hands_per_game=1, seat="random")
    env.reset(seed=5)

    def snap():
        return (json.dumps(env.game.record()), env.action_masks().tobytes(), env.seat,
                repr(env.np_random.bit_generator.state))

    s0 = snap()
    for v in V["BAD_SEEDS"] + [np.float32(1), "seed", 2**64 + 5, np.array([3]), -HUGE]:
        what = "SingleAgentEnv.reset(seed=%s)" % _desc(v)
        if not rep.start(what):
            continue
        good, e = _expect_raise(rep, what, lambda: env.reset(seed=v), ValueError)
        if good:
            _check_name_msg(rep, what, e, "seed")
            _check_value_msg(rep, what, e, v)
        if snap() != s0:
            rep.fail("state changed", "%s changed the env" % what)
            env.reset(seed=5)
            s0 = snap()
    for v in (0, 1, 2**63, 2**64 - 1):   # (0-d arrays are actions' form only, not seeds')
        for f in [v] + [f for f in V["np_int_forms"](v) if not isinstance(f, np.ndarray)]:
            what = "SingleAgentEnv.reset(seed=%s) equals reset(seed=%d)" % (_desc(f), v)
            if not rep.start(what):
                continue
            ok, res = _call(lambda: env.reset(seed=f))
            if not ok:
                rep.fail("valid rejected", "%s raised %s" % (what, _exc(res)))
                continue
            want = env.reset(seed=v)[0]
            if not np.array_equal(res[0], want):
                rep.fail("wrong game", "%s gives another game" % what)


def _answer_probes(rng):
    """(description, fn(legal ids) -> an answer that is not a legal action id) for agents' answers."""
    np = V["np"]
    out = [("range %s" % _desc(v), lambda legal, v=v: v) for v in V["OUT_OF_RANGE"]]
    out += [("type odd_forms[%d]" % i, lambda legal, i=i: V["odd_forms"](legal[0])[i])
            for i in range(len(V["odd_forms"](0)))]
    out += [("type %s" % _desc(v), lambda legal, v=v: v) for v in V["ODD"]]
    out += [("wraps[%d]" % i, lambda legal, i=i: V["wraps"](legal[0])[i]) for i in range(len(V["wraps"](0)))]
    out += [("illegal id", lambda legal: next(a for a in range(156) if a not in legal)),
            ("illegal np.int64", lambda legal: np.int64(next(a for a in range(156) if a not in legal))),
            ("illegal 0-d array", lambda legal: np.array(next(a for a in range(156) if a not in legal))),
            ("legal + 0.7", lambda legal: legal[0] + 0.7), ("np.float32(legal)", lambda legal: np.float32(legal[0]))]
    rng.shuffle(out)
    return out


def sec_single_opponents(rep, rng):
    """An opponent's answer must be an action id the learner could give (int, numpy
    integer, 0-d integer array) and legal; anything else raises IllegalActionError
    naming the opponent's seat, and the step changes nothing. Accepted forms play the same
    as plain ints (checked against a twin env)."""
    from majiang_env import IllegalActionError
    from majiang_env.engine.game import game_from_state
    from majiang_env.envs.single_agent import SingleAgentEnv
    np = V["np"]

    class Opp:
        def __init__(self, forms):
            self.bad, self.forms, self.legal, self.answer = None, forms, [], None

        def __call__(self, obs):
            self.legal = np.flatnonzero(obs["action_mask"]).tolist()
            if self.bad is not None:
                self.answer = self.bad(self.legal)
                return self.answer
            a = self.legal[0]
            return rng.choice([a] + V["np_int_forms"](a)) if self.forms else a

    def snap(e):
        return json.dumps(e.game.record(legal=True)), e.action_masks().tobytes(), e.seat

    kws = [dict(seat=0, hands_per_game=1), dict(seat=2, hands_per_game=1, exchange=False),
           dict(seat=3, hands_per_game=2, chow_from="previous")]
    for j, kw in enumerate(kws):
        opp, ref = Opp(True), Opp(False)
        env, twin = SingleAgentEnv(opponents=opp, **kw), SingleAgentEnv(opponents=ref, **kw)
        env.reset(seed=70 + j)
        twin.reset(seed=70 + j)
        queue = _answer_probes(rng)
        d = 0
        while True:
            legal = np.flatnonzero(env.action_masks()).tolist()
            if not legal:
                break
            a = rng.choice(legal)
            after = game_from_state(env.game.state.copy(), env.rules, env.game.seed)
            after.step(a)
            if queue and not after.done and after.current_player != env.seat and (d in PROBE_AT or d % 5 == 1):
                s0 = snap(env)
                for desc, bad in queue[:60]:
                    what = "SingleAgentEnv(%s): learner plays %d, the opponent answers %s" % (kw, a, desc)
                    if not rep.start(what):
                        continue
                    opp.bad = bad
                    good, e = _expect_raise(rep, what, lambda: env.step(a), IllegalActionError)
                    opp.bad = None
                    if good:
                        _check_name_msg(rep, what, e, "opponent at seat")
                        _check_action_msg(rep, what, e, opp.answer, opp.legal)
                    if snap(env) != s0:
                        rep.fail("state changed", "%s changed the env" % what)
                        break
                del queue[:60]
            got, want = env.step(a), twin.step(a)
            if not (np.array_equal(got[0], want[0]) and got[1:4] == want[1:4]):
                rep.fail("state changed", "SingleAgentEnv(%s) step %d after rejected opponent answers (or with numpy "
                         "forms of the answers) differs from its twin" % (kw, d))
                break
            d += 1
            if got[2] or got[3]:
                break


def sec_seat_vector_opponents(rep, rng):
    """SeatVectorEnv refuses what is not an opponent at construction (a class that is not
    a factory of agents, ``cls(seed)``: ValueError saying to pass an instance; an agent
    class is built seeded), and a callable may not call the env it plays in."""
    from majiang_env.agents import GreedyAgent, RandomAgent
    from majiang_env.agents.pretrained import PretrainedAgent
    from majiang_env.envs.seat_vector import SeatVectorEnv
    np = V["np"]

    class WithActBatch:
        def act_batch(self, obs, mask):
            return mask.argmax(1)

    class Callable:
        def __call__(self, obs, mask):
            return mask.argmax(1)

    for cls in (GreedyAgent, RandomAgent, PretrainedAgent):   # factories cls(seed): built, seeded
        what = "SeatVectorEnv(2, opponents=%s) builds it" % cls.__name__
        if rep.start(what):
            try:
                env = SeatVectorEnv(2, opponents=cls, hands_per_game=1)
                env.reset(seed=0)
                env.step(env.action_masks().argmax(1))
            except Exception as e:  # noqa: BLE001
                rep.fail("refused", "%s raised %s" % (what, _exc(e)))
    classes = [WithActBatch, Callable, int, type, object, np.ndarray]
    not_callable = [v for v in V["ODD"] if not isinstance(v, str) and not callable(v)]
    for spec in classes + not_callable + ["bogus", ("bogus", {})]:
        for shape in ("one", "list"):
            opponents = spec if shape == "one" else [spec, "random", "random"]
            what = "SeatVectorEnv(2, opponents=%s)" % _short(opponents, 100)
            if rep.start(what):
                good, e = _expect_raise(rep, what, lambda: SeatVectorEnv(2, opponents=opponents), ValueError)
                if good and isinstance(spec, type):
                    _check_name_msg(rep, what, e, "instance")
    for method in ("action_masks", "step", "reset", "sample_actions"):
        what = "a SeatVectorEnv opponent calls the env's %s()" % method
        if not rep.start(what):
            continue
        box = {}

        def fn(obs, mask, box=box, method=method):
            if "error" not in box:
                try:
                    args = {"step": (np.zeros(2, np.int64),), "sample_actions": (np.zeros((2, 156)),)}
                    getattr(box["env"], method)(*args.get(method, ()))
                    box["error"] = None
                except Exception as e:  # noqa: BLE001
                    box["error"] = e
            return mask.argmax(1)

        box["env"] = env = SeatVectorEnv(2, opponents=fn, hands_per_game=1)
        env.reset(seed=1)
        for _ in range(50):
            if "error" in box:
                break
            env.step(env.action_masks().argmax(1))
        e = box.get("error", "never called")
        if not isinstance(e, RuntimeError) or "inside" not in str(e):
            rep.fail("wrong exception", "%s: got %s (want RuntimeError saying it is called from inside)"
                     % (what, _exc(e) if isinstance(e, Exception) else e))


# ------------------------------- play mode -------------------------------------

def sec_play_input(rep, rng):
    """Any line typed at the play prompt gets a message and the prompt again (then ``q``)."""
    import io

    from majiang_env.views.play import play
    lines = ["9" * 5000, "-" + "9" * 5000, "+" + "1" * 4301, "0" * 5000 + "1", "0" * 5000, "1" * 100000,
             "9" * 4300, "9" * 4301, "\u0663" * 5000, "\uff19" * 5000, "\uff19\uff19\uff19", "0", "-1", "+0", "00",
             "999999999999", "1e5", "1.5", "0x1", "", " ", "\t", "\x00", "\x1b[2J", "\udcff\udcfe", "q" * 5000,
             "quit now", "draw draw", "\u202e1", "x" * 20000, "1" + " " * 5000 + "2", "-0", "1_000",
             "\u0663\u0663\u0663", "\U0001d7d7" * 10, "\u00bd", "\u2167", "None", "nan", "[1]"]
    lines += ["".join(rng.choice("0123456789") for _ in range(rng.randint(7, 9000))) for _ in range(30)]
    lines += ["".join(chr(rng.randint(1, 0x2FFFF)) for _ in range(rng.randint(1, 300))) for _ in range(30)]
    for i, line in enumerate(lines):
        what = "play(stdin=%s + q)" % _short(line, 60)
        if not rep.start(what):
            continue
        out = io.StringIO()
        ok, res = _call(lambda: play(seat=i % 4, seed=i, rules={"hands_per_game": 1}, opponents="random",
                                     stdin=io.StringIO(line + "\nq\n"), stdout=out))
        text = out.getvalue()
        if not ok:
            rep.fail("raised", "%s raised %s" % (what, _exc(res)))
        elif res != 0 or "you left the game" not in text:
            rep.fail("wrong outcome", "%s returned %r; output tail %s" % (what, res, _short(text[-300:], 300)))
        elif text.count("your move (") < 2 and line.strip().lower() not in ("q", "quit", "exit"):
            rep.fail("no prompt again", "%s: the prompt did not come again; output tail %s"
                     % (what, _short(text[-300:], 300)))


# ------------------------------- trainers --------------------------------------

def sec_sb3(rep, rng):
    """SB3VecEnv: actions are integers of shape (B,) (IllegalActionError otherwise, nothing
    changes); set_attr sets only reward_scale, copy and num_threads, checked (ValueError);
    seed takes None or an int in 0..2**64-1."""
    import numba

    from majiang_env import IllegalActionError
    from majiang_env.integrations.sb3 import SB3VecEnv
    np = V["np"]
    B = 4
    env, twin = SB3VecEnv(B, hands_per_game=1), SB3VecEnv(B, hands_per_game=1)
    env.seed(3)
    twin.seed(3)
    env.reset()
    twin.reset()
    names = ["obs_type", "rules", "seat_option", "num_envs", "observation_space", "metadata", "closed", "_ready",
             "_st", "reward_scale", "copy", "num_threads", "nonexistent", "action_space", 5, None, ("copy",)]
    values = [float("nan"), float("inf"), "x", None, True, np.bool_(False), HUGE, -1, 0, 2.0, 1,
              {"kuikae": False}, "features", np.float64(0.5), numba.config.NUMBA_NUM_THREADS + 1]

    def attrs():
        return [_short(env.get_attr(n)[0]) for n in ("obs_type", "rules", "seat_option", "reward_scale", "copy",
                                                     "num_threads")]

    def valid(name, v):
        if name == "reward_scale":
            try:
                return isinstance(v, (int, float, np.floating)) and not isinstance(v, bool) \
                    and abs(float(v)) < float("inf")
            except OverflowError:   # an int past the float range
                return False
        if name == "copy":
            return isinstance(v, (bool, np.bool_))
        if name == "num_threads":
            return v is None or (type(v) is int and 1 <= v <= numba.config.NUMBA_NUM_THREADS)
        return False

    a0 = attrs()
    for name in names:
        for v in values:
            what = "SB3VecEnv.set_attr(%s, %s)" % (_short(name), _desc(v))
            if not rep.start(what):
                continue
            if valid(name, v):
                old = env.get_attr(name)[0]
                ok, res = _call(lambda: env.set_attr(name, v))
                if not ok:
                    rep.fail("valid rejected", "%s raised %s" % (what, _exc(res)))
                env.set_attr(name, old)
            else:
                _expect_raise(rep, what, lambda: env.set_attr(name, v), ValueError)
            if attrs() != a0:
                rep.fail("state changed", "%s left the attributes at %s (were %s)" % (what, attrs(), a0))
                return
    for v in V["BAD_SEEDS"]:
        what = "SB3VecEnv.seed(%s)" % _desc(v)
        if rep.start(what):
            good, e = _expect_raise(rep, what, lambda: env.seed(v), ValueError)
            if good:
                _check_name_msg(rep, what, e, "seed")
    for step in range(40):
        masks = env.action_masks()
        legal = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if step in (0, 3, 11, 25):
            bad = [(_desc(v), v) for v in V["ODD"]]
            bad += [("shape %s" % (shp,), legal.reshape(shp)) for shp in ((B, 1), (1, B), (2, B // 2))]
            bad += [("shape (%d,)" % n, np.resize(legal, n)) for n in (0, 1, B - 1, B + 1, 2 * B)]
            bad += [("%s array" % dt, legal.astype(dt)) for dt in (float, np.float32, bool, object, complex, str)]
            for v, _ in action_probes(np.flatnonzero(masks[0]).tolist(), rng, n_other=60):
                arr = [int(x) for x in legal]
                arr[0] = v
                bad.append(("entry 0 = %s" % _desc(v), arr))
            for desc, acts in bad:
                what = "SB3VecEnv.step(%s)" % desc
                if rep.start(what):
                    _expect_raise(rep, what, lambda: env.step(acts), IllegalActionError)
                    if not np.array_equal(env.action_masks(), masks):
                        rep.fail("state changed", "%s changed the env" % what)
                        return
        got, want = env.step(legal), twin.step(legal)
        if not (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
                and np.array_equal(got[2], want[2])):
            rep.fail("state changed", "SB3VecEnv step %d after rejected calls differs from its twin" % step)
            return


def sec_rllib(rep, rng):
    """MajiangMultiAgentEnv: reset(seed=) takes None or an int in 0..2**64-1; step takes a
    dict {agent: action} whose action is an integer; anything else raises (ValueError,
    ActionSpaceError) and changes nothing."""
    from majiang_env.engine.checks import ActionSpaceError
    from majiang_env.integrations.rllib import AGENTS as RL_AGENTS
    from majiang_env.integrations.rllib import MajiangMultiAgentEnv
    np = V["np"]
    for illegal in ("raise", "terminate"):
        env = MajiangMultiAgentEnv({"hands_per_game": 1, "illegal": illegal})
        twin = MajiangMultiAgentEnv({"hands_per_game": 1, "illegal": illegal})
        obs, _ = env.reset(seed=3)
        twin.reset(seed=3)

        def snap():
            return json.dumps(env.game.record(legal=True))

        for v in V["BAD_SEEDS"] + [np.float64(5), "5", -HUGE]:
            what = "MajiangMultiAgentEnv.reset(seed=%s)" % _desc(v)
            if rep.start(what):
                s0 = snap()
                good, e = _expect_raise(rep, what, lambda: env.reset(seed=v), ValueError)
                if good:
                    _check_name_msg(rep, what, e, "seed")
                if snap() != s0:
                    rep.fail("state changed", "%s changed the env" % what)
                    return
        for step in range(30):
            (agent, o), = obs.items()
            legal = np.flatnonzero(o["action_mask"]).tolist()
            s0 = snap()
            if step in (0, 4, 13):
                dicts = [(_desc(v), v) for v in V["ODD"] if not isinstance(v, dict)]
                dicts += [("{other agent}", {a: legal[0] for a in RL_AGENTS if a != agent}), ("{}", {})]
                for desc, d in dicts:
                    what = "MajiangMultiAgentEnv(illegal=%s).step(%s)" % (illegal, desc)
                    if rep.start(what):
                        _expect_raise(rep, what, lambda: env.step(d), ValueError)
                for v, kind in action_probes(legal, rng, n_other=120):
                    if kind != "type" and illegal == "terminate":
                        continue   # an integer the mask forbids ends the game: not an error
                    what = "MajiangMultiAgentEnv(illegal=%s).step({%s: %s}) [%s]" % (illegal, agent, _desc(v), kind)
                    if rep.start(what):
                        exc = ActionSpaceError if kind in ("type", "range") else ValueError
                        good, e = _expect_raise(rep, what, lambda: env.step({agent: v}), exc)
                        if good:
                            _check_action_msg(rep, what, e, v, [], kind)
                if snap() != s0:
                    rep.fail("state changed", "rejected steps changed the env (illegal=%s)" % illegal)
                    return
            a = rng.choice(legal)
            got, want = env.step({agent: a}), twin.step({agent: a})
            if json.dumps([sorted(x) for x in got], default=str) != json.dumps([sorted(x) for x in want], default=str) \
                    or got[1] != want[1]:
                rep.fail("state changed", "step %d after rejected calls differs from its twin" % step)
                return
            if got[2]["__all__"]:
                break
            obs = got[0]


# ------------------------------- the arena --------------------------------------

def sec_arena_answers(rep, rng):
    """An arena agent's answer that is not a legal action id raises AgentError naming the
    agent: per-observation agents (any value) and batched ones (any array or nest)."""
    from majiang_env.arena import AgentError, Batched, run
    np = V["np"]
    kw = dict(deals=1, rules={"hands_per_game": 1}, baseline=False, num_envs=1)
    for desc, bad in _answer_probes(rng):
        what = "arena: a per-observation agent answers %s" % desc
        if rep.start(what):
            good, e = _expect_raise(rep, what, lambda: run([lambda obs: bad(np.flatnonzero(obs["action_mask"])
                                                                             .tolist()), "greedy", "greedy",
                                                           "greedy"], **kw), AgentError)
            if good:
                _check_name_msg(rep, what, e, "agent")
    batched = [("None", lambda m: None), ("a scalar", lambda m: 0), ("float array", lambda m: m.argmax(1) + 0.0),
               ("bool array", lambda m: m.argmax(1) > 0), ("object array", lambda m: m.argmax(1).astype(object)),
               ("one too many", lambda m: np.append(m.argmax(1), 0)), ("2-d", lambda m: m.argmax(1)[:, None]),
               ("ragged", lambda m: [[1]] + [[1, 2]] * (len(m) - 1)), ("huge list", lambda m: [HUGE] * len(m)),
               ("minus huge list", lambda m: [-HUGE] * len(m)), ("-1", lambda m: np.full(len(m), -1)),
               ("156", lambda m: np.full(len(m), 156)), ("uint64 wrap", lambda m: m.argmax(1).astype(np.uint64)
                                                         + np.uint64(2**63)),
               ("illegal ids", lambda m: m.argmin(1)), ("str list", lambda m: [str(a) for a in m.argmax(1)]),
               ("float list", lambda m: [a + 0.5 for a in m.argmax(1).tolist()]), ("dict", lambda m: {0: 1}),
               ("empty", lambda m: []), ("string", lambda m: "0" * len(m))]
    for desc, f in batched:
        what = "arena: a batched agent answers %s" % desc
        if rep.start(what):
            good, e = _expect_raise(rep, what, lambda: run([Batched(lambda o, m: f(m)), "greedy", "greedy", "greedy"],
                                                           **kw), AgentError)
            if good:
                _check_name_msg(rep, what, e, "agent")


# ------------------------------- pretrained weights files ------------------------

def sec_pretrained_files(rep, rng):
    """PretrainedAgent(path=...) checks everything at load: a file that is not a valid
    majiang-policy/1 file raises WeightsError (a ValueError) naming the file; a file that
    loads always plays legal actions."""
    import tempfile
    import zipfile

    from majiang_env.agents import pretrained as P
    from majiang_env.engine.encodings import FEAT_SIZE
    from majiang_env.engine.kernel.features import NUM_PLANES
    from majiang_env.engine.vector import VectorGame
    np = V["np"]
    nrng = np.random.default_rng(0)
    H1, H2, C = 8, 6, 4
    shapes = {"body.0.weight": (H1, FEAT_SIZE), "body.0.bias": (H1,), "body.2.weight": (H2, H1), "body.2.bias": (H2,),
              "ctx.weight": (C, H2), "ctx.bias": (C,), "kind_in.weight": (C, NUM_PLANES), "kind_in.bias": (C,),
              "kind_out.weight": (4, C), "kind_out.bias": (4,), "kind_bias": (36, 4), "pi.weight": (12, H2),
              "pi.bias": (12,)}
    base = {k: nrng.normal(0, 0.5, shp).astype(np.float32) for k, shp in shapes.items()}
    base["format"] = np.array(P.FORMAT)
    vg = VectorGame(8, seed=2, obs_type="features")
    x, m, _ = vg.reset()
    xs, ms = [x.copy()], [m.copy()]
    for _ in range(6):
        x, m, *_ = vg.step(vg.policy_actions("random"))
        xs.append(x.copy())
        ms.append(m.copy())
    X, M = np.concatenate(xs), np.concatenate(ms)
    tmp = tempfile.mkdtemp(prefix="fuzz-weights-")
    count = [0]

    def write(arrays=None, data=None):
        count[0] += 1
        path = os.path.join(tmp, "w%d.npz" % count[0])
        if arrays is not None:
            np.savez(path, **arrays)
        else:
            with open(path, "wb") as f:
                f.write(data)
        return path

    def check(desc, path, expect):
        """expect: "invalid" (WeightsError), "valid" (loads and plays legally) or "either"."""
        if not rep.start("weights file: %s" % desc):
            return
        ok, res = _call(lambda: P.PretrainedAgent(path=path, seed=1))
        if not ok:
            if type(res).__name__ != "WeightsError" or not isinstance(res, ValueError) or path not in str(res):
                rep.fail("wrong exception", "%s: raised %s (want WeightsError naming the file)" % (desc, _exc(res)))
            elif expect == "valid":
                rep.fail("valid rejected", "%s: raised %s" % (desc, _exc(res)))
            return
        if expect == "invalid":
            rep.fail("accepted", "%s: loaded" % desc)
        for det in (True, False):
            res.deterministic = det
            ok, a = _call(lambda: res.act_batch(X, M))
            if not ok:
                rep.fail("fails later", "%s: loaded, then act_batch raised %s" % (desc, _exc(a)))
            elif not M[np.arange(len(M)), a].all():
                rep.fail("illegal action", "%s: loaded, then played an illegal action" % desc)

    good = write(base)
    check("the valid base", good, "valid")
    raw = open(good, "rb").read()
    for n in sorted(set([0, 1, 4, 22, 30, 100, len(raw) // 2, len(raw) - 22, len(raw) - 1]
                        + [rng.randrange(len(raw)) for _ in range(25)])):
        check("truncated to %d bytes" % n, write(data=raw[:n]), "invalid")
    for _ in range(40):
        b = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        check("bits flipped", write(data=bytes(b)), "either")
    check("random bytes", write(data=bytes(rng.randrange(256) for _ in range(3000))), "invalid")
    check("text", write(data=b"majiang-policy/1\n" * 50), "invalid")
    zpath = os.path.join(tmp, "plain.zip")
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("format.npy", b"not an array")
    check("zip of a bad member", zpath, "invalid")
    npy = os.path.join(tmp, "one.npy")
    np.save(npy, np.zeros(3))
    check("a .npy file", npy, "invalid")
    for k in shapes:
        w = dict(base)
        del w[k]
        check("no %s" % k, write(w), "invalid")
        shp = shapes[k]
        wrong = {shp[:-1] or (2,), shp + (1,), tuple(d + 1 for d in shp), tuple(max(d - 1, 0) for d in shp),
                 (0,) * len(shp), shp[::-1] if len(shp) == 2 and shp[0] != shp[1] else (3,) * 3, ()}
        for bad in sorted(wrong):
            check("%s of shape %s" % (k, bad), write(dict(base, **{k: np.zeros(bad, np.float32)})), "invalid")
        for dt in (np.int32, np.int8, bool, np.complex64, "U3", "S3", object):
            check("%s as %s" % (k, np.dtype(dt)), write(dict(base, **{k: base[k].astype(dt)})), "invalid")
        for v in (np.nan, np.inf, -np.inf):
            w = dict(base, **{k: base[k].copy()})
            w[k].flat[rng.randrange(w[k].size)] = v
            check("%s holding %s" % (k, v), write(w), "invalid")
        check("%s beyond float32" % k, write(dict(base, **{k: base[k].astype(np.float64) * 0 + 1e39})), "invalid")
        check("%s as float64" % k, write(dict(base, **{k: base[k].astype(np.float64)})), "valid")
        check("%s as float16" % k, write(dict(base, **{k: base[k].astype(np.float16)})), "valid")
        check("%s extreme" % k, write(dict(base, **{k: np.full(shp, 3e38 * rng.choice([-1, 1]), np.float32)})), "valid")
    for fmt in (None, np.array("majiang-policy/2"), np.array(b"majiang-policy/1"), np.array(["majiang-policy/1"]),
                np.array(1), np.array("")):
        w = {k: v for k, v in base.items() if k != "format"}
        if fmt is not None:
            w["format"] = fmt
        check("format %s" % _short(fmt, 40), write(w), "invalid")
    check("an unknown array", write(dict(base, extra=np.zeros(2, np.float32))), "invalid")
    check("meta strings", write(dict(base, meta_note=np.array("x"), meta_run=np.array("12"))), "valid")
    low = dict(base, **{"kind_out.weight": np.zeros((4, C), np.float32), "pi.weight": np.zeros((12, H2), np.float32),
                        "kind_out.bias": np.zeros(4, np.float32), "kind_bias": np.full((36, 4), -2e9, np.float32),
                        "pi.bias": np.full(12, -2e9, np.float32)})
    check("every logit below -1e9", write(low), "valid")
    for k2 in ("body.0.bias", "body.2.bias"):
        check("%s at 3e38 (logits overflow)" % k2, write(dict(base, **{k2: np.full(shapes[k2], 3e38, np.float32)})),
              "valid")
    for path, what in ((5, "an int"), (None, "None"), (b"x.npz", "bytes"), (["x"], "a list")):
        if rep.start("PretrainedAgent(path=%s)" % what):
            _expect_raise(rep, "PretrainedAgent(path=%s)" % what, lambda: P.PretrainedAgent(path=path), ValueError)
    if rep.start("PretrainedAgent(path=<no file>)"):
        _expect_raise(rep, "PretrainedAgent(path=<no file>)", lambda: P.PretrainedAgent(path=os.path.join(tmp, "none")),
                      FileNotFoundError)


def _setup(spec):
    global V
    import majiang_env  # noqa: F401  (compiles or loads the kernel)
    try:
        import gymnasium
        gymnasium.logger.set_level(50)
    except Exception:  # noqa: BLE001
        pass
    V = _values()


def _run_section(sec, rep, context):
    import random
    globals()["sec_" + sec](rep, random.Random("fuzz-boundary-" + sec))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        childproc.child_main(json.loads(sys.argv[2]), _setup, _run_section, Rep)
    else:
        sections = sys.argv[1:] or list(SECTION_GROUP)
        for s in sections:
            r = _results(s)
            fails = r["fails"]
            print(_format(s, fails, r["probes"]) if fails or r["errors"] else "%s: ok (%d probes)" % (s, r["probes"]))
            for e in r["errors"]:
                print("  ERROR:", e[-2000:])
