"""What the course's nbgrader preprocessors share: the settings' defaults (which the traitlets
that carry a setting take), the key by which execution hands the verdicts the test cells whose
records cannot be trusted, the notebook of ``solutions/`` or ``exercises/`` that nbgrader is
working on, and a cell id that no cell has yet.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from pathlib import Path

from autograder.settings import Settings

DEFAULTS = Settings()  # the traitlets that carry a setting take its declared default
TAMPERED = "afz_tampered"  # resources key: {grade_id: why its records cannot be trusted}


def notebook_of(folder: str, resources: dict) -> Path:
    """The notebook in ``folder`` (solutions/ or exercises/) that nbgrader is working on."""
    from autograder.verdicts import source_notebook

    info = resources.get("nbgrader", {})
    return source_notebook(folder, info.get("assignment", ""), info.get("notebook", ""))


def unique_id(base: str, taken: AbstractSet[str | None]) -> str:
    """A cell id made of ``base`` that is none of ``taken``."""
    return next(f"{base}-{n}" for n in range(len(taken) + 1) if f"{base}-{n}" not in taken)
