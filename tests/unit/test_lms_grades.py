"""`python -m course grades --format canvas|moodle`: the LMS's import files.

Quick: the learners come into a real gradebook through a collect with the roster, and none is
graded here, so each gets what ``--missing`` asks; tests/grading/test_lms_round_trip.py
exports real grades. The Canvas export must come back byte for byte but for the one column.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from support import lms_downloads as L

from course.cli import main
from course.collect import collect
from course.config import Course, CourseError
from course.lms_grades import records

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
