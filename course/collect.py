"""``collect``: a folder or .zip of submissions into submitted/<student id>/<assignment>/.

Nothing is lost: a file that cannot be graded is kept under rejected/, an earlier submission
that a new one replaces is moved to archive/, and every file is listed in
reports/collect.csv (and appended to reports/collect_history.csv).

A collect runs in two steps: it reads the whole download and the roster, places every file
and checks every notebook, writing nothing (``_plan``); only then, when there is something to
collect, does it import the roster into the gradebook and write the course's folders
(``_apply``). A download or a roster that cannot be used is a CourseError before anything is
written.
"""

from __future__ import annotations

import csv
import difflib
import os
import re
import shutil
import time
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from course.config import Course, CourseError
from course.entries import (
    Entry,
    check_notebook_limited,
    folder_entries,
    max_notebook_bytes,
    read,
    top_folders,
    zip_entries,
)
from course.lms import (
    KEYS,
    LAYOUTS,
    ROSTERS,
    SHAPES,
    Placed,
    canvas_name,
    clone_prefix,
    detect,
    fits,
    guess_assignment,
    inner_name,
    moodle_name,
    nbgrader_timestamp,
    notebook_for,
    readings,
    to_utc,
)
from course.roster import (
    TIME,
    Index,
    Learner,
    import_roster,
    load_roster,
    read_roster,
    save_roster,
)
from course.students import (
    assign_ids,
    load_names,
    load_students,
    save_students,
    spelling,
    spreadsheet_safe,
    student_key,
)


@dataclass
class Rejected:
    """A file that was not accepted, and why; ``kept_as`` is where it is now."""

    student: str
    assignment: str
    file: str
    reason: str
    kept_as: str


@dataclass
class CollectRow:
    """One row of reports/collect.csv: a file found in the source and what became of it."""

    source_path: str
    name: str  # the student's folder name, as the platform exported it
    student_id: str
    assignment: str
    file: str
    outcome: str  # accepted, unchanged, rejected, superseded (an earlier attempt) or skipped
    reason: str = ""
    kept_as: str = ""


COLLECT_COLUMNS = [
    "source_path",
    "name",
    "student_id",
    "assignment",
    "file",
    "outcome",
    "reason",
    "kept_as",
]

Rows = list[tuple[Entry, CollectRow]]


@dataclass
class Keep:
    """A file to keep under rejected/ (``keep``) once the collect writes."""

    row: CollectRow
    student: str
    assignment: str
    name: str
    data: bytes
    numbered: bool


@dataclass
class Store:
    """One learner's checked notebooks of one assignment, to store in submitted/."""

    student: str
    assignment: str
    good: list[tuple[CollectRow, bytes]]
    stamp: str | None = None  # timestamp.txt, or LATE until the due date gives it a time


@dataclass
class Plan:
    """What a collect will write, decided before it writes anything."""

    layout: str
    rows: Rows
    keeps: list[Keep] = field(default_factory=list)
    stores: list[Store] = field(default_factory=list)
    new_students: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # printed once the collect has written


def keep(
    root: Path,
    student: str,
    assignment: str,
    name: str,
    data: bytes,
    used: set[Path],
    numbered: bool,
) -> str:
    """Keep ``data`` under rejected/ without overwriting another file; its path from root.

    Private to the instructor (folders 0700, files 0600): what was rejected may be anything
    a download held, another learner's work or a copy of a file it should not have had."""
    top = root / "rejected"
    folder = top / (student or "_unknown") / (assignment or "_unknown")
    folder.mkdir(parents=True, exist_ok=True)
    for path in (top, folder.parent, folder):
        path.chmod(0o700)
    n = 1
    while True:
        target = folder / (f"{n}-{name}" if numbered or n > 1 else name)
        if target not in used and (
            not target.exists() or (target.is_file() and target.read_bytes() == data)
        ):
            break
        n += 1
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    target.chmod(0o600)
    used.add(target)
    return target.relative_to(root).as_posix()


def archive_folder(root: Path, student: str, assignment: str, stamp: str) -> Path:
    """A new folder archive/<student>/<assignment>/<stamp>[-N] for an earlier submission."""
    base = root / "archive" / student / assignment
    dest, n = base / stamp, 2
    while dest.exists():
        dest, n = base / f"{stamp}-{n}", n + 1
    return dest


