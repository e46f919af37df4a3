"""`python -m course collect` of LMS downloads: Canvas, Moodle, Blackboard, GitHub Classroom.

Quick: no grading (tests/grading/test_lms_round_trip.py grades and exports them). Each
download is built as its LMS names its files (tests/support/lms_downloads.py cites each LMS's
documentation), with unicode names, a late submission, an upload again, a learner missing from
the roster, a renamed notebook and a file that is not a notebook. The roster goes into a real
gradebook through nbgrader's own student import.
"""

from __future__ import annotations

import csv
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from support import lms_downloads as L

from course import gradebook
from course.cli import main
from course.collect import collect
from course.config import Course, CourseError
from course.lms import clone_prefix, detect, notebook_for, place
from course.roster import read_roster

REPO = Path(__file__).resolve().parents[2]
A1 = "01_attention"


def course_root(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "solutions").symlink_to(REPO / "solutions")
    return root


def report(root: Path) -> list[dict[str, str]]:
    with (root / "reports" / "collect.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def row_of(root: Path, file_part: str) -> dict[str, str]:
    rows = [r for r in report(root) if file_part in r["source_path"]]
    assert len(rows) == 1, (file_part, rows)
    return rows[0]


def students_in_gradebook(root: Path) -> dict[str, tuple]:
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id) for s in gb.students}


def set_due_date(root: Path) -> None:
    with gradebook.open_gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(A1, duedate=L.DUE)


def sub(root: Path, sid: str, name: str = L.NB) -> Path:
    return root / "submitted" / sid / A1 / name


def by_kind(learners) -> dict[str, L.Learner]:
    return {x.kind: x for x in learners}


# ---------------------------------------------------------------------------------------
# names
# ---------------------------------------------------------------------------------------
def test_each_layout_reads_its_own_names():
    c = place("canvas", ("zhang伟_LATE_102_9102_attention-1.ipynb",))
    assert (c.who, c.shown, c.file, c.late) == ("102", "zhang伟", "attention-1.ipynb", True)
    assert "uploaded again" in c.note
    assert (
        place("canvas", ("garcíajosé_101_9101_attention (1).ipynb",)).file == "attention (1).ipynb"
    )
    m = place("moodle", ("Zoë Ødegaard_503_assignsubmission_file_", "sub", "a.ipynb"))
    assert (m.who, m.shown, m.file) == ("503", "Zoë Ødegaard", "sub/a.ipynb")
    flat = place("moodle", ("José García_501_assignsubmission_file_attention.ipynb",))
    assert (flat.who, flat.file) == ("501", "attention.ipynb")
    b = place("blackboard", ("Attention 01_zwei_attempt_2026-03-01-17-30-00_attention.ipynb",))
    assert (b.who, b.assignment, b.submitted_at) == (
        "zwei",
        "Attention 01",
        datetime(2026, 3, 1, 17, 30),
    )
    receipt = place("blackboard", ("Attention 01_zwei_attempt_2026-03-01-17-30-00.txt",))
    assert receipt.receipt
    g = place(
        "github-classroom", ("attention-01-zhang-wei", "01_attention", "x.ipynb"), "attention-01-"
    )
    assert (g.who, g.file) == ("zhang-wei", "01_attention/x.ipynb")
    assert place("canvas", ("alice", A1, "attention.ipynb")) is None


def test_the_clone_prefix_is_the_common_part_of_the_folder_names():
    assert clone_prefix(["attention-01-ann", "attention-01-bob-b"], []) == "attention-01-"
    assert clone_prefix(["attention-01-bob-b"], ["bob-b"]) == "attention-01-"


def test_a_renamed_notebook_is_taken_only_when_it_is_the_only_one():
    assert notebook_for(["attention (1).ipynb", "notes.pdf"], [L.NB]) == (
        "attention (1).ipynb",
        L.NB,
    )
    assert notebook_for(["a.ipynb", "b.ipynb"], [L.NB]) is None
    assert notebook_for([L.NB], [L.NB]) is None


def test_detect_tells_the_layouts_apart(tmp_path):
    for build, layout in [
        (L.canvas, "canvas"),
        (L.moodle, "moodle"),
        (L.blackboard, "blackboard"),
        (L.github_classroom, "github-classroom"),
    ]:
        download, _, _ = build(_fresh(tmp_path, layout))
        if download.is_file():
            with zipfile.ZipFile(download) as zf:
                files = [tuple(n.split("/")) for n in zf.namelist()]
        else:
            files = [p.relative_to(download).parts for p in download.rglob("*") if p.is_file()]
        assert detect(files, 0) == layout


def _fresh(tmp: Path, name: str) -> Path:
    (tmp / name).mkdir()
    return tmp / name


