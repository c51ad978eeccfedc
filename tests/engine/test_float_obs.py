"""The normalised float observation (``obs_type="float"``, kernel/floatobs.py).

The kernel's vector must equal ``reference``, a numpy reading of the module
docstring's tables, at decisions of games under several rule sets (seat to act
with its mask, the other seats with a zero mask); every value lies within the
Box at every decision of many games and for in-range rows no game produced;
it is a function of the compact observation and the mask alone (equal inputs
from different games, and garbage in the scratch buffer, give equal bytes);
swapping cards the observer cannot see leaves it byte-identical; the batched
paths (``FloatEncoder.batch``, ``VectorGame``, ``SeatVectorEnv``) equal the
single one (``Game.observe``); every face accepts ``obs_type="float"`` with its
Box; bad inputs raise ``ValueError``.
"""
import random

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import card_places, squares_of, swap_cards

import majiang_env
from majiang_env import Game, RuleConfig, SeatVectorEnv
from majiang_env.engine.encodings import (
    FLOAT_SIZE,
    OBS_TYPES,
    FloatEncoder,
    encoded_size,
    make_encoder,
    observation_space,
)
from majiang_env.engine.kernel import floatobs as Q
from majiang_env.engine.kernel import observe as O
from majiang_env.engine.kernel.greedy import new_work
from majiang_env.engine.vector import VectorGame, game_seed
from majiang_env.envs import SINGLE_AGENT_ID
from majiang_env.envs.single_agent import SingleAgentEnv

NUM_ACTIONS, A_TSUMO, A_PUNG, A_CHOW, A_EXCHANGE = 156, 108, 111, 114, 120
BOX = observation_space("float")
RULESETS = [{}, {"side_cards_public": True}, {"discard_drawn": True}, {"exchange": False},
            {"chow_from": "previous", "kuikae": False}]
S = O.OBS_SCALAR


# --------------------------------------------------------------------------- the reference
def _unseen(o):
    """4 minus the copies the observer sees (greedy.py's definition)."""
    u = 4 - np.clip(o[O.OBS_HAND:O.OBS_HAND + 36] + o[O.OBS_DRAWN:O.OBS_DRAWN + 36], 0, 4)
    u -= o[O.OBS_SIDE:O.OBS_RIVER].reshape(4, 36).sum(0)
    for v in o[O.OBS_RIVER:O.OBS_RFLAG]:
        if v > 0:
            u[v - 1] -= 1
    for t, k1, c1 in o[O.OBS_MELD:O.OBS_CLAIM].reshape(16, 3):
        k = k1 - 1
        if k < 0:   # no meld (a kind + 1 of 0 under a type only in rows no game made)
            continue
        if t in (1, 4):
            u[k] -= 2
        elif t == 3:
            u[k] -= 3
        elif t == 2:
            for kk in range(k, min(k + 3, 36)):
                u[kk] -= kk != c1 - 1
    return np.clip(u, 0, 4)


