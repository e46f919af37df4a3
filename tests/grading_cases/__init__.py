"""Typical mistakes and correct alternatives, as edits of the solution notebooks.

One module per assignment (``tests/grading_cases/<assignment>.py``) defines two lists.

``MISTAKES`` holds ``(name, old, new)``, or ``(name, [(old, new), ...])`` for a mistake that takes
several edits: each ``old`` must occur exactly once in the cell *sources* of
``solutions/<assignment>/<notebook>.ipynb`` (as the notebook's JSON decodes them, inside a
``### BEGIN SOLUTION`` region) and is replaced by ``new``. Every mistake must lose points.

``SWEPT`` holds mistakes of the same form that only the contract sweep catches
(``autograder/contracts.py``: backward, dtypes, sizes, call order), one per clause where a
realistic one exists; they count among the mistakes, and graded without the sweep they keep
full marks (``tests/grading/test_grading_cases.py``).

``ALTERNATIVES`` holds ``(name, {grade_id: source})``: correct solutions written differently
from the reference; each replaces the whole source of the named solution cells. Every
alternative must keep full marks.

``tests/grading/test_grading_cases.py`` grades all of them (``autograder/dry.py``: the verdict
code of real grading, without a kernel); ``tests/grading/test_nbgrader.py`` grades a sample
through the real nbgrader and checks that both agree. The instructor guide reports the counts.
"""

from __future__ import annotations

import copy
import fcntl
import importlib.util
import json
import pickle
from pathlib import Path

Edit = tuple[str, str]
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_grading_cases_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MODULES = {p.stem: _load(p) for p in sorted(HERE.glob("[0-9]*.py"))}
# the mistakes that only the contract sweep catches (autograder/contracts.py), one per clause
SWEPT: dict[str, list[tuple]] = {a: list(getattr(m, "SWEPT", [])) for a, m in _MODULES.items()}
MISTAKES: dict[str, list[tuple]] = {a: [*m.MISTAKES, *SWEPT[a]] for a, m in _MODULES.items()}
ALTERNATIVES: dict[str, list[tuple[str, dict[str, str]]]] = {
    a: list(getattr(m, "ALTERNATIVES", [])) for a, m in _MODULES.items()
}


def edits(case: tuple) -> list[Edit]:
    """The ``(old, new)`` edits of a ``MISTAKES`` entry."""
    return [(case[1], case[2])] if len(case) == 3 else list(case[1])


# ---------------------------------------------------------------------------------------
# The notebooks, built from the table
# ---------------------------------------------------------------------------------------
def source(assignment: str) -> Path:
    return next((REPO / "solutions" / assignment).glob("*.ipynb"))


def exercise(assignment: str) -> Path:
    return REPO / "exercises" / assignment / source(assignment).name


def apply_edits(nb: dict, changes: list[Edit]) -> dict:
    """``nb`` with each ``old`` (which must occur once, in one cell) replaced by ``new``."""
    nb = copy.deepcopy(nb)
    for old, new in changes:
        hits = [c for c in nb["cells"] if old in "".join(c["source"])]
        if len(hits) != 1 or "".join(hits[0]["source"]).count(old) != 1:
            raise ValueError(f"the edit's text must occur exactly once in one cell: {old!r}")
        text = "".join(hits[0]["source"]).replace(old, new)
        hits[0]["source"] = text.splitlines(keepends=True)
    return nb


def replace_cells(nb: dict, sources: dict[str, str]) -> dict:
    """``nb`` with the solution cells named by grade_id given new sources."""
    nb = copy.deepcopy(nb)
    cells = {c["metadata"].get("nbgrader", {}).get("grade_id"): c for c in nb["cells"]}
    for grade_id, text in sources.items():
        cell = cells.get(grade_id)
        if cell is None or not cell["metadata"]["nbgrader"].get("solution"):
            raise ValueError(f"no solution cell {grade_id!r}")
        cell["source"] = text.splitlines(keepends=True)
    return nb


def notebooks(assignment: str) -> tuple[dict[str, dict], dict[str, str]]:
    """Every notebook of the table, by name, and what each must get: "full", "zero" or
    "less" (the solution, the untouched exercise, ``mistake: <name>``, ``alternative: <name>``)."""
    solution = json.loads(source(assignment).read_text(encoding="utf-8"))
    nbs = {
        "solution": solution,
        "untouched": json.loads(exercise(assignment).read_text(encoding="utf-8")),
    }
    want = {"solution": "full", "untouched": "zero"}
    for case in MISTAKES.get(assignment, []):
        nbs[f"mistake: {case[0]}"] = apply_edits(solution, edits(case))
        want[f"mistake: {case[0]}"] = "less"
    for name, sources in ALTERNATIVES.get(assignment, []):
        nbs[f"alternative: {name}"] = replace_cells(solution, sources)
        want[f"alternative: {name}"] = "full"
    return nbs, want


def sample(assignment: str) -> list[str]:
    """The notebooks that tests/grading/test_nbgrader.py also grades through nbgrader: the
    solution, the untouched exercise, the first and the last mistake, the first alternative."""
    nbs, _ = notebooks(assignment)
    mistakes = [n for n in nbs if n.startswith("mistake: ")]
    alternatives = [n for n in nbs if n.startswith("alternative: ")]
    return [
        "solution",
        "untouched",
        *dict.fromkeys(mistakes[:1] + mistakes[-1:]),
        *alternatives[:1],
    ]


_DRY: dict[str, dict] = {}  # assignment -> the whole table, dry graded
# Under pytest-xdist, a folder every worker of the run shares (set by tests/conftest.py).
SHARED: Path | None = None


def dry_graded(assignment: str, names: list[str] | None = None) -> dict:
    """``{name: autograder.dry.Graded}`` for every notebook of the table, or for ``names`` only.

    The whole table is graded once per run of pytest: pytest-xdist runs
    tests/grading/test_grading_cases.py and test_nbgrader.py in two processes, and the second
    to ask waits for the first one's results (a file, under a lock). Outside pytest-xdist,
    ``names`` alone are graded unless this process has graded the whole table already."""
    if assignment in _DRY:
        return _select(_DRY[assignment], names)
    if SHARED is None:
        if names is not None:
            return _grade(assignment, names)
        _DRY[assignment] = _grade(assignment, None)
        return _DRY[assignment]
    shared = SHARED / f"dry-graded-{assignment}.pickle"
    with open(shared.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not shared.exists():
            shared.write_bytes(pickle.dumps(_grade(assignment, None)))
        _DRY[assignment] = pickle.loads(shared.read_bytes())
    return _select(_DRY[assignment], names)


def _grade(assignment: str, names: list[str] | None) -> dict:
    from autograder import dry

    nbs, _ = notebooks(assignment)
    return dry.grade(source(assignment), {n: nbs[n] for n in names or nbs})


def _select(results: dict, names: list[str] | None) -> dict:
    return results if names is None else {n: results[n] for n in names}
