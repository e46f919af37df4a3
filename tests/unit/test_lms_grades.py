"""`python -m course grades --format canvas|moodle|blackboard`: the LMS's import files, which
never take a grade away.

Quick: the learners come into a real gradebook through a collect with the roster, and the
scores that ``autograde`` would leave are written through nbgrader's API and
``course.grading.submission.write_report`` (tests/support/lms_oracle.py ``graded``);
tests/grading/test_lms_round_trip.py grades for real. The LMS's own import rules are the
oracle (``lms_oracle``: Canvas's "no change to value", Moodle's empty = no grade): an export
must change the graded learners' grades and nothing else, in every setting of the export it
fills (Canvas's separator, decimal comma, byte-order mark, split names, manual posting;
Blackboard's .csv and UTF-16 .xls), and a score that is not the collected notebook's stops it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import lms_downloads as L
from support.lms_oracle import (
    MoodleImportStopped,
    blackboard_upload,
    canvas_import,
    canvas_state,
    changed,
    graded,
    moodle_import,
)

from course.cli import main
from course.collect import collect
from course.config import Course, CourseError
from course.lms_grades import blackboard, canvas, records

REPO = Path(__file__).resolve().parents[2]
A1 = "01_attention"
SCORES = {"ontime": 12.0, "late": 10 / 3, "renamed": 12.0, "attacker": 0.0}


def course_root(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "solutions").symlink_to(REPO / "solutions")
    return root


def fresh(tmp: Path, name: str) -> Path:
    (tmp / name).mkdir(parents=True)
    return tmp / name


def grade_class(root: Path, learners, kinds=SCORES) -> dict[str, float]:
    """The class graded as autograde would: {course id: score} of ``kinds``."""
    k = L.by_kind(learners)
    scores = {k[kind].student_id: score for kind, score in kinds.items()}
    graded(root, scores)
    return scores


@pytest.fixture(scope="module")
def canvas_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("canvas")
    root = course_root(tmp / "course")
    download, export, learners = L.canvas(fresh(tmp, "c"))
    collect(download, Course(root), roster=export)
    grade_class(root, learners)
    return root, learners


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


def test_records_split_tab_delimited_text_too():
    text = '"a"\t"b\tc"\td\r\n\t"x"\t'
    rows = list(records(text, Path("x.xls"), "\t"))
    assert [[v for _, _, v in r] for r in rows] == [["a", "b\tc", "d"], ["", "x", ""]]


# ---------------------------------------------------------------------------------------
# Canvas: the export filled in place, in every setting it comes in
# ---------------------------------------------------------------------------------------
CANVAS_SETTINGS = {
    "default": {},
    "bom": {"bom": True},
    "semicolon, decimal comma": {"semicolon": True, "bom": True},
    "comma, decimal comma": {"decimal_comma": True},
    "split names": {"split_names": True},
    "no SIS user id, no manual posting": {"sis": False, "manual_posting": False},
}


def canvas_cell(score: float, setting: dict) -> str:
    """A score as Canvas's export of that setting writes it."""
    comma = setting.get("decimal_comma", setting.get("semicolon", False))
    return f"{score:.2f}".replace(".", ",") if comma else f"{score:.2f}"


@pytest.mark.parametrize("setting", CANVAS_SETTINGS)
@pytest.mark.parametrize("missing", ["empty", "zero"])
def test_canvas_changes_the_graded_learners_and_nothing_else(
    canvas_class, tmp_path, capsys, setting, missing
):
    root, learners = canvas_class
    k = L.by_kind(learners)
    options = CANVAS_SETTINGS[setting]
    held = {k["renamed"].username: canvas_cell(12.0, options)}  # Canvas has it already
    before = L.canvas_export(learners, held, **options)
    export = tmp_path / "export.csv"
    export.write_bytes(before)
    out = tmp_path / "import.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01", "--out", str(out)]
    assert main([*args, "--missing", missing]) == 0
    new = {
        k[kind].username: canvas_cell(SCORES[kind], options)
        for kind in ("ontime", "late", "attacker")
    }
    if missing == "zero":  # the quiet learner's empty cell; absent's 7.00 is never zeroed
        new[k["quiet"].username] = "0"
    assert out.read_bytes() == L.canvas_export(learners, {**held, **new}, **options)
    state = canvas_state(before)
    after = canvas_import(state, out.read_bytes())  # Canvas's importer, as the oracle
    expected = {(k[kind].lms_id, L.CANVAS_COLUMN) for kind in ("ontime", "late", "attacker")}
    if missing == "zero":
        expected.add((k["quiet"].lms_id, L.CANVAS_COLUMN))
    assert set(changed(state, after)) == expected
    printed = capsys.readouterr().out
    assert "3 score(s) written, 1 already in Canvas" in printed
    assert "no submission but a grade in Canvas: kept" in printed or missing == "empty"


