"""Render the measured figures of the docs from the results files.

    python benchmarks/render_docs.py            # rewrite the marked blocks of README.md, docs/*.md, research/README.md
    python benchmarks/render_docs.py --check    # exit 1, naming the files, if a block differs from its results

A block of a Markdown file is the text between ``<!-- results:NAME -->`` and
``<!-- /results:NAME -->``; this script replaces it with the rendering of NAME
(``BLOCKS``) from ``benchmarks/results/*.json`` and ``research/results/*.json``
(``benchmarks/results_io.py`` describes them; the benchmark scripts write them
with ``--write-results``). Every table ends with the command, machine, date,
commit and load average of the runs behind it. Nothing outside the blocks is
touched; tests/docs/test_figures.py fails when a block differs from what this
script renders.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import results_io  # noqa: E402

ROOT = results_io.ROOT
BLOCK = re.compile(r"(<!-- results:([\w-]+) -->\n)(.*?)(<!-- /results:\2 -->)", re.S)
MINUS = "\u2212"


def doc_files(root: Path = ROOT) -> list:
    return [p for p in [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "research" / "README.md"]
            if p.is_file()]


def load_results(root: Path = ROOT) -> dict:
    out = {}
    for folder in (root / "benchmarks" / "results", root / "research" / "results"):
        for p in sorted(folder.glob("*.json")):
            out[p.stem] = results_io.load(p)
    return out


# ---- formatting -------------------------------------------------------------------------------------------------

def sig(x: float) -> str:
    """A rate to 3 significant digits with a unit: 15.3 M, 2.08 M, 938 k, 34.3 k, 950."""
    for div, unit in ((1e6, " M"), (1e3, " k")):
        if abs(x) >= div:
            v = x / div
            return f"{v:.{max(0, 2 - len(str(int(abs(v)))) + 1)}f}{unit}"
    return f"{x:.0f}"


def signed(x: float, digits: int) -> str:
    s = f"{x:+.{digits}f}"
    return s.replace("-", MINUS)


def plain(x: float, digits: int) -> str:
    return f"{x:.{digits}f}".replace("-", MINUS)


def ci(d, digits=2, scale=1.0, sign=True, unit="") -> str:
    """``+1.11 [+0.54, +1.67]`` (``sign``) or ``50.0% [49.6, 50.3]`` (rates: ``scale=100, unit="%"``)."""
    f = (lambda v: signed(v * scale, digits)) if sign else (lambda v: plain(v * scale, digits))
    if d.get("ci") is None:
        return f(d["mean"]) + unit
    return f"{f(d['mean'])}{unit} [{f(d['ci'][0])}, {f(d['ci'][1])}]"


def pct(d) -> str:
    return ci(d, 1, 100, False, "%")


def ratio(x, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits (all the digits of the whole part), with a ×; None: a dash."""
    if x is None:
        return "—"
    return f"{x:.0f}×" if x >= 10 ** (digits - 1) else f"{x:.{digits}g}×"


def ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.3g}"


def load_text(load) -> str:
    if isinstance(load, dict):
        def label(k):
            n = k.split()[0]
            return "idle" if n == "0" else f"with {n} busy process" + ("es" if n != "1" else "")
        return ", ".join(f"{v:g} {label(k)}" for k, v in load.items())
    if isinstance(load, list):
        return " / ".join(f"{v:.2f}" for v in load) + " (1, 5, 15 minutes, at the end)"
    return str(load)


def meta(run) -> str:
    m = run["machine"]
    if run["date"] == "unknown" and run["commit"] == "unknown" and "recorded_in" in run:
        first = run["recorded_in"]
        when = f"date and commit not recorded (first published in commit {first['commit']} on {first['date']})"
    else:
        when = f"date {run['date']}, commit {run['commit']}"
    where = (f"a {m['cores']}-core machine (CPU not recorded)" if m["cpu"] in ("not recorded", "unknown")
             else f"{m['cpu']}, {m['cores']} cores")
    text = f"`{run['command']}` on {where}; {when}; load average {load_text(run['load_average'])}"
    return text + (f"; {run['note']}" if run.get("note") else "") + "."


def sources(runs) -> tuple[dict, str]:
    """({id(run): tag}, the source lines): one line per distinct run description, tagged (a), (b)... when
    there are several."""
    lines, tags = [], {}
    for run in runs:
        text = meta(run)
        if text not in lines:
            lines.append(text)
        tags[id(run)] = lines.index(text)
    if len(lines) == 1:
        return {k: "" for k in tags}, f"Measured by {lines[0]}"
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ({k: f"({letters[v]})" for k, v in tags.items()},
            "Measured by:\n\n" + "\n".join(f"- ({letters[i]}) {t}" for i, t in enumerate(lines)))


