"""Learning curves of ``majiang_env.training.recipe`` runs: record one, and draw them side by side.

    python benchmarks/record_curve.py runs/scratch/curve.json --variant "from scratch" --load "2.0-4.1"
    python benchmarks/record_curve.py --plot docs/learning_curves.png

The first form adds a run's curve points and its final evaluation (its
``curve.json``, written by ``python -m majiang_env.training.recipe``) to
``benchmarks/results/train_strong.json`` as the run of that ``--variant``
(the shipped policy's run has none; a run recorded again replaces its rows),
with the command that made it, the machine, date, commit and ``--load`` (the
load average the run saw; default: the range of the load averages its curve
points recorded). ``benchmarks/render_docs.py`` renders the tables from it.

``--plot PATH`` draws every recorded run on one set of axes: points per hand
against three greedy seats over training wall time, each curve point with its
95% interval over the same evaluation deals (the runs share the deals when they
share ``--seed`` and ``--eval-deals``), and each run's final evaluation on fresh
deals at the time of the checkpoint it chose. Needs matplotlib.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import results_io  # noqa: E402

NAME = "train_strong"


def _command(args: dict) -> str:
    """The ``python -m majiang_env.training.recipe`` command line of a run's recorded arguments."""
    from majiang_env.training.recipe import parser
    defaults = vars(parser().parse_args([]))
    parts = ["python -m majiang_env.training.recipe"]
    for k, v in args.items():
        if v is not None and defaults.get(k, None) != v:
            shown = int(v) if isinstance(v, float) and v.is_integer() else v
            parts.append(f"--{k.replace('_', '-')} {shlex.quote(str(shown))}")
    return " ".join(parts)


def _mean_ci(x):
    return {"mean": x["mean"], "ci": x["ci"]}


def record(curve_json, variant, load=None, dest=NAME):
    rep = json.loads(Path(curve_json).read_text())
    rows = [{"row": c["label"], "train_minutes": c["train_minutes"], "decisions": c["decisions"],
             "points_per_hand": {"mean": c["points"], "ci": [c["low"], c["high"]]}, "deals": rep["args"]["eval_deals"],
             "load1": c.get("load1")} for c in rep["curve"]]
    f, a = rep["final"], rep["final"]["arena"]
    me = next(x for x in a["results"] if x["agent"] == "policy")
    rows.append({"row": "final", "checkpoint": f["checkpoint"], "deals": f["deals"], "rotations": f["rotations"],
                 "seed": rep["args"]["seed"] + 2000,
                 "points_per_hand": {"mean": f["points"], "ci": [f["low"], f["high"]]},
                 "win_rate": _mean_ci(me["win_rate"]), "deal_in_rate": _mean_ci(me["deal_in_rate"]),
                 "seconds": f["seconds"]})
    if load is None:
        loads = [c["load1"] for c in rep["curve"] if c.get("load1") is not None]
        load = f"{min(loads):.1f}–{max(loads):.1f} at the curve points" if loads else None
    run = results_io.run_record(_command(rep["args"]), rows, load_average=load, variant=variant,
                                train_seconds=rep["train_seconds"], imitation=rep.get("imitation"))
    for r in rows:
        r["variant"] = variant
    return results_io.write(dest, run)


def plot(path, dest=NAME):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = results_io.load(results_io.resolve(dest))["runs"]
    fig, ax = plt.subplots(figsize=(7.2, 4.2), dpi=100)
    ax.axhline(0, color="grey", lw=1, label="GreedyAgent (0 by symmetry)")
    for run in runs:
        label = run.get("variant") or "clone greedy, then PPO (the shipped policy)"
        pts = [r for r in run["rows"] if r["row"] != "final"]
        t = [r["train_minutes"] for r in pts]
        m = [r["points_per_hand"]["mean"] for r in pts]
        lo = [r["points_per_hand"]["ci"][0] for r in pts]
        hi = [r["points_per_hand"]["ci"][1] for r in pts]
        (line,) = ax.plot(t, m, marker="o", ms=3, label=f"{label}: curve ({pts[0]['deals']} deals × 4)")
        ax.fill_between(t, lo, hi, alpha=0.15, color=line.get_color())
        final = next((r for r in run["rows"] if r["row"] == "final"), None)
        if final:
            at = next((r["train_minutes"] for r in pts if r["row"] == final["checkpoint"]), t[-1])
            fm, (flo, fhi) = final["points_per_hand"]["mean"], final["points_per_hand"]["ci"]
            ax.errorbar([at], [fm], yerr=[[fm - flo], [fhi - fm]], fmt="s", color=line.get_color(), capsize=4,
                        mec="black", label=f"{label}: chosen checkpoint, {final['deals']:,} fresh deals × 4")
    ax.set_xlabel("training wall time (minutes, 2 cores)")
    ax.set_ylabel("points per hand vs three greedy seats")
    ax.set_ylim(bottom=max(ax.get_ylim()[0], -20))
    ax.set_title("Learned policies against three GreedyAgents (95% intervals over deals)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python benchmarks/record_curve.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("curve", nargs="?", help="a run's curve.json (from python -m majiang_env.training.recipe)")
    ap.add_argument("--variant", default="", help="the run's name in the results (the shipped policy's run: none)")
    ap.add_argument("--load", default=None, help="the load average the run saw, as text")
    ap.add_argument("--plot", default=None, metavar="PNG", help="draw every recorded run's curve here")
    args = ap.parse_args(argv)
    if not args.curve and not args.plot:
        ap.error("give a curve.json to record, --plot PNG, or both")
    if args.curve:
        results_io.report(record(args.curve, args.variant, args.load))
    if args.plot:
        print(f"wrote {plot(args.plot)}")


if __name__ == "__main__":
    main()
