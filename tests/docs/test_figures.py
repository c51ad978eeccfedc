"""The measured figures of the docs come from the results files.

- Every block between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` in README.md,
  docs/*.md and research/README.md is what ``benchmarks/render_docs.py`` renders from
  ``benchmarks/results/*.json`` and ``research/results/*.json`` (re-rendered here in memory).
- Every results file carries its metadata: command, machine (CPU, cores), date, commit, load
  average, and rows with unique names.
- The README's headline figures are all inside rendered blocks, and its numbers are the
  results files' (recomputed here independently of the renderer).
- Compile times have one source (``bench_cold``'s results file), and the pages meant for
  users speak of no sessions, issues or targets.
"""
import importlib.util
import json
import re
import shutil
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULT_DIRS = [ROOT / "benchmarks" / "results", ROOT / "research" / "results"]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rd = _load("render_docs")
rio = sys.modules.get("results_io") or _load("results_io")


def _strip_blocks(text):
    return rd.BLOCK.sub("", text)


def test_every_block_is_what_the_results_files_render():
    rendered = rd.render_all()
    assert {ROOT / "README.md", ROOT / "docs" / "performance.md", ROOT / "docs" / "guide.md",
            ROOT / "research" / "README.md"} <= set(rendered)
    for path, (old, new) in rendered.items():
        if old != new:
            o, n = old.splitlines(), new.splitlines()
            first = next(i for i, (a, b) in enumerate(zip(o + [""], n + [""], strict=False)) if a != b)
            pytest.fail(f"{path.relative_to(ROOT)} line {first + 1} differs from its results files; run "
                        f"`python benchmarks/render_docs.py`.\n  file:     {o[first] if first < len(o) else ''}\n"
                        f"  rendered: {n[first] if first < len(n) else ''}")


def test_every_block_name_is_known_and_every_results_file_is_used():
    used = set()
    for path in rd.doc_files():
        text = path.read_text(encoding="utf-8")
        opened = re.findall(r"<!-- results:([\w-]+) -->", text)
        closed = re.findall(r"<!-- /results:([\w-]+) -->", text)
        assert sorted(opened) == sorted(closed), f"{path}: unbalanced results markers"
        assert set(opened) <= set(rd.BLOCKS), f"{path}: unknown blocks {set(opened) - set(rd.BLOCKS)}"
        used |= set(opened)
    assert used == set(rd.BLOCKS), f"blocks rendered nowhere: {set(rd.BLOCKS) - used}"
    names = {p.stem for d in RESULT_DIRS for p in d.glob("*.json")}
    assert names == set(rd.load_results()), names


