"""What a collect reports: reports/collect.csv, collect_history.csv and collect_rejected.csv
(cells a spreadsheet shows as text), and what the instructor's terminal is told (control
characters escaped), including why a download held nothing to collect.
"""

from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path

from course.collect.plan import COLLECT_COLUMNS, CollectRow, Plan, Rejected
from course.config import Course
from course.lms import SHAPES
from course.students import spreadsheet_safe


def write_reports(reports: Path, report: list[CollectRow], stamp: str) -> list[Rejected]:
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


def print_summary(plan: Plan, course: Course, archived: list[tuple[str, str]]) -> None:
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


def nothing_to_collect(
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


def terminal_safe(text: str) -> str:
    """``text`` with control characters written as escapes: a folder name that holds an ANSI
    sequence does not rewrite the instructor's terminal."""
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