def table(head, rows) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def all_rows(data, keep=lambda run, row: True):
    return [(run, row) for run in data["runs"] for row in run["rows"] if keep(run, row)]


# ---- labels -----------------------------------------------------------------------------------------------------

def face(name: str) -> str:
    m = re.match(r"seat/(\w+)/(\w+)(\+kernel)? B=(\d+)", name)
    if m:
        opp, obs, kernel, b = m.groups()
        return (f"`SeatVectorEnv({b})`, {opp} opponents, {obs} obs, "
                + ("actions sampled in the kernel" if kernel else "numpy learner"))
    m = re.match(r"single/(\w+)", name)
    if m:
        return f"`SingleAgentEnv`, {m.group(1)} opponents"
    m = re.match(r"(vector/numpy|vector/kernel|selfplay) B=(\d+)", name)
    if m:
        kind, b = m.groups()
        return {"vector/numpy": f"`VectorGame({b}).step`, numpy policy",
                "vector/kernel": f"`VectorGame({b}).sample_step`, sampled in the kernel",
                "selfplay": f"`selfplay` (B={b}, random agents)"}[kind]
    return {"aec": "`env()` AEC loop, four seats", "game": "`Game` Python loop, random legal actions"}.get(name, name)


def busy_header(key: str) -> str:
    n = key.split()[0]
    return f"{n} busy process" + ("es" if n != "1" else "") + " (share of idle)"


# ---- blocks: throughput ------------------------------------------------------------------------------------------

def faces(R, rel):
    pairs = all_rows(R["fastpath"]) + all_rows(R["game"])
    busy = list(dict.fromkeys(k for _, r in pairs for k in r.get("rates", {}) if not k.startswith("0 ")))
    tags, src = sources([run for run, _ in pairs])
    head = ["face", "unit", "idle"] + [busy_header(k) for k in busy] + (["run"] if any(tags.values()) else [])
    rows = []
    for run, r in pairs:
        rates = r.get("rates", {"0 busy": r.get("decisions_per_s")})
        idle = rates["0 busy"]
        cells = [face(r["row"]), r.get("unit", "decisions/s"), sig(idle)]
        cells += [f"{sig(rates[k])} ({rates[k] / idle:.0%})" if k in rates else "—" for k in busy]
        rows.append(cells + ([tags[id(run)]] if any(tags.values()) else []))
    return table(head, rows) + "\n\n" + src


def obs_types(R, rel):
    """SeatVectorEnv learner steps/s per obs_type (benchmarks/bench_obs.py): a row per opponents, B and load."""
    pairs = all_rows(R["obs"])
    rates = {r["row"]: r["rates"] for _, r in pairs}
    loads = list(dict.fromkeys(k for r in rates.values() for k in r))
    kinds = ("compact", "float", "features")
    seats = list(dict.fromkeys((m.group(1), m.group(2)) for name in rates
                               for m in [re.match(r"seat/(\w+)/\w+ B=(\d+)", name)] if m))
    head = ["opponents", "B", "load"] + [f"`{k}`" for k in kinds] + ["`float` ÷ `features`"]
    rows = []
    for load in loads:
        label = "idle" if load.startswith("0 ") else busy_header(load).replace(" (share of idle)", "")
        for opp, b in seats:
            v = {k: rates.get(f"seat/{opp}/{k} B={b}", {}).get(load) for k in kinds}
            rows.append([opp, f"{int(b):,}", label] + [sig(v[k]) if v[k] else "—" for k in kinds]
                        + [ratio(v["float"] / v["features"]) if v["float"] and v["features"] else "—"])
    text = table(head, rows)
    enc = [(k, rates.get(f"encode/{k}")) for k in ("float", "features")]
    if all(r for _, r in enc):
        text += ("\n\nThe encoders alone on recorded learner views (`FloatEncoder.batch`, `FeatureEncoder.batch`, "
                 "one thread): " + ", ".join(f"`{k}` {sig(r[loads[0]])} rows/s" for k, r in enc)
                 + (" idle" if loads[0].startswith("0 ") else "") + ".")
    return text + "\n\n" + sources([run for run, _ in pairs])[1]