def collect(
    source: Path,
    course: Course,
    assignment: str | None = None,
    layout: str | None = None,
    roster: Path | None = None,
    timezone: str = "UTC",
) -> list[Rejected]:
    """Copy submissions from a folder or .zip into submitted/<student id>/<assignment>/.

    ``layout`` (default: recognised from the names, ``course.lms.detect``): ``course``, the
    course's own ``<student>/<assignment>/<notebook>.ipynb`` (possibly under one top folder),
    or, with ``assignment``, ``<student>/<notebook>.ipynb``: a student folder may have any
    name; it is mapped to a safe id (``students.csv`` keeps the mapping for later collects).
    Or an LMS's download (``canvas``, ``moodle``, ``blackboard``, ``github-classroom``;
    ``course.lms`` says how each names its files): each file is matched to a learner of the
    ``roster`` (an LMS export, ``course.roster``; default: the roster.csv an earlier collect
    kept) by the part of its name the LMS wrote, never by the part the learner typed; the
    roster is imported into the gradebook, and a submission time or late flag that the LMS
    gives (the download's names, Moodle's worksheet) is written into nbgrader's
    ``timestamp.txt`` (times of ``timezone``).

    Damaged or misnamed notebooks, two files for one student and assignment, and files of a
    learner the roster does not know are not graded: each is kept under
    rejected/<student>/<assignment>/ and reported, a file the roster cannot place with the
    layout expected and the roster's nearest learner. Files elsewhere are skipped. An earlier
    submission that a new one replaces is moved to archive/. Every file is listed in
    reports/collect.csv (and appended to reports/collect_history.csv). Bad input (no such file,
    an empty download, a download of another layout than ``layout``, a roster that cannot be
    used or that names none of the download's learners) is a CourseError before anything is
    written.
    """
    if not source.exists():
        raise CourseError(f"{source} does not exist; give a folder or a .zip of submissions")
    if layout is not None and layout not in LAYOUTS:
        raise CourseError(f"unknown layout {layout!r}; the layouts are {', '.join(LAYOUTS)}")
    if assignment is not None:
        course.assignments([assignment])  # an unknown --assignment is the instructor's typo
    learners = read_roster(roster) if roster is not None else None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    zf, entries = _open_source(source)
    try:
        plan, learners = _plan(
            source, entries, zf, course, assignment, layout, (learners, roster), timezone
        )
    finally:
        if zf is not None:
            zf.close()
    report = [row for _, row in plan.rows]
    if not plan.stores and not any(r.outcome == "rejected" for r in report):
        _write_reports(course.reports, report, stamp)
        raise CourseError(_nothing_to_collect(source, course, plan.layout, assignment, report))
    archived = _apply(plan, course, roster is not None, learners, stamp)
    rejected = _write_reports(course.reports, report, stamp)
    _print_summary(plan, course, archived)
    return rejected


def _open_source(source: Path) -> tuple[zipfile.ZipFile | None, list[Entry]]:
    """The zip (or None for a folder) and its entries, sorted; a CourseError for a file that
    is no zip, or an empty download."""
    zf: zipfile.ZipFile | None = None
    if source.is_file():
        if not zipfile.is_zipfile(source):
            raise CourseError(f"{source} is neither a folder nor a .zip file")
        try:
            zf = zipfile.ZipFile(source)
            entries = zip_entries(zf)
        except (zipfile.BadZipFile, OSError) as err:
            raise CourseError(f"{source}: damaged zip ({err})") from err
    else:
        entries = folder_entries(source)
    entries.sort(key=lambda e: e.inner)  # stable: a name twice in a zip keeps its order
    if not any(not (e.ignored or e.unsafe or e.link) for e in entries):
        if zf is not None:
            zf.close()
        raise CourseError(
            f"{source} is empty: it holds no file"
            + (" but system files" if entries else "")
            + "; download the submissions again"
        )
    return zf, entries


def _plan(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    layout: str | None,
    given: tuple[list[Learner] | None, Path | None],
    timezone: str,
) -> tuple[Plan, list[Learner] | None]:
    """Everything the collect will do, decided from the download and the roster alone
    (``given``: the learners of --roster, and its path)."""
    learners, roster_path = given
    known = course.assignments()
    files = [e.parts for e in entries if not (e.ignored or e.unsafe or e.link)]
    depth = 2 if assignment else 3
    top = top_folders(entries, depth, assignment, known)
    course_score = sum(len(p) - top == depth and p[-1].lower().endswith(".ipynb") for p in files)
    found = detect(_unwrapped(files), course_score)
    if layout is None:
        layout = found or "course"
    elif layout != "course" and not fits(layout, _unwrapped(files)):
        looks = f"; it looks like a {found} download (--layout {found})" if found else ""
        raise CourseError(
            f"{source} is not a {layout} download: none of its {len(files)} file(s) is "
            f"named {SHAPES[layout]}{looks}"
        )
    if layout == "course":
        plan = _course_plan(source, entries, zf, course, assignment, top)
        return plan, learners
    learners = learners if learners is not None else load_roster(course.root)
    _check_roster(layout, learners, roster_path or course.root / "roster.csv")
    assert learners is not None
    plan = _lms_plan(source, entries, zf, course, assignment, layout, learners, timezone)
    return plan, learners


def _unwrapped(files: list[tuple[str, ...]], layout: str = "") -> list[tuple[str, ...]]:
    """``files`` without one folder that holds them all (an unzipped download's own folder)."""
    return [p[_wrapper(files, layout) :] for p in files]


