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
    outcome: str  # accepted, unchanged, rejected or skipped
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


def collect(source: Path, course: Course, assignment: str | None = None) -> list[Rejected]:
    """Copy submissions from a folder or .zip into submitted/<student id>/<assignment>/.

    Layouts: ``<student>/<assignment>/<notebook>.ipynb`` (possibly under one top folder), or,
    with ``assignment``, ``<student>/<notebook>.ipynb``. A student folder may have any name;
    it is mapped to a safe id (``students.csv`` keeps the mapping for later collects).
    Damaged or misnamed notebooks, and two files for one student and assignment, are not
    graded: each is kept under rejected/<student>/<assignment>/ and reported. Files elsewhere
    are skipped. An earlier submission that a new one replaces is moved to archive/. Every
    file is listed in reports/collect.csv (and appended to reports/collect_history.csv).
    """
    if not source.exists():
        raise CourseError(f"{source} does not exist; give a folder or a .zip of submissions")
    root = course.root
    if assignment is not None:
        course.assignments([assignment])  # an unknown --assignment is the instructor's typo
    known = course.assignments()
    depth = 2 if assignment else 3
    layout = (
        "<student>/<notebook>.ipynb" if assignment else "<student>/<assignment>/<notebook>.ipynb"
    )
    limit = max_notebook_bytes(course.settings)
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
        top = top_folders(entries, depth, assignment, known)
        rows: list[tuple[Entry, CollectRow]] = []
        candidates: list[tuple[Entry, CollectRow]] = []  # notebooks to check
        for e in entries:
            odd = e.ignored or e.unsafe or bool(e.link)
            rel = e.parts if odd else e.parts[top:]
            row = CollectRow(f"{source}/{e.inner}", "", "", "", rel[-1], "skipped")
            if len(rel) > 1 and not odd:
                row.name = rel[0]
            if len(rel) == depth and not odd:
                row.assignment = assignment or rel[1]
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

        groups: dict[tuple[str, str], list[tuple[Entry, CollectRow]]] = {}
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
                    " (the same name more than once in the zip)"
                    if len(set(paths)) < len(paths)
                    else ""
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
            if all(
                (folder / row.file).is_file() and (folder / row.file).read_bytes() == data
                for row, data in good
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
            for row, data in good:
                (folder / row.file).write_bytes(data)
                row.outcome, row.reason = "accepted", note
                row.kept_as = (folder / row.file).relative_to(root).as_posix()
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
        elif r.outcome == "skipped" and r.reason != "system file, ignored":
            print(terminal_safe(f"SKIPPED {r.source_path}: {r.reason}"))
    for old, new in archived:
        print(terminal_safe(f"ARCHIVED {old}/ -> {new}/ (replaced by this collect)"))
    print(
        f"collected {outcomes.count('accepted')} file(s) into {course.submitted} "
        f"({outcomes.count('unchanged')} unchanged); {outcomes.count('rejected')} rejected, "
        f"{outcomes.count('skipped') - silent} skipped, {len(archived)} archived"
        + (f", {silent} system file(s) ignored" if silent else "")
        + f"; report: {reports / 'collect.csv'}"
    )
    if not any(o in ("accepted", "unchanged", "rejected") for o in outcomes):
        raise CourseError(
            f"nothing to collect in {source}: expected {layout}"
            + (
                f" for assignment {assignment}"
                if assignment
                else f" with <assignment> one of {', '.join(known)}"
            )
            + " (one top folder around it is fine)"
            + (f"; {len(report)} file(s) skipped, see {reports / 'collect.csv'}" if report else "")
        )
    return rejected


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