def batch(R, rel):
    pairs = all_rows(R["vector"], lambda run, r: not r["row"].startswith("memory"))
    mem = all_rows(R["vector"], lambda run, r: r["row"].startswith("memory"))
    extra = [("bytes_per_game", "bytes per game", lambda v: f"{v:,}"), ("peak_mib", "peak MiB", lambda v: f"{v:,}")]
    extra = [e for e in extra if any(e[0] in r for _, r in pairs)]
    head = ["B", "`selfplay` decisions/s", "`VectorGame.step` + numpy policy, decisions/s",
            "the `step` call alone"] + [e[1] for e in extra]
    rows = [[f"{r['B']:,}", sig(r["selfplay"]), sig(r["step"]), sig(r["step_kernel"])]
            + [e[2](r[e[0]]) if e[0] in r else "—" for e in extra] for _, r in pairs]
    _, src = sources([run for run, _ in pairs + mem])
    text = table(head, rows)
    for _, r in mem:
        text += (f"\n\n`VectorGame({r['B']:,})`: {r['bytes_per_game']:,} bytes of state and outputs per game, "
                 f"{r['B'] * r['bytes_per_game'] / 2 ** 30:.2f} GiB, peak {r['peak_mib']:,} MiB while stepping.")
    return text + "\n\n" + src


def threading(R, rel):
    runs = R["threading"]["runs"]
    names = list(dict.fromkeys(r["row"] for run in runs for r in run["rows"]))
    layers = [run["variant"].split(",")[0] for run in runs]
    head = ["row"] + [f"{layer}: idle → 1 busy process (share)" for layer in layers]
    rows = []
    for name in names:
        cells = [face(name)]
        for run in runs:
            r = next((r for r in run["rows"] if r["row"] == name), None)
            if r is None:
                cells.append("—")
                continue
            a, b = r["rates"]["0 busy"], r["rates"].get("1 busy")
            cells.append(f"{sig(a)} → {sig(b)} ({b / a:.0%})" if b is not None else sig(a))
        rows.append(cells)
    return table(head, rows) + "\n\n" + sources(runs)[1]


def _peers_runs(R):
    runs = R["peers"]["runs"]
    for run in runs:
        run["_by"] = {r["row"]: r for r in run["rows"]}
    return runs


def _rate(run, key):
    r = run["_by"].get(key)
    return None if r is None or "decisions_per_s" not in r else r["decisions_per_s"]


def peers(R, rel):
    runs = _peers_runs(R)
    keys = list(dict.fromkeys(r["row"] for run in runs for r in run["rows"] if "decisions_per_s" in r))
    missing = list(dict.fromkeys(r["name"] for run in runs for r in run["rows"] if "error" in r))
    n = len(runs)
    head = ["kind", "environment and loop", "decisions/s" + (f" (runs {' / '.join(map(str, range(1, n + 1)))})"
                                                             if n > 1 else ""), "majiang / RiichiEnv"]
    rows = []
    for key in keys:
        r = next(run["_by"][key] for run in runs if key in run["_by"])
        name = re.sub(r" \((a|b|b'|c)\)$", "", r["name"])
        if r.get("version") and not r["majiang"]:      # the version after the peer's name
            first, _, rest = name.partition(" ")
            name = f"{first} {r['version']} {rest}".strip()
        rates = [_rate(run, key) for run in runs]
        cell = " / ".join(f"{x:,.0f}" if x else "—" for x in rates)
        riichi = [_rate(run, "riichienv") for run in runs]
        if key == "riichienv":
            rel_cell = "reference"
        elif r["majiang"]:
            rel_cell = " / ".join(ratio(x / y) if x and y else "—" for x, y in zip(rates, riichi, strict=True))
        else:
            ref_key = "majiang/aec" if r["kind"] == "single-env loop" else next(
                (k for k in keys if k.startswith("majiang/vector/numpy")), None)
            refs = [_rate(run, ref_key) if ref_key else None for run in runs]
            what = "`env()`" if ref_key == "majiang/aec" else "`VectorGame.step`"
            rel_cell = (f"(majiang {what} / this: "
                        + " / ".join(ratio(x / y) if x and y else "—" for x, y in zip(refs, rates, strict=True)) + ")")
        rows.append([r["kind"], name, cell, rel_cell])
    text = table(head, rows)
    if missing:
        text += "\n\nNot installed in these runs: " + ", ".join(missing) + "."
    return text + "\n\n" + sources(runs)[1]