def reference(obs, mask):
    """The float vector as kernel/floatobs.py's docstring defines it, in numpy."""
    o = obs.astype(np.int64)
    planes = np.zeros(Q.FLOAT_PLANE_SHAPE)
    x = np.zeros(Q.FLOAT_NUM_SCALARS)
    planes[Q.Q_HAND] = o[O.OBS_HAND:O.OBS_HAND + 36] / 4
    planes[Q.Q_DRAWN] = o[O.OBS_DRAWN:O.OBS_DRAWN + 36]
    if o[S + O.S_PICK_KIND] > 0:
        planes[Q.Q_PICKED, o[S + O.S_PICK_KIND] - 1] = 1
    planes[Q.Q_UNSEEN] = _unseen(o) / 4
    river = o[O.OBS_RIVER:O.OBS_RFLAG].reshape(4, 18)
    flags = o[O.OBS_RFLAG:O.OBS_MELD].reshape(4, 18)
    melds = o[O.OBS_MELD:O.OBS_CLAIM].reshape(4, 4, 3)
    for r in range(4):
        planes[Q.Q_SIDE + r] = o[O.OBS_SIDE + 36 * r:O.OBS_SIDE + 36 * r + 36] / 4
        live = river[r] > 0
        for v, f in zip(river[r][live], flags[r][live], strict=True):
            planes[Q.Q_RIVER + r, v - 1] += 1
            planes[Q.Q_TAKEN + r, v - 1] += (f & 15) != 0
            for j in range(9):
                x[Q.X_FLAGS + 9 * r + j] += (f >> j) & 1
        x[Q.X_RIVER_LEN + r] = live.sum() / 18
        if r > 0 and o[O.OBS_CLAIM + r] > 0:
            planes[Q.Q_CLAIM + r - 1, o[O.OBS_CLAIM + r] - 1] = 1
        for t, k1, c1 in melds[r]:
            if t > 0 and k1 > 0:
                planes[Q.Q_MELD + 4 * r + t - 1, k1 - 1] += 1
                x[Q.X_MELDS + r] += 0.25
                if c1 > 0:
                    planes[Q.Q_CLAIMED + r, c1 - 1] += 1
        x[Q.X_RETIRED + r] = o[S + O.S_RETIRED + r]
        x[Q.X_SCORES + r] = np.clip(o[S + O.S_SCORES + r] / 500, -1, 1)
        x[Q.X_SQUARE_LEFT + r] = o[S + O.S_SQUARE_LEFT + r] / 36
    for p, n in ((Q.Q_RIVER, 4), (Q.Q_TAKEN, 4), (Q.Q_MELD, 16), (Q.Q_CLAIMED, 4)):   # counts / 4
        planes[p:p + n] = np.minimum(planes[p:p + n], 4) / 4
    x[Q.X_FLAGS:Q.X_FLAGS + 36] = np.minimum(x[Q.X_FLAGS:Q.X_FLAGS + 36], 18) / 18
    for at, v, n in ((Q.X_SEAT, o[S + O.S_SEAT], 4), (Q.X_HAND, o[S + O.S_HAND], 5),
                     (Q.X_START, o[S + O.S_START], 4), (Q.X_PHASE, o[S + O.S_PHASE], 4),
                     (Q.X_TOOK, o[S + O.S_TOOK], 3)):
        if 0 <= v < n:
            x[at + v] = 1
    x[Q.X_LAP] = o[S + O.S_LAP] / 19
    x[Q.X_SLOT] = o[S + O.S_SLOT] / 75
    x[Q.X_NWINS] = o[S + O.S_NWINS] / 3
    x[Q.X_EXCH_LEFT] = o[S + O.S_EXCH_LEFT] / 16
    return np.concatenate([planes.ravel(), x, (np.asarray(mask) != 0)]).astype(np.float32)


def _const(plane_name):
    """The Q_* constant whose plane block has this name in Q.PLANES."""
    starts = {}
    at = 0
    for name, n in Q.PLANES:
        starts[name] = at
        at += n
    return next(k for k, v in vars(Q).items() if k.startswith("Q_") and v == starts[plane_name])


def _names():
    """A name per column, for failure messages."""
    out = []
    for name, n in Q.PLANES:
        out += [f"{_const(name)}[{j}] kind {k}" for j in range(n) for k in range(36)]
    for name, n in Q.SCALAR_BLOCKS:
        out += [f"{name} [{j}]" for j in range(n)]
    return out + [f"mask {a}" for a in range(NUM_ACTIONS)]


COLUMNS = _names()


def assert_same(kernel, ref, where):
    assert kernel.dtype == np.float32 and kernel.shape == (FLOAT_SIZE,)
    bad = np.flatnonzero(kernel != ref)
    assert bad.size == 0, f"{where}: " + ", ".join(f"{COLUMNS[i]}: {kernel[i]} != {ref[i]}" for i in bad[:8])


def in_box(x):
    return bool(np.isfinite(x).all() and (x >= BOX.low).all() and (x <= BOX.high).all())


