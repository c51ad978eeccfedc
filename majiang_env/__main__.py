"""``python -m majiang_env``: play one full game between baseline agents and print it."""
import argparse
import random

from . import Game
from .rules import SEAT_WINDS, action_name


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verbose", action="store_true", help="print every decision")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    g = Game(seed=args.seed)
    n = 0
    hand = 0
    while not g.done:
        seat, a = g.current_player, rng.choice(g.legal_actions())
        if args.verbose:
            print(f"hand {g.hand_index} lap {g.lap:2d} {SEAT_WINDS[seat]} {action_name(a)}")
        g.step(a)
        n += 1
        if g.hand_index != hand or g.done:
            for w in g.wins(hand):
                how = "ツモ" if w["from"] is None else f"ロン from {SEAT_WINDS[w['from']]}"
                pats = ", ".join(f"{p['name']} {p['points']}" for p in w["patterns"]) or "no pattern"
                print(f"  hand {hand}: {SEAT_WINDS[w['seat']]} wins ({how}), base {w['base']} ({pats})")
            print(f"hand {hand} deltas {g.hand_deltas(hand).tolist()}")
            hand = g.hand_index
    print(f"game over after {n} decisions (random agents); final scores "
          + " ".join(f"{SEAT_WINDS[s]}{int(v):+d}" for s, v in enumerate(g.scores)))


if __name__ == "__main__":
    main()
