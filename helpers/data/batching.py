"""Batching: pad id sequences, and pair them for teacher forcing.

A :class:`Seq2SeqBatch` holds the padded source, the decoder input (BOS + the target without
its last token) and the labels (the target, ending with EOS). :func:`batches` makes one
shuffled pass over ``(src_ids, tgt_ids)`` pairs; :func:`endless_batches` goes on, epoch after
epoch, until the caller stops; :func:`token_batches` groups pairs of similar length under a
budget of tokens, for real sentences.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .numbers import check_count
from .vocab import BOS_ID, PAD_ID, Pair


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> Tensor:
    """Right-pad id sequences to one ``LongTensor (batch, max_len)``."""
    if len(sequences) == 0:
        raise ValueError("pad_batch got no sequences; a batch needs at least one")
    lengths = [len(s) for s in sequences]
    if min(lengths) == 0:
        raise ValueError(
            f"sequence {lengths.index(0)} is empty; every sequence needs at least one token "
            "(targets end with EOS, so an empty one means it was not encoded)"
        )
    out = torch.full((len(sequences), max(lengths)), pad_id, dtype=torch.long)
    for row, seq in enumerate(sequences):
        out[row, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
    return out


@dataclass
class Seq2SeqBatch:
    """One padded batch for teacher forcing.

    Attributes:
        src: ``(B, S)`` source ids.
        tgt_in: ``(B, T)`` decoder input: BOS followed by the target without its last token.
        tgt_out: ``(B, T)`` labels: the target including EOS, aligned with ``tgt_in``.
        pad_id: the padding id used in all three.
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    pad_id: int = PAD_ID

    @property
    def ntokens(self) -> int:
        """Number of non-padding labels, the usual normaliser of the loss."""
        return int((self.tgt_out != self.pad_id).sum())

    def to(self, device: torch.device | str) -> Seq2SeqBatch:
        """The same batch with every tensor moved to ``device``."""
        return Seq2SeqBatch(
            self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.pad_id
        )


def make_batch(
    src_seqs: Sequence[Sequence[int]],
    tgt_seqs: Sequence[Sequence[int]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
) -> Seq2SeqBatch:
    """Pad sources and targets (which already end with EOS) into a :class:`Seq2SeqBatch`.

    ``tgt_in[:, 0]`` is BOS and ``tgt_in[:, 1:]`` equals ``tgt_out[:, :-1]`` on real tokens,
    so position t of the decoder predicts ``tgt_out[:, t]`` having seen only earlier ones.
    """
    if len(src_seqs) != len(tgt_seqs):
        raise ValueError(
            f"got {len(src_seqs)} sources but {len(tgt_seqs)} targets; they must pair up"
        )
    tgt_out = pad_batch(tgt_seqs, pad_id)
    tgt_in = pad_batch([[bos_id, *t[:-1]] for t in tgt_seqs], pad_id)
    return Seq2SeqBatch(pad_batch(src_seqs, pad_id), tgt_in, tgt_out, pad_id)


def pairs_to_batch(
    pairs: Sequence[Pair], pad_id: int = PAD_ID, bos_id: int = BOS_ID
) -> Seq2SeqBatch:
    """One :class:`Seq2SeqBatch` of all ``(src_ids, tgt_ids)`` pairs, in their order: shapes
    ``(len(pairs), longest source)`` and ``(len(pairs), longest target)``."""
    return make_batch([s for s, _ in pairs], [t for _, t in pairs], pad_id, bos_id)


def batches(
    pairs: Sequence[Pair],
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    drop_last: bool = False,
) -> Iterator[Seq2SeqBatch]:
    """Yield padded :class:`Seq2SeqBatch` objects over ``(src_ids, tgt_ids)`` pairs, one pass.

    With ``shuffle``, the order depends only on ``seed`` (pass the epoch number for a new
    order each epoch). The last, smaller batch is kept unless ``drop_last``.
    """
    batch_size = check_count("batch_size", batch_size)
    if len(pairs) == 0:
        raise ValueError("batches got no pairs; build the data set first")
    order = list(range(len(pairs)))
    if shuffle:
        random.Random(seed).shuffle(order)
    for start in range(0, len(order), batch_size):
        chunk = [pairs[i] for i in order[start : start + batch_size]]
        if drop_last and len(chunk) < batch_size:
            return
        yield pairs_to_batch(chunk, pad_id, bos_id)


def endless_batches(
    pairs: Sequence[Pair], batch_size: int, seed: int = 0, **kwargs: Any
) -> Iterator[Seq2SeqBatch]:
    """:func:`batches` epoch after epoch, without end; epoch ``e`` is shuffled with seed
    ``seed * 1000 + e``, so every epoch has a new order and runs are reproducible.

    The caller decides when to stop (a step count, a target accuracy, a time budget).
    """
    for epoch in itertools.count():
        yield from batches(pairs, batch_size, seed=seed * 1000 + epoch, **kwargs)


def token_batches(
    pairs: Sequence[Pair],
    max_tokens: int,
    seed: int = 0,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
) -> Iterator[Seq2SeqBatch]:
    """Batches of pairs of similar length, each at most ``max_tokens`` source or target ids
    padding included, in a shuffled order; one pass.

    Sentences of real text vary in length (a verse has 2 words or 80): a batch of random pairs
    is mostly padding, and a fixed number of pairs makes a batch of long ones many times the
    work of a batch of short ones. Sorting by length (ties broken at random, by ``seed``) and
    cutting where the padded size would pass ``max_tokens`` keeps both even, as the paper did
    ("batched together by approximate sequence length", about 25,000 tokens a batch).
    """
    max_tokens = check_count("max_tokens", max_tokens)
    rng = random.Random(seed)
    order = sorted(
        range(len(pairs)), key=lambda i: (len(pairs[i][0]), len(pairs[i][1]), rng.random())
    )
    chunks: list[list[int]] = []
    chunk: list[int] = []
    longest = 0
    for i in order:
        length = max(len(pairs[i][0]), len(pairs[i][1]))
        if chunk and max(longest, length) * (len(chunk) + 1) > max_tokens:
            chunks.append(chunk)
            chunk, longest = [], 0
        chunk.append(i)
        longest = max(longest, length)
    if chunk:
        chunks.append(chunk)
    rng.shuffle(chunks)
    for chunk in chunks:
        yield pairs_to_batch([pairs[i] for i in chunk], pad_id, bos_id)
