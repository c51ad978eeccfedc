"""``python_majiang`` state strings and the edges of the OpenSpiel face: ``serialize()``
is data only (JSON of the actions since the start), ``game.deserialize_state`` replays
and checks it and refuses any other string without running anything in it; chance
outcomes, parameters and deal seeds out of range raise before anything changes."""
import base64
import json
import pickle

import numpy as np
import pytest


@pytest.fixture(scope="module")
def mos():
    pytest.importorskip("pyspiel")
    import majiang_env.envs.openspiel as mos
    return mos


@pytest.fixture(scope="module")
def game(mos):
    return mos.load_game({"hands_per_game": 1})


def play_to(s, n, rng):
    for _ in range(n):
        if s.is_terminal():
            break
        la = s.legal_actions()
        s.apply_action(la[rng.integers(len(la))])
    return s


class _WritesMarker:
    """Unpickling this creates the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def _pickled(path):
    return base64.b64encode(pickle.dumps({"_engine": _WritesMarker(path)})).decode()


def test_a_pickle_in_a_state_string_runs_nothing(game, tmp_path):
    marker = tmp_path / "marker"
    payloads = [
        f"history=\nmove_number=0\n__dict__={_pickled(marker)}",
        f"history=-1:3,-1:0\nmove_number=2\n__dict__={_pickled(marker)}",
        _pickled(marker),
        json.dumps({"format": "python_majiang-state/1", "history": [], "start": {"record": _pickled(marker),
                                                                                "rewards": [0, 0, 0, 0]}}),
        json.dumps({"format": "python_majiang-state/1", "history": [_pickled(marker)], "start": None}),
        base64.b64decode(_pickled(marker)).decode("latin-1"),
    ]
    for s in payloads:
        with pytest.raises(ValueError, match="python_majiang state string|RecordError|record"):
            game.deserialize_state(s)
    assert not marker.exists()
    with pytest.raises(ValueError, match="C\\+\\+ format"):
        game.deserialize_state(payloads[0])
    with pytest.raises(ValueError, match="must be a str"):
        game.deserialize_state(pickle.dumps({"x": _WritesMarker(marker)}))
    assert not marker.exists()


def test_round_trips(mos, game):
    import copy
    rng = np.random.default_rng(4)
    s = play_to(game.new_initial_state(), 8 + 40, rng)
    text = s.serialize()
    assert json.loads(text)["format"] == "python_majiang-state/1" and "__dict__" not in text
    d = game.deserialize_state(text)
    assert d.history() == s.history() and str(d) == str(s) and d.rewards() == s.rewards()
    assert d.engine.record() == s.engine.record() and d.serialize() == text
    mid = play_to(game.new_initial_state(), 5, rng)                 # during the deal
    assert game.deserialize_state(mid.serialize()).history() == mid.history()
    w = s.resample_from_infostate(s.current_player(), None)      # a sampled world, then play on it
    play_to(w, 6, rng)
    dw = game.deserialize_state(w.serialize())
    assert str(dw) == str(w) and dw.history() == w.history() and dw.engine.sampled and dw.rewards() == w.rewards()
    assert np.array_equal(dw.engine.state, w.engine.state)
    from majiang_env import Game
    g = Game({"hands_per_game": 1}, seed=11)
    for _ in range(12):
        g.step(g.legal_actions()[0])
    a = play_to(mos.state_from_game(g), 3, rng)
    da = game.deserialize_state(a.serialize())
    assert da.engine.record() == a.engine.record() and da.history() == a.history()
    for st in (s, w, a, mid):                                     # pickle and deepcopy take the same route
        for c in (pickle.loads(pickle.dumps(st)), copy.deepcopy(st), st.clone()):
            assert str(c) == str(st) and c.history() == st.history()
    end = play_to(game.new_initial_state(), 10_000, rng)
    assert end.is_terminal() and game.deserialize_state(end.serialize()).returns() == end.returns()


def _with(text, **parts):
    data = json.loads(text)
    data.update(parts)
    return json.dumps(data)


def test_a_string_it_did_not_write_raises(mos, game):
    from majiang_env.engine.kernel import layout as L
    rng = np.random.default_rng(5)
    s = play_to(game.new_initial_state(), 8 + 20, rng)
    text = s.serialize()
    hist = s.history()
    illegal = next(a for a in range(156) if a not in s.legal_actions())
    cases = {
        "not legal there": _with(text, history=hist + [illegal]),
        "chance outcome is 0..255": _with(text, history=[300] + hist[1:]),
        "not legal there ": _with(text, history=[-2] + hist[1:]),
        "list of ints": _with(text, history=hist[:8] + [1.0]),
        "longer than any game": _with(text, history=hist * 100),
        "exactly": _with(text, extra=1),
        "not a python_majiang-state/1": _with(text, format="python_majiang-state/2"),
        "not JSON": text[:-1],
        "start must be": _with(text, start=[1, 2]),
        "rewards must be": _with(text, start={"row": [0], "rewards": [0, 0, 0]}),
        "characters, more than": " " * (mos.MAX_STATE_CHARS + 1),
        "nested": "[" * 100_000 + "]" * 100_000,
    }
    for what, bad in cases.items():
        with pytest.raises(ValueError) as e:
            game.deserialize_state(bad)
        assert "python_majiang state string" in str(e.value), (what, e.value)
    end = play_to(game.new_initial_state(), 10_000, rng)
    with pytest.raises(ValueError, match="after the game is over"):
        game.deserialize_state(_with(end.serialize(), history=end.history() + [0]))
    # a sampled world's row out of range: refused by the row check, before the kernel
    w = s.resample_from_infostate(0, None)
    data = json.loads(w.serialize())
    for name, value in (("river_len", 10 ** 7), ("num_concealed", 10 ** 6), ("to_act", 9)):
        row = list(data["start"]["row"])
        row[L.BY_NAME[name].offset] = value
        bad = json.dumps({**data, "start": {**data["start"], "row": row}})
        with pytest.raises(ValueError, match=f"state row: {name}"):
            game.deserialize_state(bad)
    with pytest.raises(ValueError, match="outside the game's bounds"):
        game.deserialize_state(json.dumps({**data, "start": {**data["start"], "rewards": [1e9, 0, 0, 0]}}))
    # a record with an impossible decision: the record check names it
    a = mos.state_from_game(s.engine)
    rec = json.loads(a.serialize())
    rec["start"]["record"]["hands"][0]["decisions"][-1][1] = illegal
    with pytest.raises(ValueError):
        game.deserialize_state(json.dumps(rec))
    other = mos.load_game({"hands_per_game": 2})
    with pytest.raises(ValueError, match="rules"):
        other.deserialize_state(a.serialize())


def test_chance_outcomes_out_of_range_change_nothing(mos, game):
    import pyspiel
    s = game.new_initial_state()
    for n in range(8):
        before = (str(s), s.history(), s.serialize())
        for bad in (256, 300, -1, -2, 2 ** 40):
            with pytest.raises((ValueError, pyspiel.SpielError)):
                s.apply_action(bad)
            assert (str(s), s.history(), s.serialize()) == before
        s.apply_action(255 if n == 7 else 1)
    assert not s.is_chance_node() and s.engine is not None


def test_parameters_out_of_range_raise_value_error(mos):
    import pyspiel
    with pytest.raises(ValueError, match="hands_per_game"):
        mos.load_game({"hands_per_game": 2 ** 31})
    with pytest.raises(ValueError, match="hands_per_game"):
        mos.MajiangGame({"hands_per_game": 2 ** 31})
    # pyspiel.load_game converts the parameters in C++ before the game sees them (docs/api.md)
    with pytest.raises((RuntimeError, ValueError)):
        pyspiel.load_game("python_majiang", {"hands_per_game": 2 ** 31})


def test_seed_actions_needs_a_seed(mos):
    with pytest.raises(ValueError, match="needs a seed"):
        mos.seed_actions(None)
    for bad in (-1, 2 ** 64, 1.0, True):
        with pytest.raises(ValueError, match="seed"):
            mos.seed_actions(bad)
    assert mos.seed_actions(2 ** 64 - 1) == [255] * 8
