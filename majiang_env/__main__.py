"""The command line: ``python -m majiang_env [watch | play] [options]`` (see ``--help``)."""
import argparse
import os
import sys

from .engine.checks import as_seed
from .views.play import INTERRUPTED, agent_names, play, watch

PROG = "python -m majiang_env"
COMMANDS = ("watch", "play")
DESCRIPTION = """\
Majiang (a four-player card game of the mahjong family) in the terminal.

  python -m majiang_env [watch] [options]   watch baseline agents play one game
  python -m majiang_env play [options]      play one seat yourself against agents

Without a command, watch. "python -m majiang_env play --help" (or watch --help)
lists a command's options. The rules are in docs/rules.md.
"""


def _seed(text):
    try:
        return as_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is an integer 0..2**64-1, not {text!r}") from None


def parser() -> argparse.ArgumentParser:
    names = agent_names()
    ap = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="{watch,play}")

    def common(p):
        p.add_argument("--lang", choices=("en", "ja"), default="en",
                       help="card, seat and move names: en (B5, East, pung; default) or ja (Japanese)")
        p.add_argument("--hands", type=int, choices=(1, 2, 3, 4), default=4,
                       help="hands in the game (default 4)")

    w = sub.add_parser("watch", prog=f"{PROG} watch", help="watch baseline agents play one game (default)",
                       description="Watch four agents play one game: each hand's last table "
                                   "and its result, every win explained.")
    w.add_argument("--seed", type=_seed, default=0, help="game seed (default 0)")
    w.add_argument("--agents", nargs=4, default=["greedy", "random", "random", "random"],
                   choices=names, metavar="AGENT",
                   help=f"the agents of seats 0-3, each one of: {', '.join(names)} "
                        "(default: greedy random random random)")
    w.add_argument("--verbose", action="store_true", help="also print every decision")
    common(w)

    p = sub.add_parser("play", prog=f"{PROG} play", help="play one seat yourself against baseline agents",
                       description="Play one seat in the terminal against three agents. The table shows "
                                   "only what your seat may see; type the number of a move. "
                                   "q quits, ? shows help.")
    p.add_argument("--seat", type=int, choices=range(4), default=0,
                   help="your seat: 0 East (default), 1 South, 2 West, 3 North")
    p.add_argument("--opponents", choices=names, default="greedy",
                   help="the agent of the other three seats (default: greedy)")
    p.add_argument("--seed", type=_seed, default=None, help="game seed (default: a fresh one, printed)")
    common(p)
    return ap


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS + ("-h", "--help"):
        argv.insert(0, "watch")
    args = parser().parse_args(argv)
    rules = {"hands_per_game": args.hands}
    try:
        if args.command == "play":
            return play(seat=args.seat, opponents=args.opponents, seed=args.seed, lang=args.lang, rules=rules)
        watch(args.agents, seed=args.seed, lang=args.lang, rules=rules, verbose=args.verbose)
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C)", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # e.g. python -m majiang_env | head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
