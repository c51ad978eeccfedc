"""Results files: what a benchmark measured, with the machine, date, commit and load it ran under.

Every script whose figures are published in README.md, docs/ or research/README.md takes
``--write-results [PATH]``: the run is then written to ``benchmarks/results/<name>.json``
(``research/results/<name>.json`` for the research scripts), or to PATH. A file holds
runs; each run is

    {"command": "python benchmarks/...", "machine": {"cpu": "...", "cores": 2},
     "date": "2026-12-07 10:00 UTC", "commit": "1c5895c", "load_average": [1.1, 1.3, 1.2],
     "rows": [{"row": "<name>", ...figures...}, ...], ...}

and writing a run replaces the rows of the same names (and the same ``variant``, a setting
of the run or of the row such as the threading layer) in the runs already there, so a partial run
(``--only``) updates its rows and keeps the others. ``python benchmarks/render_docs.py``
then renders the tables of the docs from these files. Figures carried over from before
the results files existed have ``"date": "unknown"`` and ``"commit": "unknown"`` where
they were not recorded, and ``"recorded_in"``: the commit that first published them.
"""
from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RESEARCH_RESULTS = ROOT / "research" / "results"
FORMAT = "majiang-results/1"
META = ("command", "machine", "date", "commit", "load_average")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit() -> str:
    """The checked-out commit (short hash), marked when the working tree has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} (with uncommitted changes)" if dirty else head


def command_line(argv=None, script=None) -> str:
    """The command as typed: ``python <script relative to the repository> <args>``."""
    script = Path(script or sys.argv[0]).resolve()
    try:
        shown = script.relative_to(ROOT).as_posix()
    except ValueError:
        shown = script.name
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", shown] + [shlex.quote(a) for a in args])


def run_record(command: str, rows: list, load_average=None, **extra) -> dict:
    """One run: the metadata of this process's machine, now, and ``rows`` (each a dict with a
    unique ``"row"`` name). ``load_average``: default the 1, 5 and 15 minute load now."""
    if load_average is None:
        load_average = [round(x, 2) for x in os.getloadavg()]
    for r in rows:
        if "row" not in r:
            raise ValueError(f"a results row needs a 'row' name: {r}")
    return {"command": command, "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
            "load_average": load_average, **extra, "rows": rows}


def resolve(dest, results_dir: Path = RESULTS) -> Path:
    """A results name (``peers``) or a path (anything with a ``/`` or ending in ``.json``)."""
    dest = str(dest)
    if "/" in dest or dest.endswith(".json"):
        return Path(dest)
    return results_dir / f"{dest}.json"


def load(path) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    return data


def _key(run, row):
    return row.get("variant", run.get("variant", "")), row["row"]


def write(dest, runs, results_dir: Path = RESULTS) -> Path:
    """Add ``runs`` (one run dict or a list) to the results file ``dest``; rows of the
    runs already there with the same ``(variant, row)`` are dropped (and runs left empty)."""
    runs = [runs] if isinstance(runs, dict) else list(runs)
    path = resolve(dest, results_dir)
    data = load(path) if path.exists() else {"format": FORMAT, "runs": []}
    new = {_key(run, r) for run in runs for r in run["rows"]}
    kept = []
    for run in data["runs"]:
        rows = [r for r in run["rows"] if _key(run, r) not in new]
        if rows:
            kept.append({**run, "rows": rows})
    data["runs"] = kept + runs
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def add_argument(ap, name: str, results_dir: Path = RESULTS):
    """``--write-results [PATH]``: without PATH, ``<results_dir>/<name>.json``."""
    default = results_dir / f"{name}.json"
    ap.add_argument("--write-results", nargs="?", const=str(default), default=None, metavar="PATH",
                    help=f"write this run to a results file (default {default.relative_to(ROOT).as_posix()}; "
                         "rows of the same names there are replaced); benchmarks/render_docs.py renders the docs "
                         "from it")


def report(path) -> None:
    try:
        shown = Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        shown = str(path)
    print(f"wrote {shown} (python benchmarks/render_docs.py re-renders the docs)")