def _median_ratio(runs, key, ref):
    """(median of ``key``'s rate over the runs, median of its ratio to ``ref`` in the runs that have both)."""
    values = [_rate(run, key) for run in runs]
    values = [v for v in values if v]
    pairs = [(_rate(run, key), _rate(run, ref)) for run in runs]
    ratios = [a / b for a, b in pairs if a and b]
    return (statistics.median(values) if values else None), (statistics.median(ratios) if ratios else None)


def headline(R, rel):
    runs = _peers_runs(R)
    riichi = next((run["_by"]["riichienv"] for run in runs if _rate(run, "riichienv")), None)
    rname = f"RiichiEnv {riichi.get('version', '')} (4p, 1 kyoku)".replace("  ", " ") if riichi else "RiichiEnv"

    def best(prefix):
        keys = {r["row"] for run in runs for r in run["rows"] if r["row"].startswith(prefix) and "decisions_per_s" in r}
        return max(keys, key=lambda k: statistics.median(_rate(run, k) or 0 for run in runs))
    aec, r1 = _median_ratio(runs, "majiang/aec", "riichienv")
    _, r2 = _median_ratio(runs, "majiang/aec", "connect_four")
    kv, r3 = _median_ratio(runs, best("majiang/vector/kernel"), "riichienv")
    sb = best("majiang/selfplay")
    sp, r4 = _median_ratio(runs, sb, "riichienv")
    fp = R["fastpath"]["runs"]
    fp_rows = {r["row"]: (run, r) for run in fp for r in run["rows"]}
    seat = next(k for k in fp_rows if k.startswith("seat/greedy/compact B="))
    srun, sr = fp_rows[seat]
    single = fp_rows["single/greedy"][1]
    b = seat.split("B=")[1]
    def sig_(x):
        return "—" if x is None else sig(x)
    rows = [["`env()` AEC loop", sig_(aec), f"{rname} / PettingZoo connect_four_v3",
             f"{ratio(r1, 2)} / {ratio(r2, 2)}"],
            [f"`VectorGame({b}).sample_step`, sampling in the kernel", sig_(kv), "RiichiEnv", ratio(r3, 2)],
            [f"`selfplay` ({sb.split()[-1]})", sig_(sp), "RiichiEnv", ratio(r4, 2)],
            [f"`SeatVectorEnv({b})`, 3 greedy opponents in the kernel", sig(sr["rates"]["0 busy"]) + " learner steps/s",
             "`SingleAgentEnv` with greedy opponents", ratio(sr["rates"]["0 busy"] / single["rates"]["0 busy"], 2)]]
    machines = list(dict.fromkeys(f"{r['machine']['cpu']}, {r['machine']['cores']} cores" for r in runs + [srun]))
    perf = rel("docs/performance.md")
    return (table(["majiang loop", "decisions/s", "against", "ratio"], rows)
            + f"\n\nRows 1–3: medians of {len(runs)} runs of `benchmarks/compare_peers.py` (the same random-legal "
              "loop for every environment; each ratio taken within a run); row 4: one idle run of "
              f"`benchmarks/bench_fastpath.py`. Measured on {' and '.join(machines)}; the commands, dates, commits "
              f"and load averages are under the tables of [performance.md]({perf}#how-does-it-compare-with-other-"
              "environments).")


def cold(R, rel):
    (run,) = R["cold"]["runs"]
    rows = [[r["row"], plain(r["empty_cache_s"], 1), plain(r["cached_s"], 1)] for r in run["rows"]]
    total = run.get("total") or {k: sum(r[k] for r in run["rows"]) for k in ("empty_cache_s", "cached_s")}
    rows.append(["all", plain(total["empty_cache_s"], 1), plain(total["cached_s"], 1)])
    return table(["stage (in this order, in one process)", "empty cache (s)", "cached (s)"], rows) + "\n\n" + \
        sources([run])[1]


def cold_summary(R, rel):
    (run,) = R["cold"]["runs"]
    st = run["rows"]
    training = [r for r in st if "search" not in r["row"]]
    total = run.get("total") or {k: sum(r[k] for r in st) for k in ("empty_cache_s", "cached_s")}
    return (f"On an empty cache: {plain(st[0]['empty_cache_s'], 1)} s before the first move, "
            f"{plain(st[1]['empty_cache_s'], 1)} s more before the first `selfplay`, and "
            f"{plain(sum(r['empty_cache_s'] for r in training), 1)} s in all before a training run's first step "
            f"(every stage of `benchmarks/bench_cold.py` but the search agent's; "
            f"{plain(total['empty_cache_s'], 1)} s with it). With the cache, {plain(total['cached_s'], 1)} s for "
            f"all stages. Measured by `{run['command']}` on {run['machine']['cpu']}, {run['machine']['cores']} "
            f"cores ([performance.md]({rel('docs/performance.md')}#what-does-a-cold-start-cost)).")


