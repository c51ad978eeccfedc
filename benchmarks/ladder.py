"""The ladder: every agent against three GreedyAgents, on duplicate deals, in one table.

    python benchmarks/ladder.py                                   # random, greedy, search x2, pretrained
    python benchmarks/ladder.py --deals 1000 --search-deals 100 --add scratch=runs/scratch.npz --json ladder.json
    python benchmarks/ladder.py --deals 4000 --no-search --write-results

Each row is one ``majiang_env.arena`` run of the lineup (agent, greedy, greedy,
greedy) over the same deals, each deal in the 4 rotations so that the agent
holds every seat of it once: "points/hand" is the agent's mean points per hand.
Points are zero-sum, so this equals the agent's gain over what a GreedyAgent
makes in the same seats of the same deals (the duplicate comparison), and
greedy itself scores exactly 0. 95% intervals are Student t over deals. Search
rows are slow (milliseconds per decision): the default search plays
``--search-deals`` deals, the wider one half as many. ``--add NAME=SPEC`` adds a row
of ``--deals`` deals (names must be new, and not ``greedy``): SPEC is an
``.npz`` policy (``majiang_env.agents.pretrained`` format, e.g. exported by
``majiang_env.training.ppo.export_numpy``), an in-kernel agent (``search:samples=64``) or
``module:factory``. ``--write-results [PATH]`` writes the rows to
``benchmarks/results/ladder.json`` (replacing rows of the same names), from which
``benchmarks/render_docs.py`` renders the ladder of docs/performance.md.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import results_io  # noqa: E402

from majiang_env import arena  # noqa: E402
from majiang_env.agents import resolve  # noqa: E402
from majiang_env.agents.pretrained import DEFAULT_WEIGHTS  # noqa: E402

# (name, spec, share of the deals: 1 = --deals; "search" = --search-deals, "search/2" half of it)
ROWS = [("random", "random", 1), ("greedy", "greedy", 1), ("search", "search", "search"),
        ("search, 2x samples and budget", "search:samples=32,budget=16000", "search/2")]


def _agent(spec, seed):
    """The resolved agent spec (ValueError naming a bad one before any row plays)."""
    return resolve(spec, f"agent {spec!r}")


def row(name, agent, spec, deals, seed, threads):
    """One ladder row: the arena figures of ``agent`` (made from ``spec``) against three greedy seats."""
    res = arena.run([agent, "greedy", "greedy", "greedy"], deals, seed=seed,
                    names=[name, "greedy", "greedy", "greedy"] if name != "greedy" else None,
                    baseline=False, num_threads=threads, progress=False)
    f = next(f for f in res.figures() if f["agent"] == name)
    return {"row": name, "agent": name, "spec": spec, "deals": deals, "points_per_hand": f["points_per_hand"],
            "win_rate": f["win_rate"], "deal_in_rate": f["deal_in_rate"],
            "ms_per_decision": 1000 * f["seconds_per_decision"], "seconds": round(res.seconds, 1)}


table = arena.ladder_table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=1000, help="deals per row (default 1000)")
    ap.add_argument("--search-deals", type=int, default=100, help="deals of the default search row (default 100)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--add", action="append", default=[], metavar="NAME=SPEC", help="another row")
    ap.add_argument("--no-search", action="store_true", help="leave the two built-in search rows out")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help="play only these rows (by name)")
    ap.add_argument("--threads", type=int, default=1, help="numba threads of the batches (default 1)")
    ap.add_argument("--json", default=None, metavar="PATH")
    results_io.add_argument(ap, "ladder")
    args = ap.parse_args(argv)
    share = {1: args.deals, "search": args.search_deals, "search/2": max(1, args.search_deals // 2)}
    rows = [(n, s, share[k]) for n, s, k in ROWS if not (args.no_search and s.startswith("search"))]
    if DEFAULT_WEIGHTS.is_file():
        rows.append(("pretrained", str(DEFAULT_WEIGHTS), args.deals))
    for extra in args.add:
        name, eq, spec = extra.partition("=")
        if not eq or not name or not spec:
            ap.error(f"--add takes NAME=SPEC, got {extra!r}")
        rows.append((name, spec, args.deals))
    names = [r[0] for r in rows]
    if len(set(names)) < len(names) or any(r[0] == "greedy" and r[1] != "greedy" for r in rows):
        ap.error(f"row names must differ from each other and from the opponents' name 'greedy': {names}")
    if args.only is not None:
        unknown = set(args.only) - {r[0] for r in rows}
        if unknown:
            ap.error(f"--only: no row named {sorted(unknown)}; rows: {[r[0] for r in rows]}")
        rows = [r for r in rows if r[0] in args.only]
    try:   # every agent is made (and checked) before any row plays
        rows = [(name, _agent(spec, args.seed), spec, deals) for name, spec, deals in rows]
    except (ValueError, FileNotFoundError) as e:
        ap.error(str(e))
    out = []
    for name, agent, spec, deals in rows:
        t = time.perf_counter()
        try:
            out.append(row(name, agent, spec, deals, args.seed, args.threads))
        except (ValueError, FileNotFoundError) as e:
            ap.error(f"{name}: {e}")
        print(f"{name}: {deals} deals in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    print(table(out))
    load = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"seed {args.seed}; {args.threads} numba thread(s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"format": "majiang-ladder/1", "seed": args.seed, "rows": out,
                       "load_average": load}, f, indent=1)
        print(f"wrote {args.json}")
    if args.write_results:
        run = results_io.run_record(results_io.command_line(argv, __file__), out,
                                    load_average=[round(x, 2) for x in load], seed=args.seed, threads=args.threads)
        results_io.report(results_io.write(args.write_results, run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
