"""TorchRL's PettingZooWrapper over both PettingZoo forms: masked sampling plays legal games.

Over the AEC env TorchRL fills the masks of the agents not to act itself; over the
Parallel form it reads every live agent's mask, which is the pass 156 alone for the
agents not to act (docs/guide.md, Compatibility), so no glue is needed.

TorchRL is in the ``train`` extra (checked with torchrl 0.14.1, tensordict 0.14.3);
these tests are skipped where it is not installed.
"""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import MarlGroupMapType  # noqa: E402
from torchrl.modules import MaskedCategorical  # noqa: E402

import majiang_env  # noqa: E402

PASS = 156


@pytest.mark.parametrize("group_map", [MarlGroupMapType.ONE_GROUP_PER_AGENT, MarlGroupMapType.ALL_IN_ONE_GROUP])
def test_aec_env_masked_sampling_plays_legal_games(group_map):
    env = PettingZooWrapper(majiang_env.env(hands_per_game=1), use_mask=True, categorical_actions=True,
                            group_map=group_map, seed=0)
    td, games = env.reset(), 0
    for _ in range(400):
        for g in env.group_map:
            mask = td[g, "action_mask"].bool()
            assert mask.any(-1).all()        # every row has an action to sample
            td[g, "action"] = MaskedCategorical(logits=torch.zeros(mask.shape), mask=mask).sample()
        td = env.step(td)
        nxt = td["next"]
        for g in env.group_map:
            assert (nxt[g, "reward"] > -1000).all()   # env() would end the game at -1000 on an illegal move
        if nxt["done"].any():
            games, td = games + 1, env.reset()
        else:
            td = nxt
    assert games >= 2


def _masked_random(env):
    """A random policy that honours each agent's mask, with TorchRL's MaskedCategorical."""
    def policy(td):
        for g in env.group_map:
            mask = td[g, "action_mask"]
            td[g, "action"] = MaskedCategorical(logits=torch.zeros(mask.shape), mask=mask).sample()
        return td
    return policy


@pytest.mark.parametrize("group_map", [MarlGroupMapType.ALL_IN_ONE_GROUP, MarlGroupMapType.ONE_GROUP_PER_AGENT])
def test_parallel_env_rollout_of_whole_games(group_map):
    """``PettingZooWrapper(parallel_env())`` as it is: a rollout with a masked random policy
    plays whole games (TorchRL resets after each), every agent samples from its own mask,
    the idle agents sample the pass, and no move is illegal (env() would give -1000)."""
    env = PettingZooWrapper(majiang_env.parallel_env(hands_per_game=1), use_mask=True, categorical_actions=True,
                            group_map=group_map, seed=0)
    assert all(env.full_action_spec[g, "action"].space.n == PASS + 1 for g in env.group_map)
    td = env.rollout(260, policy=_masked_random(env), break_when_any_done=False)
    assert td.batch_size == (260,)
    games = int(td["next", "done"].sum())
    assert games >= 2
    acting = 0
    for g in env.group_map:
        mask, action = td[g, "action_mask"], td[g, "action"]
        assert mask.any(-1).all()                                   # no all-zero mask
        assert mask.gather(-1, action.unsqueeze(-1)).all()          # every sampled action was legal
        idle = mask[..., :PASS].sum(-1) == 0
        assert (action[idle] == PASS).all() and (action[~idle] != PASS).all()
        acting += int((~idle).sum())
        assert (td["next", g, "reward"] > -1000).all()
    assert acting == 260   # one agent acts per step
    # TorchRL's own random policy (the action spec's masked rand) runs too
    td = env.rollout(120, break_when_any_done=False)
    assert all((td["next", g, "reward"] > -1000).all() for g in env.group_map)
