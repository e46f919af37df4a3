"""Per exercise, the built-ins that would do the job the learner is asked to write.

A test cell passes one of these lists to :meth:`checks.Test.call` (``forbidden=``): the
kernel watches the call for them (:mod:`checks.watch`, a best effort), and the grader reads
the learner's source for them (``autograder/scan.py``). The real defence is that the course's
own reference modules are absent while an assignment is graded (``autograder/pieces.py``).
Names are dotted paths; ``helpers.*`` names are the course's reference.

The lists are declared once, with the exercise that uses them, in :mod:`checks.exercises`;
this module gives each its name for the test cells' imports (``from checks import
SOFTMAX_BUILTINS``). A test checks that every declared list has its name here.
"""

from __future__ import annotations

from .exercises import FORBIDDEN

SOFTMAX_BUILTINS = FORBIDDEN["SOFTMAX_BUILTINS"]
ATTENTION_BUILTINS = FORBIDDEN["ATTENTION_BUILTINS"]
MASK_BUILTINS = FORBIDDEN["MASK_BUILTINS"]
HEADS_BUILTINS = FORBIDDEN["HEADS_BUILTINS"]
MULTI_HEAD_BUILTINS = FORBIDDEN["MULTI_HEAD_BUILTINS"]
POSITIONAL_BUILTINS = FORBIDDEN["POSITIONAL_BUILTINS"]
ENCODER_BUILTINS = FORBIDDEN["ENCODER_BUILTINS"]
DECODER_BUILTINS = FORBIDDEN["DECODER_BUILTINS"]
MODEL_BUILTINS = FORBIDDEN["MODEL_BUILTINS"]
TRAINING_BUILTINS = FORBIDDEN["TRAINING_BUILTINS"]
DECODING_BUILTINS = FORBIDDEN["DECODING_BUILTINS"]
