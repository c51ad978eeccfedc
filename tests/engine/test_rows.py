"""Checking state rows from outside the kernel (``engine.rows.check_row``): every row
the kernel produces in random play passes, and a row with any field out of its range
or contradicting the rest raises ValueError naming the field, before any of it
reaches the kernel (``game_from_state``)."""
import numpy as np
import pytest

from majiang_env import Game, RuleConfig, VectorGame
from majiang_env.engine.game import game_from_state
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.rows import _HI, _LO, BOUNDS, check_row

RULE_SETS = [RuleConfig(), RuleConfig(exchange=False, hands_per_game=2, require_yaku=True, furiten=True),
             RuleConfig(discard_drawn=True, wins_to_close=1, payment="winner_only", chow_from="previous")]


def random_rows(rules, envs=48, steps=70, seed=0):
    """Rows of a batch in random play: envs x steps rows, finished games restarting."""
    vg = VectorGame(num_envs=envs, rules=rules, seed=seed)
    vg.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        vg.sample_step(rng.standard_normal((envs, 156)).astype(np.float32))
        yield from (vg._st[i] for i in range(envs))


def sample_rows(rules, n=6):
    """A handful of real rows: mid-hand decisions and sampled worlds, from one batch."""
    vg = VectorGame(num_envs=n, rules=rules, seed=5)
    vg.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        vg.sample_step(rng.standard_normal((n, 156)).astype(np.float32))
    return [np.array(vg._st[i]) for i in range(n)]


@pytest.mark.parametrize("rules", RULE_SETS, ids=["default", "no_exchange_yaku", "discard_drawn"])
def test_rows_of_random_play_all_pass(rules):
    n = 0
    for row in random_rows(rules):
        check_row(row, rules)
        n += 1
    assert n >= 3000
    g = Game(rules, seed=3)
    rng = np.random.default_rng(3)
    while not g.done:
        check_row(g.state, rules)
        for s in range(4):
            check_row(g.sample_hidden(s, int(rng.integers(2 ** 32))).state, rules)
        g.step(int(rng.choice(g.legal_actions())))
    check_row(g.state, rules)                       # a finished game
    check_row(g.sample_hidden(0, 1).state, rules)


def _raises_naming(row, rules, name):
    before = row.copy()
    with pytest.raises(ValueError, match=rf"state row: {name}\b") as e:
        game_from_state(row, rules, 0)
    assert np.array_equal(row, before)              # the caller's row is untouched
    return str(e.value)


@pytest.mark.parametrize("field", [f for f in L.FIELDS if BOUNDS[f.name] is not None], ids=lambda f: f.name)
def test_each_field_out_of_range_raises_naming_it(field):
    rules = RuleConfig()
    rows = sample_rows(rules)
    n = int(np.prod(field.shape, dtype=np.int64))
    for row in rows[:2]:
        for i in sorted({field.offset, field.offset + n // 2, field.offset + n - 1}):
            for bad in (int(_LO[i]) - 1, int(_HI[i]) + 1):
                r = row.copy()
                r[i] = bad
                msg = _raises_naming(r, rules, field.name)
                assert f"= {bad} " in msg and f"allowed {_LO[i]}..{_HI[i]}" in msg, msg


@pytest.mark.parametrize("name, value", [("river_len", 10 ** 7), ("num_concealed", 10 ** 6), ("to_act", 9),
                                         ("hand_index", 5), ("num_legal", 10 ** 9), ("slot", -1)])
def test_values_that_once_reached_the_kernel_raise(name, value):
    rules = RuleConfig()
    for row in sample_rows(rules)[:3]:
        r = np.array(row, np.int64)
        r[L.BY_NAME[name].offset] = value             # the field's first entry
        msg = _raises_naming(r, rules, name)
        assert str(value) in msg and "allowed" in msg


def test_values_past_int32_raise_naming_the_field():
    rules = RuleConfig()
    r = np.array(sample_rows(rules)[0], np.int64)
    L.view(r, "river_len")[1] = 2 ** 40
    assert "river_len[1] = 1099511627776" in _raises_naming(r, rules, "river_len")


def test_rows_that_contradict_themselves_raise():
    rules = RuleConfig()
    row = sample_rows(rules)[0]
    v = L.StateView
    p = int(v(row).to_act)
    cases = []
    r = row.copy()                                   # one more copy in the mask than the count says
    k = int(np.flatnonzero(v(r).hand_counts[p] < 4)[0])
    v(r).hand_masks[p, k] = 15
    cases.append((r, "hand_counts"))
    r = row.copy()
    v(r).num_concealed[p] += 1
    cases.append((r, "num_concealed"))
    r = row.copy()
    v(r).hand_keys[p, 0] += 1
    cases.append((r, "hand_keys"))
    r = row.copy()
    v(r).river_kinds[0, 0] += 1
    cases.append((r, "river_kinds"))
    r = row.copy()                                   # a legal list the rules do not give
    v(r).legal[int(v(r).num_legal) - 1] = 155
    cases.append((r, "legal"))
    r = row.copy()
    v(r).num_legal[...] = int(v(r).num_legal) - 1
    cases.append((r, "num_legal"))
    r = row.copy()                                   # a river entry in use that holds no card
    q = int(np.flatnonzero(v(r).river_len > 0)[0])
    v(r).river[q, 0] = -1
    cases.append((r, "river"))
    r = row.copy()                                   # over, but a seat still to act
    v(r).phase[...] = L.PH_OVER
    cases.append((r, "to_act"))
    r = row.copy()
    v(r).start_seat[...] = (int(v(r).start_seat) + 1) % 4
    cases.append((r, "start_seat"))
    r = row.copy()
    v(r).num_decisions[3] = 1
    cases.append((r, "num_decisions"))
    for r, name in cases:
        _raises_naming(r, rules, name)
    small = RuleConfig(hands_per_game=1, exchange=False)
    r = next(iter(random_rows(small, envs=1, steps=1)))
    r = r.copy()
    v(r).hand_index[...] = 2
    assert "allowed 0..1" in _raises_naming(r, small, "hand_index")
    r = next(iter(random_rows(small, envs=1, steps=1))).copy()
    v(r).num_side[0] = 1
    _raises_naming(r, small, "num_side")


def test_not_a_row_raises():
    rules = RuleConfig()
    for bad in (np.zeros(10, np.int32), np.zeros((2, L.SIZE), np.int32), np.zeros(L.SIZE, np.float64), "row"):
        with pytest.raises(ValueError, match="state row"):
            check_row(bad, rules)


def test_vector_game_copy_stays_fast():
    """The check costs a small part of ``VectorGame.game(i)``."""
    import time
    rules = RuleConfig()
    row = sample_rows(rules)[0]
    check_row(row, rules)
    t = time.perf_counter()
    for _ in range(200):
        check_row(row, rules)
    per_call = (time.perf_counter() - t) / 200
    assert per_call < 2e-4, per_call
