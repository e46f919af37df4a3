"""`python -m course grades --format canvas|moodle|blackboard`: the LMS's import files.

Quick: the learners come into a real gradebook through a collect with the roster, and none is
graded here, so each gets what ``--missing`` asks; tests/grading/test_lms_round_trip.py
exports real grades. The Canvas export and Blackboard's Grade Center download (.csv, or .xls in
UTF-16) must come back byte for byte but for the one column.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from support import lms_downloads as L

from course import lms_grades
from course.cli import main
from course.collect import collect
from course.config import Course, CourseError
from course.lms_grades import blackboard, records
from course.roster import read_roster, save_roster

REPO = Path(__file__).resolve().parents[2]
A1 = "01_attention"


def course_root(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "solutions").symlink_to(REPO / "solutions")
    return root


def fresh(tmp: Path, name: str) -> Path:
    (tmp / name).mkdir()
    return tmp / name


def test_records_keep_every_byte_of_quoted_fields():
    text = '\ufeffa,"b, ""c""",d\r\n"multi\nline",,x\r\nlast,row,"q"'
    rows = list(records(text, Path("x.csv")))
    assert [[v for _, _, v in r] for r in rows] == [
        ["\ufeffa", 'b, "c"', "d"],
        ["multi\nline", "", "x"],
        ["last", "row", "q"],
    ]
    for r in rows:  # each span is the field's raw text
        assert [text[a:b] for a, b, _ in r][1] in ('"b, ""c"""', "", "row")