# --------------------------------------------------------------------------- layout
def test_layout_and_space():
    assert len(COLUMNS) == FLOAT_SIZE == Q.FLOAT_MASK + NUM_ACTIONS
    assert Q.FLOAT_SCALARS == Q.FLOAT_PLANES * 36 == sum(n for _, n in Q.PLANES) * 36
    assert Q.FLOAT_MASK == Q.FLOAT_SCALARS + sum(n for _, n in Q.SCALAR_BLOCKS)
    assert "float" in OBS_TYPES and encoded_size("float") == FLOAT_SIZE and encoded_size("compact") == 0
    assert BOX.dtype == np.float32 and BOX.shape == (FLOAT_SIZE,)
    low = np.zeros(FLOAT_SIZE, np.float32)
    low[Q.FLOAT_SCALARS + Q.X_SCORES:Q.FLOAT_SCALARS + Q.X_SCORES + 4] = -1
    assert (BOX.low == low).all() and (BOX.high == 1).all()
    assert isinstance(make_encoder("float"), FloatEncoder) and make_encoder("compact") is None


# --------------------------------------------------------------------------- against the reference
def _decisions(rules, seed, rng):
    """(game, seat, compact, mask) for every seat at each decision of a game of random play."""
    g = Game(rules, seed=seed, auto_forced=False)
    while not g.done:
        for seat in range(4):
            mask = g.legal_mask() if seat == g.current_player else np.zeros(NUM_ACTIONS, np.int8)
            yield g, seat, g.observe(seat), mask
        legal = g.legal_actions()
        wins = [a for a in legal if a == A_TSUMO or A_PUNG <= a < A_EXCHANGE]   # reach wins and melds often
        g.step(rng.choice(wins) if wins and rng.random() < 0.6 else rng.choice(legal))


@pytest.mark.parametrize("kw", RULESETS, ids=lambda kw: ",".join(kw) or "default")
def test_kernel_equals_reference_and_stays_in_box(kw):
    rules = RuleConfig(**kw)
    rng = random.Random(11)
    enc = FloatEncoder()
    seen = np.zeros(FLOAT_SIZE, bool)
    for seed in range(2):
        for g, seat, obs, mask in _decisions(rules, seed + 50 * len(kw), rng):
            x = g.observe(seat, "float")
            where = f"seed {seed}, seat {seat}, phase {g.phase}"
            assert_same(x, reference(obs, mask), where)
            assert x.tobytes() == enc(obs, mask).tobytes(), where
            assert in_box(x), where
            seen |= x != 0
    # the games reached the melds, pick-ups and flags the columns describe
    for name, q, n in (("Q_TAKEN", Q.Q_TAKEN, 4), ("Q_CLAIM", Q.Q_CLAIM, 3), ("Q_MELD", Q.Q_MELD, 16),
                       ("Q_CLAIMED", Q.Q_CLAIMED, 4)):
        assert seen[q * 36:(q + n) * 36].any(), name


def test_bounds_over_many_games():
    """Every value within the Box at every decision of 128 one-hand games x 4 seats' turns (VectorGame)
    and of SeatVectorEnv against greedy seats (scores move there)."""
    for kw in ({"hands_per_game": 1}, {"side_cards_public": True, "discard_drawn": True}):
        vg = VectorGame(128, rules=RuleConfig(**kw), seed=3, obs_type="float")
        obs, mask, _ = vg.reset()
        rng = np.random.default_rng(0)
        for _ in range(250):
            assert in_box(obs)
            keys = rng.random(mask.shape) * mask
            obs, mask, *_ = vg.step(keys.argmax(1))
    env = SeatVectorEnv(64, opponents="greedy", seat="random", obs_type="float")
    obs, _ = env.reset(seed=1)
    lo = hi = 0.0
    scores = slice(Q.FLOAT_SCALARS + Q.X_SCORES, Q.FLOAT_SCALARS + Q.X_SCORES + 4)
    for _ in range(300):
        assert in_box(obs)
        lo, hi = min(lo, obs[:, scores].min()), max(hi, obs[:, scores].max())
        obs, *_ = env.step(env.sample_actions(np.zeros((64, NUM_ACTIONS))))
    assert lo < 0 < hi


