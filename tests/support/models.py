"""A tiny Transformer's configuration, shared by tests/unit/test_model.py and
tests/book/test_model_training.py."""

from helpers import TransformerConfig


def tiny_config(**overrides) -> TransformerConfig:
    sizes = dict(
        src_vocab_size=13,
        tgt_vocab_size=13,
        d_model=32,
        num_heads=4,
        d_ff=64,
        num_encoder_layers=2,
        num_decoder_layers=2,
        dropout=0.0,
        max_len=64,
    )
    return TransformerConfig(**{**sizes, **overrides})
