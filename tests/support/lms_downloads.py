"""Downloads and exports of assignment 01, built as each LMS's own code writes them, with every
user setting that changes the file; shared by tests/unit/test_lms.py (collect),
tests/unit/test_lms_grades.py (the import files) and tests/grading/test_lms_round_trip.py
(collected, graded and exported back, the LMS importers' rules as the oracle: ``lms_oracle``).

The producers, read in the LMSs' public source code, and the real files they were checked
against:

- Canvas (instructure/canvas-lms): the submissions zip of ``lib/content_zipper.rb``
  (``get_filename``, ``sanitize_user_name``, ``sanitize_file_name``,
  ``sanitize_attachment_filename``, ``add_upload_submission``: one file per attachment,
  ``<name>[_LATE]_<user id>_<attachment id>_<display name>``; ``anon_<anonymous id>`` and
  ``LATE_anon_...`` under anonymous grading, the id from ``lib/anonymity.rb``: five base58
  characters); the gradebook export of ``lib/gradebook_exporter.rb`` written by
  ``lib/csv_with_i18n.rb`` (Ruby's CSV: a field in quotes only when it holds the separator, a
  quote or a line break, an empty string as ``""``, nil as nothing, rows ending in ``\\n``;
  the byte-order mark and the semicolon separator are user settings, the semicolon with a
  locale's decimal comma; "split student names" writes ``LastName,FirstName``; a row of
  ``Manual Posting`` markers when an assignment posts by hand, ``(scores hidden from
  instructors)`` and ``N/A`` for an anonymous one not posted; ``EX`` for an excused learner;
  scores ``I18n.n(score, precision: 2)``; a name starting with ``=`` as ``="..."``; the test
  student last).
- Moodle (moodle/moodle): the download of ``mod/assign/classes/downloader.php`` (4.1 and
  later: ``<Full Name>_<participant id>_assignsubmission_file/<file path><file>``) and of
  ``download_submissions`` in 3.x's ``mod/assign/locallib.php`` (``..._file_/``), flat
  without "download submissions in folders" (``..._file_<file>``); ``_`` in a name as a space,
  ``clean_filename`` dropping ``&<>"`|':\\/``; under blind marking the name is the
  downloader's word for "Participant". The grading worksheet of ``mod/assign/gradingtable.php``
  as a table download (``dataformat/csv``: a UTF-8 byte-order mark, PHP's ``fputcsv``: a field
  in quotes when it holds a comma, a quote, a backslash, a space, a tab or a line break,
  rows ending in ``\\n``), its headers, identifiers (``hiddenuser`` + id) and dates
  (``userdate`` with ``strftimedaydatetime``, day and 12-hour hour without a leading zero) in
  English, German or Simplified Chinese, the strings of ``course.lms_strings`` (Moodle's
  language packs), grades with the language's decimal separator.
- Blackboard: no public source. File names as real downloads have them, quoted in public
  code (jwells97/R-Homework-1, ``Wells_Homework_1.R``: ``MBTI file
  submission_npkarno_attempt_2019-08-27-10-52-33_MBTI_Karno.csv``: an assignment name with
  spaces, a file name with ``_``); the receipt ``.txt`` as Blackboard writes it (``Name: <full
  name> (<username>)``, ``Assignment:``, ``Date Submitted: Tuesday, February 20, 2024 12:35:07
  AM CST``, ``Current Grade: Needs Grading``, ``Submission Field:``, ``Comments:``, ``Files:``
  with ``\\tOriginal filename:`` and ``\\tFilename:`` lines), as receipts quoted in public
  receipt parsers have it; the Grade Center download as Blackboard's uploads of it in
  nbeaver/offline-grades-upload (``01.tsv``: quoted headers, ``Quiz 3 [Total Pts: 10]
  |664617``).
- GitHub Classroom: rosters as downloaded, kept in public projects
  (yuyangch/python_csv_processing ``classroom_roster.csv``: every value quoted, a
  ``group_name`` column that only some rows fill, learners who have not linked an account
  with empty GitHub columns; Gchism94/github-classroom-reinvite-app ``classroom_roster.csv``:
  identifiers ``Last, First``); the clones of ``gh classroom clone student-repos``.

Real learners' names and addresses are replaced by made-up ones. Each class has the same kinds
of learner, with names of their own per LMS (the classes can be collected into one course
root): ``ontime`` (an accented name, on time), ``late`` (a Chinese name, late, uploaded
again), ``renamed`` (a renamed notebook and a PDF in one submission), ``attacker`` (a name
with an apostrophe; the file name they chose holds ``ontime``'s LMS name and, on Blackboard,
a later attempt time: read by that part, it would set ``ontime``'s own attempt aside),
``stranger`` (hands in, missing from the roster), ``absent`` (in the roster, hands nothing
in, the LMS holds a grade typed by hand) and ``quiet`` (in the roster, nothing, no grade).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from course.lms_strings import MOODLE, MoodleLanguage, clean_filename
from support.submissions import A1, MISTAKES, exercise, mutate, read, source

NB = "attention.ipynb"
DUE = datetime(2026, 3, 1, 12, 0)  # UTC, set in the gradebook before collecting
GOOD = source(A1).read_bytes()
PARTIAL = json.dumps(mutate(read(source(A1)), *MISTAKES[A1][0][1:]), indent=1).encode()
NO_WORK = exercise(A1).read_bytes()
PDF = b"%PDF-1.4\n% not a notebook\n"
HAND_GRADE = 7.0  # what the LMS holds for ``absent``, typed in by the instructor
KINDS = ("ontime", "late", "renamed", "attacker", "stranger", "absent", "quiet")


@dataclass
class Learner:
    kind: str
    first: str
    last: str
    username: str
    student_id: str  # the course id the roster gives ("" for the stranger)
    lms_id: str  # Canvas user id, Moodle participant id, GitHub id, Blackboard student id
    notebook: bytes | None  # None: hands nothing in

    @property
    def email(self) -> str:
        return f"{self.username}@example.edu"


def people(tag: str, base: int) -> list[Learner]:
    """The learners of one LMS's class; ``tag`` keeps their course ids apart."""
    rows = [
        ("ontime", "José", "García", "jgarcia", GOOD),
        ("late", "伟", "张", "zwei", PARTIAL),
        ("renamed", "Zoë", "Ødegaard", "zodegaard", GOOD),
        ("attacker", "Mallory", "O'Neil", "moneil", NO_WORK),
        ("stranger", "Missing", "Person", "mperson", GOOD),
        ("absent", "Åsa", "Lindqvist", "alindqvist", None),
        ("quiet", "Ben", "Quiet", "bquiet", None),
    ]
    return [
        Learner(
            kind,
            first,
            last,
            f"{user}-{tag}",
            "" if kind == "stranger" else f"{user}-{tag}",
            str(base + i + 1),
            nb,
        )
        for i, (kind, first, last, user, nb) in enumerate(rows)
    ]


