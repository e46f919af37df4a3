"""Student ids from the names a platform exports, and ``students.csv`` that keeps them.

A student folder may have any name (``José García``, ``张伟``); nbgrader needs a safe id
(``STUDENT_ID``). The id a name got is kept in ``<root>/students.csv`` so that later collects
give the same student the same id.
"""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
from pathlib import Path

from course.config import STUDENT_ID, CourseError

# Latin letters that Unicode does not decompose into an ASCII letter and an accent.
_LATIN = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "þ": "th", "ı": "i", "ħ": "h"}
)


def student_key(name: str) -> str:
    """Names with the same key are the same student: NFC, casefolded, outer spaces dropped."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold().strip())


def student_slug(name: str) -> str:
    """The id ``name`` asks for: itself when it is a valid id (casefolded), else its ASCII
    letters and digits (accents dropped) joined by ``_``, else ``s_`` + 8 hex digits of the
    SHA-1 of its key (a name in another script, e.g. 张伟)."""
    key = student_key(name)
    if STUDENT_ID.match(key) and len(key) <= 64:
        return key
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold().translate(_LATIN)
    slug = re.sub(r"[^a-z0-9]+", "_", text).strip("_")[:64].strip("_")
    return slug or "s_" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a cell starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return would be run as a formula, so it gets a ``'``."""
    return "'" + text if text.startswith(FORMULA_START) else text


def from_spreadsheet(text: str) -> str:
    """What :func:`spreadsheet_safe` wrote, read back."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def spelling(name: str) -> str:
    """How a name is written (NFC, outer spaces dropped): two spellings of one key differ."""
    return unicodedata.normalize("NFC", name).strip()


def load_names(root: Path) -> dict[str, str]:
    """students.csv as {key of the name: the name as first written}."""
    path = root / "students.csv"
    if not path.exists():
        return {}
    names: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            name = from_spreadsheet(row.get("name") or "")
            names.setdefault(student_key(name), spelling(name))
    return names


def load_students(root: Path) -> dict[str, str]:
    """students.csv as {key of the name: student id}; the first row of a key wins."""
    path = root / "students.csv"
    if not path.exists():
        return {}
    ids: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        if not {"student_id", "name"} <= set(reader.fieldnames or []):
            raise CourseError(f"{path}: expected the columns student_id,name")
        for line, row in enumerate(reader, start=2):
            sid = (row["student_id"] or "").strip()
            if not STUDENT_ID.match(sid):
                raise CourseError(
                    f"{path} line {line}: {sid!r} is not a usable student id "
                    "(lowercase ASCII letters, digits, '_', '.', '-')"
                )
            ids.setdefault(student_key(from_spreadsheet(row["name"] or "")), sid)
    return ids


def assign_ids(names: list[str], ids: dict[str, str]) -> list[tuple[str, str]]:
    """Add an id for each new name to ``ids`` (key -> id); return the new (id, name) pairs.

    A name that is a valid id gets itself if it is free; other names get their slug, or the
    slug with ``_2``, ``_3``, ... when another name already has it.
    """
    pending: dict[str, str] = {}
    for name in names:
        if student_key(name) not in ids:
            pending.setdefault(student_key(name), name)
    order = sorted(pending, key=lambda k: student_slug(pending[k]) != k)  # stable
    taken = set(ids.values())
    new = []
    for key in order:
        base = sid = student_slug(pending[key])
        n = 2
        while sid in taken:
            sid, n = f"{base}_{n}", n + 1
        taken.add(sid)
        ids[key] = sid
        new.append((sid, pending[key].strip()))
    return new


def save_students(root: Path, new: list[tuple[str, str]]) -> None:
    """Append the new (id, name) pairs to students.csv (created with its header)."""
    if not new:
        return
    path = root / "students.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists() or path.stat().st_size == 0
    if not fresh and not path.read_bytes().endswith(b"\n"):
        with path.open("a", encoding="utf-8") as f:
            f.write("\n")
    with path.open("a", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if fresh:
            w.writerow(["student_id", "name"])
        w.writerows((sid, spreadsheet_safe(name)) for sid, name in new)
