"""Autoregressive generation (chapter 7): greedy decoding and beam search, with a KV cache.

With ``use_cache=True`` each step feeds only the newest token and reuses the keys and values
of earlier positions; with ``use_cache=False`` each step recomputes the whole prefix. Both
give the same tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from .attention import causal_mask, padding_mask
from .decoder import DecoderCache
from .model import Transformer

__all__ = ["beam_search", "greedy_decode"]


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[None]:
    """Run in eval mode (no dropout) and give the model back in the mode it was in."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def next_token_logits(
    model: Transformer,
    tokens: Tensor,
    memory: Tensor,
    src_mask: Tensor | None,
    cache: list[DecoderCache] | None,
) -> Tensor:
    """Logits ``(batch, vocab)`` for the position after ``tokens (batch, len)``."""
    if cache is not None:
        return model.decode(tokens[:, -1:], memory, src_mask, None, cache)[:, -1]
    return model.decode(tokens, memory, src_mask, causal_mask(tokens.size(1), tokens.device))[:, -1]


def greedy_decode(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int = 1,
    eos_id: int = 2,
    pad_id: int | None = None,
    *,
    src_mask: Tensor | None = None,
    use_cache: bool = True,
) -> Tensor:
    """Pick the most likely token at every step, for a whole batch at once.

    The same contract as exercise 06's ``greedy_decode``: eval mode and no gradients while it
    runs, the model's mode given back afterwards.

    Args:
        src: source ids ``(batch, src_len)``, padded with ``pad_id``.
        max_len: most tokens to generate.
        pad_id: defaults to ``model.config.pad_id``.
        src_mask: defaults to the padding mask of ``src``.
        use_cache: reuse the keys and values of earlier steps (same result, faster).

    Returns:
        ``(batch, n)`` generated ids without BOS, ``n <= max_len``; each row ends at its EOS and
        is padded with ``pad_id`` after it. Generation stops when every row has produced EOS.
    """
    if pad_id is None:
        pad_id = model.config.pad_id
    if src_mask is None:
        src_mask = padding_mask(src, pad_id)
    with eval_mode(model):
        memory = model.encode(src, src_mask)
        tokens = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
        finished = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        cache = model.decoder.new_cache() if use_cache else None
        for _ in range(max_len):
            logits = next_token_logits(model, tokens, memory, src_mask, cache)
            next_token = logits.argmax(dim=-1).masked_fill(finished, pad_id)
            tokens = torch.cat([tokens, next_token[:, None]], dim=1)
            finished |= next_token == eos_id
            if finished.all():
                break
    return tokens[:, 1:]


def gnmt_length_penalty(lengths: Tensor, alpha: float) -> Tensor:
    """GNMT's length penalty ``((5 + |Y|) / 6) ** alpha`` (Wu et al., 2016), elementwise.

    Beam search divides a hypothesis's total log-probability by it, so that longer outputs are
    not lost merely for paying for more tokens; the paper uses ``alpha = 0.6``. It is 1 for
    ``|Y| = 1`` and for ``alpha = 0``.
    """
    return ((5 + lengths) / 6) ** alpha


def beam_search(
    model: Transformer,
    src: Tensor,
    max_len: int,
    bos_id: int = 1,
    eos_id: int = 2,
    pad_id: int | None = None,
    *,
    beam_size: int = 4,
    length_penalty: float = 0.0,
    src_mask: Tensor | None = None,
    use_cache: bool = True,
) -> Tensor:
    """Keep the ``beam_size`` most likely prefixes at every step; return the best per source.

    A finished hypothesis (ended by EOS) stays in the beam with its score frozen. At the end the
    hypotheses are ranked by total log-probability divided by
    ``gnmt_length_penalty(length, length_penalty)``, ``length`` counting the tokens up to and
    with EOS; the paper uses ``length_penalty=0.6``, and 0 ranks by log-probability alone.
    With ``beam_size=1`` this is greedy decoding.

    The arguments ``greedy_decode`` has come first, in its order; ``pad_id`` defaults to
    ``model.config.pad_id``. Returns ``(batch, n)`` ids without BOS, padded after EOS, like
    ``greedy_decode``.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1; got {beam_size}")
    if pad_id is None:
        pad_id = model.config.pad_id
    if src_mask is None:
        src_mask = padding_mask(src, pad_id)
    batch, k = src.size(0), beam_size
    device = src.device
    with eval_mode(model):
        memory = model.encode(src, src_mask).repeat_interleave(k, dim=0)  # (batch·k, src_len, d)
        src_mask = src_mask.repeat_interleave(k, dim=0)
        tokens = torch.full((batch * k, 1), bos_id, dtype=torch.long, device=device)
        scores = torch.zeros(batch, k, device=device)
        scores[:, 1:] = float("-inf")  # all beams start equal: expand only the first
        finished = torch.zeros(batch * k, dtype=torch.bool, device=device)
        lengths = torch.zeros(batch * k, device=device)
        cache = model.decoder.new_cache() if use_cache else None
        for _ in range(max_len):
            log_probs = next_token_logits(model, tokens, memory, src_mask, cache).log_softmax(-1)
            vocab = log_probs.size(-1)
            # A finished hypothesis may only continue with padding, at no cost.
            log_probs[finished] = float("-inf")
            log_probs[finished, pad_id] = 0.0
            candidates = (scores.view(-1, 1) + log_probs).view(batch, k * vocab)
            scores, flat_index = candidates.topk(k, dim=1)  # (batch, k)
            parent = (flat_index // vocab + torch.arange(batch, device=device)[:, None] * k).view(
                -1
            )
            next_token = (flat_index % vocab).view(-1)
            tokens = torch.cat([tokens[parent], next_token[:, None]], dim=1)
            lengths = lengths[parent] + (~finished[parent]).float()
            finished = finished[parent] | (next_token == eos_id)
            if cache is not None:
                for layer_cache in cache:
                    layer_cache.reorder(parent)
            if finished.all():
                break
    ranked = scores / gnmt_length_penalty(lengths.view(batch, k), length_penalty)
    best = ranked.argmax(dim=1)
    return tokens.view(batch, k, -1)[torch.arange(batch, device=device), best, 1:]