def by_kind(learners: list[Learner]) -> dict[str, Learner]:
    return {x.kind: x for x in learners}


def roster_of(learners: list[Learner]) -> list[Learner]:
    return [x for x in learners if x.kind != "stranger"]


def handed_in(learners: list[Learner]) -> list[Learner]:
    return [x for x in learners if x.notebook is not None]


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


def ruby_csv(rows: list[list[str | None]], col_sep: str = ",") -> str:
    """Rows as Ruby's CSV writes them (csv/writer.rb ``quote``): nil as nothing, an empty
    string as ``""``, a field in quotes when it holds the separator, a quote, ``\\r`` or
    ``\\n``; each row ends in ``\\n``."""

    def cell(v: str | None) -> str:
        if v is None:
            return ""
        if v == "" or any(c in v for c in (col_sep, '"', "\r", "\n")):
            return '"' + v.replace('"', '""') + '"'
        return v

    return "".join(col_sep.join(cell(v) for v in row) + "\n" for row in rows)


def php_fputcsv(rows: list[list[str]]) -> str:
    """Rows as PHP's ``fputcsv`` writes them (Moodle's CSV table downloads): a field in quotes
    when it holds a comma, a quote, a backslash, a space, a tab or a line break."""

    def cell(v: str) -> str:
        if any(c in v for c in (",", '"', "\\", " ", "\t", "\n", "\r")):
            return '"' + v.replace('"', '""') + '"'
        return v

    return "".join(",".join(cell(v) for v in row) + "\n" for row in rows)


