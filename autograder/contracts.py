"""Each graded piece checked on its whole contract, the way the course uses it.

A test cell checks a piece on the examples its author chose; a piece can pass them and still
break the way the next exercises use it: in backward, in training mode, in float64, past 512
positions, on its second call. For every graded function and module this table declares the
probes of ``checks.sweep`` it goes through, one clause per line:

* **backward** -- eval mode: the outputs and the gradients of a fixed weighted sum of them with
  respect to every input and parameter, as the solution's; training mode, with dropout on:
  backward runs, and every parameter the solution trains gets a gradient;
* **dtypes** -- every dtype the task's text allows gives results in that dtype, at that
  dtype's precision;
* **sizes** -- batch 1, length 1, lengths past any fixed table (over 512), non-square shapes;
* **call order** -- different sizes in both orders, and a call after an earlier result was
  changed in place.

``with_sweep`` appends each test cell's clauses to it as a hidden part, in the grader's copy
of the source notebook only: the replay runs them with the solution (``autograder/replay.py``),
the grading kernel runs their answer-free kernel form (``autograder/kernel_form.py``), and a
clause that fails costs the points of the test cell it belongs to. Nothing of this table is
released or mounted in the sandbox. The names a clause uses are the test cell's own (``t``,
the forbidden lists it imports), the course's imports and the learner's pieces, plus
``_sweep`` (``checks.sweep``), ``_randn``, ``_rng`` and ``_randomize`` (``checks.fixtures``).
"""

from __future__ import annotations

import copy
from typing import Any

from autograder import regions

PROLOGUE = """# the contract sweep (autograder/contracts.py)
from checks import sweep as _sweep
from checks.fixtures import randn as _randn, randomize_ as _randomize, rng as _rng
"""

