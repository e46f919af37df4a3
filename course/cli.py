"""Instructor command line of the course: thin wrappers around the ordinary nbgrader commands.

    .venv/bin/python -m course release [ASSIGNMENT ...]       # solutions/ -> exercises/
    .venv/bin/python -m course verify-release                  # exercises/ == fresh generation?
    .venv/bin/python -m course collect SOURCE [--assignment A] # folder or .zip -> submitted/
        [--layout canvas|moodle|blackboard|github-classroom|course] [--roster ROSTER.csv]
    .venv/bin/python -m course autograde [ASSIGNMENT ...] [--workers N] [--scheduler ADDRESS]
    .venv/bin/python -m course feedback [ASSIGNMENT ...]       # HTML into feedback/
    .venv/bin/python -m course grades [--out grades.csv]       # CSV export
    .venv/bin/python -m course grades --format canvas|moodle|blackboard  # the LMS's import
        --assignment A [--canvas-export F | --blackboard-export F] [--column C] [--key K]
        [--missing empty|zero] [--allow-stale]
    .venv/bin/python -m course similarity ASSIGNMENT           # alike solution cells: HTML, CSV
    .venv/bin/python -m course validate NOTEBOOK ...           # visible tests; exit 1 on failure

Autograding runs every notebook in an OS sandbox (``autograder/``: bubblewrap, cgroups,
rlimits; ``make sandbox-deps`` installs bubblewrap) and refuses to run without one unless
``--no-sandbox`` is given. Exit status: 0 when the command finished (autograde: whatever the
learners' outcomes, which ``reports/summary.csv`` lists); 1 when ``verify-release`` found a
problem, ``feedback`` could not write some learner's feedback or ``validate`` failed; 2 for a
problem the instructor must fix.

Every command takes ``--root DIR``, the course root: solutions/, exercises/, submitted/,
autograded/, feedback/, reports/ and gradebook.db are all found there (default: this
repository). The grading settings (limits, feedback policy, the gradebook's URL; the
instructor guide's table lists them) are the defaults, then the root's ``grading.toml``
(``NAME = VALUE`` lines), then ``AFZ_GRADEBOOK_URL`` (another gradebook database, e.g.
PostgreSQL), then ``--set NAME=VALUE`` (repeatable, before the command).

Autograding has one engine (``course.grading.engine``): each submission travels as a task, as bytes,
to a worker (threads of this process by default, ``--workers`` of them; with ``--scheduler
tcp://HOST:PORT`` or a scheduler file, the workers of a Dask cluster that may span several
machines; ``--scheduler local``, a Dask LocalCluster of this machine). Each worker grades
against its own SQLite copy of a seed gradebook, and this process alone writes each result
into the gradebook (through nbgrader's API) as it arrives, so Ctrl-C loses nothing already
graded, and a rerun skips the submissions already graded with the same files (``--force``
grades all again). Each submission is graded by its own ``nbgrader autograde`` process, so a
crash is contained to one student.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from course.config import REPO, Course, CourseError, load_settings
from course.lms import LAYOUTS

# The subcommand's name before verify-release, kept for one release: it prints this note.
DEPRECATED_VERIFY = "check-release"
DEPRECATED_NOTE = (
    "note: `check-release` is now `verify-release`; the old name goes in the next release"
)


def parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per step of the workflow."""
    p = argparse.ArgumentParser(
        prog="python -m course",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    p.add_argument("--root", type=Path, default=REPO, help="course root (default: repository)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="settings",
        help="a grading setting for this command, over grading.toml (repeatable; e.g. "
        "--set cell_timeout=60)",
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="regenerate exercises/ from solutions/")
    r.add_argument("assignments", nargs="*")
    # check-release: the name before verify-release, kept for one release with a note
    sub.add_parser(
        "verify-release",
        aliases=[DEPRECATED_VERIFY],
        help="exercises/ must equal a fresh generation",
    )
    c = sub.add_parser("collect", help="copy a folder or .zip of submissions into submitted/")
    c.add_argument("source", type=Path)
    c.add_argument(
        "--assignment",
        help="the assignment of the download (course layout: the source holds "
        "<student>/<notebook>.ipynb for it; an LMS download: default, told by the notebooks' "
        "names)",
    )
    c.add_argument(
        "--layout",
        choices=LAYOUTS,
        help="how the source names its files (default: recognised): canvas, moodle, "
        "blackboard or github-classroom (an LMS's download), course (<student>/<assignment>/"
        "<notebook>.ipynb)",
    )
    c.add_argument(
        "--roster",
        type=Path,
        help="the class list exported from the LMS (CSV): maps the download's ids, user "
        "names or e-mails to course ids; imported into the gradebook and kept as roster.csv "
        "(default: roster.csv of an earlier collect)",
    )
    c.add_argument(
        "--timezone",
        default="UTC",
        help="time zone of the times in the download's names (Blackboard), e.g. "
        "Europe/Berlin (default: UTC)",
    )
    g = sub.add_parser("autograde", help="autograde submitted/, several submissions at a time")
    g.add_argument("assignments", nargs="*")
    g.add_argument(
        "--workers",
        type=int,
        default=None,
        help="submissions graded at once on this machine (default: one per CPU core); "
        "ignored with a remote --scheduler",
    )
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on the Dask cluster of this scheduler: tcp://HOST:PORT, or the JSON file "
        "that `dask scheduler --scheduler-file FILE` wrote; `local`: a Dask LocalCluster of "
        "this machine (default: threads of this process, no Dask)",
    )
    g.add_argument(
        "--force",
        action="store_true",
        help="grade every submission again, also those already graded with the same files",
    )
    g.add_argument("--student", action="append", help="only this student (repeatable)")
    g.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without the OS sandbox (UNSAFE: submissions then run with your rights and "
        "can read the hidden tests, change the gradebook and stop the batch); only for "
        "machines without bubblewrap, and notebooks you trust",
    )
    f = sub.add_parser("feedback", help="HTML feedback into feedback/")
    f.add_argument("assignments", nargs="*")
    v = sub.add_parser("validate", help="run a notebook's visible tests (exit 1 on failure)")
    v.add_argument("notebooks", nargs="+", type=Path)
    m = sub.add_parser(
        "similarity",
        help="which learners' solution cells are alike: an HTML report and a CSV, for a "
        "person to read (never a grade)",
    )
    m.add_argument("assignment")
    m.add_argument("--out", type=Path, help="default: <root>/similarity/<assignment>/")
    e = sub.add_parser(
        "grades", help="export grades: CSV, or the import file of Canvas, Moodle or Blackboard"
    )
    e.add_argument(
        "--format",
        choices=("csv", "canvas", "moodle", "blackboard"),
        default="csv",
        help="csv: every student and assignment (default; also for GitHub Classroom, which "
        "imports no grades); canvas: fill --column of the Canvas gradebook export "
        "--canvas-export; moodle: Moodle's grade import CSV keyed by --key; blackboard: fill "
        "--column of the Grade Center download --blackboard-export",
    )
    e.add_argument(
        "--out",
        type=Path,
        default=None,
        help="default: <root>/grades.csv, grades_canvas.csv, grades_moodle.csv, or "
        "grades_blackboard.csv or .xls (as the download)",
    )
    e.add_argument("--assignment", help="canvas, moodle, blackboard: the assignment to export")
    e.add_argument("--canvas-export", type=Path, help="canvas: the gradebook CSV from Canvas")
    e.add_argument(
        "--blackboard-export",
        type=Path,
        help="blackboard: the Grade Center download (Grade Center > Work Offline > Download; "
        "Ultra: Gradebook > Download), .csv or .xls as Blackboard wrote it",
    )
    e.add_argument(
        "--column",
        help="canvas: its column (e.g. 'Attention 01 (4567)'); blackboard: its column as "
        "Blackboard writes it ('Attention 01 [Total Pts: 10 Score] |123456'), or its name "
        "('Attention 01') or column id ('123456'); moodle: the grade column's name (default: "
        "the assignment)",
    )
    e.add_argument(
        "--key",
        choices=("email", "username", "idnumber"),
        default="email",
        help="moodle: the identifier Moodle maps the rows by (default: email)",
    )
    e.add_argument(
        "--missing",
        choices=("empty", "zero"),
        default="empty",
        help="canvas, moodle, blackboard: what a learner without a submission gets: empty "
        "(default) keeps what the LMS has (Moodle: no row); zero writes 0, but only where the "
        "LMS has no grade",
    )
    e.add_argument(
        "--allow-stale",
        action="store_true",
        help="export although some learner's notebook in submitted/ is not the one their "
        "score is of (collected again, or not graded yet); without it the export stops and "
        "names them",
    )
    e.add_argument("--roster", type=Path, help="default: roster.csv of the course root")
    return p


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` asks; the exit status. Raises CourseError for the instructor to fix."""
    options = list(args.settings)
    if getattr(args, "no_sandbox", False):
        options.append("sandbox=false")
    course = Course(args.root, load_settings(args.root, options))
    if args.cmd == "release":
        from course.release import release

        release(args.assignments, course)
    elif args.cmd in ("verify-release", DEPRECATED_VERIFY):
        from course.release import verify_release

        if args.cmd == DEPRECATED_VERIFY:
            print(DEPRECATED_NOTE, file=sys.stderr)
        problems = verify_release(course)
        for line in problems:
            print("PROBLEM:", line)
        print("exercises/ is up to date" if not problems else f"{len(problems)} problem(s)")
        return 1 if problems else 0
    elif args.cmd == "collect":
        from course.collect import collect

        collect(
            args.source,
            course,
            args.assignment,
            layout=args.layout,
            roster=args.roster,
            timezone=args.timezone,
        )
    elif args.cmd == "autograde":
        from course.grading.batch import autograde

        workers = args.workers or os.cpu_count() or 1
        autograde(
            args.assignments,
            course,
            workers,
            args.student,
            scheduler=args.scheduler,
            force=args.force,
        )
    elif args.cmd == "feedback":
        from course.reports import feedback

        failed = feedback(args.assignments, course)
        if failed:
            print(f"{len(failed)} submission(s) without feedback (named above)")
            return 1
    elif args.cmd == "validate":
        from course.validate import validate

        return 0 if validate(args.notebooks, course) else 1
    elif args.cmd == "similarity":
        from course.similarity import similarity

        similarity(course, args.assignment, args.out)
    elif args.cmd == "grades":
        if args.format == "csv":
            from course.freshness import refuse_behind
            from course.reports import grades

            refuse_behind(course, course.assignments(), args.allow_stale)
            grades(course, args.out or course.root / "grades.csv")
        else:
            from course import lms_grades

            if not args.assignment:
                raise CourseError(f"--format {args.format} needs --assignment")
            name = f"grades_{args.format}.csv"
            if args.format == "blackboard" and args.blackboard_export:  # .csv or .xls
                name = f"grades_blackboard{args.blackboard_export.suffix.lower() or '.csv'}"
            out = args.out or course.root / name
            if args.format == "blackboard":
                if not args.blackboard_export or not args.column:
                    raise CourseError(
                        "--format blackboard needs --blackboard-export FILE (Blackboard: Grade "
                        "Center > Work Offline > Download; Ultra: Gradebook > Download) and "
                        "--column NAME (the assignment's column in it)"
                    )
                lms_grades.blackboard(
                    course,
                    args.assignment,
                    args.blackboard_export,
                    args.column,
                    out,
                    args.missing,
                    args.roster,
                    args.allow_stale,
                )
            elif args.format == "canvas":
                if not args.canvas_export or not args.column:
                    raise CourseError(
                        "--format canvas needs --canvas-export FILE (Canvas: Grades > Export) "
                        "and --column NAME (the assignment's column in it)"
                    )
                lms_grades.canvas(
                    course,
                    args.assignment,
                    args.canvas_export,
                    args.column,
                    out,
                    args.missing,
                    args.roster,
                    args.allow_stale,
                )
            else:
                lms_grades.moodle(
                    course,
                    args.assignment,
                    args.key,
                    out,
                    args.missing,
                    args.column,
                    args.roster,
                    args.allow_stale,
                )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m course``: parse ``argv``, run, print a CourseError without a traceback."""
    args = parser().parse_args(argv)
    try:
        return run(args)
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted (Ctrl-C)", file=sys.stderr)
        return 130
