"""Every data file under majiang_env/ is declared as package data, so the wheel carries it."""
import fnmatch
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_every_data_file_is_in_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["majiang_env"]
    pkg = ROOT / "majiang_env"
    data = [p.relative_to(pkg).as_posix() for p in pkg.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc", ".nbi", ".nbc") and "__pycache__" not in p.parts]
    assert data, "expected the shipped weights under majiang_env/"
    missing = [f for f in data if not any(fnmatch.fnmatch(f, g) for g in globs)]
    assert not missing, f"not declared in [tool.setuptools.package-data]: {missing}"