@pytest.mark.parametrize("path", sorted(p for d in RESULT_DIRS for p in d.glob("*.json")), ids=lambda p: p.name)
def test_results_files_carry_command_machine_date_commit_and_load(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == rio.FORMAT and data["runs"]
    for run in data["runs"]:
        for k in rio.META:
            assert k in run, f"{path.name}: a run without {k!r}"
        assert run["command"].startswith(("python ", "NUMBA_THREADING_LAYER=")), run["command"]
        assert set(run["machine"]) == {"cpu", "cores"} and run["machine"]["cpu"] and run["machine"]["cores"] >= 1
        if run["date"] == "unknown" or run["commit"] == "unknown":   # carried over: where it was first published
            assert re.fullmatch(r"[0-9a-f]{7}", run["recorded_in"]["commit"])
            assert re.fullmatch(r"\d{4}-\d\d-\d\d", run["recorded_in"]["date"])
        else:
            assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC$", run["date"]) and re.match(r"[0-9a-f]{7}", run["commit"])
        assert run["load_average"] not in (None, "", [], {})
        assert run["rows"], f"{path.name}: a run without rows"
        keys = set()                # repeated runs (compare_peers --repeat) measure the same rows
        for row in run["rows"]:
            key = rio._key(run, row)
            assert key not in keys, f"{path.name}: row {key} twice"
            keys.add(key)


def _section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def test_readme_headline_figures_come_from_the_results_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = _section(readme, "## Headline figures")
    assert "<!-- results:headline -->" in section and "<!-- results:strength -->" in section
    outside = _strip_blocks(section).replace("## Headline figures", "")
    assert not re.search(r"\d", outside), f"a figure outside the rendered blocks: {outside!r}"
    # the numbers, recomputed from the results files without the renderer (only its number format is shared)
    peers = json.loads((ROOT / "benchmarks/results/peers.json").read_text())["runs"]

    def rate(run, key):
        return next((r.get("decisions_per_s") for r in run["rows"] if r["row"] == key), None)

    def median_ratio(key, ref):
        return statistics.median(rate(run, key) / rate(run, ref) for run in peers)
    lines = section.splitlines()

    def row(start):
        return next(line for line in lines if line.startswith(start))
    sp = statistics.median(rate(run, "majiang/selfplay B=1024") for run in peers)
    assert rd.sig(sp) in row("| `selfplay`")
    assert rd.ratio(median_ratio("majiang/selfplay B=1024", "riichienv"), 2) in row("| `selfplay`")
    assert rd.ratio(median_ratio("majiang/aec", "riichienv"), 2) in row("| `env()`")
    assert rd.ratio(median_ratio("majiang/aec", "connect_four"), 2) in row("| `env()`")
    kernel = "majiang/vector/kernel B=1024 threads=2"
    assert rd.ratio(median_ratio(kernel, "riichienv"), 2) in row("| `VectorGame")
    fast = {r["row"]: r for r in json.loads((ROOT / "benchmarks/results/fastpath.json").read_text())["runs"][0]["rows"]}
    seat, single = fast["seat/greedy/compact B=1024"]["rates"]["0 busy"], fast["single/greedy"]["rates"]["0 busy"]
    assert rd.sig(seat) in row("| `SeatVectorEnv") and rd.ratio(seat / single, 2) in row("| `SeatVectorEnv")
    final = next(r for r in rd._shipped_run(rd.load_results(ROOT))["rows"] if r["row"] == "final")
    assert f"**{rd.ci(final['points_per_hand'], 2)}**" in section
    arena = json.loads((ROOT / "benchmarks/results/arena.json").read_text())["runs"]
    greedy = next(f for run in arena for r in run["rows"] if r["row"].startswith("--agents greedy random random random")
                  for f in r["figures"] if f["agent"] == "greedy")
    assert f"makes {rd.ci(greedy['points_per_hand'], 1)} points per hand against three random seats" in section


def test_compile_times_have_one_source():
    cold = json.loads((ROOT / "benchmarks/results/cold.json").read_text())["runs"][0]
    first = f"{cold['rows'][0]['empty_cache_s']:.1f} s before the first move"
    for path in (ROOT / "README.md", ROOT / "docs" / "guide.md"):
        text = path.read_text(encoding="utf-8")
        assert "<!-- results:cold-summary -->" in text and first in text, path
    for path in rd.doc_files():
        outside = _strip_blocks(path.read_text(encoding="utf-8"))
        assert not re.search(r"\d\s*s (more )?before the first", outside), f"{path}: a compile time outside the blocks"


LAB = re.compile(r"\b(this|that|earlier|latest|previous) session|\bissues? [0-9]+\b|\btargets? of\b", re.I)


def test_user_pages_speak_of_no_sessions_issues_or_targets():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "research" / "README.md"]
    for path in pages:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert not LAB.search(line), f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
    for path in (ROOT / "docs" / "performance.md", ROOT / "research" / "README.md"):
        assert "target" not in path.read_text(encoding="utf-8").lower(), path


def test_render_check_finds_a_stale_block_and_rewrites_only_the_block(tmp_path):
    for d in ("benchmarks/results", "research/results"):
        shutil.copytree(ROOT / d, tmp_path / d)
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "performance.md"
    page.write_text("# Title\n\nkept\n<!-- results:cold -->\n| stale |\n<!-- /results:cold -->\nkept too\n")
    (old, new), = rd.render_all(tmp_path).values()
    assert old != new and new.startswith("# Title\n\nkept\n<!-- results:cold -->\n| stage")
    assert new.endswith("<!-- /results:cold -->\nkept too\n") and "| stale |" not in new
    page.write_text(new)
    (old, new), = rd.render_all(tmp_path).values()
    assert old == new
    page.write_text("<!-- results:nothing -->\n<!-- /results:nothing -->\n")
    with pytest.raises(KeyError, match="unknown results block"):
        rd.render_all(tmp_path)
