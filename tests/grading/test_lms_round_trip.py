"""From each LMS's download to grades in its import file, with the course's commands only,
the LMS's own import rules as the oracle.

One course root, one graded class: the downloads of Canvas, Moodle (4.1, German worksheet),
Blackboard and GitHub Classroom (tests/support/lms_downloads.py: each built as its LMS's code
writes it) are collected into it with their rosters and graded once (16 notebooks). Every
learner who handed in is graded under their roster row, the attacker (whose file name imitates
another learner's LMS name and a later time) under their own, with their own time. Each
export is read back by its LMS's importer (tests/support/lms_oracle.py): Canvas's
"no change to value", Moodle's empty = no grade, Blackboard's changed cells; only the graded
learners' grades change, a grade the instructor typed into the LMS stays. A notebook collected
again after grading stops the export until it is graded again.
"""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

import pytest
from support import lms_downloads as L
from support.lms_oracle import (
    blackboard_upload,
    canvas_import,
    canvas_state,
    changed,
    moodle_import,
)
from support.submissions import make_root

from course import gradebook, release
from course.cli import main
from course.config import Course

pytestmark = pytest.mark.usefixtures("grading_env")
A1 = "01_attention"
HANDED_IN = ("ontime", "late", "renamed", "attacker")
CANVAS = {"semicolon": True, "bom": True, "split_names": True}  # a German user's export
BLACKBOARD_XLS = {"xls": True, "newline": "\r\n"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lms")
    root = make_root(tmp / "course")
    url = f"sqlite:///{root / 'gradebook.db'}"
    release.register(Course(root), [A1], [], url)  # the assignment in the gradebook
    with gradebook.open_gradebook(url) as gb:
        gb.update_or_create_assignment(A1, duedate=L.DUE)
    classes = {}
    for name, extra in [
        ("canvas", []),
        ("moodle", ["--timezone", "Europe/Berlin"]),
        ("blackboard", ["--assignment", A1]),
        ("github-classroom", []),
    ]:
        folder = tmp / name
        folder.mkdir()
        download, roster, learners = build(name, folder)
        args = ["--root", str(root), "collect", str(download), "--roster", str(roster)]
        assert main([*args, *extra]) == 0, name
        classes[name] = (download, roster, learners)
    assert main(["--root", str(root), "autograde", A1, "--workers", "2"]) == 0
    return root, classes


def build(name: str, folder: Path) -> tuple[Path, Path, list[L.Learner]]:
    """The class of one LMS: its download, the roster it is collected with, its learners."""
    if name == "canvas":
        return L.canvas(folder, **CANVAS)
    if name == "moodle":
        return L.moodle(folder, lang=L.DE)
    if name == "blackboard":  # the .xls download: the roster, and the file grades go into
        download, _, learners = L.blackboard(folder)
        xls = folder / "gc_export.xls"
        xls.write_bytes(L.grade_center(grade_center(learners), **BLACKBOARD_XLS))
        return download, xls, learners
    return L.github_classroom(folder)


def grade_center(learners: list[L.Learner], cells: dict[str, str] | None = None) -> list:
    """The rows of the class's Grade Center download, its header first."""
    return [L.GC_HEADER, *L.grade_center_rows(learners, cells)]


def points(score: float) -> str:
    """A score as the import files write it."""
    return f"{score:.2f}".rstrip("0").rstrip(".")


def scores_of(root: Path) -> dict[str, float]:
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(A1)}


def test_every_learner_who_handed_in_is_graded_under_their_roster_row(graded):
    root, classes = graded
    got = scores_of(root)
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        top = gb.find_assignment(A1).max_score
    for name, (_, _, learners) in classes.items():
        k = L.by_kind(learners)
        assert got[k["ontime"].student_id] == top, name  # the attacker took nothing of it
        assert got[k["renamed"].student_id] == top, name
        assert 0 < got[k["late"].student_id] < top, name
        assert got[k["attacker"].student_id] == 0, name  # their own notebook: no work
        assert k["absent"].student_id not in got and k["quiet"].student_id not in got
    assert len(got) == 4 * len(HANDED_IN)  # no stranger was graded


def test_times_come_from_the_lms_never_from_a_learners_file_name(graded):
    root, classes = graded
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for name, (_, _, learners) in classes.items():
            k = L.by_kind(learners)
            late = gb.find_submission(A1, k["late"].student_id)
            ontime = gb.find_submission(A1, k["ontime"].student_id)
            if name == "github-classroom":  # commit times are the learner's: not used
                assert late.timestamp is None
                continue
            assert late.total_seconds_late > 0, name
            assert ontime.total_seconds_late == 0, name
            if name in ("blackboard", "moodle"):
                assert late.timestamp == L.DUE + timedelta(hours=5, minutes=30), name
            if name == "blackboard":  # the name it chose said 2049, the LMS 03-02
                attacker = gb.find_submission(A1, k["attacker"].student_id)
                assert attacker.timestamp == L.DUE + L.late_by(k["attacker"])