# ---------------------------------------------------------------------------------------
# rosters
# ---------------------------------------------------------------------------------------
def test_rosters_of_each_lms_give_course_ids(tmp_path):
    _, canvas, _ = L.canvas(_fresh(tmp_path, "c"))
    learners = read_roster(canvas)  # Points Possible and the test student are no learners
    assert [(x.student_id, x.lms_user_id, x.first_name, x.last_name) for x in learners] == [
        ("jgarcia-c", "101", "José", "García"),
        ("zwei-c", "102", "伟", "张"),
        ("zodegaard-c", "103", "Zoë", "Ødegaard"),
    ]
    _, worksheet, _ = L.moodle(_fresh(tmp_path, "m"))
    m = read_roster(worksheet)
    assert [(x.student_id, x.participant, x.idnumber) for x in m][0] == (
        "jgarcia-m",
        "501",
        "ID501",
    )
    _, gc, _ = L.blackboard(_fresh(tmp_path, "b"))
    assert [x.username for x in read_roster(gc)] == ["jgarcia-b", "zwei-b", "zodegaard-b"]
    _, gh, _ = L.github_classroom(_fresh(tmp_path, "g"))
    assert [x.student_id for x in read_roster(gh)] == ["jgarcia-g", "zwei-g", "zodegaard-g"]


def test_blackboards_tab_delimited_xls_in_utf16_is_a_roster_as_its_csv_is(tmp_path):
    _, gc, learners = L.blackboard(_fresh(tmp_path, "b"))
    xls = tmp_path / "gc.xls"  # the same Grade Center, downloaded tab-delimited
    rows = [L.GC_HEADER, *L.grade_center_rows(learners)]
    xls.write_bytes(L.grade_center(rows, xls=True, newline="\r\n"))
    assert read_roster(xls) == read_roster(gc)
    assert [x.first_name for x in read_roster(xls)] == ["José", "伟", "Zoë"]


@pytest.mark.parametrize(
    "text, why",
    [
        ("Student,ID,SIS Login ID\nA,1,ann\nB,1,bob\n", r"lms_user_id '1' twice \(lines 2 and 3\)"),
        ("student_id,email\nann,a@x\nann,b@x\n", r"student_id 'ann' twice"),
        ("Student,ID,SIS Login ID\n", "lists no learner"),
        ("", "is empty"),
        ("Color,Size\nred,3\n", "none of the columns that name a learner"),
        ("student_id\nAnn Lee!\n", "not a usable student id"),
    ],
)
def test_a_bad_roster_is_refused_by_name_and_nothing_is_written(tmp_path, text, why):
    root = course_root(tmp_path / "course")
    download, _, _ = L.canvas(_fresh(tmp_path, "c"))
    roster = tmp_path / "bad roster.csv"
    roster.write_text(text, encoding="utf-8")
    with pytest.raises(CourseError, match=why) as err:
        collect(download, Course(root), roster=roster)
    assert "bad roster.csv" in str(err.value)
    assert not (root / "gradebook.db").exists() and not (root / "submitted").exists()
    assert not (root / "roster.csv").exists()


