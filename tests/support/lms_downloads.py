"""Downloads of assignment 01 built exactly as each LMS names its files, with the class list
each LMS exports; shared by tests/unit/test_lms.py (collect only) and
tests/grading/test_lms_round_trip.py (collected, graded and exported back).

Each class has the same four kinds of learner, with names of their own per LMS (the four
classes can be collected into one course root):

- ``ontime``: a unicode name, hands in ``attention.ipynb`` on time;
- ``late``: a name in Chinese, hands in late, and uploaded the notebook twice;
- ``renamed``: hands in a renamed notebook and a file that is not a notebook (``notes.pdf``);
- ``stranger``: hands in, but is missing from the roster.

The names, as each LMS's documentation describes its download:

- Canvas (Instructor Guide, "How do I download all student submissions for an assignment?"):
  one flat zip, ``<name>[_LATE]_<user id>_<submission id>_<file>``, the name being the sortable
  name lowercased without spaces or punctuation; a file uploaded again gets ``-1`` before its
  extension. Class list: the gradebook export (Grades > Export), ``Student,ID,SIS User
  ID,SIS Login ID,Section,<assignment> (<id>),...`` with a ``Points Possible`` row first.
- Moodle (MoodleDocs, "Assignment settings" / "Using Assignment": *Download all
  submissions*, "Download submissions in folders"): ``<Full Name>_<participant
  id>_assignsubmission_file_/<file>``, or the older flat
  ``<Full Name>_<participant id>_assignsubmission_file_<file>``. Class list: the grading
  worksheet (*Download grading worksheet*): ``Identifier,Full name,ID number,Email
  address,Status,Grade,Maximum Grade,Grade can be changed,Last modified (submission),Last
  modified (grade),Feedback comments``, ``Identifier`` being ``Participant <id>``. The download
  holds only the latest files: an upload again is a newer download, collected again.
- Blackboard Learn (Help, "Download Assignments"): flat files
  ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>`` and a receipt
  ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt`` per attempt; "All attempts"
  holds every attempt. Class list: the Grade Center download (Help, "Work Offline with Grade
  Data": Grade Center > Work Offline > Download; Ultra: Gradebook > Download), which is also
  the file the grades go back in (Work Offline > Upload): ``Last Name, First Name, Username,
  Student ID, Last Access, Availability``, then one column per grade column, headed
  ``<name> [Total Pts: <points> Score] |<column id>`` (Ultra: ``[Total Pts: up to <points>
  ...]``). Blackboard matches an upload's rows by ``Username`` and its columns by the column
  id. Two forms: comma-delimited ``.csv`` (UTF-8), every value in quotes ("Data in each column
  of comma-delimited files must be contained within a quote character"), or tab-delimited
  ``.xls``, which is no Excel workbook but UTF-16 text with a byte-order mark ("Data in each
  column of tab-delimited files doesn't require a quote character").
- GitHub Classroom (docs, "Using GitHub Classroom with GitHub CLI": ``gh classroom clone
  student-repos``): a folder per learner, ``<assignment prefix>-<user name>/``, a clone of
  their repository (``.git/`` included). Class list: the classroom roster download,
  ``identifier,github_username,github_id,name``. A clone holds the latest commit only.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from support.submissions import A1, MISTAKES, mutate, read, source

NB = "attention.ipynb"
DUE = datetime(2026, 3, 1, 12, 0)  # UTC, set in the gradebook before collecting
GOOD = source(A1).read_bytes()
PARTIAL = json.dumps(mutate(read(source(A1)), *MISTAKES[A1][0][1:]), indent=1).encode()
PDF = b"%PDF-1.4\n% not a notebook\n"


@dataclass
class Learner:
    kind: str  # ontime, late, renamed, stranger
    first: str
    last: str
    username: str
    student_id: str  # the course id the roster gives
    lms_id: str  # Canvas user id, Moodle participant id, GitHub id, Blackboard student id
    notebook: bytes


def people(tag: str, base: int) -> list[Learner]:
    """The four learners of one LMS's class; ``tag`` keeps their course ids apart."""
    return [
        Learner(
            "ontime", "José", "García", f"jgarcia-{tag}", f"jgarcia-{tag}", str(base + 1), GOOD
        ),
        Learner("late", "伟", "张", f"zwei-{tag}", f"zwei-{tag}", str(base + 2), PARTIAL),
        Learner(
            "renamed",
            "Zoë",
            "Ødegaard",
            f"zodegaard-{tag}",
            f"zodegaard-{tag}",
            str(base + 3),
            GOOD,
        ),
        Learner("stranger", "Missing", "Person", f"mperson-{tag}", "", str(base + 9), GOOD),
    ]


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def write_folder(base: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    return base


def roster_of(learners: list[Learner]) -> list[Learner]:
    return [x for x in learners if x.kind != "stranger"]


# ---------------------------------------------------------------------------------------
# Canvas
# ---------------------------------------------------------------------------------------
CANVAS_COLUMN = "Attention 01 (4567)"
CANVAS_HEADER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Quiz 0 (4566),Attention 01 (4567),"
    "Current Score,Final Score\r\n"
)