def _wrapper(files: list[tuple[str, ...]], layout: str = "") -> int:
    """1 when one folder holds every file of the download and is not the LMS's own (a
    Moodle participant's folder, a GitHub clone with its .git/), else 0."""
    if not files or any(len(p) < 2 for p in files) or len({p[0] for p in files}) > 1:
        return 0
    if any(p[1] == ".git" for p in files):
        return 0
    if layout in ("", "moodle") and readings("moodle", files[0]):
        return 0
    return 1


def _check_roster(layout: str, learners: list[Learner] | None, where: Path) -> None:
    """A CourseError when there is no roster, or it names nobody as ``layout`` does."""
    if learners is None:
        raise CourseError(
            f"a {layout} download names learners by their {layout} "
            f"{KEYS[layout].replace('_', ' ')}: give --roster FILE, {ROSTERS[layout]}"
        )
    key = KEYS[layout]
    if not any(getattr(x, key) for x in learners):
        raise CourseError(
            f"the roster {where} gives no learner a {layout} "
            f"{key.replace('_', ' ')}, which the {layout} download names learners by: give "
            f"{ROSTERS[layout]}"
        )


def _apply(
    plan: Plan,
    course: Course,
    roster_given: bool,
    learners: list[Learner] | None,
    stamp: str,
) -> list[tuple[str, str]]:
    """Write what ``plan`` decided: the roster into the gradebook and roster.csv, new ids into
    students.csv, rejected files under rejected/, submissions into submitted/."""
    root = course.root
    if roster_given and learners is not None:
        import_roster(learners, course)
        save_roster(root, learners)
    save_students(root, plan.new_students)
    used: set[Path] = set()
    for k in plan.keeps:
        k.row.kept_as = keep(root, k.student, k.assignment, k.name, k.data, used, k.numbered)
    stamps = _late_stamps(course, plan.stores)
    archived: list[tuple[str, str]] = []
    for store in plan.stores:
        _store(root, course, store, stamps.get((store.student, store.assignment)), stamp, archived)
    return archived


def _print_summary(plan: Plan, course: Course, archived: list[tuple[str, str]]) -> None:
    """What the collect did, file by file where something needs the instructor's eye."""
    report = [row for _, row in plan.rows]
    outcomes = [r.outcome for r in report]
    silent = sum(r.reason == "system file, ignored" for r in report)
    taken = {(r.student_id, r.assignment) for r in report if r.outcome in ("accepted", "unchanged")}
    for r in report:
        if r.outcome == "rejected":
            kept = f"kept as {r.kept_as}" if r.kept_as else "not kept"
            earlier = course.submitted / r.student_id / r.assignment
            if r.student_id and (r.student_id, r.assignment) not in taken and earlier.is_dir():
                kept += f"; the earlier submitted/{r.student_id}/{r.assignment}/ stays"
            print(terminal_safe(f"REJECTED {r.source_path}: {r.reason} ({kept})"))
        elif r.outcome == "superseded":
            print(terminal_safe(f"SUPERSEDED {r.source_path}: {r.reason} (kept as {r.kept_as})"))
        elif r.outcome == "skipped" and r.reason != "system file, ignored":
            print(terminal_safe(f"SKIPPED {r.source_path}: {r.reason}"))
        elif r.outcome == "accepted" and r.reason:
            print(terminal_safe(f"NOTE {r.source_path}: {r.reason}"))
    for old, new in archived:
        print(terminal_safe(f"ARCHIVED {old}/ -> {new}/ (replaced by this collect)"))
    for note in plan.notes:
        print(terminal_safe(note))
    superseded = outcomes.count("superseded")
    print(
        f"collected {outcomes.count('accepted')} file(s) into {course.submitted} "
        f"({outcomes.count('unchanged')} unchanged) from a {plan.layout} download; "
        f"{outcomes.count('rejected')} rejected, "
        + (f"{superseded} earlier attempt(s) kept aside, " if superseded else "")
        + f"{outcomes.count('skipped') - silent} skipped, {len(archived)} archived"
        + (f", {silent} system file(s) ignored" if silent else "")
        + f"; report: {course.reports / 'collect.csv'}"
    )


def _nothing_to_collect(
    source: Path, course: Course, layout: str, assignment: str | None, report: list[CollectRow]
) -> str:
    """The error of a download in which nothing could be used, with the layout expected."""
    shape = SHAPES[layout]
    if layout == "course" and assignment:
        shape = "<student>/<notebook>.ipynb"
    return (
        f"nothing to collect in {source}: expected {shape}"
        + (
            f" for assignment {assignment}"
            if assignment
            else f" with <assignment> one of {', '.join(course.assignments())}"
        )
        + (" (one top folder around it is fine)" if layout == "course" else "")
        + (
            f"; {len(report)} file(s) skipped, see {course.reports / 'collect.csv'}"
            if report
            else ""
        )
    )


