"""The PettingZoo AEC environment (majiang_env.env): API conformance, masks, illegal moves, leaks."""
import pickle
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test

from majiang_env import Game, env, parallel_env, raw_env
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel.observe import OBS_SIZE
from majiang_env.views.render import render_ansi, render_html, render_rgb

NUM_ACTIONS, A_DISCARD = 156, 0   # action ids (docs/api.md)


def test_api():
    api_test(env(), num_cycles=1000, verbose_progress=False)


def test_api_one_hand_options():
    api_test(env(hands_per_game=1, chow_from="previous"), num_cycles=1000)


def test_seed():
    seed_test(env, num_cycles=500)


def test_parallel_api():
    parallel_api_test(parallel_env(), num_cycles=1000)


def test_render_modes():
    render_test(env)
    e = env(render_mode="rgb_array")
    e.reset(seed=3)
    img = e.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    e = env(render_mode="ansi")
    e.reset(seed=3)
    assert "East" in e.render()


def test_render_functions_full_game():
    g = Game(seed=5)
    rng = random.Random(5)
    while not g.done:
        g.step(rng.choice(g.legal_actions()))
        if rng.random() < 0.05:
            for seat in (None, 0, 1, 2, 3):
                assert isinstance(render_ansi(g, seat), str)
            assert render_rgb(g).dtype == np.uint8
            assert render_html(g).startswith("<p>")
            assert g._repr_html_() == render_html(g)  # Jupyter's picture of a Game
    assert "game over" in render_ansi(g)


def test_ansi_hides_other_hands():
    g = Game(seed=11)
    txt = render_ansi(g, 0).splitlines()
    hand_lines = [ln for ln in txt if ln.strip().startswith("hand :")]
    assert "hidden" not in hand_lines[0]
    assert all("hidden" in ln for ln in hand_lines[1:])


def test_pickle_round_trip():
    e = env(hands_per_game=1)
    e.reset(seed=7)
    e2 = pickle.loads(pickle.dumps(e))
    e2.reset(seed=7)
    a, b = e.observe("player_0"), e2.observe("player_0")
    assert np.array_equal(a["observation"], b["observation"])
    assert np.array_equal(a["action_mask"], b["action_mask"])
    assert e2.unwrapped.rules == e.unwrapped.rules


def _play(e, seed, check):
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for agent in e.agent_iter():
        obs, rew, term, trunc, info = e.last()
        check(e, agent, obs, rew, term, trunc)
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_mask_zero_for_non_acting_and_rewards_sum():
    totals = {}

    def check(e, agent, obs, rew, term, trunc):
        assert obs["observation"].shape == (OBS_SIZE,) and obs["observation"].dtype == np.int16
        assert obs["action_mask"].dtype == np.int8
        if not (term or trunc):
            assert obs["action_mask"].sum() >= 1
            assert np.array_equal(obs["action_mask"], e.unwrapped.game.legal_mask())
        for other in e.agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any()
        if term:
            totals[agent] = rew

    e = env(hands_per_game=2)
    _play(e, 1, check)
    g = e.unwrapped.game
    assert g.done
    assert sum(totals.values()) == 0  # zero-sum payments


def test_cumulative_rewards_equal_scores():
    e = raw_env()
    e.reset(seed=2)
    got = {a: 0 for a in e.possible_agents}
    rng = np.random.default_rng(2)
    while not e.unwrapped.game.done:
        a = int(rng.choice(e.unwrapped.game.legal_actions()))
        e.step(a)
        for ag in e.possible_agents:
            got[ag] += e.rewards[ag]
    assert [got[a] for a in e.possible_agents] == e.game.scores.tolist()
    assert all(e.terminations.values())


def test_spaces_cached():
    e = env()
    for a in e.possible_agents:
        assert e.observation_space(a) is e.observation_space(a)
        assert e.action_space(a) is e.action_space(a)
        assert e.action_space(a).n == NUM_ACTIONS
    assert e.metadata["name"] == "majiang_v1"


