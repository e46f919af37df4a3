"""The learner's wheel: the packages an exercise notebook imports, as one file to install.

A learner's notebook imports ``helpers`` (the reference pieces of earlier exercises) and
``checks`` (its test cells). Both names belong to unrelated packages on PyPI, so the course
ships them in a wheel of its own name, :data:`DISTRIBUTION`, that ``python -m course release``
writes beside each assignment's notebooks. It holds the packages' Python files (not the chapters'
pictures, trained weights and translation scoring, which no exercise uses and which import more
than the wheel declares: ``tests/unit/test_wheel_imports.py``) and names their runtime
dependencies with the ranges of ``pyproject.toml``; PyTorch's CPU build is the learner's to
install first, as the instructor guide says.

The wheel is built here, without a build backend, so that the same sources always give the same
bytes (sorted entries, fixed times and modes), from the files git tracks (a file someone has not
added yet stays out): ``verify-release`` compares a wheel in exercises/ with a fresh one. It is a
build product, not kept in git: ``make release`` writes it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

from course.config import REPO

DISTRIBUTION = "attention-from-zero-learner"
PACKAGES = ("helpers", "checks")
LEFT_OUT = ("helpers/pictures", "helpers/weights", "helpers/translation.py")  # the chapters'
RUNTIME = ("torch", "numpy", "tqdm")  # what helpers and checks import
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip file can hold


def project_version(repo: Path = REPO) -> str:
    """The course's version (``pyproject.toml``), the wheel's too."""
    return str(_project(repo)["version"])


def wheel_name(repo: Path = REPO) -> str:
    """The wheel's file name, e.g. ``attention_from_zero_learner-0.1.0-py3-none-any.whl``."""
    return f"{DISTRIBUTION.replace('-', '_')}-{project_version(repo)}-py3-none-any.whl"


def _project(repo: Path) -> dict:
    return tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements(repo: Path) -> list[str]:
    """The runtime dependencies of :data:`RUNTIME`, as ``pyproject.toml`` pins their ranges."""
    found = {}
    for spec in _project(repo)["dependencies"]:
        name = re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0]
        if name in RUNTIME:
            found[name] = spec
    missing = [n for n in RUNTIME if n not in found]
    if missing:
        raise ValueError(f"pyproject.toml's dependencies do not name {', '.join(missing)}")
    return [found[n] for n in RUNTIME]


def _package_files(repo: Path) -> list[str]:
    """The packages' files, relative to ``repo``: those git tracks, or all outside git."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(repo), "ls-files", "-z", "--", *PACKAGES],
            capture_output=True,
            check=True,
        ).stdout.decode()
        return sorted(name for name in listed.split("\0") if name)
    except (OSError, subprocess.CalledProcessError):
        return sorted(
            p.relative_to(repo).as_posix() for pkg in PACKAGES for p in (repo / pkg).rglob("*")
        )


def _sources(repo: Path) -> list[tuple[str, bytes]]:
    """``(path in the wheel, bytes)`` of the packages' files, sorted."""
    files = []
    for rel in _package_files(repo):
        path = repo / rel
        if not path.is_file() or rel.startswith(LEFT_OUT) or "__pycache__" in rel:
            continue
        if path.suffix == ".py" or path.name == "py.typed":
            files.append((rel, path.read_bytes()))
    return files


def _metadata(repo: Path) -> str:
    project = _project(repo)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {DISTRIBUTION}",
        f"Version: {project['version']}",
        "Summary: Attention from Zero: what the exercise notebooks import (helpers, checks)",
        f"Requires-Python: {project['requires-python']}",
        *(f"Requires-Dist: {spec}" for spec in _requirements(repo)),
    ]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_bytes(repo: Path = REPO) -> bytes:
    """The learner's wheel, built from the packages in ``repo``."""
    dist_info = f"{DISTRIBUTION.replace('-', '_')}-{project_version(repo)}.dist-info"
    files = _sources(repo)
    files.append((f"{dist_info}/METADATA", _metadata(repo).encode()))
    wheel_text = "Wheel-Version: 1.0\nGenerator: course.wheel\nRoot-Is-Purelib: true\n"
    files.append((f"{dist_info}/WHEEL", (wheel_text + "Tag: py3-none-any\n").encode()))
    record = [_record_line(name, data) for name, data in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def write_wheel(folder: Path, repo: Path = REPO) -> Path:
    """Write the learner's wheel into ``folder`` (replacing older ones of the course's name)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{DISTRIBUTION.replace('-', '_')}-*.whl"):
        old.unlink()
    target = folder / wheel_name(repo)
    target.write_bytes(wheel_bytes(repo))
    return target