def test_in_range_rows_no_game_made_stay_in_box():
    """Rows with every value in its range (observe.OBS_LOW / OBS_HIGH) but no game behind
    them (a river may hold 18 copies of one kind), random masks: in the Box."""
    rng = np.random.default_rng(0)
    lo, hi = O.OBS_LOW.astype(np.int64), O.OBS_HIGH.astype(np.int64)
    rows = rng.integers(lo, hi + 1, (2000, O.OBS_SIZE)).astype(np.int16)
    rows[:500, O.OBS_RIVER:O.OBS_RFLAG] = 7                      # one kind everywhere
    rows[:500, O.OBS_RFLAG:O.OBS_MELD] = 511                     # every flag bit
    rows[500:1000, S + O.S_SCORES:S + O.S_SCORES + 4] = rng.choice([-32768, 32767], (500, 4))
    masks = (rng.random((2000, NUM_ACTIONS)) < 0.3).astype(np.int8)
    x = FloatEncoder().batch(rows, masks)
    assert in_box(x)
    for i in (0, 1, 600, 1999):
        assert_same(x[i], reference(rows[i], masks[i]), f"row {i}")


# --------------------------------------------------------------------------- a function of the view alone
def test_function_of_compact_and_mask_alone():
    """Equal compact rows and masks from different games give equal bytes; the scratch
    buffer's contents do not matter."""
    vg = VectorGame(64, seed=9, obs_type="float")
    obs, mask, _ = vg.reset()
    # every game's first decision: seat 0 (the start seat of hand 0) holding its 17 dealt cards
    seen = {}
    rng = np.random.default_rng(1)
    for _ in range(60):
        for i in range(64):
            key = vg.compact[i].tobytes() + mask[i].tobytes()
            if key in seen:
                assert seen[key] == obs[i].tobytes()
            seen[key] = obs[i].tobytes()
        obs, mask, *_ = vg.step((rng.random(mask.shape) * mask).argmax(1))
    comp, m = np.array(vg.compact), np.array(mask)
    clean = np.empty((64, FLOAT_SIZE), np.float32)
    Q.float_rows(comp, m, new_work(), clean)
    dirty = np.full((64, FLOAT_SIZE), np.nan, np.float32)
    Q.float_rows(comp, m, np.full(new_work().size, 12345, np.int64), dirty)
    assert clean.tobytes() == dirty.tobytes() == np.asarray(obs).tobytes()
    # two positions of different deals with the same view (the same compact row) give the same vector
    twin = comp[:1].copy()
    assert FloatEncoder().batch(np.repeat(twin, 2, 0), np.repeat(m[:1], 2, 0))[1].tobytes() == clean[0].tobytes()


def _hidden_from(places, seat, g):
    if len(places) != 1:
        return False
    w = places[0]
    if w.startswith("square"):
        return True
    if w.startswith("hand"):
        return int(w[4:]) != seat
    if w.startswith("side"):
        return int(w[4:]) != seat and not g.rules.side_cards_public
    return w == "drawn" and g.current_player != seat


@pytest.mark.parametrize("kw", [{}, {"side_cards_public": True}])
def test_swapping_hidden_cards_keeps_float_obs(kw):
    """Two cards the observer cannot see (in two opponents' hands, or one at the end of a
    square) exchanged in the deal: while both stay hidden, its float vector is the same bytes."""
    rules = RuleConfig(hands_per_game=1, **kw)
    rng = random.Random(5)
    total = 0
    for seed in range(3):
        sq = squares_of(Game(rules, seed=seed))[0]
        for c1, c2, observers in ((int(sq[1, rng.randrange(13)]), int(sq[2, rng.randrange(13)]), (0, 3)),
                                  (int(sq[3, rng.randrange(13)]), int(sq[seed % 4, 35]), (0, 1, 2))):
            if c1 >> 2 == c2 >> 2:
                continue
            a = Game(rules, seed=seed, auto_forced=False)
            b = Game(rules, seed=seed, auto_forced=False, squares=swap_cards(squares_of(a), c1, c2))
            kinds = {c1 >> 2, c2 >> 2}
            obs_list = list(observers)
            while not a.done and obs_list:
                pa, pb = card_places(a), card_places(b)
                obs_list = [o for o in obs_list if pa[c1] == pb[c2] and pa[c2] == pb[c1]
                            and all(_hidden_from(p, o, g) for p, g in ((pa[c1], a), (pa[c2], a),
                                                                      (pb[c1], b), (pb[c2], b)))]
                for o in obs_list:
                    fa, fb = a.observe(o, "float"), b.observe(o, "float")
                    assert fa.tobytes() == fb.tobytes(), \
                        f"seed {seed}: swapping {c1} and {c2} changes " + \
                        ", ".join(COLUMNS[i] for i in np.flatnonzero(fa != fb)[:8])
                    total += 1
                both = sorted(set(a.legal_actions()) & set(b.legal_actions()))
                if not both:
                    break
                quiet = [x for x in both if not (x < A_TSUMO and x % 36 in kinds)
                         and not (x >= A_EXCHANGE and x - A_EXCHANGE in kinds) and not (A_PUNG <= x < A_CHOW + 3)]
                x = rng.choice(quiet or both)
                a.step(x)
                b.step(x)
    assert total >= 150, total


