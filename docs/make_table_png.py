"""Regenerate ``docs/table.png``: the ``rgb_array`` picture of a mid-game table.

    python docs/make_table_png.py [out.png]

Four greedy agents play ``Game(seed=3)`` for 130 decisions (hand 2, lap 15: melds,
picked-up and won-on river cards); the picture is ``render_rgb`` of that state,
saved at native size with matplotlib's ``imsave``.
"""
import sys
from pathlib import Path

from majiang_env import Game
from majiang_env.agents import game_obs, make_agent
from majiang_env.views.render import render_rgb

SEED, DECISIONS = 3, 130


def mid_game(seed=SEED, decisions=DECISIONS) -> Game:
    g = Game(seed=seed)
    agents = [make_agent("greedy", seed=s) for s in range(4)]
    for _ in range(decisions):
        if g.done:
            break
        g.step(agents[g.current_player](game_obs(g)))
    return g


def main(out=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = Path(out) if out else Path(__file__).with_name("table.png")
    plt.imsave(out, render_rgb(mid_game()))
    return out


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else None))
