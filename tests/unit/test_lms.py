"""`python -m course collect` of LMS downloads: Canvas, Moodle, Blackboard, GitHub Classroom.

Quick: no grading (tests/grading/test_lms_round_trip.py grades and exports them). Each download
and class list is built as its LMS's own code writes it (tests/support/lms_downloads.py names
the code), across the settings that change the files: Canvas's byte-order mark, separator,
decimal comma, split names, SIS columns, manual posting and anonymous grading; Moodle 3.x and
4.1+, folders or flat, blind marking, names last first, and the worksheet in English, German
and Simplified Chinese; Blackboard's attempts and receipts; GitHub Classroom's rosters with a
learner who never linked an account. Every learner of a download must be collected and matched
to their roster row, by the part of the name the LMS wrote: a learner's own file name that
imitates another learner's is reported and changes nothing for the other learner. The roster
goes into a real gradebook through nbgrader's own student import.
"""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import pytest
from support import lms_downloads as L

from course import gradebook
from course.cli import main
from course.collect import collect
from course.collect.placing import anonymous_id
from course.config import Course, CourseError
from course.lms import canvas_name, clone_prefix, detect, notebook_for, readings
from course.lms_strings import moodle_time
from course.roster import read_roster

REPO = Path(__file__).resolve().parents[2]
A1 = "01_attention"


def course_root(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "solutions").symlink_to(REPO / "solutions")
    return root


def fresh(tmp: Path, name: str) -> Path:
    (tmp / name).mkdir()
    return tmp / name


