"""Attention from Zero: the course's reference Transformer, one module per idea.

Tensors are batch-first, ``(batch, seq, d_model)``; masks are boolean, ``True`` = may attend.
The exercises' test cells use a package of their own, ``checks``. The modules, in course
order, one line each:

- ``attention``: scaled dot-product attention and its masks.
- ``multi_head``: multi-head attention, splitting and merging heads, the KV cache.
- ``positional``: token embedding, sinusoidal and learned positional encodings.
- ``layers``: feed-forward, Add & Norm, the encoder layer and the encoder stack.
- ``decoder``: the decoder layer and stack, and its cache.
- ``model``: the Transformer and its configuration (the paper's base model by default).
- ``decoding``: greedy decoding and beam search.
- ``training``: loss, optimiser, the Noam schedule, the training loop.
- ``checkpoints``: the trained weights the chapters load (``weights/``).
- ``interop``: PyTorch's ``nn.MultiheadAttention`` and ``nn.Transformer`` weights, copied in.
- ``data``: the tasks' data: numbers in words, vocabularies, tasks, batches, verses, BPE.
- ``translation``: real sentences translated, a word-by-word baseline, BLEU (sacrebleu).
- ``pictures``: the chapters' pictures and measurements, not part of the model.

Names are imported from their module on first use (``from helpers import MultiHeadAttention``
loads ``helpers.multi_head`` only). While an exercise is graded, the modules that hold what it
asks the learner to write (and those of later exercises) are absent: importing them raises
an ``ImportError`` that says so, and every other name keeps working.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

_MODULES: dict[str, tuple[str, ...]] = {
    "attention": ("causal_mask", "padding_mask", "scaled_dot_product_attention", "target_mask"),
    "data": (
        "BPE",
        "VersePair",
        "Vocab",
        "load_verse_pairs",
        "make_batch",
        "make_copy_task",
        "make_number_translation",
        "number_to_chinese",
        "number_to_words",
        "pairs_to_batch",
        "train_bpe",
    ),
    "decoding": ("beam_search", "greedy_decode"),
    "layers": ("AddNorm", "Encoder", "EncoderLayer", "FeedForward"),
    "decoder": ("Decoder", "DecoderCache", "DecoderLayer"),
    "model": ("Transformer", "TransformerConfig"),
    "multi_head": ("KVCache", "MultiHeadAttention", "merge_heads", "split_heads"),
    "positional": (
        "LearnedPositionalEncoding",
        "PositionalEncoding",
        "TokenEmbedding",
        "sinusoidal_positional_encoding",
    ),
    # measurements the chapters print (helpers.pictures, not part of the model)
    "pictures.printing": ("format_difference", "format_vector"),
    "pictures.timing": ("best_time",),
    "pictures.tracing": ("format_shape_table", "print_shape_table", "trace_shapes"),
    "training": (
        "exact_match",
        "make_optimizer",
        "noam_lr",
        "noam_scheduler",
        "seed_everything",
        "sequence_loss",
        "train",
        "train_step",
    ),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:  # a submodule, as ``import helpers; helpers.data.make_batch``
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'helpers' has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
