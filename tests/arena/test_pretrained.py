"""The numpy policy (majiang_env.agents.pretrained) equals the torch network it was exported from,
and PretrainedAgent plays legally from compact observations and from features."""
import numpy as np
import pytest

from majiang_env import Game
from majiang_env.agents import game_obs
from majiang_env.agents.pretrained import DEFAULT_WEIGHTS, NumpyPolicy, PretrainedAgent
from majiang_env.engine.encodings import FEAT_SIZE
from majiang_env.engine.vector import VectorGame

torch = pytest.importorskip("torch")
from majiang_env.training import ppo  # noqa: E402


@pytest.fixture(scope="module")
def random_weights(tmp_path_factory):
    torch.manual_seed(0)
    net = ppo.PolicyNet(48, kind_hidden=16)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    path = tmp_path_factory.mktemp("w") / "w.npz"
    ppo.export_numpy(net.eval(), path, extra={"note": "test"})
    return net, path


def _positions(n=40, B=16):
    vg = VectorGame(B, seed=4, obs_type="features")
    x, m, _ = vg.reset()
    xs, ms, cs = [x.copy()], [m.copy()], [vg.compact.copy()]
    for _ in range(n):
        x, m, *_ = vg.step(vg.policy_actions("random"))
        xs.append(x.copy())
        ms.append(m.copy())
        cs.append(vg.compact.copy())
    return np.concatenate(xs), np.concatenate(ms), np.concatenate(cs)


def test_numpy_forward_equals_torch(random_weights):
    net, path = random_weights
    x, m, _ = _positions()
    with torch.no_grad():
        expect, _ = net(torch.from_numpy(x), torch.from_numpy(m > 0))
    got = NumpyPolicy.load(path).logits(x, m > 0)
    legal = m > 0
    assert np.allclose(got[legal], expect.numpy()[legal], atol=1e-4, rtol=1e-4)
    assert (got[~legal] == -1e9).all()
    assert (got.argmax(1) == expect.numpy().argmax(1)).all()


def test_agent_plays_legally_from_compact_and_features(random_weights):
    _, path = random_weights
    agent = PretrainedAgent(path=path)
    x, m, c = _positions(10, 8)
    assert (agent.act_batch(x, m) == agent.act_batch(c, m)).all()
    g = Game(seed=2)
    while not g.done:
        a = agent(game_obs(g))
        assert g.is_legal(a)
        g.step(a)
    sampler = PretrainedAgent(seed=1, deterministic=False, path=path)
    a = sampler.act_batch(x, m)
    assert m[np.arange(len(a)), a].all()


def test_bad_inputs_and_files(random_weights, tmp_path):
    _, path = random_weights
    agent = PretrainedAgent(path=path)
    x, m, _ = _positions(1, 2)
    for obs, mask in [(x[:, :10], m), (x, m[:, :10]), (x, np.zeros_like(m)), (x[0], m[0])]:
        with pytest.raises(ValueError):
            agent.act_batch(obs, mask)
    with pytest.raises(ValueError):
        agent("not a dict")
    with pytest.raises(FileNotFoundError):
        PretrainedAgent(path=tmp_path / "none.npz")
    bad = tmp_path / "bad.npz"
    np.savez(bad, format=np.array("other/1"))
    with pytest.raises(ValueError, match="format"):
        NumpyPolicy.load(bad)
    with pytest.raises(ValueError):
        PretrainedAgent(seed=1.5, path=path)
    assert x.shape[1] == FEAT_SIZE


def test_shipped_weights_load_and_are_small():
    assert DEFAULT_WEIGHTS.is_file(), "the package ships its policy at majiang_env/policies/data/pretrained.npz"
    assert DEFAULT_WEIGHTS.stat().st_size <= 5 * 2 ** 20
    agent = PretrainedAgent()
    g = Game(seed=0)
    while not g.done:
        g.step(agent(game_obs(g)))
