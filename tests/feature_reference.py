"""A slow, independent reference of the ``features`` encoding (kernel/features.py).

Written from the specification only: the module docstring of
``majiang_env/engine/kernel/features.py`` (the channels), the module docstring of
``majiang_env/engine/kernel/greedy.py`` (deficiency, unseen copies, acceptance, the
hand an option leaves, the value of a pick-up), ``docs/observation.md`` (the
compact observation) and ``docs/api.md`` (action ids). It shares no code with
the kernel beyond the public layout constants (offsets and channel starts).

Deficiency is found by brute force: for one face colour, every target of up to
4 melds (triplets, or runs of three consecutive numbers) and at most one pair,
each number used at most 4 times, is listed once (``_TARGETS``); the cards a
target misses from the colour's counts are ``sum(max(0, target - counts))``.
A hand's target is one such target per colour, with the melds and the pair
split between the colours, so the hand's deficiency is the cheapest split
(:func:`deficiency`). Everything is cached by counts, so repeated hands are free.
"""
from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
from greedy_reference import RefPolicy

from majiang_env.engine.kernel import features as F
from majiang_env.engine.kernel import observe as O

S = O.OBS_SCALAR

# action ids (docs/api.md)
A_DISCARD, A_ANKAN, A_MINKAN, A_TSUMO, A_PASS, A_DRAW = 0, 36, 72, 108, 109, 110
A_PUNG, A_CHOW, A_RON, A_EXCHANGE = 111, 114, 117, 120

# meld types in OBS_MELD
MT_PUNG, MT_CHOW, MT_ANKAN, MT_MINKAN = 1, 2, 3, 4


# --------------------------------------------------------------------------- deficiency
def _colour_targets():
    """Every target inside one colour: (counts int[9], melds m, pairs p), as arrays."""
    melds = [np.eye(9, dtype=np.int64)[n] * 3 for n in range(9)]                       # triplets
    melds += [np.eye(9, dtype=np.int64)[n:n + 3].sum(0) for n in range(7)]              # runs
    pairs = [np.zeros(9, np.int64)] + [np.eye(9, dtype=np.int64)[n] * 2 for n in range(9)]
    rows, ms, ps = [], [], []
    for m in range(5):
        for combo in itertools.combinations_with_replacement(range(len(melds)), m):
            base = sum((melds[i] for i in combo), np.zeros(9, np.int64))
            for j, pr in enumerate(pairs):
                t = base + pr
                if t.max() <= 4:                 # a kind at most 4 times in the target
                    rows.append(t)
                    ms.append(m)
                    ps.append(0 if j == 0 else 1)
    order = np.lexsort((np.array(ps), np.array(ms)))          # grouped by (m, p)
    return np.array(rows)[order], np.array(ms)[order], np.array(ps)[order]


_TARGETS, _T_M, _T_P = _colour_targets()
_GROUP_START = np.flatnonzero(np.r_[True, (np.diff(_T_M) != 0) | (np.diff(_T_P) != 0)])
# _SHORT[j][v]: per target, the cards of number j + 1 it misses when the colour holds v of them
_SHORT = [[np.maximum(_TARGETS[:, j] - v, 0).astype(np.int16) for v in range(6)] for j in range(9)]
BIG = 10 ** 6


@cache
def colour_costs(counts9: tuple) -> tuple:
    """cost[m][p]: the fewest cards one colour with these 9 counts misses for m melds
    and p pairs (BIG if no target exists)."""
    missing = sum(_SHORT[j][min(v, 5)] for j, v in enumerate(counts9))
    cost = [[BIG, BIG] for _ in range(5)]
    for g, low in zip(_GROUP_START, np.minimum.reduceat(missing, _GROUP_START), strict=True):
        cost[_T_M[g]][_T_P[g]] = int(low)
    return tuple(tuple(r) for r in cost)