# ---- blocks: training --------------------------------------------------------------------------------------------

def training(R, rel):
    (run,) = R["ppo_run"]["runs"]
    by = {r["row"]: r for r in run["rows"]}
    t, u = by["training"], by["update"]
    rows = [["training", f"{t['seconds']} s, {t['updates']:,} PPO updates, {t['decisions']:,} decisions: "
                         f"**{t['decisions_per_s']:,} decisions/s** end to end (evaluation pauses excluded)"],
            [f"one update ({u['decisions']:,} decisions)",
             f"rollout {u['rollout_s']:.2f} s, PPO update {u['update_s']:.2f} s on average (10th–90th percentile "
             f"{u['rollout_s_p10_p90'][0]:.2f}–{u['rollout_s_p10_p90'][1]:.2f} s and "
             f"{u['update_s_p10_p90'][0]:.2f}–{u['update_s_p10_p90'][1]:.2f} s)"]]
    for key, who in (("vs random", "`RandomAgent`s"), ("vs greedy", "`GreedyAgent`s")):
        r = by[key]
        rows.append([f"against 3 {who} ({r['hands']:,} hands)",
                     f"wins {r['win_rate']:.2%} of its hands; a `{r['same_seat']}` in its seat wins "
                     f"{r['same_seat_win_rate']:.2%}"])
    return table(["measure", "figure"], rows) + "\n\n" + sources([run])[1]


PPO_LABELS = {"default": "default (1,024 games × 32, 1 epoch, 2 + 2 threads, bfloat16 where the CPU has it)",
              "fp32": '`precision="fp32"`', "1 thread": "`threads=1, numba_threads=1`",
              "256 games": "256 games × 128", "old defaults": "256 games × 128, 3 epochs, 1 + 1 threads, float32"}


def ppo_bench(R, rel):
    (run,) = R["ppo"]["runs"]
    busy = list(dict.fromkeys(k for r in run["rows"] for k in r["decisions_per_s"] if not k.startswith("0 ")))
    head = ["`PPOConfig`", "idle, decisions/s", "rollout / update alone"] + [busy_header(k) for k in busy]
    rows = []
    for r in run["rows"]:
        d, ro, up = r["decisions_per_s"], r["rollout_per_s"], r["update_per_s"]
        idle = d["0 busy"]
        rows.append([PPO_LABELS.get(r["row"], r["row"]), f"{idle:,.0f}",
                     f"{ro['0 busy']:,.0f} / {up['0 busy']:,.0f}" if "0 busy" in ro else "—"]
                    + [f"{d[k]:,.0f} ({d[k] / idle:.0%})" if k in d else "—" for k in busy])
    return table(head, rows) + "\n\n" + sources([run])[1]


