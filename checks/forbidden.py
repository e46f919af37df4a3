"""Per exercise, the built-ins that would do the job the learner is asked to write.

A test cell passes one of these lists to :meth:`checks.Test.call` (``forbidden=``): the
kernel watches the call for them (:mod:`checks.watch`, a best effort), and the grader reads
the learner's source for them (``autograder/scan.py``). The real defence is that the course's
own reference modules are absent while an assignment is graded (``autograder/pieces.py``).
Names are dotted paths; ``helpers.*`` names are the course's reference.
"""

from __future__ import annotations

SOFTMAX_BUILTINS = (
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
    # the same sum under other names: softmin(-x), a distribution's probabilities from logits
    "torch.nn.functional.softmin",
    "torch.nn.functional.gumbel_softmax",
    "torch.nn.Softmin",
    "torch.nn.Softmax2d",
    "torch.distributions.utils.logits_to_probs",
    "torch.distributions.Categorical",
    "torch.distributions.OneHotCategorical",
    "torch.distributions.Multinomial",
    "torch.distributions.RelaxedOneHotCategorical",
)
ATTENTION_BUILTINS = (
    "helpers.attention.scaled_dot_product_attention",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.attention.flex_attention.flex_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    "helpers.multi_head.MultiHeadAttention",
)
MASK_BUILTINS = (
    "helpers.attention.causal_mask",
    "helpers.attention.padding_mask",
    "helpers.attention.target_mask",
)
HEADS_BUILTINS = (
    "helpers.multi_head.split_heads",
    "helpers.multi_head.merge_heads",
)
MULTI_HEAD_BUILTINS = (
    "helpers.multi_head.MultiHeadAttention",
    "helpers.multi_head.split_heads",
    "helpers.multi_head.merge_heads",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)
POSITIONAL_BUILTINS = (
    "helpers.positional.sinusoidal_positional_encoding",
    "helpers.positional.PositionalEncoding",
    "helpers.positional.LearnedPositionalEncoding",
    "helpers.positional.TokenEmbedding",
)
ENCODER_BUILTINS = (
    "helpers.layers.FeedForward",
    "helpers.layers.AddNorm",
    "helpers.layers.EncoderLayer",
    "helpers.layers.Encoder",
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerEncoder",
    "torch.nn.Transformer",
)
DECODER_BUILTINS = (
    "helpers.decoder.DecoderLayer",
    "helpers.decoder.Decoder",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.TransformerDecoder",
    "torch.nn.Transformer",
)
MODEL_BUILTINS = (
    "helpers.model.Transformer",
    "torch.nn.Transformer",
    "torch.nn.TransformerEncoder",
    "torch.nn.TransformerDecoder",
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
)
TRAINING_BUILTINS = (
    "helpers.training.train_step",
    "helpers.training.train",
    "helpers.training.sequence_loss",
)
DECODING_BUILTINS = (
    "helpers.decoding.greedy_decode",
    "helpers.decoding.beam_search",
    "helpers.decoding.next_token_logits",
    "helpers.training.exact_match",
)