# --------------------------------------------------------------------------- batched paths
def test_vector_game_equals_game():
    rules = RuleConfig(hands_per_game=1)
    vg = VectorGame(5, rules=rules, seed=21, obs_type="float")
    obs, mask, player = vg.reset()
    assert obs.dtype == np.float32 and obs.shape == (5, FLOAT_SIZE)
    games = [Game(rules, seed=game_seed(21, i)) for i in range(5)]
    rng = np.random.default_rng(3)
    restarted = 0
    for _ in range(200):
        for i, g in enumerate(games):
            assert obs[i].tobytes() == g.observe(int(player[i]), "float").tobytes(), f"slot {i}"
        a = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int64)
        for i, g in enumerate(games):
            g.step(int(a[i]))
        obs, mask, player, _, done = vg.step(a)
        for i in np.flatnonzero(done):
            games[i] = Game(rules, seed=game_seed(21, int(vg.game_index[i])))
            restarted += 1
    assert restarted >= 1
    rows = FloatEncoder().batch(vg.compact, mask)
    assert rows.tobytes() == np.asarray(obs).tobytes()
    assert all(FloatEncoder()(vg.compact[i], mask[i]).tobytes() == rows[i].tobytes() for i in range(5))


@pytest.mark.parametrize("mode", ["SameStep", "NextStep"])
def test_seat_vector_env(mode):
    """Observations within single_observation_space, equal to the float encoding of the learner's
    compact view and mask (and the final observations of finished games too)."""
    env = SeatVectorEnv(16, opponents="greedy", seat="random", obs_type="float", autoreset_mode=mode,
                        hands_per_game=1)
    assert env.single_observation_space == BOX and env.observation_space.shape == (16, FLOAT_SIZE)
    compact = SeatVectorEnv(16, opponents="greedy", seat="random", autoreset_mode=mode, hands_per_game=1)
    obs, _ = env.reset(seed=4)
    cobs, _ = compact.reset(seed=4)
    enc = FloatEncoder()
    finals = 0
    live = np.ones(16, bool)   # NextStep: a slot whose game just ended shows its last view, not the mask's game
    for _ in range(120):
        assert env.single_observation_space.contains(obs[0]) and in_box(obs)
        masks = env.action_masks()
        assert obs[live].tobytes() == enc.batch(cobs[live], masks[live]).tobytes()
        logits = np.zeros((16, NUM_ACTIONS))
        a = env.sample_actions(logits)
        assert (compact.sample_actions(logits) == a).all()
        obs, _, term, _, info = env.step(a)
        cobs, _, cterm, _, cinfo = compact.step(a)
        assert (term == cterm).all()
        live = ~term if mode == "NextStep" else live
        if "final_obs" in info:
            for i in np.flatnonzero(info["_final_obs"]):
                assert in_box(info["final_obs"][i]) and info["final_obs"][i].shape == (FLOAT_SIZE,)
                finals += 1
    assert mode == "NextStep" or finals > 0


