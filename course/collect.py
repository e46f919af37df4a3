"""``collect``: a folder or .zip of submissions into submitted/<student id>/<assignment>/.

Nothing is lost: a file that cannot be graded is kept under rejected/, an earlier submission
that a new one replaces is moved to archive/, and every file is listed in
reports/collect.csv (and appended to reports/collect_history.csv).
"""

from __future__ import annotations

import csv
import os
import shutil
import time
import zipfile
from dataclasses import asdict, dataclass
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
    SHAPES,
    Placed,
    clone_prefix,
    detect,
    fits,
    guess_assignment,
    nbgrader_timestamp,
    notebook_for,
    place,
    to_utc,
)
from course.roster import Index, Learner, import_roster, load_roster, read_roster, save_roster
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
    kept), which is imported into the gradebook, and a submission time or late flag that the
    download carries is written into nbgrader's ``timestamp.txt`` (times of ``timezone``).

    Damaged or misnamed notebooks, two files for one student and assignment, and files of a
    learner the roster does not know are not graded: each is kept under
    rejected/<student>/<assignment>/ and reported. Files elsewhere are skipped. An earlier
    submission that a new one replaces is moved to archive/. Every file is listed in
    reports/collect.csv (and appended to reports/collect_history.csv). Bad input (no such file,
    an empty download, a download of another layout than ``layout``, a roster that cannot be
    used) is a CourseError before anything is written.
    """
    if not source.exists():
        raise CourseError(f"{source} does not exist; give a folder or a .zip of submissions")
    if layout is not None and layout not in LAYOUTS:
        raise CourseError(f"unknown layout {layout!r}; the layouts are {', '.join(LAYOUTS)}")
    root = course.root
    if assignment is not None:
        course.assignments([assignment])  # an unknown --assignment is the instructor's typo
    known = course.assignments()
    learners = read_roster(roster) if roster is not None else None
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
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    try:
        entries.sort(key=lambda e: e.inner)  # stable: a name twice in a zip keeps its order
        files = [e.parts for e in entries if not (e.ignored or e.unsafe or e.link)]
        if not files:
            raise CourseError(
                f"{source} is empty: it holds no file"
                + (" but system files" if entries else "")
                + "; download the submissions again"
            )
        depth = 2 if assignment else 3
        top = top_folders(entries, depth, assignment, known)
        course_score = sum(
            len(p) - top == depth and p[-1].lower().endswith(".ipynb") for p in files
        )
        found = detect(files, course_score)
        if layout is None:
            layout = found or "course"
        elif layout != "course" and not fits(layout, files):
            looks = f"; it looks like a {found} download (--layout {found})" if found else ""
            raise CourseError(
                f"{source} is not a {layout} download: none of its {len(files)} file(s) is "
                f"named {SHAPES[layout]}{looks}"
            )
        if layout == "course":
            rows, candidates = _course_rows(source, entries, zf, course, assignment, top)
            stamps: dict[tuple[str, str], str] = {}
        else:
            if learners is None:
                learners = load_roster(root)
            if learners is None:
                raise CourseError(
                    f"a {layout} download names learners by their {layout} "
                    f"{KEYS[layout].replace('_', ' ')}: give --roster FILE, the class list "
                    "exported from the LMS (the instructor guide says which export)"
                )
            key = KEYS[layout]
            if not any(getattr(x, key) or (layout == "moodle" and x.name) for x in learners):
                where = roster or root / "roster.csv"
                raise CourseError(
                    f"the roster {where} gives no learner a {layout} {key.replace('_', ' ')}, "
                    f"which the {layout} download names learners by: export the class list "
                    "from that LMS (the instructor guide says which export)"
                )
            rows, candidates, stamps = _lms_rows(
                source, entries, zf, course, assignment, layout, learners, timezone
            )
        if roster is not None and learners is not None:
            import_roster(learners, course)
            save_roster(root, learners)
        if layout != "course":
            stamps = _late_stamps(course, stamps)
        archived = _store(root, course, candidates, zf, stamp, stamps)
    finally:
        if zf is not None:
            zf.close()

    report = [row for _, row in rows]
    reports = course.reports
    rejected = _write_reports(reports, report, stamp)

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
    superseded = outcomes.count("superseded")
    print(
        f"collected {outcomes.count('accepted')} file(s) into {course.submitted} "
        f"({outcomes.count('unchanged')} unchanged) from a {layout} download; "
        f"{outcomes.count('rejected')} rejected, "
        + (f"{superseded} earlier attempt(s) kept aside, " if superseded else "")
        + f"{outcomes.count('skipped') - silent} skipped, {len(archived)} archived"
        + (f", {silent} system file(s) ignored" if silent else "")
        + f"; report: {reports / 'collect.csv'}"
    )
    if not any(o in ("accepted", "unchanged", "rejected") for o in outcomes):
        shape = SHAPES[layout]
        if layout == "course" and assignment:
            shape = "<student>/<notebook>.ipynb"
        raise CourseError(
            f"nothing to collect in {source}: expected {shape}"
            + (
                f" for assignment {assignment}"
                if assignment
                else f" with <assignment> one of {', '.join(known)}"
            )
            + (" (one top folder around it is fine)" if layout == "course" else "")
            + (f"; {len(report)} file(s) skipped, see {reports / 'collect.csv'}" if report else "")
        )
    return rejected


Rows = list[tuple[Entry, CollectRow]]


def _course_rows(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    top: int,
) -> tuple[Rows, Rows]:
    """The course's own layout: a row per file, and the notebooks to store (student ids from
    the folder names, through students.csv)."""
    root = course.root
    known = course.assignments()
    depth = 2 if assignment else 3
    layout = (
        "<student>/<notebook>.ipynb" if assignment else "<student>/<assignment>/<notebook>.ipynb"
    )
    limit = max_notebook_bytes(course.settings)
    rows: Rows = []
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
        rows.append((e, row))

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
        data, why = read(e, zf, limit)
        if data is not None:
            row.kept_as = keep(root, "_spellings", row.assignment, row.file, data, set(), True)
    candidates = kept_candidates
    ids = load_students(root)
    new_students = assign_ids([row.name for _, row in candidates], ids)
    save_students(root, new_students)
    for _, row in rows:
        row.student_id = ids.get(student_key(row.name), "") if row.name else ""
    return rows, candidates


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


def _lms_rows(
    source: Path,
    entries: list[Entry],
    zf: zipfile.ZipFile | None,
    course: Course,
    assignment: str | None,
    layout: str,
    learners: list[Learner],
    timezone: str,
) -> tuple[Rows, Rows, dict[tuple[str, str], str]]:
    """An LMS download: a row per file, the notebooks to store (student ids from the
    roster), and the ``timestamp.txt`` of each (student, assignment) whose time is known."""
    root = course.root
    index = Index(learners)
    limit = max_notebook_bytes(course.settings)
    files = [e.parts for e in entries if not (e.ignored or e.unsafe or e.link)]
    clones, strip = "", 0
    if layout == "github-classroom":
        if len({p[0] for p in files}) == 1 and len({p[1] for p in files if len(p) > 2}) > 1:
            strip = 1  # one folder around the clones
        tops = [p[strip] for p in files if len(p) > strip + 1]
        clones = clone_prefix(tops, [x.username for x in learners])
    rows: Rows = []
    placed: list[tuple[Entry, CollectRow, Placed]] = []
    for e in entries:
        row = CollectRow(f"{source}/{e.inner}", "", "", "", e.parts[-1], "skipped")
        rows.append((e, row))
        if _odd(e, row):
            continue
        if layout == "github-classroom" and ".git" in e.parts[:-1]:
            row.reason = "git's own files (.git/), ignored"
            continue
        parts = e.parts[strip:]
        p = place(layout, parts, clones)
        if p is None:
            row.reason = f"not named as a {layout} download names its files ({SHAPES[layout]})"
            continue
        row.name = p.shown
        learner = _learner(index, layout, p)
        if p.receipt:
            row.student_id = learner.student_id if learner else ""
            row.reason = f"{layout}'s receipt of the attempt of {p.attempt}"
            continue
        if learner is not None:
            row.student_id = learner.student_id
        placed.append((e, row, p))

    if assignment is None:
        names = [p.file for _, _, p in placed if p.file.lower().endswith(".ipynb")]
        books = {a: course.notebook_names(a) for a in course.assignments()}
        assignment = guess_assignment(names, books)
        if assignment is None:
            raise CourseError(
                f"cannot tell from the notebooks' names in {source} which assignment it is "
                f"({', '.join(sorted(set(names))) or 'no notebook'}); give --assignment, one of "
                f"{', '.join(books)}"
            )
        print(f"{source}: assignment {assignment} (from the notebooks' names)")
    expected = course.notebook_names(assignment)
    key_name = KEYS[layout].replace("_", " ")

    by_learner: dict[str, list[tuple[Entry, CollectRow, Placed]]] = {}
    for e, row, p in placed:
        row.assignment = assignment
        if not row.student_id:
            row.outcome = "rejected"
            row.reason = (
                f"{p.shown!r} ({layout} {key_name} {p.who}) is not in the roster: add the "
                "learner to the roster (export it again from the LMS) and collect again"
            )
            data, why = read(e, zf, limit)
            if data is None:
                row.reason += f" (not kept: {why})"
            else:
                row.kept_as = keep(
                    root, "_not_in_roster", assignment, f"{p.who}-{e.parts[-1]}", data, set(), False
                )
            continue
        by_learner.setdefault(row.student_id, []).append((e, row, p))

    candidates: Rows = []
    stamps: dict[tuple[str, str], str] = {}
    for sid, items in sorted(by_learner.items()):
        last = max(p.attempt for _, _, p in items)
        latest = []
        for e, row, p in items:
            if p.attempt != last:
                row.outcome = "superseded"
                row.reason = (
                    f"an earlier attempt ({p.attempt}); the latest attempt ({last}) is the "
                    "submission"
                )
                data, why = read(e, zf, limit)
                row.kept_as = (
                    keep(
                        root,
                        sid,
                        assignment,
                        f"attempt-{p.attempt}-{e.parts[-1]}",
                        data,
                        set(),
                        False,
                    )
                    if data is not None
                    else f"not kept: {why}"
                )
            else:
                latest.append((e, row, p))
        renamed = notebook_for([p.file.rsplit("/", 1)[-1] for _, _, p in latest], expected)
        when = [p for _, _, p in items if p.attempt == last]
        if when and when[0].submitted_at is not None:
            at = to_utc(when[0].submitted_at, timezone)
            stamps[(sid, assignment)] = nbgrader_timestamp(at)
        elif any(p.late for p in when):
            stamps[(sid, assignment)] = LATE
        else:
            learner = index.find("student_id", sid)
            if learner is not None and learner.submitted:  # Moodle's grading worksheet
                at = _roster_time(learner.submitted, f"row of {sid}")
                stamps[(sid, assignment)] = nbgrader_timestamp(to_utc(at, timezone))
        for e, row, p in latest:
            base = p.file.rsplit("/", 1)[-1]
            row.file = base
            notes = [p.note] if p.note else []
            if not base.lower().endswith(".ipynb"):
                row.reason = "not a notebook (.ipynb)"
                continue
            if renamed and base == renamed[0]:
                row.file = renamed[1]
                notes.append(
                    f"handed in as {base!r}, the learner's only notebook: taken as {renamed[1]}"
                )
            if p.late:
                notes.append(f"{layout} marks it late")
            row.reason = "; ".join(notes)
            candidates.append((e, row))
    return rows, candidates, stamps


def _roster_time(text: str, where: str) -> datetime:
    """A time the roster gives (Moodle: ``Monday, 2 March 2026, 5:00 PM``), naive."""
    import dateutil.parser

    try:
        return dateutil.parser.parse(text).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise CourseError(f"the roster {where}: {text!r} is not a time") from None


LATE = "late"  # a late flag without a time, until the due date gives it one


def _learner(index: Index, layout: str, p: Placed) -> Learner | None:
    """The roster's learner of a placed file."""
    if layout == "blackboard":  # a user name may hold '_': try the longest one the roster has
        head = f"{p.assignment}_{p.who}"
        for i, c in enumerate(head):
            if c == "_":
                found = index.find("username", head[i + 1 :])
                if found is not None:
                    p.assignment, p.who, p.shown = head[:i], head[i + 1 :], head[i + 1 :]
                    return found
        return None
    found = index.find(KEYS[layout], p.who)
    if found is None and layout == "moodle":  # a roster without Moodle's identifiers
        found = index.find("name", p.shown)
    return found


