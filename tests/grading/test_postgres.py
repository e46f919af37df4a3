"""A PostgreSQL gradebook: nbgrader's ``db_url`` on a real PostgreSQL server.

A throwaway server (tests/support/postgres.py: initdb into a temporary folder, a Unix socket only,
passwords from a PGPASSFILE) serves the whole session. On it:

* one class runs through every command of the workflow (``python -m course``: release,
  collect, autograde with 2 workers writing the one gradebook at once, feedback, grades), and
  the same class on the default SQLite gradebook: the gradebooks are equal field by field
  (a due date, a late penalty, an extension, a manual grade, comment and flag among them), and
  so are grades.csv, the class summary and the feedback; no gradebook file is written;
* two graders, separate processes with their own course folders, write the same gradebook at
  once; graders opening a new, empty database at once all get it;
* a wrong password, a missing database or a user without rights is an error that says what
  is wrong and how to fix it (a wrong URL and a server that is not there, without a server:
  tests/unit/test_gradebook_errors.py, with the check that nothing in course/ writes SQL into
  nbgrader's schema).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import psutil
import pytest
from support import REPO
from support import submissions as NB
from support.gradebooks import (
    DUE,
    LATE_CONFIG,
    gradebook_content,
    grades_error,
    merge_class,
    prepare,
)
from support.postgres import PostgresServer, PostgresUnavailable, server_bin
from support.submissions import course_root

from course import cli, gradebook, release
from course.config import Course

A1 = NB.A1
NOTEBOOK = NB.source(A1).name


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the session; stopped, with every process of it, at the end.
    Skipped only where PostgreSQL is missing and cannot be installed here (not root)."""
    try:
        server_bin()
    except PostgresUnavailable as err:
        if os.geteuid() != 0:
            pytest.skip(f"{err}; as root, `make test` installs it")
        raise
    server = PostgresServer().start()
    pids = [p.pid for p in server.processes()]
    yield server
    server.stop()
    left = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
    assert not left, f"PostgreSQL processes left running: {left}"


# ---------------------------------------------------------------------------------------
# One class through every command, on PostgreSQL and on SQLite
# ---------------------------------------------------------------------------------------
PROBE = """
import os
import socket

print("gradebook env:", sorted(k for k in os.environ if k.startswith("PG") or "GRADEBOOK" in k))
try:
    socket.socket(socket.AF_UNIX).connect({path!r})
    print("gradebook socket: reached")
except OSError as err:
    print("gradebook socket:", type(err).__name__)
"""


def learners(server: PostgresServer) -> dict[str, tuple[dict, object]]:
    """student -> (notebook, submitted at): the merge class of test_nbgrader (on time with no
    work, late with a mistake, late within an extension) and a solution that tries to reach
    the gradebook server from inside the sandbox."""
    probe = NB.insert_cell(NB.read(NB.source(A1)), "imports", PROBE.format(path=str(server.socket)))
    return {**merge_class(), "probe": (probe, DUE - timedelta(hours=1))}


@dataclass
class ClassRun:
    """What one run of the workflow left: its course root, gradebook URL and content."""

    root: Path
    url: str
    content: dict
    results: dict


def course_cli(root: Path, *args: str) -> None:
    """``python -m course --root ROOT ARGS``, in this process; it must succeed."""
    assert cli.main(["--root", str(root), *args]) == 0, args


def run_workflow(
    tmp: Path, url: str | None, server: PostgresServer, scheduler: str | None = None
) -> ClassRun:
    """The class through release, collect, autograde (2 workers; threads, or with
    ``scheduler="local"`` a Dask LocalCluster), feedback and grades, with the gradebook at
    ``url`` (None: the default SQLite file)."""
    root = course_root(tmp / "course")
    config = tmp / "jupyter_config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(LATE_CONFIG)
    downloads = tmp / "downloads"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_CONFIG_DIR", str(config))
        mp.setenv("PGPASSFILE", server.env()["PGPASSFILE"])
        if url:
            mp.setenv("AFZ_GRADEBOOK_URL", url)
        else:
            mp.delenv("AFZ_GRADEBOOK_URL", raising=False)
        course = Course(root)
        course_cli(root, "release", A1)
        for student, (nb, _) in learners(server).items():
            (downloads / student).mkdir(parents=True)
            (downloads / student / NOTEBOOK).write_text(json.dumps(nb))
        course_cli(root, "collect", str(downloads), "--assignment", A1)
        for student, (_, when) in learners(server).items():
            stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
            (root / "submitted" / student / A1 / "timestamp.txt").write_text(stamp)
        students = sorted(learners(server))
        with warnings.catch_warnings():  # nbgrader's add_submission under SQLAlchemy 2
            warnings.filterwarnings("ignore", "Object of type .* not in session")
            release.register(course, [A1], students, course.gradebook_url)
            prepare(course.gradebook_url, NB.source(A1).stem)
        where = ["--scheduler", scheduler] if scheduler else []
        course_cli(root, "autograde", A1, *where, "--workers", "2")
        course_cli(root, "feedback", A1)
        course_cli(root, "grades")
        url = course.gradebook_url
        content = gradebook_content(url, students)
        report = json.loads((root / "reports" / "autograde.json").read_text())
    return ClassRun(root, url, content, {r["student"]: r for r in report})


