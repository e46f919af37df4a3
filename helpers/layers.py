"""Feed-forward network, Add & Norm, encoder layer and stack (chapter 5; exercise 04).

Inputs are already embedded: ``(batch, seq, d_model)``, as in ``torch.nn.TransformerEncoder``.
Post-norm (the paper: LayerNorm(x + Sublayer(x))) by default, pre-norm
(x + Sublayer(LayerNorm(x))) with ``norm_first=True``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .multi_head import MultiHeadAttention

__all__ = ["AddNorm", "Encoder", "EncoderLayer", "FeedForward"]


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position alone.

    ``(batch, seq, d_model)`` → ``(batch, seq, d_ff)`` → ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class AddNorm(nn.Module):
    """Residual connection and LayerNorm around one sublayer.

    post-norm: LayerNorm(x + Dropout(sublayer(x)));  pre-norm: x + Dropout(sublayer(LayerNorm(x))).
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """``x (batch, seq, d_model)`` → same shape."""
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each wrapped in Add & Norm."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.attn_block = AddNorm(d_model, dropout, norm_first)
        self.ff_block = AddNorm(d_model, dropout, norm_first)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x (batch, src_len, d_model)`` → same shape.

        ``mask`` broadcasts to (batch, heads, src_len, src_len).
        """
        x = self.attn_block(x, lambda y: self.self_attn(y, y, y, mask))
        return self.ff_block(x, self.feed_forward)


class Encoder(nn.Module):
    """A stack of ``num_layers`` encoder layers, with a final LayerNorm when ``final_norm``.

    ``final_norm`` defaults to ``norm_first``: a pre-norm stack needs one last LayerNorm.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        num_layers: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        final_norm: bool | None = None,
    ) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = nn.LayerNorm(d_model) if final_norm else nn.Identity()

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """``x (batch, src_len, d_model)`` → memory ``(batch, src_len, d_model)``."""
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)
