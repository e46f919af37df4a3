"""A collect's plan written: the roster into the gradebook and roster.csv, new ids into
students.csv, rejected files under rejected/ (private to the instructor), each learner's
notebooks into submitted/ with their ``timestamp.txt``, the earlier submission they replace
moved to archive/.
"""

from __future__ import annotations

import os
import shutil
from datetime import timedelta
from pathlib import Path

from course.collect.plan import LATE, Plan, Store
from course.config import Course
from course.lms import nbgrader_timestamp
from course.roster import Learner, import_roster, save_roster
from course.students import save_students


def write_plan(
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
