"""OpenSpiel's IS-MCTS in one seat against three greedy seats, on duplicate deals.

    python benchmarks/bench_ismcts.py                               # IS-MCTS at 25 and 100 simulations, 50 deals
    python benchmarks/bench_ismcts.py --sims 100 400 --deals 20 --write-results

Each row is one ``majiang_env.arena`` run of the lineup (agent, greedy, greedy,
greedy), every deal in the 4 rotations, ``--hands`` hands per game (default 1:
IS-MCTS decides in Python, a few tenths of a second a decision). The IS-MCTS
agent is ``majiang_env.agents.ismcts.ISMCTSAgent`` (OpenSpiel's Python
``ISMCTSBot`` over ``majiang_env.envs.openspiel``, greedy rollouts to the end of the
hand, ``--uct-c`` in points); the rows ``search`` (the in-kernel search agent,
default parameters) and ``greedy`` play the same deals for reference. Points
are zero-sum, so an agent's points per hand are its gain over greedy in the
same seats of the same deals; 95% intervals are Student t over deals.
``--write-results [PATH]`` writes the rows to ``benchmarks/results/ismcts.json``,
from which ``benchmarks/render_docs.py`` renders the table of docs/performance.md.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import results_io  # noqa: E402

from majiang_env import arena  # noqa: E402


def row(name, agent, spec, deals, seed, hands, **extra):
    """One row: the arena figures of ``agent`` against three greedy seats."""
    t = time.perf_counter()
    res = arena.run([agent, "greedy", "greedy", "greedy"], deals, seed=seed, rules={"hands_per_game": hands},
                    names=[name, "greedy", "greedy", "greedy"] if name != "greedy" else None, baseline=False)
    f = next(f for f in res.figures() if f["agent"] == name)
    print(f"{name}: {deals} deals in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    return {"row": name, "agent": name, "spec": spec, "deals": deals, "hands_per_game": hands,
            "points_per_hand": f["points_per_hand"], "win_rate": f["win_rate"], "deal_in_rate": f["deal_in_rate"],
            "decisions": f["decisions"], "ms_per_decision": 1000 * f["seconds_per_decision"],
            "seconds": round(res.seconds, 1), "cpu_seconds": round(res.cpu_seconds, 1), **extra}


def table(rows) -> str:
    def ci(d, scale=1.0, sign=True):
        fmt = "{:+.2f}" if sign else "{:.1f}"
        if d["ci"] is None:
            return fmt.format(d["mean"] * scale)
        return f"{fmt.format(d['mean'] * scale)} [{fmt.format(d['ci'][0] * scale)}, {fmt.format(d['ci'][1] * scale)}]"
    lines = ["| agent (vs 3 greedy) | deals x 4 | points/hand [95% CI] | win % [95% CI] | deal-in % [95% CI] | "
             "ms/decision |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['deals']:,} | {ci(r['points_per_hand'])} | {ci(r['win_rate'], 100, False)} "
                     f"| {ci(r['deal_in_rate'], 100, False)} | {r['ms_per_decision']:.3f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sims", type=int, nargs="+", default=[25, 100], help="IS-MCTS simulations per decision, "
                    "one row each (default 25 100)")
    ap.add_argument("--deals", type=int, default=50, help="deals per row (default 50)")
    ap.add_argument("--hands", type=int, default=1, choices=(1, 2, 3, 4), help="hands per game (default 1)")
    ap.add_argument("--uct-c", type=float, default=40.0, help="UCT exploration constant in points (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-reference", action="store_true", help="leave out the search and greedy rows")
    results_io.add_argument(ap, "ismcts")
    args = ap.parse_args(argv)
    try:
        from majiang_env.agents.ismcts import ISMCTSAgent
    except ImportError as e:
        ap.error(str(e))
    if args.deals < 1 or any(s < 1 for s in args.sims):
        ap.error("--deals and --sims must be >= 1")
    load0 = [round(x, 2) for x in os.getloadavg()]
    rules = {"hands_per_game": args.hands}    # warm-up: numba compiles (or loads) every kernel the rows use
    for lineup in [[ISMCTSAgent(args.seed, simulations=2)]] + ([] if args.no_reference else [["search"]]):
        arena.run(lineup + ["greedy"] * 3, 1, seed=args.seed + 1, rules=rules, baseline=False)
    out = []

    def save():                      # after every row, so a long run keeps what it measured
        if args.write_results:
            load = [round(x, 2) for x in os.getloadavg()]
            run = results_io.run_record(results_io.command_line(argv, __file__), out, load_average=load,
                                        seed=args.seed, note=f"load average {load0[0]:.2f} at the start "
                                        "(a machine shared with other jobs)")
            return results_io.write(args.write_results, run)

    for sims in args.sims:
        agent = ISMCTSAgent(args.seed, simulations=sims, uct_c=args.uct_c)
        out.append(row(f"IS-MCTS, {sims} simulations", agent, f"majiang_env.agents.ismcts:ISMCTSAgent "
                       f"(simulations={sims}, uct_c={args.uct_c:g})", args.deals, args.seed, args.hands,
                       simulations=sims, uct_c=args.uct_c))
        save()
    if not args.no_reference:
        for name in ("search", "greedy"):
            out.append(row(name, name, name, args.deals, args.seed, args.hands))
            save()
    print(table(out))
    load = os.getloadavg()
    print(f"\nmachine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"seed {args.seed}; {args.hands} hand(s) per game")
    if args.write_results:
        results_io.report(save())
    return 0


if __name__ == "__main__":
    sys.exit(main())