@pytest.fixture(scope="session")
def classes(pg_server, tmp_path_factory):
    """{"postgresql": ClassRun, "sqlite": ClassRun}: the same class, both gradebooks."""
    return {
        "postgresql": run_workflow(
            tmp_path_factory.mktemp("pg"), pg_server.create_database("workflow"), pg_server
        ),
        "sqlite": run_workflow(tmp_path_factory.mktemp("sqlite"), None, pg_server),
    }


def test_every_command_works_with_a_postgresql_gradebook(classes, pg_server):
    run = classes["postgresql"]
    assert run.url.startswith("postgresql+psycopg2://")
    assert {r["status"] for r in run.results.values()} == {"ok"}, run.results
    assert run.results["extended"]["score"] == run.results["probe"]["score"] == 22
    assert (run.root / "exercises" / A1 / NOTEBOOK).read_bytes() == (
        REPO / "exercises" / A1 / NOTEBOOK
    ).read_bytes()
    for student in learners(pg_server):
        assert (run.root / "feedback" / student / A1 / "attention.html").exists(), student
        # one way through the engine: each worker's nbgrader graded against its task's own
        # SQLite copy, and this process alone wrote the result into the server's gradebook
        log = (run.root / "reports" / "logs" / A1 / f"{student}.log").read_text()
        assert "--CourseDirectory.db_url=sqlite:///" in log.splitlines()[0], student
        assert run.url not in log, student
    assert {"submitted_assignment", "grade", "comment"} <= pg_server.tables("workflow")


def test_no_gradebook_file_is_written_with_postgresql(classes):
    assert not list(classes["postgresql"].root.rglob("*.db"))
    # ... where the same class on SQLite writes one
    assert (classes["sqlite"].root / "gradebook.db").exists()


def test_the_password_is_nowhere_in_the_course_folder(classes, pg_server):
    """The URL names no password (libpq reads PGPASSFILE, as it reads ~/.pgpass), so the
    command lines in reports/logs/ carry none."""
    root = classes["postgresql"].root
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert pg_server.grader_password not in path.read_text(errors="replace"), path


def test_same_gradebook_grades_and_feedback_as_sqlite(classes):
    pg, lite = classes["postgresql"], classes["sqlite"]
    assert pg.content == lite.content
    # ... and the content compared is the one that matters, not empty or all defaults
    nbs = {s: pg.content[s]["notebooks"][NB.source(A1).stem] for s in pg.content}
    assert pg.content["late"]["late"][0] > 0
    assert nbs["late"]["notebook"]["late_submission_penalty"] == nbs["late"]["notebook"]["score"]
    assert pg.content["extended"]["submission"]["extension"] == timedelta(days=2)
    assert nbs["extended"]["notebook"]["score"] == 22
    assert nbs["ontime"]["notebook"]["flagged"] is True
    assert nbs["ontime"]["grades"]["test_softmax"]["manual_score"] == 1.5
    assert nbs["ontime"]["comments"]["softmax"]["manual_comment"] == "see me"
    for name in ("grades.csv", "reports/summary.csv"):
        assert (pg.root / name).read_text() == (lite.root / name).read_text(), name
    for student in pg.content:
        html = [
            (run.root / "feedback" / student / A1 / "attention.html")
            .read_text()
            .replace(str(run.root), "ROOT")
            for run in (pg, lite)
        ]
        assert html[0] == html[1], student
    for student, r in pg.results.items():
        theirs = lite.results[student]
        assert (r["score"], r["status"], r["notes"]) == (
            theirs["score"],
            theirs["status"],
            theirs["notes"],
        ), student


