"""A *record*: one value a test cell saw, written down for the grader; its JSON format.

A check record is a display output of MIME type :data:`MIME` whose data is
``{"test": grade_id, "key": check, "value": encode(result)}``. :func:`encode` runs in the
learner's kernel; :func:`decode` runs in the grader's process and in the learner's local
check, and trusts nothing: JSON only (the grader never unpickles what a notebook produced),
known tags only, arrays of three dtypes and at most :data:`MAX_ELEMENTS` numbers.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

MIME = "application/vnd.afz.check+json"
MAX_ELEMENTS = 5_000_000  # per recorded array


def encode(value: Any) -> Any:
    """``value`` as JSON data: numbers, strings, lists, ``{"nd": ...}`` arrays, ``None``."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**53 else float(value)
    if isinstance(value, float):
        return value if np.isfinite(value) else {"float": repr(value)}
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        t = value.detach().cpu()
        kind = str(t.dtype).removeprefix("torch.")
        if t.is_floating_point() or t.is_complex():
            t = t.double()
        return _nd(t.numpy(), kind)
    if isinstance(value, np.ndarray | np.generic):
        return _nd(np.asarray(value), str(np.asarray(value).dtype))
    if isinstance(value, list | tuple) or type(value).__name__ == "Size":
        return {"list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in value.items()}}
    return {"type": type(value).__name__}


def _nd(a: np.ndarray, kind: str) -> dict[str, Any]:
    if a.dtype == bool:
        data = a.astype(np.uint8)
    elif np.issubdtype(a.dtype, np.integer):
        data = a.astype("<i8")
    elif np.issubdtype(a.dtype, np.floating):
        data = a.astype("<f8")
    else:
        return {"type": f"array of {a.dtype}"}
    raw = base64.b64encode(np.ascontiguousarray(data).tobytes()).decode("ascii")
    return {"nd": {"kind": kind, "dtype": str(data.dtype), "shape": list(a.shape), "data": raw}}


class Opaque:
    """A value that was not numbers, strings or lists (``{"type": name}``) or was malformed."""

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return self.what


class Malformed(ValueError):
    """A record that does not follow the format."""


def decode(data: Any, depth: int = 0) -> Any:
    """The value that :func:`encode` wrote; raises :class:`Malformed`."""
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
