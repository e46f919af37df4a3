"""Verdicts, reached in the grader's own process from what the test cells recorded.

A test cell hands the learner's results out as check records (``helpers/checks.py``). This
module decodes them (JSON only, with size limits), compares each with the solution's value
of the same check (``autograder/replay.py``), and writes the test cell's outputs anew: one
line when every check passed, or one error with the teaching message of the first check that
did not. nbgrader then scores the cell as usual (an error output scores 0). Nothing the
learner's kernel printed in a test cell survives, so a fake "passed" line, a patched checker
or a swallowed exception changes nothing: a check whose record is missing, repeated or
malformed fails, and so does the test.
"""

from __future__ import annotations

import base64
import binascii
import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from helpers.explain import MARK as MARK_EXPLAINED
from helpers.explain import meaning

MIME = "application/vnd.afz.check+json"
MAX_ELEMENTS = 5_000_000  # per recorded array
MAX_TEXT = 160  # characters of a value shown in a message
MAX_ERROR = 2000  # characters of a learner's error shown in a message


class Opaque:
    """A value that was not numbers, strings or lists (``{"type": name}``) or was malformed."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return self.what


class Malformed(ValueError):
    """A record that does not follow the format."""


# ---------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------
def decode(data: Any, depth: int = 0) -> Any:
    """The value that ``helpers.checks.encode`` wrote; raises :class:`Malformed`."""
    if depth > 20:
        raise Malformed("nested too deeply")
    if data is None or isinstance(data, bool | str):
        return data
    if isinstance(data, int | float):
        return data
    if isinstance(data, list):
        raise Malformed("a bare list")
    if not isinstance(data, dict) or len(data) != 1:
        raise Malformed(f"an unknown value of type {type(data).__name__}")
    ((tag, body),) = data.items()
    if tag == "list" and isinstance(body, list):
        return [decode(v, depth + 1) for v in body]
    if tag == "dict" and isinstance(body, dict):
        return {str(k): decode(v, depth + 1) for k, v in body.items()}
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "type" and isinstance(body, str):
        return Opaque(body[:80])
    if tag == "nd" and isinstance(body, dict):
        return _decode_nd(body)
    raise Malformed(f"an unknown tag {str(tag)[:40]!r}")


def _decode_nd(body: dict[str, Any]) -> np.ndarray:
    dtype, shape, raw = body.get("dtype"), body.get("shape"), body.get("data")
    if dtype not in ("uint8", "int64", "float64"):
        raise Malformed(f"an array of dtype {str(dtype)[:20]!r}")
    if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise Malformed("an array with a bad shape")
    size = math.prod(shape)
    if size > MAX_ELEMENTS or not isinstance(raw, str):
        raise Malformed("an array that is too large or has no data")
    try:
        buf = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise Malformed("an array whose data is not base64") from None
    np_dtype = np.dtype({"uint8": "u1", "int64": "<i8", "float64": "<f8"}[str(dtype)])
    if len(buf) != size * np_dtype.itemsize:
        raise Malformed("an array whose data does not match its shape")
    a = np.frombuffer(buf, dtype=np_dtype).reshape(shape)
    return a.astype(bool) if dtype == "uint8" else a.copy()


# ---------------------------------------------------------------------------------------
# One check
# ---------------------------------------------------------------------------------------
def _show(v: Any) -> str:
    if isinstance(v, np.ndarray):
        text = np.array2string(v, precision=4, threshold=20, separator=", ")
    else:
        text = repr(v)
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _numbers(v: Any) -> np.ndarray | None:
    if isinstance(v, Opaque) or v is None or isinstance(v, str | dict):
        return None
    try:
        a = np.asarray(v)
        if a.dtype == object:
            return None
        return a.astype(np.float64)
    except (TypeError, ValueError):
        return None


def _with_hint(message: str, hint: str) -> str:
    return f"{message} {hint}".strip() if hint else message


def judge(ref: dict[str, Any], value_data: Any) -> str | None:
    """``None`` if the learner's recorded value passes the check ``ref``; else the message,
    which names the known mistake (``ref["like"]``) whose value the learner's matches."""
    message = _judge_one(ref, value_data)
    if message is None or not isinstance(ref.get("like"), dict):
        return message
    twin = {k: v for k, v in ref.items() if k not in ("like", "hint")}
    for label, known in ref["like"].items():
        if _judge_one({**twin, "expected": known}, value_data) is None:
            bare = _judge_one(twin, value_data) or message
            return _with_hint(
                f"{bare} Your result is exactly what you get when {label}.",
                str(ref.get("hint", "")),
            )
    return message


