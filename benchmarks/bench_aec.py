"""AEC-loop throughput of majiang_env.env() next to PettingZoo's connect_four_v3.

The usual ``agent_iter()`` / ``last()`` / masked-random-action loop through the
wrapped environments, interleaved rounds in the same run (the loop is
``compare_peers.aec_loop``; ``compare_peers.py`` adds RiichiEnv, OpenSpiel and
pgx). Prints decisions/s (steps with a live agent) and the ratio.

    python benchmarks/bench_aec.py [--seconds 6] [--rounds 3] [--seed 0]
"""
import argparse

from compare_peers import aec_loop, connect_four


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="per environment, all rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import majiang_env
    loops = {"majiang_v1": aec_loop(majiang_env.env), "connect_four_v3": aec_loop(connect_four())}
    loops["majiang_v1"](0.0, 10 ** 6)  # warm-up: numba compile / cache load
    best = {}
    for r in range(args.rounds):
        for name, run in loops.items():
            d, games, dt, _ = run(args.seconds / args.rounds, args.seed + 1000 * r)
            best[name] = max(best.get(name, (0,)), (d / dt, d, games))
    print(f"{'env':<16} {'games':>7} {'decisions':>10} {'decisions/s':>12}   (best of {args.rounds} rounds)")
    for name, (rate, d, games) in best.items():
        print(f"{name:<16} {games:>7} {d:>10} {rate:>12,.0f}")
    print(f"ratio majiang / connect_four: {best['majiang_v1'][0] / best['connect_four_v3'][0]:.2f}x")


if __name__ == "__main__":
    main()
