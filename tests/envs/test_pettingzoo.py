"""The PettingZoo faces (majiang_env.env, raw_env, parallel_env; module majiang_v2): API conformance,
the mask rule and the pass, illegal moves, leaks, the deprecated majiang_v1."""
import pickle
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test

from majiang_env import ActionSpaceError, Game, IllegalActionError, env, parallel_env, raw_env
from majiang_env.engine.kernel import layout as L
from majiang_env.engine.kernel.observe import OBS_SIZE
from majiang_env.views.render import render_ansi, render_html, render_rgb

NUM_ACTIONS, A_DISCARD = 156, 0   # the game's action ids (docs/api.md)
PASS, SPACE_N = 156, 157           # the PettingZoo faces' pass and Discrete(157)


def test_api():
    api_test(env(), num_cycles=1000, verbose_progress=False)


def test_api_one_hand_options():
    api_test(env(hands_per_game=1, chow_from="previous"), num_cycles=1000)


def test_seed():
    seed_test(env, num_cycles=500)


def test_parallel_api():
    parallel_api_test(parallel_env(), num_cycles=1000)


def test_parallel_seed():
    """PettingZoo's parallel_seed_test samples every agent's action without the mask:
    an idle agent's non-pass id is an illegal move there, which ends the game the same
    way in both envs."""
    parallel_seed_test(parallel_env, num_cycles=500)
    parallel_seed_test(lambda: parallel_env(hands_per_game=1, obs_type="features"), num_cycles=200)


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


PASS_ONLY = np.eye(SPACE_N, dtype=np.int8)[PASS]


def _acting_mask(game):
    """The mask of the agent to act: the game's legal mask and a 0 for the pass."""
    return np.append(game.legal_mask(), np.int8(0))


def test_mask_rule_and_rewards_sum():
    """On whole games: the agent to act has exactly the game's legal actions (and not the
    pass); every other agent has the pass alone; once the game is over, everyone has the pass."""
    totals = {}

    def check(e, agent, obs, rew, term, trunc):
        assert obs["observation"].shape == (OBS_SIZE,) and obs["observation"].dtype == np.int16
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (SPACE_N,)
        assert e.observation_space(agent).contains(obs)
        if not (term or trunc):
            assert np.array_equal(obs["action_mask"], _acting_mask(e.unwrapped.game))
            assert obs["action_mask"][:NUM_ACTIONS].any() and obs["action_mask"][PASS] == 0
        else:
            assert np.array_equal(obs["action_mask"], PASS_ONLY)
        for other in e.agents:
            if other != agent:
                assert np.array_equal(e.observe(other)["action_mask"], PASS_ONLY)
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
        assert e.action_space(a).n == SPACE_N
        assert e.observation_space(a)["action_mask"].shape == (SPACE_N,)
    assert e.metadata["name"] == "majiang_v2"


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


@pytest.mark.parametrize("seed,illegal_at,illegal", [(0, None, None), (1, 30, None), (2, 0, None), (3, 200, None),
                                                     (4, 17, PASS)])
def test_classic_wrapper_equals_stacked_wrappers(seed, illegal_at, illegal):
    """env()'s one-layer wrapper behaves step by step like the three stacked ones,
    including an illegal move (which ends the game; the pass 156 for the agent to act
    is one) and the dead steps after it."""
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
            action = illegal if n == illegal_at and illegal is not None else int(rng.choice(list(pool)))
            n += 1
        ours.step(action)
        theirs.step(action)
    assert n == illegal_at + 1 if illegal_at is not None else n > 100
    assert ours.agents == theirs.agents == []
    for e in (ours, theirs):
        e.reset(seed=seed)
        with pytest.raises(AssertionError):
            e.step(SPACE_N)
        with pytest.raises(AssertionError):
            e.step(-1)
        with pytest.raises(AssertionError):
            e.step(None)
    assert str(ours) == str(theirs) == "majiang_v2"


