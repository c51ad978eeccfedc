"""research/profile_step.py: a perf map that names numba's compiled kernel."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

RESEARCH = pathlib.Path(__file__).parents[2] / "research"


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")
def test_profile_step_writes_a_perf_map_naming_the_kernel():
    r = subprocess.run([sys.executable, str(RESEARCH / "profile_step.py"), "--seconds", "0.2", "--envs", "8"],
                       capture_output=True, text=True, timeout=900, cwd=RESEARCH.parent)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    assert line.startswith("/tmp/perf-") and "functions" in line, r.stdout
    path = pathlib.Path(line.split(":")[0])
    names = path.read_text()
    path.unlink()
    # the kernel's functions by module and name (settle: the rules after each decision; seat_step: the env's step)
    assert re.search(r"majiang_env\.engine\.kernel\.\w+\.settle\b", names), names[:2000]
    assert re.search(r"majiang_env\.engine\.kernel\.learner\.seat_step", names), names[:2000]
    addresses = [int(row.split(" ", 2)[0], 16) for row in names.splitlines()]
    assert len(set(addresses)) == len(addresses) and min(addresses) > 0
    assert os.path.basename(str(path)).startswith("perf-")