def test_illegal_action_through_env():
    e = env()
    e.reset(seed=4)
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    e.step(bad)
    assert all(e.terminations.values()) or all(e.truncations.values())
    assert e.rewards[agent] == -1000
    assert all(e.rewards[a] == 0 for a in e.agents if a != agent)
    assert e._cumulative_rewards[agent] == -1000


def _stacked_classic_wrappers():
    """What ``env()`` stands for: PettingZoo's own three classic wrappers."""
    from pettingzoo.utils import wrappers
    e = wrappers.TerminateIllegalWrapper(raw_env(), illegal_reward=-1000)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(e))


def _snapshot(e):
    obs, rew, term, trunc, info = e.last()
    return (e.agent_selection, list(e.agents), obs["observation"].tobytes(),
            obs["action_mask"].tobytes(), float(rew), term, trunc, dict(e.rewards),
            dict(e._cumulative_rewards), dict(e.terminations), dict(e.truncations))


@pytest.mark.parametrize("seed,illegal_at", [(0, None), (1, 30), (2, 0), (3, 200)])
def test_classic_wrapper_equals_stacked_wrappers(seed, illegal_at):
    """env()'s one-layer wrapper behaves step by step like the three stacked ones,
    including an illegal move (which ends the game) and the dead steps after it."""
    ours, theirs = env(), _stacked_classic_wrappers()
    for e in (ours, theirs):
        with pytest.raises(AttributeError):
            _ = e.agent_selection
        with pytest.raises(Exception) as info:
            e.step(A_DISCARD)
        assert "reset" in str(info.value)
    rng = random.Random(seed)
    ours.reset(seed=seed)
    theirs.reset(seed=seed)
    n = 0
    for agent, agent2 in zip(ours.agent_iter(), theirs.agent_iter(), strict=False):
        assert agent == agent2
        snap = _snapshot(ours)
        assert snap == _snapshot(theirs)
        if snap[5] or snap[6]:
            action = None
        else:
            mask = np.frombuffer(snap[3], np.int8)
            pool = np.flatnonzero(mask == 0) if n == illegal_at else np.flatnonzero(mask)
            action = int(rng.choice(list(pool)))
            n += 1
        ours.step(action)
        theirs.step(action)
    assert n == illegal_at + 1 if illegal_at is not None else n > 100
    assert ours.agents == theirs.agents == []
    for e in (ours, theirs):
        e.reset(seed=seed)
        with pytest.raises(AssertionError):
            e.step(NUM_ACTIONS)
        with pytest.raises(AssertionError):
            e.step(None)
    assert str(ours) == str(theirs) == "majiang_v1"


def test_illegal_action_raw_env_raises():
    e = raw_env()
    e.reset(seed=4)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    before = e.game._st.copy()
    with pytest.raises(ValueError):
        e.step(bad)
    assert np.array_equal(before, e.game._st)