# ---------------------------------------------------------------------------------------
# Canvas
# ---------------------------------------------------------------------------------------
CANVAS_COLUMN = "Attention 01 (4567)"
CANVAS_QUIZ = "Quiz 0 (4566)"
ANONYMOUS_IDS = {  # lib/anonymity.rb: SecureRandom.base58(5); two differ in case only
    "ontime": "X8kQ2",
    "late": "x8kq2",
    "renamed": "7hDvP",
    "attacker": "Qm3zR",
    "stranger": "aB9cD",
}


def canvas_sortable(x: Learner) -> str:
    return f"{x.last}, {x.first}"


def canvas_file_prefix(x: Learner, late: bool, anonymous: bool) -> str:
    """ContentZipper#get_filename: [name, LATE, id].compact.join("_"), sanitized."""
    if anonymous:
        parts = ["LATE" if late else None, f"anon_{ANONYMOUS_IDS[x.kind]}"]
    else:
        name = _ruby_sub_digits(canvas_sortable(x)).lower()
        parts = [name, "LATE" if late else None, x.lms_id]
    joined = "_".join(p for p in parts if p is not None)
    return "".join(c for c in joined if _ruby_word(c))


def _ruby_sub_digits(name: str) -> str:
    import re

    return re.sub(r"_([0-9]+)_", r"\1", name)


def _ruby_word(c: str) -> bool:
    import unicodedata

    cat = unicodedata.category(c)
    return cat[0] in "LM" or cat in ("Nd", "Pc")


def canvas_attachments(x: Learner, victim: Learner) -> list[tuple[int, str, bytes]]:
    """(attachment id, display name, bytes) of each file of a learner's latest submission; a
    PDF whose id is above its notebook's (the learner attached it after)."""
    base = int(x.lms_id) * 100
    assert x.notebook is not None
    if x.kind == "late":  # the second upload of attention.ipynb: Canvas names it -1
        return [(base + 1, "attention-1.ipynb", x.notebook)]
    if x.kind == "renamed":
        return [(base + 1, "attention (1).ipynb", x.notebook), (base + 2, "notes.pdf", PDF)]
    if x.kind == "attacker":  # the display name the attacker typed: the victim's prefix
        chosen = f"{canvas_file_prefix(victim, False, False)}_{int(victim.lms_id) * 100}_{NB}"
        return [(base + 1, chosen, x.notebook)]
    return [(base + 1, NB, x.notebook)]


def canvas_download(path: Path, learners: list[Learner], anonymous: bool = False) -> Path:
    """Canvas's submissions zip (ContentZipper#zip_assignment, online uploads)."""
    victim = by_kind(learners)["ontime"]
    members: dict[str, bytes] = {}
    for x in handed_in(learners):
        prefix = canvas_file_prefix(x, x.kind == "late", anonymous)
        for att, display, data in canvas_attachments(x, victim):
            clean = "".join("_" if c in '\x00/\\:*?"<>|' else c for c in display)
            members[f"{prefix}_{att}_{clean}"] = data
    return write_zip(path, members)