def test_canvas_with_missing_empty_gives_back_the_export_when_nothing_is_new(
    canvas_class, tmp_path
):
    root, learners = canvas_class
    k = L.by_kind(learners)
    held = {k[kind].username: canvas_cell(score, {}) for kind, score in SCORES.items()}
    export = tmp_path / "export.csv"
    export.write_bytes(L.canvas_export(learners, held, bom=True))
    out = tmp_path / "import.csv"
    canvas(Course(root), A1, export, L.CANVAS_COLUMN, out)
    assert out.read_bytes() == export.read_bytes()  # byte for byte: Canvas changes nothing


def test_canvas_keeps_excused_and_not_assigned_cells(canvas_class, tmp_path, capsys):
    root, learners = canvas_class
    k = L.by_kind(learners)
    cells = {k["late"].username: "EX", k["renamed"].username: "N/A"}
    export = tmp_path / "export.csv"
    export.write_bytes(L.canvas_export(learners, cells))
    out = tmp_path / "import.csv"
    canvas(Course(root), A1, export, "Attention 01", out, missing="zero")
    state = canvas_state(export.read_bytes())
    after = canvas_import(state, out.read_bytes())
    assert (k["late"].lms_id, L.CANVAS_COLUMN) not in changed(state, after)  # still excused
    printed = capsys.readouterr().out
    assert f"excused in Canvas (EX): kept: {k['late'].student_id}" in printed
    assert f"N/A in Canvas (not assigned to them): kept: {k['renamed'].student_id}" in printed


def test_canvas_refuses_an_anonymous_column_not_posted_and_another_file(canvas_class, tmp_path):
    root, learners = canvas_class
    export = tmp_path / "export.csv"
    export.write_bytes(L.canvas_export(learners, hidden=True))
    out = tmp_path / "import.csv"
    with pytest.raises(CourseError, match="anonymous assignment whose grades are not posted"):
        canvas(Course(root), A1, export, "Attention 01", out)
    export.write_bytes(L.grade_center([L.GC_HEADER]))
    with pytest.raises(CourseError, match="is not Canvas's gradebook export"):
        canvas(Course(root), A1, export, "Attention 01", out)
    with pytest.raises(CourseError, match=r"no column 'Nope'.*Attention 01 \(4567\)"):
        export.write_bytes(L.canvas_export(learners))
        canvas(Course(root), A1, export, "Nope", out)
    assert not out.exists()


# ---------------------------------------------------------------------------------------
# scores that are not the collected notebook's
# ---------------------------------------------------------------------------------------
def test_a_score_older_than_its_notebook_stops_every_export(tmp_path, capsys):
    """ontime and late are graded; ontime's notebook is collected again, changed; renamed and
    attacker are collected and never graded. Every export names the three and writes
    nothing; --allow-stale writes ontime's earlier score, and never a 0 for those waiting."""
    root = course_root(tmp_path / "course")
    download, export, learners = L.canvas(fresh(tmp_path, "c"))
    k = L.by_kind(learners)
    collect(download, Course(root), roster=export)
    grade_class(root, learners, {"ontime": 12.0, "late": 10 / 3})
    again = L.write_zip(tmp_path / "again.zip", {f"garcíajosé_101_10102_{L.NB}": L.PARTIAL})
    collect(again, Course(root), layout="canvas")
    out = tmp_path / "import.csv"
    args = ["--root", str(root), "grades", "--format", "canvas", "--assignment", A1]
    args += ["--canvas-export", str(export), "--column", "Attention 01", "--out", str(out)]
    capsys.readouterr()
    for extra in ([], ["--format", "csv"]):
        assert main([*args, *extra, "--missing", "zero"]) == 2
        err = capsys.readouterr().err
        assert f"{k['ontime'].student_id} (not graded since it was collected again)" in err
        assert f"{k['renamed'].student_id} (collected, not graded yet)" in err
        assert f"{k['attacker'].student_id} (collected, not graded yet)" in err
        assert not out.exists() and not (root / "grades.csv").exists()
    assert main([*args, "--missing", "zero", "--allow-stale"]) == 0
    zero = {k["quiet"].username: "0"}
    cells = {k["ontime"].username: "12.00", k["late"].username: "3.33", **zero}
    assert out.read_bytes() == L.canvas_export(learners, cells)
    printed = capsys.readouterr().out
    assert "score not of that notebook: kept (--allow-stale)" in printed
    base = ["--root", str(root), "grades", "--assignment", A1]
    for extra in (["--format", "moodle", "--roster", str(export)], ["--format", "csv"]):
        assert main([*base, *extra]) == 2
    assert "not graded yet" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------
