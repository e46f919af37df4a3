"""The exercises' test cells: what runs in the learner's kernel to observe their code.

A test cell imports :class:`Test` (it records what the learner's functions return) and the
list of built-ins its exercise forbids; :mod:`checks.fixtures` builds its seeded inputs::

    from checks import SOFTMAX_BUILTINS, Test
    from checks.fixtures import randn

The verdicts are reached in the grader's own process (``autograder/verdicts.py``) from the
records the cell hands out (:mod:`checks.record`), with the same comparison
(:mod:`checks.compare`) that judges a learner's visible checks at once in their own Jupyter.
A released test cell also hands :class:`Test` the solution's values of its visible checks
(:mod:`checks.released`), so that a learner's notebook judges them with nothing beside it.
This package is mounted read-only in the grading sandbox beside ``helpers``; it imports
nothing of the grader, and only :mod:`checks.fixtures` imports the model (to copy weights).
"""

from __future__ import annotations

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
from .record import MIME, encode
from .recorder import SOLUTION, CheckFailed, Test, collect_into, replay_into

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
