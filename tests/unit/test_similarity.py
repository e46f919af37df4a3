"""`python -m course similarity`: only the learners' own code is compared.

Quick: a few notebooks of exercise 01 (tests/grading/test_similarity_report.py ranks a class of 53
and opens the report in Chromium).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from support import similar_class as S
from support.submissions import A1, exercise, read, source

from course.cli import main
from course.config import CourseError
from course.similarity import compare, solution_code

REPO = Path(__file__).resolve().parents[2]


def test_only_solution_cells_are_taken():
    code = solution_code(read(source(A1)))
    assert "def softmax" in code and "### BEGIN SOLUTION" in code
    assert "assert" not in code  # no test cell, no given code
    assert "import numpy" not in code


def test_the_released_code_and_names_and_comments_do_not_count():
    released = solution_code(read(exercise(A1)))
    honest = S.honest()
    a = solution_code(honest["honest_0_1"])
    codes = {
        "untouched_1": released,
        "untouched_2": released,  # two untouched exercises share only the released code
        "a": a,
        "renamed": solution_code(S.rename(honest["honest_0_1"], S.RENAMES)),
        "commented": solution_code(S.comment(honest["honest_0_1"])),
        "other": solution_code(honest["honest_3_3"]),  # no way in common with honest_0_1
    }
    pairs = {frozenset({p.a, p.b}): p for p in compare(codes, released)}
    assert pairs[frozenset({"untouched_1", "untouched_2"})].score == 0
    assert pairs[frozenset({"a", "renamed"})].score == 1
    assert pairs[frozenset({"a", "commented"})].score == 1
    assert pairs[frozenset({"a", "other"})].score < 0.5


def make_root(tmp: Path) -> Path:
    tmp.mkdir()
    for folder in ("solutions", "exercises"):
        (tmp / folder).symlink_to(REPO / folder)
    return tmp


def test_the_command_writes_a_report_and_a_csv(tmp_path, capsys):
    root = make_root(tmp_path / "course")
    honest = S.honest()
    for name in ("honest_0_1", "honest_3_3", "honest_5_2"):
        dest = root / "submitted" / name / A1 / "attention.ipynb"
        dest.parent.mkdir(parents=True)
        dest.write_text(json.dumps(honest[name]))
    (root / "submitted" / "broken" / A1).mkdir(parents=True)
    (root / "submitted" / "broken" / A1 / "attention.ipynb").write_text("{not json")
    assert main(["--root", str(root), "similarity", A1]) == 0
    out = capsys.readouterr().out
    assert "compared 3 submissions of 01_attention (3 pairs)" in out
    assert "SKIPPED broken/attention.ipynb" in out and "never a grade" in out
    with (root / "similarity" / A1 / "pairs.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    page = (root / "similarity" / A1 / "report.html").read_text()
    assert "never a grade" in page and "<script" not in page


def test_too_few_submissions_is_an_error(tmp_path):
    root = make_root(tmp_path / "course")
    with pytest.raises(CourseError, match="nothing to compare"):
        from course.config import Course
        from course.similarity import similarity

        similarity(Course(root), A1)
