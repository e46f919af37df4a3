"""Multi-head attention (chapter 3): h heads of size d_model / h, run as one batched matmul."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import check_mask, scaled_dot_product_attention

__all__ = ["KVCache", "MultiHeadAttention", "merge_heads", "split_heads"]


@dataclass
class KVCache:
    """Projected keys and values kept between decoding steps, ``(batch, heads, seen, d_head)``.

    ``static=True`` is for cross-attention: the encoder memory is projected once and reused.
    ``static=False`` is for self-attention: each step appends the new positions.
    """

    static: bool = False
    key: Tensor | None = None
    value: Tensor | None = None

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` (beam search reshuffles its hypotheses each step)."""
        if self.key is not None and self.value is not None:
            self.key = self.key.index_select(0, index)
            self.value = self.value.index_select(0, index)


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``(batch, seq, d_model)`` → ``(batch, heads, seq, d_head)``."""
    batch, seq, d_model = x.shape
    return x.view(batch, seq, num_heads, d_model // num_heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """``(batch, heads, seq, d_head)`` → ``(batch, seq, heads * d_head)``."""
    batch, heads, seq, d_head = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d_head)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O,
    head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i).

    The h projections of size d_model × d_head are stored side by side in one d_model × d_model
    matrix per role, so all heads are projected by one matmul.

    With ``record_weights = True`` the explicit path runs and ``last_weights``
    ``(batch, heads, q_len, k_len)`` keeps the attention weights for plots; otherwise the
    fused ``F.scaled_dot_product_attention`` runs. Both give the same output.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads ({num_heads}) so that each "
                f"head gets d_model / num_heads dimensions; try num_heads in "
                f"{[h for h in range(1, min(d_model, 16) + 1) if d_model % h == 0]}"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_head = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.record_weights = False
        self.last_weights: Tensor | None = None

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        cache: KVCache | None = None,
    ) -> Tensor:
        """Attend from ``query (batch, q_len, d_model)`` to ``key``, ``value (batch, k_len, d)``.

        ``mask`` is boolean, broadcastable to ``(batch, heads, q_len, k_len)``, ``True`` = may
        attend; with a self-attention ``cache`` its k_len counts the cached positions too.
        Returns ``(batch, q_len, d_model)``.
        """
        if query.size(-1) != self.d_model:
            raise ValueError(
                f"expected inputs with last dimension d_model={self.d_model}; got "
                f"{tuple(query.shape)}"
            )
        q = split_heads(self.q_proj(query), self.num_heads)
        if cache is not None and cache.static and cache.key is not None and cache.value is not None:
            k, v = cache.key, cache.value
        else:
            k = split_heads(self.k_proj(key), self.num_heads)
            v = split_heads(self.v_proj(value), self.num_heads)
            if cache is not None:
                if not cache.static and cache.key is not None and cache.value is not None:
                    k = torch.cat([cache.key, k], dim=2)
                    v = torch.cat([cache.value, v], dim=2)
                cache.key, cache.value = k, v

        if self.record_weights:
            out, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
            self.last_weights = weights.detach()
        else:
            if mask is not None:
                check_mask(mask, (q.size(0), self.num_heads, q.size(2), k.size(2)))
            p = self.dropout.p if self.training else 0.0
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return self.out_proj(merge_heads(out))
