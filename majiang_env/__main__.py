"""``python -m majiang_env``: play one full game between baseline agents and print it."""
import argparse

from . import Game
from .render import render_ansi
from .rules import SEAT_WINDS, action_name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--agents", nargs=4, default=["greedy", "random", "random", "random"],
                    choices=["greedy", "random"], metavar="AGENT",
                    help="greedy or random for seats 0-3 (default: greedy random random random)")
    ap.add_argument("--verbose", action="store_true", help="print every decision")
    args = ap.parse_args(argv)
    from agents import GreedyAgent, RandomAgent, game_obs
    g = Game(seed=args.seed)
    players = [(GreedyAgent if name == "greedy" else RandomAgent)(args.seed * 4 + s)
               for s, name in enumerate(args.agents)]
    n, hand = 0, 0
    while not g.done:
        seat = g.current_player
        a = players[seat](game_obs(g))
        if args.verbose:
            print(f"hand {g.hand_index} lap {g.lap:2d} {SEAT_WINDS[seat]} {action_name(a)}")
        before = render_ansi(g)
        g.step(a)
        n += 1
        if g.hand_index != hand or g.done:
            print(before)  # the table at the hand's last decision, every hand open
            for w in g.wins(hand):
                how = "模 (tsumo)" if w["from"] is None else f"栄 (ron) on {SEAT_WINDS[w['from']]}'s discard"
                pats = ", ".join(f"{p['name']} {p['points']}" for p in w["patterns"]) or "no pattern"
                print(f"  {SEAT_WINDS[w['seat']]} wins by {how}: base {w['base']} ({pats})")
            print(f"hand {hand}: points {g.hand_deltas(hand).tolist()}\n")
            hand = g.hand_index
    who = ", ".join(f"{SEAT_WINDS[s]} {name}" for s, name in enumerate(args.agents))
    print(f"game over after {n} decisions ({who}); final scores "
          + " ".join(f"{SEAT_WINDS[s]}{int(v):+d}" for s, v in enumerate(g.scores)))


if __name__ == "__main__":
    main()
