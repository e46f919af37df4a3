"""A rerun of autograde skips a submission only when nothing that decides its grade changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from course.config import Course
from course.grading import batch, submission
from course.grading.batch import _skip_graded
from course.grading.submission import Result, write_report

REPO = Path(__file__).resolve().parents[2]
A = "01_attention"


def _course(tmp_path: Path) -> Course:
    root = tmp_path / "course"
    shutil.copytree(REPO / "solutions" / A, root / "solutions" / A)
    for student in ("ann", "bob"):
        folder = root / "submitted" / student / A
        folder.mkdir(parents=True)
        (folder / "attention.ipynb").write_text(json.dumps({"cells": [], "who": student}))
        (folder / "timestamp.txt").write_text("2026-01-01 10:00:00\n")
    return Course(root)


def _graded(course: Course) -> None:
    results = [Result(s, A, "ok", 3.0, 3.0) for s in ("ann", "bob")]
    for r in results:
        r.sha256 = batch._sha256(course, (A, r.student))
    write_report(course, results)


def test_a_graded_submission_is_skipped(tmp_path, capsys):
    course = _course(tmp_path)
    _graded(course)
    assert _skip_graded(course, [(A, "ann"), (A, "bob")]) == []
    assert "skipped 2 submission(s)" in capsys.readouterr().out


def test_changed_files_are_graded_again(tmp_path):
    course = _course(tmp_path)
    _graded(course)
    (course.submitted / "bob" / A / "attention.ipynb").write_text('{"cells": [1]}')
    assert _skip_graded(course, [(A, "ann"), (A, "bob")]) == [(A, "bob")]


def test_changed_tests_grade_everything_again(tmp_path):
    course = _course(tmp_path)
    _graded(course)
    notebook = next((course.solutions / A).glob("*.ipynb"))
    notebook.write_text(notebook.read_text() + "\n")  # any change to the tests
    submission._grader_fingerprint.cache_clear()
    try:
        assert _skip_graded(course, [(A, "ann"), (A, "bob")]) == [(A, "ann"), (A, "bob")]
    finally:
        submission._grader_fingerprint.cache_clear()


def test_a_grader_failure_is_graded_again(tmp_path):
    course = _course(tmp_path)
    _graded(course)
    r = Result("ann", A, "error: no bwrap", outcome="grader error")
    r.sha256 = batch._sha256(course, (A, "ann"))
    write_report(course, [r])
    assert _skip_graded(course, [(A, "ann"), (A, "bob")]) == [(A, "ann")]