def test_canvas_fills_one_column_and_keeps_every_other_byte(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, export, learners = L.canvas(fresh(tmp_path, "c"))
    collect(download, Course(root), roster=export)
    out = tmp_path / "back.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01", "--out", str(out)]
    assert main([*args, "--missing", "zero"]) == 0
    printed = capsys.readouterr().out
    expected = export.read_bytes()
    for x in L.roster_of(learners):  # nobody graded: each roster learner's cell becomes 0
        old = f"{x.username},Section 1,4.50,,".encode()
        assert expected.count(old) == 1
        expected = expected.replace(old, f"{x.username},Section 1,4.50,0,".encode())
    assert out.read_bytes() == expected  # BOM, CRLF, quotes, other rows: byte for byte
    assert "0 graded, 3 without a submission (0)" in printed
    assert main(args) == 0  # --missing empty (the default): the file comes back unchanged
    assert out.read_bytes() == export.read_bytes()
    assert main([*args[:-4], "--column", "Nope", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no column 'Nope'" in err and "Attention 01 (4567)" in err


def test_moodle_rows_by_the_chosen_key_and_never_drops_a_learner(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"))
    collect(download, Course(root), roster=worksheet)
    out = tmp_path / "moodle.csv"
    args = ["--root", str(root), "grades", "--format", "moodle", "--assignment", A1]
    assert main([*args, "--key", "idnumber", "--missing", "zero", "--out", str(out)]) == 0
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["ID number", "Full name", A1]
    assert rows[1:] == [
        [f"ID{x.lms_id}", f"{x.first} {x.last}", "0"] for x in L.roster_of(learners)
    ]
    assert "3 row(s)" in capsys.readouterr().out
    assert main([*args, "--key", "username", "--out", str(out)]) == 2  # the worksheet has none
    assert "the roster has no username for jgarcia-m" in capsys.readouterr().err


def test_an_lms_format_without_a_roster_says_how_to_get_one(tmp_path):
    root = course_root(tmp_path / "course")
    from course.lms_grades import moodle

    with pytest.raises(CourseError, match="give --roster FILE"):
        moodle(Course(root), A1, "email", tmp_path / "x.csv")


# ---------------------------------------------------------------------------------------
# Blackboard: the Grade Center download (tests/support/lms_downloads.py describes its two
# forms), comma-delimited UTF-8 .csv or tab-delimited UTF-16 .xls, filled in place
# ---------------------------------------------------------------------------------------
BB_HEADER = [
    *L.GC_USER,
    "Quiz 0 [Total Pts: 5 Score] |1233",
    L.GC_COLUMN,
    "Weighted Total [Total Pts: up to 0 Percentage] |1235",
]


def bb_rows(learners, cells=None, drop=()):
    """A Full Grade Center: the roster's learners (but ``drop``), with a column before and
    after the assignment's; the stranger, whose name holds a comma and quotes; the preview
    user Blackboard adds."""
    rows = [BB_HEADER]
    for row in L.grade_center_rows(learners, cells):
        if row[2] not in drop:
            rows.append([*row[:6], "4.5", row[6], "37.5"])
    x = next(x for x in learners if x.kind == "stranger")
    rows.append([f'{x.last}, "Jr."', x.first, x.username, "", "", "Available", "5", "9", "90"])
    rows.append(["Student", "Preview", "bb_previewuser", "", "", "Available", "", "", ""])
    return rows


FORMS = {  # name: how Blackboard (or a spreadsheet saving it again) writes the file
    "csv": dict(bom=True, newline="\r\n"),
    "xls": dict(xls=True, newline="\r\n"),
    "xls-bare": dict(xls=True, quoted=False),
}


def blackboard_class(tmp: Path, form: str, collected: bool = True, **rows):
    """A course root with the Blackboard class collected (nobody graded; else only its
    roster.csv), and its Grade Center download of ``form``; (root, the download, the
    learners)."""
    root = course_root(tmp / "course")
    download, export, learners = L.blackboard(fresh(tmp, "b"))
    if collected:
        collect(download, Course(root), A1, roster=export)
    else:
        save_roster(root, read_roster(export))
    gc = tmp / f"gc_full.{form.partition('-')[0]}"
    gc.write_bytes(L.grade_center(bb_rows(learners, **rows), **FORMS[form]))
    return root, gc, learners


def test_records_split_tab_delimited_text_too():
    text = '"a"\t"b\tc"\td\r\n\t"x"\t'
    rows = list(records(text, Path("x.xls"), "\t"))
    assert [[v for _, _, v in r] for r in rows] == [["a", "b\tc", "d"], ["", "x", ""]]


@pytest.mark.parametrize("form", FORMS)
def test_blackboard_fills_one_column_and_keeps_every_other_byte(tmp_path, capsys, form):
    root, gc, learners = blackboard_class(tmp_path, form)
    args = ["--root", str(root), "grades", "--format", "blackboard", "--assignment", A1]
    args += ["--blackboard-export", str(gc), "--column", L.GC_COLUMN]
    assert main([*args, "--missing", "zero"]) == 0  # written beside the download's name
    out = root / f"grades_blackboard{gc.suffix}"
    zero = {x.username: "0" for x in L.roster_of(learners)}
    assert out.read_bytes() == L.grade_center(bb_rows(learners, zero), **FORMS[form])
    printed = capsys.readouterr().out
    assert "0 graded, 3 without a submission (0)" in printed
    assert "not in the roster: mperson-b, bb_previewuser" in printed
    assert ("tab-delimited UTF-16" if form != "csv" else "comma-delimited UTF-8") in printed
    for column in ("Attention 01", "1234", "|1234"):  # its name, its column id
        assert main([*args[:-2], "--column", column, "--missing", "zero"]) == 0
        assert out.read_bytes() == L.grade_center(bb_rows(learners, zero), **FORMS[form])
    assert main(args) == 0  # --missing empty: the cells were empty, the file comes back as is
    assert out.read_bytes() == gc.read_bytes()


def test_blackboard_reports_a_roster_learner_missing_from_the_download(tmp_path, capsys):
    root, gc, learners = blackboard_class(tmp_path, "xls", drop=("zwei-b",))
    out = tmp_path / "back.xls"
    blackboard(Course(root), A1, gc, "Attention 01", out, "zero")
    printed = capsys.readouterr().out
    assert "0 graded, 2 without a submission (0)" in printed
    assert "in the roster but not in" in printed and printed.rstrip().endswith("zwei-b")
    zero = {x.username: "0" for x in L.roster_of(learners)}
    rows = bb_rows(learners, zero, drop=("zwei-b",))
    assert out.read_bytes() == L.grade_center(rows, **FORMS["xls"])


def test_blackboard_writes_points_and_says_when_the_column_has_others(
    tmp_path, capsys, monkeypatch
):
    root, gc, learners = blackboard_class(tmp_path, "csv")
    got = {"jgarcia-b": 12.0, "zwei-b": 10 / 3, "zodegaard-b": None}  # graded, graded, missing
    monkeypatch.setattr(lms_grades, "scores", lambda course, assignment: (got, 12.0))
    capsys.readouterr()
    out = tmp_path / "back.txt"
    blackboard(Course(root), A1, gc, "1234", out)
    cells = {"jgarcia-b": "12", "zwei-b": "3.33"}
    assert out.read_bytes() == L.grade_center(bb_rows(learners, cells), **FORMS["csv"])
    printed = capsys.readouterr().out
    assert "2 graded, 1 without a submission (empty)" in printed
    assert "NOTE" not in printed  # 12 points both sides; .txt is a name Blackboard reads
    gc.write_bytes(gc.read_bytes().replace(b"[Total Pts: 12 Score]", b"[Total Pts: 10 Score]"))
    blackboard(Course(root), A1, gc, "Attention 01", tmp_path / "back.xls")
    printed = capsys.readouterr().out
    assert "Blackboard's column is out of 10 points, 01_attention out of 12" in printed
    assert "rename back.xls to back.csv" in printed


@pytest.mark.parametrize(
    "change, column, why",
    [
        (None, "Nope", r"no column 'Nope'.*grade columns: 'Quiz 0 \[Total Pts: 5 Score\] \|1233'"),
        ("twice", "Attention 01", "2 columns 'Attention 01'"),
        ("duplicate", L.GC_COLUMN, r"Username 'zwei-b' twice \(rows 3 and 6\)"),
        ("canvas", "Attention 01", "has no Username column: is it Blackboard's Grade Center"),
        ("latin-1", "Attention 01", "is not UTF-8 text; download it again"),
    ],
)
def test_blackboard_refuses_a_bad_download_and_writes_nothing(
    tmp_path, capsys, change, column, why
):
    root, gc, learners = blackboard_class(tmp_path, "csv", collected=False)
    rows = bb_rows(learners)
    if change == "twice":
        rows[0] = [*rows[0], "Attention 01 [Total Pts: 12 Score] |9999"]
    elif change == "duplicate":
        rows.insert(5, rows[2])
    gc.write_bytes(L.grade_center(rows))
    if change == "canvas":
        _, gc, _ = L.canvas(fresh(tmp_path, "c"))
    elif change == "latin-1":
        gc.write_bytes(gc.read_bytes().decode().encode("latin-1", "replace"))
    out = tmp_path / "back.csv"
    with pytest.raises(CourseError, match=why) as err:
        blackboard(Course(root), A1, gc, column, out)
    assert str(gc) in str(err.value)
    assert not out.exists()
    args = ["--root", str(root), "grades", "--format", "blackboard", "--assignment", A1]
    assert main([*args, "--column", column]) == 2  # and without the download
    assert "needs --blackboard-export FILE" in capsys.readouterr().err
