"""Game records (``majiang-record/1``, docs/api.md): ``replay`` reads one back
into a ``Game``, checking it strictly; ``RecordError`` names the first bad field.
``Game.record()`` writes them."""
from __future__ import annotations

import json

import numpy as np

from .checks import IllegalActionError, as_bool, show
from .game import Game
from .kernel import layout as L
from .rules import NUM_CARDS, SQUARE_SIZE, RuleConfig

RECORD_FORMAT = "majiang-record/1"

__all__ = ["replay", "RecordError", "RECORD_FORMAT", "legal_sets"]


class RecordError(ValueError):
    """A game record that cannot be replayed; the message names the first bad field."""


def legal_sets(game: Game) -> list:
    """Legal action sets at every decision of ``game``, by replaying its decisions."""
    rec = game.record(legal=False)
    sets = []
    _replay(rec, collect=sets)
    return sets


_RECORD_KEYS = ("format", "rules", "seed", "hands", "scores")
_HAND_KEYS = ("index", "start_seat", "squares", "decisions", "wins", "deltas")


def replay(record, auto_forced: bool = True) -> Game:
    """Rebuild the game of a ``majiang-record/1`` record (dict or JSON text).

    The record is checked strictly, and any problem raises ``RecordError``
    naming the field: every key of the format must be there and no other
    (unknown keys are rejected); numbers are JSON integers (``True`` and
    ``1.0`` are not); every decision must be the legal move of the seat to act
    (and match its recorded legal set, when present); and the replayed game's
    own ``record()`` must equal the given one field by field, so every stored
    value (start seats, wins with their patterns, melds and pair, deltas,
    scores) is recomputed and compared.

    The returned game is exactly at the record's end, so ``replay(rec).record()
    == rec`` always holds. ``auto_forced`` (a bool) is its setting for the steps
    that follow. A record of a ``Game(auto_forced=False)`` may end at a forced
    decision (one legal action); the returned game then waits at that
    decision whatever ``auto_forced`` is: replay adds no action the record does
    not hold. With ``auto_forced=True`` the forced actions after the next
    ``step`` are applied as usual.
    """
    as_bool("auto_forced", auto_forced)
    return _replay(record, auto_forced=auto_forced)


def _fields(obj, keys, where):
    """``obj`` must be a dict with exactly ``keys``."""
    if not isinstance(obj, dict):
        raise RecordError(f"{where} must be an object (dict), not {type(obj).__name__}")
    missing = [k for k in keys if k not in obj]
    if missing:
        raise RecordError(f"{where} has no {missing[0]!r} (its keys must be {list(keys)})")
    unknown = [k for k in obj if k not in keys]
    if unknown:
        raise RecordError(f"{where} has unknown key {show(unknown[0])} (its keys are {list(keys)})")
    return obj


def _json_int(x) -> bool:
    return type(x) is int


def _int_list(x, where, n=None):
    if not isinstance(x, list) or (n is not None and len(x) != n) or not all(map(_json_int, x)):
        size = "" if n is None else f" {n}"
        raise RecordError(f"{where} must be a list of{size} integers, got {show(x)}")
    return x


def _first_difference(got, want, path):
    """The path of the first place where ``got`` (the record) and ``want`` (the
    replay's record) differ, with exact types; None if they are equal."""
    if type(got) is not type(want):
        return path
    if isinstance(want, dict):
        if set(got) != set(want):
            return path
        for k in want:
            p = _first_difference(got[k], want[k], f"{path}.{k}")
            if p:
                return p
        return None
    if isinstance(want, list):
        if len(got) != len(want):
            return path
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            p = _first_difference(a, b, f"{path}[{i}]")
            if p:
                return p
        return None
    return None if got == want else path


def _lookup(obj, path):
    for part in path.replace("]", "").replace("[", ".").split(".")[1:]:
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


_MAX_DEPTH = 12  # a valid record's containers nest 8 deep at most (record.hands[h].wins[w].patterns[p].melds)


def _check_depth(record):
    """RecordError if ``record`` nests deeper than any valid record (checked
    without recursion, so that no later step can hit Python's recursion limit)."""
    stack = [(record, 0)]
    while stack:
        obj, depth = stack.pop()
        if isinstance(obj, (dict, list, tuple)):
            if depth >= _MAX_DEPTH:
                raise RecordError(f"record nests deeper than {_MAX_DEPTH} levels; no valid record does")
            stack.extend((v, depth + 1) for v in (obj.values() if isinstance(obj, dict) else obj))