def _course_plan(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    top: int,
) -> Plan:
    """The course's own layout: a row per file, and the notebooks to store (student ids from
    the folder names, through students.csv)."""
    root = course.root
    known = course.assignments()
    depth = 2 if assignment else 3
    layout = (
        "<student>/<notebook>.ipynb" if assignment else "<student>/<assignment>/<notebook>.ipynb"
    )
    limit = max_notebook_bytes(course.settings)
    plan = Plan("course", [])
    candidates: Rows = []  # notebooks to check
    for e in entries:
        odd = e.ignored or e.unsafe or bool(e.link)
        rel = e.parts if odd else e.parts[top:]
        row = CollectRow(f"{source}/{e.inner}", "", "", "", rel[-1], "skipped")
        if len(rel) > 1 and not odd:
            row.name = rel[0]
        if len(rel) == depth and not odd:
            row.assignment = assignment or rel[1]
        if _odd(e, row):
            pass
        elif len(rel) != depth:
            where = "in an extra folder" if len(rel) > depth else "not in a student folder"
            row.reason = f"{where}; expected {layout}"
        elif row.assignment not in known:
            row.reason = (
                f"unknown assignment folder {row.assignment!r}; the assignments are "
                f"{', '.join(known)}"
            )
        elif not rel[-1].lower().endswith(".ipynb"):
            row.reason = "not a notebook (.ipynb)"
        else:
            candidates.append((e, row))
        plan.rows.append((e, row))

    # Two spellings of one name ("ALICE" after "alice") are one key, so one id: a spelling
    # other than the one students.csv holds is rejected, not merged into that submission.
    spelled = load_names(root)
    kept_candidates = []
    for e, row in candidates:
        key, written = student_key(row.name), spelling(row.name)
        first = spelled.get(key, written)  # two spellings in one download: two files
        if written == first:
            kept_candidates.append((e, row))
            continue
        row.outcome = "rejected"
        row.reason = (
            f"the folder {row.name!r} and the folder {first!r} are two spellings of one "
            f"student's name: nothing was replaced. If it is the same student, rename the "
            f"folder to {first!r} and collect again; if not, give it a name of its own"
        )
        data, _ = read(e, zf, limit)
        if data is not None:
            plan.keeps.append(Keep(row, "_spellings", row.assignment, row.file, data, True))
    ids = load_students(root)
    plan.new_students = assign_ids([row.name for _, row in kept_candidates], ids)
    for _, row in plan.rows:
        row.student_id = ids.get(student_key(row.name), "") if row.name else ""
    _check_notebooks(plan, course, kept_candidates, zf, {})
    return plan


def _odd(e: Entry, row: CollectRow) -> bool:
    """Set ``row``'s outcome for a link, a system file or an unsafe member; whether it was."""
    if e.link:
        row.outcome = "rejected"
        row.reason = (
            f"a link (to {e.link}), not a file: not followed and not kept; collect "
            "the notebook itself"
        )
    elif e.ignored:
        row.reason = "system file, ignored"
    elif e.unsafe:
        row.outcome = "rejected"
        row.reason = "unsafe path in the zip (absolute, or with '..'): not extracted"
    return bool(e.link or e.ignored or e.unsafe)


@dataclass
class Found:
    """A file of an LMS download, placed: its row, the reading taken, its learner."""

    entry: Entry
    row: CollectRow
    placed: Placed
    learner: Learner | None


def _lms_plan(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    layout: str,
    learners: list[Learner],
    timezone: str,
) -> Plan:
    """An LMS download: a row per file, the notebooks to store (student ids from the roster)
    and the ``timestamp.txt`` of each (student, assignment) whose time the LMS gives."""
    index = Index(learners)
    plan = Plan(layout, [])
    found = _place_all(plan, source, entries, layout, learners, index)
    _check_whole(source, layout, found, learners)
    if assignment is None:
        assignment = _assignment_of(source, course, found)
    by_learner = _by_learner(plan, found, layout, assignment, zf, course, learners)
    candidates: Rows = []
    stamps: dict[tuple[str, str], str] = {}
    expected = course.notebook_names(assignment)
    for sid, items in sorted(by_learner.items()):
        latest = _latest_attempt(plan, sid, assignment, items, zf, course)
        when = _stamp(layout, sid, [f.placed for f in latest], index, timezone)
        if when is not None:
            stamps[(sid, assignment)] = when
        candidates += _notebooks_of(layout, latest, expected)
    _check_notebooks(plan, course, candidates, zf, stamps)
    _roster_summary(plan, learners, found, layout)
    return plan


