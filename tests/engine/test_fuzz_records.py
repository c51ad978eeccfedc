"""Record-mutation fuzz of ``majiang_env.replay`` (``majiang-record/1``).

Written from the public contract (docs/api.md "Game record", the ``replay``
docstring and the boundary's error policy), not from the implementation. Each
mutated record must either

* raise ``majiang_env.RecordError`` -- and only that: any other exception
  (KeyError, TypeError, IndexError, RecursionError, a plain ValueError ...)
  fails, or
* replay to a game whose ``record()`` (with legal sets if the mutated record
  had them) equals the mutated record after a JSON round trip, compared with
  exact types (``True`` is not ``1``, ``1.0`` is not ``1``).

Base records come from seeded games under several rule sets, finished and in
progress, some with legal sets. Mutations: numbers changed, type swaps, keys
and items deleted / inserted / duplicated, lists truncated, cards duplicated in
squares, wrong seats, keys of other types, ints past Python's int-to-str
limit, deep nesting, and JSON-text forms. Plus named regression cases, the
JSON round trip of ``Game.record()``, and records that end wherever a
``Game(auto_forced=False)`` stopped, forced decisions included: ``replay``
must give each of them back exactly, whatever its ``auto_forced``.

Replays run in a child process (this file run as a script; the harness is
tests/childproc.py) that announces each record before replaying it, so a crash
or a hang in the compiled kernel fails that record instead of killing pytest;
the parent then resumes after it.
"""
import copy
import json
import os
import random
import re
import sys

import pytest

HERE = os.path.abspath(__file__)
TESTS = os.path.dirname(os.path.dirname(HERE))
if TESTS not in sys.path:   # the child runs this file as a script; the harness is tests/childproc.py
    sys.path.insert(0, TESTS)
import childproc  # noqa: E402
from childproc import short as _short  # noqa: E402

DEFAULT_MUTATIONS = 1200
SLOW_MUTATIONS = 12000

REGRESSIONS = [
    "wins_entry_int", "wins_entry_str", "wins_entry_none", "wins_entry_list", "wins_not_a_list",
    "text_deep_brackets", "text_deep_braces", "text_deep_in_field", "object_deep_nesting",
    "start_seat_changed", "start_seat_deleted", "start_seat_str", "start_seat_bool", "start_seat_float",
    "patterns_fake", "patterns_empty", "patterns_str", "melds_fake", "melds_empty", "pair_fake", "pair_none",
    "index_false", "index_float", "index_str", "index_wrong",
    "deltas_float", "scores_float", "base_float", "base_bool", "deltas_bool",
    "squares_true_for_card_1", "squares_false_for_card_0", "squares_float_card", "squares_duplicate",
    "squares_card_144", "squares_card_negative", "squares_card_wraps_2_32",
    "rules_empty", "rules_key_missing", "rules_unknown_key", "rules_bool_for_int", "rules_int_for_bool",
    "unknown_top_key", "unknown_hand_key", "unknown_win_key",
    "auto_forced_str", "auto_forced_int", "auto_forced_none",
    "not_a_record_none", "not_a_record_int", "not_a_record_list", "not_a_record_float", "not_a_record_bool",
    "text_empty", "text_null", "text_empty_object", "text_list", "text_truncated", "text_nan_score",
    "text_infinity", "text_huge_number", "bytes_record",
    "seed_bool", "seed_float", "seed_str", "seed_negative", "seed_2_64",
    "format_wrong", "format_missing", "decision_not_list", "decision_wrong_seat", "decision_seat_4",
    "decision_action_156", "decision_action_bool", "decision_extra_element", "decision_legal_set_wrong",
    "decision_legal_set_unsorted", "win_from_self", "win_from_str", "win_seat_bool",
    "scores_short", "deltas_long", "hands_empty", "hands_extra_copy", "hands_not_a_list",
    "rules_mixed_key_types", "rules_int_key", "record_int_key", "seed_huge", "index_huge", "decision_seat_huge",
    "decision_action_huge", "auto_forced_huge", "ends_before_forced", "ends_before_forced_text",
]


# ---------------------------------------------------------------------------
# parent side
# ---------------------------------------------------------------------------

def run_sections(sections, fuzz=None):
    """{section: {"probes", "fails", "errors"}}, resuming after crashes and hangs."""
    return childproc.run_sections(HERE, sections, {"fuzz": fuzz})


def _format(name, fails, probes):
    return childproc.format_fails(name, fails, probes, noun="records")


_CACHE = {}


def _cached(key, sections, fuzz=None):
    if key not in _CACHE:
        _CACHE[key] = run_sections(sections, fuzz)
    return _CACHE[key]


def _assert_section(r, name, min_probes):
    assert not r["errors"], "%s did not run through:\n%s" % (name, "\n".join(r["errors"]))
    assert not r["fails"], _format(name, r["fails"], r["probes"])
    assert r["probes"] >= min_probes, "%s: only %d records" % (name, r["probes"])


def test_base_records_replay_and_round_trip():
    """The base records replay to themselves, and ``Game.record()`` (finished and
    in progress, with and without legal sets) survives a JSON round trip with
    exact types."""
    r = _cached("base", ["base"])["base"]
    _assert_section(r, "base", 10)


def test_records_ending_at_forced_decisions_replay_to_themselves():
    r = _cached("forced", ["forced_ends"])["forced_ends"]
    _assert_section(r, "forced_ends", 200)


def test_mutated_records():
    r = _cached("fuzz", ["fuzz"], {"start": 0, "count": DEFAULT_MUTATIONS})["fuzz"]
    _assert_section(r, "fuzz", 1000)


@pytest.mark.slow
def test_mutated_records_slow():
    r = _cached("fuzz_slow", ["fuzz"], {"start": 10**6, "count": SLOW_MUTATIONS})["fuzz"]
    _assert_section(r, "fuzz (slow)", 10000)


