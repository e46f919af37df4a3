"""Decoder layer and stack: masked self-attention, cross-attention, feed-forward (chapter 6;
exercise 05). Built from the encoder's pieces (``helpers.layers``).

Inputs are already embedded: ``(batch, tgt_len, d_model)``; ``memory`` is the encoder's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch import Tensor, nn

from .layers import AddNorm, FeedForward
from .multi_head import KVCache, MultiHeadAttention

__all__ = ["Decoder", "DecoderCache", "DecoderLayer"]


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