def canvas_export(
    learners: list[Learner],
    cells: dict[str, str | None] | None = None,
    *,
    bom: bool = False,
    semicolon: bool = False,
    split_names: bool = False,
    sis: bool = True,
    manual_posting: bool = True,
    hidden: bool = False,
    decimal_comma: bool | None = None,
) -> bytes:
    """Canvas's gradebook export (GradebookExporter#csv_data): ``cells`` {username: the
    assignment's cell} (default: empty, ``absent``'s typed-in grade); ``semicolon``: the
    semicolon separator (by default with the locale's decimal comma, which ``decimal_comma``
    sets apart: a comma separator with a decimal comma quotes every number); ``hidden``: the
    assignment is anonymous and its grades not posted (N/A, and the manual-posting marker
    says so)."""
    comma_locale = semicolon if decimal_comma is None else decimal_comma

    def n(x: float | None) -> str | None:  # I18n.n(x, precision: 2)
        if x is None:
            return None
        text = f"{x:.2f}"
        return text.replace(".", ",") if comma_locale else text

    defaults = {by_kind(learners)["absent"].username: n(HAND_GRADE)}
    cells = {**defaults, **(cells or {})}
    who = ["LastName", "FirstName"] if split_names else ["Student"]
    ids = ["ID", *(["SIS User ID"] if sis else []), "SIS Login ID", "Section"]
    totals = ["Assignments Current Points", "Assignments Final Points"]
    totals += ["Assignments Current Score", "Assignments Unposted Current Score"]
    totals += ["Assignments Final Score", "Assignments Unposted Final Score"]
    totals += ["Current Points", "Final Points", "Current Score", "Unposted Current Score"]
    totals += ["Final Score", "Unposted Final Score"]
    header: list[str | None] = [*who, *ids, CANVAS_QUIZ, CANVAS_COLUMN, *totals]
    lead = len(who) + len(ids)
    rows: list[list[str | None]] = [header]
    if manual_posting or hidden:
        marker = "Manual Posting (scores hidden from instructors)" if hidden else "Manual Posting"
        rows.append([None] * lead + [None, marker] + [None] * len(totals))
    points: list[str | None] = ["    Points Possible", *[None] * (lead - 1), n(5.0), n(12.0)]
    rows.append(points + ["(read only)"] * len(totals))
    for x in sorted(roster_of(learners), key=canvas_sortable):
        name = [x.last, x.first] if split_names else [canvas_sortable(x)]
        sis_cells = [f"S{x.lms_id}"] if sis else []
        ident = [x.lms_id, *sis_cells, x.username, "Section 1"]
        cell = "N/A" if hidden else cells.get(x.username)
        rows.append([*name, *ident, n(4.5), cell, *[n(90.0)] * len(totals)])
    test = ["Student", "Test"] if split_names else ["Student, Test"]
    rows.append([*test, "999", *([None] if sis else []), None, "Section 1", None, None])
    rows[-1] += [None] * len(totals)
    text = ruby_csv(rows, ";" if semicolon else ",")
    return (("\ufeff" if bom else "") + text).encode()


def canvas(tmp: Path, **export) -> tuple[Path, Path, list[Learner]]:
    """(the submissions zip, the gradebook export, the learners)."""
    learners = people("c", 100)
    download = canvas_download(tmp / "submissions.zip", learners)
    path = tmp / "canvas_gradebook.csv"
    path.write_bytes(canvas_export(learners, **export))
    return download, path, learners


# ---------------------------------------------------------------------------------------
# Moodle
# ---------------------------------------------------------------------------------------
EN, DE, ZH = MOODLE
MOODLE_TIMES = {  # the worksheet's "Last modified (submission)", Moodle's local time
    "ontime": datetime(2026, 2, 28, 10, 0),
    "late": datetime(2026, 3, 1, 18, 30),  # 17:30 UTC with --timezone Europe/Berlin
    "renamed": datetime(2026, 3, 1, 11, 0),
    "attacker": datetime(2026, 3, 2, 9, 15),
}


def moodle_full_name(x: Learner, lang: MoodleLanguage, last_first: bool = False) -> str:
    """fullname(): the site's fullnamedisplay (zh_cn's pack: last name then first, no space)."""
    if lang.code == "zh_cn":
        return f"{x.last}{x.first}"
    return f"{x.last} {x.first}" if last_first else f"{x.first} {x.last}"


def moodle_prefix(
    x: Learner, lang: MoodleLanguage, blind: bool = False, last_first: bool = False
) -> str:
    """downloader.php get_student_prefix: the name (or 'participant' under blind marking),
    ``_`` as a space, then ``_<participant id>``, through clean_filename."""
    name = lang.participant if blind else moodle_full_name(x, lang, last_first)
    return clean_filename(name.replace("_", " ") + "_" + x.lms_id)