# Moodle: a row per new grade, none for the others
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", [L.EN, L.DE], ids=lambda x: x.code)
def test_moodle_rows_only_for_new_grades(tmp_path, capsys, lang):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"), lang=lang)
    k = L.by_kind(learners)
    collect(download, Course(root), roster=worksheet)
    grade_class(root, learners)
    state = {x.email: (L.HAND_GRADE if x.kind == "absent" else None) for x in L.roster_of(learners)}
    out = tmp_path / "moodle.csv"
    args = ["--root", str(root), "grades", "--format", "moodle", "--assignment", A1]
    args += ["--key", "email", "--roster", str(worksheet), "--out", str(out)]
    for missing, extra in (("empty", set()), ("zero", {"quiet"})):
        assert main([*args, "--missing", missing]) == 0
        upload = out.read_text(encoding="utf-8")
        after = moodle_import(state, upload, "Email address", A1)  # Moodle's importer
        written = {"ontime", "late", "renamed", "attacker"} | extra
        assert set(changed(state, after)) == {k[kind].email for kind in written}
        assert after[k["absent"].email] == L.HAND_GRADE  # never taken away
        assert after[k["late"].email] == pytest.approx(3.33)
    printed = capsys.readouterr().out
    assert (
        f"no submission but a grade in Moodle: kept (no zero over it): {k['absent'].student_id}"
        in printed
    )


def test_moodle_stops_on_a_learner_it_does_not_know():
    """The oracle's own rule: one unknown row stops the whole import (so the export writes
    a row only for the roster's learners)."""
    with pytest.raises(MoodleImportStopped):
        moodle_import({"a@x": None}, "Email address,g\nb@x,3\n", "Email address", "g")