def test_illegal_action_raw_env_raises():
    e = raw_env()
    e.reset(seed=4)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    before = e.game._st.copy()
    with pytest.raises(ValueError):
        e.step(bad)
    assert np.array_equal(before, e.game._st)
    agent, rewards = e.agent_selection, dict(e.rewards)
    with pytest.raises(IllegalActionError, match="pass") as info:   # 156: in the space, never legal to act
        e.step(np.int64(PASS))
    assert not isinstance(info.value, ActionSpaceError)
    assert all(str(a) in str(info.value) for a in e.game.legal_actions())
    for bad in (SPACE_N, -1, 2 ** 70, 1.0, "0"):
        with pytest.raises(ActionSpaceError, match="157|0..156"):
            e.step(bad)
    assert np.array_equal(before, e.game._st) and e.agent_selection == agent and e.rewards == rewards


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
    """``from majiang_env import majiang_v2`` is the env module (like
    ``pettingzoo.classic.connect_four_v3``); ``majiang_env.env`` stays the function."""
    import majiang_env
    from majiang_env import majiang_v2
    assert callable(majiang_env.env) and majiang_v2.env is majiang_env.env
    assert majiang_v2.raw_env is raw_env and majiang_v2.parallel_env is parallel_env
    assert majiang_v2.PASS_ACTION == PASS and "majiang_v2" in majiang_env.__all__
    assert "majiang_v1" not in majiang_env.__all__
    e = majiang_v2.env()
    e.reset(seed=0)
    assert e.metadata["name"] == "majiang_v2" and e.agent_selection == "player_0"


def test_majiang_v1_is_deprecated_as_pettingzoo_does():
    """As ``pettingzoo.utils.deprecated_module`` does for a bumped classic env: the old
    module imports, and making an env from it raises ``DeprecatedEnv`` naming the new one."""
    import importlib

    from pettingzoo.utils.deprecated_module import DeprecatedEnv

    import majiang_env
    from majiang_env import majiang_v1
    assert majiang_v1 is importlib.import_module("majiang_env.majiang_v1") is majiang_env.majiang_v1
    for make in (majiang_v1.env, majiang_v1.raw_env, majiang_v1.parallel_env, majiang_v1.manual_control):
        with pytest.raises(DeprecatedEnv, match="majiang_v1 is now deprecated, use majiang_v2 instead"):
            make(hands_per_game=1)
    with pytest.raises(AttributeError, match="use majiang_v2"):
        _ = majiang_v1.ClassicWrapper
    assert getattr(majiang_v1, "PASS_ACTION", None) is None
    assert "majiang_v2" in majiang_v1.__doc__


def test_help_shows_the_env_card():
    import pydoc

    from majiang_env import majiang_v2
    card = majiang_v2.__doc__
    assert card.startswith("馬将 (Majiang) as a PettingZoo AEC environment: the env card of ``majiang_v2``")
    for section in ("### Observation Space", "### Legal Actions Mask", "### Action Space",
                    "### Rewards", "### Parallel API", "### Version History"):
        assert section in card
    assert "PASS_ACTION" in card and "* v2:" in card and "* v1:" in card
    for obj in (env, raw_env, parallel_env, majiang_v2):
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert "### Observation Space" in text and "Discrete(157)" in text and "Discrete(156)" not in text, obj
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
    acting = [a for a, o in obs.items() if o["action_mask"][:NUM_ACTIONS].any()]
    assert acting == [p.aec_env.agent_selection]   # one agent acts; the other three have the pass alone
    assert all(np.array_equal(o["action_mask"], PASS_ONLY) for a, o in obs.items() if a not in acting)


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


# ---- the Parallel form: idle agents pass ----------------------------------------

def _parallel_snapshot(p):
    raw = p.unwrapped
    return (list(p.agents), raw.agent_selection, dict(raw.rewards), dict(raw._cumulative_rewards),
            dict(raw.terminations), dict(raw.truncations), raw.game.record(legal=True))


@pytest.mark.parametrize("seed,kw", [(0, {}), (1, {"hands_per_game": 1, "exchange": False}),
                                     (2, {"hands_per_game": 2, "chow_from": "previous"})])
