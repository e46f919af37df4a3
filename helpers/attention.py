"""Scaled dot-product attention and the boolean masks it takes (chapter 2).

Mask convention of the whole course: a boolean tensor, ``True`` = this query may attend
to this key. Masked scores are filled with the most negative finite number of the
score's dtype (never 0, and never -1e9, which float16 cannot hold).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["causal_mask", "padding_mask", "scaled_dot_product_attention", "target_mask"]


def check_mask(mask: Tensor, scores_shape: torch.Size | tuple[int, ...]) -> None:
    """Raise a clear error unless ``mask`` is boolean and broadcasts to ``scores_shape``."""
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must be a boolean tensor (True = may attend); got dtype {mask.dtype}. "
            "Build it with causal_mask()/padding_mask(), or convert with mask.bool()."
        )
    # Broadcasting checked by hand: torch.broadcast_shapes imports SymPy on its first call,
    # about half a second in every fresh process (every graded notebook).
    shape, target = tuple(mask.shape), tuple(scores_shape)
    fits = len(shape) <= len(target) and all(
        m in (1, t) for m, t in zip(shape, target[len(target) - len(shape) :], strict=True)
    )
    if not fits:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} cannot broadcast to the attention scores of "
            f"shape {tuple(scores_shape)} (batch, heads, q_len, k_len). A padding mask should "
            "be (batch, 1, 1, k_len), a causal mask (q_len, k_len)."
        )


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ / √d_k) v, the explicit way.

    Args:
        q: queries ``(..., q_len, d_k)``, e.g. ``(batch, heads, q_len, d_k)``.
        k: keys ``(..., k_len, d_k)``.
        v: values ``(..., k_len, d_v)``.
        mask: boolean, broadcastable to ``(..., q_len, k_len)``; ``True`` = may attend.
        dropout: optional module (e.g. ``nn.Dropout``) applied to the weights.

    Returns:
        ``(output, weights)`` with shapes ``(..., q_len, d_v)`` and ``(..., q_len, k_len)``.
        A query row whose keys are all masked gets zero weights and a zero output
        (as in ``torch.nn.functional.scaled_dot_product_attention``), not NaN.

    Equal to PyTorch's fused attention (a test runs this example):

    >>> q, k, v = torch.randn(3, 2, 4, 5, 8, dtype=torch.float64).unbind(0)
    >>> output, weights = scaled_dot_product_attention(q, k, v, causal_mask(5))
    >>> fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    >>> torch.allclose(output, fused), torch.allclose(weights.sum(-1), torch.ones(2, 4, 5).double())
    (True, True)
    """
    if q.size(-1) != k.size(-1):
        raise ValueError(
            f"queries and keys must have the same last dimension d_k; got {q.size(-1)} and "
            f"{k.size(-1)}"
        )
    if k.size(-2) != v.size(-2):
        raise ValueError(
            f"keys and values must have the same length; got {k.size(-2)} keys and "
            f"{v.size(-2)} values"
        )
    d_k = q.size(-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., q_len, k_len)
    if mask is not None:
        check_mask(mask, scores.shape)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        # A fully masked row was softmaxed to uniform weights; zero it instead.
        weights = weights.masked_fill(~mask, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """Lower-triangular boolean mask ``(size, size)``: query ``i`` may attend to keys ``<= i``."""
    if size < 1:
        raise ValueError(f"causal_mask needs a positive size; got {size}")
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Boolean key mask ``(batch, 1, 1, seq)`` from ids ``(batch, seq)``: ``True`` = real token.

    The two singleton axes broadcast over heads and queries.
    """
    if tokens.dim() != 2:
        raise ValueError(
            f"padding_mask expects token ids (batch, seq); got shape {tuple(tokens.shape)}"
        )
    return (tokens != pad_id)[:, None, None, :]


def target_mask(tgt: Tensor, pad_id: int) -> Tensor:
    """Decoder self-attention mask ``(batch, 1, tgt_len, tgt_len)``: padding AND causal."""
    return padding_mask(tgt, pad_id) & causal_mask(tgt.size(1), device=tgt.device)