def test_moodle_needs_the_key_only_for_the_rows_it_writes(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"))
    collect(download, Course(root), roster=worksheet)
    grade_class(root, learners)
    args = ["--root", str(root), "grades", "--format", "moodle", "--assignment", A1]
    assert main([*args, "--key", "username", "--out", str(tmp_path / "x.csv")]) == 2
    assert "the roster has no username for jgarcia-m" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_an_lms_format_without_a_roster_says_how_to_get_one(tmp_path):
    root = course_root(tmp_path / "course")
    from course.lms_grades import moodle

    with pytest.raises(CourseError, match="give --roster FILE"):
        moodle(Course(root), A1, "email", tmp_path / "x.csv")


# ---------------------------------------------------------------------------------------
# Blackboard: the Grade Center download, comma-delimited UTF-8 .csv or tab-delimited UTF-16
# .xls, filled in place
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
    x = L.by_kind(learners)["stranger"]
    rows.append([f'{x.last}, "Jr."', x.first, x.username, "", "", "Available", "5", "9", "90"])
    rows.append(["Student", "Preview", "bb_previewuser", "", "", "Available", "", "", ""])
    return rows


FORMS = {  # name: how Blackboard (or a spreadsheet saving it again) writes the file
    "csv": dict(bom=True, newline="\r\n"),
    "xls": dict(xls=True, newline="\r\n"),
    "xls-bare": dict(xls=True, quoted=False),
}


@pytest.fixture(scope="module")
def blackboard_class(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("blackboard")
    root = course_root(tmp / "course")
    download, export, learners = L.blackboard(fresh(tmp, "b"))
    collect(download, Course(root), A1, roster=export)
    grade_class(root, learners)
    return root, learners


@pytest.mark.parametrize("form", FORMS)
def test_blackboard_changes_the_graded_learners_and_nothing_else(
    blackboard_class, tmp_path, capsys, form
):
    root, learners = blackboard_class
    k = L.by_kind(learners)
    gc = tmp_path / f"gc_full.{form.partition('-')[0]}"
    gc.write_bytes(L.grade_center(bb_rows(learners), **FORMS[form]))
    args = ["--root", str(root), "grades", "--format", "blackboard", "--assignment", A1]
    args += [
        "--blackboard-export",
        str(gc),
        "--column",
        L.GC_COLUMN,
        "--out",
        str(tmp_path / gc.name),
    ]
    new = {k["ontime"].username: "12", k["late"].username: "3.33", k["attacker"].username: "0"}
    new[k["renamed"].username] = "12"
    for missing, extra in (("empty", {}), ("zero", {k["quiet"].username: "0"})):
        assert main([*args, "--missing", missing]) == 0
        out = (tmp_path / gc.name).read_bytes()
        assert out == L.grade_center(bb_rows(learners, {**new, **extra}), **FORMS[form])
        upload = bb_rows(learners, {**new, **extra})
        assert set(blackboard_upload(bb_rows(learners), upload, L.GC_COLUMN)) == set(new) | set(
            extra
        )
    printed = capsys.readouterr().out
    assert "not in the roster: mperson-b, bb_previewuser" in printed
    assert ("tab-delimited UTF-16" if form != "csv" else "comma-delimited UTF-8") in printed
    for column in ("Attention 01", "1234", "|1234"):  # its name, its column id
        assert main([*args[:-4], "--column", column, "--out", str(tmp_path / gc.name)]) == 0


def test_blackboard_reports_a_roster_learner_missing_from_the_download(
    blackboard_class, tmp_path, capsys
):
    root, learners = blackboard_class
    k = L.by_kind(learners)
    gc = tmp_path / "gc.xls"
    gc.write_bytes(L.grade_center(bb_rows(learners, drop=("zwei-b",)), **FORMS["xls"]))
    out = tmp_path / "back.xls"
    blackboard(Course(root), A1, gc, "Attention 01", out)
    printed = capsys.readouterr().out
    assert "in the roster but not in" in printed and printed.rstrip().endswith(k["late"].student_id)


def test_blackboard_says_when_the_column_has_other_points(blackboard_class, tmp_path, capsys):
    root, learners = blackboard_class
    gc = tmp_path / "gc.csv"
    rows = bb_rows(learners)
    rows[0] = [h.replace("[Total Pts: 12 Score]", "[Total Pts: 10 Score]") for h in rows[0]]
    gc.write_bytes(L.grade_center(rows))
    blackboard(Course(root), A1, gc, "Attention 01", tmp_path / "back.xls")
    printed = capsys.readouterr().out
    assert "Blackboard's column is out of 10 points, 01_attention out of 12" in printed
    assert "rename back.xls to back.csv" in printed


@pytest.mark.parametrize(
    "change, column, why",
    [
        (None, "Nope", r"no column 'Nope'.*grade columns: 'Quiz 0 \[Total Pts: 5 Score\] \|1233'"),
        ("twice", "Attention 01", "2 columns 'Attention 01'"),
        ("duplicate", L.GC_COLUMN, r"Username 'zwei-b' twice \(rows 3 and 8\)"),
        ("canvas", "Attention 01", "has no Username column: is it Blackboard's Grade Center"),
        ("latin-1", "Attention 01", "is not UTF-8 text; download it again"),
    ],
)
def test_blackboard_refuses_a_bad_download_and_writes_nothing(
    blackboard_class, tmp_path, capsys, change, column, why
):
    root, learners = blackboard_class
    gc = tmp_path / "gc.csv"
    rows = bb_rows(learners)
    if change == "twice":
        rows[0] = [*rows[0], "Attention 01 [Total Pts: 12 Score] |9999"]
    elif change == "duplicate":
        rows.insert(7, rows[2])
    gc.write_bytes(L.grade_center(rows))
    if change == "canvas":
        gc.write_bytes(L.canvas_export(learners))
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


def test_the_oracles_read_the_lms_rules():
    """Canvas's importer: a blank over a score, or over EX, is a change; the same number
    written otherwise is not; a decimal comma is a point."""
    from support.lms_oracle import no_change_to_value

    assert not no_change_to_value("", "3.0") and not no_change_to_value("", "EX")
    assert no_change_to_value("3.00", "3.0") and no_change_to_value("-", "")
    assert not no_change_to_value("3.00", "EX")
    state = {("1", "A (1)"): "3.0"}
    text = 'Student,ID,SIS Login ID,Section,A (1)\nX,1,x,s,"3,00"\n'
    assert canvas_import(state, text.encode()) == state
    assert canvas_import(state, text.replace('"3,00"', "").encode()) == {("1", "A (1)"): ""}