@cache
def two_colour_costs(counts18: tuple) -> tuple:
    """cost[m][p] of two colours together: the cheapest split of m melds and p pairs."""
    a, b = colour_costs(counts18[:9]), colour_costs(counts18[9:])
    return tuple(tuple(min(a[m1][p1] + b[m - m1][p - p1] for m1 in range(m + 1) for p1 in range(p + 1))
                       for p in range(2)) for m in range(5))


@cache
def deficiency(counts36: tuple, n_melds: int) -> int:
    """Fewest cards missing for 1 pair + (4 - n_melds) melds from these 36 counts:
    the cheapest split of the melds and the pair between colours 0-1 and 2-3."""
    need = 4 - n_melds
    if need < 0:
        return BIG
    low, high = two_colour_costs(tuple(counts36[:18])), two_colour_costs(tuple(counts36[18:]))
    return min(low[m][p] + high[need - m][1 - p] for m in range(need + 1) for p in range(2))


@cache
def acceptance(counts36: tuple, n_melds: int, unseen36: tuple) -> int:
    """Unseen cards whose addition lowers the deficiency of the hand."""
    d = deficiency(counts36, n_melds)
    acc = 0
    for k in range(36):
        if unseen36[k] == 0:
            continue
        plus = list(counts36)
        plus[k] += 1
        if deficiency(tuple(plus), n_melds) < d:
            acc += unseen36[k]
    return acc


# --------------------------------------------------------------------------- observation
def _kinds_plus_one(a):
    return [int(v) - 1 for v in a if v > 0]


def read(obs):
    """The parts of the compact observation the features use, by name."""
    obs = np.asarray(obs).astype(np.int64)
    v = {}
    v["hand"] = obs[O.OBS_HAND:O.OBS_HAND + 36].copy()
    v["drawn"] = obs[O.OBS_DRAWN:O.OBS_DRAWN + 36].copy()
    v["side"] = obs[O.OBS_SIDE:O.OBS_SIDE + 144].reshape(4, 36).copy()
    rivers = obs[O.OBS_RIVER:O.OBS_RIVER + 72].reshape(4, 18)
    v["river"] = np.zeros((4, 36), np.int64)
    for r in range(4):
        for k in _kinds_plus_one(rivers[r]):
            v["river"][r, k] += 1
    v["melds"] = [[] for _ in range(4)]          # (type, kind, claimed kind or -1)
    m = obs[O.OBS_MELD:O.OBS_MELD + 48].reshape(4, 4, 3)
    for r in range(4):
        for i in range(4):
            t, k1, c1 = (int(x) for x in m[r, i])
            if t:
                v["melds"][r].append((t, k1 - 1, c1 - 1))
    v["claim"] = obs[O.OBS_CLAIM:O.OBS_CLAIM + 4] - 1     # -1: none
    sc = obs[S:S + 24]
    for name, i in (("hand_index", O.S_HAND), ("start", O.S_START), ("lap", O.S_LAP),
                    ("phase", O.S_PHASE), ("slot", O.S_SLOT), ("nwins", O.S_NWINS),
                    ("took", O.S_TOOK), ("pick_kind", O.S_PICK_KIND),
                    ("exch_left", O.S_EXCH_LEFT)):
        v[name] = int(sc[i])
    v["pick_kind"] -= 1
    v["retired"] = sc[O.S_RETIRED:O.S_RETIRED + 4].copy()
    v["scores"] = sc[O.S_SCORES:O.S_SCORES + 4].copy()
    v["square_left"] = sc[O.S_SQUARE_LEFT:O.S_SQUARE_LEFT + 4].copy()
    return v


def visible_copies(v):
    """Copies of each kind the observer sees (greedy docstring, "Unseen")."""
    seen = v["hand"] + v["drawn"] + v["side"].sum(0) + v["river"].sum(0)
    for r in range(4):
        for t, k, c in v["melds"][r]:
            if t in (MT_PUNG, MT_MINKAN):
                seen[k] += 2                     # the 2 shown hand cards (明's kan card: in a river)
            elif t == MT_ANKAN:
                seen[k] += 3
            elif t == MT_CHOW:
                for j in (k, k + 1, k + 2):
                    if j != c:
                        seen[j] += 1             # the two run kinds other than the claimed one
    return seen


