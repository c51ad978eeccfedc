"""The command line: ``python -m majiang_env COMMAND [options]``, also installed as ``majiang-env``.

=========  ===========================================================================
watch      watch four agents play one game (the default command)
play       play one seat yourself in the terminal
arena      two (or four) agents on duplicate deals, with 95% intervals over deals
ladder     every agent against three greedy seats, in one table
train      the training recipe of the shipped policy (needs the ``train`` extra)
bench      the throughput table of this machine
compile    compile every kernel ahead of time; say where the cache is and how large
=========  ===========================================================================

Every agent argument takes any agent spec of the registry (``majiang_env.agents``):
a name (``random``, ``greedy``, ``search``, ``pretrained``, ...), a name with
parameters (``search:samples=8,budget=2000``), a weights file (``run/pretrained.npz``,
``run/best.pt``) or ``module:factory``. ``COMMAND --help`` shows each command's
options and defaults.
"""
from __future__ import annotations

import argparse
import os
import sys

from .argtypes import agent_spec as _agent
from .argtypes import int_in
from .argtypes import seed as _seed
from .engine.registry import agent_names

PROG = "python -m majiang_env"
COMMANDS = ("watch", "play", "arena", "ladder", "train", "bench", "compile")
DESCRIPTION = """\
Majiang (a four-player card game of the mahjong family) for reinforcement learning.

  python -m majiang_env [watch] [options]        watch agents play one game (default)
  python -m majiang_env play [options]           play one seat yourself against agents
  python -m majiang_env arena A B [options]      A in one seat against three B, duplicate deals
  python -m majiang_env ladder [AGENT ...]       every agent against three greedy seats
  python -m majiang_env train [options]          train a policy (the recipe; extra 'train')
  python -m majiang_env bench [options]          the throughput table of this machine
  python -m majiang_env compile                  compile every kernel now; show the cache

Agents are named as in majiang_env.agents: random, greedy, search, pretrained,
text with parameters (search:samples=8), a weights file (.npz / .pt) or
module:factory. "python -m majiang_env COMMAND --help" lists a command's
options. The rules are in docs/rules.md.
"""


def parser() -> argparse.ArgumentParser:
    names = ", ".join(agent_names())
    fmt = argparse.ArgumentDefaultsHelpFormatter
    ap = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="{" + ",".join(COMMANDS) + "}")

    def rules_args(p):
        p.add_argument("--hands", type=int, choices=(1, 2, 3, 4), default=4, help="hands per game")

    def lang(p):
        p.add_argument("--lang", choices=("en", "ja"), default="en",
                       help="card, seat and move names: en (B5, East, pung) or ja (Japanese)")

    w = sub.add_parser("watch", prog=f"{PROG} watch", formatter_class=fmt,
                       help="watch four agents play one game (default)",
                       description="Watch four agents play one game: each hand's last table "
                                   "and its result, every win explained.")
    w.add_argument("--seed", type=_seed, default=0, help="game seed")
    w.add_argument("--agents", nargs=4, type=_agent, default=["greedy", "random", "random", "random"],
                   metavar="AGENT", help=f"the agents of seats 0-3 (any agent spec: {names})")
    w.add_argument("--verbose", action="store_true", help="also print every decision")
    lang(w)
    rules_args(w)

    p = sub.add_parser("play", prog=f"{PROG} play", formatter_class=fmt,
                       help="play one seat yourself against three agents",
                       description="Play one seat in the terminal against three agents. The table shows "
                                   "only what your seat may see; type the number of a move. "
                                   "q quits, ? shows help.")
    p.add_argument("--seat", type=int, choices=range(4), default=0,
                   help="your seat: 0 East, 1 South, 2 West, 3 North")
    p.add_argument("--opponents", type=_agent, default="greedy", metavar="AGENT",
                   help=f"the agent of the other three seats (any agent spec: {names})")
    p.add_argument("--seed", type=_seed, default=None, help="game seed (default: a fresh one, printed)")
    lang(p)
    rules_args(p)

    a = sub.add_parser("arena", prog=f"{PROG} arena", formatter_class=fmt,
                       help="agents on duplicate deals, with 95%% intervals",
                       description="Play agents on duplicate deals (every deal in every rotation of the "
                                   "lineup, so the luck of the cards cancels) and print each agent's points "
                                   "per hand, win and deal-in rates with 95%% Student-t intervals over deals. "
                                   "Two agents A B: A in one seat against three B (--lineup one), or A and B "
                                   "in alternate seats (--lineup alternate); the last column is A's gain "
                                   "over B in the same seats of the same deals. Four agents: that lineup.")
    a.add_argument("agents", nargs="+", type=_agent, metavar="AGENT",
                   help=f"two or four agent specs ({names}, a weights file, module:factory)")
    a.add_argument("--deals", type=int_in(2, 10 ** 8), default=500,
                   help="deals (each played in every seating; at least 2 for an interval)")
    a.add_argument("--lineup", choices=("one", "alternate"), default="one",
                   help="with two agents: A in one seat (one) or in two alternate seats (alternate)")
    a.add_argument("--permutations", action="store_true", help="all 24 seat orders instead of 4 rotations")
    a.add_argument("--seed", type=_seed, default=0, help="run seed: deal d is game d of this seed")
    a.add_argument("--threads", type=int_in(1, 1024), default=1, help="numba threads")
    a.add_argument("--json", default=None, metavar="PATH", help="also write every figure as JSON")
    rules_args(a)

    lad = sub.add_parser("ladder", prog=f"{PROG} ladder", formatter_class=fmt,
                         help="every agent against three greedy seats",
                         description="Each agent in one seat against three greedy seats, on the same "
                                     "duplicate deals: points per hand (its gain over greedy, since the "
                                     "points are zero-sum) with 95%% intervals over deals, in one table.")
    lad.add_argument("agents", nargs="*", type=_agent, metavar="AGENT",
                     default=["random", "greedy", "search", "pretrained"], help="the agents of the rows")
    lad.add_argument("--deals", type=int_in(2, 10 ** 8), default=500, help="deals per row")
    lad.add_argument("--search-deals", type=int_in(2, 10 ** 8), default=100,
                     help="deals of a search row (milliseconds per decision)")
    lad.add_argument("--seed", type=_seed, default=0, help="run seed")
    lad.add_argument("--threads", type=int_in(1, 1024), default=1, help="numba threads")
    lad.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")
    rules_args(lad)

    sub.add_parser("train", prog=f"{PROG} train", add_help=False,
                   help="train a policy against greedy (the recipe; extra 'train')",
                   description="The training recipe: majiang_env.training.recipe (train --help lists it).")

    b = sub.add_parser("bench", prog=f"{PROG} bench", formatter_class=fmt,
                       help="the throughput table of this machine",
                       description="Decisions per second of each face on this machine, each row the best "
                                   "of --repeats runs of the agent's loop (observation and legal actions "
                                   "read at every decision, a random legal action chosen) beside the bare "
                                   "stepping loop; the load average before and after.")
    b.add_argument("--decisions", type=int_in(1000, 10 ** 10), default=200_000,
                   help="decisions per timed run of each batched row (the single-game rows take a tenth)")
    b.add_argument("--repeats", type=int_in(1, 100), default=3, help="runs per row, best kept")
    b.add_argument("--num-envs", type=int_in(1, 2 ** 20), default=1024, help="batch size B")
    b.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")

    sub.add_parser("compile", prog=f"{PROG} compile", formatter_class=fmt,
                   help="compile every kernel now; show the cache",
                   description="Compile every kernel variant of the package ahead of time (numba writes "
                               "them to its on-disk cache, so later runs start at once), then print where "
                               "the cache is and how large. NUMBA_CACHE_DIR moves it (set it before "
                               "Python starts).")
    return ap