def test_a_download_of_another_layout_or_an_empty_one_is_refused(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, roster, _ = L.moodle(_fresh(tmp_path, "m"))
    with pytest.raises(
        CourseError,
        match=r"moodle-download\.zip is not a canvas download.*"
        r"looks like a moodle download \(--layout moodle\)",
    ):
        collect(download, Course(root), layout="canvas", roster=roster)
    empty = L.write_zip(tmp_path / "empty.zip", {})
    assert main(["--root", str(root), "collect", str(empty), "--roster", str(roster)]) == 2
    assert "empty.zip is empty" in capsys.readouterr().err
    canvas_download, _, _ = L.canvas(_fresh(tmp_path, "c"))
    _, blackboard_export, _ = L.blackboard(_fresh(tmp_path, "b"))
    with pytest.raises(CourseError, match=r"gc_export\.csv gives no learner a canvas lms user"):
        collect(canvas_download, Course(root), roster=blackboard_export)  # another LMS's list
    with pytest.raises(CourseError, match="give --roster FILE"):
        collect(download, Course(root))  # no roster, none kept from before
    assert not (root / "gradebook.db").exists() and not (root / "submitted").exists()


# ---------------------------------------------------------------------------------------
# collecting each layout
# ---------------------------------------------------------------------------------------
def check_class(root: Path, learners, capsys_out: str, notebook_of: dict[str, str]) -> None:
    """What every layout must give: the roster's learners in the gradebook, their notebooks
    in submitted/ under their course ids, the stranger rejected and kept, the renamed
    notebook taken and named, the PDF skipped."""
    k = by_kind(learners)
    in_gb = students_in_gradebook(root)
    for kind in ("ontime", "late", "renamed"):
        x = k[kind]
        names = in_gb[x.student_id][:2]  # Moodle's worksheet has the full name only
        assert names in ((x.first, x.last), (None, f"{x.first} {x.last}")), names
        assert sub(root, x.student_id).read_bytes() == x.notebook, kind
    assert len(in_gb) == 3  # the stranger is not invented into the gradebook
    stranger = row_of(root, notebook_of["stranger"])
    assert stranger["outcome"] == "rejected" and "not in the roster" in stranger["reason"]
    assert (root / stranger["kept_as"]).read_bytes() == k["stranger"].notebook
    renamed = row_of(root, notebook_of["renamed"])
    assert renamed["outcome"] == "accepted" and renamed["file"] == L.NB
    assert "the learner's only notebook" in renamed["reason"]
    pdf = row_of(root, "notes.pdf")
    assert (pdf["outcome"], pdf["reason"]) == ("skipped", "not a notebook (.ipynb)")
    assert "not in the roster" in capsys_out and "only notebook" in capsys_out


def test_canvas(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, export, learners = L.canvas(_fresh(tmp_path, "c"))
    k = by_kind(learners)
    collect(download, Course(root), roster=export)  # layout and assignment recognised
    out = capsys.readouterr().out
    check_class(root, learners, out, {"stranger": "personmissing_", "renamed": "attention (1)"})
    assert "01_attention (from the notebooks' names)" in out
    late = row_of(root, "_LATE_")
    assert "uploaded again" in late["reason"] and "canvas marks it late" in late["reason"]
    # No due date in the gradebook: the late flag cannot be a time, and the collect says so.
    assert not sub(root, k["late"].student_id, "timestamp.txt").exists()
    assert "no due date for 01_attention" in out
    set_due_date(root)
    collect(download, Course(root), layout="canvas")  # the roster kept from before
    stamp = sub(root, k["late"].student_id, "timestamp.txt").read_text()
    assert stamp == "2026-03-01 12:00:01.000000 UTC"  # the first second after the due date
    assert not sub(root, k["ontime"].student_id, "timestamp.txt").exists()


def test_moodle_folders_flat_files_and_the_worksheets_times(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(_fresh(tmp_path, "m"))
    k = by_kind(learners)
    args = ["--root", str(root), "collect", str(download), "--roster", str(worksheet)]
    assert main([*args, "--timezone", "Europe/Berlin"]) == 0
    out = capsys.readouterr().out
    check_class(root, learners, out, {"stranger": "Missing Person", "renamed": "attention-final"})
    late = sub(root, k["late"].student_id, "timestamp.txt").read_text()
    assert late == "2026-03-01 17:30:00.000000 UTC"  # 6:30 PM in Berlin
    # Moodle keeps only the latest upload: uploading again is a newer download, collected
    # again; the earlier submission goes to archive/.
    again = L.write_zip(
        tmp_path / "again.zip",
        {
            "José García_501_assignsubmission_file_/attention.ipynb": L.PARTIAL,
        },
    )
    collect(again, Course(root), layout="moodle")
    assert sub(root, k["ontime"].student_id).read_bytes() == L.PARTIAL
    assert "replaces the earlier submission" in row_of(root, "José García")["reason"]


def test_blackboard_attempts_and_receipts(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, export, learners = L.blackboard(_fresh(tmp_path, "b"))
    k = by_kind(learners)
    collect(download, Course(root), roster=export, assignment=A1)
    out = capsys.readouterr().out
    check_class(
        root,
        learners,
        out,
        {"stranger": "_mperson-b_attempt_2026-02-28-10-00-00_att", "renamed": "attention (1)"},
    )
    late = k["late"].student_id
    assert sub(root, late, "timestamp.txt").read_text() == "2026-03-01 17:30:00.000000 UTC"
    earlier = row_of(root, f"{k['late'].username}_attempt_2026-03-01-09-00-00_attention")
    assert earlier["outcome"] == "superseded" and "latest attempt" in earlier["reason"]
    assert (root / earlier["kept_as"]).read_bytes() == L.GOOD
    receipt = row_of(root, f"{k['late'].username}_attempt_2026-03-01-17-30-00.txt")
    assert receipt["outcome"] == "skipped" and "receipt" in receipt["reason"]
    assert "1 earlier attempt(s) kept aside" in out


def test_github_classroom_clones(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, roster, learners = L.github_classroom(_fresh(tmp_path, "g"))
    collect(download, Course(root), roster=roster)
    out = capsys.readouterr().out
    check_class(
        root, learners, out, {"stranger": "mperson-g/attention.ipynb", "renamed": "attention-final"}
    )
    git = [r for r in report(root) if "/.git/" in r["source_path"]]
    assert git and {r["reason"] for r in git} == {"git's own files (.git/), ignored"}
    assert not list((root / "submitted").rglob("timestamp.txt"))  # commit times are not used


def test_the_course_layout_is_unchanged_and_may_import_a_roster(tmp_path):
    root = course_root(tmp_path / "course")
    src = L.write_folder(tmp_path / "src", {f"alice/{A1}/{L.NB}": L.GOOD})
    roster = tmp_path / "r.csv"
    roster.write_text("student_id,first_name,last_name,email\nalice,Alice,Liddell,a@x\n")
    collect(src, Course(root), roster=roster)
    assert sub(root, "alice").read_bytes() == L.GOOD
    assert students_in_gradebook(root)["alice"] == ("Alice", "Liddell", "a@x", None)