# --------------------------------------------------------------------------- options
def pickup_shown(a, claim, chow_off):
    """(claimed kind, [the two shown kinds]) of pick-up action a, or None if no claim."""
    if A_PUNG <= a < A_CHOW:
        k = int(claim[a - A_PUNG + 1])
        return (k, [k, k]) if k >= 0 else None
    k = int(claim[chow_off])
    if k < 0:
        return None
    pos = a - A_CHOW                             # the claimed card is the low / middle / high one
    run = [k - pos, k - pos + 1, k - pos + 2]
    return k, [j for j in run if j != k]


def pickup_value(hand, n_melds, own_melds, a, claimed, shown, kuikae, unseen):
    """(lowest deficiency, highest acceptance among the options reaching it) of the
    best discard-phase option after pick-up ``a``."""
    h = hand.copy()
    for j in shown:
        h[j] -= 1
    assert (h >= 0).all(), "a legal pick-up shows cards of the hand"
    n = n_melds + 1
    older_pung = any(t == MT_PUNG and k == claimed for t, k, _ in own_melds)
    k_by_minkan = (a < A_CHOW) or older_pung     # after a 刻 of k, or with an older 刻 of k
    values = []
    for y in range(36):
        if h[y] == 0:
            continue
        if y == claimed and not kuikae and not k_by_minkan:
            continue                             # 打 k illegal; no 明 of k either
        left = h.copy()
        left[y] -= 1
        values.append((deficiency(tuple(left), n), acceptance(tuple(left), n, unseen)))
        if h[y] == 4 and (kuikae or y != claimed):  # 暗 y
            left = h.copy()
            left[y] -= 4
            values.append((deficiency(tuple(left), n + 1), acceptance(tuple(left), n + 1, unseen)))
    best = min(d for d, _ in values)
    return best, max(acc for d, acc in values if d == best)


