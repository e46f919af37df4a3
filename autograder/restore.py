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
* a cell that lost its metadata is recognised where it can be: a copy of a released test or
  read-only cell by its source, the learner's code for a solution cell by the functions and
  classes the released cell defines (a notebook pasted into a new one keeps its grade);
* the learner's other cells stay where they were (a helper cell between a solution cell and
  its test still runs before the test);
* a character that is not text (a lone surrogate, which no file can hold) becomes U+FFFD.

Nothing a learner can do to the metadata gains anything: the tests, their places and their
points are the release's. What was put back is listed in a note at the top of the notebook,
which feedback shows.
"""

from __future__ import annotations

import ast
import copy
import re
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


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def text_only(value: Any) -> tuple[Any, int]:
    """``value`` (JSON: dicts, lists, strings) with every lone surrogate made U+FFFD, and how
    many there were: JSON's ``"\\ud800"`` reads as one, and no UTF-8 file can hold it."""
    if isinstance(value, str):
        return LONE_SURROGATE.subn("\ufffd", value)
    if isinstance(value, list):
        pairs = [text_only(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        pairs_by_key = {text_only(k)[0]: text_only(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs_by_key.items()}, sum(
            n for _, n in pairs_by_key.values()
        )
    return value, 0


def restore(nb: dict[str, Any], release: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``nb`` rebuilt on the release's cells (see the module's docstring), and what changed."""
    kinds = {_meta(c)["grade_id"]: (_kind(c), c) for c in release.get("cells", []) if _kind(c)}
    notes: list[str] = []
    nb, replaced = text_only(nb)
    if replaced:
        notes.append(f"{replaced} character(s) that are not text (lone surrogates) became \ufffd")
    nb = {**nb, "cells": _recognised(nb.get("cells", []), release, notes)}
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
        low = max(earlier) + 1 if earlier else 0
        # up to the next graded cell: the learner's own cells after the preceding one
        high = next((i for i in range(low, len(out)) if _meta(out[i]).get("grade_id") in kinds),
                    len(out))  # fmt: skip
        out.insert(here if here is not None and low <= here <= high else high, cell)
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


def _recognised(cells: list[Any], release: dict[str, Any], notes: list[str]) -> list[Any]:
    """``cells`` where each cell that lost its nbgrader metadata, and is recognisably a
    released graded cell whose grade id no cell has, gets that cell's metadata back: a test or
    read-only cell by its source, a solution cell by the names the released cell defines
    (the first of the learner's code cells that defines them all)."""
    present = {_meta(c).get("grade_id") for c in cells if isinstance(c, dict)}
    fixed: dict[str, dict[str, Any]] = {}
    solutions: list[tuple[set[str], dict[str, Any]]] = []
    for ref in release.get("cells", []):
        if not _kind(ref) or _meta(ref)["grade_id"] in present:
            continue
        if _kind(ref) == "fixed":
            fixed.setdefault(regions.normalize(regions.source_of(ref)), ref)
        elif (names := _defined(regions.source_of(ref))) and ref.get("cell_type") == "code":
            solutions.append((names, ref))
    if not fixed and not solutions:
        return cells
    out = []
    for cell in cells:
        lost = isinstance(cell, dict) and not _meta(cell).get("grade_id")
        if not lost or cell.get("cell_type") == "raw":
            out.append(cell)
            continue
        ref = fixed.pop(regions.normalize(regions.source_of(cell)), None)
        why = "by its text"
        if ref is None and cell.get("cell_type") == "code":
            names = _defined(regions.source_of(cell))
            match = next((s for s in solutions if s[0] <= names), None)
            if match is not None:
                solutions.remove(match)
                ref, why = match[1], f"by what it defines ({', '.join(sorted(match[0]))})"
        if ref is None:
            out.append(cell)
            continue
        cell = copy.deepcopy(cell)
        cell.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(_meta(ref))
        grade_id = _meta(ref)["grade_id"]
        notes.append(f"a cell without its metadata was recognised as {grade_id!r} {why}")
        out.append(cell)
    return out


def _defined(source: str) -> set[str]:
    """The names of the functions and classes a cell's code defines at its top level."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


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