def test_a_sandboxed_notebook_cannot_reach_the_gradebook(classes, pg_server):
    """The kernel sees neither the server's socket nor the password file's name; from here
    (outside the sandbox) the same socket answers."""
    nb = NB.read(classes["postgresql"].root / "autograded" / "probe" / A1 / NOTEBOOK)
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "gradebook env: []" in text, text
    assert "gradebook socket: FileNotFoundError" in text, text
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(pg_server.socket))


def test_dask_workers_with_a_postgresql_gradebook_grade_as_sqlite(classes, pg_server, tmp_path):
    """The same class graded by Dask workers (a LocalCluster: each grades in an SQLite seed
    made from the PostgreSQL gradebook, and this process merges the results into it)."""
    url = pg_server.create_database("dask_workflow")
    run = run_workflow(tmp_path, url, pg_server, scheduler="local")
    assert run.content == classes["sqlite"].content
    assert not list(run.root.rglob("*.db"))


# ---------------------------------------------------------------------------------------
# Several graders at once
# ---------------------------------------------------------------------------------------
def test_two_graders_write_one_gradebook_at_once(pg_server, tmp_path):
    """Two ``python -m course autograde`` processes, each with its own course folder (as on
    two machines) and one learner, grade into the same gradebook at the same time."""
    url = pg_server.create_database("two_graders")
    env = {**os.environ, **pg_server.env(), "AFZ_GRADEBOOK_URL": url}
    submissions = {
        "alice": NB.read(NB.source(A1)),
        "bob": NB.mutate(NB.read(NB.source(A1)), *NB.MISTAKES[A1][0][1:]),
    }
    roots = {s: course_root(tmp_path / s) for s in submissions}
    # The gradebook is made once, by the release, before the graders start.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AFZ_GRADEBOOK_URL", url)
        mp.setenv("PGPASSFILE", pg_server.env()["PGPASSFILE"])
        course_cli(roots["alice"], "release", A1)
    graders = {}
    for student, nb in submissions.items():
        NB.submit(roots[student], student, A1, nb)
        cmd = [sys.executable, "-m", "course", "--root", str(roots[student]), "autograde", A1]
        graders[student] = subprocess.Popen(
            [*cmd, "--workers", "1"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    outputs = {s: p.communicate(timeout=600)[0] for s, p in graders.items()}
    for student, p in graders.items():
        assert p.returncode == 0, outputs[student]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PGPASSFILE", pg_server.env()["PGPASSFILE"])
        scores = gradebook.submission_scores(url, [(A1, s) for s in submissions])
    assert scores[(A1, "alice")] == (22, 22)
    assert scores[(A1, "bob")][0] is not None and 0 < scores[(A1, "bob")][0] < 22
    for student, out in outputs.items():
        assert re.search(rf"{A1}\s+{student}\s+{scores[(A1, student)][0]:5.1f}/22", out), out


def test_graders_opening_a_new_database_at_once_all_get_it(pg_server):
    """Each grader that finds the database empty creates nbgrader's tables; all but one
    collide on a duplicate, and open it again once the tables are there."""
    url = pg_server.create_database("new_at_once")
    errors: list[BaseException] = []

    def open_it(student: str) -> None:
        try:
            with gradebook.open_gradebook(url) as gb:
                gb.update_or_create_student(student)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PGPASSFILE", pg_server.env()["PGPASSFILE"])
        threads = [threading.Thread(target=open_it, args=(s,)) for s in "abcd"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        with gradebook.open_gradebook(url) as gb:
            assert sorted(s.id for s in gb.students) == list("abcd")


# ---------------------------------------------------------------------------------------
# Clear errors
# ---------------------------------------------------------------------------------------


def test_wrong_password_missing_database_and_rights_say_how_to_fix(pg_server, tmp_path, capsys):
    server = pg_server
    err = grades_error(tmp_path / "1", server.url("postgres", password="wrong"), capsys)
    assert "password authentication failed" in err and "~/.pgpass" in err
    assert "wrong" not in err.replace("password is wrong", "")
    url = server.url("nosuchdb", password=server.grader_password)
    err = grades_error(tmp_path / "2", url, capsys)
    assert 'database "nosuchdb" does not exist' in err
    assert "createdb --owner=grader nosuchdb" in err
    server.admin_sql("CREATE DATABASE not_graders")  # owned by the superuser
    err = grades_error(tmp_path / "3", server.url("not_graders"), capsys, **server.env())
    assert "permission denied" in err and "ALTER DATABASE not_graders OWNER TO grader" in err
