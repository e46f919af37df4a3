"""Feed-forward network, Add & Norm, encoder and decoder layers and stacks (chapters 5–6).

Inputs are already embedded: ``(batch, seq, d_model)``, as in ``torch.nn.TransformerEncoder``.
Post-norm (the paper: LayerNorm(x + Sublayer(x))) by default, pre-norm
(x + Sublayer(LayerNorm(x))) with ``norm_first=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .multi_head import KVCache, MultiHeadAttention


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


@dataclass
class DecoderCache:
    """The key/value caches of one decoder layer for incremental decoding."""

    self_attn: KVCache = field(default_factory=lambda: KVCache(static=False))
    cross_attn: KVCache = field(default_factory=lambda: KVCache(static=True))

    @property
    def length(self) -> int:
        """Number of target positions already cached."""
        return 0 if self.self_attn.key is None else self.self_attn.key.size(2)

    def reorder(self, index: Tensor) -> None:
        self.self_attn.reorder(index)
        self.cross_attn.reorder(index)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder memory, feed-forward.

    Each of the three is wrapped in Add & Norm.
    """

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
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.self_attn_block = AddNorm(d_model, dropout, norm_first)
        self.cross_attn_block = AddNorm(d_model, dropout, norm_first)
        self.ff_block = AddNorm(d_model, dropout, norm_first)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: DecoderCache | None = None,
    ) -> Tensor:
        """``x (batch, tgt_len, d_model)``, ``memory (batch, src_len, d_model)`` → like ``x``.

        ``tgt_mask`` broadcasts to (batch, heads, tgt_len, tgt_len) (causal), ``src_mask`` to
        (batch, heads, tgt_len, src_len) (padding of the source).
        """
        self_cache = cache.self_attn if cache is not None else None
        cross_cache = cache.cross_attn if cache is not None else None
        x = self.self_attn_block(x, lambda y: self.self_attn(y, y, y, tgt_mask, self_cache))
        x = self.cross_attn_block(
            x, lambda y: self.cross_attn(y, memory, memory, src_mask, cross_cache)
        )
        return self.ff_block(x, self.feed_forward)


def torch_layer_config(layer: nn.Module) -> dict:
    """Sizes and switches of a ``torch.nn.TransformerEncoderLayer``/``DecoderLayer``, checked."""
    if not layer.self_attn.batch_first:
        raise ValueError("from_torch needs batch_first=True (this course is batch-first)")
    if not (layer.activation is F.relu or isinstance(layer.activation, nn.ReLU)):
        raise ValueError(
            f"from_torch needs activation='relu' (the paper's); got {layer.activation}"
        )
    return {
        "d_model": layer.self_attn.embed_dim,
        "num_heads": layer.self_attn.num_heads,
        "d_ff": layer.linear1.out_features,
        "dropout": layer.dropout.p,
        "norm_first": layer.norm_first,
    }


@torch.no_grad()
def copy_layer_norm(ours: nn.LayerNorm, theirs: nn.LayerNorm) -> None:
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)
    ours.eps = theirs.eps


@torch.no_grad()
def copy_feed_forward(ours: FeedForward, layer: nn.Module) -> None:
    for mine, theirs in [(ours.linear1, layer.linear1), (ours.linear2, layer.linear2)]:
        mine.weight.copy_(theirs.weight)
        mine.bias.copy_(theirs.bias)


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

    @classmethod
    def from_torch(cls, torch_encoder: nn.TransformerEncoder) -> Encoder:
        """A copy of a ``torch.nn.TransformerEncoder`` (batch_first, ReLU, post- or pre-norm)."""
        config = torch_layer_config(torch_encoder.layers[0])
        encoder = cls(
            num_layers=len(torch_encoder.layers),
            final_norm=torch_encoder.norm is not None,
            **config,
        )
        for ours, theirs in zip(encoder.layers, torch_encoder.layers, strict=True):
            ours.self_attn.load_torch_weights(theirs.self_attn)
            copy_feed_forward(ours.feed_forward, theirs)
            copy_layer_norm(ours.attn_block.norm, theirs.norm1)
            copy_layer_norm(ours.ff_block.norm, theirs.norm2)
        if torch_encoder.norm is not None:
            copy_layer_norm(encoder.norm, torch_encoder.norm)
        return encoder.train(torch_encoder.training)


class Decoder(nn.Module):
    """A stack of ``num_layers`` decoder layers, with a final LayerNorm when ``final_norm``."""

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
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = nn.LayerNorm(d_model) if final_norm else nn.Identity()

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        cache: list[DecoderCache] | None = None,
    ) -> Tensor:
        """``x (batch, tgt_len, d_model)``, ``memory (batch, src_len, d_model)`` → like ``x``.

        With ``cache`` (from ``new_cache()``), ``x`` holds only the new positions and the keys
        and values of earlier positions come from the cache.
        """
        if cache is not None and len(cache) != len(self.layers):
            raise ValueError(
                f"cache has {len(cache)} entries for {len(self.layers)} layers; use new_cache()"
            )
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, None if cache is None else cache[i])
        return self.norm(x)

    def new_cache(self) -> list[DecoderCache]:
        """An empty key/value cache, one entry per layer."""
        return [DecoderCache() for _ in self.layers]

    @classmethod
    def from_torch(cls, torch_decoder: nn.TransformerDecoder) -> Decoder:
        """A copy of a ``torch.nn.TransformerDecoder`` (batch_first, ReLU, post- or pre-norm)."""
        config = torch_layer_config(torch_decoder.layers[0])
        decoder = cls(
            num_layers=len(torch_decoder.layers),
            final_norm=torch_decoder.norm is not None,
            **config,
        )
        for ours, theirs in zip(decoder.layers, torch_decoder.layers, strict=True):
            ours.self_attn.load_torch_weights(theirs.self_attn)
            ours.cross_attn.load_torch_weights(theirs.multihead_attn)
            copy_feed_forward(ours.feed_forward, theirs)
            copy_layer_norm(ours.self_attn_block.norm, theirs.norm1)
            copy_layer_norm(ours.cross_attn_block.norm, theirs.norm2)
            copy_layer_norm(ours.ff_block.norm, theirs.norm3)
        if torch_decoder.norm is not None:
            copy_layer_norm(decoder.norm, torch_decoder.norm)
        return decoder.train(torch_decoder.training)
