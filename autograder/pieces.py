"""The *pieces* of ``helpers`` an assignment asks for, absent from its grading kernel.

While an assignment is graded, the ``helpers`` modules that hold what it asks the learner to
write, and those of every later assignment, are absent from the sandbox: the kernel sees a
copy of ``helpers`` in which each of them is a stub whose import raises an ``ImportError``
that says why. Earlier pieces stay usable, so a learner stuck on one exercise can do the next.
The chapters' pictures (``helpers.pictures``) are absent too: grading draws nothing.

Which modules each exercise builds is declared once, in ``checks.exercises`` (the exercise
table, which the test cells' forbidden lists come from too); ``PIECES`` is its view.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from checks.exercises import EXERCISES, hidden_while_graded

# In course order: assignment -> the helpers modules that hold the pieces it asks for.
PIECES: dict[str, tuple[str, ...]] = {e.name: e.builds for e in EXERCISES}


def absent_modules(assignment: str) -> dict[str, str]:
    """``{module: the assignment that teaches it}`` for this assignment and later ones.

    An assignment the course does not know hides nothing.
    """
    return hidden_while_graded(assignment)


def stub(module: str, owner: str, assignment: str) -> str:
    """The source of an absent module: importing it raises a clear ``ImportError``."""
    if owner == assignment:
        why = (
            f"exercise {assignment} asks you to write these pieces, so the course's reference "
            "versions are not available while it is graded"
        )
        message = f"helpers.{module} cannot be imported here: {why}. Write them yourself."
    else:
        message = (
            f"helpers.{module} cannot be imported here: it belongs to a later exercise "
            f"({owner}) and is not available while {assignment} is graded."
        )
    return f"raise ImportError({message!r})\n"


PICTURES_STUB = "raise ImportError({!r})\n".format(
    "helpers.pictures cannot be imported here: the chapters' pictures and measurements "
    "(plots, diagrams, shape tables, timings) are not available while a notebook is graded. "
    "Keep them out of the cells your answers need."
)


def public_names(source: Path) -> str:
    """The ``__all__ = [...]`` statement of a module's source ('' without one), kept at the top
    of its stub: ``helpers/__init__.py`` reads it to know what it exports, so that a name of an
    absent module raises the stub's ``ImportError``, not "cannot import name"."""
    found = re.search(r"^__all__ = \[.*?\]$", source.read_text(encoding="utf-8"), re.M | re.S)
    return found.group(0) + "\n" if found else ""


def filtered_copy(helpers_dir: Path, dest: Path, assignment: str) -> Path:
    """A copy of ``helpers_dir`` at ``dest`` with the absent modules and ``helpers.pictures``
    replaced by stubs."""
    absent = absent_modules(assignment)
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(helpers_dir).iterdir()):
        if path.suffix == ".py":
            module = path.stem
            if module in absent:
                text = public_names(path) + stub(module, absent[module], assignment)
                (dest / path.name).write_text(text)
            else:
                shutil.copy2(path, dest / path.name)
        elif path.name == "pictures":  # a grading kernel draws nothing
            (dest / path.name).mkdir()
            for source in sorted(path.glob("*.py")):
                (dest / path.name / source.name).write_text(public_names(source) + PICTURES_STUB)
        elif path.is_dir() and path.name not in ("__pycache__", "weights"):  # no test loads them
            shutil.copytree(path, dest / path.name, ignore=_code_only)
    for path in dest.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    dest.chmod(0o755)
    return dest


def _code_only(folder: str, names: list[str]) -> set[str]:
    """What ``copytree`` leaves out of a subpackage: caches and every file that is not code
    (the chapters' corpus, ``helpers/data/bible``, is megabytes no test reads)."""
    return {
        name
        for name in names
        if name == "__pycache__"
        or (not (Path(folder) / name).is_dir() and not name.endswith((".py", "py.typed")))
    }
