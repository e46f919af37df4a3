"""Steps of the instructor's workflow without a kernel: collect from a zip or a folder,
validate's verdict read from nbgrader's output, a kernel that died before it ran any learner
code retried, not charged, and ``verify-release`` answering to its old name with a note. (The
whole workflow: tests/grading/test_nbgrader.py.)"""

from __future__ import annotations

import zipfile

import pytest
from support.submissions import A1, exercise, make_root, source

from course.collect import collect
from course.config import Course, CourseError
from course.grading import submission
from course.grading.nbgrader_command import Run
from course.validate import validation_passed

pytestmark = pytest.mark.usefixtures("grading_env")


def test_collect_from_zip_rejects_bad_notebooks_and_keeps_them(tmp_path):
    root = make_root(tmp_path / "course")
    good = source(A1).read_bytes()
    zpath = tmp_path / "batch.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("batch/alice/01_attention/attention.ipynb", good)
        zf.writestr("batch/bob/01_attention/attention.ipynb", b'{"cells": [ oops')
        zf.writestr("batch/carol/01_attention/attention (1).ipynb", good)
        zf.writestr("batch/dave/01_attention/attention.ipynb", b'{"nbformat": 4}')
    rejected = collect(zpath, Course(root))
    assert (root / "submitted/alice/01_attention/attention.ipynb").read_bytes() == good
    reasons = {r.student: r.reason for r in rejected}
    assert set(reasons) == {"bob", "carol", "dave"}
    assert "not valid JSON" in reasons["bob"]
    assert "misnamed" in reasons["carol"] and "attention.ipynb" in reasons["carol"]
    assert "not a Jupyter notebook" in reasons["dave"]
    for r in rejected:
        assert (root / r.kept_as).exists(), r
        assert not (root / "submitted" / r.student).exists(), r
    assert (root / "reports/collect_rejected.csv").read_text().count("\n") == 4


def test_collect_from_folder_with_assignment(tmp_path):
    root = make_root(tmp_path / "course")
    src = tmp_path / "downloads"
    (src / "erin").mkdir(parents=True)
    (src / "erin" / "attention.ipynb").write_bytes(exercise(A1).read_bytes())
    assert collect(src, Course(root), assignment=A1) == []
    assert (root / "submitted/erin/01_attention/attention.ipynb").exists()
    with pytest.raises(CourseError, match="unknown assignment"):
        collect(src, Course(root), assignment="99_nothing")


def test_validation_verdict_is_read_from_the_output():
    assert validation_passed("Success! Your notebook passes all the tests.\n")
    assert not validation_passed("VALIDATION FAILED ON 3 CELL(S)! If you submit ...")
    assert not validation_passed("")


def test_kernel_start_race_is_retried_not_charged_to_the_learner(monkeypatch, tmp_path):
    """A kernel that dies before kernel_info (a port race between kernels started side by side)
    never ran learner code: grading is retried; a learner's dead kernel is not."""
    from autograder.outcomes import Outcome

    calls = []
    start_failed = Outcome(execution={"error": "kernel start"})

    def fake_run(args, course, url=None, log=None, timeout=None, settings=None):
        calls.append(args)
        return Run(1, "", outcome=start_failed) if len(calls) == 1 else Run(0, "graded")

    def fake_diagnose(course, run, s, a):
        return ("ok" if run.rc == 0 else run.outcome.error, [])

    monkeypatch.setattr(submission, "nbgrader_run", fake_run)
    monkeypatch.setattr(submission, "diagnose", fake_diagnose)
    result = submission.grade_one(("01_attention", "someone"), Course(tmp_path), "sqlite://")
    assert len(calls) == 2 and result.status == "ok"

    calls.clear()
    died = Outcome(execution={"error": "dead kernel"})
    monkeypatch.setattr(
        submission, "nbgrader_run", lambda *a, **k: calls.append(a) or Run(1, "", outcome=died)
    )
    result = submission.grade_one(("01_attention", "someone"), Course(tmp_path), "sqlite://")
    assert len(calls) == 1 and result.status == "dead kernel"


@pytest.mark.parametrize("name", ["verify-release", "check-release"])
def test_verify_release_answers_to_its_old_name_with_a_note(name, monkeypatch, tmp_path, capsys):
    """``check-release`` runs ``verify-release`` for one release and says the new name, in one
    line on stderr; ``verify-release`` says nothing of it."""
    import course.release
    from course.cli import main

    asked = []
    monkeypatch.setattr(course.release, "verify_release", lambda c: asked.append(c) or [])
    assert main(["--root", str(tmp_path), name]) == 0
    out, err = capsys.readouterr()
    assert len(asked) == 1 and "exercises/ is up to date" in out
    if name == "check-release":
        assert err.strip().splitlines() == [
            "note: `check-release` is now `verify-release`; the old name goes in the next release"
        ]
    else:
        assert err == ""