@pytest.mark.parametrize("case", REGRESSIONS)
def test_regression(case):
    res = _cached("reg", ["regressions"])["regressions"]
    assert not res["errors"], "regressions did not run through:\n%s" % "\n".join(res["errors"])
    fails = [f for f in res["fails"] if f.get("case") == case]
    assert not fails, _format(case, fails, 1)


# ---------------------------------------------------------------------------
# child side
# ---------------------------------------------------------------------------

class Rep(childproc.Reporter):
    def fail(self, case, kind, text):
        self.emit_fail(case=case, kind=kind, text=text[:900])


def first_difference(a, b, path="$"):
    """Path and values of the first place where ``a`` and ``b`` differ, exact types; None if equal."""
    if type(a) is not type(b):
        return "%s: %s vs %s" % (path, _short(a, 60), _short(b, 60))
    if isinstance(a, dict):
        if list(a) != list(b) and set(a) != set(b):
            return "%s: keys %s vs %s" % (path, sorted(map(str, a))[:10], sorted(map(str, b))[:10])
        for k in a:
            d = first_difference(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: length %d vs %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = first_difference(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    if isinstance(a, float) and a != a and b != b:
        return None
    return None if a == b else "%s: %s vs %s" % (path, _short(a, 60), _short(b, 60))


def _has_legal(rec):
    try:
        return any(isinstance(d, list) and len(d) == 3 for h in rec["hands"] for d in h["decisions"])
    except Exception:  # noqa: BLE001
        return False


def check_record(m, auto_forced=None):
    """None if ``replay(m)`` behaves as the policy says, else a (kind, text) reason."""
    from majiang_env import RecordError, replay
    try:
        g = replay(m) if auto_forced is None else replay(m, auto_forced=auto_forced)
    except RecordError:
        return None
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return "wrong exception", "raised %s: %s" % (type(e).__name__, _short(str(e), 200))
    try:
        parsed = json.loads(m) if isinstance(m, (str, bytes, bytearray)) else m
        want = json.loads(json.dumps(parsed))
    except BaseException as e:  # noqa: BLE001
        return "accepted", "accepted a record that is not JSON data (%s)" % type(e).__name__
    legal = _has_legal(want)
    for af in (auto_forced, False if auto_forced is None else None):   # both settings give the record back
        try:
            gg = g if af is auto_forced else (replay(m) if af is None else replay(m, auto_forced=af))
            got = json.loads(json.dumps(gg.record(legal=legal)))
        except BaseException as e:  # noqa: BLE001
            return "accepted", "accepted, but the replayed game's record() failed: %s" % type(e).__name__
        d = first_difference(want, got)
        if d is not None:
            return "accepted", ("accepted, but replay(rec%s).record(legal=%s) differs from it at %s"
                                % ("" if af is None else ", auto_forced=%s" % af, legal, d))
    return None


# ------------------------------- base records --------------------------------

BASES = [  # rules overrides, seed, policy, legal sets, stop after n decisions (None: finished), auto_forced
    ({"hands_per_game": 1}, 1, "mixed", False, None, True),
    ({"hands_per_game": 1, "exchange": False}, 2, "greedy", True, None, True),
    ({"hands_per_game": 2, "chow_from": "previous", "payment": "winner_only"}, 3, "mixed", False, None, True),
    ({"hands_per_game": 1, "wins_to_close": 1, "kuikae": False, "discard_drawn": True}, 4, "greedy", True, None, True),
    ({}, 5, "mixed", False, 150, True),
    ({"hands_per_game": 1, "furiten": True, "require_yaku": True, "side_cards_public": True}, 6, "greedy", False,
     None, False),
    ({"hands_per_game": 1}, 7, "random", True, 60, True),
    ({"hands_per_game": 1, "wins_to_close": 2}, 8, "greedy", False, None, True),
]


def play_game(kw, seed, policy, stop, auto_forced):
    from majiang_env import Game, RuleConfig
    from majiang_env.agents import GreedyAgent, game_obs
    rules = RuleConfig(**kw)
    g = Game(rules=rules, seed=seed, auto_forced=auto_forced)
    rng = random.Random(seed)
    greedy = [GreedyAgent(seed * 10 + s, rules=rules) for s in range(4)]
    n = 0
    while not g.done and (stop is None or n < stop):
        p = g.current_player
        if policy == "greedy" or (policy == "mixed" and p % 2 == 0):
            a = int(greedy[p](game_obs(g)))
        else:
            a = rng.choice(g.legal_actions())
        g.step(a)
        n += 1
    return g


def base_records():
    out = []
    for kw, seed, policy, legal, stop, af in BASES:
        g = play_game(kw, seed, policy, stop, af)
        out.append(json.loads(json.dumps(g.record(legal=legal))))
    return out


def sec_base(rep, bases):
    for i, b in enumerate(bases):
        if rep.start("base %d replays to itself" % i):
            r = check_record(copy.deepcopy(b))
            if r:
                rep.fail("base", r[0], "base record %d (%s): %s" % (i, BASES[i][:2], r[1]))
        if rep.start("base %d as JSON text" % i):
            r = check_record(json.dumps(b))
            if r:
                rep.fail("base", r[0], "base record %d as text: %s" % (i, r[1]))
    for kw, seed, policy, _, stop, af in BASES:
        for cut in (0, 7, 40, stop):
            g = play_game(kw, seed, policy, cut, af)
            for lg in (False, True):
                if not rep.start("round trip %s seed %d cut %s legal %s" % (kw, seed, cut, lg)):
                    continue
                rec = g.record(legal=lg)
                try:
                    text = json.dumps(rec, allow_nan=False)
                except (TypeError, ValueError) as e:
                    rep.fail("roundtrip", "not JSON", "Game(%s, seed=%d).record(legal=%s) after %s decisions is not "
                             "JSON-serialisable: %s" % (kw, seed, lg, cut, e))
                    continue
                d = first_difference(rec, json.loads(text))
                if d:
                    rep.fail("roundtrip", "round trip", "Game(%s, seed=%d).record(legal=%s) after %s decisions != its "
                             "JSON round trip at %s" % (kw, seed, lg, cut, d))
                if rec != json.loads(text):
                    rep.fail("roundtrip", "round trip", "record() == json.loads(json.dumps(record())) is False")


# ------------------------------- records that end at a forced decision -------

FORCED_GAMES = [  # rules overrides, seed: Game(auto_forced=False) games cut at their forced decisions
    ({"hands_per_game": 1}, 11), ({"hands_per_game": 1, "exchange": False}, 12),
    ({"hands_per_game": 2, "chow_from": "previous", "discard_drawn": True}, 13),
    ({"hands_per_game": 1, "wins_to_close": 1, "kuikae": False, "furiten": True}, 14),
]


def forced_end_records(limit=25):
    """(description, record, legal ids) of ``Game(auto_forced=False)`` games stopped at a
    forced decision (one legal action) and, for contrast, at other decisions; at most
    ``limit`` cuts of each kind per game of FORCED_GAMES."""
    from majiang_env import Game
    out = []
    for kw, seed in FORCED_GAMES:
        g = Game(rules=kw, seed=seed, auto_forced=False)
        rng = random.Random(seed)
        forced = other = n = 0
        while not g.done and (forced < limit or other < limit):
            legal = g.legal_actions()
            if n and ((len(legal) == 1 and forced < limit) or (len(legal) > 1 and other < limit and n % 7 == 0)):
                forced += len(legal) == 1
                other += len(legal) > 1
                rec = json.loads(json.dumps(g.record(legal=n % 2 == 0)))
                out.append(("%s seed %d cut at decision %d (%s)" % (kw, seed, n, "forced" if len(legal) == 1
                                                                    else "a choice"), rec, legal))
            g.step(rng.choice(legal))
            n += 1
    return out


def sec_forced_ends(rep, bases):
    """A record stops wherever the game stopped, forced decisions included: ``replay``
    (any ``auto_forced``, dict or text) gives the game at the record's end, waiting at the
    same decision; with ``auto_forced=True`` the forced actions after the next step follow."""
    from majiang_env import replay
    for desc, rec, legal in forced_end_records():
        for form in ("dict", "text"):
            if not rep.start("forced %s as %s" % (desc, form)):
                continue
            m = copy.deepcopy(rec) if form == "dict" else json.dumps(rec)
            for af in (None, True, False):
                r = check_record(m, af)
                if r:
                    rep.fail("forced", r[0], "%s, auto_forced=%s: %s" % (desc, af, r[1]))
            g = replay(m)
            if g.legal_actions() != legal:
                rep.fail("forced", "wrong decision", "%s: replay(rec) waits at legal %s, the game was at %s"
                         % (desc, g.legal_actions(), legal))
                continue
            g.step(legal[0])
            if not g.done and len(g.legal_actions()) == 1:
                rep.fail("forced", "not auto_forced", "%s: after the next step replay(rec) stops at a forced "
                         "decision" % desc)


# ------------------------------- mutations -----------------------------------

def _paths(obj, path=(), max_depth=12):
    """Every (path, value) in ``obj`` down to ``max_depth`` (a record is 7 deep;
    deeper is a nest made by an earlier mutation)."""
    out = [(path, obj)]
    stack = [(path, obj)]
    while stack:
        p, o = stack.pop()
        if len(p) >= max_depth:
            continue
        if isinstance(o, dict):
            for k, v in o.items():
                out.append((p + (k,), v))
                stack.append((p + (k,), v))
        elif isinstance(o, list):
            for i, v in enumerate(o):
                out.append((p + (i,), v))
                stack.append((p + (i,), v))
    return out


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def _set(obj, path, value):
    if not path:
        return value
    _get(obj, path[:-1])[path[-1]] = value
    return obj


def _deep(depth, kind="list"):
    x = 0
    for _ in range(depth):
        x = [x] if kind == "list" else {"a": x}
    return x


HUGE = [2**31, 2**32, 2**63, 2**64, 2**64 + 1, -2**70, 10**30, -1, -2,
        10**5000, -10**5000]   # the last two: past Python's int-to-str limit (repr and str of them fail)


def _new_number(rng, x):
    return rng.choice([x + 1, x - 1, 0, -1, x + rng.randint(1, 200), 143, 144, 155, 156, 3, 4, 5, rng.choice(HUGE),
                       -x, x * 2 + 1])


def _type_swap(rng, x):
    if isinstance(x, bool):
        return rng.choice([int(x), str(x).lower(), None, float(x), [x], not x])
    if isinstance(x, int):
        return rng.choice([float(x), x + 0.5, bool(x % 2), str(x), None, [x], {"v": x}, float("nan"), [], {}])
    if isinstance(x, str):
        return rng.choice([0, 1, None, [x], {x: x}, x.upper(), x + " ", "", True, 1.0])
    if x is None:
        return rng.choice([0, "null", False, [], {}, -1])
    if isinstance(x, float):
        return rng.choice([int(x), str(x), None])
    if isinstance(x, list):
        return rng.choice([{str(i): v for i, v in enumerate(x)}, tuple(x) and None, "list", len(x), [x], x[:1]])
    if isinstance(x, dict):
        return rng.choice([list(x.values()), list(x.keys()), "dict", None, [x], 0])
    return None


def mutate_once(rng, m, bases):
    """One mutation of record ``m`` (in place where possible); returns (m, description)."""
    op = rng.choices(["number", "type", "delete", "insert", "truncate", "duplicate", "squares", "decisions",
                      "wins", "numbers_fields", "rules", "seed", "hands", "deep", "swap"],
                     weights=[10, 10, 6, 6, 4, 4, 10, 12, 8, 6, 5, 3, 4, 2, 4])[0]
    hands = m.get("hands") if isinstance(m, dict) else None
    if not isinstance(hands, list) or not hands or not all(isinstance(h, dict) for h in hands):
        hands = None
    allp = _paths(m)
    if op == "number":
        cand = [(p, v) for p, v in allp if isinstance(v, int) and not isinstance(v, bool) and p]
        if cand:
            p, v = rng.choice(cand)
            nv = _new_number(rng, v)
            _set(m, p, nv)
            return m, "number %s: %s -> %s" % (list(p), _short(v, 40), _short(nv, 40))
    if op == "type":
        cand = [(p, v) for p, v in allp if p]
        p, v = rng.choice(cand)
        nv = _type_swap(rng, v)
        _set(m, p, nv)
        return m, "type %s: %s -> %s" % (list(p), _short(v, 30), _short(nv, 30))
    if op == "delete":
        cand = [(p, v) for p, v in allp if isinstance(v, (dict, list)) and v]
        p, v = rng.choice(cand)
        if isinstance(v, dict):
            k = rng.choice(list(v))
            del v[k]
            return m, "delete key %s" % list(p + (k,))
        i = rng.randrange(len(v))
        del v[i]
        return m, "delete item %s" % list(p + (i,))
    if op == "insert":
        cand = [(p, v) for p, v in allp if isinstance(v, (dict, list))]
        p, v = rng.choice(cand)
        if isinstance(v, dict):
            k = rng.choice(["extra", "Index", "seed2", "", "legal", "note", "0", "comment", "version",
                            1, None, (1,), 2.5, 10**5000])   # (keys of other types: a dict record only)
            if k in v:
                k = k + "_x" if isinstance(k, str) else (k,)
            v[k] = rng.choice([0, 1, None, "x", [], {}, True])
            return m, "insert key %s" % _short(list(p + (k,)), 200)
        val = copy.deepcopy(rng.choice(v)) if v and rng.random() < 0.6 else rng.choice([0, 1, None, "x", [], 143, True])
        i = rng.randrange(len(v) + 1)
        v.insert(i, val)
        return m, "insert item %s = %s" % (list(p + (i,)), _short(val, 40))
    if op == "truncate":
        cand = [(p, v) for p, v in allp if isinstance(v, list) and len(v) > 1]
        if cand:
            p, v = rng.choice(cand)
            k = rng.randrange(len(v))
            del v[k:]
            return m, "truncate %s to %d" % (list(p), k)
    if op == "duplicate":
        cand = [(p, v) for p, v in allp if isinstance(v, list) and v]
        if cand:
            p, v = rng.choice(cand)
            i = rng.randrange(len(v))
            v.insert(i, copy.deepcopy(v[i]))
            return m, "duplicate item %s" % list(p + (i,))
    if op == "swap":
        cand = [(p, v) for p, v in allp if isinstance(v, list) and len(v) > 1]
        if cand:
            p, v = rng.choice(cand)
            i, j = rng.sample(range(len(v)), 2)
            v[i], v[j] = v[j], v[i]
            return m, "swap items %d,%d of %s" % (i, j, list(p))
    if op == "squares" and hands:
        hi = rng.randrange(len(hands))
        sq = hands[hi].get("squares")
        if isinstance(sq, list) and len(sq) == 4 and all(isinstance(r, list) and r for r in sq):
            p = rng.randrange(4)
            i = rng.randrange(len(sq[p]))
            how = rng.choice(["dup", "dup_other_seat", "swap_in_square", "swap_seats", "out", "true", "float",
                              "str", "none", "wrap"])
            old = sq[p][i]
            if how == "dup":
                sq[p][i] = sq[p][rng.randrange(len(sq[p]))]
            elif how == "dup_other_seat":
                q = (p + rng.randrange(1, 4)) % 4
                sq[p][i] = rng.choice(sq[q])
            elif how == "swap_in_square":
                j = rng.randrange(len(sq[p]))
                sq[p][i], sq[p][j] = sq[p][j], sq[p][i]
            elif how == "swap_seats":
                q = (p + rng.randrange(1, 4)) % 4
                j = rng.randrange(len(sq[q]))
                sq[p][i], sq[q][j] = sq[q][j], sq[p][i]
            elif how == "out":
                sq[p][i] = rng.choice([144, 145, 200, 255, 256, -1, -144, 2**31, 2**63, 10**20])
            elif how == "true":
                sq[p][i] = bool(old) if isinstance(old, int) and old in (0, 1) else True
            elif how == "float":
                sq[p][i] = float(old) if isinstance(old, (int, float)) else 1.0
            elif how == "str":
                sq[p][i] = str(old)
            elif how == "none":
                sq[p][i] = None
            else:
                sq[p][i] = (old if isinstance(old, int) else 0) + rng.choice([2**32, -2**32, 2**16, 256, 2**64])
            return m, "squares %s hand %d seat %d pos %d: %s -> %s" % (how, hi, p, i, _short(old, 40),
                                                                        _short(sq[p][i], 40))
    if op == "decisions" and hands:
        hi = rng.randrange(len(hands))
        ds = hands[hi].get("decisions")
        if isinstance(ds, list) and ds and all(isinstance(d, list) and len(d) >= 2 for d in ds):
            k = rng.randrange(len(ds))
            d = ds[k]
            how = rng.choice(["seat+1", "seat_bad", "action_random", "action_bad", "delete", "repeat", "truncate",
                              "swap_next", "short", "long", "dict", "legal_add", "legal_remove", "legal_reverse",
                              "legal_add_missing", "legal_drop"])
            old = copy.deepcopy(d)
            if how == "seat+1" and isinstance(d[0], int):
                d[0] = (d[0] + rng.randrange(1, 4)) % 4
            elif how == "seat_bad":
                d[0] = rng.choice([4, -1, 5, 100, True, "0", None, 0.0, 2**64])
            elif how == "action_random":
                d[1] = rng.randrange(156)
            elif how == "action_bad":
                d[1] = rng.choice([156, -1, 200, 2**32 + (d[1] if isinstance(d[1], int) else 0), True, False, 110.0,
                                   "110", None, [110]])
            elif how == "delete":
                del ds[k]
            elif how == "repeat":
                ds.insert(k, copy.deepcopy(d))
            elif how == "truncate":
                del ds[k:]
            elif how == "swap_next" and k + 1 < len(ds):
                ds[k], ds[k + 1] = ds[k + 1], ds[k]
            elif how == "short":
                ds[k] = d[:1]
            elif how == "long":
                d.append(rng.choice([[], 0, None, [1, 2]]))
            elif how == "dict":
                ds[k] = {"seat": d[0], "action": d[1]}
            elif len(d) == 3 and isinstance(d[2], list):
                if how == "legal_add":
                    d[2] = sorted(set(d[2]) | {rng.randrange(156)}) if all(isinstance(x, int) for x in d[2]) else d[2]
                elif how == "legal_remove" and d[2]:
                    del d[2][rng.randrange(len(d[2]))]
                elif how == "legal_reverse":
                    d[2].reverse()
                elif how == "legal_drop":
                    del d[2:]
                else:
                    d[2].append(d[2][0] if d[2] else 0)
            elif how == "legal_add_missing":
                d.append([d[1]] if len(d) == 2 else [])
            else:
                d[1] = rng.randrange(156)
            return m, "decisions %s hand %d #%d: %s -> %s" % (how, hi, k, _short(old, 60),
                                                              _short(ds[k] if k < len(ds) else None, 60))
    if op == "wins" and hands:
        hw = [h for h in hands if isinstance(h.get("wins"), list) and h["wins"]]
        if hw:
            ws = rng.choice(hw)["wins"]
            i = rng.randrange(len(ws))
            w = ws[i]
            how = rng.choice(["entry", "field", "delete", "append", "patterns", "melds", "pair", "from"])
            if how == "entry" or not isinstance(w, dict):
                ws[i] = rng.choice([1, "x", None, [], [w], True, 0.0])
                return m, "wins[%d] -> %s" % (i, _short(ws[i], 40))
            if how == "delete":
                del ws[i]
                return m, "wins: delete entry %d" % i
            if how == "append":
                ws.append(copy.deepcopy(w))
                return m, "wins: duplicate entry %d" % i
            if how == "patterns":
                w["patterns"] = rng.choice([[], [{"points": 99, "name": "x", "melds": [0]}], "x", None,
                                            (w.get("patterns") or [])[:0] + [{"points": 1}]])
                return m, "wins[%d].patterns -> %s" % (i, _short(w["patterns"], 60))
            if how == "melds":
                w["melds"] = rng.choice([[], [["pung", "青1"]] * 4, "x", None, (w.get("melds") or [])[::-1]])
                return m, "wins[%d].melds -> %s" % (i, _short(w["melds"], 60))
            if how == "pair":
                w["pair"] = rng.choice(["青1", "緑9", None, 0, "", "x"])
                return m, "wins[%d].pair -> %s" % (i, _short(w["pair"], 40))
            if how == "from":
                w["from"] = rng.choice([None, w.get("seat"), 0, 1, 2, 3, 4, -1, "null", True])
                return m, "wins[%d].from -> %s" % (i, _short(w["from"], 40))
            k = rng.choice(list(w)) if w else None
            if k is not None:
                old = w[k]
                number = isinstance(old, int) and not isinstance(old, bool)
                w[k] = _new_number(rng, old) if number else _type_swap(rng, old)
                return m, "wins[%d].%s: %s -> %s" % (i, k, _short(old, 30), _short(w[k], 30))
    if op == "numbers_fields":
        targets = [("scores",)] + [("hands", i, "deltas") for i in range(len(hands or []))]
        t = rng.choice(targets)
        try:
            v = _get(m, t)
        except (KeyError, IndexError, TypeError):
            v = None
        if isinstance(v, list) and v:
            j = rng.randrange(len(v))
            old = v[j]
            how = rng.choice(["number", "float", "bool", "str", "append", "pop", "reorder"])
            if how == "number" and isinstance(old, int):
                v[j] = _new_number(rng, old)
            elif how == "float" and isinstance(old, (int, float)):
                v[j] = float(old)
            elif how == "bool":
                v[j] = bool(old)
            elif how == "str":
                v[j] = str(old)
            elif how == "append":
                v.append(0)
            elif how == "pop":
                v.pop()
            else:
                v.reverse()
            return m, "%s %s[%d]: %s -> %s" % (how, list(t), j, _short(old, 40), _short(v, 60))
    if op == "rules" and isinstance(m.get("rules"), dict) and m["rules"]:
        r = m["rules"]
        k = rng.choice(list(r))
        old = r[k]
        flips = {"hands_per_game": [1, 2, 3, 4, 0, 5], "chow_from": ["next", "previous", "left"],
                 "payment": ["zero_sum", "winner_only", "none"], "wins_to_close": [1, 2, 3, 0, 4]}
        how = rng.choice(["value", "type", "delete", "unknown"])
        if how == "value":
            r[k] = rng.choice(flips.get(k, [True, False]))
        elif how == "type":
            r[k] = _type_swap(rng, old)
        elif how == "delete":
            del r[k]
            return m, "rules: delete %s" % k
        else:
            r["bogus_rule"] = True
            return m, "rules: unknown key"
        return m, "rules.%s: %s -> %s" % (_short(k, 40), _short(old, 40), _short(r.get(k), 40))
    if op == "seed":
        old = m.get("seed") if isinstance(m, dict) else None
        nv = rng.choice([old + 1 if isinstance(old, int) else 0, -1, 2**64, 2**64 - 1, 0, 1.0, "1", None, True, [old]])
        if isinstance(m, dict):
            m["seed"] = nv
        return m, "seed: %s -> %s" % (_short(old, 40), _short(nv, 40))
    if op == "hands" and hands:
        how = rng.choice(["index", "start_seat", "delete_hand", "duplicate_hand", "swap_hands", "empty"])
        hi = rng.randrange(len(hands))
        if how in ("index", "start_seat"):
            old = hands[hi].get(how)
            hands[hi][how] = rng.choice([(old + 1) % 4 if isinstance(old, int) else 0, -1, 4, False, True, "0", 0.0,
                                         None, hi + 1])
            return m, "hands[%d].%s: %s -> %s" % (hi, how, _short(old, 40), _short(hands[hi][how], 40))
        if how == "delete_hand":
            del hands[hi]
        elif how == "duplicate_hand":
            hands.insert(hi, copy.deepcopy(hands[hi]))
        elif how == "swap_hands" and len(hands) > 1:
            i, j = rng.sample(range(len(hands)), 2)
            hands[i], hands[j] = hands[j], hands[i]
        else:
            m["hands"] = []
        return m, "hands: %s %d" % (how, hi)
    if op == "deep":
        cand = [(p, v) for p, v in allp if p]
        p, v = rng.choice(cand)
        depth = rng.choice([30, 300, 3000, 30000])
        _set(m, p, _deep(depth, rng.choice(["list", "dict"])))
        return m, "deep nesting (%d) at %s" % (depth, list(p))
    # fall back: a number change anywhere
    cand = [(p, v) for p, v in allp if isinstance(v, int) and not isinstance(v, bool) and p]
    p, v = rng.choice(cand)
    _set(m, p, v + 1)
    return m, "number %s: %s -> %s" % (list(p), _short(v, 40), _short(v + 1, 40))


def text_mutation(rng, rec):
    """A JSON-text form of ``rec`` with a textual defect (or none)."""
    t = json.dumps(rec)
    how = rng.choice(["truncate", "char", "nan", "inf", "huge", "dupkey", "garbage", "brackets", "bom", "ws",
                      "negzero", "exp"])
    if how == "truncate":
        k = rng.randrange(len(t))
        return t[:k], "text truncated at %d of %d" % (k, len(t))
    if how == "char":
        k = rng.randrange(len(t))
        c = rng.choice(list('{}[]:,"0123456789-. aeflnrstu\\'))
        return t[:k] + c + t[k + 1:], "text char %d -> %r" % (k, c)
    nums = [mm for mm in re.finditer(r"(?<=[\[, :])-?\d+(?=[\],}])", t)]
    if how in ("nan", "inf", "huge", "negzero", "exp") and nums:
        mm = rng.choice(nums)
        rep = {"nan": "NaN", "inf": rng.choice(["Infinity", "-Infinity"]), "huge": "1" + "0" * 400,
               "negzero": "-0", "exp": mm.group(0) + "e0"}[how]
        return t[:mm.start()] + rep + t[mm.end():], "text number %s -> %s" % (mm.group(0), rep[:20])
    if how == "dupkey":
        return t[:-1] + ', "seed": %d}' % rng.randrange(100), "text duplicate key seed"
    if how == "garbage":
        return t + rng.choice([" x", "}", "]", "[]", "\x00"]), "text trailing garbage"
    if how == "brackets":
        n = rng.choice([1000, 100000])
        return rng.choice(["[", "{", '{"a":']) * n, "text %d open brackets" % n
    if how == "bom":
        return "\ufeff" + t, "text with a BOM"
    return " \n\t" + t + " \n", "text with surrounding whitespace"


def mutated_record(i, bases):
    rng = random.Random("majiang-record-mutation-%d" % i)
    bi = rng.randrange(len(bases))
    m = json.loads(json.dumps(bases[bi]))
    descs = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        try:
            m, d = mutate_once(rng, m, bases)
        except (RecursionError, TypeError, KeyError, IndexError, AttributeError, ValueError):
            continue  # an operation that does not apply to what earlier ones left: skip it
        descs.append(d)
    if rng.random() < 0.12:
        try:
            m, d = text_mutation(rng, m)
            descs.append(d)
        except (TypeError, ValueError, RecursionError):
            pass
    return m, "base %d: %s" % (bi, "; ".join(descs))


def sec_fuzz(rep, bases, start, count):
    for i in range(start, start + count):
        m, desc = mutated_record(i, bases)
        if not rep.start("#%d %s" % (i, desc)):
            continue
        r = check_record(m)
        if r:
            rep.fail("fuzz", r[0], "mutation #%d (%s): %s" % (i, desc, r[1]))


# ------------------------------- regressions ---------------------------------

def regression_cases(bases):
    """name -> (record or text, expect): expect "RecordError" or "ValueError" (auto_forced)."""
    def c(i=0):
        return json.loads(json.dumps(bases[i]))

    with_win = next(i for i, b in enumerate(bases) if any(h["wins"] for h in b["hands"]))
    wh = next(k for k, h in enumerate(bases[with_win]["hands"]) if h["wins"])
    two = next(i for i, b in enumerate(bases) if len(b["hands"]) > 1)
    legal = next(i for i, b in enumerate(bases) if _has_legal(b))

    def win(f, i=with_win):
        r = c(i)
        f(r["hands"][wh]["wins"][0], r)
        return r

    def hand(f, i=0, h=0):
        r = c(i)
        f(r["hands"][h], r)
        return r

    def where(rec, card):
        for p, row in enumerate(rec["hands"][0]["squares"]):
            if card in row:
                return p, row.index(card)

    def sq_set(card, value):
        r = c()
        p, k = where(r, card)
        r["hands"][0]["squares"][p][k] = value
        return r

    def sq_dup():
        r = c()
        r["hands"][0]["squares"][0][0] = r["hands"][0]["squares"][0][1]
        return r

    def sq_wrap():
        r = c()
        r["hands"][0]["squares"][1][3] += 2**32
        return r

    def setk(r, path, v):
        _set(r, path, v)
        return r

    def delk(r, path):
        del _get(r, path[:-1])[path[-1]]
        return r

    cases = {}
    R = "RecordError"
    cases["wins_entry_int"] = (win(lambda w, r: r["hands"][wh]["wins"].__setitem__(0, 1)), R)
    cases["wins_entry_str"] = (win(lambda w, r: r["hands"][wh]["wins"].__setitem__(0, "x")), R)
    cases["wins_entry_none"] = (win(lambda w, r: r["hands"][wh]["wins"].__setitem__(0, None)), R)
    cases["wins_entry_list"] = (win(lambda w, r: r["hands"][wh]["wins"].__setitem__(0, [w])), R)
    cases["wins_not_a_list"] = (win(lambda w, r: r["hands"][wh].__setitem__("wins", {"0": w})), R)
    cases["text_deep_brackets"] = ("[" * 100000, R)
    cases["text_deep_braces"] = ("{" * 100000, R)
    t = json.dumps(c())
    cases["text_deep_in_field"] = (t.replace('"seed": ', '"seed": ' + "[" * 100000, 1), R)
    cases["object_deep_nesting"] = (setk(c(), ("hands", 0, "decisions"), _deep(100000)), R)
    cases["start_seat_changed"] = (hand(lambda h, r: h.__setitem__("start_seat", (h["start_seat"] + 1) % 4)), R)
    cases["start_seat_deleted"] = (delk(c(), ("hands", 0, "start_seat")), R)
    cases["start_seat_str"] = (hand(lambda h, r: h.__setitem__("start_seat", str(h["start_seat"]))), R)
    cases["start_seat_bool"] = (setk(c(), ("hands", 0, "start_seat"), False), R)
    cases["start_seat_float"] = (hand(lambda h, r: h.__setitem__("start_seat", float(h["start_seat"]))), R)
    fake = [{"points": 99, "name": "連順", "melds": [0, 1]}]
    cases["patterns_fake"] = (win(lambda w, r: w.__setitem__("patterns", fake)), R)
    one = [{"points": 1, "name": "x", "melds": [0]}]
    cases["patterns_empty"] = (win(lambda w, r: w.__setitem__("patterns", [] if w["patterns"] else one)), R)
    cases["patterns_str"] = (win(lambda w, r: w.__setitem__("patterns", "fake")), R)
    pungs = [["pung", "青1"], ["pung", "青2"], ["pung", "青3"], ["pung", "青4"]]
    cases["melds_fake"] = (win(lambda w, r: w.__setitem__("melds", pungs)), R)
    cases["melds_empty"] = (win(lambda w, r: w.__setitem__("melds", [])), R)
    cases["pair_fake"] = (win(lambda w, r: w.__setitem__("pair", "緑9" if w["pair"] != "緑9" else "青1")), R)
    cases["pair_none"] = (win(lambda w, r: w.__setitem__("pair", None)), R)
    cases["index_false"] = (setk(c(), ("hands", 0, "index"), False), R)
    cases["index_float"] = (setk(c(), ("hands", 0, "index"), 0.0), R)
    cases["index_str"] = (setk(c(), ("hands", 0, "index"), "0"), R)
    cases["index_wrong"] = (setk(c(two), ("hands", 1, "index"), 0), R)
    cases["deltas_float"] = (hand(lambda h, r: h.__setitem__("deltas", [float(x) for x in h["deltas"]])), R)
    cases["scores_float"] = (setk(c(), ("scores",), [float(x) for x in c()["scores"]]), R)
    cases["base_float"] = (win(lambda w, r: w.__setitem__("base", float(w["base"]))), R)
    cases["base_bool"] = (win(lambda w, r: w.__setitem__("base", True)), R)
    cases["deltas_bool"] = (hand(lambda h, r: h.__setitem__("deltas", [bool(x) for x in h["deltas"]])), R)
    cases["squares_true_for_card_1"] = (sq_set(1, True), R)
    cases["squares_false_for_card_0"] = (sq_set(0, False), R)
    cases["squares_float_card"] = (sq_set(5, 5.0), R)
    cases["squares_duplicate"] = (sq_dup(), R)
    cases["squares_card_144"] = (sq_set(143, 144), R)
    cases["squares_card_negative"] = (sq_set(0, -1), R)
    cases["squares_card_wraps_2_32"] = (sq_wrap(), R)
    cases["rules_empty"] = (setk(c(), ("rules",), {}), R)
    cases["rules_key_missing"] = (delk(c(), ("rules", "kuikae")), R)
    cases["rules_unknown_key"] = (setk(c(), ("rules", "bogus"), 1), R)
    cases["rules_bool_for_int"] = (setk(c(), ("rules", "hands_per_game"), True), R)
    cases["rules_int_for_bool"] = (setk(c(), ("rules", "exchange"), 1), R)
    cases["unknown_top_key"] = (setk(c(), ("comment",), "hello"), R)
    cases["unknown_hand_key"] = (setk(c(), ("hands", 0, "comment"), "hello"), R)
    cases["unknown_win_key"] = (win(lambda w, r: w.__setitem__("comment", 1)), R)
    cases["auto_forced_str"] = ((c(), "no"), "ValueError")
    cases["auto_forced_int"] = ((c(), 1), "ValueError")
    cases["auto_forced_none"] = ((c(), None), "ValueError")
    cases["not_a_record_none"] = (None, R)
    cases["not_a_record_int"] = (1, R)
    cases["not_a_record_list"] = ([c()], R)
    cases["not_a_record_float"] = (1.0, R)
    cases["not_a_record_bool"] = (True, R)
    cases["text_empty"] = ("", R)
    cases["text_null"] = ("null", R)
    cases["text_empty_object"] = ("{}", R)
    cases["text_list"] = ("[]", R)
    cases["text_truncated"] = (t[:len(t) // 2], R)
    cases["text_nan_score"] = (re.sub(r'"scores": \[-?\d+', '"scores": [NaN', t), R)
    cases["text_infinity"] = (re.sub(r'"scores": \[-?\d+', '"scores": [Infinity', t), R)
    cases["text_huge_number"] = (re.sub(r'"scores": \[-?\d+', '"scores": [1' + "0" * 5000, t), R)
    cases["bytes_record"] = (b"{}", R)
    cases["seed_bool"] = (setk(c(), ("seed",), True), R)
    cases["seed_float"] = (setk(c(), ("seed",), float(c()["seed"])), R)
    cases["seed_str"] = (setk(c(), ("seed",), str(c()["seed"])), R)
    cases["seed_negative"] = (setk(c(), ("seed",), -1), R)
    cases["seed_2_64"] = (setk(c(), ("seed",), 2**64), R)
    cases["format_wrong"] = (setk(c(), ("format",), "majiang-record/2"), R)
    cases["format_missing"] = (delk(c(), ("format",)), R)
    cases["decision_not_list"] = (setk(c(), ("hands", 0, "decisions", 5), "x"), R)
    r = c()
    d = r["hands"][0]["decisions"][3]
    d[0] = (d[0] + 1) % 4
    cases["decision_wrong_seat"] = (r, R)
    cases["decision_seat_4"] = (setk(c(), ("hands", 0, "decisions", 3, 0), 4), R)
    cases["decision_action_156"] = (setk(c(), ("hands", 0, "decisions", 3, 1), 156), R)
    r = c()
    a = r["hands"][0]["decisions"][3][1]
    r["hands"][0]["decisions"][3][1] = True if a == 1 else 1.0 * a
    cases["decision_action_bool"] = (r, R)
    cases["decision_extra_element"] = (setk(c(), ("hands", 0, "decisions", 3),
                                            c()["hands"][0]["decisions"][3] + [[], 0]), R)
    r = c(legal)
    ls = r["hands"][0]["decisions"][3][2]
    ls.append(155 if 155 not in ls else 0)
    ls.sort()
    cases["decision_legal_set_wrong"] = (r, R)
    r = c(legal)
    r["hands"][0]["decisions"][3][2] = r["hands"][0]["decisions"][3][2][::-1]
    cases["decision_legal_set_unsorted"] = (r, R if len(c(legal)["hands"][0]["decisions"][3][2]) > 1 else "ok")
    cases["win_from_self"] = (win(lambda w, r: w.__setitem__("from", w["seat"])), R)
    cases["win_from_str"] = (win(lambda w, r: w.__setitem__("from", "null")), R)
    cases["win_seat_bool"] = (win(lambda w, r: w.__setitem__("seat", bool(w["seat"] % 2))), R)
    cases["scores_short"] = (setk(c(), ("scores",), c()["scores"][:3]), R)
    cases["deltas_long"] = (hand(lambda h, r: h.__setitem__("deltas", h["deltas"] + [0])), R)
    cases["hands_empty"] = (setk(c(), ("hands",), []), R)
    r = c()
    r["hands"].append(copy.deepcopy(r["hands"][-1]))
    cases["hands_extra_copy"] = (r, R)
    cases["hands_not_a_list"] = (setk(c(), ("hands",), {"0": c()["hands"][0]}), R)
    rr = c()
    rr["rules"].update({1: 2, "x": 3})
    cases["rules_mixed_key_types"] = (rr, R)
    rr = c()
    rr["rules"][1] = 2
    cases["rules_int_key"] = (rr, R)
    rr = c()
    rr[1] = 2
    cases["record_int_key"] = (rr, R)
    cases["seed_huge"] = (setk(c(), ("seed",), 10**5000), R)
    cases["index_huge"] = (setk(c(), ("hands", 0, "index"), 10**5000), R)
    cases["decision_seat_huge"] = (setk(c(), ("hands", 0, "decisions", 3, 0), 10**5000), R)
    cases["decision_action_huge"] = (setk(c(), ("hands", 0, "decisions", 3, 1), -10**5000), R)
    cases["auto_forced_huge"] = ((c(), 10**5000), "ValueError")
    forced = next(r for _, r, legal in forced_end_records(1) if len(legal) == 1)
    cases["ends_before_forced"] = (forced, "same")
    cases["ends_before_forced_text"] = (json.dumps(forced), "same")
    assert set(cases) == set(REGRESSIONS), set(cases) ^ set(REGRESSIONS)
    return cases


def sec_regressions(rep, bases):
    from majiang_env import RecordError, replay
    cases = regression_cases(bases)
    for name in REGRESSIONS:
        rec, expect = cases[name]
        if not rep.start("%s" % name):
            continue
        if expect == "ValueError":
            r0, af = rec
            try:
                replay(r0, auto_forced=af)
            except ValueError:
                continue
            except Exception as e:  # noqa: BLE001
                rep.fail(name, "wrong exception", "replay(rec, auto_forced=%s) raised %s: %s (want ValueError)"
                         % (_short(af, 40), type(e).__name__, _short(str(e), 200)))
                continue
            rep.fail(name, "accepted", "replay(rec, auto_forced=%s) was accepted (want ValueError)" % (_short(af, 40),))
            continue
        if expect == "ok":
            continue
        if expect == "same":   # replay(rec) (any auto_forced) is the game at the record's end
            for af in (None, True, False):
                r = check_record(rec, af)
                if r:
                    rep.fail(name, r[0], "auto_forced=%s: %s" % (af, r[1]))
            continue
        try:
            replay(rec)
        except RecordError:
            continue
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            rep.fail(name, "wrong exception", "replay(<%s>) raised %s: %s (want RecordError)"
                     % (name, type(e).__name__, _short(str(e), 200)))
            continue
        r = check_record(rec)
        rep.fail(name, "accepted", "replay(<%s>) was accepted (want RecordError)%s"
                 % (name, "; its record() differs: " + r[1] if r else "; and its record() even equals it"))


# ------------------------------- child main ----------------------------------

def _setup(spec):
    import majiang_env  # noqa: F401
    return base_records(), spec.get("fuzz")


def _run_section(sec, rep, context):
    bases, fuzz = context
    if sec == "fuzz":
        sec_fuzz(rep, bases, fuzz["start"], fuzz["count"])
    else:
        globals()["sec_" + sec](rep, bases)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        childproc.child_main(json.loads(sys.argv[2]), _setup, _run_section, Rep)
    else:
        n = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_MUTATIONS
        res = run_sections(["base", "regressions", "forced_ends", "fuzz"], {"start": 0, "count": n})
        for s, r in res.items():
            print(_format(s, r["fails"], r["probes"]) if r["fails"] else "%s: ok (%d)" % (s, r["probes"]))
            for e in r["errors"]:
                print("  ERROR:", e[-2000:])