# exercise -> test cell -> the code of its clauses
CONTRACTS: dict[str, dict[str, list[str]]] = {
    "01_attention": {
        "test_softmax": [
            """_sweep.dtypes(
    t,
    "dtype contract of softmax",
    lambda a: t.call(softmax, a, forbidden=SOFTMAX_BUILTINS, what="softmax"),
    lambda kind: (_rng(401).standard_normal((3, 5)) * 4).astype(kind),
    ["float32", "float64"],
)""",
            """_sweep.sizes(
    t,
    "sizes of softmax",
    [
        (
            "a single score",
            lambda: t.call(
                softmax,
                np.array([[2.5]]),
                forbidden=SOFTMAX_BUILTINS,
                what="softmax",
            ),
        ),
        (
            "600 scores in a row",
            lambda: t.call(
                softmax,
                _rng(402).standard_normal((2, 600)) * 3,
                forbidden=SOFTMAX_BUILTINS,
                what="softmax",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "softmax called in turn",
    lambda: t.call(
        softmax,
        _rng(403).standard_normal((2, 3)),
        forbidden=SOFTMAX_BUILTINS,
        what="softmax",
    ),
    lambda: t.call(
        softmax,
        _rng(404).standard_normal((4, 7)),
        forbidden=SOFTMAX_BUILTINS,
        what="softmax",
    ),
)""",
        ],
        "test_attention_numpy": [
            """_sweep.dtypes(
    t,
    "dtype contract of attention_numpy",
    lambda qkv: t.call(
        attention_numpy,
        *qkv,
        forbidden=SOFTMAX_BUILTINS,
        returns=2,
        what="attention_numpy",
    ),
    lambda kind: [
        _rng(410 + i).standard_normal(s).astype(kind)
        for i, s in enumerate(((3, 4), (5, 4), (5, 2)))
    ],
    ["float32", "float64"],
)""",
            """_sweep.sizes(
    t,
    "sizes of attention_numpy",
    [
        (
            "one query and one key",
            lambda: t.call(
                attention_numpy,
                *(
                    _rng(413 + i).standard_normal(s)
                    for i, s in enumerate(((1, 3), (1, 3), (1, 2)))
                ),
                forbidden=SOFTMAX_BUILTINS,
                what="attention_numpy",
            ),
        ),
        (
            "600 queries and 700 keys",
            lambda: t.call(
                attention_numpy,
                *(
                    _rng(416 + i).standard_normal(s)
                    for i, s in enumerate(((600, 8), (700, 8), (700, 3)))
                ),
                forbidden=SOFTMAX_BUILTINS,
                what="attention_numpy",
            ),
        ),
    ],
)""",
        ],
        "test_causal_mask": [
            """_sweep.sizes(
    t,
    "sizes of causal_mask",
    [
        (
            "size 1",
            lambda: t.call(
                causal_mask, 1, forbidden=MASK_BUILTINS, what="causal_mask"
            ),
        ),
        (
            "size 600",
            lambda: t.call(
                causal_mask, 600, forbidden=MASK_BUILTINS, what="causal_mask"
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "causal_mask called in turn",
    lambda: t.call(causal_mask, 3, forbidden=MASK_BUILTINS, what="causal_mask"),
    lambda: t.call(causal_mask, 5, forbidden=MASK_BUILTINS, what="causal_mask"),
)""",
        ],
        "test_padding_mask": [
            """_sweep.dtypes(
    t,
    "padding_mask of ids of another integer dtype",
    lambda ids: t.call(
        padding_mask, ids, 0, forbidden=MASK_BUILTINS, what="padding_mask"
    ),
    lambda kind: torch.tensor([[4, 5, 0], [6, 0, 0]], dtype=getattr(torch, kind)),
    ["int64", "int32"],
    hint="a mask is boolean whatever the ids' dtype.",
)""",
            """_sweep.sizes(
    t,
    "sizes of padding_mask",
    [
        (
            "one sequence of one token",
            lambda: t.call(
                padding_mask,
                torch.tensor([[7]]),
                0,
                forbidden=MASK_BUILTINS,
                what="padding_mask",
            ),
        ),
        (
            "600 tokens",
            lambda: t.call(
                padding_mask,
                (torch.arange(1200).reshape(2, 600) % 7),
                0,
                forbidden=MASK_BUILTINS,
                what="padding_mask",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "padding_mask called in turn",
    lambda: t.call(
        padding_mask,
        torch.tensor([[3, 4, 0]]),
        0,
        forbidden=MASK_BUILTINS,
        what="padding_mask",
    ),
    lambda: t.call(
        padding_mask,
        torch.tensor([[1, 0], [2, 2], [0, 0]]),
        0,
        forbidden=MASK_BUILTINS,
        what="padding_mask",
    ),
)""",
        ],
        "test_sdpa": [
            """_sweep.backward(
    t,
    "backward through scaled_dot_product_attention",
    scaled_dot_product_attention,
    [_randn(420, 2, 2, 3, 4), _randn(421, 2, 2, 5, 4), _randn(422, 2, 2, 5, 3)],
    what="scaled_dot_product_attention",
    forbidden=ATTENTION_BUILTINS,
)""",
            """_sweep.sizes(
    t,
    "sizes of scaled_dot_product_attention",
    [
        (
            "2-D inputs of one position",
            lambda: t.call(
                scaled_dot_product_attention,
                _randn(423, 1, 4),
                _randn(424, 1, 4),
                _randn(425, 1, 2),
                forbidden=ATTENTION_BUILTINS,
                what="scaled_dot_product_attention",
            ),
        ),
        (
            "600 queries and keys",
            lambda: t.call(
                scaled_dot_product_attention,
                _randn(426, 1, 600, 8),
                _randn(427, 1, 600, 8),
                _randn(428, 1, 600, 8),
                forbidden=ATTENTION_BUILTINS,
                what="scaled_dot_product_attention",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "scaled_dot_product_attention called in turn",
    lambda: t.call(
        scaled_dot_product_attention,
        _randn(429, 2, 3, 4),
        _randn(430, 2, 3, 4),
        _randn(431, 2, 3, 4),
        forbidden=ATTENTION_BUILTINS,
        what="scaled_dot_product_attention",
    ),
    lambda: t.call(
        scaled_dot_product_attention,
        _randn(432, 1, 2, 6, 8),
        _randn(433, 1, 2, 7, 8),
        _randn(434, 1, 2, 7, 5),
        forbidden=ATTENTION_BUILTINS,
        what="scaled_dot_product_attention",
    ),
)""",
        ],
        "test_sdpa_mask": [
            """_sweep.backward(
    t,
    "backward through masked attention",
    lambda q, k, v: scaled_dot_product_attention(
        q, k, v, (torch.tensor([[4, 5, 6, 0], [7, 0, 0, 0]]) != 0)[:, None, None, :]
    ),
    [_randn(440, 2, 2, 3, 4), _randn(441, 2, 2, 4, 4), _randn(442, 2, 2, 4, 3)],
    what="scaled_dot_product_attention",
    forbidden=ATTENTION_BUILTINS,
)""",
            """_sweep.dtypes(
    t,
    "dtype contract of masked attention",
    lambda qkv: t.call(
        scaled_dot_product_attention,
        *qkv,
        torch.ones(3, 5, dtype=torch.bool).tril(2),
        forbidden=ATTENTION_BUILTINS,
        what="scaled_dot_product_attention",
    ),
    lambda kind: [
        _randn(443 + i, 2, *s, dtype=getattr(torch, kind))
        for i, s in enumerate(((3, 4), (5, 4), (5, 2)))
    ],
    ["float32", "float64"],
)""",
        ],
    },
    "02_multi_head": {
        "test_split_heads": [
            """_sweep.backward(
    t,
    "backward through split_heads",
    lambda x: split_heads(x, 4),
    [_randn(501, 2, 3, 8)],
    what="split_heads",
    forbidden=HEADS_BUILTINS,
)""",
            """_sweep.dtypes(
    t,
    "dtype contract of split_heads",
    lambda x: t.call(
        split_heads, x, 2, forbidden=HEADS_BUILTINS, what="split_heads"
    ),
    lambda kind: _randn(502, 2, 3, 6, dtype=getattr(torch, kind)),
    ["float32", "float64"],
)""",
            """_sweep.sizes(
    t,
    "sizes of split_heads",
    [
        (
            "one sequence of one position",
            lambda: t.call(
                split_heads,
                _randn(503, 1, 1, 8),
                4,
                forbidden=HEADS_BUILTINS,
                what="split_heads",
            ),
        ),
        (
            "600 positions",
            lambda: t.call(
                split_heads,
                _randn(504, 2, 600, 6),
                3,
                forbidden=HEADS_BUILTINS,
                what="split_heads",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "split_heads called in turn",
    lambda: t.call(
        split_heads,
        _randn(505, 2, 3, 8),
        2,
        forbidden=HEADS_BUILTINS,
        what="split_heads",
    ),
    lambda: t.call(
        split_heads,
        _randn(506, 1, 5, 12),
        3,
        forbidden=HEADS_BUILTINS,
        what="split_heads",
    ),
)""",
        ],
        "test_merge_heads": [
            """_sweep.backward(
    t,
    "backward through merge_heads",
    merge_heads,
    [_randn(511, 2, 4, 3, 2)],
    what="merge_heads",
    forbidden=HEADS_BUILTINS,
)""",
            """_sweep.dtypes(
    t,
    "dtype contract of merge_heads",
    lambda x: t.call(merge_heads, x, forbidden=HEADS_BUILTINS, what="merge_heads"),
    lambda kind: _randn(512, 2, 3, 4, 2, dtype=getattr(torch, kind)),
    ["float32", "float64"],
)""",
            """_sweep.sizes(
    t,
    "sizes of merge_heads",
    [
        (
            "one head of one position",
            lambda: t.call(
                merge_heads,
                _randn(513, 1, 1, 1, 4),
                forbidden=HEADS_BUILTINS,
                what="merge_heads",
            ),
        ),
        (
            "600 positions",
            lambda: t.call(
                merge_heads,
                _randn(514, 2, 3, 600, 2),
                forbidden=HEADS_BUILTINS,
                what="merge_heads",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "merge_heads called in turn",
    lambda: t.call(
        merge_heads,
        _randn(515, 2, 2, 3, 4),
        forbidden=HEADS_BUILTINS,
        what="merge_heads",
    ),
    lambda: t.call(
        merge_heads,
        _randn(516, 1, 3, 5, 2),
        forbidden=HEADS_BUILTINS,
        what="merge_heads",
    ),
)""",
        ],
        "test_mha_matches_torch": [
            """_sweep.backward(
    t,
    "backward in training mode",
    _sweep.seeded(MultiHeadAttention(8, 2), 521),
    [_randn(522, 2, 3, 8), _randn(523, 2, 4, 8), _randn(523, 2, 4, 8)],
    train=True,
    what="MultiHeadAttention",
    forbidden=MULTI_HEAD_BUILTINS,
)""",
            """_sweep.dtypes(
    t,
    "dtype contract of MultiHeadAttention",
    lambda m_x: t.call(
        m_x[0],
        m_x[1],
        m_x[1],
        m_x[1],
        forbidden=MULTI_HEAD_BUILTINS,
        what="MultiHeadAttention",
    ),
    lambda kind: (
        _sweep.seeded(MultiHeadAttention(8, 4), 524).to(getattr(torch, kind)).eval(),
        _randn(525, 2, 3, 8, dtype=getattr(torch, kind)),
    ),
    ["float32", "float64"],
)""",
            """_sweep.sizes(
    t,
    "sizes of MultiHeadAttention",
    [
        (
            "one query and one key",
            lambda: t.call(
                _sweep.seeded(MultiHeadAttention(8, 2), 526).eval(),
                _randn(527, 1, 1, 8),
                _randn(528, 1, 1, 8),
                _randn(528, 1, 1, 8),
                forbidden=MULTI_HEAD_BUILTINS,
                what="MultiHeadAttention",
            ),
        ),
        (
            "600 positions",
            lambda: t.call(
                _sweep.seeded(MultiHeadAttention(8, 2), 529).eval(),
                _randn(530, 1, 600, 8),
                _randn(530, 1, 600, 8),
                _randn(530, 1, 600, 8),
                forbidden=MULTI_HEAD_BUILTINS,
                what="MultiHeadAttention",
            ),
        ),
    ],
)""",
            """_sweep_m = _sweep.seeded(MultiHeadAttention(8, 2), 531).eval()
_sweep.call_order(
    t,
    "one MultiHeadAttention called in turn",
    lambda: t.call(
        _sweep_m,
        _randn(532, 2, 3, 8),
        _randn(533, 2, 5, 8),
        _randn(533, 2, 5, 8),
        forbidden=MULTI_HEAD_BUILTINS,
        what="MultiHeadAttention",
    ),
    lambda: t.call(
        _sweep_m,
        _randn(534, 1, 7, 8),
        _randn(534, 1, 7, 8),
        _randn(534, 1, 7, 8),
        forbidden=MULTI_HEAD_BUILTINS,
        what="MultiHeadAttention",
    ),
    lambda: t.call(
        _sweep_m,
        _randn(535, 2, 3, 8),
        _randn(536, 2, 5, 8),
        _randn(536, 2, 5, 8),
        forbidden=MULTI_HEAD_BUILTINS,
        what="MultiHeadAttention",
    ),
)""",
        ],
        "test_mha_mask": [
            """_sweep_causal = torch.ones(4, 4, dtype=torch.bool).tril()
_sweep_x = _randn(544, 2, 4, 8)
t.call(
    _sweep.seeded(MultiHeadAttention(8, 2), 543),
    _sweep_x,
    _sweep_x,
    _sweep_x,
    _sweep_causal,
    forbidden=MULTI_HEAD_BUILTINS,
    what="MultiHeadAttention",
)
t.unchanged("MultiHeadAttention", mask=_sweep_causal)""",
            """_sweep_m = _sweep.seeded(MultiHeadAttention(8, 2), 540)
_sweep_pad = (torch.tensor([[3, 4, 5, 0], [6, 0, 0, 0]]) != 0)[:, None, None, :]
_sweep.backward(
    t,
    "backward with a padding mask",
    lambda q, kv: _sweep_m(q, kv, kv, _sweep_pad),
    [_randn(541, 2, 3, 8), _randn(542, 2, 4, 8)],
    module=_sweep_m,
    what="MultiHeadAttention",
    forbidden=MULTI_HEAD_BUILTINS,
)""",
        ],
    },
    "03_positional_encoding": {
        "test_positional_encoding": [
            """_sweep.sizes(
    t,
    "sizes of positional_encoding",
    [
        (
            "one position",
            lambda: t.call(
                positional_encoding,
                1,
                6,
                forbidden=POSITIONAL_BUILTINS,
                what="positional_encoding",
            ),
        ),
        (
            "600 positions",
            lambda: t.call(
                positional_encoding,
                600,
                8,
                forbidden=POSITIONAL_BUILTINS,
                what="positional_encoding",
            ),
        ),
        (
            "d_model 2",
            lambda: t.call(
                positional_encoding,
                5,
                2,
                forbidden=POSITIONAL_BUILTINS,
                what="positional_encoding",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "positional_encoding called in turn",
    lambda: t.call(
        positional_encoding,
        5,
        8,
        forbidden=POSITIONAL_BUILTINS,
        what="positional_encoding",
    ),
    lambda: t.call(
        positional_encoding,
        9,
        6,
        forbidden=POSITIONAL_BUILTINS,
        what="positional_encoding",
    ),
)""",
        ],
        "test_transformer_embedding": [
            """_sweep.backward(
    t,
    "backward through TransformerEmbedding",
    _sweep.seeded(TransformerEmbedding(7, 8), 601),
    [torch.tensor([[0, 1, 2, 3], [4, 5, 6, 0]])],
    what="TransformerEmbedding",
    forbidden=POSITIONAL_BUILTINS,
)""",
            """_sweep.backward(
    t,
    "backward through TransformerEmbedding in training mode",
    _sweep.seeded(TransformerEmbedding(7, 8), 602),
    [torch.tensor([[0, 1, 2, 3], [4, 5, 6, 0]])],
    train=True,
    what="TransformerEmbedding",
    forbidden=POSITIONAL_BUILTINS,
)""",
            """_sweep.sizes(
    t,
    "sizes of TransformerEmbedding",
    [
        (
            "one token",
            lambda: t.call(
                _sweep.seeded(TransformerEmbedding(5, 4), 603),
                torch.tensor([[3]]),
                forbidden=POSITIONAL_BUILTINS,
                what="TransformerEmbedding",
            ),
        ),
        (
            "600 tokens (max_len=600)",
            lambda: t.call(
                _sweep.seeded(TransformerEmbedding(9, 6, max_len=600), 604),
                torch.arange(1200).reshape(2, 600) % 9,
                forbidden=POSITIONAL_BUILTINS,
                what="TransformerEmbedding",
            ),
        ),
        (
            "10 tokens, after a module of the same d_model with max_len=4",
            lambda: (
                TransformerEmbedding(9, 14, max_len=4),
                t.call(
                    _sweep.seeded(TransformerEmbedding(9, 14, max_len=12), 606),
                    torch.arange(20).reshape(2, 10) % 9,
                    forbidden=POSITIONAL_BUILTINS,
                    what="TransformerEmbedding",
                ),
            )[1],
        ),
    ],
)""",
            """_sweep_e = _sweep.seeded(TransformerEmbedding(9, 6), 605)
_sweep.call_order(
    t,
    "one TransformerEmbedding called in turn",
    lambda: t.call(
        _sweep_e,
        torch.tensor([[1, 2, 3]]),
        forbidden=POSITIONAL_BUILTINS,
        what="TransformerEmbedding",
    ),
    lambda: t.call(
        _sweep_e,
        torch.tensor([[4, 5, 6, 7, 8], [8, 7, 6, 5, 4]]),
        forbidden=POSITIONAL_BUILTINS,
        what="TransformerEmbedding",
    ),
    lambda: t.call(
        _sweep_e,
        torch.tensor([[8, 0, 5]]),
        forbidden=POSITIONAL_BUILTINS,
        what="TransformerEmbedding",
    ),
)""",
        ],
        "test_relative_shift_matrix": [
            """_sweep.sizes(
    t,
    "sizes of relative_shift_matrix",
    [
        (
            "d_model 2",
            lambda: t.call(
                relative_shift_matrix,
                3,
                2,
                forbidden=POSITIONAL_BUILTINS,
                what="relative_shift_matrix",
            ),
        ),
        (
            "d_model 600",
            lambda: t.call(
                relative_shift_matrix,
                5,
                600,
                forbidden=POSITIONAL_BUILTINS,
                what="relative_shift_matrix",
            ),
        ),
        (
            "an offset of 700",
            lambda: t.call(
                relative_shift_matrix,
                700,
                8,
                forbidden=POSITIONAL_BUILTINS,
                what="relative_shift_matrix",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "relative_shift_matrix called in turn",
    lambda: t.call(
        relative_shift_matrix,
        2,
        6,
        forbidden=POSITIONAL_BUILTINS,
        what="relative_shift_matrix",
    ),
    lambda: t.call(
        relative_shift_matrix,
        -3,
        8,
        forbidden=POSITIONAL_BUILTINS,
        what="relative_shift_matrix",
    ),
    lambda: t.call(
        relative_shift_matrix,
        5,
        6,
        forbidden=POSITIONAL_BUILTINS,
        what="relative_shift_matrix",
    ),
)""",
        ],
    },
    "04_encoder": {
        "test_feed_forward": [
            """_sweep.backward(
    t,
    "backward through FeedForward",
    _sweep.seeded(FeedForward(6, 10), 701),
    [_randn(702, 2, 3, 6)],
    what="FeedForward",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep.backward(
    t,
    "backward through FeedForward in training mode",
    _sweep.seeded(FeedForward(6, 10, dropout=0.3), 703),
    [_randn(704, 2, 3, 6)],
    train=True,
    what="FeedForward",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep.sizes(
    t,
    "sizes of FeedForward",
    [
        (
            "one position",
            lambda: t.call(
                _sweep.seeded(FeedForward(4, 8), 705).eval(),
                _randn(706, 1, 1, 4),
                forbidden=ENCODER_BUILTINS,
                what="FeedForward",
            ),
        ),
        (
            "600 positions",
            lambda: t.call(
                _sweep.seeded(FeedForward(4, 8), 707).eval(),
                _randn(708, 2, 600, 4),
                forbidden=ENCODER_BUILTINS,
                what="FeedForward",
            ),
        ),
    ],
)""",
        ],
        "test_add_norm_post": [
            """_sweep_sub = _sweep.seeded(nn.Sequential(nn.Linear(6, 6), nn.Tanh()), 711)
_sweep.backward(
    t,
    "backward through post-norm AddNorm around a tanh sublayer",
    lambda x: _sweep_an(x, _sweep_sub),
    [_randn(712, 2, 3, 6)],
    module=(_sweep_an := _sweep.seeded(AddNorm(6), 713)),
    what="AddNorm",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep_sub = _sweep.seeded(nn.Sequential(nn.Linear(6, 6), nn.Tanh()), 714)
_sweep.backward(
    t,
    "backward through post-norm AddNorm in training mode",
    lambda x: _sweep_an(x, _sweep_sub),
    [_randn(715, 2, 3, 6)],
    train=True,
    module=(_sweep_an := _sweep.seeded(AddNorm(6, dropout=0.3), 716)),
    what="AddNorm",
    forbidden=ENCODER_BUILTINS,
)""",
        ],
        "test_add_norm_pre": [
            """_sweep_sub = _sweep.seeded(nn.Sequential(nn.Linear(6, 6), nn.Tanh()), 721)
_sweep.backward(
    t,
    "backward through pre-norm AddNorm around a tanh sublayer",
    lambda x: _sweep_an(x, _sweep_sub),
    [_randn(722, 2, 3, 6)],
    module=(_sweep_an := _sweep.seeded(AddNorm(6, norm_first=True), 723)),
    what="AddNorm",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep_sub = _sweep.seeded(nn.Sequential(nn.Linear(6, 6), nn.Tanh()), 724)
_sweep.backward(
    t,
    "backward through pre-norm AddNorm in training mode",
    lambda x: _sweep_an(x, _sweep_sub),
    [_randn(725, 2, 3, 6)],
    train=True,
    module=(
        _sweep_an := _sweep.seeded(AddNorm(6, dropout=0.3, norm_first=True), 726)
    ),
    what="AddNorm",
    forbidden=ENCODER_BUILTINS,
)""",
        ],
        "test_encoder_layer": [
            """_sweep.backward(
    t,
    "backward through EncoderLayer in training mode",
    _sweep.seeded(EncoderLayer(8, 2, 16, dropout=0.2), 731),
    [
        _randn(732, 2, 4, 8),
        (torch.tensor([[5, 6, 7, 0], [5, 0, 0, 0]]) != 0)[:, None, None, :],
    ],
    train=True,
    what="EncoderLayer",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep.sizes(
    t,
    "sizes of EncoderLayer",
    [
        (
            "one sequence of one token",
            lambda: t.call(
                _sweep.seeded(EncoderLayer(8, 2, 16), 733).eval(),
                _randn(734, 1, 1, 8),
                forbidden=ENCODER_BUILTINS,
                what="EncoderLayer",
            ),
        ),
    ],
)""",
            """_sweep_l = _sweep.seeded(EncoderLayer(8, 2, 16, norm_first=True), 735).eval()
_sweep.call_order(
    t,
    "one EncoderLayer called in turn",
    lambda: t.call(
        _sweep_l,
        _randn(736, 2, 3, 8),
        forbidden=ENCODER_BUILTINS,
        what="EncoderLayer",
    ),
    lambda: t.call(
        _sweep_l,
        _randn(737, 1, 6, 8),
        forbidden=ENCODER_BUILTINS,
        what="EncoderLayer",
    ),
    lambda: t.call(
        _sweep_l,
        _randn(738, 2, 3, 8),
        forbidden=ENCODER_BUILTINS,
        what="EncoderLayer",
    ),
)""",
        ],
        "test_encoder": [
            """_sweep.backward(
    t,
    "backward through Encoder in training mode",
    _sweep.seeded(Encoder(8, 2, 16, 2, dropout=0.2, norm_first=True), 741),
    [_randn(742, 2, 4, 8)],
    train=True,
    what="Encoder",
    forbidden=ENCODER_BUILTINS,
)""",
            """_sweep.backward(
    t,
    "backward through Encoder",
    _sweep.seeded(Encoder(8, 2, 16, 2), 743),
    [_randn(744, 2, 4, 8)],
    what="Encoder",
    forbidden=ENCODER_BUILTINS,
)""",
        ],
    },
    "05_decoder": {
        "test_make_decoder_masks": [
            """_sweep.dtypes(
    t,
    "make_decoder_masks of ids of another integer dtype",
    lambda ids: t.call(
        make_decoder_masks,
        ids[0],
        ids[1],
        0,
        forbidden=MASK_BUILTINS,
        what="make_decoder_masks",
    ),
    lambda kind: (
        torch.tensor([[4, 5, 0]], dtype=getattr(torch, kind)),
        torch.tensor([[1, 7, 8, 0]], dtype=getattr(torch, kind)),
    ),
    ["int64", "int32"],
    hint="the masks are boolean whatever the ids' dtype.",
)""",
            """_sweep.sizes(
    t,
    "sizes of make_decoder_masks",
    [
        (
            "a target of one token",
            lambda: t.call(
                make_decoder_masks,
                torch.tensor([[3, 4]]),
                torch.tensor([[1]]),
                0,
                forbidden=MASK_BUILTINS,
                what="make_decoder_masks",
            ),
        ),
        (
            "600 target tokens",
            lambda: t.call(
                make_decoder_masks,
                torch.tensor([[3, 4, 0]]),
                torch.arange(1, 601)[None, :] % 9,
                0,
                forbidden=MASK_BUILTINS,
                what="make_decoder_masks",
            ),
        ),
    ],
)""",
            """_sweep.call_order(
    t,
    "make_decoder_masks called in turn",
    lambda: t.call(
        make_decoder_masks,
        torch.tensor([[3, 4, 0]]),
        torch.tensor([[1, 5, 0]]),
        0,
        forbidden=MASK_BUILTINS,
        what="make_decoder_masks",
    ),
    lambda: t.call(
        make_decoder_masks,
        torch.tensor([[3, 4, 5, 6], [7, 0, 0, 0]]),
        torch.tensor([[1, 5, 6, 7, 8], [1, 2, 0, 0, 0]]),
        0,
        forbidden=MASK_BUILTINS,
        what="make_decoder_masks",
    ),
    lambda: t.call(
        make_decoder_masks,
        torch.tensor([[0, 4, 5]]),
        torch.tensor([[1, 0, 6]]),
        0,
        forbidden=MASK_BUILTINS,
        what="make_decoder_masks",
    ),
)""",
        ],
        "test_decoder_layer": [
            """_sweep.backward(
    t,
    "backward through DecoderLayer in training mode",
    _sweep.seeded(DecoderLayer(8, 2, 16, dropout=0.2), 801),
    [
        _randn(802, 2, 3, 8),
        _randn(803, 2, 4, 8),
        (torch.tensor([[5, 6, 7, 0], [5, 0, 0, 0]]) != 0)[:, None, None, :],
        torch.ones(3, 3, dtype=torch.bool).tril(),
    ],
    train=True,
    what="DecoderLayer",
    forbidden=DECODER_BUILTINS,
)""",
            """_sweep_pad = (torch.tensor([[5, 6, 7, 0], [5, 6, 0, 0]]) != 0)[:, None, None, :]
t.call(
    _sweep.seeded(DecoderLayer(8, 2, 16), 830).eval(),
    _randn(831, 2, 4, 8),
    _randn(832, 2, 3, 8),
    None,
    _sweep_pad,
    forbidden=DECODER_BUILTINS,
    what="DecoderLayer",
)
t.unchanged("DecoderLayer", tgt_mask=_sweep_pad)""",
            """_sweep.dtypes(
    t,
    "dtype contract of DecoderLayer",
    lambda m_x: t.call(
        m_x[0], m_x[1], m_x[2], forbidden=DECODER_BUILTINS, what="DecoderLayer"
    ),
    lambda kind: (
        _sweep.seeded(DecoderLayer(8, 2, 16), 804).to(getattr(torch, kind)).eval(),
        _randn(805, 2, 3, 8, dtype=getattr(torch, kind)),
        _randn(806, 2, 5, 8, dtype=getattr(torch, kind)),
    ),
    ["float32", "float64"],
)""",
            """_sweep_l = _sweep.seeded(DecoderLayer(8, 2, 16, norm_first=True), 807).eval()
_sweep.call_order(
    t,
    "one DecoderLayer called in turn",
    lambda: t.call(
        _sweep_l,
        _randn(808, 2, 3, 8),
        _randn(809, 2, 5, 8),
        forbidden=DECODER_BUILTINS,
        what="DecoderLayer",
    ),
    lambda: t.call(
        _sweep_l,
        _randn(810, 1, 6, 8),
        _randn(811, 1, 2, 8),
        forbidden=DECODER_BUILTINS,
        what="DecoderLayer",
    ),
    lambda: t.call(
        _sweep_l,
        _randn(812, 2, 3, 8),
        _randn(813, 2, 5, 8),
        forbidden=DECODER_BUILTINS,
        what="DecoderLayer",
    ),
)""",
        ],
        "test_decoder": [
            """_sweep.backward(
    t,
    "backward through Decoder in training mode",
    _sweep.seeded(Decoder(8, 2, 16, 2, dropout=0.2, norm_first=True), 821),
    [_randn(822, 2, 3, 8), _randn(823, 2, 4, 8)],
    train=True,
    what="Decoder",
    forbidden=DECODER_BUILTINS,
)""",
            """_sweep.backward(
    t,
    "backward through Decoder",
    _sweep.seeded(Decoder(8, 2, 16, 2), 824),
    [_randn(825, 2, 3, 8), _randn(826, 2, 4, 8)],
    what="Decoder",
    forbidden=DECODER_BUILTINS,
)""",
        ],
    },
    "06_train_and_generate": {
        "test_model_shapes": [
            """# every id of the vocabulary on both sides, no padding: every embedding row learns,
# whether the model shares one table between source and target or not
_sweep_src = torch.tensor([[0, 1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1, 0]])
_sweep_tgt = torch.tensor([[3, 0, 6, 1, 5, 2, 4], [4, 2, 5, 1, 6, 0, 3]])
_sweep.backward(
    t,
    "backward through Seq2SeqTransformer in training mode",
    _sweep.seeded(
        Seq2SeqTransformer(
            7, d_model=8, num_heads=2, d_ff=16, num_layers=1, dropout=0.1
        ),
        901,
    ),
    [
        _sweep_src,
        _sweep_tgt,
        torch.ones(2, 1, 1, 7, dtype=torch.bool),
        torch.ones(7, 7, dtype=torch.bool).tril(),
    ],
    train=True,
    by_name=False,
    what="Seq2SeqTransformer",
    forbidden=MODEL_BUILTINS,
)""",
            """_sweep.sizes(
    t,
    "sizes of Seq2SeqTransformer",
    [
        (
            "one token on each side",
            lambda: t.call(
                _sweep.seeded(
                    Seq2SeqTransformer(
                        7, d_model=8, num_heads=2, d_ff=16, num_layers=1
                    ),
                    902,
                ).eval(),
                torch.tensor([[3]]),
                torch.tensor([[1]]),
                forbidden=MODEL_BUILTINS,
                what="Seq2SeqTransformer",
            ),
        ),
        (
            "600 tokens (max_len=600)",
            lambda: t.call(
                _sweep.seeded(
                    Seq2SeqTransformer(
                        7, d_model=8, num_heads=2, d_ff=16, num_layers=1, max_len=600
                    ),
                    903,
                ).eval(),
                torch.arange(600)[None, :] % 4 + 3,
                torch.arange(600)[None, :] % 5 + 1,
                forbidden=MODEL_BUILTINS,
                what="Seq2SeqTransformer",
            ),
        ),
    ],
    values=False,
)""",
        ],
        "test_greedy_decode": [
            """_sweep.dtypes(
    t,
    "greedy_decode of ids of another integer dtype",
    lambda src: t.call(
        greedy_decode,
        ScriptedReverser(),
        src,
        0,
        forbidden=DECODING_BUILTINS,
        what="greedy_decode",
    ),
    lambda kind: torch.tensor([[3, 4, 2], [5, 2, 0]], dtype=getattr(torch, kind)),
    ["int64"],
    hint="ids are int64, also when max_len=0 allows no step.",
)""",
            """_sweep.call_order(
    t,
    "greedy_decode called in turn",
    lambda: t.call(
        greedy_decode,
        ScriptedReverser(),
        torch.tensor([[3, 4, 5, 2]]),
        6,
        forbidden=DECODING_BUILTINS,
        what="greedy_decode",
    ),
    lambda: t.call(
        greedy_decode,
        ScriptedReverser(),
        torch.tensor([[6, 2, 0], [7, 8, 2]]),
        4,
        forbidden=DECODING_BUILTINS,
        what="greedy_decode",
    ),
    lambda: t.call(
        greedy_decode,
        ScriptedReverser(),
        torch.tensor([[9, 8, 7, 2]]),
        6,
        forbidden=DECODING_BUILTINS,
        what="greedy_decode",
    ),
)""",
        ],
    },
}


def clauses(grade_id: str) -> list[str]:
    """The code of the clauses of test cell ``grade_id`` (of whichever exercise)."""
    for tests in CONTRACTS.values():
        if grade_id in tests:
            return tests[grade_id]
    return []


def with_sweep(source_nb: dict[str, Any]) -> dict[str, Any]:
    """A copy of the source notebook ``source_nb`` whose test cells end with their clauses,
    as a hidden part."""
    nb = copy.deepcopy(source_nb)
    for cell in nb.get("cells", []):
        if not regions.is_test_cell(cell):
            continue
        code = clauses(str(regions.nbgrader_meta(cell).get("grade_id", "")))
        if not code:
            continue
        text = regions.source_of(cell).rstrip("\n")
        hidden = "\n".join([regions.HIDDEN[0], PROLOGUE.rstrip("\n"), *code, regions.HIDDEN[1]])
        cell["source"] = f"{text}\n{hidden}\n"
    return nb
