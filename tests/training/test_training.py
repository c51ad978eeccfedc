"""majiang_env.training.ppo: features, credit assignment, a short training run, legality, evaluation, checkpoints;
agents.search (the in-kernel search agent's name)."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from majiang_env import (  # noqa: E402
    Game,
    agents,  # noqa: E402
    arena,
)
from majiang_env.agents import parse_agent  # noqa: E402
from majiang_env.engine.rules import NUM_ACTIONS  # noqa: E402
from majiang_env.engine.vector import VectorGame  # noqa: E402
from majiang_env.training import ppo  # noqa: E402
from majiang_env.training.ppo import cli, update  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)


def noisy_net(seed=0, hidden=32):
    """An untrained net with large random logits, so masking is what keeps it legal."""
    torch.manual_seed(seed)
    net = ppo.PolicyNet(hidden)
    torch.nn.init.normal_(net.pi.weight, std=3.0)
    torch.nn.init.normal_(net.pi.bias, std=3.0)
    return net.eval()


def test_agent_encodes_compact_observations_as_the_kernel_does():
    vg = VectorGame(8, seed=1, obs_type="features")
    feats, mask, _ = vg.reset()
    agent = ppo.PPOAgent(noisy_net())
    x = agent.features(vg.compact, mask)
    assert x.shape == (8, ppo.N_FEATURES) and x.dtype == np.float32 and np.array_equal(x, feats)
    assert np.array_equal(agent.act_batch(vg.compact, mask), agent.act_batch(feats, mask))


def _one_hand():
    """One env, one hand: seats 0,1,0,2,1 act; the hand closes at the fifth step with deltas
    (+3,-3,0,0); seat 2 also wins a bonus of 1 at its decision. (seat, close, rew, delta)."""
    seat = np.array([[0, 1, 0, 2, 1, 3]])
    close = np.array([[False, False, False, False, True, False]])
    rew = np.array([[0, 0, 0, 1, 0, 0]], np.float32)
    delta = np.zeros((1, 6, 4), np.float32)
    delta[0, 4] = [3, -3, 0, 0]
    return seat, close, rew, delta


def test_advantages_give_each_seat_its_hand_delta():
    # gamma = lam = 1 and zero values: advantage = return
    cfg = ppo.PPOConfig(gamma=1.0, lam=1.0)
    seat, close, rew, delta = _one_hand()
    adv = ppo.compute_advantages(cfg, np.array([5]), close, seat, rew, delta, np.zeros((1, 6), np.float32))
    assert adv[0].tolist() == [3, -3, 3, 1, -3, 0]
    # with discounting, earlier decisions of the same seat get gamma * the later return
    cfg = ppo.PPOConfig(gamma=0.5, lam=1.0)
    adv = ppo.compute_advantages(cfg, np.array([5]), close, seat, rew, delta, np.zeros((1, 6), np.float32))
    assert adv[0].tolist() == [1.5, -1.5, 3, 1, -3, 0]


def test_potential_shaping_telescopes_within_each_seats_hand():
    # the hand of the test above; potentials per decision. With gamma = lam = 1 and zero values
    # a decision's advantage is its return, which shaping changes by minus its own potential
    # (the later potentials cancel; the potential after a seat's last decision of the hand is 0).
    cfg = ppo.PPOConfig(gamma=1.0, lam=1.0)
    seat, close, rew, delta = _one_hand()
    phi = np.array([[-2, -3, -1, -4, -2, -9]], np.float32)
    zero = np.zeros((1, 6), np.float32)
    plain = ppo.compute_advantages(cfg, np.array([5]), close, seat, rew, delta, zero)
    shaped = ppo.compute_advantages(cfg, np.array([5]), close, seat, rew, delta, zero, phi)
    assert (shaped - plain)[0, :5].tolist() == (-phi[0, :5]).tolist() and shaped[0, 5] == 0
    # one step: seat 0's first decision gets phi(its next decision) - phi(now) = -1 + 2
    cfg = ppo.PPOConfig(gamma=1.0, lam=0.0)
    shaped = ppo.compute_advantages(cfg, np.array([5]), close, seat, rew, delta, zero, phi)
    assert shaped[0, 0] == 1.0 and shaped[0, 2] == 3 + 1    # the last: its delta, minus phi


def test_short_training_run_learns_and_plays_legally(tmp_path):
    cfg = ppo.PPOConfig(num_envs=16, rollout=160, hidden=32, minibatch=512, epochs=1, threads=1)
    net, hist = ppo.train(cfg, seconds=None, updates=2, eval_every=2, eval_hands=8, log=None)
    assert [h["update"] for h in hist] == [1, 2] and hist[-1]["decisions"] == 2 * 16 * 160
    assert any(h["hands"] > 0 and h["entropy"] is not None for h in hist)
    assert 0 <= hist[-1]["eval_win_rate"] <= 1 and len(hist[-1]["eval_points_ci"]) == 2
    r = ppo.evaluate(ppo.PPOAgent(net), "random", hands=8, seed=0)
    assert r["deals"] == 2 and r["games"] == 8 and r["hands"] == 32 and 0 <= r["win_rate"] <= 1
    lo, hi = r["points_ci"]
    assert lo <= r["points_per_hand"] <= hi
    # the training loop stops on time as well
    tiny = ppo.PPOConfig(num_envs=4, rollout=8, hidden=16, threads=1)
    _, hist = ppo.train(tiny, seconds=0.05, log=None)   # stops at the first update past the budget
    assert hist[-1]["seconds"] >= 0.045 and all(h["seconds"] <= 0.05 for h in hist[:-1])  # (rounded to 0.01)


def test_training_against_in_kernel_opponents():
    cfg = ppo.PPOConfig(num_envs=8, rollout=48, hidden=32, minibatch=256, epochs=1, opponents="greedy")
    net, hist = ppo.train(cfg, seconds=None, updates=2, eval_every=2, eval_hands=8, log=None,
                          eval_opponent="greedy")
    assert hist[-1]["decisions"] == 2 * 8 * 48 and any(h["hands"] > 0 for h in hist)
    assert np.isfinite(hist[-1]["eval_points_per_hand"])
    with pytest.raises(ValueError):
        ppo.train(ppo.PPOConfig(opponents="nobody"), updates=1)


def test_imitation_of_the_in_kernel_greedy():
    torch.manual_seed(0)
    net = ppo.PolicyNet(32)
    hist = ppo.imitate(net, "greedy", seconds=None, chunks=30, num_envs=64, steps=8, minibatch=256,
                       lr=3e-3, threads=1, log=None)
    assert hist[-1]["accuracy"] > max(0.5, hist[0]["accuracy"] + 0.3)


def test_imitation_learns_a_simple_teacher():
    def first_legal(obs):
        return int(np.flatnonzero(obs["action_mask"])[0])

    torch.manual_seed(0)
    net = ppo.PolicyNet(32)
    hist = ppo.imitate(net, first_legal, seconds=None, chunks=12, num_envs=32, steps=8, minibatch=256,
                       lr=3e-3, threads=1, log=None)
    assert len(hist) == 12 and hist[-1]["decisions"] == 12 * 32 * 8
    assert hist[-1]["accuracy"] > max(0.6, hist[0]["accuracy"] + 0.3)
    assert hist[-1]["loss"] < hist[0]["loss"]


@pytest.mark.parametrize("deterministic", [True, False])
def test_policy_only_picks_legal_actions(deterministic):
    agent = ppo.PPOAgent(noisy_net(), deterministic=deterministic, seed=0)
    for seed in range(2):
        g = Game(seed=seed)
        while not g.done:
            mask = g.legal_mask()
            a = agent(agents.game_obs(g))
            assert mask[a] == 1
            g.step(a)
    vg = VectorGame(32, seed=3)
    obs, mask, player = vg.reset()
    for _ in range(200):
        a = agent.act_batch(obs, mask)
        assert (mask[np.arange(32), a] == 1).all()
        obs, mask, player, _, _ = vg.step(a)
    with pytest.raises(ValueError):
        agent({"observation": obs[0], "action_mask": np.zeros(NUM_ACTIONS, np.int8)})


def test_save_load_round_trip(tmp_path):
    net = noisy_net(hidden=48)
    path = tmp_path / "p.pt"
    ppo.save(net, path, ppo.PPOConfig(hidden=48), extra={"note": "x"})
    back = ppo.load(path)
    assert back.hidden == 48
    vg = VectorGame(16, seed=2, obs_type="features")
    obs, mask, _ = vg.reset()
    x, legal = torch.from_numpy(obs.copy()), torch.from_numpy(mask > 0)   # obs is a read-only view
    with torch.no_grad():
        for a, b in zip(net(x, legal), back(x, legal), strict=True):
            assert torch.equal(a, b)
    ck = torch.load(path, weights_only=True)
    ck["n_in"] += 1
    torch.save(ck, path)
    with pytest.raises(ValueError):
        ppo.load(path)


def test_evaluate_is_the_arena_with_the_policy_in_one_seat():
    # ppo.evaluate: deals in 4 rotations of [policy, opp, opp, opp], the figures of majiang_env.arena.run
    e = ppo.evaluate("greedy", "random", hands=40, seed=3)
    assert e["deals"] == 3 and e["games"] == 12 and e["hands"] == 48 and e["opponent"] == "random"
    res = arena.run(["greedy", "random", "random", "random"], deals=3, seed=3,
                    names=["policy", "random", "random", "random"], reference="random")
    f = {x["agent"]: x for x in res.figures()}
    me = f["policy"]
    assert e["points_per_hand"] == me["points_per_hand"]["mean"] and e["points_ci"] == me["points_per_hand"]["ci"]
    assert e["win_rate"] == me["win_rate"]["mean"] and e["gain_ci"] == me["gain"]["points_per_hand"]["ci"]
    assert e["opponent_win_rate"] == f["random"]["win_rate"]["mean"]
    assert e["baseline_win_rate"] == pytest.approx(me["win_rate"]["mean"] - me["gain"]["win_rate"]["mean"])
    assert e["wins"] == round(e["win_rate"] * 48) and e["points_per_hand"] > e["opponent_points_per_hand"]
    # a network is played by argmax, as the PPOAgent of it; Python agents and classes as opponents
    net = noisy_net(hidden=16)
    a = ppo.evaluate(net, agents.RandomAgent, deals=2, seed=1, baseline=False)
    b = ppo.evaluate(ppo.PPOAgent(net), agents.RandomAgent, deals=2, seed=1, baseline=False)
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    assert "gain_ci" not in a and a["opponent"] == "RandomAgent" and a["deals"] == 2


def test_search_names_the_in_kernel_search_agent():
    assert agents.search() == "search"
    name = agents.search(samples=32, budget=None, search_wins=True, opponents="uniform")
    assert name == "search:samples=32,budget=none,search_wins=true,opponents=uniform"
    assert parse_agent(name) == ("search", {"samples": 32, "budget": None, "search_wins": True,
                                            "opponents": "uniform"})
    assert parse_agent(agents.search(samples=4)) == ("search", {"samples": 4})
    for bad in ({"samples": 0}, {"depth": 3}, {"opponents": "oracle"}):
        with pytest.raises(ValueError):
            agents.search(**bad)


def test_main_quick(tmp_path, monkeypatch):
    # --quick with the training cut to 2 s and arena evaluations of 2 deals (32 of the policy's hands)
    real_train = update.train
    monkeypatch.setattr(cli, "train", lambda cfg, seconds, **kw: real_train(cfg, seconds=2.0, **kw))
    out = ppo.main(["--quick", "--eval-hands", "20", "--json", str(tmp_path / "r.json"),
                    "--out", str(tmp_path / "p.pt")])
    for k in ("vs_random", "vs_greedy"):
        assert out[k]["hands"] == 32 and out[k]["deals"] == 2 and len(out[k]["points_ci"]) == 2
    base = out["vs_random"]["baseline_win_rate"]          # random seats seldom win: often 0 over 2 deals
    assert 0 <= base < 1 and out["history"]
    assert out["ratio_vs_random"] == (out["vs_random"]["win_rate"] / base if base else None)
    assert json.loads((tmp_path / "r.json").read_text())["updates"] == out["updates"]
    assert ppo.load(tmp_path / "p.pt").hidden == out["config"]["hidden"]
    out = ppo.main(["--quick", "--imitate", "0.05", "--eval-hands", "4"])
    assert out["imitation"] and out["vs_greedy"]["hands"] == 32
    with pytest.raises(SystemExit):
        ppo.main(["--quick", "--imitate", "9", "--minutes", "8"])


@pytest.mark.parametrize("precision,opponents", [("fp32", "self"), ("bf16", "greedy")])
def test_ring_buffer_trains_every_transition_once_as_it_was_seen(precision, opponents):
    """Across carries that wrap the per-game ring, every training sample's features,
    mask and action are those the policy acted on, and each transition is trained
    exactly once (trained + carried = collected)."""
    cfg = ppo.PPOConfig(num_envs=6, rollout=40, hidden=16, minibatch=64, epochs=1, threads=1, numba_threads=1,
                        precision=precision, opponents=opponents)
    tr = ppo.Trainer(cfg)
    roll, B = tr.roll, cfg.num_envs
    seen = [[] for _ in range(B)]          # per game: the transitions not trained yet
    src_sample_step = roll.src.sample_step

    def sample_step(logits):
        acted_on = [(roll.stage[b].copy(), roll.src.mask[b] > 0) for b in range(B)]
        a, closed, delta = src_sample_step(logits)
        for b in range(B):
            seen[b].append(acted_on[b] + (int(a[b]),))
        return a, closed, delta
    roll.src.sample_step = sample_step
    dtype = ppo.matmul_dtype(precision)
    trained = wraps = 0
    for _ in range(25):
        ppo.collect_rollout(tr.net, roll, cfg)
        n_before = roll.n.copy()
        wraps += int((roll.start + n_before > roll.cap).sum())
        batch = ppo.training_batch(roll, cfg)
        R, A, i = batch["R"].numpy(), batch["A"].numpy(), 0
        for b in range(B):
            n_train = n_before[b] - roll.n[b]
            for f, legal, a in seen[b][:n_train]:
                assert A[i] == a and torch.equal(batch["X"][R[i]], torch.from_numpy(f).to(dtype))
                assert np.array_equal(batch["L"][R[i]].numpy(), legal)
                i += 1
            del seen[b][:n_train]
            assert len(seen[b]) == roll.n[b]
        assert i == len(R)
        trained += i
        ppo.ppo_update(tr.net, tr.opt, batch, cfg, tr.rng)
    assert trained + roll.n.sum() == 25 * B * cfg.rollout and wraps > 0


def test_a_minibatch_in_pieces_takes_the_step_of_the_whole(monkeypatch):
    """``ppo_update`` accumulates a minibatch's gradient over pieces of ``CHUNK``
    samples: the parameters after an update match one pass over each whole minibatch
    (float32, to rounding), and the reported entropy and value loss too; a minibatch
    with a non-finite loss in any piece is skipped whole, as it was."""
    cfg = ppo.PPOConfig(num_envs=8, rollout=200, hidden=32, minibatch=300, epochs=2, threads=1, numba_threads=1,
                        precision="fp32")
    tr = ppo.Trainer(cfg)
    ppo.collect_rollout(tr.net, tr.roll, cfg)
    batch = ppo.training_batch(tr.roll, cfg)
    n = len(batch["A"])
    assert n > cfg.minibatch and n % cfg.minibatch      # several minibatches, the last one short
    poisoned = dict(batch, RET=batch["RET"].clone())
    poisoned["RET"][[3, n - 1]] = float("nan")          # two minibatches per epoch skipped
    start = {k: v.clone() for k, v in tr.net.state_dict().items()}
    for b in (batch, poisoned):
        after = []
        for chunk in (10 ** 6, 64):                    # whole minibatches, then pieces of 64 (and a rest)
            monkeypatch.setattr(update, "CHUNK", chunk)
            tr.net.load_state_dict(start)
            opt = update._adam(tr.net.parameters(), cfg.lr)
            stats = ppo.ppo_update(tr.net, opt, b, cfg, np.random.default_rng(5))
            after.append(({k: v.clone() for k, v in tr.net.state_dict().items()}, stats))
        (whole, s_whole), (pieces, s_pieces) = after
        assert any(not torch.equal(whole[k], start[k]) for k in start)
        for k in start:
            torch.testing.assert_close(pieces[k], whole[k], rtol=1e-4, atol=1e-5)
        assert None not in s_whole and s_pieces == pytest.approx(s_whole, rel=1e-4)


@pytest.mark.parametrize("opponents", ["self", "greedy"])
def test_privileged_critic_reads_the_full_state_and_the_policy_only_the_observation(tmp_path, opponents):
    from majiang_env.agents.pretrained import _KEYS
    from majiang_env.engine.kernel.fullstate import STATE_SIZE, rotate_seats
    cfg = ppo.PPOConfig(num_envs=8, rollout=64, hidden=32, minibatch=256, epochs=1, threads=1,
                        opponents=opponents, critic="state")
    trainer = update.Trainer(cfg)
    critic = trainer.critic
    assert isinstance(critic, ppo.StateCritic)
    assert critic.body[0].in_features == ppo.N_FEATURES + STATE_SIZE + 2 * 4 * 36
    before = {k: v.clone() for k, v in critic.state_dict().items()}
    hist = trainer.run(updates=2, log=None)
    assert hist[-1]["decisions"] == 2 * 8 * 64 and any(h["value_loss"] is not None for h in hist)
    assert any(not torch.equal(before[k], v) for k, v in critic.state_dict().items())   # the critic learned
    roll = trainer.roll
    # the stored critic inputs are the full states seen from the deciding seat, the values the critic's
    if opponents == "self":
        now = rotate_seats(roll.src.vg.full_states(), roll.src.seat)
        assert np.array_equal(roll.src.states(), now)
    stored = roll.state[roll.rows(roll.ar, 0)]
    assert stored.any(axis=1).all()
    # the policy: its input is the observation's features alone, and so is what is exported
    assert trainer.net.body[0].in_features == ppo.N_FEATURES
    path = tmp_path / "policy.npz"
    ppo.export_numpy(trainer.net, path)
    with np.load(path) as z:
        weights = {k for k in z.files if not k.startswith("meta_") and k != "format"}
        first = z["body.0.weight"]
    assert weights == set(_KEYS) and first.shape[1] == ppo.N_FEATURES
    with pytest.raises(ValueError, match="critic"):
        update.Trainer(ppo.PPOConfig(critic="oracle"))


def test_shaping_potential_is_minus_k_times_the_deficiency_of_each_decision():
    from majiang_env.engine.kernel.features import F_DEF_NOW, SCALARS
    cfg = ppo.PPOConfig(num_envs=8, rollout=48, hidden=32, minibatch=256, epochs=1, threads=1,
                        opponents="greedy", shaping=0.5, precision="fp32")
    trainer = update.Trainer(cfg)
    roll = trainer.roll
    ppo.collect_rollout(trainer.net, roll, cfg)
    t = np.arange(int(roll.n.min()))
    feats = roll.obs[torch.from_numpy(roll.rows(roll.ar[:, None], t[None]).ravel())].numpy()
    deficiency = np.rint(feats[:, SCALARS + F_DEF_NOW] * 8).reshape(len(roll.ar), len(t))
    assert len(t) and (deficiency > 0).any()
    np.testing.assert_allclose(roll.buf["phi"][:, t], -0.5 * deficiency, atol=1e-6)
    # without shaping the potentials are 0, and so is what they add
    off = update.Trainer(ppo.PPOConfig(num_envs=8, rollout=48, hidden=32, threads=1, opponents="greedy"))
    ppo.collect_rollout(off.net, off.roll, off.cfg)
    assert off.roll.n.min() > 0 and not off.roll.buf["phi"].any()
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="shaping"):
            update.Trainer(ppo.PPOConfig(shaping=bad))


def test_train_strong_settings_and_method_names():
    from argparse import Namespace

    from majiang_env.training import recipe as train_strong
    base = dict(lr=None, ent_coef=None, num_envs=None, epochs=None, minibatch=None, critic="observation")
    cloned = train_strong._settings(Namespace(imitate=5.0, **base))
    scratch = train_strong._settings(Namespace(imitate=0.0, **base))
    assert cloned["lr"] == 1e-4 and scratch["lr"] == 3e-4
    assert train_strong._settings(Namespace(imitate=0.0, **{**base, "lr": 2e-4, "epochs": 3}))["epochs"] == 3
    assert "from random weights" in train_strong._method(Namespace(imitate=0.0, critic="state"))
    assert "privileged critic" in train_strong._method(Namespace(imitate=0.0, critic="state"))
    assert "clone greedy" in train_strong._method(Namespace(imitate=5.0, critic="observation"))
