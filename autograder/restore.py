"""An honest accident costs one test, not the notebook: the released cells put back in place.

JupyterLab makes it easy to copy a test cell with its metadata (a grade id twice), to move
cells, to turn a cell into Markdown or to lose a cell's metadata. nbgrader then stops on the
notebook's metadata, and the whole notebook scores 0. Before nbgrader reads a submission,
:func:`restore` rebuilds it from the released notebook (``exercises/<a>/<nb>.ipynb``):

* every test cell and read-only cell comes from the release, where the release has it (after
  the solution cell that precedes it there), whatever the submission did with its copy
  (moved, copied, edited, turned into Markdown, its metadata changed or lost);
* every solution cell keeps the learner's code under the release's metadata; a second cell
  with the same grade id (a copy) stays as plain code, and a cell with a grade id the release
  does not know (a renamed copy) becomes plain code too;
* the learner's other cells stay where they were.

Nothing a learner can do to the metadata gains anything: the tests, their places and their
points are the release's. What was put back is listed in a note at the top of the notebook,
which feedback shows.
"""

from __future__ import annotations

import copy
from typing import Any

from autograder import regions

NOTE_ID = "afz-grader-note"


_meta = regions.nbgrader_meta


def _kind(cell: dict[str, Any]) -> str:
    """ "solution", "fixed" (a test or read-only cell) or "" for a release cell."""
    if not _meta(cell).get("grade_id"):
        return ""
    kind = regions.cell_kind(cell)
    return {"solution": "solution", "test": "fixed", "locked": "fixed"}.get(kind, "")


def _key(cell: dict[str, Any]) -> tuple:
    """What of a cell's nbgrader metadata decides its grading."""
    meta = _meta(cell)
    return tuple(meta.get(k) for k in ("grade_id", "grade", "solution", "locked", "points"))


def _plain(cell: dict[str, Any]) -> dict[str, Any]:
    cell = copy.deepcopy(cell)
    cell.get("metadata", {}).pop("nbgrader", None)
    return cell


def restore(nb: dict[str, Any], release: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``nb`` rebuilt on the release's cells (see the module's docstring), and what changed."""
    kinds = {_meta(c)["grade_id"]: (_kind(c), c) for c in release.get("cells", []) if _kind(c)}
    notes: list[str] = []
    cells: list[dict[str, Any]] = []
    seen_solutions: set[str] = set()
    found_fixed: dict[str, list[int]] = {}
    for position, cell in enumerate(nb.get("cells", [])):
        if not isinstance(cell, dict):
            notes.append(f"cell {position + 1} was not a cell and was left out")
            continue
        raw_id = _meta(cell).get("grade_id")
        grade_id = raw_id if isinstance(raw_id, str) else ""
        kind, ref = kinds.get(grade_id, ("", None))
        if ref is None:
            if raw_id:
                notes.append(
                    f"cell {position + 1} had the grade id {str(raw_id)[:60]!r}, which the "
                    "assignment does not have: it ran as plain code"
                )
                cell = _plain(cell)
            cells.append(cell)
        elif kind == "fixed":
            found_fixed.setdefault(grade_id, []).append(position)
            if ref.get("cell_type") != cell.get("cell_type") or _key(cell) != _key(ref):
                notes.append(f"the cell {grade_id!r} was changed: the released cell was used")
            if len(found_fixed[grade_id]) == 1:
                cells.append(copy.deepcopy(ref))  # the release's, where the learner had it
        elif grade_id in seen_solutions:  # a copy of a solution cell: the learner's code
            notes.append(f"a second cell with the grade id {grade_id!r} (a copy) ran as plain code")
            cells.append(_plain(cell))
        else:
            seen_solutions.add(grade_id)
            fixed = copy.deepcopy(cell)
            fixed["cell_type"] = ref.get("cell_type", "code")
            if fixed["cell_type"] == "code":
                fixed.setdefault("outputs", [])
                fixed.setdefault("execution_count", None)
            fixed.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(_meta(ref))
            if _key(cell) != _key(ref) or cell.get("cell_type") != fixed["cell_type"]:
                notes.append(f"the metadata of your cell {grade_id!r} was restored")
            cells.append(fixed)
    for grade_id, (kind, _) in kinds.items():
        if kind == "solution" and grade_id not in seen_solutions:
            notes.append(
                f"no cell had the grade id {grade_id!r} (its metadata was lost?): your code for "
                "it ran as a plain cell, where it was"
            )
    for grade_id, positions in found_fixed.items():
        if len(positions) > 1:
            notes.append(f"the cell {grade_id!r} was there {len(positions)} times: it ran once")
    # Each of the release's fixed cells goes right after the graded cell that precedes it in the
    # release, unless the solution cell before it lost its grade id (then the learner's code
    # for it is a plain cell, and the fixed cell stays where the learner had it).
    out = cells
    graded = [(_meta(c)["grade_id"], _kind(c), c) for c in release.get("cells", []) if _kind(c)]
    for k, (grade_id, kind, ref) in enumerate(graded):
        if kind != "fixed":
            continue
        here = _index(out, grade_id)
        solutions = [g for g, kd, _ in graded[:k] if kd == "solution"]
        if here is not None and solutions and _index(out, solutions[-1]) is None:
            continue
        cell = out.pop(here) if here is not None else copy.deepcopy(ref)
        if here is None:
            notes.append(f"the cell {grade_id!r} was missing: the released cell was put back")
        earlier = [i for g, _, _ in graded[:k] if (i := _index(out, g)) is not None]
        out.insert(max(earlier) + 1 if earlier else 0, cell)
    moved = _moved(nb, out, found_fixed)
    notes += [
        f"the cell {g!r} was out of its place: it ran where the release has it" for g in moved
    ]
    result = {**nb, "cells": out}
    if notes:
        taken = {c.get("id") for c in out}
        note = _note_cell(notes)
        while note["id"] in taken:  # a learner's cell may have any id
            note["id"] += "-1"
        result["cells"] = [note, *out]
    return result, notes


def _index(cells: list[dict[str, Any]], grade_id: str) -> int | None:
    return next((i for i, c in enumerate(cells) if _meta(c).get("grade_id") == grade_id), None)


def _order(cells: list[Any]) -> list[str]:
    ids = []
    for cell in cells:
        grade_id = _meta(cell).get("grade_id") if isinstance(cell, dict) else None
        if isinstance(grade_id, str) and _kind(cell) and grade_id not in ids:
            ids.append(grade_id)
    return ids


def _moved(nb: dict[str, Any], out: list[dict[str, Any]], found: dict[str, list[int]]) -> list:
    """Fixed cells out of the order the release has (those off a longest common subsequence
    of the graded cells' order in the submission and in the release)."""
    a, b = _order(nb.get("cells", [])), _order(out)
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            best[i][j] = (
                best[i + 1][j + 1] + 1 if a[i] == b[j] else max(best[i + 1][j], best[i][j + 1])
            )
    kept, i, j = set(), 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            kept.add(a[i])
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return [g for g in a if g in found and g not in kept]


def _note_cell(notes: list[str]) -> dict[str, Any]:
    text = "**Grader's note.** Your notebook's cells were put back as released before grading:\n\n"
    text += "\n".join(f"- {n}" for n in notes[:20])
    return {"cell_type": "markdown", "id": NOTE_ID, "metadata": {}, "source": text}
