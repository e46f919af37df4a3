"""The graded exercises, one declaration each: the ``helpers`` pieces it builds, what it forbids.

Each :class:`Exercise` is one nbgrader assignment (``solutions/<name>/``), in course order. It
says which modules of ``helpers`` hold the pieces the learner writes (``builds``) and which
built-ins would do that job (``forbids``: named lists of dotted names, as a test cell passes
them to ``Test.call(..., forbidden=...)``). What is hidden while it is graded follows from the
order: the modules it builds and those of every later exercise (:func:`hidden_while_graded`).

Everything else that knows these facts reads them here, or a test checks it against them:

- ``autograder.pieces`` leaves the hidden modules out of the grading kernel's ``helpers``;
- ``checks.forbidden`` exports each list by its name (``SOFTMAX_BUILTINS``, ...), as the test
  cells import them, and the grader reads the lists in the records the test cells hand out;
- ``tests/unit/test_exercise_table.py`` checks that the test cells of ``solutions/<name>/``
  import exactly the lists declared here, that each notebook's introduction (and its Chinese
  translation) names only what is forbidden and every forbidden piece the kernel still has,
  and that ``helpers``' lazy exports keep each built module's names under that module.

The contract sweep of each exercise (``autograder/contracts.py``: the hidden checks of every
graded piece on its whole contract) is keyed by the same names and stays with the grader,
out of the sandbox. This module holds no answer: it is mounted read-only in the grading
sandbox and ships in the learners' wheel, like the rest of ``checks``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """One graded exercise."""

    name: str  # the assignment: solutions/<name>/, exercises/<name>/
    builds: tuple[str, ...]  # the helpers modules that hold the pieces the learner writes
    # the lists of built-ins that would do the job, declared here: list name -> dotted names
    # (``helpers.*`` names are the course's reference)
    forbids: dict[str, tuple[str, ...]]
    also_forbids: tuple[str, ...] = ()  # lists an earlier exercise declared, used here too


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "01_attention",
        builds=("attention",),
        forbids={
            "SOFTMAX_BUILTINS": (
                "torch.softmax",
                "torch.nn.functional.softmax",
                "torch.Tensor.softmax",
                "torch.special.softmax",
                "torch.log_softmax",
                "torch.nn.functional.log_softmax",
                "torch.Tensor.log_softmax",
                "torch.special.log_softmax",
                "torch.nn.Softmax",
                "torch.nn.LogSoftmax",
                # the same sum under other names: softmin(-x), a distribution's probabilities
                # from logits
                "torch.nn.functional.softmin",
                "torch.nn.functional.gumbel_softmax",
                "torch.nn.Softmin",
                "torch.nn.Softmax2d",
                "torch.distributions.utils.logits_to_probs",
                "torch.distributions.Categorical",
                "torch.distributions.OneHotCategorical",
                "torch.distributions.Multinomial",
                "torch.distributions.RelaxedOneHotCategorical",
            ),
            "ATTENTION_BUILTINS": (
                "helpers.attention.scaled_dot_product_attention",
                "torch.nn.functional.scaled_dot_product_attention",
                "torch.nn.attention.flex_attention.flex_attention",
                "torch.nn.MultiheadAttention",
                "torch.nn.functional.multi_head_attention_forward",
                "helpers.multi_head.MultiHeadAttention",
            ),
            "MASK_BUILTINS": (
                "helpers.attention.causal_mask",
                "helpers.attention.padding_mask",
                "helpers.attention.target_mask",
            ),
        },
    ),
    Exercise(
        "02_multi_head",
        builds=("multi_head",),
        forbids={
            "HEADS_BUILTINS": (
                "helpers.multi_head.split_heads",
                "helpers.multi_head.merge_heads",
            ),
            "MULTI_HEAD_BUILTINS": (
                "helpers.multi_head.MultiHeadAttention",
                "helpers.multi_head.split_heads",
                "helpers.multi_head.merge_heads",
                "torch.nn.MultiheadAttention",
                "torch.nn.functional.multi_head_attention_forward",
            ),
        },
    ),
    Exercise(
        "03_positional_encoding",
        builds=("positional",),
        forbids={
            "POSITIONAL_BUILTINS": (
                "helpers.positional.sinusoidal_positional_encoding",
                "helpers.positional.PositionalEncoding",
                "helpers.positional.LearnedPositionalEncoding",
                "helpers.positional.TokenEmbedding",
            ),
        },
    ),
    Exercise(
        "04_encoder",
        builds=("layers",),
        forbids={
            "ENCODER_BUILTINS": (
                "helpers.layers.FeedForward",
                "helpers.layers.AddNorm",
                "helpers.layers.EncoderLayer",
                "helpers.layers.Encoder",
                "torch.nn.TransformerEncoderLayer",
                "torch.nn.TransformerEncoder",
                "torch.nn.Transformer",
            ),
        },
    ),
    Exercise(
        "05_decoder",
        builds=("decoder",),
        forbids={
            "DECODER_BUILTINS": (
                "helpers.decoder.DecoderLayer",
                "helpers.decoder.Decoder",
                "torch.nn.TransformerDecoderLayer",
                "torch.nn.TransformerDecoder",
                "torch.nn.Transformer",
            ),
        },
        also_forbids=("MASK_BUILTINS",),  # it writes the decoder's masks
    ),
    Exercise(
        "06_train_and_generate",
        # checkpoints: the trained weights would be an answer to the training task;
        # translation: it translates with the model and its decoding
        builds=("model", "decoding", "training", "checkpoints", "translation"),
        forbids={
            "MODEL_BUILTINS": (
                "helpers.model.Transformer",
                "torch.nn.Transformer",
                "torch.nn.TransformerEncoder",
                "torch.nn.TransformerDecoder",
                "torch.nn.TransformerEncoderLayer",
                "torch.nn.TransformerDecoderLayer",
            ),
            "TRAINING_BUILTINS": (
                "helpers.training.train_step",
                "helpers.training.train",
                "helpers.training.sequence_loss",
            ),
            "DECODING_BUILTINS": (
                "helpers.decoding.greedy_decode",
                "helpers.decoding.beam_search",
                "helpers.decoding.next_token_logits",
                "helpers.training.exact_match",
            ),
        },
    ),
)

BY_NAME: dict[str, Exercise] = {e.name: e for e in EXERCISES}

# Every list by its name, as checks.forbidden exports it (each declared by one exercise).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    list_name: names for e in EXERCISES for list_name, names in e.forbids.items()
}


def forbidden_lists(name: str) -> dict[str, tuple[str, ...]]:
    """The lists exercise ``name``'s test cells use: its own, then those it borrows."""
    exercise = BY_NAME[name]
    return {**exercise.forbids, **{n: FORBIDDEN[n] for n in exercise.also_forbids}}


def hidden_while_graded(name: str) -> dict[str, str]:
    """``{helpers module: the exercise that builds it}``, for exercise ``name`` and every later
    one: the modules absent from the grading kernel while ``name`` is graded (the chapters'
    pictures are absent too). An exercise the course does not know hides nothing."""
    names = [e.name for e in EXERCISES]
    if name not in names:
        return {}
    later = EXERCISES[names.index(name) :]
    return {module: e.name for e in later for module in e.builds}