def test_rule_options():
    e = raw_env(hands_per_game=1, side_cards_public=True)
    assert e.rules.hands_per_game == 1 and e.rules.side_cards_public
    with pytest.raises(ValueError):
        raw_env(hands_per_game=9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_no_square_leak(seed):
    """Swapping two untaken square cards of seats 1 and 2 does not change any observation."""
    rng = random.Random(seed)
    g = Game(seed=seed)
    actions = []
    # reach a take phase of seat 0 after a few laps
    while not (g.phase == "take" and g.current_player == 0 and g.lap >= 2 + seed % 3):
        a = rng.choice(g.legal_actions())
        actions.append(a)
        g.step(a)
        assert not g.done
    st = g._st
    h = g.hand_index
    nh = g.rules.hands_per_game
    squares = L.view(st, "squares")[:nh].copy()   # (hands, seats, cards of a square)
    # last cards of the squares of seats 1 and 2 (taken last), of different kinds
    i1, i2 = 35, 35
    while squares[h, 1, i1] >> 2 == squares[h, 2, i2] >> 2:
        i2 -= 1
    assert i1 >= st[L.SQPOS + 1] + 4 and i2 >= st[L.SQPOS + 2] + 4
    swapped = squares.copy()
    swapped[h, 1, i1], swapped[h, 2, i2] = squares[h, 2, i2], squares[h, 1, i1]
    g2 = Game(seed=seed, squares=swapped)
    for a in actions:
        g2.step(a)
    checked = 0
    for _ in range(12):
        if g.done or g.hand_index != h or st[L.SQPOS + 1] > i1 or st[L.SQPOS + 2] > i2:
            break
        assert g.legal_actions() == g2.legal_actions()
        assert g.current_player == g2.current_player
        for seat in range(4):
            assert g.observe(seat).tobytes() == g2.observe(seat).tobytes()
        checked += 1
        a = rng.choice(g.legal_actions())
        g.step(a)
        g2.step(a)
    assert checked >= 3
    # the swap is real: the squares differ
    assert not np.array_equal(L.view(g._st, "squares"), L.view(g2._st, "squares"))


def test_versioned_module_as_in_pettingzoo_classic():
    """``from majiang_env import majiang_v1`` is the env module (like
    ``pettingzoo.classic.connect_four_v3``); ``majiang_env.env`` stays the function."""
    import majiang_env
    from majiang_env import majiang_v1
    assert callable(majiang_env.env) and majiang_v1.env is majiang_env.env
    assert majiang_v1.raw_env is raw_env and majiang_v1.parallel_env is parallel_env
    e = majiang_v1.env()
    e.reset(seed=0)
    assert e.metadata["name"] == "majiang_v1" and e.agent_selection == "player_0"


def test_help_shows_the_env_card():
    import pydoc

    from majiang_env import majiang_v1
    card = majiang_v1.__doc__
    assert card.startswith("馬将 (Majiang) as a PettingZoo AEC environment")
    for section in ("### Observation Space", "### Legal Actions Mask", "### Action Space",
                    "### Rewards", "### Parallel API", "### Version History"):
        assert section in card
    for obj in (env, raw_env, parallel_env, majiang_v1):
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert "### Observation Space" in text and "Discrete(156)" in text, obj
        assert len(text.splitlines()) > 60


def test_parallelizable_only_through_parallel_env():
    """``aec_to_parallel`` needs one action per agent per cycle in seat order; a seat
    acts several times in a row here, so the metadata says False and PettingZoo's
    generic conversion refuses; ``parallel_env()`` is the Parallel form."""
    from pettingzoo.utils.conversions import aec_to_parallel
    assert raw_env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(env())
    # the cycle aec_to_parallel would need does not hold: a seat acts twice in a row
    e = env()
    e.reset(seed=0)
    order = []
    for agent in e.agent_iter(40):
        obs, *_ = e.last()
        order.append(agent)
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert any(a == b for a, b in zip(order, order[1:], strict=False))
    p = parallel_env()
    obs, infos = p.reset(seed=0)
    masks = {a: o["action_mask"].any() for a, o in obs.items()}
    assert sum(masks.values()) == 1   # only the acting agent has a legal action


def test_features_observation_through_every_env_form():
    from majiang_env.engine.encodings import FEAT_SIZE
    e = env(obs_type="features", hands_per_game=1)
    api_test(e, num_cycles=200)
    e.reset(seed=3)
    obs, *_ = e.last()
    assert obs["observation"].shape == (FEAT_SIZE,) and obs["observation"].dtype == np.float32
    g = e.unwrapped.game
    assert np.array_equal(obs["observation"], g.observe(g.current_player, "features"))
    p = parallel_env(obs_type="features")
    observations, _ = p.reset(seed=1)
    assert all(o["observation"].shape == (FEAT_SIZE,) for o in observations.values())
    with pytest.raises(ValueError, match="obs_type"):
        env(obs_type="pixels")
