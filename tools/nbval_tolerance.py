"""A pytest plugin: chapter cells compared by nbval within a tolerance they state.

Loaded by the repository's conftest.py (`make test` runs nbval on the chapters).

A chapter cell whose numbers come out of training (a loss after 100 steps, an accuracy) is
not bit-for-bit the same on every CPU: AVX-512 and AVX2 kernels sum in another order, and a
training run carries the difference along. Such a cell states its tolerance in its metadata,
where a reader of the book never sees it,

    "metadata": {"nbval-tolerance": {"abs": 0.02, "rel": 0.05}}

and nbval then compares its text outputs number by number: the text around the numbers must
be identical (up to the width of runs of spaces), and each number x of the new output must lie
within abs + rel * |stored| of the stored one (either part may be left out: 0). Every other
cell is compared as nbval always does, character for character; float noise (a difference of
two equal computations) is printed as a bound in the chapters, not as digits, so that it needs
no tolerance. nbval's own markers go in the cell's tags as well (`nbval-ignore-output` for a
timing), never in the code a reader sees: a test marker written as a comment in a cell's code
(`# NBVAL_TOLERANCE ...`, `# NBVAL_IGNORE_OUTPUT`) is refused with a message that says where
it belongs (tests/book/test_book_build.py keeps every marker out of the built pages).
"""

from __future__ import annotations

import copy
import re

import nbformat

METADATA_KEY = "nbval-tolerance"
COMMENT_MARKER = re.compile(
    r"^\s*#\s*(?P<marker>NBVAL_[A-Z_]+|PYTEST_VALIDATE_[A-Z_]+)\b", re.MULTILINE
)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def comment_marker(source: str) -> str | None:
    """The first test marker written as a comment in a cell's code, or None."""
    found = COMMENT_MARKER.search(source)
    return found["marker"] if found else None


def cell_tolerance(metadata: dict) -> tuple[float, float] | None:
    """(abs, rel) from a cell's metadata `{"nbval-tolerance": {"abs": A, "rel": R}}`, or None."""
    found = metadata.get(METADATA_KEY)
    if found is None:
        return None
    ok = isinstance(found, dict) and found and set(found) <= {"abs", "rel"}
    values = found.values() if ok else []
    if not ok or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values
    ):
        raise ValueError(
            f"bad {METADATA_KEY} metadata {found!r}: write it as "
            f'{{"{METADATA_KEY}": {{"abs": 0.01, "rel": 0.02}}}} (either part may be left out)'
        )
    return float(found.get("abs", 0.0)), float(found.get("rel", 0.0))


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
        tolerance = cell_tolerance(self.cell.metadata)
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


def _no_comment_markers(runtest):
    """Wrap nbval's IPyNbCell.runtest: a test marker in a cell's code fails that cell."""

    def run(self):
        marker = comment_marker(self.cell.source)
        if marker is not None:
            raise ValueError(
                f"the cell's code carries the test marker {marker!r}, which readers of the book "
                f"would see: put it in the cell's metadata ({METADATA_KEY!r}) or its tags "
                "('nbval-ignore-output', ...) instead (tools/nbval_tolerance.py)"
            )
        return runtest(self)

    return run


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: no notebooks are compared
        return
    if not getattr(IPyNbCell.compare_outputs, "within_tolerance", False):
        IPyNbCell.compare_outputs = _within_tolerance(IPyNbCell.compare_outputs)
        IPyNbCell.compare_outputs.within_tolerance = True
    if not getattr(IPyNbCell.runtest, "no_comment_markers", False):
        IPyNbCell.runtest = _no_comment_markers(IPyNbCell.runtest)
        IPyNbCell.runtest.no_comment_markers = True