def test_canvas_round_trip(graded, capsys):
    root, classes = graded
    _, export, learners = classes["canvas"]
    k = L.by_kind(learners)
    got = scores_of(root)
    out = root / "canvas_import.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01 (4567)"]
    assert main([*args, "--out", str(out), "--missing", "zero"]) == 0
    state = canvas_state(export.read_bytes())
    after = canvas_import(state, out.read_bytes())  # Canvas's importer
    moved = changed(state, after)
    graded_ids = {k[kind].lms_id for kind in HANDED_IN} | {k["quiet"].lms_id}
    assert {who for who, _ in moved} == graded_ids  # the quiet learner's 0 (--missing zero)
    for kind in HANDED_IN:
        x = k[kind]
        assert float(after[(x.lms_id, L.CANVAS_COLUMN)]) == pytest.approx(
            got[x.student_id], abs=0.005
        )
    assert after[(k["absent"].lms_id, L.CANVAS_COLUMN)] == "7.00"  # the typed-in grade
    cells = {
        x.username: f"{got[x.student_id]:.2f}".replace(".", ",")
        for x in (k[kind] for kind in HANDED_IN)
    }
    cells[k["quiet"].username] = "0"
    assert out.read_bytes() == L.canvas_export(learners, cells, **CANVAS)  # nothing else moved
    assert "4 score(s) written" in capsys.readouterr().out


def test_moodle_round_trip(graded):
    root, classes = graded
    _, worksheet, learners = classes["moodle"]
    k = L.by_kind(learners)
    got = scores_of(root)
    out = root / "moodle_import.csv"
    args = ["--root", str(root), "grades", "--format", "moodle", "--assignment", A1]
    args += ["--roster", str(worksheet)]  # this class only (roster.csv holds all four)
    assert main([*args, "--key", "email", "--out", str(out)]) == 0
    state = {x.email: (L.HAND_GRADE if x.kind == "absent" else None) for x in L.roster_of(learners)}
    after = moodle_import(state, out.read_text(encoding="utf-8"), "Email address", A1)
    assert set(changed(state, after)) == {k[kind].email for kind in HANDED_IN}
    for kind in HANDED_IN:
        assert after[k[kind].email] == pytest.approx(got[k[kind].student_id], abs=0.005)
    assert after[k["absent"].email] == L.HAND_GRADE and after[k["quiet"].email] is None


@pytest.mark.parametrize("form", ["xls", "csv"])
def test_blackboard_round_trip(graded, capsys, form):
    root, classes = graded
    _, xls, learners = classes["blackboard"]
    download = xls
    if form == "csv":  # the same Grade Center, comma-delimited
        download = xls.with_suffix(".csv")
        download.write_bytes(L.grade_center(grade_center(learners)))
    got = scores_of(root)
    args = ["--root", str(root), "grades", "--format", "blackboard", "--assignment", A1]
    args += ["--blackboard-export", str(download), "--column", "Attention 01"]
    assert main(args) == 0
    out = root / f"grades_blackboard.{form}"
    cells = {
        x.username: points(got[x.student_id]) for x in L.roster_of(learners) if x.kind in HANDED_IN
    }
    kind = BLACKBOARD_XLS if form == "xls" else {}
    assert out.read_bytes() == L.grade_center(grade_center(learners, cells), **kind)
    upload = grade_center(learners, cells)
    assert set(blackboard_upload(grade_center(learners), upload, L.GC_COLUMN)) == set(cells)
    printed = capsys.readouterr().out
    assert "4 score(s) written" in printed
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        top = points(gb.find_assignment(A1).max_score)
    assert f"column is out of 12 points, {A1} out of {top}" in printed  # the download's 12


def test_github_classroom_through_grades_csv(graded):
    root, classes = graded
    got = scores_of(root)
    assert main(["--root", str(root), "grades"]) == 0
    with (root / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = {r["student"]: float(r["score"]) for r in csv.DictReader(f)}
    for x in L.roster_of(classes["github-classroom"][2]):
        if x.kind in HANDED_IN:
            assert rows[x.student_id] == pytest.approx(got[x.student_id])


def test_a_notebook_collected_after_grading_stops_the_export_until_graded(graded, capsys):
    """Runs last: it changes the class."""
    root, classes = graded
    _, export, learners = classes["canvas"]
    k = L.by_kind(learners)
    again = L.write_zip(root.parent / "again.zip", {f"garcíajosé_101_10102_{L.NB}": L.PARTIAL})
    assert main(["--root", str(root), "collect", str(again), "--layout", "canvas"]) == 0
    out = root / "canvas_again.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01", "--out", str(out)]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{k['ontime'].student_id} (not graded since it was collected again)" in err
    assert not out.exists()
    assert main(["--root", str(root), "autograde", A1]) == 0  # grades the changed one only
    assert "skipped 15 submission(s) already graded" in capsys.readouterr().out
    assert main(args) == 0
    state = canvas_state(export.read_bytes())
    after = canvas_import(state, out.read_bytes())
    new = float(after[(k["ontime"].lms_id, L.CANVAS_COLUMN)])
    assert new == pytest.approx(scores_of(root)[k["ontime"].student_id], abs=0.005)
    assert new < 12
