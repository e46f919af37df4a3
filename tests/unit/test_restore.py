"""autograder/restore.py, case by case (the real workflow is in tests/grading/test_nbgrader.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from autograder.regions import source_of
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


def cell_of(nb: dict, grade_id: str) -> dict:
    return next(
        c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id
    )


def test_a_notebook_without_any_metadata_is_recognised_cell_by_cell():
    """Cells pasted into a new notebook lose their metadata: the test and read-only cells are
    recognised by their text, the solution cells by the functions they define (a learner's
    helper function beside them is fine), and the order is the learner's."""
    nb = copy.deepcopy(RELEASE)
    for cell in nb["cells"]:
        cell["metadata"] = {}
        if cell["cell_type"] == "code":
            cell["source"] = source_of(cell).replace("raise NotImplementedError()", "return 1")
    out, notes = restore(nb, RELEASE)
    assert grade_ids(out) == grade_ids(RELEASE)
    assert sum("was recognised as" in n for n in notes) == len(grade_ids(RELEASE))
    assert "by what it defines (softmax)" in "\n".join(notes)


def test_a_cell_between_a_solution_and_its_test_stays_before_the_test():
    nb = copy.deepcopy(RELEASE)
    at = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in nb["cells"]].index("softmax")
    helper = {"cell_type": "code", "id": "mine", "metadata": {}, "outputs": [],
              "execution_count": None, "source": "def _shift(x):\n    return x"}  # fmt: skip
    nb["cells"].insert(at + 1, helper)
    out, notes = restore(nb, RELEASE)
    ids = [c.get("id") for c in out["cells"]]
    assert ids.index("mine") < out["cells"].index(cell_of(out, "test_softmax")) and notes == []
    # moved to the end, the test comes back after the solution and the helper
    nb["cells"].append(nb["cells"].pop(nb["cells"].index(cell_of(nb, "test_softmax"))))
    out, notes = restore(nb, RELEASE)
    ids = [c.get("id") for c in out["cells"]]
    assert ids.index("mine") + 1 == out["cells"].index(cell_of(out, "test_softmax"))


def test_a_lone_surrogate_becomes_a_replacement_character():
    nb = copy.deepcopy(RELEASE)
    cell_of(nb, "softmax")["source"] = "# note \ud83d\n" + source_of(cell_of(nb, "softmax"))
    nb["cells"][0]["source"] = source_of(nb["cells"][0]) + "\udfff"
    out, notes = restore(nb, RELEASE)
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # a file can hold it
    assert "# note \ufffd" in cell_of(out, "softmax")["source"]
    assert notes == ["2 character(s) that are not text (lone surrogates) became \ufffd"]
