"""Every benchmark script runs end to end in its --quick form and prints its table.

No timing is asserted here: the quick forms are too small to mean anything, and CI machines
are noisy. The scripts run side by side, as separate processes, to keep this file short.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300  # generous: shared CI machines can be very slow

# script → lines its table must print
EXPECTED = {
    "train_step.py": ["median ms", "helpers.Transformer", "torch nn.Transformer", "ratio ours"],
    "copy_task.py": ["wall time to 100 %", "held-out exact match", "steps"],
    "number_translation.py": ["held-out exact match", "training time (s)", "checkpoint size"],
    "generation.py": ["KV cache", "full recomputation", "identical tokens: yes", "speed-up"],
    "sandbox_overhead.py": ["sandbox overhead per notebook", "speed-up of 2 sandboxed workers"],
    "grading_cost.py": ["median seconds per stage", "kernel shutdown"],
    "sweep_cost.py": ["the sweep adds", "real grading with the sweep", "(growth <= 1.20"],
    "autograde_dask.py": [
        "notebooks per minute",
        "overhead of Dask over threads",
        "target met:",
        "projection:",
    ],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("bench") / "number_translator.pt"
    extra = {"number_translation.py": ["--out", str(out)]}
    procs = {
        name: subprocess.Popen(
            [sys.executable, str(ROOT / "benchmarks" / name), "--quick", *extra.get(name, [])],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in EXPECTED
    }
    results = {}
    for name, proc in procs.items():
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        results[name] = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert out.is_file(), "number_translation.py --quick --out PATH wrote no checkpoint"
    return results


@pytest.mark.parametrize("name", list(EXPECTED))
def test_quick_run_exits_0_and_prints_its_table(runs, name):
    result = runs[name]
    assert result.returncode == 0, (
        f"benchmarks/{name} --quick exited with {result.returncode}:\n{result.stderr[-2000:]}"
    )
    for line in EXPECTED[name]:
        assert line in result.stdout, f"{name} did not print {line!r}; it printed:\n{result.stdout}"
    assert "target met:" in result.stdout