def _place_all(
    plan: Plan,
    source: Path,
    entries: list[Entry],
    layout: str,
    learners: list[Learner],
    index: Index,
) -> list[Found]:
    """Place every file of the download by the LMS's part of its name."""
    files = [e.parts for e in entries if not (e.ignored or e.unsafe or e.link)]
    strip = _wrapper(files, layout)
    clones = ""
    if layout == "github-classroom":
        tops = [p[strip] for p in files if len(p) > strip + 1]
        clones = clone_prefix(tops, [x.username for x in learners])
    options: list[tuple[Entry, CollectRow, list[Placed]]] = []
    for e in entries:
        row = CollectRow(f"{source}/{e.inner}", "", "", "", e.parts[-1], "skipped")
        plan.rows.append((e, row))
        if _odd(e, row):
            continue
        if layout == "github-classroom" and ".git" in e.parts[:-1]:
            row.reason = "git's own files (.git/), ignored"
            continue
        found = readings(layout, e.parts[strip:], clones)
        if not found:
            row.reason = _unplaced(layout, e.parts[strip:])
            continue
        options.append((e, row, found))
    assignment_name = _common_assignment(layout, options, index)
    placed = []
    for e, row, found in options:
        p, learner, note = _choose(layout, found, index, assignment_name)
        row.name = p.shown or p.who
        if learner is not None:
            row.student_id = learner.student_id
        elif p.anonymous and layout == "canvas":
            row.student_id = anonymous_id(p.who)
        inner = inner_name(layout, p)
        notes = [n for n in (note, _inner_note(layout, p, inner)) if n]
        row.reason = "; ".join(notes)
        if p.receipt:
            row.reason = "; ".join([f"{layout}'s receipt of the attempt of {p.attempt}", *notes])
            continue
        placed.append(Found(e, row, p, learner))
    return placed


def _choose(
    layout: str, found: list[Placed], index: Index, assignment_name: str
) -> tuple[Placed, Learner | None, str]:
    """The reading to take, with a note when the download's name disagrees with the roster's:
    the leftmost whose learner the roster has and whose name there agrees with the
    download's (and, for Blackboard, whose assignment is the download's; for Canvas, where two
    learners agree, the one with the longer name, with a note); else the leftmost
    if it is Canvas's anonymous prefix; else the leftmost whose learner the roster has and
    whose name the LMS could have written; else the leftmost."""
    known = [(p, _learner(index, layout, p)) for p in found]
    known_only = [(p, x) for p, x in known if x is not None]
    if assignment_name:
        same = [(p, x) for p, x in known_only if p.assignment == assignment_name]
        known_only = same or known_only
    agreeing = [(p, x) for p, x in known_only if _agrees(layout, p, x)]
    if layout == "canvas" and len({x.student_id for _, x in agreeing}) > 1:
        # Canvas keeps a "_<digits>" at the end of a sortable name ("Smith, Bob_456" is
        # written "smithbob_456_<user id>_"): the leftmost reading would give the file to
        # user 456. The whole name is the uploader's: the longest name the roster confirms.
        p, x = max(agreeing, key=lambda px: len(px[0].shown))
        others = sorted({o.student_id for _, o in agreeing if o.student_id != x.student_id})
        return (
            p,
            x,
            f"the download's name {p.shown!r} ends in the id of another learner "
            f"({', '.join(others)}): taken as {x.student_id}, whose whole name it is",
        )
    if agreeing:
        return agreeing[0][0], agreeing[0][1], ""
    if found[0].anonymous:
        return found[0], None, ""
    possible = [(p, x) for p, x in known_only if _possible(layout, p)]
    if possible:
        p, x = possible[0]
        return (
            p,
            x,
            f"the download names the learner {p.shown!r}, the roster {x.name!r}: taken as "
            f"{x.student_id} by the {layout} {KEYS[layout].replace('_', ' ')} {p.who}",
        )
    return found[0], None, ""


def _possible(layout: str, p: Placed) -> bool:
    """Whether the LMS could have written the name of reading ``p``: Canvas lowercases names
    and joins ``_<digits>_`` in them."""
    if layout != "canvas":
        return True
    return p.shown == p.shown.lower() and not re.search(r"(^|_)[0-9]+_", p.shown)


def _agrees(layout: str, p: Placed, x: Learner) -> bool:
    """Whether the name the download writes for ``p`` is the roster's for ``x`` (as that LMS
    writes names into file names); True where the LMS writes no name."""
    if layout == "canvas" and not p.anonymous:
        names = {canvas_name(x.sortable), canvas_name(f"{x.last_name}, {x.first_name}")}
        names |= {canvas_name(x.name)}
        return p.shown in names or not (x.sortable or x.name)
    if layout == "moodle" and not p.anonymous:
        return not x.name or p.shown == moodle_name(x.name)
    return True


def _learner(index: Index, layout: str, p: Placed) -> Learner | None:
    """The roster's learner of a reading."""
    if p.anonymous and layout == "canvas":
        return None
    return index.find(KEYS[layout], p.who)


def _common_assignment(
    layout: str, options: list[tuple[Entry, CollectRow, list[Placed]]], index: Index
) -> str:
    """Blackboard's name of the assignment, as most files' first roster-known reading has it
    (a learner's part never decides it); "" for the other layouts."""
    if layout != "blackboard":
        return ""
    names: Counter[str] = Counter()
    for _, _, found in options:
        for p in found:
            if _learner(index, layout, p) is not None:
                names[p.assignment] += 1
                break
    return names.most_common(1)[0][0] if names else ""


