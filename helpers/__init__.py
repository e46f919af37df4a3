"""Attention from Zero: the course's reference Transformer, one module per idea.

Tensors are batch-first, ``(batch, seq, d_model)``; masks are boolean, ``True`` = may attend.
Plots live in ``helpers.plotting`` (not imported here, so that importing ``helpers`` stays light).
"""

from .attention import causal_mask, padding_mask, scaled_dot_product_attention, target_mask
from .data import (
    Vocab,
    make_batch,
    make_copy_task,
    make_number_translation,
    number_to_chinese,
    number_to_words,
)
from .decoding import beam_search, greedy_decode
from .layers import AddNorm, Decoder, DecoderCache, DecoderLayer, Encoder, EncoderLayer, FeedForward
from .model import Transformer, TransformerConfig
from .multi_head import KVCache, MultiHeadAttention, merge_heads, split_heads
from .positional import (
    LearnedPositionalEncoding,
    PositionalEncoding,
    TokenEmbedding,
    sinusoidal_positional_encoding,
)
from .tracing import format_shape_table, print_shape_table, trace_shapes
from .training import (
    exact_match,
    make_optimizer,
    noam_lr,
    noam_scheduler,
    seed_everything,
    sequence_loss,
    train,
    train_step,
)

__all__ = [
    "AddNorm",
    "Decoder",
    "DecoderCache",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "KVCache",
    "LearnedPositionalEncoding",
    "MultiHeadAttention",
    "PositionalEncoding",
    "TokenEmbedding",
    "Transformer",
    "TransformerConfig",
    "Vocab",
    "beam_search",
    "causal_mask",
    "exact_match",
    "format_shape_table",
    "greedy_decode",
    "make_batch",
    "make_copy_task",
    "make_number_translation",
    "make_optimizer",
    "merge_heads",
    "noam_lr",
    "noam_scheduler",
    "number_to_chinese",
    "number_to_words",
    "padding_mask",
    "print_shape_table",
    "scaled_dot_product_attention",
    "seed_everything",
    "sequence_loss",
    "sinusoidal_positional_encoding",
    "split_heads",
    "target_mask",
    "trace_shapes",
    "train",
    "train_step",
]