def moodle_files(x: Learner, victim_folder: str) -> list[tuple[str, str, bytes]]:
    """(file path, file name, bytes) a learner uploaded (the file manager keeps folders)."""
    assert x.notebook is not None
    if x.kind == "renamed":
        return [("/", "attention-final.ipynb", x.notebook), ("/", "notes.pdf", PDF)]
    if x.kind == "attacker":  # a folder and a file name of the attacker's choosing
        return [(f"/{victim_folder}/", f"{victim_folder}_{NB}", x.notebook)]
    return [("/", NB, x.notebook)]


def moodle_download(
    path: Path,
    learners: list[Learner],
    *,
    version: str = "4.1",
    folders: bool = True,
    blind: bool = False,
    lang: MoodleLanguage = EN,
    last_first: bool = False,
) -> Path:
    """Moodle's "Download all submissions" (4.1+: downloader.php; "3.x": locallib.php's
    download_submissions), with an online text beside the files for ``ontime``."""
    victim = by_kind(learners)["ontime"]
    victim_folder = moodle_prefix(victim, lang, blind, last_first) + "_assignsubmission_file"
    members = {}
    for x in handed_in(learners):
        prefix = moodle_prefix(x, lang, blind, last_first)
        plugin = f"{prefix}_assignsubmission_file" + ("_" if version == "3.x" else "")
        for filepath, name, data in moodle_files(x, victim_folder):
            if folders:
                members[f"{plugin}{filepath}{name}"] = data
            else:
                members[clean_filename(f"{prefix}_assignsubmission_file_{name}")] = data
        if x.kind == "ontime":
            text = f"{prefix}_assignsubmission_onlinetext"
            sep = "/" if folders else "_"
            members[f"{text}{'_' if version == '3.x' and folders else ''}{sep}onlinetext.html"] = (
                b"<p>see the notebook</p>"
            )
    return write_zip(path, members)


MOODLE_STATUS = {
    "en": "Submitted for grading",
    "de": "Zur Bewertung abgegeben",
    "zh_cn": "已提交请评分",
}
MOODLE_NONE = {"en": "No submission", "de": "Keine Abgabe", "zh_cn": "没有作业"}
MOODLE_YES = {"en": "Yes", "de": "Ja", "zh_cn": "是的"}
MOODLE_MAX = {"en": "Maximum grade", "de": "Bestwertung", "zh_cn": "最高分"}
MOODLE_GRADED_AT = {
    "en": "Last modified (grade)",
    "de": "Zuletzt geändert (Bewertung)",
    "zh_cn": "上次修改（评分）",
}
MOODLE_CAN_CHANGE = {
    "en": "Grade can be changed",
    "de": "Bewertung kann geändert werden",
    "zh_cn": "允许更改成绩",
}
MOODLE_FEEDBACK = {"en": "Feedback comments", "de": "Feedback als Kommentar", "zh_cn": "反馈意见"}


def userdate(at: datetime, lang: MoodleLanguage) -> str:
    """Moodle's userdate($time): strftimedaydatetime, the day and the 12-hour hour without a
    leading zero (fixday, fixhour), names in the language."""
    out, fmt = "", lang.daydatetime
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            code = fmt[i + 1]
            out += {
                "A": lang.weekdays[at.weekday()],
                "B": lang.months[at.month - 1],
                "d": str(at.day),
                "m": f"{at.month:02d}",
                "Y": str(at.year),
                "H": f"{at.hour:02d}",
                "I": str(at.hour % 12 or 12),
                "M": f"{at.minute:02d}",
                "p": "AM" if at.hour < 12 else "PM",
            }[code]
            i += 2
        else:
            out += fmt[i]
            i += 1
    return out


def moodle_float(x: float, lang: MoodleLanguage) -> str:
    """format_float(x, 2) with the language's decimal separator."""
    text = f"{x:.2f}"
    return text.replace(".", ",") if lang.code == "de" else text