def canvas(tmp: Path) -> tuple[Path, Path, list[Learner]]:
    """(the submissions zip, the gradebook export, the learners)."""
    learners = people("c", 100)
    members = {}
    for x in learners:
        name = (x.last + x.first).lower()
        if x.kind == "ontime":
            members[f"{name}_{x.lms_id}_9{x.lms_id}_{NB}"] = x.notebook
        elif x.kind == "late":  # late, and the second upload of attention.ipynb
            members[f"{name}_LATE_{x.lms_id}_9{x.lms_id}_attention-1.ipynb"] = x.notebook
        elif x.kind == "renamed":
            members[f"{name}_{x.lms_id}_9{x.lms_id}_attention (1).ipynb"] = x.notebook
            members[f"{name}_{x.lms_id}_9{x.lms_id}_notes.pdf"] = PDF
        else:
            members[f"{name}_{x.lms_id}_9{x.lms_id}_{NB}"] = x.notebook
    download = write_zip(tmp / "submissions.zip", members)
    lines = [
        CANVAS_HEADER,
        "    Points Possible,,,,,5.00,12.00,(read only),(read only)\r\n",
    ]
    for x in roster_of(learners):
        lines.append(
            f'"{x.last}, {x.first}",{x.lms_id},S{x.lms_id},{x.username},Section 1,4.50,,'
            "90.00,90.00\r\n"
        )
    lines.append('"Student, Test",999,,,Section 1,,,,\r\n')  # Canvas's test student
    export = tmp / "canvas_gradebook.csv"
    export.write_bytes(("\ufeff" + "".join(lines)).encode())
    return download, export, learners


# ---------------------------------------------------------------------------------------
# Moodle
# ---------------------------------------------------------------------------------------
def moodle(tmp: Path, flat: bool = False) -> tuple[Path, Path, list[Learner]]:
    """(the download zip, the grading worksheet, the learners); the renamed learner's
    files in Moodle's older flat form, the others in folders (``flat``: everybody flat)."""
    learners = people("m", 500)
    members = {}
    for x in learners:
        prefix = f"{x.first} {x.last}_{x.lms_id}_assignsubmission_file_"
        file = "attention-final.ipynb" if x.kind == "renamed" else NB
        sep = "" if flat or x.kind == "renamed" else "/"
        members[f"{prefix}{sep}{file}"] = x.notebook
        if x.kind == "renamed":
            members[f"{prefix}{sep}notes.pdf"] = PDF
    download = write_zip(tmp / "moodle-download.zip", members)
    header = (
        "Identifier,Full name,ID number,Email address,Status,Grade,Maximum Grade,"
        "Grade can be changed,Last modified (submission),Last modified (grade),"
        "Feedback comments\n"
    )
    times = {
        "ontime": "Saturday, 28 February 2026, 10:00 AM",
        "late": "Sunday, 1 March 2026, 6:30 PM",  # 17:30 UTC with --timezone Europe/Berlin
        "renamed": "Sunday, 1 March 2026, 11:00 AM",
    }
    rows = [header]
    for x in roster_of(learners):
        rows.append(
            f"Participant {x.lms_id},{x.first} {x.last},ID{x.lms_id},{x.username}@example.edu,"
            f'Submitted for grading,,12.00,Yes,"{times[x.kind]}",-,\n'
        )
    worksheet = tmp / "moodle_worksheet.csv"
    worksheet.write_text("".join(rows), encoding="utf-8")
    return download, worksheet, learners