def anonymous_id(who: str) -> str:
    """The course id of a learner Canvas names only by an anonymous id (``anon_X8kQ2``):
    case kept apart (``anon_-x8k-q2``), since two anonymous ids may differ in case only."""
    anon = who.removeprefix("anon_")
    return "anon_" + "".join("-" + c.lower() if c.isupper() else c for c in anon)


def _unplaced(layout: str, parts: tuple[str, ...]) -> str:
    """Why a file is not placed: the layout expected, and the nearest form it has."""
    why = f"not named as a {layout} download names its files ({SHAPES[layout]})"
    others = [x for x in ("canvas", "moodle", "blackboard") if x != layout and readings(x, parts)]
    if others:
        return why + f"; it is named as a {others[0]} download names its files"
    if layout == "moodle" and "_assignsubmission_" in parts[0]:
        return why + f"; nearest: {parts[0]!r} has Moodle's _assignsubmission_ but not its form"
    return why


def _inner_note(layout: str, p: Placed, inner: str) -> str:
    """The report's note on a learner's part that holds an LMS name of its own."""
    if not inner:
        return ""
    return (
        f"the name the learner chose holds another {layout} name ({inner!r}): taken as "
        f"{p.shown or p.who}'s by the LMS's part {p.prefix!r}, never by the learner's"
    )


def _check_whole(source: Path, layout: str, found: list[Found], learners: list[Learner]) -> None:
    """A CourseError, before anything is written, when the roster names none of the
    download's learners (the roster of another class, or of another LMS)."""
    if not found or any(f.learner is not None or f.placed.anonymous for f in found):
        return
    shown = sorted({f.placed.shown or f.placed.who for f in found})
    key = KEYS[layout].replace("_", " ")
    raise CourseError(
        f"none of the {len(shown)} learner(s) of {source} is in the roster ({len(learners)} "
        f"learner(s)); the download names them by their {layout} {key} "
        f"({', '.join(f'{f.placed.shown!r} {f.placed.who}' for f in found[:3])}): give the "
        f"roster of this class: {ROSTERS[layout]}"
    )


def _assignment_of(source: Path, course: Course, found: list[Found]) -> str:
    """The assignment of the download, from its notebooks' names."""
    names = [f.placed.file for f in found if f.placed.file.lower().endswith(".ipynb")]
    books = {a: course.notebook_names(a) for a in course.assignments()}
    assignment = guess_assignment(names, books)
    if assignment is None:
        raise CourseError(
            f"cannot tell from the notebooks' names in {source} which assignment it is "
            f"({', '.join(sorted(set(names))) or 'no notebook'}); give --assignment, one of "
            f"{', '.join(books)}"
        )
    print(f"{source}: assignment {assignment} (from the notebooks' names)")
    return assignment


def _by_learner(
    plan: Plan,
    found: list[Found],
    layout: str,
    assignment: str,
    zf: zipfile.ZipFile | None,
    course: Course,
    learners: list[Learner],
) -> dict[str, list[Found]]:
    """The placed files by course id; a file of a learner the roster lacks is rejected and
    kept, with the roster's nearest learner."""
    limit = max_notebook_bytes(course.settings)
    key_name = KEYS[layout].replace("_", " ")
    out: dict[str, list[Found]] = {}
    for f in found:
        f.row.assignment = assignment
        if f.row.student_id:
            out.setdefault(f.row.student_id, []).append(f)
            continue
        p = f.placed
        f.row.outcome = "rejected"
        f.row.reason = "; ".join(
            x
            for x in (
                f"{p.shown!r} ({layout} {key_name} {p.who}) is not in the roster"
                + _nearest(layout, p, learners)
                + ": add the learner to the roster (export it again from the LMS) and collect "
                "again",
                f.row.reason,
            )
            if x
        )
        data, why = read(f.entry, zf, limit)
        if data is None:
            f.row.reason += f" (not kept: {why})"
        else:
            name = f"{p.who}-{f.entry.parts[-1]}"
            plan.keeps.append(Keep(f.row, "_not_in_roster", assignment, name, data, False))
    return out


def _nearest(layout: str, p: Placed, learners: list[Learner]) -> str:
    """``; nearest in the roster: ...``: the roster's learner whose name is closest to the
    download's, with their identity; "" when none is close."""
    key = KEYS[layout]
    names = {x.name: x for x in learners if x.name}
    if layout == "canvas":
        names = {canvas_name(x.sortable or x.name): x for x in learners if x.sortable or x.name}
    close = difflib.get_close_matches(p.shown, list(names), n=1, cutoff=0.6) if p.shown else []
    if not close:
        ids = {getattr(x, key): x for x in learners if getattr(x, key)}
        close_ids = difflib.get_close_matches(p.who, list(ids), n=1, cutoff=0.8)
        if not close_ids:
            return "; no roster learner has a name like it"
        x = ids[close_ids[0]]
    else:
        x = names[close[0]]
    return f"; nearest in the roster: {x.name or x.student_id} ({key.replace('_', ' ')} " + (
        f"{getattr(x, key) or 'none'})"
    )


