"""Verdicts, reached in the grader's own process from what the test cells recorded.

A test cell hands the learner's results out as check records (``checks/record.py``). This module
reads them, compares each with the solution's value of the same check (``autograder/replay.py``)
through ``checks.compare.judge``, and writes the test cell's outputs anew: one line when every
check passed, or one error with the teaching message of the first check that did not. nbgrader
then scores the cell as usual (an error output scores 0). Nothing the learner's kernel printed
in a test cell survives, so a fake "passed" line, a patched checker or a swallowed exception
changes nothing: a check whose record is missing, repeated or malformed fails, and so does the
test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from checks.compare import judge
from checks.explain import MARK as MARK_EXPLAINED
from checks.explain import meaning
from checks.record import MIME

MAX_ERROR = 2000  # characters of a learner's error shown in a message


# ---------------------------------------------------------------------------------------
# One test cell
# ---------------------------------------------------------------------------------------
class Verdict(NamedTuple):
    passed: bool
    message: str
    ename: str = "AssertionError"  # the error name nbgrader's output will carry


def judge_test(
    grade_id: str,
    refs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    *,
    tampered: str | None = None,
    refused: str | None = None,
    static: str | None = None,
    quiet: str | None = None,
) -> Verdict:
    """Judge a test cell from its executed ``outputs``.

    ``tampered``: why the cell's records cannot be trusted (the executor saw one rewritten);
    ``refused``: why the grader's reading of the learner's code refuses this test (a write into
    a module or the kernel's shell before it, or in the code it calls): its message replaces
    the learner's own, which such code could have filled with anything; ``static``: a
    forbidden call that reading found in the code this test reaches (``autograder/scan.py``),
    named before anything the checks found. Each fails the test, and so does a cell that
    raised. ``quiet``: where the notebook reads the kernel's internals (frames, IPython's
    history): then what its code raised is named by its type only, since its message could
    carry what that code read (a test's code).
    """
    if not refs:
        return Verdict(False, f"{grade_id}: the grader has no checks for this test cell.")
    if tampered:
        return Verdict(
            False,
            f"{grade_id}: {tampered}. Only what the test cell itself hands the grader while it "
            "runs counts; the test scores 0.",
        )
    if refused:
        return Verdict(False, refused, "ForbiddenCallError")
    if static:  # a forbidden call is named first, whatever else the checks found
        return Verdict(False, static, "ForbiddenCallError")
    found: dict[str, list[Any]] = {}
    error = ename = None
    for out in outputs:
        kind = out.get("output_type")
        if kind == "error":  # the last one: after a time-out, nbgrader's CellTimeoutError
            ename = str(out.get("ename", ""))[:80]
            error = f"{ename}: {str(out.get('evalue', ''))[:MAX_ERROR]}"
            if quiet:
                kind = "".join(c for c in ename if c.isalnum() or c in "._")[:80] or "an error"
                error = (
                    f"{kind} (its message is not shown: your notebook reads the kernel's "
                    f"internals at {quiet}, and a message could carry what it read)"
                )
        if kind not in ("display_data", "execute_result"):
            continue
        record = (out.get("data") or {}).get(MIME)
        if not isinstance(record, dict) or record.get("test") != grade_id:
            continue
        key = record.get("key")
        if isinstance(key, str):
            found.setdefault(key, []).append(record.get("value"))
    for ref in refs:
        key, name = ref["key"], ref.get("name", ref["key"])
        values = found.get(key)
        if not values:
            if error:
                text = error.strip()
                hint = "" if MARK_EXPLAINED in text else meaning(text)
                where = (  # a crash in the call itself, or later in the test
                    "The test stopped"
                    if ref.get("kind") == "calls"
                    else f"The test could not finish (it stopped before checking {name!r})"
                )
                return Verdict(
                    False,
                    f"{where}: {text}" + (f"\n{MARK_EXPLAINED} {hint}" if hint else ""),
                    ename or "Error",
                )
            return Verdict(
                False,
                f"No result for {name!r}: the test cell did not hand it to the grader (the "
                "cell was interrupted or changed, or its output was cut). The test scores 0.",
            )
        if len(values) > 1:
            return Verdict(
                False,
                f"{name!r} was reported {len(values)} times; a test cell reports each check "
                "once, so something in the notebook interfered with it. The test scores 0.",
            )
        message = judge(ref, values[0])
        if message:
            forbidden = ref.get("kind") == "calls"
            return Verdict(False, message, "ForbiddenCallError" if forbidden else "AssertionError")
    if error:  # every check recorded, and then the cell raised: something interfered
        return Verdict(
            False,
            f"The test raised after its checks were recorded: {error.strip()[:MAX_ERROR]}",
            ename or "Error",
        )
    return Verdict(True, f"{grade_id}: all {len(refs)} checks passed")


def verdict_outputs(verdict: Verdict) -> list[dict[str, Any]]:
    """The test cell's outputs that nbgrader scores: a line, or an error (0 points)."""
    if verdict.passed:
        return [{"output_type": "stream", "name": "stdout", "text": verdict.message + "\n"}]
    return [
        {
            "output_type": "error",
            "ename": verdict.ename,
            "evalue": verdict.message,
            "traceback": [f"{verdict.ename}: {verdict.message}"],
        }
    ]


def source_notebook(source_directory: str | Path, assignment: str, notebook: str) -> Path:
    return Path(source_directory) / assignment / f"{notebook}.ipynb"
