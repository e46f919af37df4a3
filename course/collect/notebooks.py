"""The notebooks a collect may store, decided without writing: two files of one name for one
learner and assignment are both rejected, a misnamed or damaged notebook is rejected (read in
a limited child, ``course.entries``) and kept under rejected/, the others become the plan's
stores.
"""

from __future__ import annotations

import zipfile

from course.collect.plan import CollectRow, Keep, Plan, Rows, Store
from course.config import Course
from course.entries import check_notebook_limited, max_notebook_bytes, read


def check_notebooks(
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
