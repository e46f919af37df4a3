"""A gradebook URL that is wrong or names a server that is not there is an error that says
what is wrong and how to fix it; and nothing in course/ writes SQL into nbgrader's schema.
(On a real PostgreSQL server: tests/grading/test_postgres.py.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from support import REPO
from support.gradebooks import grades_error

from course.config import Course, CourseError


def test_postgresql_url_without_psycopg2_says_how_to_write_it(tmp_path, capsys):
    err = grades_error(tmp_path, "postgresql://grader:s3cret@dbhost/afz", capsys)
    assert "AFZ_GRADEBOOK_URL" in err and "psycopg" in err
    assert "postgresql+psycopg2://grader:***@dbhost/afz" in err
    assert "s3cret" not in err
    err = grades_error(tmp_path / "2", "postgres://grader@dbhost/afz", capsys)
    assert "postgresql+psycopg2://" in err
    err = grades_error(tmp_path / "3", "not a url", capsys)
    assert "not a database URL" in err and "sqlite:///" in err


@pytest.mark.parametrize("command", ["grades", "release", "feedback"])
def test_unreachable_server_says_what_to_check(tmp_path, capsys, command):
    nowhere = tmp_path / "no-server-here"
    url = f"postgresql+psycopg2://grader:s3cret@/afz?host={nowhere}"
    err = grades_error(tmp_path, url, capsys, command)
    assert "cannot open the gradebook" in err and str(nowhere) in err
    assert "is the database server running" in err and "pg_isready" in err
    assert "s3cret" not in err


# ---------------------------------------------------------------------------------------
# No SQL into nbgrader's schema
# ---------------------------------------------------------------------------------------
SQL = re.compile(r"\b(SELECT\s.*\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.S)
RAW_SQL_CALLS = {"execute", "executemany", "executescript", "text", "exec_driver_sql"}


def sql_in(path: Path) -> list[str]:
    """Raw SQL in a module: sqlite3 or psycopg2 imported, a call of ``execute``/``text``/...,
    or a string that reads as a query."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            found += [f"imports {n}" for n in names if n.split(".")[0] in ("sqlite3", "psycopg2")]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in RAW_SQL_CALLS:
                found.append(f"calls {name}() at line {node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL.search(node.value):
                found.append(f"SQL text at line {node.lineno}: {node.value[:60]!r}")
    return found


def test_course_writes_no_sql_into_nbgraders_schema(tmp_path):
    found = {str(p.relative_to(REPO)): sql_in(p) for p in sorted((REPO / "course").rglob("*.py"))}
    assert {p: f for p, f in found.items() if f} == {}
    # ... and the scan finds SQL where there is some
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import sqlite3\n"
        "def f(gb):\n"
        "    gb.db.execute(text('UPDATE grade SET manual_score = 1 WHERE id = 2'))\n"
    )
    assert len(sql_in(sample)) == 4, sql_in(sample)


def test_configured_url_is_checked_before_anything_runs(tmp_path):
    """``Course.gradebook_url`` checks the settings' URL (from AFZ_GRADEBOOK_URL here); the
    default SQLite URL needs no check (and the wrong URL is refused without a connection)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("AFZ_GRADEBOOK_URL", raising=False)
        assert Course(tmp_path).gradebook_url == f"sqlite:///{tmp_path.resolve()}/gradebook.db"
        mp.setenv("AFZ_GRADEBOOK_URL", "postgresql://grader@dbhost/afz")
        with pytest.raises(CourseError, match=r"postgresql\+psycopg2://grader@dbhost/afz"):
            Course(tmp_path).gradebook_url  # noqa: B018 - the property checks


# ---------------------------------------------------------------------------------------
# A new gradebook's schema revision, without nbgrader's `alembic heads` process


def test_a_new_gradebook_records_the_revision_alembic_names(tmp_path, monkeypatch):
    import sqlite3
    import subprocess

    import nbgrader.api

    from course.gradebook import open_gradebook, schema_revision
    from course.grading.nbgrader_command import nbgrader_env

    asked = nbgrader.api.get_alembic_version  # nbgrader's own, before open_gradebook replaces it
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", asked)
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])
    assert schema_revision() == asked()  # what `alembic heads` prints

    calls = []
    real_run = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(a) or real_run(*a, **k))
    with open_gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.add_student("ada")
    assert calls == [], "opening a new gradebook started a process"
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (schema_revision(),)
        ]
