"""A pytest plugin: chapter cells compared by nbval within a tolerance they state.

Loaded by the repository's conftest.py (`make test` runs nbval on the chapters).

A chapter cell whose numbers come out of training (a loss after 100 steps, an accuracy) is
not bit-for-bit the same on every CPU: AVX-512 and AVX2 kernels sum in another order, and a
training run carries the difference along. Such a cell states its tolerance in a comment,

    # NBVAL_TOLERANCE abs=0.02 rel=0.05

and nbval then compares its text outputs number by number: the text around the numbers must
be identical (up to the width of runs of spaces), and each number x of the new output must lie
within abs + rel * |stored| of the stored one (either part may be left out: 0). Every other
cell is compared as nbval always does, character for character; float noise (a difference of
two equal computations) is printed as a bound in the chapters, not as digits, so that it needs
no tolerance.
"""

from __future__ import annotations

import copy
import re

import nbformat

TOLERANCE_MARKER = re.compile(r"^\s*#\s*NBVAL_TOLERANCE\b(?P<args>.*)$", re.MULTILINE)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def cell_tolerance(source: str) -> tuple[float, float] | None:
    """(abs, rel) from a cell's `# NBVAL_TOLERANCE abs=A rel=R` line, or None without one."""
    found = TOLERANCE_MARKER.search(source)
    if found is None:
        return None
    parts = {}
    for arg in found["args"].split():
        key, _, value = arg.partition("=")
        try:
            parts[key] = float(value) if key in ("abs", "rel") else float("nan")
        except ValueError:
            parts[key] = float("nan")
    if not parts or any(v != v or v < 0 for v in parts.values()):  # nan: not a number
        raise ValueError(
            f"bad NBVAL_TOLERANCE line {found[0].strip()!r}: write it as "
            "'# NBVAL_TOLERANCE abs=0.01 rel=0.02' (either part may be left out)"
        )
    return parts.get("abs", 0.0), parts.get("rel", 0.0)


def skeleton(text: str) -> str:
    """The text with every number replaced by # and runs of spaces by one: a number printed
    right-aligned in a column takes the width it needs."""
    return re.sub(r"[ \t]+", " ", NUMBER.sub("#", text))


def numbers_differ(new: str, stored: str, tolerance: tuple[float, float]) -> str | None:
    """Why `new` is not `stored` within `tolerance` (abs, rel), or None when it is."""
    if skeleton(new) != skeleton(stored):
        return "the text around the numbers differs"
    absolute, relative = tolerance
    for a, b in zip(NUMBER.findall(new), NUMBER.findall(stored), strict=True):
        if abs(float(a) - float(b)) > absolute + relative * abs(float(b)):
            return f"{a} is not {b} within abs={absolute:g} + rel={relative:g} * |{b}|"
    return None


def _within_tolerance(compare_outputs):
    """Wrap nbval's IPyNbCell.compare_outputs: a tolerance cell's numbers may move a little."""

    def compare(self, test, ref, skip_compare=None):
        tolerance = cell_tolerance(self.cell.source)
        if tolerance is None:
            return compare_outputs(self, test, ref, skip_compare)
        reasons = []
        test = [nbformat.from_dict(copy.deepcopy(dict(out))) for out in test]
        for new, stored in zip(test, ref, strict=False):  # a count mismatch: nbval says so
            if new.get("output_type") != stored.get("output_type"):
                continue
            if new.get("output_type") == "stream" and new.get("name") == stored.get("name"):
                fields = [(new, stored, "text")]
            else:
                data, old = new.get("data", {}), stored.get("data", {})
                fields = [(data, old, k) for k in data if k.startswith("text/") and k in old]
            for holder, old, key in fields:
                why = numbers_differ(holder[key], old[key], tolerance)
                if why is None:
                    holder[key] = old[key]  # equal within the tolerance: compare as equal
                else:
                    reasons.append(why)
        same = compare_outputs(self, test, ref, skip_compare)
        if not same:
            self.comparison_traceback.insert(0, "NBVAL_TOLERANCE: " + "; ".join(reasons))
        return same

    return compare


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: no notebooks are compared
        return
    if not getattr(IPyNbCell.compare_outputs, "within_tolerance", False):
        IPyNbCell.compare_outputs = _within_tolerance(IPyNbCell.compare_outputs)
        IPyNbCell.compare_outputs.within_tolerance = True
