"""TorchRL's PettingZooWrapper over the AEC env: masked sampling works; over the Parallel
form the idle agents' all-zero masks break it (docs/guide.md, Compatibility).

TorchRL is in no extra: these tests run only where it is installed
(checked with torchrl 0.14.1, tensordict 0.14.3).
"""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")

from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import MarlGroupMapType  # noqa: E402
from torchrl.modules import MaskedCategorical  # noqa: E402

import majiang_env  # noqa: E402


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


def test_parallel_env_idle_agents_get_all_zero_masks():
    env = PettingZooWrapper(majiang_env.parallel_env(hands_per_game=1), use_mask=True, categorical_actions=True,
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=0)
    td = env.reset()
    mask = td["agents", "action_mask"].bool()
    assert int((~mask.any(-1)).sum()) == 3
    with pytest.raises(RuntimeError):
        MaskedCategorical(logits=torch.zeros(mask.shape), mask=mask).sample()
