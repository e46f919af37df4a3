"""The solution's values of one test cell's visible checks, as the released notebook carries them.

A learner may have nothing but the released notebook, so each released test cell carries what
its checks compare with, in its own source::

    t = Test("test_softmax", expected="afz1:eNpjYGBgYGQAAA...")

The text packs, for that cell alone, the solution's value of each visible check that compares
with the solution (``expected=SOLUTION``, the default of a check): a check whose expected value
the cell writes out, and the values of known mistakes (``like=``), are computed by the cell
itself. It names the notebook and the test cell it belongs to, so a cell never judges with the
values of another. ``python -m course release`` writes it into the released notebook only: the
source notebook (solutions/), from which a grading kernel's test cells are made, never has it.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

PREFIX = "afz1:"  # the format's name and version


class NotReleasedValues(ValueError):
    """A text that is not the packed values of this test cell."""


def pack(notebook: str, grade_id: str, values: dict[str, Any]) -> str:
    """``values`` (``{check key: encoded value}``) of the test cell ``grade_id`` of
    ``notebook`` (``"<assignment>/<notebook>.ipynb"``), as one line of text."""
    payload = {"notebook": notebook, "test": grade_id, "values": values}
    raw = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    packed = base64.b64encode(zlib.compress(raw.encode("utf-8"), 9)).decode("ascii")
    return PREFIX + packed


def unpack(text: str) -> dict[str, Any]:
    """``{"notebook": ..., "test": ..., "values": {key: encoded value}}`` from :func:`pack`'s
    text; raises :class:`NotReleasedValues` for any other text."""
    if not isinstance(text, str) or not text.startswith(PREFIX):
        raise NotReleasedValues(f"it does not start with {PREFIX!r}")
    try:
        raw = zlib.decompress(base64.b64decode(text[len(PREFIX) :], validate=True))
        payload = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, zlib.error) as err:
        raise NotReleasedValues(f"it is damaged ({type(err).__name__})") from None
    if not (
        isinstance(payload, dict)
        and isinstance(payload.get("notebook"), str)
        and isinstance(payload.get("test"), str)
        and isinstance(payload.get("values"), dict)
    ):
        raise NotReleasedValues("it does not name a notebook, a test and its values")
    return payload
