"""Gradebooks compared field by field, and the class that fills them (a due date, a late
submission, an extension, a manual grade and comment, a flag); shared by
tests/grading/test_nbgrader.py and tests/grading/test_postgres.py. And what a course command
says when the gradebook cannot be opened (tests/unit/test_gradebook_errors.py and
tests/grading/test_postgres.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from course import cli, gradebook
from support.submissions import A1, MISTAKES, course_root, exercise, mutate, read, source

DUE = datetime(2026, 3, 1, 12, 0)  # UTC
# Penalty method "zero": a late notebook's penalty is its whole score (nbgrader's default,
# "none", would leave every penalty empty and the comparison blind to it).
LATE_CONFIG = 'c.LateSubmissionPlugin.penalty_method = "zero"\n'


def merge_class() -> dict[str, tuple[dict, datetime]]:
    """student -> (notebook, submitted at): on time, late, late within an extension."""
    return {
        "ontime": (read(exercise(A1)), DUE - timedelta(days=1)),
        "late": (mutate(read(source(A1)), *MISTAKES[A1][0][1:]), DUE + timedelta(hours=5)),
        "extended": (read(source(A1)), DUE + timedelta(days=1)),
    }


def prepare(url: str, notebook: str) -> None:
    """What an instructor may have set before grading: a due date, an extension, a manual
    grade and comment, a flag."""
    with gradebook.open_gradebook(url) as gb:
        gb.update_or_create_assignment(A1, duedate=DUE)
        gb.update_or_create_submission(A1, "extended", extension=timedelta(days=2))
        gb.update_or_create_submission(A1, "ontime")
        gb.find_grade("test_softmax", notebook, A1, "ontime").manual_score = 1.5
        gb.find_comment("softmax", notebook, A1, "ontime").manual_comment = "see me"
        gb.find_submission_notebook(notebook, A1, "ontime").flagged = True
        gb.db.commit()


def _fields(obj) -> dict:
    """Every column of a gradebook object but its ids, and what nbgrader computes from them
    (its ``to_dict``: scores, needs-manual-grade, failed tests)."""
    from sqlalchemy import inspect

    out = obj.to_dict()
    out.update({a.key: getattr(obj, a.key) for a in inspect(obj).mapper.column_attrs})
    return {k: v for k, v in out.items() if k != "id" and not k.endswith("_id")}


def gradebook_content(url: str, students: list[str]) -> dict:
    """The submissions of ``students`` to A1, field by field."""
    content = {}
    with gradebook.open_gradebook(url) as gb:
        for s in students:
            sub = gb.find_submission(A1, s)
            content[s] = {
                "submission": _fields(sub),
                "late": (sub.total_seconds_late, sub.late_submission_penalty),
                "student": _fields(sub.student),
                "notebooks": {
                    nb.name: {
                        "notebook": _fields(nb),
                        "grades": {g.name: _fields(g) for g in nb.grades},
                        "comments": {c.name: _fields(c) for c in nb.comments},
                    }
                    for nb in sub.notebooks
                },
            }
    return content


def grades_error(tmp_path: Path, url: str, capsys, command: str = "grades", **env: str) -> str:
    """What ``python -m course <command>`` says on stderr with AFZ_GRADEBOOK_URL=url (exit 2)."""
    root = course_root(tmp_path / "course")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AFZ_GRADEBOOK_URL", url)
        for k, v in env.items():
            mp.setenv(k, v)
        capsys.readouterr()
        assert cli.main(["--root", str(root), command]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err