def _latest_attempt(
    plan: Plan,
    sid: str,
    assignment: str,
    items: list[Found],
    zf: zipfile.ZipFile | None,
    course: Course,
) -> list[Found]:
    """The files of a learner's latest attempt (Blackboard: by the time the LMS wrote); the
    earlier attempts' files are superseded, kept under rejected/."""
    last = max(f.placed.attempt for f in items)
    limit = max_notebook_bytes(course.settings)
    latest = []
    for f in items:
        if f.placed.attempt == last:
            latest.append(f)
            continue
        f.row.outcome = "superseded"
        f.row.reason = "; ".join(
            x
            for x in (
                f"an earlier attempt ({f.placed.attempt}); the latest attempt ({last}) is the "
                "submission",
                f.row.reason,
            )
            if x
        )
        data, why = read(f.entry, zf, limit)
        if data is None:
            f.row.kept_as = f"not kept: {why}"
        else:
            name = f"attempt-{f.placed.attempt}-{f.entry.parts[-1]}"
            plan.keeps.append(Keep(f.row, sid, assignment, name, data, False))
    return latest


def _stamp(layout: str, sid: str, latest: list[Placed], index: Index, timezone: str) -> str | None:
    """``timestamp.txt`` of a learner's submission from what the LMS says: the time in the
    download's names (Blackboard), the worksheet's (Moodle), or the late flag (Canvas)."""
    if latest and latest[0].submitted_at is not None:
        return nbgrader_timestamp(to_utc(latest[0].submitted_at, timezone))
    if any(p.late for p in latest):
        return LATE
    learner = index.find("student_id", sid)
    if layout == "moodle" and learner is not None and learner.submitted:
        at = datetime.strptime(learner.submitted, TIME)
        return nbgrader_timestamp(to_utc(at, timezone))
    return None


def _notebooks_of(layout: str, latest: list[Found], expected: list[str]) -> Rows:
    """The notebooks among a learner's latest files (a renamed only notebook taken as the
    assignment's); the other files are skipped."""
    renamed = notebook_for([f.placed.file.rsplit("/", 1)[-1] for f in latest], expected)
    out: Rows = []
    for f in latest:
        p, row = f.placed, f.row
        base = p.file.rsplit("/", 1)[-1]
        row.file = base
        notes = [n for n in (p.note, row.reason) if n]
        if p.kind != "file" or not base.lower().endswith(".ipynb"):
            row.reason = "; ".join(["not a notebook (.ipynb)", *notes[1:]])
            continue
        if renamed and base == renamed[0]:
            row.file = renamed[1]
            notes.append(
                f"handed in as {base!r}, the learner's only notebook: taken as {renamed[1]}"
            )
        if p.late:
            notes.append(f"{layout} marks it late")
        row.reason = "; ".join(notes)
        out.append((f.entry, row))
    return out


def _roster_summary(plan: Plan, learners: list[Learner], found: list[Found], layout: str) -> None:
    """A note of how many of the roster's learners handed in."""
    handed = {f.row.student_id for f in found if f.learner is not None}
    anonymous = {f.row.student_id for f in found if f.learner is None and f.row.student_id}
    line = f"roster: {len(handed)} of {len(learners)} learner(s) in this {layout} download"
    if anonymous:
        line += (
            f"; {len(anonymous)} learner(s) named only by Canvas's anonymous ids, collected as "
            "anon_<id> (Canvas says who they are once the grades are posted: download the "
            "submissions again then and collect them with the roster)"
        )
    plan.notes.append(line)


LATE = "late"  # a late flag without a time, until the due date gives it one


def _check_notebooks(
    plan: Plan,
    course: Course,
    candidates: Rows,
    zf: zipfile.ZipFile | None,
    stamps: dict[tuple[str, str], str],
) -> None:
    """Read and check every candidate notebook (no writing): two files for one learner and
    assignment, misnamed and damaged notebooks are rejected (to keep); the good ones become
    the plan's stores."""
    limit = max_notebook_bytes(course.settings)
    groups: dict[tuple[str, str], Rows] = {}
    for e, row in candidates:
        groups.setdefault((row.student_id, row.assignment), []).append((e, row))
    for (sid, a), items in sorted(groups.items()):
        files = [row.file for _, row in items]
        if len(set(files)) < len(files):
            _reject_twice(plan, sid, a, items, zf, limit)
            continue
        expected = course.notebook_names(a)
        good: list[tuple[CollectRow, bytes]] = []
        for e, row in items:
            data, why = read(e, zf, limit)
            if data is None:
                row.outcome, row.reason = "rejected", why
                continue
            if row.file not in expected:
                why = (
                    f"misnamed notebook: expected {' or '.join(expected)}; rename the file "
                    "and collect again"
                )
            else:
                why = check_notebook_limited(data, course.settings) or ""
            if why:
                row.outcome, row.reason = "rejected", why
                plan.keeps.append(Keep(row, sid, a, row.file, data, False))
            else:
                good.append((row, data))
        if good:
            plan.stores.append(Store(sid, a, good, stamps.get((sid, a))))


