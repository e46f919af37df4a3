"""The dry grader (``autograder.dry``, what ``tools/grading_table.py`` and the table of typical
mistakes use) scores a tiny assignment as real grading would: full marks for the solution, none
for a hard-coded value, a crash, an exit, a loop or faked records, and the test cells restored
from the source. It starts kernels, hence the slow tier."""

from __future__ import annotations

import json

import nbformat

from autograder import dry


def tiny_assignment(tmp_path) -> tuple:
    nb = nbformat.v4.new_notebook()
    sol = {"grade": False, "solution": True, "locked": False, "grade_id": "f",
           "schema_version": 3}  # fmt: skip
    test = {"grade": True, "solution": False, "locked": True, "grade_id": "test_f",
            "points": 2, "schema_version": 3}  # fmt: skip
    nb.cells = [
        nbformat.v4.new_code_cell(
            "def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION",
            metadata={"nbgrader": sol},
        ),
        nbformat.v4.new_code_cell(
            "from checks import Test\nt = Test('test_f')\n"
            "t.close('f(1)', t.call(f, 1.0))\n"
            "### BEGIN HIDDEN TESTS\nt.close('f(5)', t.call(f, 5.0))\n### END HIDDEN TESTS\n",
            metadata={"nbgrader": test},
        ),
    ]
    folder = tmp_path / "solutions" / "99_tiny"
    folder.mkdir(parents=True)
    path = folder / "tiny.ipynb"
    nbformat.write(nb, path)
    return path, json.loads(path.read_text())


def variant(nb: dict, body: str, test_text: str | None = None) -> dict:
    nb = json.loads(json.dumps(nb))
    nb["cells"][0]["source"] = f"def f(x):\n    {body}\n"
    if test_text is not None:
        nb["cells"][1]["source"] = test_text
    return nb


def test_the_dry_grader_scores_like_real_grading(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source, nb = tiny_assignment(tmp_path)
    notebooks = {
        "solution": nb,
        "hard-coded visible value": variant(nb, "return 2.0"),
        "crash": variant(nb, "return x.view(3)"),
        "exits its process": variant(nb, "import os; os._exit(0)"),
        "loops": variant(nb, "while True: pass"),
        "deletes the hidden test": variant(nb, "return x + 1", "print('passed')"),
        "fakes records": variant(
            nb,
            "return 0",
            "from IPython.display import publish_display_data\n"
            "publish_display_data({'application/vnd.afz.check+json': {'test': 'test_f', "
            "'key': 'f(1)', 'value': 2.0}})",
        ),
    }
    graded = dry.grade(source, notebooks, timeout=3, jobs=2)
    scores = {name: g.score for name, g in graded.items()}
    full = ("solution", "deletes the hidden test")  # test cells are restored from the source
    assert scores == {name: (2.0 if name in full else 0.0) for name in notebooks}
    assert graded["solution"].max_score == 2.0
    assert "f(5)" in graded["hard-coded visible value"].failed()["test_f"]
    assert "has no attribute 'view'" in graded["crash"].failed()["test_f"]
    assert "CellTimeoutError" in graded["loops"].failed()["test_f"]