def test_parallel_whole_games_with_idle_agents_passing(seed, kw):
    """Whole games through parallel_env(): every step the agent to act has exactly the
    game's legal actions and the other live agents the pass alone; idle agents send 156
    (or nothing, every other step), and the game is the one a Game plays with the same
    actions; the rewards add up to the final scores."""
    p = parallel_env(**kw)
    obs, infos = p.reset(seed=seed)
    ref = Game(p.unwrapped.rules, seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(p.possible_agents, 0)
    steps = 0
    while p.agents:
        acting = p.unwrapped.agent_selection
        assert set(obs) == set(p.agents)
        for agent, o in obs.items():
            want = _acting_mask(ref) if agent == acting else PASS_ONLY
            assert np.array_equal(o["action_mask"], want), (steps, agent)
        a = int(rng.choice(np.flatnonzero(obs[acting]["action_mask"])))
        actions = {acting: a}
        if steps % 2 == 0:
            actions.update({agent: PASS for agent in p.agents if agent != acting})
        obs, rewards, terms, truncs, infos = p.step(actions)
        ref.step(a)
        for agent, r in rewards.items():
            totals[agent] += r
        assert set(rewards) == set(terms) == set(truncs) == set(p.possible_agents)
        steps += 1
    assert ref.done and steps > 50
    assert [totals[a] for a in p.possible_agents] == ref.scores.tolist()
    assert all(np.array_equal(o["action_mask"], PASS_ONLY) for o in obs.values())   # the game is over
    assert p.unwrapped.game.record() == ref.record()


def _to_decision(p, seed, n):
    obs, _ = p.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        acting = p.unwrapped.agent_selection
        obs = p.step({acting: int(rng.choice(np.flatnonzero(obs[acting]["action_mask"])))})[0]
    return obs


@pytest.mark.parametrize("bad", [SPACE_N, -1, 2 ** 64 + PASS, 1.0 * PASS, str(PASS), None, True, np.bool_(True),
                                 np.array([PASS]), np.float32(PASS), [PASS]])
def test_parallel_idle_agent_bad_value_raises_and_changes_nothing(bad):
    p = parallel_env(hands_per_game=1)
    obs = _to_decision(p, 5, 9)
    acting = p.unwrapped.agent_selection
    idle = next(a for a in p.agents if a != acting)
    before = _parallel_snapshot(p)
    legal = int(np.flatnonzero(obs[acting]["action_mask"])[0])
    with pytest.raises(ActionSpaceError, match=idle) as info:
        p.step({acting: legal, idle: bad})
    assert isinstance(info.value, AssertionError) and isinstance(info.value, IllegalActionError)
    assert _parallel_snapshot(p) == before
    with pytest.raises(ActionSpaceError, match="acting agent"):
        p.step({idle: PASS})
    assert _parallel_snapshot(p) == before
    p.step({acting: legal, idle: PASS})   # then the game goes on
    assert _parallel_snapshot(p) != before


@pytest.mark.parametrize("who", ["idle", "idle+acting", "acting passes"])
def test_parallel_illegal_ids_end_the_game_as_in_env(who, caplog):
    """An in-range id other than 156 for an idle agent is an illegal move, like an
    illegal id (156 included) for the agent to act: the game ends, each offender gets
    -1000 and the others 0, as env() does."""
    p = parallel_env(hands_per_game=1)
    obs = _to_decision(p, 6, 12)
    acting = p.unwrapped.agent_selection
    legal = np.flatnonzero(obs[acting]["action_mask"]).tolist()
    idle = [a for a in p.agents if a != acting]
    if who == "idle":
        actions, offenders = {acting: legal[0], idle[0]: legal[0], idle[1]: PASS}, {idle[0]}
    elif who == "idle+acting":
        bad = next(a for a in range(NUM_ACTIONS) if a not in legal)
        actions, offenders = {acting: bad, idle[0]: 0, idle[2]: np.int64(NUM_ACTIONS - 1)}, {acting, idle[0], idle[2]}
    else:
        actions, offenders = {acting: PASS, **dict.fromkeys(idle, PASS)}, {acting}
    obs, rewards, terms, truncs, infos = p.step(actions)
    assert "Illegal move made" in caplog.text
    if who != "acting passes":
        assert all(a in caplog.text for a in offenders) and "pass" in caplog.text
    assert rewards == {a: (-1000 if a in offenders else 0) for a in p.possible_agents}
    assert all(terms.values()) and all(truncs.values()) and len(terms) == 4
    assert p.agents == [] and set(obs) == set(p.possible_agents)
    assert all(np.array_equal(o["action_mask"], PASS_ONLY) for o in obs.values())
    assert p.step({}) == ({}, {}, {}, {}, {})   # ParallelEnv's five dicts, empty once every agent is done


def test_parallel_step_after_the_end_returns_five_empty_dicts():
    """ParallelEnv.step returns (observations, rewards, terminations, truncations,
    infos) always; once every agent is done they are empty, as PettingZoo's
    aec_to_parallel gives, both after a finished game and after an illegal move."""
    p = parallel_env(hands_per_game=1)
    obs, _ = p.reset(seed=2)
    rng = np.random.default_rng(2)
    while p.agents:
        acting = p.unwrapped.agent_selection
        obs, *_ = p.step({acting: int(rng.choice(np.flatnonzero(obs[acting]["action_mask"])))})
    for actions in ({}, {"player_0": 0}, {a: 156 for a in p.possible_agents}):
        out = p.step(actions)
        assert out == ({}, {}, {}, {}, {}) and p.agents == []
    obs, _ = p.reset(seed=3)
    acting = p.unwrapped.agent_selection
    idle = next(a for a in p.agents if a != acting)
    p.step({acting: int(np.flatnonzero(obs[acting]["action_mask"])[0]), idle: 0})   # an idle agent moves
    assert p.agents == [] and p.step({}) == ({}, {}, {}, {}, {})