def sb3(R, rel):
    pairs = all_rows(R["trainers"])
    tags, src = sources([run for run, _ in pairs])
    rows, last = [], None
    for run, r in pairs:
        rows.append([r["setting"] if r["setting"] != last else "", f"`{r['env']}`", f"{r['end_to_end']:,.0f}",
                     f"{r['rollout']:,.0f}", f"{r['env_share']:.0%}"] + ([tags[id(run)]] if any(tags.values()) else []))
        last = r["setting"]
    head = ["setting", "env", "end-to-end steps/s", "rollout steps/s", "env share of rollouts"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def ray(R, rel):
    (run,) = R["ray"]["runs"]
    rows = []
    for r in run["rows"]:
        what = r["run"]
        if r["what"] == "rollouts" and r["workers"] == "-":
            what = f"rollouts in one process ({run.get('streams', '?')} streams × {run.get('envs', '?')} games)"
        elif r["what"] == "rollouts":
            what = "`RolloutCollector` (observations shipped to the driver)"
        elif r["workers"] == "-":
            what = "`selfplay` in one process"
        else:
            what = "`SelfplayPool`"
        w = 1 if r["workers"] == "-" else r["workers"]
        rows.append([what, f"{w} × {r['threads']}", f"{r['decisions_per_s']:,.0f}"])
    return table(["run", "workers × numba threads", "decisions/s"], rows) + "\n\n" + sources([run])[1]


# ---- blocks: strength --------------------------------------------------------------------------------------------

def _agent_label(r):
    if r["row"] == "pretrained":
        return "pretrained (the shipped policy)"
    if r["spec"] == "search":
        return "search (default parameters)"
    if r["spec"].startswith("search:"):
        return f"{r['row']} (`{r['spec']}`)"
    return r["row"]


def ladder(R, rel):
    pairs = sorted(all_rows(R["ladder"]), key=lambda p: -p[1]["points_per_hand"]["mean"])
    tags, src = sources([run for run, _ in pairs])
    rows = []
    for run, r in pairs:
        pts = r["points_per_hand"]
        pcell = "0 (by symmetry)" if r["row"] == "greedy" and pts["mean"] == 0 else ci(pts, 2)
        rows.append([_agent_label(r), f"{r['deals']:,}", pcell, ci(r["win_rate"], 1, 100, False),
                     ci(r["deal_in_rate"], 1, 100, False), ms(r["ms_per_decision"])]
                    + ([tags[id(run)]] if any(tags.values()) else []))
    head = ["agent in one seat, three greedy seats", "deals × 4 rotations", "points/hand [95% CI]",
            "win % of hands [95% CI]", "deal-in % [95% CI]", "ms/decision"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def ismcts(R, rel):
    pairs = sorted(all_rows(R["ismcts"]), key=lambda p: (0, p[1]["simulations"]) if "simulations" in p[1]
                   else (1, ["search", "greedy"].index(p[1]["row"]) if p[1]["row"] in ("search", "greedy") else 2))
    tags, src = sources([run for run, _ in pairs])
    rows = []
    for run, r in pairs:
        pts = r["points_per_hand"]
        pcell = "0 (by symmetry)" if r["row"] == "greedy" and pts["mean"] == 0 else ci(pts, 1)
        rows.append([r["row"], f"{r['deals']:,}", f"{r['hands_per_game']}", pcell, ci(r["win_rate"], 1, 100, False),
                     ci(r["deal_in_rate"], 1, 100, False), ms(r["ms_per_decision"]),
                     f"{r['seconds']:,.0f} s ({r['cpu_seconds']:,.0f} s CPU)"]
                    + ([tags[id(run)]] if any(tags.values()) else []))
    head = ["agent in one seat, three greedy seats", "deals × 4 rotations", "hands per game", "points/hand [95% CI]",
            "win % of hands [95% CI]", "deal-in % [95% CI]", "ms/decision", "row's wall time"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def _figures(figs) -> str:
    out = []
    for f in figs:
        parts = []
        if "points_per_hand" in f:
            parts.append(f"{ci(f['points_per_hand'], 1)} points/hand")
        if "win_rate" in f:
            parts.append(f"win {pct(f['win_rate'])}")
        if "deal_in_rate" in f:
            parts.append(f"deal-in {pct(f['deal_in_rate'])}")
        if "gain" in f:
            parts.append(f"gain {ci(f['gain'], 1)}")
        out.append(f"{f['agent']}: " + ", ".join(parts))
    return "; ".join(out)


def arena_table(R, rel):
    pairs = all_rows(R["arena"])
    tags, src = sources([run for run, _ in pairs])
    rows = [[f"`{r['row']}`", f"{r['games']:,}", f"{r['decisions']:,}", f"{r['seconds']:.1f} s",
             f"{r['cpu_seconds']:.1f} s", _figures(r["figures"])] + ([tags[id(run)]] if any(tags.values()) else [])
            for run, r in pairs]
    head = ["`benchmarks/arena.py`", "games", "decisions", "wall", "CPU", "figures (95% CI over deals)"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def _greedy_vs_random(R):
    for run, r in all_rows(R["arena"]):
        if r["row"].startswith("--agents greedy random random random"):
            return run, r, next(f for f in r["figures"] if f["agent"] == "greedy")
    raise KeyError("arena.json has no --agents greedy random random random row")


def _shipped_run(R):
    """The run of majiang_env.training.recipe that trained the shipped policy (the one without a variant)."""
    (run,) = [r for r in R["train_strong"]["runs"] if not r.get("variant")]
    return run


def curve(R, rel):
    run = _shipped_run(R)
    pts = [r for r in run["rows"] if r["row"] != "final"]
    deals = pts[0]["deals"]
    rows = [[r["row"], f"{r['train_minutes']:.1f}", f"{r['decisions']:,}", ci(r["points_per_hand"], 2)] for r in pts]
    return table(["curve point", "training minutes", "learner decisions",
                  f"points/hand vs greedy, {deals} deals × 4 [95% CI]"], rows) + "\n\n" + sources([run])[1]


def final(R, rel):
    run = _shipped_run(R)
    f = next(r for r in run["rows"] if r["row"] == "final")
    at = next(r for r in run["rows"] if r["row"] == f["checkpoint"])
    return (f"Final evaluation: the checkpoint \"{f['checkpoint']}\" ({at['train_minutes']:.1f} minutes into "
            f"training), on {f['deals']:,} fresh deals × {f['rotations']} rotations (seed {f['seed']}), makes "
            f"**{ci(f['points_per_hand'], 2)}** points per hand against three greedy seats. It wins "
            f"{pct(f['win_rate'])} of its hands and deals in on {pct(f['deal_in_rate'])}; a greedy seat of the "
            f"same deals wins {pct(f['greedy_win_rate'])} and deals in on {pct(f['greedy_deal_in_rate'])}. "
            f"Training took {run['train_seconds'] / 60:.1f} minutes "
            f"of wall time, the final evaluation {f['seconds']:.0f} s. {sources([run])[1]}")


def curves(R, rel):
    """Every recorded train_strong run side by side: method, start and best curve points, the final figure."""
    runs = sorted(R["train_strong"]["runs"], key=lambda r: bool(r.get("variant")))
    rows = []
    for run in runs:
        pts = [r for r in run["rows"] if r["row"] != "final"]
        best = max(pts, key=lambda r: r["points_per_hand"]["mean"])
        f = next(r for r in run["rows"] if r["row"] == "final")
        rows.append([run.get("variant") or "clone greedy, then PPO (shipped)", f"`{run['command']}`",
                     f"{ci(pts[0]['points_per_hand'], 2)} ({pts[0]['row']})",
                     f"{ci(best['points_per_hand'], 2)} ({best['row']}, {best['train_minutes']:.0f} min)",
                     f"{ci(pts[-1]['points_per_hand'], 2)} ({pts[-1]['train_minutes']:.0f} min)",
                     f"{ci(f['points_per_hand'], 2)} ({f['deals']:,} deals)"])
    head = ["method", "command", "first curve point", "best curve point", "last curve point",
            "chosen checkpoint on fresh deals"]
    return table(head, rows) + "\n\n" + sources(runs)[1]


def head_to_head(R, rel):
    pairs = all_rows(R["head_to_head"])
    tags, src = sources([run for run, _ in pairs])
    rows = [[r["row"], f"{r['deals']:,}", ci(r["points_per_hand"], 2),
             ci(r["minus_shipped"], 2) if "minus_shipped" in r else ""]
            + ([tags[id(run)]] if any(tags.values()) else []) for run, r in pairs]
    head = ["lineup (each deal in 4 rotations)", "deals", "points/hand [95% CI]", "minus shipped, same deals"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def strength(R, rel):
    _, _, g = _greedy_vs_random(R)
    run = _shipped_run(R)
    f = next(r for r in run["rows"] if r["row"] == "final")
    perf = rel("docs/performance.md")
    return (f"Strength, on duplicate deals with 95% intervals over deals "
            f"([how strong are the agents]({perf}#how-strong-are-the-agents)): the greedy baseline makes "
            f"{ci(g['points_per_hand'], 1)} points per hand against three random seats; the shipped learned policy "
            f"(`\"pretrained\"`, {run['train_seconds'] / 60:.0f} minutes of training on {run['machine']['cores']} "
            f"cores) makes **{ci(f['points_per_hand'], 2)}** points per hand against three greedy seats over "
            f"{f['deals']:,} fresh deals.")


# ---- blocks: research --------------------------------------------------------------------------------------------

PLAYER_ORDER = ["oracle+1", "oracle", "hidden1", "hidden2", "hidden1+1", "hidden2+1", "tenpai-value", "latest",
                "search"]
PLAYER_NOTES = {"oracle+1": "reads the other hands", "oracle": "reads the other hands",
                "hidden1": "reads all but 1 card of each other hand", "hidden2": "reads all but 2 cards of each",
                "hidden1+1": "reads all but 1 card of each", "hidden2+1": "reads all but 2 cards of each"}
DEFAULT_VARIANTS = ("", "step risk 0.05", "search: defaults")


def paired(R, rel):
    pairs = [(run, r) for run, r in all_rows(R["paired_gain"]) if r.get("variant", "") in DEFAULT_VARIANTS]
    pairs.sort(key=lambda p: PLAYER_ORDER.index(p[1]["row"]) if p[1]["row"] in PLAYER_ORDER else 99)
    tags, src = sources([run for run, _ in pairs])
    rows = [[f"`{r['row']}`" + (f" ({PLAYER_NOTES[r['row']]})" if r["row"] in PLAYER_NOTES else ""),
             f"{r['deals']:,}", ci(r["gain"], 1)] + ([tags[id(run)]] if any(tags.values()) else [])
            for run, r in pairs]
    head = ["player, one seat against three greedy seats", "deals × 4 seats", "gain over greedy, points/hand [95% CI]"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


def paired_sweep(R, rel):
    pairs = [(run, r) for run, r in all_rows(R["paired_gain"]) if r["row"] in ("hidden1+1", "hidden2+1")]
    risks = sorted({float(r["variant"].split()[-1]) for _, r in pairs})
    cell = {(float(r["variant"].split()[-1]), r["row"]): ci(r["gain"], 1) for _, r in pairs}
    rows = [[f"{x:g}" + (" (the default)" if x == 0.05 else ""), cell.get((x, "hidden1+1"), "—"),
             cell.get((x, "hidden2+1"), "—")] for x in risks]
    return table(["`--step-risk` R", "`hidden1+1`", "`hidden2+1`"], rows) + "\n\n" + sources(
        [run for run, _ in pairs])[1]


def paired_greedy(R, rel):
    run = next(run for run in R["paired_gain"]["runs"] if "all_greedy" in run)
    g = run["all_greedy"]
    return (f"In the all-greedy games of `{run['command']}`, a greedy seat wins {g['win_rate']:.1%} of its hands, "
            f"at {g['points_per_win']:.1f} points a win, and pays {g['deal_in_points_per_hand']:.1f} points per hand "
            f"for deal-ins. Of its {g['discards_per_hand']:.1f} discards per hand, {g['could_be_won_on_per_hand']:.3f} "
            f"could be won on by a seat still playing, and {g['with_safe_alternative']:.0%} of those had a safe "
            f"alternative of the same deficiency.")


def search_params(R, rel):
    pairs = all_rows(R["bench_search"])
    tags, src = sources([run for run, _ in pairs])
    rows = [[f"`{r['row']}`", f"{r['deals']:,}", ci(r["gain"], 1),
             f"{r['ms_per_decision']:.1f}" if "ms_per_decision" in r else "—"]
            + ([tags[id(run)]] if any(tags.values()) else []) for run, r in pairs]
    head = ["search parameters", "deals × 4 rotations", "gain over greedy, points/hand [95% CI]",
            "ms per searched decision"]
    return table(head + (["run"] if any(tags.values()) else []), rows) + "\n\n" + src


BLOCKS = {"headline": headline, "strength": strength, "cold-summary": cold_summary, "faces": faces, "obs": obs_types,
          "batch": batch, "threading": threading, "peers": peers, "cold": cold, "training": training,
          "ppo-bench": ppo_bench, "sb3": sb3, "ray": ray, "ladder": ladder, "arena": arena_table, "curve": curve,
          "curves": curves, "head-to-head": head_to_head, "final": final, "paired": paired,
          "paired-sweep": paired_sweep, "paired-greedy": paired_greedy,
          "search-params": search_params, "ismcts": ismcts}


# ---- rendering ---------------------------------------------------------------------------------------------------

def render_text(text: str, results: dict, path: Path, root: Path = ROOT) -> str:
    """``text`` with every marked block replaced by its rendering (links relative to ``path``)."""
    def rel(name):
        return os.path.relpath(root / name, path.parent).replace(os.sep, "/")

    def sub(m):
        name = m.group(2)
        if name not in BLOCKS:
            raise KeyError(f"{path.name}: unknown results block {name!r} (known: {sorted(BLOCKS)})")
        return m.group(1) + BLOCKS[name](results, rel).rstrip("\n") + "\n" + m.group(4)
    return BLOCK.sub(sub, text)


def render_all(root: Path = ROOT) -> dict:
    """{path: (current text, rendered text)} of every Markdown file with results blocks."""
    results = load_results(root)
    out = {}
    for p in doc_files(root):
        text = p.read_text(encoding="utf-8")
        if BLOCK.search(text):
            out[p] = (text, render_text(text, results, p, root))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block differs")
    args = ap.parse_args(argv)
    stale = []
    for p, (old, new) in render_all().items():
        if old != new:
            stale.append(p.relative_to(ROOT).as_posix())
            if not args.check:
                p.write_text(new, encoding="utf-8")
    verb = "differ from the results files" if args.check else "rendered"
    print(f"{verb}: {', '.join(stale)}" if stale else "every results block is up to date")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
