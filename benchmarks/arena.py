"""Duplicate-deal arena from the command line (``majiang_env.arena``): prints the ladder.

    python benchmarks/arena.py --agents greedy random random random --deals 1000
    python benchmarks/arena.py --agents mymodule:make_agent greedy greedy greedy --deals 4000 --json out.json
    python benchmarks/arena.py --agents search:samples=32,budget=none greedy greedy greedy --deals 100

``--agents``: 4 agents, one per lineup position; each an agent spec of the
registry (``majiang_env.agents``): a name (``random``, ``greedy``, ``search``,
``pretrained``, ...), optionally with parameters as ``name:key=value,...``
(``none`` for no cap), a weights file, or ``module:attr`` for a Python agent (a
class or factory called as ``attr(seed)``, or ``attr(seed, rules=rules)`` when
it takes ``rules``, or an agent object; e.g. ``majiang_env.agents:GreedyAgent``).
``python -m majiang_env arena`` is the installed command for the common case.
The same name twice is one agent; ``--names`` renames them (4 names; equal names
mark one agent). Every deal is played in the 4 rotations of the lineup
(``--permutations``: all 24 orders), and, unless ``--no-baseline``, once more
with the reference agent (``--reference``, default: the agent holding most
seats) in all four seats, for the "gain in the same seats" column.

Prints the run's size, its wall time (with the batches' creation; the kernel
compile or cache load is done before the clock starts) and decisions/s, then
one row per agent: points per hand, win rate and deal-in rate per hand with
95% intervals over deals, the gain over the reference in the same seats, and
milliseconds per decision spent in the agent. ``--json PATH`` writes every
figure (``ArenaResult.to_dict``). ``--write-results [PATH]`` adds the run's
figures to ``benchmarks/results/arena.json`` (one row per lineup and settings,
replaced when run again), from which ``benchmarks/render_docs.py`` renders the
arena's table in docs/guide.md and the README's figure for greedy.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import results_io  # noqa: E402

from majiang_env import arena  # noqa: E402
from majiang_env.engine.rules import make_rules  # noqa: E402


def _rules_json(text):
    if text is None:
        return None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--rules must be a JSON object of RuleConfig fields, got {text!r} ({e})") from None
    if not isinstance(d, dict):
        raise ValueError(f"--rules must be a JSON object of RuleConfig fields, got {text!r}")
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", nargs=4, required=True, metavar="AGENT",
                    help="4 agent specs (names, name:key=value,... for parameters, weights files, module:factory)")
    ap.add_argument("--names", nargs=4, default=None, metavar="NAME", help="display names (equal = one agent)")
    ap.add_argument("--deals", type=int, default=1000, help="deals (game seeds) to play (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="run seed: deal d is game_seed(seed, d) (default 0)")
    ap.add_argument("--permutations", action="store_true", help="all 24 seat orders instead of the 4 rotations")
    ap.add_argument("--reference", default=None, help="name of the agent the paired figures compare with")
    ap.add_argument("--no-baseline", action="store_true", help="skip the all-reference run of the same deals")
    ap.add_argument("--num-envs", type=int, default=None, help="games in flight per seating (default: auto)")
    ap.add_argument("--threads", type=int, default=1, help="numba threads of the batches (default 1; 0: numba's)")
    ap.add_argument("--rules", default=None, metavar="JSON",
                    help='RuleConfig overrides as JSON, e.g. \'{"hands_per_game": 1}\'')
    ap.add_argument("--json", default=None, metavar="PATH", help="write every figure as JSON")
    ap.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    results_io.add_argument(ap, "arena")
    args = ap.parse_args(argv)
    try:
        rules = make_rules(_rules_json(args.rules))
        # agent specs of the registry: one agent per distinct spec ("m:f m:f greedy greedy" is two
        # agents); the arena builds each Python agent once, seeded by its first lineup position
        agents = list(args.agents)
        threads = args.threads or None
        # compile / load the kernel outside the clock (64 slots: the parallel step too, when threads > 1)
        arena.run(["greedy", "random"] * 2, 64, seed=0, rules=rules, baseline=False, num_envs=64, num_threads=threads)
        res = arena.run(agents, args.deals, seed=args.seed, permutations=args.permutations, rules=rules,
                        names=args.names, reference=args.reference, baseline=not args.no_baseline,
                        num_envs=args.num_envs, num_threads=threads, progress=not args.no_progress)
    except ValueError as e:
        ap.error(str(e))
    print(res.table())
    if args.json:
        res.to_json(args.json)
        print(f"wrote {args.json}")
    if args.write_results:
        results_io.report(results_io.write(args.write_results, record(args, argv, res)))
    return 0


def record(args, argv, res) -> dict:
    """The results run of one arena run: one row named by the lineup and the settings that change the games."""
    key = " ".join(["--agents", *args.agents, "--deals", str(args.deals)]
                   + (["--seed", str(args.seed)] if args.seed else [])
                   + (["--permutations"] if args.permutations else [])
                   + (["--rules", args.rules] if args.rules else []) + (["--names", *args.names] if args.names else [])
                   + (["--reference", args.reference] if args.reference else [])
                   + (["--no-baseline"] if args.no_baseline else []))
    keep = ("agent", "seats", "hands", "points_per_hand", "win_rate", "deal_in_rate", "gain", "seconds_per_decision")
    figures = [{k: f[k] for k in keep if k in f} for f in res.figures()]
    for f in figures:
        for k in ("points_per_hand", "win_rate", "deal_in_rate"):
            f[k] = {"mean": f[k]["mean"], "ci": f[k]["ci"]}
        if "gain" in f:
            f["gain"] = {"mean": f["gain"]["points_per_hand"]["mean"], "ci": f["gain"]["points_per_hand"]["ci"]}
    row = {"row": key, "games": res.games, "decisions": res.decisions, "seconds": round(res.seconds, 1),
           "cpu_seconds": round(res.cpu_seconds, 1), "figures": figures}
    return results_io.run_record(results_io.command_line(argv, __file__), [row], seed=args.seed)


if __name__ == "__main__":
    sys.exit(main())
