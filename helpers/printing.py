"""Numbers as the chapters print them: short, rounded, one line."""

from __future__ import annotations

from torch import Tensor


def format_vector(vector: Tensor, digits: int = 4) -> str:
    """A 1-D tensor ``(n,)`` as a list of rounded numbers, e.g. ``[0.5816, 0.8484, 0.4406]``."""
    return "[" + ", ".join(f"{value:.{digits}f}" for value in vector.tolist()) + "]"