def report(root: Path) -> list[dict[str, str]]:
    with (root / "reports" / "collect.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def rows_of(root: Path, file_part: str) -> list[dict[str, str]]:
    return [r for r in report(root) if file_part in r["source_path"]]


def row_of(root: Path, file_part: str) -> dict[str, str]:
    rows = rows_of(root, file_part)
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


def submitted_ids(root: Path) -> set[str]:
    return {p.parent.name for p in (root / "submitted").glob(f"*/{A1}")}


def nothing_written(root: Path) -> bool:
    return not any((root / p).exists() for p in ("gradebook.db", "submitted", "roster.csv"))


# ---------------------------------------------------------------------------------------
# names: the LMS's part decides
# ---------------------------------------------------------------------------------------
def test_canvas_names_as_its_content_zipper_writes_them():
    (r,) = readings("canvas", ("zhang伟_LATE_102_10201_attention-1.ipynb",))
    assert (r.who, r.shown, r.file, r.late) == ("102", "zhang伟", "attention-1.ipynb", True)
    assert "uploaded again" in r.note
    (r,) = readings("canvas", ("LATE_anon_X8kQ2_777_attention.ipynb",))
    assert (r.who, r.anonymous, r.late, r.file) == ("anon_X8kQ2", True, True, "attention.ipynb")
    (r,) = readings("canvas", ("garcíajosé_101_text.html",))
    assert (r.who, r.kind) == ("101", "text")
    (r,) = readings("canvas", ("_101_5_x.ipynb",))  # a sortable name of punctuation only
    assert (r.who, r.shown) == ("101", "")
    # A name ending in _<digits> (Canvas removes only _<digits>_): two readings, leftmost
    # first; the roster decides (test_canvas_picks_the_reading_the_roster_confirms).
    assert [r.who for r in readings("canvas", ("ann_5_101_777_f.ipynb",))] == ["5", "101"]
    assert canvas_name("O'Neil, Mallory") == "oneilmallory"
    assert canvas_name("张, 伟") == "张伟" and canvas_name("x_12_y") == "x12y"
    assert readings("canvas", ("alice", A1, "attention.ipynb")) == []


@pytest.mark.parametrize(
    "path, who, shown, file",
    [
        (
            ("José García_501_assignsubmission_file", "sub", "a.ipynb"),
            "501",
            "José García",
            "sub/a.ipynb",
        ),
        (("José García_501_assignsubmission_file_", "a.ipynb"), "501", "José García", "a.ipynb"),
        (("José García_501_assignsubmission_file_a.ipynb",), "501", "José García", "a.ipynb"),
        (("Teilnehmerin_501_assignsubmission_file", "a.ipynb"), "501", "Teilnehmerin", "a.ipynb"),
        (("Participant_501_assignsubmission_file", "a.ipynb"), "501", "Participant", "a.ipynb"),
        (("参与人_501_assignsubmission_file_", "a.ipynb"), "501", "参与人", "a.ipynb"),
    ],
)
def test_moodle_names_of_each_version_and_setting(path, who, shown, file):
    (r,) = readings("moodle", path)
    assert (r.who, r.shown, r.file) == (who, shown, file)
    assert r.anonymous == (shown in ("Participant", "Teilnehmerin", "参与人"))


def test_a_learners_file_name_never_names_the_learner():
    """The learner's part comes after the LMS's: a file name that holds another learner's
    LMS name (and another time) is read by the LMS's part, leftmost."""
    flat = "Mallory ONeil_504_assignsubmission_file_José García_501_assignsubmission_file_a.ipynb"
    (m,) = readings("moodle", (flat,))
    assert (m.who, m.file) == ("504", "José García_501_assignsubmission_file_a.ipynb")
    bb = "A 1_moneil_attempt_2026-03-02-08-00-00_A 1_jgarcia_attempt_2026-02-27-09-00-00_a.ipynb"
    first = readings("blackboard", (bb,))[0]
    assert (first.assignment, first.who, first.attempt) == ("A 1", "moneil", "2026-03-02-08-00-00")
    c = readings("canvas", ("oneilmallory_104_10401_garcíajosé_101_10100_attention.ipynb",))
    assert c[0].who == "104"


def test_detect_and_helpers(tmp_path):
    for build, layout in [
        (L.canvas, "canvas"),
        (L.moodle, "moodle"),
        (L.blackboard, "blackboard"),
        (L.github_classroom, "github-classroom"),
    ]:
        download, _, _ = build(fresh(tmp_path, layout))
        if download.is_file():
            with zipfile.ZipFile(download) as zf:
                files = [tuple(n.split("/")) for n in zf.namelist()]
        else:
            files = [p.relative_to(download).parts for p in download.rglob("*") if p.is_file()]
        assert detect(files, 0) == layout
    assert clone_prefix(["attention-01-ann", "attention-01-bob-b"], []) == "attention-01-"
    assert clone_prefix(["attention-01-bob-b"], ["bob-b"]) == "attention-01-"
    assert notebook_for(["attention (1).ipynb", "notes.pdf"], [L.NB]) == (
        "attention (1).ipynb",
        L.NB,
    )
    assert notebook_for(["a.ipynb", "b.ipynb"], [L.NB]) is None


def test_moodle_dates_in_each_language_as_userdate_writes_them():
    from datetime import datetime

    at = datetime(2026, 3, 1, 18, 30)
    for lang in L.MOODLE:
        assert moodle_time(L.userdate(at, lang)) == at, lang.code
    assert L.userdate(at, L.EN) == "Sunday, 1 March 2026, 6:30 PM"
    assert L.userdate(at, L.DE) == "Sonntag, 1. März 2026, 18:30"
    assert L.userdate(at, L.ZH) == "2026年03月1日 星期日 18:30"
    assert moodle_time("Sunday, 1 March 2026, 12:05 AM") == datetime(2026, 3, 1, 0, 5)
    assert moodle_time("1 March 2026") is None


# ---------------------------------------------------------------------------------------
# rosters, as each LMS exports them
# ---------------------------------------------------------------------------------------
CANVAS_SETTINGS = {
    "default": {},
    "bom": {"bom": True},
    "semicolon, decimal comma": {"semicolon": True},
    "comma, decimal comma": {"decimal_comma": True},
    "split names": {"split_names": True, "bom": True},
    "no SIS user id": {"sis": False, "manual_posting": False},
    "anonymous, not posted": {"hidden": True},
}


@pytest.mark.parametrize("setting", CANVAS_SETTINGS)
def test_canvas_exports_of_every_setting_give_the_same_learners(tmp_path, setting):
    learners = L.people("c", 100)
    path = tmp_path / "export.csv"
    path.write_bytes(L.canvas_export(learners, **CANVAS_SETTINGS[setting]))
    got = read_roster(path)  # Points Possible, the markers, the test student: no learners
    expected = [x for x in sorted(L.roster_of(learners), key=L.canvas_sortable)]
    assert [(x.student_id, x.lms_user_id, x.first_name, x.last_name) for x in got] == [
        (x.student_id, x.lms_id, x.first, x.last) for x in expected
    ]
    assert all(canvas_name(x.sortable) for x in got)


def test_a_canvas_name_that_starts_with_equals_is_read_back(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text('Student,ID,SIS Login ID,Section\n"=""Eq"", Al",7,al,S1\n', encoding="utf-8")
    (x,) = read_roster(path)
    assert (x.sortable, x.last_name, x.first_name) == ('="Eq", Al', '="Eq"', "Al")
    path.write_text('Student,ID,SIS Login ID,Section\n"=""Eq, Al""",7,al,S1\n', encoding="utf-8")
    assert read_roster(path)[0].sortable == "Eq, Al"


@pytest.mark.parametrize("lang", L.MOODLE, ids=lambda x: x.code)
def test_moodle_worksheets_in_each_language(tmp_path, lang):
    learners = L.people("m", 500)
    path = tmp_path / "worksheet.csv"
    path.write_bytes(L.moodle_worksheet(learners, lang))
    got = {x.participant: x for x in read_roster(path)}
    for x in L.roster_of(learners):
        r = got[x.lms_id]
        assert (r.student_id, r.email, r.name) == (x.username, x.email, L.moodle_full_name(x, lang))
        if x.kind in L.MOODLE_TIMES:
            assert r.submitted == L.MOODLE_TIMES[x.kind].strftime("%Y-%m-%d %H:%M")
        assert r.lms_grade == (L.moodle_float(L.HAND_GRADE, lang) if x.kind == "absent" else "")
    path.write_bytes(L.moodle_worksheet(learners, lang, blind=True))  # Identifier only
    assert [x.student_id for x in read_roster(path)] == [
        f"participant-{x.lms_id}" for x in L.roster_of(learners)
    ]


def test_github_classroom_rosters_as_downloaded(tmp_path):
    """Every value quoted, a group_name only some rows fill, a learner who never linked an
    account: all are learners, each by the instructor's identifier."""
    learners = L.people("g", 900)
    path = tmp_path / "classroom_roster.csv"
    path.write_bytes(L.github_roster(learners))
    got = read_roster(path)
    assert [(x.student_id, x.username) for x in got] == [
        (x.username, "" if x.kind == "quiet" else x.username) for x in L.roster_of(learners)
    ]
    path.write_bytes(L.github_roster(learners, last_first=True))
    assert [x.student_id for x in read_roster(path)] == [
        L.github_course_id(x, last_first=True) for x in L.roster_of(learners)
    ]
    assert read_roster(path)[0].student_id == "garcia_jose"
    # identifiers are never read as Moodle participant ids (two would collide as "35")
    path.write_text(
        '"identifier","github_username","github_id","name"\n'
        '"Student 35 (A)","ann","1",""\n"Student 35 (B)","bob","2",""\n',
        encoding="utf-8",
    )
    assert [(x.student_id, x.participant) for x in read_roster(path)] == [
        ("student_35_a", ""),
        ("student_35_b", ""),
    ]


def test_blackboards_tab_delimited_xls_in_utf16_is_a_roster_as_its_csv_is(tmp_path):
    _, gc, learners = L.blackboard(fresh(tmp_path, "b"))
    xls = tmp_path / "gc.xls"
    rows = [L.GC_HEADER, *L.grade_center_rows(learners)]
    xls.write_bytes(L.grade_center(rows, xls=True, newline="\r\n"))
    assert read_roster(xls) == read_roster(gc)
    assert [x.username for x in read_roster(xls)] == [x.username for x in L.roster_of(learners)]


@pytest.mark.parametrize(
    "text, why",
    [
        ("Student,ID,SIS Login ID\nA,1,ann\nB,1,bob\n", r"lms_user_id '1' twice \(lines 2 and 3\)"),
        ("student_id,email\nann,a@x\nann,b@x\n", r"student_id 'ann' twice"),
        ("Student,ID,SIS Login ID\n", "lists no learner"),
        ("", "is empty"),
        ("Color,Size\nred,3\n", "none of the columns that name a learner"),
        ("student_id\nAnn Lee!\n", "not a usable student id"),
        ("Identifier,Full name,Status\nStudent 4,Ann,x\n", "line 2: 'Student 4' is not a Moodle"),
        (
            'Identifier,Full name,Status,Last modified (submission)\n"Participant 4",Ann,x,'
            "yesterday\n",
            "line 2: 'yesterday' is not a date as Moodle writes it",
        ),
    ],
)
def test_a_bad_roster_is_refused_by_name_and_nothing_is_written(tmp_path, text, why):
    root = course_root(tmp_path / "course")
    download, _, _ = L.canvas(fresh(tmp_path, "c"))
    roster = tmp_path / "bad roster.csv"
    roster.write_text(text, encoding="utf-8")
    with pytest.raises(CourseError, match=why) as err:
        collect(download, Course(root), roster=roster)
    assert "bad roster.csv" in str(err.value)
    assert nothing_written(root)


# ---------------------------------------------------------------------------------------
# collecting each LMS's class
# ---------------------------------------------------------------------------------------
def check_class(root: Path, learners, out: str, ids: dict[str, str] | None = None) -> None:
    """What every download must give: every learner who handed in collected under their
    roster row's course id, their own notebook; the attacker's notebook under the attacker,
    reported; the stranger rejected and kept with the roster's nearest learner; nobody
    invented into the gradebook."""
    k = L.by_kind(learners)
    ids = ids or {x.kind: x.student_id for x in learners}
    in_gb = students_in_gradebook(root)
    for kind in ("ontime", "late", "renamed", "attacker"):
        assert sub(root, ids[kind]).read_bytes() == k[kind].notebook, kind
    assert not sub(root, ids["absent"]).exists() and not sub(root, ids["quiet"]).exists()
    assert {ids[x.kind] for x in L.roster_of(learners)} <= set(in_gb)
    assert len(in_gb) == len(L.roster_of(learners))  # the stranger is not invented
    assert submitted_ids(root) == {ids[k] for k in ("ontime", "late", "renamed", "attacker")}
    stranger = next(
        r for r in report(root) if r["outcome"] == "rejected" and r["file"].endswith(".ipynb")
    )
    assert "not in the roster" in stranger["reason"]
    assert "no roster learner has a name like it" in stranger["reason"]  # nobody near
    assert (root / stranger["kept_as"]).read_bytes() == k["stranger"].notebook
    (attack,) = [
        r for r in report(root) if r["student_id"] == ids["attacker"] and r["outcome"] != "skipped"
    ]
    assert attack["outcome"] == "accepted" and "holds another" in attack["reason"]
    assert "never by the learner's" in out
    assert f"roster: 4 of {len(L.roster_of(learners))} learner(s)" in out


def test_canvas_every_learner_and_every_attachment(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, export, learners = L.canvas(fresh(tmp_path, "c"))
    k = L.by_kind(learners)
    collect(download, Course(root), roster=export)  # layout and assignment recognised
    out = capsys.readouterr().out
    check_class(root, learners, out)
    # The notebook and the PDF of one submission: two attachments, no "earlier attempt".
    assert not [r for r in report(root) if r["outcome"] == "superseded"]
    pdf = row_of(root, "_notes.pdf")
    assert (pdf["outcome"], pdf["student_id"]) == ("skipped", k["renamed"].student_id)
    renamed = row_of(root, "attention (1).ipynb")
    assert renamed["outcome"] == "accepted" and "only notebook" in renamed["reason"]
    late = row_of(root, "_LATE_")
    assert "uploaded again" in late["reason"] and "canvas marks it late" in late["reason"]
    assert "no due date for 01_attention" in out  # the late flag waits for a due date
    set_due_date(root)
    collect(download, Course(root), layout="canvas")  # the roster kept from before
    assert sub(root, k["late"].student_id, "timestamp.txt").read_text() == (
        "2026-03-01 12:00:01.000000 UTC"  # the first second after the due date
    )


@pytest.mark.parametrize("setting", ["semicolon, decimal comma", "split names"])
def test_canvas_with_the_export_of_another_setting(tmp_path, capsys, setting):
    root = course_root(tmp_path / "course")
    download, export, learners = L.canvas(fresh(tmp_path, "c"), **CANVAS_SETTINGS[setting])
    collect(download, Course(root), roster=export)
    check_class(root, learners, capsys.readouterr().out)


def test_canvas_picks_the_reading_the_roster_confirms(tmp_path):
    """A sortable name "Ann_5" leaves "ann_5_<id>_...": Canvas's own reading (the first two
    numbers) would take user 5; the roster's user and name decide."""
    root = course_root(tmp_path / "course")
    roster = tmp_path / "export.csv"
    roster.write_text(
        "Student,ID,SIS Login ID,Section\nAnn_5,101,ann,S1\nFive,5,five,S1\n", encoding="utf-8"
    )
    zpath = L.write_zip(tmp_path / "s.zip", {f"ann_5_101_777_{L.NB}": L.GOOD})
    collect(zpath, Course(root), roster=roster)
    assert submitted_ids(root) == {"ann"}


def test_a_canvas_name_ending_in_another_learners_id_takes_nobody_elses_place(tmp_path, capsys):
    """Mallory's sortable name "Smith, Bob_456" is written "smithbob_456_<her id>_", whose
    leftmost reading is Bob's (user 456, named "smithbob"): her file stays hers, with a note,
    and Bob's own upload stays his (not set aside as a second file of one learner)."""
    root = course_root(tmp_path / "course")
    roster = tmp_path / "export.csv"
    roster.write_text(
        "Student,ID,SIS Login ID,Section\n"
        '"Smith, Bob",456,bob,S1\n"Smith, Bob_456",789,mallory,S1\n',
        encoding="utf-8",
    )
    mallory, bob = L.GOOD, L.GOOD.replace(b"softmax", b"softmax ")
    zpath = L.write_zip(
        tmp_path / "s.zip",
        {
            "smithbob_456_789_3003_attention.ipynb": mallory,
            "smithbob_456_5000_attention-1.ipynb": bob,
        },
    )
    collect(zpath, Course(root), roster=roster)
    assert submitted_ids(root) == {"bob", "mallory"}
    assert sub(root, "mallory").read_bytes() == mallory and sub(root, "bob").read_bytes() == bob
    assert "ends in the id of another learner (bob)" in capsys.readouterr().out


def test_canvas_anonymous_grading(tmp_path, capsys):
    """anon_<id> and LATE_anon_<id>: nobody is in the roster by those ids; each is collected
    under a course id of their own (two ids that differ in case stay two learners)."""
    root = course_root(tmp_path / "course")
    learners = L.people("c", 100)
    download = L.canvas_download(tmp_path / "anon.zip", learners, anonymous=True)
    export = tmp_path / "export.csv"
    export.write_bytes(L.canvas_export(learners, hidden=True))
    collect(download, Course(root), roster=export)
    out = capsys.readouterr().out
    ids = {kind: anonymous_id("anon_" + a) for kind, a in L.ANONYMOUS_IDS.items()}
    assert ids["ontime"] != ids["late"]  # X8kQ2 and x8kq2
    assert submitted_ids(root) == set(ids.values())
    assert sub(root, ids["late"]).read_bytes() == L.PARTIAL
    assert "canvas marks it late" in row_of(root, "LATE_anon_")["reason"]
    assert "named only by Canvas's anonymous ids" in out


MOODLE_SETTINGS = {
    "4.1 folders": {},
    "3.x folders": {"version": "3.x"},
    "flat": {"folders": False},
    "last name first": {"last_first": True},
    "de": {"lang": L.DE},
    "zh_cn, 3.x": {"lang": L.ZH, "version": "3.x"},
    "blind, de": {"lang": L.DE, "blind": True},
    "blind, zh_cn, flat": {"lang": L.ZH, "blind": True, "folders": False},
}


@pytest.mark.parametrize("setting", MOODLE_SETTINGS)
def test_moodle_every_version_language_and_setting(tmp_path, capsys, setting):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"), **MOODLE_SETTINGS[setting])
    k = L.by_kind(learners)
    args = ["--root", str(root), "collect", str(download), "--roster", str(worksheet)]
    assert main([*args, "--timezone", "Europe/Berlin"]) == 0
    blind = MOODLE_SETTINGS[setting].get("blind", False)
    ids = {x.kind: f"participant-{x.lms_id}" if blind else x.student_id for x in learners}
    check_class(root, learners, capsys.readouterr().out, ids)
    late = sub(root, ids["late"], "timestamp.txt").read_text()
    assert late == "2026-03-01 17:30:00.000000 UTC"  # 6:30 PM in Berlin, from the worksheet
    text = rows_of(root, "onlinetext")
    assert text and all(r["outcome"] == "skipped" for r in text)
    assert sub(root, ids["attacker"]).read_bytes() == k["attacker"].notebook


def test_moodle_again_is_a_newer_download_and_archives(tmp_path):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"))
    k = L.by_kind(learners)
    collect(download, Course(root), roster=worksheet)
    again = L.write_zip(
        tmp_path / "again.zip", {"José García_501_assignsubmission_file/attention.ipynb": L.PARTIAL}
    )
    collect(again, Course(root), layout="moodle")
    assert sub(root, k["ontime"].student_id).read_bytes() == L.PARTIAL
    assert "replaces the earlier submission" in row_of(root, "José García")["reason"]


def test_blackboard_attempts_receipts_and_times_from_the_lms(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, export, learners = L.blackboard(fresh(tmp_path, "b"))
    k = L.by_kind(learners)
    collect(download, Course(root), roster=export, assignment=A1)
    check_class(root, learners, capsys.readouterr().out)
    stamp = sub(root, k["late"].student_id, "timestamp.txt").read_text()
    assert stamp == "2026-03-01 17:30:00.000000 UTC"
    earlier = row_of(root, f"{k['late'].username}_attempt_2026-03-01-09-00-00_attention")
    assert earlier["outcome"] == "superseded" and "latest attempt" in earlier["reason"]
    assert (root / earlier["kept_as"]).read_bytes() == L.GOOD
    # The name the attacker chose says the victim, 2049 (a later attempt of theirs, the old
    # reading would set their real one aside): the LMS's part says otherwise.
    attacked = sub(root, k["attacker"].student_id, "timestamp.txt").read_text()
    assert attacked == "2026-03-02 08:00:00.000000 UTC"
    assert sub(root, k["ontime"].student_id, "timestamp.txt").read_text().startswith("2026-02-28")
    receipt = row_of(root, f"{k['late'].username}_attempt_2026-03-01-17-30-00.txt")
    assert receipt["outcome"] == "skipped" and "receipt" in receipt["reason"]


@pytest.mark.parametrize("last_first", [False, True])
def test_github_classroom_clones_and_a_learner_never_linked(tmp_path, capsys, last_first):
    root = course_root(tmp_path / "course")
    download, roster, learners = L.github_classroom(fresh(tmp_path, "g"), last_first)
    ids = {x.kind: L.github_course_id(x, last_first) for x in learners}
    collect(download, Course(root), roster=roster)
    out = capsys.readouterr().out
    check_class(root, learners, out, ids)
    git = [r for r in report(root) if "/.git/" in r["source_path"]]
    assert git and {r["reason"] for r in git} == {"git's own files (.git/), ignored"}
    assert not list((root / "submitted").rglob("timestamp.txt"))  # commit times: not used


# ---------------------------------------------------------------------------------------
# the download and the roster are checked whole before anything is written
# ---------------------------------------------------------------------------------------
def test_a_download_of_another_layout_or_an_empty_one_is_refused(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, roster, _ = L.moodle(fresh(tmp_path, "m"))
    with pytest.raises(
        CourseError,
        match=r"moodle-download\.zip is not a canvas download.*looks like a moodle download",
    ):
        collect(download, Course(root), layout="canvas", roster=roster)
    empty = L.write_zip(tmp_path / "empty.zip", {})
    assert main(["--root", str(root), "collect", str(empty), "--roster", str(roster)]) == 2
    assert "empty.zip is empty" in capsys.readouterr().err
    canvas_download, _, _ = L.canvas(fresh(tmp_path, "c"))
    _, blackboard_export, _ = L.blackboard(fresh(tmp_path, "b"))
    with pytest.raises(CourseError, match=r"gc_export\.csv gives no learner a canvas lms user"):
        collect(canvas_download, Course(root), roster=blackboard_export)  # another LMS's list
    with pytest.raises(CourseError, match="give --roster FILE"):
        collect(download, Course(root))  # no roster, none kept from before
    assert nothing_written(root)


def test_the_roster_of_another_class_writes_nothing(tmp_path):
    root = course_root(tmp_path / "course")
    download, _, _ = L.canvas(fresh(tmp_path, "c"))
    other = tmp_path / "other.csv"
    other.write_bytes(L.canvas_export(L.people("x", 300)))  # the same LMS, other learners
    with pytest.raises(CourseError, match=r"none of the 5 learner\(s\) of .* is in the roster"):
        collect(download, Course(root), roster=other)
    assert nothing_written(root) and not (root / "rejected").exists()


def test_moodle_needs_the_worksheets_participant_ids_not_names(tmp_path):
    """A learner may rename themselves in Moodle: a name never decides whose file it is, so a
    class list without participant ids is refused, naming the export that has them."""
    root = course_root(tmp_path / "course")
    download, _, learners = L.moodle(fresh(tmp_path, "m"))
    names = tmp_path / "participants.csv"
    rows = [f"{x.first},{x.last},{x.email}" for x in L.roster_of(learners)]
    names.write_text("First name,Last name,Email address\n" + "\n".join(rows) + "\n")
    with pytest.raises(
        CourseError, match=r"gives no learner a moodle participant.*grading worksheet"
    ):
        collect(download, Course(root), roster=names)
    assert nothing_written(root)


def test_an_unrecognised_moodle_download_imports_no_roster(tmp_path):
    root = course_root(tmp_path / "course")
    _, worksheet, _ = L.moodle(fresh(tmp_path, "m"))
    odd = L.write_zip(tmp_path / "odd.zip", {"José García-501-file/attention.ipynb": L.GOOD})
    with pytest.raises(CourseError, match="not a moodle download"):
        collect(odd, Course(root), layout="moodle", roster=worksheet)
    assert nothing_written(root)


def test_a_learner_missing_from_the_roster_is_named_with_the_nearest_learner(tmp_path):
    """The roster was exported before José García's name was corrected (and his Canvas
    account replaced): his file is kept, and the report names the roster's nearest learner."""
    root = course_root(tmp_path / "course")
    download, _, learners = L.canvas(fresh(tmp_path, "c"))
    k = L.by_kind(learners)
    roster = tmp_path / "export.csv"
    text = L.canvas_export(learners).decode().replace(",101,", ",9101,")
    roster.write_text(text.replace('"García, José"', '"Garcia, Jose"'), encoding="utf-8")
    collect(download, Course(root), roster=roster)
    row = row_of(root, "submissions.zip/garcíajosé_101_")
    assert row["outcome"] == "rejected" and (root / row["kept_as"]).read_bytes() == L.GOOD
    assert "nearest in the roster: Jose Garcia (lms user id 9101)" in row["reason"]
    assert not sub(root, k["ontime"].student_id).exists()


def test_a_file_it_cannot_place_says_the_form_it_expected(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    download, worksheet, learners = L.moodle(fresh(tmp_path, "m"))
    with zipfile.ZipFile(download, "a") as zf:
        zf.writestr("José García-501_assignsubmission_file/attention.ipynb", L.GOOD)
        zf.writestr("stray.ipynb", L.GOOD)
    collect(download, Course(root), roster=worksheet)
    odd = row_of(root, "García-501_assignsubmission_file")
    assert odd["outcome"] == "skipped"
    assert "<Full Name>_<participant id>_assignsubmission_file/<file>" in odd["reason"]
    assert "has Moodle's _assignsubmission_ but not its form" in odd["reason"]
    assert "SKIPPED" in capsys.readouterr().out


def test_the_course_layout_is_unchanged_and_may_import_a_roster(tmp_path):
    root = course_root(tmp_path / "course")
    src = L.write_folder(tmp_path / "src", {f"alice/{A1}/{L.NB}": L.GOOD})
    roster = tmp_path / "r.csv"
    roster.write_text("student_id,first_name,last_name,email\nalice,Alice,Liddell,a@x\n")
    collect(src, Course(root), roster=roster)
    assert sub(root, "alice").read_bytes() == L.GOOD
    assert students_in_gradebook(root)["alice"] == ("Alice", "Liddell", "a@x", None)
