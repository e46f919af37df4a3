"""The comparison of one recorded value with the solution's: a message, or ``None``.

Pure: the same function judges a learner's visible checks at once in their own Jupyter
(``checks.recorder``, local mode) and every check in the grader's process
(``autograder/verdicts.py``), so what a learner sees there is what the grader will say.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .record import Malformed, Opaque, decode

MAX_TEXT = 160  # characters of a value shown in a message


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
    which names the known mistake (``ref["like"]``) whose value the learner's matches. A
    value that cannot be compared at all (a record built to crash the comparison) fails its
    check and nothing else."""
    try:
        return _judge_with_mistakes(ref, value_data)
    except Exception as err:  # noqa: BLE001 - whatever the value was, the check fails
        name = str(ref.get("name", "?"))
        why = type(err).__name__
        return f"{name}: the recorded result cannot be compared ({why}); the check fails."


def _judge_with_mistakes(ref: dict[str, Any], value_data: Any) -> str | None:
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


def _judge_close(
    name: str, hint: str, value: Any, expected: Any, ref: dict[str, Any]
) -> str | None:
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


def _judge_equal(
    name: str, hint: str, value: Any, expected: Any, ref: dict[str, Any]
) -> str | None:
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