def _judge_one(ref: dict[str, Any], value_data: Any) -> str | None:
    name, hint, kind = str(ref.get("name", "?")), str(ref.get("hint", "")), ref.get("kind")
    try:
        value = decode(value_data)
    except Malformed as err:
        return f"{name}: the recorded result is malformed ({err}); the check fails."
    expected = decode(ref.get("expected"))
    if kind == "close":
        return _judge_close(name, hint, value, expected, ref)
    if kind == "shape":
        return _judge_shape(name, hint, value, expected)
    if kind == "equal":
        return _judge_equal(name, hint, value, expected, ref)
    if kind == "true":
        if value is True:
            return None
        return _with_hint(f"{name}: not so.", hint)
    if kind == "raises":
        if isinstance(value, list) and expected in value:
            return None
        if value == []:
            return _with_hint(f"{name}: expected {expected}; nothing was raised.", hint)
        got = value[0] if isinstance(value, list) and value else _show(value)
        return _with_hint(f"{name}: expected {expected}; got {got}.", hint)
    if kind == "calls":
        if value == []:
            return None
        hits = ", ".join(str(h) for h in value) if isinstance(value, list) else _show(value)
        return (
            f"{name}: no — it calls {hits}, which does the job this exercise asks you to write "
            "yourself. Rewrite it with basic tensor operations (matmul, masked_fill, "
            "view/transpose, exp and sum, ...)."
        )
    if kind == "agree":
        return _judge_agree(name, hint, value, expected, float(ref.get("at_least", 1.0)))
    return f"{name}: the grader does not know checks of kind {kind!r}."


def _none_message(name: str) -> str:
    return f"{name}: got None. Did your function forget a `return`?"


def _judge_close(name: str, hint: str, value: Any, expected: Any, ref: dict) -> str | None:
    if value is None:
        return _none_message(name)
    a, e = _numbers(value), _numbers(expected)
    if e is None:
        return f"{name}: the grader has no numbers to compare with."
    if a is None:
        what = value.what if isinstance(value, Opaque) else type(value).__name__
        return f"{name}: expected an array or tensor of numbers; got {what}."
    if a.shape != e.shape:
        return _with_hint(f"{name} should have shape {e.shape}; got {a.shape}.", hint)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    bad_values = ~np.isfinite(a) & ~same
    if np.any(bad_values):
        return _with_hint(f"{name} contains NaN or inf ({int(bad_values.sum())} entries).", hint)
    atol, rtol = float(ref.get("atol", 1e-5)), float(ref.get("rtol", 1e-4))
    with np.errstate(invalid="ignore"):
        err = np.where(same, 0.0, np.abs(a - e))
        bad = ~same & ~(err <= atol + rtol * np.abs(e))
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        where = f" at index {idx}" if idx else ""
        return _with_hint(
            f"{name} is wrong{where}: expected {e[idx]:.4f}, got {a[idx]:.4f} (max abs error "
            f"{np.nanmax(err):.3g}, {int(bad.sum())} of {bad.size} entries off).",
            hint,
        )
    return None


def _judge_shape(name: str, hint: str, value: Any, expected: Any) -> str | None:
    if value is None:
        return _none_message(name)
    if isinstance(value, Opaque):
        return f"{name}: expected a tensor; got {value.what}."
    if value != expected:
        got = tuple(value) if isinstance(value, list) else _show(value)
        return _with_hint(f"{name} should have shape {tuple(expected)}; got {got}.", hint)
    return None


