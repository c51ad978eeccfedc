"""Golden playthrough (OpenSpiel style): a seeded game written out decision by
decision with legal sets, observations digests, wins and scores. Any change of
behaviour shows up as a diff and has to be deliberate: regenerate with
``python tests/test_golden.py`` and bump the environment version if the
public behaviour changed."""
import hashlib
import json
import random
import sys
from pathlib import Path

from majiang_env import Game, RuleConfig

GOLDEN = Path(__file__).parent / "golden" / "playthrough_seed7.json"


def playthrough():
    rng = random.Random(7)
    g = Game(RuleConfig(hands_per_game=1), seed=7, auto_forced=False)
    obs = hashlib.sha256()
    while not g.done:
        for s in range(4):
            obs.update(g.observe(s).tobytes())
        g.step(rng.choice(g.legal_actions()))
    rec = g.record(legal=True)
    rec["observation_sha256"] = obs.hexdigest()
    return rec


def test_golden_playthrough():
    want = json.loads(GOLDEN.read_text())
    assert playthrough() == want


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[1]))
    GOLDEN.write_text(json.dumps(playthrough(), separators=(",", ":")))
