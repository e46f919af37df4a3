"""The recorder, ``Test``: a test cell runs the learner's code through it, and it writes down
(records) what it saw; the verdict is reached elsewhere.

A test cell runs the learner's functions on its inputs and hands each result to a
:class:`Test`::

    from checks import Test

    t = Test("test_softmax")          # the cell's nbgrader grade_id
    out = t.call(softmax, x, forbidden=SOFTMAX_BUILTINS)
    t.close("softmax([1, 2, 3])", out, hint="exp(x_i) / sum_j exp(x_j)")

A check names what it looks at and gives the learner's value. It never says what the
value should be, except where the cell itself writes the number (``expected=``): the
expected values, comparisons, points and messages belong to the grader
(``autograder/verdicts.py``), which runs the same cell with the instructor's solution in
its own process and compares. So nothing this module or the learner's notebook does can
change a verdict; a missing, repeated or malformed observation scores 0.

Three modes:

* **record** (``CHECKS_MODE=record``, set by the grading sandbox): each check is published as a
  ``application/vnd.afz.check+json`` display output of the test cell (:mod:`checks.record`),
  and nothing is judged.
* **replay** (the grader's own process): :func:`replay_into` collects the solution's values.
* **local** (a learner working in Jupyter, or ``nbgrader validate``): each check is judged at
  once, with the same comparison as the grader's, and a failure raises :class:`CheckFailed`
  with the teaching message. What a check compares with comes from the cell itself: the value
  it writes out (``expected=``) and its known mistakes (``like=``); the solution's values of the
  visible checks (``expected=SOLUTION``) from the ``Test(..., expected="afz1:...")`` text of the
  released test cell (:mod:`checks.released`). A check that finds no value to compare with
  fails and says what to do; none passes unjudged.

Rules for test cells: names and hints are fixed text (they may use the test's inputs, never
the learner's results); inputs are seeded (:mod:`checks.fixtures`); every value a check
records is small (a few thousand numbers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from . import explain, released
from .compare import judge
from .record import MIME, encode
from .watch import call_watched

SOLUTION = None  # ``expected=SOLUTION`` (the default): the solution's value of the same check

_replay_sink: list[dict[str, Any]] | None = None
_collect_sink: list[dict[str, Any]] | None = None


def _shape(x: Any) -> Any:
    shape = getattr(x, "shape", None)
    if shape is None:
        return None if x is None else {"type": type(x).__name__}
    return [int(n) for n in shape]


class CheckFailed(AssertionError):
    """A check judged in the learner's own Jupyter that failed. Jupyter shows its teaching
    message first, then the notebook's lines that led to it, without the course's frames."""

    def _render_traceback_(self) -> list[str]:
        return explain.rendered(self)


class Test:
    """The observations of one test cell (``grade_id``), handed to the grader one by one.

    ``expected``: the solution's values of the cell's visible checks, as the released notebook
    carries them (:mod:`checks.released`); only a learner's own run reads them."""

    __test__ = False  # not a pytest test class

    def __init__(self, grade_id: str, expected: str | None = None) -> None:
        self.grade_id = grade_id
        self._seen: dict[str, int] = {}
        self._mode = (
            "replay"
            if _replay_sink is not None
            else "collect"
            if _collect_sink is not None
            else "record"
            if os.environ.get("CHECKS_MODE") == "record"
            else "local"
        )
        self._solution_values: dict[str, Any] | None = None
        if self._mode == "local" and expected is not None:
            self._solution_values = _released_values(expected, grade_id)

    # -- checks ------------------------------------------------------------------------
    def close(
        self,
        name: str,
        actual: Any,
        expected: Any = SOLUTION,
        *,
        atol: float = 1e-5,
        rtol: float = 1e-4,
        hint: str = "",
        like: dict[str, Any] | None = None,
    ) -> None:
        """Numbers equal to the expected ones within ``atol + rtol·|expected|``, same shape.

        ``like`` maps a known mistake ("scaled by d_k instead of sqrt(d_k)") to the value that
        mistake gives, computed in the cell from the test's inputs (never from the learner's
        results); a failing value that matches one is named in the message.
        """
        self._check("close", name, actual, expected, hint=hint, like=like, atol=atol, rtol=rtol)

    def equal(
        self,
        name: str,
        actual: Any,
        expected: Any = SOLUTION,
        *,
        broadcast_to: tuple[int, ...] | None = None,
        where: Any = None,
        hint: str = "",
        like: dict[str, Any] | None = None,
    ) -> None:
        """Exactly the expected value (ids, booleans, strings, lists). With ``broadcast_to``
        both sides are broadcast to that shape first; with ``where`` (a boolean array of that
        shape) only those positions count (a mask's padding rows, say)."""
        options: dict[str, Any] = {}
        if broadcast_to is not None:
            options["broadcast_to"] = [int(n) for n in broadcast_to]
        if where is not None:
            options["where"] = encode(np.asarray(where, dtype=bool))
        self._check("equal", name, actual, expected, hint=hint, like=like, **options)

    def shape(
        self,
        name: str,
        actual: Any,
        expected: Any = SOLUTION,
        *,
        hint: str = "",
        like: dict[str, Any] | None = None,
    ) -> None:
        """``actual.shape`` equal to the expected shape (``like``: shapes of known mistakes)."""
        exp = SOLUTION if expected is SOLUTION else [int(n) for n in expected]
        known = None if like is None else {k: [int(n) for n in v] for k, v in like.items()}
        self._check("shape", name, _shape(actual), exp, hint=hint, like=known)

    def unchanged(self, what: str, **inputs: Any) -> None:
        """Each named input as it is after the learner's ``what`` ran on it; the solution
        leaves its inputs alone, so a change made in place fails. Give fresh inputs that no
        earlier call has touched."""
        for arg, value in inputs.items():
            self._check(
                "close",
                f"{arg} after {what}(...) returned",
                value,
                SOLUTION,
                atol=0.0,
                rtol=0.0,
                hint=f"{what} changed its input `{arg}` in place (an in-place operation such as "
                "masked_fill_, add_, +=, x[...] = ... or .copy_() on it); compute new tensors "
                "and leave the caller's inputs as they were.",
            )

    def true(self, name: str, condition: Any, *, hint: str = "") -> None:
        """A property of the learner's code that must hold (``name`` says which)."""
        self._check("true", name, _truth(condition), True, hint=hint)

    def raises(
        self,
        name: str,
        exception: type[BaseException] | None,
        fn: Callable[..., Any],
        *args: Any,
        hint: str = "",
    ) -> None:
        """``fn(*args)`` raises ``exception`` (or a subclass of it). (The grader's kernel gets
        ``None`` here: which exception is right is the grader's to know.)"""
        try:
            fn(*args)
        except Exception as err:  # noqa: BLE001 - which one is the observation
            got: Any = [c.__name__ for c in type(err).__mro__]
        else:
            got = []
        self._check("raises", name, got, getattr(exception, "__name__", None), hint=hint)

    def agree(
        self,
        name: str,
        predicted: Any,
        target: Any = SOLUTION,
        *,
        at_least: float = 1.0,
        hint: str = "",
    ) -> None:
        """At least ``at_least`` of the rows of ``predicted`` equal ``target``'s (the
        solution's target: ids ``(batch, length)``, compared up to trailing padding 0)."""
        self._check("agree", name, predicted, target, hint=hint, at_least=float(at_least))

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        forbidden: Iterable[str] = (),
        what: str | None = None,
        returns: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """``fn(*args, **kwargs)``, also checking that it did not call a ``forbidden``
        built-in (a best effort: a profiler hook on this thread).

        When ``fn`` raises, the error is raised again with what it means here: the inputs'
        shapes and dtypes, the contract (``fn``'s docstring) and the likely mistake
        (:mod:`checks.explain`). ``returns=n``: ``fn`` must return a tuple of ``n`` values.
        """
        what = what or str(getattr(fn, "__name__", type(fn).__name__))
        forbidden = tuple(forbidden)
        hits: list[str] = []
        try:
            result = call_watched(fn, args, kwargs, tuple(forbidden), hits)
            if returns is not None:
                explain.check_returns(result, returns, what)
        except Exception as err:  # noqa: BLE001 - raised again, with what it means
            new = explain.explained(err, what, fn, args, kwargs)
            if self._mode == "local":
                explain.render_in_jupyter(new)
            raise new from err
        self._check(
            "calls", f"{what} does the job itself", hits, [], forbidden=list(forbidden), called=what
        )
        return result

    # -- plumbing ----------------------------------------------------------------------
    def _check(
        self,
        kind: str,
        name: str,
        actual: Any,
        expected: Any,
        like: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        n = self._seen.get(name, 0)
        self._seen[name] = n + 1
        key = name if n == 0 else f"{name} #{n + 1}"
        if self._mode == "replay":
            ref = self._reference(kind, name, key, encode(expected), like, options)
            if expected is SOLUTION:
                ref.update(expected=encode(actual), solution_value=True)
            else:
                ref["solution"] = encode(actual)
            _replay_sink.append(ref)  # type: ignore[union-attr]
        elif self._mode == "record":
            _publish({"test": self.grade_id, "key": key, "value": encode(actual)})
        elif self._mode == "collect":
            _collect_sink.append({"test": self.grade_id, "key": key, "value": encode(actual)})  # type: ignore[union-attr]
        else:
            value = self._solution_value(name, key) if expected is SOLUTION else encode(expected)
            ref = self._reference(kind, name, key, value, like, options)
            message = judge(_as_json(ref), _as_json(encode(actual)))
            if message:
                raise CheckFailed(message)

    def _reference(
        self,
        kind: str,
        name: str,
        key: str,
        expected: Any,
        like: dict[str, Any] | None,
        options: dict[str, Any],
    ) -> dict[str, Any]:
        """The check as the grader judges it (``checks.compare.judge``), but for its value."""
        return {
            "test": self.grade_id,
            "key": key,
            "kind": kind,
            "name": name,
            "expected": expected,
            **options,
            **({"like": {str(k): encode(v) for k, v in like.items()}} if like else {}),
        }

    def _solution_value(self, name: str, key: str) -> Any:
        """The solution's value of the check ``key``, from the released test cell's text."""
        values = self._solution_values
        if values is None:
            raise CheckFailed(
                f"{name}: this check compares your result with the solution's, and this test "
                f'cell carries no solution values: its line t = Test("{self.grade_id}", '
                'expected="afz1:...") is not the released one. Open the exercise notebook as '
                "released (download it again, or copy that line from it) and run the cell again."
            )
        if key not in values:
            raise CheckFailed(
                f"{name}: the solution values of this test cell have no value for this check "
                "(the cell was changed after its release). Open the exercise notebook as "
                "released (download it again) and run the cell again."
            )
        return values[key]


def _truth(x: Any) -> Any:
    try:
        return bool(x)
    except (TypeError, ValueError, RuntimeError):  # an array of several values, say
        return encode(x)


def _publish(record: dict[str, Any]) -> None:
    from IPython.display import publish_display_data

    text = f"[recorded for the grader: {record['key']}]"
    publish_display_data({MIME: record, "text/plain": text})


def _as_json(data: Any) -> Any:
    """``data`` as it comes back from JSON (tuples as lists), as the grader reads records."""
    return json.loads(json.dumps(data))


def _released_values(text: str, grade_id: str) -> dict[str, Any]:
    """The solution's values that the released test cell ``grade_id`` carries (``text``)."""
    try:
        payload = released.unpack(text)
    except released.NotReleasedValues as err:
        raise CheckFailed(
            f'The solution values in t = Test("{grade_id}", expected=...) cannot be read: {err}. '
            "Open the exercise notebook as released (download it again) and run the cell again."
        ) from None
    if payload["test"] != grade_id:
        raise CheckFailed(
            f'The solution values in t = Test("{grade_id}", expected=...) are those of test '
            f"{payload['test']!r} of {payload['notebook']}, not of this test cell. Open the "
            "exercise notebook as released (download it again) and run the cell again."
        )
    return dict(payload["values"])


def replay_into(sink: list[dict[str, Any]] | None) -> None:
    """Grader only: collect the checks of the cells run next into ``sink`` (``None``: stop)."""
    global _replay_sink
    _replay_sink = sink


def collect_into(sink: list[dict[str, Any]] | None) -> None:
    """Grader only: the records that ``record`` mode would publish go into ``sink`` instead
    (``autograder/dry.py``, a kernel-less grading run); ``None``: stop."""
    global _collect_sink
    _collect_sink = sink