def _two_or_four(ap, agents, lineup):
    if len(agents) == 2:
        a, b = agents
        return [a, b, b, b] if lineup == "one" else [a, b, a, b]
    if len(agents) == 4:
        return list(agents)
    ap.error(f"arena takes two agents (A B) or four (a lineup), got {len(agents)}")


def _run(args, ap, argv) -> int:
    rules = {"hands_per_game": args.hands} if hasattr(args, "hands") else None
    if args.command == "play":
        from .views.play import play
        return play(seat=args.seat, opponents=args.opponents, seed=args.seed, lang=args.lang, rules=rules)
    if args.command == "watch":
        from .views.play import watch
        watch(args.agents, seed=args.seed, lang=args.lang, rules=rules, verbose=args.verbose)
        return 0
    if args.command == "arena":
        from . import arena
        lineup = _two_or_four(ap, args.agents, args.lineup)
        reference = args.agents[1] if len(args.agents) == 2 and args.agents[0] != args.agents[1] else None
        res = arena.run(lineup, args.deals, seed=args.seed, rules=rules, reference=reference,
                        num_threads=args.threads)
        print(res.table())
        _machine_line(f"seed {args.seed}; {args.threads} numba thread(s)")
        if args.json:
            res.to_json(args.json)
            print(f"wrote {args.json}")
        return 0
    if args.command == "ladder":
        from . import arena
        rows = arena.ladder(args.agents, args.deals, search_deals=args.search_deals, seed=args.seed, rules=rules,
                            num_threads=args.threads, log=lambda s: print(s, file=sys.stderr, flush=True))
        print(arena.ladder_table(rows))
        _machine_line(f"seed {args.seed}; {args.threads} numba thread(s)")
        if args.json:
            import json
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"format": "majiang-ladder/1", "seed": args.seed, "rows": rows,
                           "load_average": list(os.getloadavg())}, f, indent=1)
            print(f"wrote {args.json}")
        return 0
    if args.command == "bench":
        from . import bench
        return bench.main(args)
    if args.command == "compile":
        from . import warmup
        return warmup.main()
    raise AssertionError(args.command)


def _machine_line(extra):
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {extra}")


def _train(argv) -> int:
    try:
        from .training import recipe
    except ImportError as e:
        print(f"{PROG} train needs the 'train' extra (torch): pip install 'majiang_env[train]' ({e})",
              file=sys.stderr)
        return 2
    return recipe.main(argv) or 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS + ("-h", "--help"):
        argv.insert(0, "watch")
    try:
        if argv[0] == "train":
            return _train(argv[1:])
        ap = parser()
        args = ap.parse_args(argv)
        return _run(args, ap, argv)
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. python -m majiang_env | head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
