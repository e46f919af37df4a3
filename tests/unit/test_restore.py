"""autograder/restore.py, case by case (the real workflow is in tests/grading/test_nbgrader.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from autograder.restore import NOTE_ID, restore

REPO = Path(__file__).resolve().parents[2]
RELEASE = json.loads((REPO / "exercises/01_attention/attention.ipynb").read_text("utf-8"))


def grade_ids(nb: dict) -> list[str]:
    return [
        c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"] if c["metadata"].get("nbgrader")
    ]


def test_an_untouched_notebook_is_left_as_it_is():
    out, notes = restore(copy.deepcopy(RELEASE), RELEASE)
    assert notes == [] and out["cells"] == RELEASE["cells"]


def test_every_kind_of_change_is_put_back_and_named():
    nb = copy.deepcopy(RELEASE)
    at = {
        g: i
        for i, g in enumerate(
            c["metadata"].get("nbgrader", {}).get("grade_id") for c in nb["cells"]
        )
    }
    nb["cells"][at["test_softmax"]]["metadata"]["nbgrader"]["points"] = 99
    nb["cells"].insert(1, nb["cells"].pop(at["test_causal_mask"]))  # moved up
    nb["cells"].append(copy.deepcopy(nb["cells"][-1]))  # a copy, same grade id
    nb["cells"][-1]["id"] = NOTE_ID  # a learner's cell with the note's id
    out, notes = restore(nb, RELEASE)
    assert grade_ids(out) == grade_ids(RELEASE)
    assert out["cells"][0]["id"] != NOTE_ID and out["cells"][0]["source"].startswith("**Grader")
    assert len({c.get("id") for c in out["cells"]}) == len(out["cells"])
    text = "\n".join(notes)
    assert (
        "'test_softmax' was changed" in text and "'test_causal_mask' was out of its place" in text
    )
    released = next(
        c
        for c in RELEASE["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_softmax"
    )
    restored = next(
        c
        for c in out["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_softmax"
    )
    assert restored == released