def moodle_worksheet(
    learners: list[Learner], lang: MoodleLanguage = EN, blind: bool = False
) -> bytes:
    """The grading worksheet (assign_grading_table downloaded as CSV: dataformat/csv): the
    roster's learners, ``absent`` with a grade typed in by hand; ``blind``: blind marking,
    downloaded by a teacher who may not see who is who (the identifier column only)."""
    header = [lang.recordid, *([] if blind else [lang.fullname, lang.email]), lang.status]
    header += [lang.grade, MOODLE_MAX[lang.code], MOODLE_CAN_CHANGE[lang.code], lang.submitted]
    header += [MOODLE_GRADED_AT[lang.code], MOODLE_FEEDBACK[lang.code]]
    rows = [header]
    for x in roster_of(learners):
        handed = x.notebook is not None
        who = [] if blind else [moodle_full_name(x, lang), x.email]
        grade = moodle_float(HAND_GRADE, lang) if x.kind == "absent" else ""
        row = [lang.hiddenuser + x.lms_id, *who]
        row += [MOODLE_STATUS[lang.code] if handed else MOODLE_NONE[lang.code], grade]
        row += [moodle_float(12.0, lang), MOODLE_YES[lang.code]]
        row += [userdate(MOODLE_TIMES[x.kind], lang) if handed else "-"]
        row += [userdate(datetime(2026, 3, 3, 9, 0), lang) if grade else "-", ""]
        rows.append(row)
    return ("\ufeff" + php_fputcsv(rows)).encode()


def moodle(
    tmp: Path, lang: MoodleLanguage = EN, blind: bool = False, **download
) -> tuple[Path, Path, list[Learner]]:
    """(the download zip, the grading worksheet, the learners)."""
    learners = people("m", 500)
    zip_path = moodle_download(
        tmp / "moodle-download.zip", learners, lang=lang, blind=blind, **download
    )
    worksheet = tmp / "moodle_worksheet.csv"
    worksheet.write_bytes(moodle_worksheet(learners, lang, blind))
    return zip_path, worksheet, learners


# ---------------------------------------------------------------------------------------
# Blackboard
# ---------------------------------------------------------------------------------------
BB_ASSIGNMENT = "Attention 01 - Exercise"
BB_TIMES = {
    "ontime": ["2026-02-28-10-00-00"],
    "late": ["2026-03-01-09-00-00", "2026-03-01-17-30-00"],  # on time, then late: it counts
    "renamed": ["2026-02-28-15-00-00"],
    "attacker": ["2026-03-02-08-00-00"],  # late; the name it chose says 2049, the victim
    "stranger": ["2026-02-28-10-00-00"],
}


def blackboard_files(x: Learner, victim: Learner, attempt: int) -> dict[str, bytes]:
    assert x.notebook is not None
    if x.kind == "late" and attempt == 0:
        return {NB: GOOD}
    if x.kind == "renamed":
        return {"attention (1).ipynb": x.notebook, "notes_final_v2.pdf": PDF}
    if x.kind == "attacker":
        return {f"{BB_ASSIGNMENT}_{victim.username}_attempt_2049-03-01-09-00-00_{NB}": x.notebook}
    return {NB: x.notebook}


def blackboard_receipt(x: Learner, stem: str, at: datetime, files: list[str]) -> bytes:
    """The receipt Blackboard writes beside an attempt's files."""
    listing = "".join(f"\tOriginal filename: {f}\n\tFilename: {stem}_{f}\n" for f in files)
    when = f"{at:%A, %B} {at.day}, {at:%Y} {at.hour % 12 or 12}:{at:%M:%S} {at:%p} UTC"
    return (
        f"Name: {x.first} {x.last} ({x.username})\nAssignment: {BB_ASSIGNMENT}\n"
        f"Date Submitted: {when}\nCurrent Grade: Needs Grading\n\nSubmission Field:\nThere "
        "is no student submission text data for this assignment.\n\nComments:\nThere are no "
        f"student comments for this assignment.\n\nFiles:\n{listing}\n"
    ).encode()


def blackboard_download(path: Path, learners: list[Learner]) -> Path:
    """Blackboard's Assignment File Download, all attempts, with their receipts."""
    victim = by_kind(learners)["ontime"]
    members = {}
    for x in handed_in(learners):
        for attempt, at in enumerate(BB_TIMES[x.kind]):
            stem = f"{BB_ASSIGNMENT}_{x.username}_attempt_{at}"
            files = blackboard_files(x, victim, attempt)
            when = datetime.strptime(at, "%Y-%m-%d-%H-%M-%S")
            members[f"{stem}.txt"] = blackboard_receipt(x, stem, when, list(files))
            for f, data in files.items():
                members[f"{stem}_{f}"] = data
    return write_zip(path, members)


