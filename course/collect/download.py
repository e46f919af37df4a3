"""A download as collect reads it: a folder or a .zip opened and its entries listed (through
``course.entries``, with its limits), the one folder that may wrap a whole download, and the
entries that are no learner's file (a link, a system file, an unsafe path in a zip).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from course.collect.plan import CollectRow
from course.config import CourseError
from course.entries import Entry, folder_entries, zip_entries
from course.lms import readings


def open_source(source: Path) -> tuple[zipfile.ZipFile | None, list[Entry]]:
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


def unwrapped(files: list[tuple[str, ...]], layout: str = "") -> list[tuple[str, ...]]:
    """``files`` without one folder that holds them all (an unzipped download's own folder)."""
    return [p[wrapper(files, layout) :] for p in files]


def wrapper(files: list[tuple[str, ...]], layout: str = "") -> int:
    """1 when one folder holds every file of the download and is not the LMS's own (a
    Moodle participant's folder, a GitHub clone with its .git/), else 0."""
    if not files or any(len(p) < 2 for p in files) or len({p[0] for p in files}) > 1:
        return 0
    if any(p[1] == ".git" for p in files):
        return 0
    if layout in ("", "moodle") and readings("moodle", files[0]):
        return 0
    return 1


def odd_entry(e: Entry, row: CollectRow) -> bool:
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
