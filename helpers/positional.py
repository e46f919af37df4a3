"""Token embeddings and positional encodings (chapter 4)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = [
    "LearnedPositionalEncoding",
    "PositionalEncoding",
    "TokenEmbedding",
    "sinusoidal_positional_encoding",
]


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> Tensor:
    """The paper's table ``(max_len, d_model)``.

    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)).
    """
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even to pair sin and cos columns; got {d_model}")
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    inv_freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    angles = position * inv_freq  # (max_len, d_model / 2)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def check_length(seq_len: int, start: int, max_len: int) -> None:
    if start + seq_len > max_len:
        raise ValueError(
            f"sequence reaches position {start + seq_len - 1}, beyond max_len={max_len}; "
            "shorten the input or build the model with a larger max_len"
        )


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to embeddings ``(batch, seq, d_model)``, then dropout."""

    pe: Tensor  # (max_len, d_model), a buffer

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0) -> None:
        super().__init__()
        self.max_len = max_len
        self.dropout = nn.Dropout(dropout)
        # Not persistent: it is a function of (max_len, d_model), so checkpoints need not carry it.
        self.register_buffer(
            "pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False
        )

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``x (batch, seq, d_model)`` → same shape; positions count from ``start`` (KV cache)."""
        check_length(x.size(1), start, self.max_len)
        return self.dropout(x + self.pe[start : start + x.size(1)])


class LearnedPositionalEncoding(nn.Module):
    """The alternative the paper also tried: one trained vector per position."""

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0) -> None:
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``x (batch, seq, d_model)`` → same shape."""
        check_length(x.size(1), start, self.max_len)
        positions = torch.arange(start, start + x.size(1), device=x.device)
        return self.dropout(x + self.embedding(positions))


class TokenEmbedding(nn.Module):
    """Token ids ``(batch, seq)`` → vectors ``(batch, seq, d_model)``, scaled by √d_model.

    The table is initialised with std 1/√d_model (a good scale for the output layer it may be
    tied to); multiplying by √d_model brings the vectors back to unit-variance entries, the same
    footing as the positional encoding's values in [-1, 1].
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model**-0.5)

    def forward(self, tokens: Tensor) -> Tensor:
        if tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"token ids must be an integer tensor; got dtype {tokens.dtype}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                f"token ids must lie in [0, {self.vocab_size}); got values from "
                f"{int(tokens.min())} to {int(tokens.max())} — was the input encoded with "
                "the right vocabulary?"
            )
        return self.embedding(tokens) * math.sqrt(self.d_model)
