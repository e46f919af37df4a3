"""The exercises' test cells: what runs in the learner's kernel to observe their code.

A test cell imports :class:`Test` (it records what the learner's functions return) and the
list of built-ins its exercise forbids; :mod:`checks.fixtures` builds its seeded inputs::

    from checks import SOFTMAX_BUILTINS, Test
    from checks.fixtures import randn

The verdicts are reached in the grader's own process (``autograder/verdicts.py``) from the
records the cell hands out, with the same comparison that judges a learner's visible checks at
once in their own Jupyter. This package is mounted read-only in the grading sandbox beside
``helpers``; it imports nothing of the grader, and only ``fixtures`` imports the model (to copy
weights). Its modules, one line each:

- ``recorder``: ``Test``, which runs the learner's code and records what it returned.
- ``record``: the format of one *record* (one observation): MIME type, encoder, decoder.
- ``compare``: ``judge``, the one comparison of a recorded value with the solution's.
- ``released``: the solution's values of a released test cell's visible checks, packed.
- ``exercises``: the exercise table: per exercise, the pieces it builds and what it forbids.
- ``forbidden``: the forbidden lists by name (``SOFTMAX_BUILTINS``, ...), for the test cells.
- ``watch``: watching a call for forbidden built-ins while it runs.
- ``explain``: a crash or a known mistake as a teaching message; what Jupyter shows of it.
- ``fixtures``: seeded inputs, and PyTorch's weights copied into a learner's module.
- ``forget``: a test cell's kernel form cleared from the kernel's history as it ends.
- ``sweep``: the contract sweep's probes (backward, dtypes, sizes, call order), recorded small.

Names are imported from their module on first use, as in ``helpers``: ``import checks`` loads
the exercise table and nothing heavy, so the grader can read the table without NumPy.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from .forbidden import (
    ATTENTION_BUILTINS,
    DECODER_BUILTINS,
    DECODING_BUILTINS,
    ENCODER_BUILTINS,
    HEADS_BUILTINS,
    MASK_BUILTINS,
    MODEL_BUILTINS,
    MULTI_HEAD_BUILTINS,
    POSITIONAL_BUILTINS,
    SOFTMAX_BUILTINS,
    TRAINING_BUILTINS,
)

if TYPE_CHECKING:
    from .record import MIME, encode
    from .recorder import SOLUTION, CheckFailed, Test, collect_into, replay_into

_HOME = {
    "MIME": "record",
    "encode": "record",
    "SOLUTION": "recorder",
    "CheckFailed": "recorder",
    "Test": "recorder",
    "collect_into": "recorder",
    "replay_into": "recorder",
}

__all__ = [
    "ATTENTION_BUILTINS",
    "DECODER_BUILTINS",
    "DECODING_BUILTINS",
    "CheckFailed",
    "ENCODER_BUILTINS",
    "HEADS_BUILTINS",
    "MASK_BUILTINS",
    "MIME",
    "MODEL_BUILTINS",
    "MULTI_HEAD_BUILTINS",
    "POSITIONAL_BUILTINS",
    "SOFTMAX_BUILTINS",
    "SOLUTION",
    "TRAINING_BUILTINS",
    "Test",
    "collect_into",
    "encode",
    "replay_into",
]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:  # a submodule, as ``import checks; checks.explain``
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'checks' has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
