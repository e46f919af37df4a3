"""``collect``: a folder or .zip of submissions into submitted/<student id>/<assignment>/.

Nothing is lost: a file that cannot be graded is kept under rejected/, an earlier submission
that a new one replaces is moved to archive/, and every file is listed in
reports/collect.csv (and appended to reports/collect_history.csv).

A collect runs in two steps: it reads the whole download and the roster, places every file
and checks every notebook, writing nothing (``_plan``); only then, when there is something to
collect, does it import the roster into the gradebook and write the course's folders
(``writing.write_plan``). A download or a roster that cannot be used is a CourseError before
anything is written. ``collect`` (below) is the entry point; its modules, one line each:

- ``plan``: what a collect decides before it writes: the report's rows, files to keep, stores.
- ``download``: a download opened (a folder or a zip), its wrapping folder, its odd entries.
- ``course_layout``: the course's own layout placed: student folders, ids from students.csv.
- ``placing``: an LMS download's file placed: the learner of the LMS's part of its name.
- ``lms_download``: an LMS download planned: its assignment, attempts, times, unknown learners.
- ``notebooks``: the notebooks that may be stored: one per name, named as expected, sound.
- ``writing``: the plan written: roster, ids, rejected/, archive/, submitted/, timestamp.txt.
- ``report``: reports/collect*.csv and what the instructor's terminal is told.
"""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

from course.collect.course_layout import course_plan
from course.collect.download import open_source, unwrapped
from course.collect.lms_download import lms_plan
from course.collect.plan import Plan, Rejected
from course.collect.report import nothing_to_collect, print_summary, write_reports
from course.collect.writing import write_plan
from course.config import Course, CourseError
from course.entries import Entry, top_folders
from course.lms import KEYS, LAYOUTS, ROSTERS, SHAPES, detect, fits
from course.roster import Learner, load_roster, read_roster


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
    zf, entries = open_source(source)
    try:
        plan, learners = _plan(
            source, entries, zf, course, assignment, layout, (learners, roster), timezone
        )
    finally:
        if zf is not None:
            zf.close()
    report = [row for _, row in plan.rows]
    if not plan.stores and not any(r.outcome == "rejected" for r in report):
        write_reports(course.reports, report, stamp)
        raise CourseError(nothing_to_collect(source, course, plan.layout, assignment, report))
    archived = write_plan(plan, course, roster is not None, learners, stamp)
    rejected = write_reports(course.reports, report, stamp)
    print_summary(plan, course, archived)
    return rejected


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
    found = detect(unwrapped(files), course_score)
    if layout is None:
        layout = found or "course"
    elif layout != "course" and not fits(layout, unwrapped(files)):
        looks = f"; it looks like a {found} download (--layout {found})" if found else ""
        raise CourseError(
            f"{source} is not a {layout} download: none of its {len(files)} file(s) is "
            f"named {SHAPES[layout]}{looks}"
        )
    if layout == "course":
        plan = course_plan(source, entries, zf, course, assignment, top)
        return plan, learners
    learners = learners if learners is not None else load_roster(course.root)
    _check_roster(layout, learners, roster_path or course.root / "roster.csv")
    assert learners is not None
    plan = lms_plan(source, entries, zf, course, assignment, layout, learners, timezone)
    return plan, learners


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