def _late_stamps(course: Course, stamps: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """``stamps`` with each late flag without a time (Canvas's ``_LATE``) as the first second
    after the assignment's due date in the gradebook; dropped, with a note, without one."""
    flagged = [k for k, v in stamps.items() if v == LATE]
    if not flagged:
        return stamps
    from course.gradebook import due_dates

    due = due_dates(course.gradebook_url)
    out = {k: v for k, v in stamps.items() if v != LATE}
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
    candidates: Rows,
    zf: zipfile.ZipFile | None,
    stamp: str,
    stamps: dict[tuple[str, str], str],
) -> list[tuple[str, str]]:
    """Check the candidate notebooks and store the good ones in submitted/ (with their
    ``timestamp.txt``); the earlier submissions they replace go to archive/."""
    limit = max_notebook_bytes(course.settings)
    groups: dict[tuple[str, str], Rows] = {}
    for e, row in candidates:
        groups.setdefault((row.student_id, row.assignment), []).append((e, row))

    used: set[Path] = set()
    archived: list[tuple[str, str]] = []
    for (sid, a), items in sorted(groups.items()):
        files = [row.file for _, row in items]
        twice = {f for f in files if files.count(f) > 1}
        if twice:
            paths = [e.inner for e, _ in items]
            count = {2: "two", 3: "three"}.get(len(paths), str(len(paths)))
            same = (
                " (the same name more than once in the zip)" if len(set(paths)) < len(paths) else ""
            )
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
                    row.kept_as = keep(root, sid, a, row.file, data, used, numbered=True)
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
                row.kept_as = keep(root, sid, a, row.file, data, used, numbered=False)
            else:
                good.append((row, data))
        if not good:
            continue
        folder = course.submitted / sid / a
        when = stamps.get((sid, a))
        if when is not None:
            good_files = [(row.file, data) for row, data in good]
            good_files.append(("timestamp.txt", when.encode()))
        else:
            good_files = [(row.file, data) for row, data in good]
        if all(
            (folder / name).is_file() and (folder / name).read_bytes() == data
            for name, data in good_files
        ):
            for row, _ in good:
                row.outcome, row.reason = "unchanged", "identical to the file in submitted/"
                row.kept_as = (folder / row.file).relative_to(root).as_posix()
            continue
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
    return archived


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