def _reject_twice(
    plan: Plan, sid: str, a: str, items: Rows, zf: zipfile.ZipFile | None, limit: int
) -> None:
    """Two files of one name for one learner and assignment: neither counts, both are kept."""
    paths = [e.inner for e, _ in items]
    count = {2: "two", 3: "three"}.get(len(paths), str(len(paths)))
    same = " (the same name more than once in the zip)" if len(set(paths)) < len(paths) else ""
    message = (
        f"{count} files for student {sid}, assignment {a} in this collect: "
        f"{', '.join(paths)}{same}; keep one and collect again"
    )
    for e, row in items:
        row.outcome, row.reason = "rejected", message
        data, why = read(e, zf, limit)
        if data is None:
            row.reason += f" (this copy is not kept: {why})"
        else:
            plan.keeps.append(Keep(row, sid, a, row.file, data, True))


def _late_stamps(course: Course, stores: list[Store]) -> dict[tuple[str, str], str]:
    """Each store's ``timestamp.txt``: a late flag without a time (Canvas's ``_LATE``) as the
    first second after the assignment's due date in the gradebook; none, with a note,
    without one."""
    out = {(s.student, s.assignment): s.stamp for s in stores if s.stamp and s.stamp != LATE}
    flagged = [(s.student, s.assignment) for s in stores if s.stamp == LATE]
    if not flagged:
        return out
    from course.gradebook import due_dates

    due = due_dates(course.gradebook_url)
    for sid, a in flagged:
        at = due.get(a)
        if at is not None:
            out[(sid, a)] = nbgrader_timestamp(at + timedelta(seconds=1))
        else:
            print(
                f"NOTE {sid}/{a}: the LMS marks it late but gives no time, and the gradebook "
                f"has no due date for {a}: set one (nbgrader db assignment add {a} "
                "--duedate=...) and collect again for nbgrader to count it late"
            )
    return out


def _store(
    root: Path,
    course: Course,
    store: Store,
    when: str | None,
    stamp: str,
    archived: list[tuple[str, str]],
) -> None:
    """Store one learner's checked notebooks in submitted/ (with their ``timestamp.txt``);
    the earlier submission they replace goes to archive/."""
    sid, a, good = store.student, store.assignment, store.good
    folder = course.submitted / sid / a
    good_files = [(row.file, data) for row, data in good]
    if when is not None:
        good_files.append(("timestamp.txt", when.encode()))
    if all(
        (folder / name).is_file() and (folder / name).read_bytes() == data
        for name, data in good_files
    ):
        for row, _ in good:
            row.outcome, row.reason = "unchanged", "identical to the file in submitted/"
            row.kept_as = (folder / row.file).relative_to(root).as_posix()
        return
    note = ""
    if folder.is_dir() and any(folder.iterdir()):
        dest = archive_folder(root, sid, a, stamp)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(folder), str(dest))
        old, new = folder.relative_to(root).as_posix(), dest.relative_to(root).as_posix()
        archived.append((old, new))
        note = f"replaces the earlier submission, moved to {new}/"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in good_files:
        (folder / name).write_bytes(data)
    for row, _ in good:
        notes = [n for n in (row.reason, note) if n]
        if when is not None:
            notes.append(f"submitted at {when} (timestamp.txt)")
        row.outcome, row.reason = "accepted", "; ".join(notes)
        row.kept_as = (folder / row.file).relative_to(root).as_posix()


def _write_reports(reports: Path, report: list[CollectRow], stamp: str) -> list[Rejected]:
    """reports/collect.csv (this collect), collect_history.csv (every collect) and
    collect_rejected.csv; returns the rejected files."""
    reports.mkdir(parents=True, exist_ok=True)
    with (reports / "collect.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLLECT_COLUMNS)
        w.writeheader()
        w.writerows(_safe_row(asdict(r)) for r in report)
    history = reports / "collect_history.csv"
    fresh = not history.exists() or history.stat().st_size == 0
    with history.open("a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["collected_at", *COLLECT_COLUMNS])
        if fresh:
            w.writeheader()
        w.writerows(_safe_row({"collected_at": stamp, **asdict(r)}) for r in report)
    rejected = [
        Rejected(r.student_id, r.assignment, r.file, r.reason, r.kept_as)
        for r in report
        if r.outcome == "rejected"
    ]
    with (reports / "collect_rejected.csv").open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student", "assignment", "file", "reason", "kept_as"])
        out.writerows(
            [
                spreadsheet_safe(str(v))
                for v in (r.student, r.assignment, r.file, r.reason, r.kept_as)
            ]
            for r in rejected
        )
    return rejected


def _safe_row(row: dict) -> dict:
    """A report row whose text cells a spreadsheet shows as text (a learner names the folders)."""
    return {k: spreadsheet_safe(v) if isinstance(v, str) else v for k, v in row.items()}


def terminal_safe(text: str) -> str:
    """``text`` with control characters written as escapes: a folder name that holds an ANSI
    sequence does not rewrite the instructor's terminal."""
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
