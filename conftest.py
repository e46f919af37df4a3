"""Repository-wide pytest configuration.

`make test` runs pytest with --nbval, which re-executes every notebook it collects. Only the
chapters are meant for that: the student notebooks in exercises/ stop at
`raise NotImplementedError()`, and the nbgrader sources in solutions/ are checked by the
nbgrader tests instead. Never collect those notebooks, whatever paths pytest is given.
"""

import os
import sys
from pathlib import Path

import pytest

# One PyTorch thread in each test process and what it starts (nbgrader, benchmarks, workers;
# a grading kernel and the chapters set one themselves). The suite runs its processes side by
# side on every core (pytest-xdist's workers, `make test`'s second pass), and PyTorch's default,
# a thread per core, then spins for CPU time the other processes need: the copy task's 400
# training steps (tests/book/test_model_training.py) took 120 CPU-s on two threads while the
# suite ran, 19 on one.
os.environ["OMP_NUM_THREADS"] = "1"

from autograder.replay import KERNEL_SETTINGS  # noqa: E402

NOT_NBVAL = {"exercises", "solutions"}

# Chapter cells whose metadata says "nbval-tolerance": {"abs": ..., "rel": ...} compare their
# numbers within that tolerance (tools/nbval_tolerance.py, a pytest plugin). --cpu-by-file=DIR
# counts each test file's CPU seconds with every process it starts (tools/cpu_by_file.py).
sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
pytest_plugins = ["nbval_tolerance", "cpu_by_file"]


def pytest_ignore_collect(collection_path: Path, config):
    if collection_path.suffix != ".ipynb":
        return None
    try:
        parts = collection_path.relative_to(config.rootpath).parts
    except ValueError:  # outside the repository: not ours to judge
        return None
    return True if NOT_NBVAL & set(parts) else None


def pytest_report_header(config):
    """Which of PyTorch's CPU kernels this run computes with (`make test` runs two kinds)."""
    import torch

    settings = [f"{k}={os.environ[k]}" for k in KERNEL_SETTINGS if k in os.environ]
    capability = torch.backends.cpu.get_cpu_capability()
    chosen = " ".join(settings) or "the machine's own"
    return f"PyTorch CPU kernels: {capability} ({chosen})"


def pytest_collection_modifyitems(config, items):
    # The tests' tiers are their folders (tests/unit; tests/grading and tests/book, whose
    # conftest.py marks each test slow). A chapter under nbval is slow too.
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
            # a chapter's outputs come from PyTorch's kernels
            item.add_marker(pytest.mark.cpu_kernels)