# --------------------------------------------------------------------------- faces
def test_every_face_takes_float():
    check_env(SingleAgentEnv(opponents="random", seat="random", obs_type="float", hands_per_game=1),
              skip_render_check=True)
    env = SingleAgentEnv(opponents="greedy", obs_type="float")
    assert env.observation_space == BOX
    o, _ = env.reset(seed=0)
    assert env.observation_space.contains(o)
    aec = majiang_env.env(obs_type="float")
    aec.reset(seed=0)
    assert aec.observation_space("player_0")["observation"] == BOX
    o = aec.observe(aec.agent_selection)
    assert o["observation"].shape == (FLOAT_SIZE,) and in_box(o["observation"])
    seat = aec.unwrapped.game.current_player   # the agent to act
    g = aec.unwrapped.game
    assert o["observation"].tobytes() == reference(g.observe(seat), g.legal_mask()).tobytes()
    assert Game(seed=0).observe(1, "float")[Q.FLOAT_MASK:].sum() == 0          # not to act: no mask
    venv = gym.make_vec(SINGLE_AGENT_ID, num_envs=4, vectorization_mode="vector_entry_point", obs_type="float")
    assert venv.single_observation_space == BOX and venv.reset(seed=0)[0].shape == (4, FLOAT_SIZE)


def test_bad_inputs_raise():
    enc = FloatEncoder()
    g = Game(seed=0)
    obs, mask = g.observe(0), g.legal_mask()
    for o, m in ((obs[:435], mask), (obs, mask[:155]), (obs.astype(np.float32), mask), (None, mask),
                 (obs[None], mask), (obs, mask.astype(np.float32))):
        with pytest.raises(ValueError):
            enc(o, m)
    for i, v in ((O.OBS_HAND, 5), (O.OBS_RIVER, 37), (O.OBS_RFLAG, 512), (O.OBS_MELD, 5), (S + O.S_SEAT, 4),
                 (S + O.S_HAND, 5), (S + 22, 1)):
        bad = obs.copy()
        bad[i] = v
        with pytest.raises(ValueError, match=f"index {i}"):
            enc(bad, mask)
    big = obs.astype(np.int64)
    big[0] = 70000
    with pytest.raises(ValueError, match="int16"):
        enc.batch(big[None], mask[None])
    with pytest.raises(ValueError, match="obs_type"):
        Game(seed=0).observe(0, "floats")


def test_trainer_faces_take_float():
    """OpenSpiel's game takes obs_type "float"; SB3VecEnv gives it by default."""
    pytest.importorskip("pyspiel")
    from majiang_env.envs import openspiel as mos
    game = mos.load_game({"hands_per_game": 1}, "float")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    p = state.current_player()
    t = np.array(state.observation_tensor(p), np.float32)
    assert t.shape == (FLOAT_SIZE,) and in_box(t)
    assert t.tobytes() == state.engine.observe(p, "float").tobytes()
    pytest.importorskip("stable_baselines3")
    from majiang_env.integrations.sb3 import SB3VecEnv
    venv = SB3VecEnv(4, opponents="random", hands_per_game=1)
    assert venv.observation_space == BOX and venv.get_attr("obs_type") == ["float"] * 4
    assert in_box(venv.reset())
    assert SB3VecEnv(2, obs_type="compact").observation_space.shape == (O.OBS_SIZE,)


def test_feature_encoder_rows_over_threads_equal_serial():
    """FeatureEncoder.batch splits 64 rows or more over numba's threads: the same bytes as one row at a time."""
    import numba

    from majiang_env.engine.encodings import FeatureEncoder
    from majiang_env.engine.threads import numba_threads
    vg = VectorGame(96, seed=2)
    obs, mask, _ = vg.reset()
    rng = np.random.default_rng(2)
    for _ in range(30):
        obs, mask, *_ = vg.step((rng.random(mask.shape) * mask).argmax(1))
    enc = FeatureEncoder()
    with numba_threads(numba.config.NUMBA_NUM_THREADS):   # every thread numba has
        many = enc.batch(obs, mask)
    one = np.stack([enc(obs[i], mask[i]) for i in range(96)])
    assert many.tobytes() == one.tobytes()