def _judge_equal(name: str, hint: str, value: Any, expected: Any, ref: dict) -> str | None:
    if isinstance(expected, np.ndarray) or "broadcast_to" in ref:
        if value is None:
            return _none_message(name)
        a, e = _numbers(value), _numbers(expected)
        if a is None or e is None:
            return f"{name}: expected an array or tensor; got {_show(value)}."
        shape = ref.get("broadcast_to")
        if shape is not None:
            try:
                a, e = np.broadcast_to(a, tuple(shape)), np.broadcast_to(e, tuple(shape))
            except ValueError:
                return _with_hint(
                    f"{name} has shape {a.shape}, which does not broadcast to {tuple(shape)}.",
                    hint,
                )
        elif a.shape != e.shape:
            return _with_hint(f"{name} should have shape {e.shape}; got {a.shape}.", hint)
        where = ref.get("where")
        keep = (
            np.ones(a.shape, dtype=bool)
            if where is None
            else np.broadcast_to(decode(where), a.shape)
        )
        bad = (a != e) & keep
        if np.any(bad):
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return _with_hint(
                f"{name} is wrong at index {idx}: expected {e[idx]:g}, got {a[idx]:g} "
                f"({int(bad.sum())} of {int(keep.sum())} entries differ).",
                hint,
            )
        return None
    if isinstance(value, np.ndarray) and not isinstance(expected, np.ndarray):
        value = value.tolist()
    if (
        value != expected
        or type(value) is not type(expected)
        and not _both_numbers(value, expected)
    ):
        return _with_hint(f"{name}: expected {_show(expected)}, got {_show(value)}.", hint)
    return None


def _both_numbers(a: Any, b: Any) -> bool:
    kinds = int | float
    return isinstance(a, kinds) and isinstance(b, kinds) and not isinstance(a, bool | str)


def _judge_agree(name: str, hint: str, value: Any, target: Any, at_least: float) -> str | None:
    p, t = _numbers(value), _numbers(target)
    if p is None or t is None or p.ndim != 2 or t.ndim != 2 or p.shape[0] != t.shape[0]:
        got = p.shape if p is not None else _show(value)
        return _with_hint(
            f"{name}: expected token ids of shape (batch={t.shape[0] if t is not None else '?'},"
            f" length); got {got}.",
            hint,
        )
    width = max(p.shape[1], t.shape[1])
    p = np.pad(p, ((0, 0), (0, width - p.shape[1])))
    t = np.pad(t, ((0, 0), (0, width - t.shape[1])))
    rate = float((p == t).all(axis=1).mean()) if len(p) else 0.0
    if rate + 1e-12 < at_least:
        return _with_hint(
            f"{name}: {rate:.0%} of the {len(p)} sequences are right; at least {at_least:.0%} "
            "are needed.",
            hint,
        )
    return None


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
) -> Verdict:
    """Judge a test cell from its executed ``outputs``.

    ``tampered``: why the cell's records cannot be trusted (the executor saw one rewritten);
    ``refused``: why the grader's reading of the learner's code refuses every test (code that
    reaches into the kernel): its message replaces the learner's own, which such code could
    have filled with anything; ``static``: a forbidden call that reading found in the code
    this test reaches (``autograder/scan.py``). Each fails the test, and so does a cell that
    raised.
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
    found: dict[str, list[Any]] = {}
    error = ename = None
    for out in outputs:
        kind = out.get("output_type")
        if kind == "error":  # the last one: after a time-out, nbgrader's CellTimeoutError
            ename = str(out.get("ename", ""))[:80]
            error = f"{ename}: {str(out.get('evalue', ''))[:MAX_ERROR]}"
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
    if static:
        return Verdict(False, static, "ForbiddenCallError")
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
