"""tools/cpu_by_file.py: a test file's CPU seconds include those of the processes it starts."""

from __future__ import annotations

import os
import subprocess
import sys

import cpu_by_file
import pytest
from support import REPO

BUSY = """
import subprocess, sys

def test_a_child_burns_cpu():
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                    "while time.process_time() - t < 1.5: pass"], check=True)

def test_idle():
    pass
"""


@pytest.mark.skipif(
    not os.access(cpu_by_file.CPUACCT, os.W_OK), reason="needs a writable cgroup v1 cpuacct"
)
def test_a_child_process_cpu_is_charged_to_its_test_file(tmp_path):
    (tmp_path / "test_busy.py").write_text(BUSY)
    (tmp_path / "test_calm.py").write_text("def test_calm():\n    pass\n")
    out = tmp_path / "counts"
    (out / "run-1").mkdir(parents=True)
    (out / "run-1" / "1.json").write_text('{"total": 9, "files": {"x.py": [9, 1, 1]}}')
    env = {**os.environ, "PYTHONPATH": str(REPO / "tools")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "cpu_by_file", f"--cpu-by-file={out}", "-n", "2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = [d for d in out.iterdir() if d.name != "run-1"]  # another run's counts are kept
    assert len(list(run.glob("*.json"))) == 3  # pytest-xdist's two workers and the main process
    files, _ = cpu_by_file.counts(run)
    assert set(files) == {"test_busy.py", "test_calm.py"}, files
    assert files["test_busy.py"][0] >= 1.4, files
    assert files["test_calm.py"][0] < 0.5, files
    assert files["test_busy.py"][2] == 2, files
    assert "CPU seconds by test file" in done.stdout