def _load(record):
    if isinstance(record, (str, bytes, bytearray)):
        try:
            record = json.loads(record)
        except (ValueError, RecursionError) as e:
            raise RecordError(f"record is not valid JSON: {show(str(e), 200)}") from None
    _check_depth(record)
    _fields(record, _RECORD_KEYS, "record")
    if record["format"] != RECORD_FORMAT:
        raise RecordError(f"record.format: unknown format {show(record['format'])}; "
                          f"expected {RECORD_FORMAT!r}")
    names = tuple(RuleConfig.__dataclass_fields__)
    _fields(record["rules"], names, "record.rules")
    try:
        rules = RuleConfig.from_dict(record["rules"])
    except (ValueError, TypeError) as e:
        raise RecordError(f"record.rules: {e}") from None
    if not _json_int(record["seed"]) or not 0 <= record["seed"] < 2 ** 64:
        raise RecordError(f"record.seed must be an integer in [0, 2**64), got {show(record['seed'])}")
    hands = record["hands"]
    if not isinstance(hands, list) or not 1 <= len(hands) <= rules.hands_per_game:
        raise RecordError(f"record.hands must be a list of 1..{rules.hands_per_game} hands")
    lengths = set()  # the decisions' lengths: all 2 ([seat, action]) or all 3 (with legal ids)
    for h, hand in enumerate(hands):
        where = f"record.hands[{h}]"
        _fields(hand, _HAND_KEYS, where)
        if not _json_int(hand["index"]) or hand["index"] != h:
            raise RecordError(f"{where}.index must be {h}, got {show(hand['index'])}")
        sq = hand["squares"]
        if not isinstance(sq, list) or len(sq) != 4:
            raise RecordError(f"{where}.squares must be 4 lists of 36 card ids")
        for p in range(4):
            _int_list(sq[p], f"{where}.squares[{p}]", SQUARE_SIZE)
        if sorted(c for row in sq for c in row) != list(range(NUM_CARDS)):
            raise RecordError(f"{where}.squares must hold each card id 0-143 exactly once")
        if not isinstance(hand["decisions"], list):
            raise RecordError(f"{where}.decisions must be a list")
        for i, d in enumerate(hand["decisions"]):
            if not isinstance(d, list) or len(d) not in (2, 3) or not all(map(_json_int, d[:2])):
                raise RecordError(f"{where}.decisions[{i}] must be [seat, action] or "
                                  f"[seat, action, legal ids], got {show(d)}")
            if len(d) == 3:
                _int_list(d[2], f"{where}.decisions[{i}][2]")
            lengths.add(len(d))
            if len(lengths) > 1:
                raise RecordError(f"{where}.decisions[{i}] is {show(d)}: a record gives the legal ids "
                                  f"with every decision or with none")
    return record, rules


def _replay(record, auto_forced=True, collect=None) -> Game:
    record, rules = _load(record)
    hands = record["hands"]
    probe = Game(rules, seed=record["seed"], auto_forced=False)
    squares = L.view(probe.state, "squares").astype(np.int64)   # the seed's deal, for the hands not recorded
    for h, hand in enumerate(hands):
        squares[h] = hand["squares"]
    g = Game(rules, seed=record["seed"], auto_forced=False, squares=squares)
    for h, hand in enumerate(hands):
        if collect is not None:
            collect.append([])
        for i, d in enumerate(hand["decisions"]):
            where = f"record.hands[{h}].decisions[{i}]"
            if g.hand_index != h or g.done:
                raise RecordError(f"{where}: hand {h} is already over")
            if d[0] != g.current_player:
                raise RecordError(f"{where}: seat {show(d[0])} is not the seat to act ({g.current_player})")
            legal = g.legal_actions()
            if len(d) == 3 and d[2] != legal:
                raise RecordError(f"{where}: recorded legal ids {show(d[2])} differ from {legal}")
            if collect is not None:
                collect[-1].append(legal)
            try:
                g.step(d[1])
            except IllegalActionError as e:
                raise RecordError(f"{where}: {e}") from None
        if h < len(hands) - 1 and g.hand_index == h:
            raise RecordError(f"record.hands[{h}].decisions end before the hand is over")
    want = g.record()
    for h, hand in enumerate(want["hands"][:len(hands)]):
        for i, d in enumerate(hands[h]["decisions"]):
            if len(d) == 3:
                hand["decisions"][i].append(d[2])
    path = _first_difference(record, want, "record")
    if path:
        if path == "record.hands" and len(hands) < len(want["hands"]):
            raise RecordError(f"record.hands: hand {len(hands) - 1} is over but the record has no "
                              f"hand {len(hands)}")
        got, exp = _lookup(record, path), _lookup(want, path)
        raise RecordError(f"{path}: recorded {show(got)} differs from the replay's {show(exp)}")
    # the game stays exactly at the record's end (replay(rec).record() == rec): a record of an
    # auto_forced=False game may end at a forced decision, and the game then waits at it
    g.auto_forced = bool(auto_forced)
    g._rules = g.rules.to_array(g.auto_forced)
    return g
