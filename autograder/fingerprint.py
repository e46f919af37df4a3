"""One fingerprint of what grades: the grader's code, and what else the caller names.

``fingerprint(*texts, files=...)`` hashes the texts, then the code that decides a grade
(``grader_code``: the packages ``helpers``, ``checks`` and ``autograder`` and
``nbgrader_config.py``), then ``files``, each file by its name and bytes; it gives the first 24
hex digits of the sha256. The replay cache keys the solution's values by it
(``autograder.replay``), and ``reports/autograde.json`` records it with each result, so that a
rerun grades again what another grader graded (``course.grading.submission.grader_fingerprint``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRADER_PACKAGES = ("helpers", "checks", "autograder")


def grader_code() -> list[Path]:
    """The files of the course's code that decide a grade, in a fixed order."""
    files: list[Path] = []
    for folder in GRADER_PACKAGES:
        files += sorted((ROOT / folder).rglob("*.py"))
    return [*files, ROOT / "nbgrader_config.py"]


def fingerprint(*texts: str, files: Iterable[Path] = ()) -> str:
    """The fingerprint of ``texts``, the grader's code and ``files`` (see the module)."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode() + b"\0")
    for path in [*grader_code(), *files]:
        if ".ipynb_checkpoints" in path.parts or not path.is_file():
            continue
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)
        data = path.read_bytes()
        h.update(f"{name.as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()[:24]