GC_USER = ["Last Name", "First Name", "Username", "Student ID", "Last Access", "Availability"]
GC_COLUMN = "Attention 01 [Total Pts: 12 Score] |1234"
GC_HEADER = [*GC_USER, GC_COLUMN]


def grade_center_rows(learners: list[Learner], cells: dict[str, str] | None = None) -> list:
    """The rows of the roster's learners under GC_HEADER; ``cells``: {username: the value of
    the assignment's column} (default: ``absent``'s typed-in grade, else empty)."""
    absent = by_kind(learners)["absent"].username
    cells = {absent: "7", **(cells or {})}
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


def blackboard(tmp: Path) -> tuple[Path, Path, list[Learner]]:
    """(the download zip, the Grade Center export, the learners)."""
    learners = people("b", 700)
    download = blackboard_download(tmp / "gradebook_attention.zip", learners)
    export = tmp / "gc_export.csv"
    export.write_bytes(grade_center([GC_HEADER, *grade_center_rows(learners)]))
    return download, export, learners


# ---------------------------------------------------------------------------------------
# GitHub Classroom
# ---------------------------------------------------------------------------------------
GH_PREFIX = "attention-01-"


def github_roster(learners: list[Learner], last_first: bool = False) -> bytes:
    """The classroom roster as downloaded: every value quoted, a ``group_name`` column only
    some rows fill, a learner who has not linked an account with empty GitHub columns;
    ``last_first``: identifiers ``Last, First`` instead of e-mail addresses."""
    rows = ['"identifier","github_username","github_id","name","group_name"\n']
    for x in roster_of(learners):
        ident = f"{x.last}, {x.first}" if last_first else x.email
        if x.kind == "quiet":  # never linked a GitHub account
            rows.append(f'"{ident}","","",""\n')
        elif x.kind == "late":
            rows.append(f'"{ident}","{x.username}","{x.lms_id}","","team-a"\n')
        else:
            rows.append(f'"{ident}","{x.username}","{x.lms_id}","{x.first}"\n')
    return "".join(rows).encode()


def github_clones(base: Path, learners: list[Learner]) -> Path:
    """``gh classroom clone student-repos``: a folder of clones, .git/ and all."""
    victim = by_kind(learners)["ontime"]
    files = {}
    for x in handed_in(learners):
        clone = f"{GH_PREFIX}{x.username}"
        files[f"{clone}/.git/HEAD"] = b"ref: refs/heads/main\n"
        files[f"{clone}/.git/config"] = b"[core]\n\tbare = false\n"
        files[f"{clone}/README.md"] = "# Attention 01 — exercise\n".encode()
        assert x.notebook is not None
        if x.kind == "renamed":
            files[f"{clone}/attention-final.ipynb"] = x.notebook
            files[f"{clone}/notes.pdf"] = PDF
        elif x.kind == "late":  # the template's folder layout
            files[f"{clone}/01_attention/{NB}"] = x.notebook
        elif x.kind == "attacker":  # a folder named as the victim's clone
            files[f"{clone}/{GH_PREFIX}{victim.username}/{NB}"] = x.notebook
        else:
            files[f"{clone}/{NB}"] = x.notebook
    return write_folder(base, files)


def github_classroom(tmp: Path, last_first: bool = False) -> tuple[Path, Path, list[Learner]]:
    """(the folder of clones, the classroom roster, the learners)."""
    learners = people("g", 900)
    download = github_clones(tmp / "attention-01-submissions", learners)
    roster = tmp / "classroom_roster.csv"
    roster.write_bytes(github_roster(learners, last_first))
    return download, roster, learners


def github_course_id(x: Learner, last_first: bool = False) -> str:
    """The course id the roster gives: the identifier's."""
    from course.students import student_slug

    return student_slug(f"{x.last}, {x.first}") if last_first else x.username


def late_by(x: Learner) -> timedelta:
    """How late the learner's counted attempt is (Blackboard's times, UTC)."""
    at = datetime.strptime(BB_TIMES[x.kind][-1], "%Y-%m-%d-%H-%M-%S")
    return at - DUE
