"""The solution's value of every check: the source notebook run in a process of the grader's.

``expected_checks(source)`` runs the instructor's notebook (``solutions/<a>/<nb>.ipynb``: setup
cells, solution cells, then each test cell with its hidden part) in a fresh Python process,
outside any sandbox and without a Jupyter kernel, and collects what every ``checks``
check saw. Those values are what the learner's results are compared with
(``autograder/verdicts.py``). A check whose ``expected=`` the cell writes out is also checked
against the solution here, so a solution that fails its own test is an error, not a silent 0.

Results are cached by the content of the notebook, of ``helpers``, ``checks`` and of this
package, and by the CPU's kind (its instruction sets and the settings that pick PyTorch's
kernels), in ``$XDG_CACHE_HOME/attention-from-zero/replay`` (``~/.cache`` without it).

The visible tests' values (``visible_only=True``) are what ``python -m course release`` puts
into the released test cells, for the checks a learner runs while working.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from autograder import cells, contracts, regions
from autograder.fingerprint import fingerprint

ROOT = Path(__file__).resolve().parent.parent
FORMAT = 1


class ReplayError(RuntimeError):
    """The solution notebook could not be replayed (a bug in the course, not the learner)."""


# What picks PyTorch's CPU kernels (and so the last bits of a float): the same notebook gives
# values that differ a little under AVX-512 and AVX2 kernels, so each kind has its own entries.
KERNEL_SETTINGS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_ENABLE_INSTRUCTIONS")


def cpu_kind() -> str:
    """The instruction sets this CPU offers and the settings that limit PyTorch to fewer."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        flags = []
    offered = sorted(f for f in flags if f.startswith(("avx", "amx", "fma")))
    settings = [f"{name}={os.environ.get(name, '')}" for name in KERNEL_SETTINGS]
    return " ".join(offered + settings)


def _fingerprint(source: Path, visible_only: bool, sweep: bool = True) -> str:
    """The cache key of ``source``'s values: the notebook, the grader's code, this format,
    the Python version and the CPU's kind (``autograder.fingerprint``)."""
    kind = f"replay {FORMAT}:{visible_only}:{sweep}:{sys.version_info[:2]}:{cpu_kind()}"
    return fingerprint(kind, files=[source])


def cache_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "attention-from-zero" / "replay"


def expected_checks(
    source: Path, *, visible_only: bool = False, sweep: bool = True
) -> dict[str, list[dict]]:
    """``{grade_id: [check, ...]}`` for the notebook ``source`` (cached); ``sweep=False``: without
    the contract sweep (``autograder/contracts.py``), for the tests that show what it adds."""
    source = Path(source).resolve()
    if not source.is_file():
        raise ReplayError(f"no source notebook {source}: the grader needs it to judge the tests")
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{source.stem}-{_fingerprint(source, visible_only, sweep)}.json"
    with open(folder / f"{source.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two graders replaying the same notebook wait
        if not target.exists():
            _replay_to(source, target, visible_only, sweep)
    return _by_test(json.loads(target.read_text(encoding="utf-8"))["checks"])


def _by_test(checks: list[dict]) -> dict[str, list[dict]]:
    tests: dict[str, list[dict]] = {}
    for check in checks:
        tests.setdefault(check["test"], []).append(check)
    return tests


def _replay_to(source: Path, target: Path, visible_only: bool, sweep: bool = True) -> None:
    command = [sys.executable, "-m", "autograder.replay", str(source.resolve())]
    command += ["--out", str(Path(target).resolve())]
    if visible_only:
        command.append("--visible")
    if not sweep:
        command.append("--no-sweep")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    env.pop("CHECKS_MODE", None)
    env.setdefault("OMP_NUM_THREADS", "1")
    done = subprocess.run(command, cwd=source.parent, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not target.exists():
        raise ReplayError(
            f"replaying {source} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
        )


# ---------------------------------------------------------------------------------------
# In the replay process
# ---------------------------------------------------------------------------------------
def _python(source: str) -> str:
    if re.search(r"^\s*[%!]", source, re.M):
        raise ReplayError("a cell uses IPython magics or shell escapes; the replay runs Python")
    return source


def replay(source: Path, *, visible_only: bool = False, sweep: bool = True) -> list[dict[str, Any]]:
    """Run the notebook here and return its checks (call in a fresh process)."""
    import nbformat

    import checks
    from checks.compare import judge

    nb = nbformat.read(source, as_version=4)
    if sweep:
        nb = nbformat.from_dict(contracts.with_sweep(nb))
    namespace = cells.new_namespace()
    collected: list[dict[str, Any]] = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        if not meta:
            continue  # an ungraded scratch cell ("Try it")
        grade_id = meta.get("grade_id", f"cell {index}")
        is_test = regions.is_test_cell(cell)
        code = regions.without_hidden(cell.source) if is_test and visible_only else cell.source
        collect = checks.replay_into if is_test else lambda sink: checks.replay_into(None)
        run = cells.run_cell(_python(code), f"{source.name}:{grade_id}", namespace, collect)
        err = run.error
        if err is not None and not isinstance(err, Exception):
            raise err  # Ctrl-C, SystemExit: not the solution's failure
        if err is not None:
            raise ReplayError(
                f"{source.name}, cell {grade_id!r}: the solution raised {type(err).__name__}: {err}"
            ) from err
        sink = run.records
        if is_test:
            if not sink:
                raise ReplayError(f"{source.name}, test cell {grade_id!r} makes no checks")
            for check in sink:
                if check["test"] != grade_id:
                    raise ReplayError(
                        f"{source.name}: test cell {grade_id!r} says Test({check['test']!r})"
                    )
                if "solution" in check:
                    problem = judge(check, check.pop("solution"))
                    if problem:
                        raise ReplayError(f"{source.name}: the solution fails: {problem}")
            collected.extend(sink)
    return collected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path, help="a source notebook")
    parser.add_argument("--visible", action="store_true", help="visible tests only")
    parser.add_argument("--no-sweep", action="store_true", help="without the contract sweep")
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    source = args.notebook.resolve()
    os.chdir(source.parent)
    try:
        checks = replay(source, visible_only=args.visible, sweep=not args.no_sweep)
    except ReplayError as err:
        print(err, file=sys.stderr)
        return 1
    _atomic_write(args.out, {"format": FORMAT, "notebook": source.name, "checks": checks})
    return 0


def _atomic_write(path: Path, data: dict[str, Any]) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
