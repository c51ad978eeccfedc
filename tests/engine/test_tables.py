"""The winning-shape table (tables.win_table) and the deficiency tables
(tables.deficiency_table, kernel.greedy.deficiency) against brute force, and
deficiency 0 <=> the kernel's win check."""
import functools
import itertools

import numpy as np
import pytest

from majiang_env.engine import tables
from majiang_env.engine.kernel import cards, scoring
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel.greedy import deficiency, new_work

# ---- the winning-shape table: every colour key a hand can hold --------------------
# Independent of tables.py, which builds the table by enumerating meld multisets:
# here each key is decomposed, all keys at once with numpy, by the exact greedy
# rule below, and that rule is itself checked against a plain recursive search.
KEY_SIZE = 5 ** 9
POW5 = 5 ** np.arange(9)


def _all_counts():
    """int8[5**9, 9]: the 9 counts (0-4) of every colour key, key = sum(c[j] * 5**j)."""
    out = np.empty((KEY_SIZE, 9), np.int8)
    for j in range(9):  # digit j of consecutive keys: each value 5**j times, cycling
        out[:, j] = np.tile(np.repeat(np.arange(5, dtype=np.int8), 5 ** j), 5 ** (8 - j))
    return out


def _melds_only(c):
    """bool per row of ``c`` (int[N, 9]): do those cards split into 刻 and 順 only?

    Going up the numbers, the cards of number i that runs started at i - 2 and i - 1
    do not use must be triplets of i or runs started at i. Three equal runs are
    three triplets, so a split may be taken with at most 2 runs starting at each
    number; then the runs starting at i are the remaining count mod 3, which is
    forced, and the cards split iff no count goes negative and no run starts at 8
    or 9 (i = 7, 8 are 0-based)."""
    ok = np.ones(len(c), bool)
    r1 = np.zeros(len(c), np.int16)  # runs started at i - 1
    r2 = np.zeros(len(c), np.int16)  # runs started at i - 2
    for i in range(9):
        left = c[:, i].astype(np.int16) - r1 - r2
        ok &= left >= 0
        r = np.where(left >= 0, left % 3, 0).astype(np.int16)
        if i >= 7:
            ok &= r == 0
        r1, r2 = r, r1
    return ok


def _melds_and_pair(c):
    """bool per row: melds plus exactly one pair (頭)."""
    out = np.zeros(len(c), bool)
    for q in range(9):
        has = c[:, q] >= 2
        d = c[has].copy()
        d[:, q] -= 2
        out[np.flatnonzero(has)] |= _melds_only(d)
    return out


@functools.lru_cache(maxsize=None)
def _brute(counts, need_pair):
    """Can ``counts`` (tuple of 9) split into melds (plus one pair if need_pair)?
    A plain recursive search: the definition the vectorised rule is checked against."""
    if sum(counts) == 0:
        return not need_pair
    c = list(counts)
    if need_pair:
        for i in range(9):
            if c[i] >= 2:
                c[i] -= 2
                if _brute(tuple(c), False):
                    return True
                c[i] += 2
        return False
    i = next(j for j in range(9) if c[j])
    if c[i] >= 3:
        c[i] -= 3
        if _brute(tuple(c), False):
            return True
        c[i] += 3
    if i <= 6 and c[i + 1] and c[i + 2]:
        for j in (i, i + 1, i + 2):
            c[j] -= 1
        return _brute(tuple(c), False)
    return False


def test_vectorised_decomposition_against_recursive_search():
    """Every key of at most 7 cards and 3000 random keys of 8-14 cards."""
    counts = _all_counts()
    size = counts.sum(1)
    rng = np.random.default_rng(3)
    big = np.flatnonzero((size >= 8) & (size <= 14))
    rows = np.concatenate([np.flatnonzero(size <= 7), rng.choice(big, 3000, replace=False)])
    c = counts[rows]
    melds, pair = _melds_only(c), _melds_and_pair(c)
    for i, row in enumerate(c):
        t = tuple(int(x) for x in row)
        assert melds[i] == _brute(t, False) and pair[i] == _brute(t, True), t
    assert melds.sum() > 100 and pair.sum() > 100


def test_win_table_against_brute_force_on_every_reachable_key():
    """Every colour key of at most 14 cards (all a hand can hold) is checked: bit 0
    (melds only) and bit 1 (melds + one pair) against the decomposition."""
    wt = tables.win_table()
    assert wt.shape == (KEY_SIZE,) and wt.dtype == np.uint8
    counts = _all_counts()
    keys = np.flatnonzero(counts.sum(1) <= 14)
    c = counts[keys]
    some = np.random.default_rng(4).integers(0, KEY_SIZE, 1000)  # the rows are in key order
    assert np.array_equal(counts[some].astype(np.int64) @ POW5, some)
    assert len(keys) == 405_350  # the keys of at most 14 cards
    for bit, want in ((1, _melds_only(c)), (2, _melds_and_pair(c))):
        got = (wt[keys] & bit).astype(bool)
        bad = np.flatnonzero(got != want)
        assert len(bad) == 0, (f"bit {bit}: {len(bad)} keys differ, first counts "
                               f"{c[bad[0]].tolist()} table {bool(got[bad[0]])}")
    assert 0 < want.sum() < len(keys)


# ---- an independent slow definition: min over target shapes of the missing cards
def _targets():
    """{(m, p): int8[N, 9]} every one-colour target of m melds + p pairs, counts <= 4."""
    melds = []
    for i in range(9):
        t = [0] * 9
        t[i] = 3
        melds.append(t)
    for i in range(7):
        melds.append([1 if i <= j <= i + 2 else 0 for j in range(9)])
    out = {}
    for m in range(5):
        for p in range(2):
            rows = set()
            for combo in itertools.combinations_with_replacement(range(len(melds)), m):
                base = np.sum([melds[i] for i in combo], axis=0) if combo else np.zeros(9, int)
                for q in (range(9) if p else [None]):
                    t = base.copy()
                    if q is not None:
                        t[q] += 2
                    if t.max() <= 4:
                        rows.add(tuple(t))
            out[m, p] = np.array(sorted(rows), np.int8)
    return out