# ---------------------------------------------------------------------------------------
# Blackboard
# ---------------------------------------------------------------------------------------
def blackboard(tmp: Path) -> tuple[Path, Path, list[Learner]]:
    """(the download zip, the Grade Center export, the learners)."""
    learners = people("b", 700)
    assignment = "Attention 01"
    members = {}

    def attempt(x: Learner, at: str, files: dict[str, bytes]) -> None:
        stem = f"{assignment}_{x.username}_attempt_{at}"
        listing = "".join(f"\tOriginal filename: {f}\n\tFilename: {stem}_{f}\n" for f in files)
        when = datetime.strptime(at, "%Y-%m-%d-%H-%M-%S")
        members[f"{stem}.txt"] = (
            f"Name: {x.first} {x.last} ({x.username})\nAssignment: {assignment}\n"
            f"Date Submitted: {when:%A, %d %B %Y %H:%M:%S} o'clock UTC\nCurrent Mark: "
            "Needs Marking\n\nSubmission Field:\nThere is no student submission text data "
            f"for this assignment.\n\nComments:\nThere are no student comments for this "
            f"assignment.\n\nFiles:\n{listing}"
        ).encode()
        for f, data in files.items():
            members[f"{stem}_{f}"] = data

    for x in learners:
        if x.kind == "late":  # an on-time attempt, then a late one that counts
            attempt(x, "2026-03-01-09-00-00", {NB: GOOD})
            attempt(x, "2026-03-01-17-30-00", {NB: x.notebook})
        elif x.kind == "renamed":
            attempt(x, "2026-02-28-15-00-00", {"attention (1).ipynb": x.notebook, "notes.pdf": PDF})
        else:
            attempt(x, "2026-02-28-10-00-00", {NB: x.notebook})
    download = write_zip(tmp / "gradebook_attention.zip", members)
    export = tmp / "gc_export.csv"
    export.write_bytes(grade_center([GC_HEADER, *grade_center_rows(learners)]))
    return download, export, learners


GC_USER = ["Last Name", "First Name", "Username", "Student ID", "Last Access", "Availability"]
GC_COLUMN = "Attention 01 [Total Pts: 12 Score] |1234"
GC_HEADER = [*GC_USER, GC_COLUMN]


def grade_center_rows(learners: list[Learner], cells: dict[str, str] | None = None) -> list:
    """The rows of the roster's learners under GC_HEADER; ``cells``: {username: the value of
    the assignment's column} (default: empty, not graded yet)."""
    cells = cells or {}
    return [
        [x.last, x.first, x.username, x.lms_id, "2026-03-02 10:00:00", "Available"]
        + [cells.get(x.username, "")]
        for x in roster_of(learners)
    ]


def grade_center(
    rows: list[list[str]],
    xls: bool = False,
    quoted: bool = True,
    bom: bool = False,
    newline: str = "\n",
) -> bytes:
    """A Grade Center download of ``rows`` (its header first): comma-delimited UTF-8 (a
    byte-order mark with ``bom``), or with ``xls`` tab-delimited UTF-16 with its byte-order
    mark; every value in quotes unless not ``quoted``."""

    def cell(value: str) -> str:
        return '"' + value.replace('"', '""') + '"' if quoted else value

    text = "".join(("\t" if xls else ",").join(map(cell, row)) + newline for row in rows)
    if xls:
        return ("\ufeff" + text).encode("utf-16-le")
    return (("\ufeff" if bom else "") + text).encode("utf-8")


# ---------------------------------------------------------------------------------------
# GitHub Classroom
# ---------------------------------------------------------------------------------------
def github_classroom(tmp: Path) -> tuple[Path, Path, list[Learner]]:
    """(the folder of clones, the classroom roster, the learners)."""
    learners = people("g", 900)
    files = {}
    for x in learners:
        clone = f"attention-01-{x.username}"
        files[f"{clone}/.git/HEAD"] = b"ref: refs/heads/main\n"
        files[f"{clone}/.git/config"] = b"[core]\n\tbare = false\n"
        files[f"{clone}/README.md"] = "# Attention 01 — exercise\n".encode()
        if x.kind == "renamed":
            files[f"{clone}/attention-final.ipynb"] = x.notebook
            files[f"{clone}/notes.pdf"] = PDF
        elif x.kind == "late":  # the template's folder layout
            files[f"{clone}/01_attention/{NB}"] = x.notebook
        else:
            files[f"{clone}/{NB}"] = x.notebook
    download = write_folder(tmp / "attention-01-submissions", files)
    lines = ["identifier,github_username,github_id,name\n"]
    for x in roster_of(learners):
        lines.append(f"{x.username}@example.edu,{x.username},{x.lms_id},{x.first} {x.last}\n")
    roster = tmp / "classroom_roster.csv"
    roster.write_text("".join(lines), encoding="utf-8")
    return download, roster, learners
