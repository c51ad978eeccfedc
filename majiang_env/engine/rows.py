"""Checking a kernel state row that comes from outside the kernel.

numba checks no bounds: a row whose river length, concealed count or seat to
act is out of range makes the kernel read and write outside the row. Every
path that builds a ``Game`` from a row (``game.game_from_state``: its callers
``VectorGame.game``, the OpenSpiel face's state strings, ``SingleAgentEnv``'s
restore after a failed opponent) calls :func:`check_row` first, so no row
reaches the kernel that the kernel could not have produced.

What is checked (``layout.py`` names every field):

* **bounds**: every entry of every field is in its range (``BOUNDS``), e.g.
  ``river_len`` 0..18, ``num_concealed`` 0..17, ``to_act`` -1..3, card ids
  -1..143, kinds 0..35, action ids 0..155; ``scratch`` (work space with no
  meaning between calls) is not read;
* **the rule set**: ``hand_index`` at most ``hands_per_game``, ``num_wins`` at
  most ``wins_to_close``, no side cards and no exchange phase without 変;
* **consistency**: the four forms of each concealed hand agree (copy masks,
  counts, base-5 keys, face counts, ``num_concealed``); the game is over
  exactly when ``to_act`` is -1 and ``hand_index`` is ``hands_per_game``;
  ``start_seat`` is the hand's; the used entries of melds, side cards and
  rivers hold real cards and ``river_kinds`` counts the river; no decisions
  are logged for hands not reached; and the legal list is exactly what the
  kernel computes for the row (so the mask the game uses is the row's own).

A bad row raises ``ValueError`` naming the field, the entry, its value and
what is allowed; nothing is changed (the row is read, and the legal list is
recomputed on a copy).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import tables
from .checks import int_array
from .kernel import layout as L
from .kernel.cards import POW5
from .kernel.legal import legal
from .rules import (
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_KINDS,
    NUM_SEATS,
    R_EXCHANGE,
    R_HANDS,
    R_WINS_TO_CLOSE,
    SQUARE_SIZE,
    RuleConfig,
)

__all__ = ["BOUNDS", "check_row"]

_CARD = (-1, NUM_CARDS - 1)     # a card id, or -1 for none / withheld
_KIND = (0, NUM_KINDS - 1)
_MAX_HAND = 17                  # 13 dealt + 4 for 変 (with exchange), or 13 + 1 taken
_MAX_GAIN = 300                 # a winner gains at most 3 x base 100 (docs/rules.md §9)
_MAX_LOSS = 300 * L.MAX_WINS    # a seat pays at most 300 for each win of a hand

# Per-entry bounds of each field, (lo, hi) inclusive; a tuple of pairs for a field whose
# entries are records (the last axis indexes the record's fields).
_SUB_MELD = ((0, 4), _KIND, _CARD, _CARD, _CARD, _CARD, _CARD)               # M_*
_SUB_WIN = ((0, 3), (-1, 3), _CARD, (0, 100)) + ((0, 100), (0, 15)) * 3 \
    + ((0, 6), _KIND) * 4 + (_KIND,)                                              # W_*
BOUNDS = {
    "hand_index": (0, L.MAX_HANDS),
    "start_seat": (0, NUM_SEATS - 1),
    "phase": (L.PH_EXCHANGE, L.PH_OVER),
    "to_act": (-1, NUM_SEATS - 1),
    "slot": (0, L.NUM_SLOTS - 1),
    "num_wins": (0, L.MAX_WINS),
    "num_exchanged": (0, L.NUM_EXCHANGE),
    "closed_hand": (-1, L.MAX_HANDS - 1),
    "took": (L.TOOK_NONE, L.TOOK_PICKUP),
    "picked_kind": (-1, NUM_KINDS - 1),
    "drawn_card": _CARD,
    "win_pending": ((-1, 3), (-1, 3), _CARD, (-1, NUM_KINDS - 1)),                # WP_*
    "num_legal": (0, L.MAX_LEGAL),
    "legal": (0, NUM_ACTIONS - 1),
    "scores": (-_MAX_LOSS * L.MAX_HANDS, _MAX_GAIN * L.MAX_HANDS),
    "deltas": (-_MAX_LOSS, _MAX_GAIN),
    "num_decisions": (0, L.MAX_DEC),
    "squares": _CARD,
    "square_taken": (0, SQUARE_SIZE),
    "hand_masks": (0, 15),
    "hand_counts": (0, 4),
    "hand_keys": (0, 4 * int(POW5.sum())),
    "face_counts": (0, _MAX_HAND),
    "num_concealed": (0, _MAX_HAND),
    "side": _CARD,
    "num_side": (0, L.NUM_SIDE),
    "melds": _SUB_MELD,
    "num_melds": (0, L.MAX_MELDS),
    "river": _CARD,
    "river_slots": (0, L.NUM_SLOTS - 1),
    "river_flags": (0, L.RF_KAN | (L.RF_WON << 3) | (L.RF_WON - 1)),
    "river_len": (0, L.RIVER_LEN),
    "river_kinds": (0, 4),
    "last_slot": (-1, L.NUM_SLOTS - 1),
    "retired": (0, 1),
    "wins": _SUB_WIN,
    "scratch": None,                 # work space: any value
    "decision_log": ((0, NUM_SEATS - 1), (-1, NUM_ACTIONS - 1)),   # -1: withheld in a sampled world
}
assert set(BOUNDS) == set(L.BY_NAME), set(BOUNDS) ^ set(L.BY_NAME)


def _bound_arrays():
    lo = np.full(L.SIZE, np.iinfo(np.int32).min, np.int32)
    hi = np.full(L.SIZE, np.iinfo(np.int32).max, np.int32)
    for f in L.FIELDS:
        b = BOUNDS[f.name]
        if b is None:
            continue
        n = int(np.prod(f.shape, dtype=np.int64))
        if isinstance(b[0], tuple):                       # a record per entry
            assert f.shape[-1] == len(b), f.name
            sub = np.array(b, np.int32)
            lo[f.offset:f.offset + n] = np.tile(sub[:, 0], n // len(b))
            hi[f.offset:f.offset + n] = np.tile(sub[:, 1], n // len(b))
        else:
            lo[f.offset:f.offset + n], hi[f.offset:f.offset + n] = b
    return lo, hi


_LO, _HI = _bound_arrays()

# consistency failures: (code, index, value, expected)
_OK, _BOUND, _EQUAL, _AT_MOST, _CARD_ID, _LEGAL = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def _scan(st, lo, hi, rules, wt, work):
    """(code, index, value, expected) of the first problem of row ``st``; code 0: none."""
    for i in range(st.shape[0]):
        if st[i] < lo[i] or st[i] > hi[i]:
            return _BOUND, i, st[i], 0
    hands = rules[R_HANDS]
    h = st[L.HAND]
    over = st[L.PHASE] == L.PH_OVER
    if h > hands:
        return _AT_MOST, L.HAND, h, hands
    if over:
        if st[L.CUR] != -1:
            return _EQUAL, L.CUR, st[L.CUR], -1
        if h != hands:
            return _EQUAL, L.HAND, h, hands
    else:
        if h == hands:
            return _EQUAL, L.PHASE, st[L.PHASE], L.PH_OVER
        if st[L.CUR] < 0:
            return _BOUND, L.CUR, st[L.CUR], 0
        if st[L.START] != h % 4:
            return _EQUAL, L.START, st[L.START], h % 4
    if st[L.CLOSED] >= hands:
        return _AT_MOST, L.CLOSED, st[L.CLOSED], hands - 1
    if st[L.NWINS] > rules[R_WINS_TO_CLOSE]:
        return _AT_MOST, L.NWINS, st[L.NWINS], rules[R_WINS_TO_CLOSE]
    if not rules[R_EXCHANGE]:
        if st[L.PHASE] == L.PH_EXCHANGE:
            return _BOUND, L.PHASE, st[L.PHASE], 0
        for p in range(4):
            if st[L.NSIDE + p] != 0:
                return _EQUAL, L.NSIDE + p, st[L.NSIDE + p], 0
    for hh in range(min(h, 3) + 1, 4):                  # hands not reached log nothing
        if st[L.HNDEC + hh] != 0:
            return _EQUAL, L.HNDEC + hh, st[L.HNDEC + hh], 0
    for p in range(4):
        total = 0
        for f in range(4):
            cnt = 0
            key = 0
            for j in range(9):
                k = f * 9 + j
                m = st[L.HMASK + p * NUM_KINDS + k]
                c = (m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)
                if st[L.HCNT + p * NUM_KINDS + k] != c:
                    return _EQUAL, L.HCNT + p * NUM_KINDS + k, st[L.HCNT + p * NUM_KINDS + k], c
                cnt += c
                key += c * POW5[j]
            if st[L.NCOL + p * 4 + f] != cnt:
                return _EQUAL, L.NCOL + p * 4 + f, st[L.NCOL + p * 4 + f], cnt
            if st[L.KEYS + p * 4 + f] != key:
                return _EQUAL, L.KEYS + p * 4 + f, st[L.KEYS + p * 4 + f], key
            total += cnt
        if st[L.NHAND + p] != total:
            return _EQUAL, L.NHAND + p, st[L.NHAND + p], total
        for i in range(st[L.NSIDE + p]):
            if st[L.SIDE + p * L.NUM_SIDE + i] < 0:
                return _CARD_ID, L.SIDE + p * L.NUM_SIDE + i, st[L.SIDE + p * L.NUM_SIDE + i], 0
        for i in range(st[L.NMELD + p]):
            m = L.MELDS + (p * L.MAX_MELDS + i) * L.MELD_W
            if st[m + L.M_TYPE] == 0:
                return _BOUND, m + L.M_TYPE, 0, 1
            if st[m + L.M_TYPE] == L.MT_CHOW and st[m + L.M_KIND] % 9 > 6:
                return _AT_MOST, m + L.M_KIND, st[m + L.M_KIND], st[m + L.M_KIND] - st[m + L.M_KIND] % 9 + 6
            for c in range(L.M_CARD0, L.M_STANDIN + 1):
                if st[m + c] < 0:
                    return _CARD_ID, m + c, st[m + c], 0
        for k in range(NUM_KINDS):
            work[k] = 0
        for i in range(st[L.NRIVER + p]):
            card = st[L.RIVER + p * L.RIVER_LEN + i]
            if card < 0:
                return _CARD_ID, L.RIVER + p * L.RIVER_LEN + i, card, 0
            work[card >> 2] += 1
        for k in range(NUM_KINDS):
            if st[L.RKIND + p * NUM_KINDS + k] != work[k]:
                return _EQUAL, L.RKIND + p * NUM_KINDS + k, st[L.RKIND + p * NUM_KINDS + k], work[k]
    n = st[L.NLEGAL]
    for i in range(1, n):
        if st[L.LEGAL + i] <= st[L.LEGAL + i - 1]:
            return _LEGAL, L.LEGAL + i, st[L.LEGAL + i], 0
    if over:
        if n != 0:
            return _EQUAL, L.NLEGAL, n, 0
        return _OK, 0, 0, 0
    # the legal list the kernel computes for this row, on a copy
    cp = st.copy()
    m = legal(cp, rules, wt)
    if m != n:
        return _EQUAL, L.NLEGAL, n, m
    for i in range(n):
        if cp[L.LEGAL + i] != st[L.LEGAL + i]:
            return _LEGAL, L.LEGAL + i, st[L.LEGAL + i], cp[L.LEGAL + i]
    return _OK, 0, 0, 0


def _where(i: int) -> tuple:
    """(field, entry text, (lo, hi) of the entry or None) of row index ``i``."""
    for f in L.FIELDS:
        n = int(np.prod(f.shape, dtype=np.int64))
        if f.offset <= i < f.offset + n:
            pos = np.unravel_index(i - f.offset, f.shape) if f.shape else ()
            entry = f.name + ("[" + ", ".join(str(int(x)) for x in pos) + "]" if f.shape else "")
            return f, entry, (int(_LO[i]), int(_HI[i]))
    raise AssertionError(i)


def check_row(row, rules: RuleConfig) -> np.ndarray:
    """``row`` as a new int32[layout.SIZE] row, once checked against the layout's
    bounds and ``rules`` (module docstring); ValueError naming the field, its
    value and the allowed range otherwise."""
    arr = int_array("state row", row)
    if arr.shape != (L.SIZE,):
        raise ValueError(f"a state row is an integer array of shape ({L.SIZE},), got {arr.dtype} {arr.shape}")
    if arr.size and (arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max):
        i = int(np.argmax((arr < np.iinfo(np.int32).min) | (arr > np.iinfo(np.int32).max)))
        _, entry, (lo, hi) = _where(i)
        raise ValueError(f"state row: {entry} = {int(arr[i])} is out of range: allowed {lo}..{hi}")
    st = np.ascontiguousarray(arr, np.int32).copy()
    r = rules.to_array(True)
    code, i, value, expected = _scan(st, _LO, _HI, r, tables.win_table(), np.zeros(NUM_KINDS, np.int32))
    if code == _OK:
        return st
    _, entry, (lo, hi) = _where(int(i))
    value, expected = int(value), int(expected)
    if code == _BOUND:
        if lo <= value <= hi:       # in the field's range, but not at this point of the game
            what = {L.CUR: "a seat 0..3 while the game is not over", L.PHASE: "no exchange phase without 変"}
            raise ValueError(f"state row: {entry} = {value} is out of range: allowed "
                             f"{what.get(int(i), f'{max(lo, expected)}..{hi}')}")
        raise ValueError(f"state row: {entry} = {value} is out of range: allowed {lo}..{hi}")
    if code == _AT_MOST:
        raise ValueError(f"state row: {entry} = {value} is out of range under these rules: allowed "
                         f"{lo}..{expected}")
    if code == _CARD_ID:
        raise ValueError(f"state row: {entry} = {value} is an entry in use, so it must be a card id "
                         f"0..{NUM_CARDS - 1}")
    if code == _LEGAL:
        raise ValueError(f"state row: {entry} = {value} does not match the legal list the rules give "
                         f"for this row (ascending, {lo}..{hi}; the kernel computes {expected} there)")
    raise ValueError(f"state row: {entry} = {value} contradicts the rest of the row: the only value "
                     f"consistent with it is {expected}")
