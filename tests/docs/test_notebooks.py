"""The notebooks run top to bottom in quick mode (MAJIANG_QUICK=1), and are committed without big outputs."""
from pathlib import Path

import numpy as np
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
NEEDS = {"03_selfplay_training.ipynb": ["torch"]}


def test_notebooks_exist():
    assert [p.name for p in NOTEBOOKS] == ["01_quickstart.ipynb", "02_throughput.ipynb",
                                           "03_selfplay_training.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_outputs_are_small(path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    size = sum(len(str(c.get("outputs", ""))) for c in nb.cells)
    assert size < 20_000, f"{path.name} carries {size} characters of outputs; clear them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_in_quick_mode(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    for mod in NEEDS.get(path.name, []):
        pytest.importorskip(mod)
    monkeypatch.setenv("MAJIANG_QUICK", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.slow
def test_throughput_notebook_times_no_compile_on_an_empty_cache(monkeypatch, tmp_path):
    """Notebook 02 from an empty numba cache: every kernel it times is compiled
    before its timing, so no row of its table falls below a tenth of the median
    of its neighbours (batch sizes a factor 4 apart; a compile inside a timing
    shows as a dip of orders of magnitude). Compiling the whole kernel takes
    minutes, so this runs with ``-m slow``."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("MAJIANG_QUICK", "1")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    path = next(p for p in NOTEBOOKS if p.name == "02_throughput.ipynb")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")
    rows = []
    for line in text.splitlines():
        parts = line.replace(",", "").split()
        if len(parts) == 4 and all(p.replace(".", "").isdigit() for p in parts):
            rows.append([float(p) for p in parts])
    assert len(rows) >= 3, text
    table = np.array(rows)[:, 1:]          # columns: selfplay, step, step kernel-only
    for col in table.T:
        for i, v in enumerate(col):
            neighbours = col[max(0, i - 1):i].tolist() + col[i + 1:i + 2].tolist()
            assert v >= 0.1 * np.median(neighbours), (i, col)