# --------------------------------------------------------------------------- features
def reference_features(obs, mask, rules=None) -> np.ndarray:
    """float32[FEAT_SIZE]: the features of compact observation ``obs`` with action
    mask ``mask`` (all zeros when the seat is not to act) under ``rules``."""
    from majiang_env.engine.rules import make_rules
    rules = make_rules(rules)
    chow_off = 1 if rules.chow_from == "next" else 3
    kuikae = bool(rules.kuikae)
    mask = np.asarray(mask) != 0
    v = read(obs)
    out = np.zeros(F.FEAT_SIZE, np.float64)
    planes = np.zeros(F.PLANE_SHAPE, np.float64)

    # ---- planes over the kinds
    for j in range(4):
        planes[F.P_HAND + j] = v["hand"] >= j + 1
    planes[F.P_DRAWN] = v["drawn"]
    if v["pick_kind"] >= 0:
        planes[F.P_PICKED, v["pick_kind"]] = 1
    for r in range(4):
        planes[F.P_SIDE + r] = v["side"][r] / 4
        planes[F.P_RIVER + r] = v["river"][r] / 4
        if r and v["claim"][r] >= 0:
            planes[F.P_CLAIM + r, v["claim"][r]] = 1
        for t, k, _ in v["melds"][r]:
            if t in (MT_PUNG, MT_ANKAN, MT_MINKAN):
                planes[F.P_TRIPLET + r, k] = 1
            else:
                planes[F.P_RUN + r, k:k + 3] = 1
    seen = visible_copies(v)
    unseen = 4 - seen
    assert (unseen >= 0).all(), "no kind can be seen more than 4 times"
    planes[F.P_VISIBLE] = seen / 4
    planes[F.P_UNSEEN] = unseen / 4

    n_melds = len(v["melds"][0])
    now = v["hand"] + v["drawn"]                 # the hand now: H + d
    unseen_t = tuple(int(x) for x in unseen)

    def acc_scaled(a):
        return min(a / F.ACC_SCALE, 1.0)

    # giving up one card of k: 打 k (discard phase) or 変 k (exchange phase)
    opt = {}
    for k in range(36):
        if mask[A_DISCARD + k] or mask[A_EXCHANGE + k]:
            left = now.copy()
            left[k] -= 1
            opt[k] = (deficiency(tuple(left), n_melds), acceptance(tuple(left), n_melds, unseen_t))
    if opt:
        lowest = min(d for d, _ in opt.values())
        for k, (d, a) in opt.items():
            planes[F.P_OPT_LEGAL, k] = 1
            planes[F.P_OPT_DEF, k] = d / 8
            planes[F.P_OPT_BEST, k] = d == lowest
            planes[F.P_OPT_ACC, k] = acc_scaled(a)
    for k in range(36):
        if mask[A_ANKAN + k]:
            left = now.copy()
            left[k] -= 4
            planes[F.P_ANKAN_DEF, k] = (min(deficiency(tuple(left), n_melds + 1), 7) + 1) / 8
        if mask[A_MINKAN + k]:
            left = now.copy()
            left[k] -= 1
            planes[F.P_MINKAN_DEF, k] = (min(deficiency(tuple(left), n_melds), 7) + 1) / 8
    out[:F.SCALARS] = planes.reshape(-1)

    # ---- scalars
    sc = out[F.SCALARS:]
    sc[F.F_HAND + v["hand_index"]] = 1
    sc[F.F_START + v["start"]] = 1
    sc[F.F_PHASE + v["phase"]] = 1
    sc[F.F_TOOK + v["took"]] = 1
    sc[F.F_LAP] = v["lap"] / 19
    sc[F.F_SLOT] = v["slot"] / 76
    sc[F.F_NWINS] = v["nwins"] / 3
    sc[F.F_EXCH_LEFT] = v["exch_left"] / 16
    for r in range(4):
        sc[F.F_RETIRED + r] = v["retired"][r]
        sc[F.F_SCORES + r] = math.tanh(v["scores"][r] / 100)
        sc[F.F_SQUARE_LEFT + r] = v["square_left"][r] / 36
        sc[F.F_MELDS + r] = len(v["melds"][r]) / 4
    now_t = tuple(int(x) for x in now)
    sc[F.F_DEF_NOW] = deficiency(now_t, n_melds) / 8
    sc[F.F_ACC_NOW] = acc_scaled(acceptance(now_t, n_melds, unseen_t))
    for i in range(6):
        a = A_PUNG + i
        if not mask[a]:
            continue
        claimed, shown = pickup_shown(a, v["claim"], chow_off)
        d, acc = pickup_value(v["hand"] + v["drawn"], n_melds, v["melds"][0], a, claimed, shown,
                              kuikae, unseen_t)
        sc[F.F_PICKUP_LEGAL + i] = 1
        sc[F.F_PICKUP_DEF + i] = d / 8
        sc[F.F_PICKUP_ACC + i] = acc_scaled(acc)
    sc[F.F_WIN_LEGAL] = bool(mask[A_TSUMO] or mask[A_RON:A_RON + 3].any())
    # the greedy policy's choices: its tie set by the independent reading of tests/greedy_reference.py
    if mask.any() and v["phase"] <= 2:
        ties = RefPolicy(chow_off, kuikae).ties(np.asarray(obs), mask.astype(np.int8))
        for a in ties:
            if A_TSUMO <= a < A_EXCHANGE:
                sc[F.F_GREEDY + a - A_TSUMO] = 1
            elif a < A_ANKAN or a >= A_EXCHANGE:
                out[F.P_GREEDY * 36 + (a - A_EXCHANGE if a >= A_EXCHANGE else a)] = 1
            else:
                out[F.P_GREEDY_KAN * 36 + (a - A_ANKAN if a < A_MINKAN else a - A_MINKAN)] = 1
    return out.astype(np.float32)
