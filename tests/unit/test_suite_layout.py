"""The suite's own layout: what would break `make test` long after `make check` passed."""

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_file_name():
    """pytest imports test modules by their file name (rootdir-relative, no packages): two
    test_x.py in two tiers stop the collection of the second with "import file mismatch", and
    `make check` collects only tests/unit, so only `make test` would see it."""
    where = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        where[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert clashes == {}, f"rename one of each: {clashes}"


def test_only_the_session_fixture_starts_playwright_in_a_test_process():
    """A second sync_playwright() on an xdist worker that already ran a browser test is refused
    ("Sync API inside the asyncio loop"), depending on which tests that worker drew: a test
    module takes the `browser` fixture of tests/conftest.py, or starts Playwright in a script
    run as a process of its own (a string handed to `python -c`)."""
    starts = []
    for path in TESTS.rglob("*.py"):
        if path == TESTS / "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and "sync_playwright" in ast.unparse(node.func):
                starts.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert starts == [], "use the `browser` fixture (tests/conftest.py) instead: " + str(starts)


def test_a_test_process_and_its_children_compute_on_one_torch_thread():
    """conftest.py's OMP_NUM_THREADS=1: the suite's processes share the cores, and PyTorch's
    thread per core spins for the others' CPU time (six times the CPU for a training run)."""
    import os
    import subprocess
    import sys

    import torch

    assert os.environ.get("OMP_NUM_THREADS") == "1"
    assert torch.get_num_threads() == 1
    child = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == "1"
