"""Numbers as the chapters print them: short, rounded, one line."""

from __future__ import annotations

from torch import Tensor

__all__ = ["format_difference", "format_vector"]


def format_vector(vector: Tensor, digits: int = 4) -> str:
    """A 1-D tensor ``(n,)`` as a list of rounded numbers, e.g. ``[0.5816, 0.8484, 0.4406]``."""
    return "[" + ", ".join(f"{value:.{digits}f}" for value in vector.tolist()) + "]"


def format_difference(difference: float | Tensor, bound: float = 1e-6) -> str:
    """A difference between two computations that should agree, as what it means.

    Below ``bound`` it is rounding noise, whose digits depend on the CPU (AVX-512 and AVX2
    kernels sum in another order), so it prints as ``"< 1e-06"``; at or above ``bound`` the
    value itself prints, ``"= 3.2e-04"``, so that a real disagreement shows. A 0-d tensor or a
    float.
    """
    value = float(difference.detach() if isinstance(difference, Tensor) else difference)
    return f"< {bound:.0e}" if value < bound else f"= {value:.1e}"