TARGETS = _targets()


def brute_colour(counts):
    """int[10]: missing cards of the best target per (m, p), column m * 2 + p."""
    c = np.asarray(counts, np.int8)
    return np.array([np.maximum(TARGETS[m, p] - c, 0).sum(1).min() for m in range(5) for p in range(2)])


def brute_hand(counts36, n_melds):
    """Min over every split of (4 - n) melds and 1 pair between the colours."""
    rows = [brute_colour(counts36[c * 9:c * 9 + 9]) for c in range(4)]
    need = 4 - n_melds
    best = 99
    for ms in itertools.product(range(need + 1), repeat=4):
        if sum(ms) != need:
            continue
        for pc in range(4):
            best = min(best, sum(int(rows[c][ms[c] * 2 + (c == pc)]) for c in range(4)))
    return best


def _random_colour_counts(rng, total):
    c = np.zeros(9, int)
    pool = np.repeat(np.arange(9), 4)
    for j in rng.choice(pool, size=total, replace=False):
        c[j] += 1
    return c


def test_target_enumeration_sizes():
    assert len(TARGETS[0, 0]) == 1 and len(TARGETS[0, 1]) == 9 and len(TARGETS[1, 0]) == 16


def test_colour_table_against_brute_force():
    dt = tables.deficiency_table()
    assert dt.shape == (5 ** 9, 10) and dt.dtype == np.uint16
    rng = np.random.default_rng(0)
    keys = [np.zeros(9, int), np.full(9, 4)]
    keys += [_random_colour_counts(rng, n) for n in range(1, 18) for _ in range(40)]
    keys += [rng.integers(0, 5, 9) for _ in range(100)]  # any key, up to 36 cards
    for c in keys:
        assert (dt[tables.colour_key(c)] & 15 == brute_colour(c)).all(), c


def test_colour_table_improving_bits_against_brute_force():
    """Bit 4 + j: one more card of number j + 1 lowers that column's deficiency."""
    dt = tables.deficiency_table()
    rng = np.random.default_rng(2)
    for n in list(range(0, 15)) * 12:
        c = _random_colour_counts(rng, n)
        here = brute_colour(c)
        bits = dt[tables.colour_key(c)] >> 4
        for j in range(9):
            if c[j] == 4:
                assert not (bits >> j & 1).any(), (c, j)
                continue
            c2 = c.copy()
            c2[j] += 1
            assert ((bits >> j & 1) == (brute_colour(c2) < here)).all(), (c, j)
    assert (dt >> 13 == 0).all()


def test_colour_table_cap_of_four():
    # 1111: a triplet + a pair would need a fifth 1
    dt = tables.deficiency_table()
    assert dt[tables.colour_key([4, 0, 0, 0, 0, 0, 0, 0, 0]), 1 * 2 + 1] & 15 == 2


def _random_hand(rng, n_concealed):
    cnt = np.zeros(36, np.int64)
    for c in rng.choice(144, size=n_concealed, replace=False):
        cnt[c // 4] += 1
    return cnt


def _near_win(rng, n_melds):
    """1 pair + (4 - n) melds as concealed counts (<= 4 per kind), maybe one card swapped."""
    while True:
        cnt = np.zeros(36, np.int64)
        for _ in range(4 - n_melds):
            k = rng.integers(36)
            if rng.random() < 0.5 and k % 9 <= 6:
                cnt[k:k + 3] += 1
            else:
                cnt[k] += 3
        cnt[rng.integers(36)] += 2
        if cnt.max() <= 4:
            break
    if rng.random() < 0.5:
        out = rng.choice(np.flatnonzero(cnt))
        cnt[out] -= 1
        cnt[rng.choice(np.flatnonzero(cnt < 4))] += 1
    return cnt


def test_hand_deficiency_against_brute_force():
    dt = tables.deficiency_table()
    w = new_work()
    rng = np.random.default_rng(1)
    checked = 0
    for n in range(5):
        for size in (13 - 3 * n, 14 - 3 * n):
            for _ in range(12):
                cnt = _random_hand(rng, size)
                assert deficiency(cnt, n, dt, w) == brute_hand(cnt, n), (cnt.tolist(), n)
                cnt = _near_win(rng, n)
                assert deficiency(cnt, n, dt, w) == brute_hand(cnt, n), (cnt.tolist(), n)
                checked += 2
    for size in (15, 16, 17):  # exchange-phase hands
        for _ in range(10):
            cnt = _random_hand(rng, size)
            assert deficiency(cnt, 0, dt, w) == brute_hand(cnt, 0)
    assert checked > 200


@pytest.mark.parametrize("n_melds", [0, 1, 2, 3, 4])
def test_zero_deficiency_iff_win(n_melds):
    dt = tables.deficiency_table()
    wt = tables.win_table()
    w = new_work()
    rng = np.random.default_rng(10 + n_melds)
    wins = 0
    for i in range(1500):
        cnt = _near_win(rng, n_melds) if i % 2 else _random_hand(rng, 14 - 3 * n_melds)
        st = np.zeros(L.SIZE, np.int32)
        for k in range(36):
            for c in range(cnt[k]):
                cards.add_card(st, 0, k * 4 + c)
        win = scoring.is_win(st, wt, 0, -1)
        assert (deficiency(cnt, n_melds, dt, w) == 0) == win, cnt.tolist()
        wins += win
    assert wins > 200
