"""The toy tasks: English number words → Chinese numerals, and copying (or reversing) sequences.

Each task gives :data:`~helpers.data.vocab.Pair` examples, or ``(src, tgt)`` tensors that
:func:`as_pairs` turns into pairs; :mod:`helpers.data.batching` pads them into batches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from torch import Tensor

from .numbers import (
    MAX_NUMBER,
    check_count,
    check_number,
    chinese_number_vocabulary,
    chinese_tokens,
    english_number_vocabulary,
    english_tokens,
    number_to_chinese,
    number_to_words,
)
from .vocab import EOS_ID, Pair, Vocab

# --------------------------------------------------------------------------- number translation


@dataclass
class NumberTranslationData:
    """English number words → Chinese numerals, with disjoint train and held-out numbers.

    Each pair is ``(src_ids, tgt_ids)``; both end with EOS and have no BOS.
    """

    train_pairs: list[Pair]
    heldout_pairs: list[Pair]
    train_numbers: list[int]
    heldout_numbers: list[int]
    src_vocab: Vocab
    tgt_vocab: Vocab


def number_translation_vocabs() -> tuple[Vocab, Vocab]:
    """``(src_vocab, tgt_vocab)`` holding every English word and every Chinese character."""
    return Vocab(english_number_vocabulary()), Vocab(chinese_number_vocabulary())


def number_pair(n: int, src_vocab: Vocab, tgt_vocab: Vocab) -> Pair:
    """``(src_ids, tgt_ids)`` for one number: its English words and its Chinese numeral."""
    src = src_vocab.encode(english_tokens(number_to_words(n)))
    tgt = tgt_vocab.encode(chinese_tokens(number_to_chinese(n)))
    return src, tgt


def _sprinkle_zeros(n: int, prob: float, rng: random.Random) -> int:
    """``n`` with each digit after the first replaced by 0 with probability ``prob``."""
    digits = str(n)
    return int(digits[0] + "".join("0" if rng.random() < prob else d for d in digits[1:]))


def _sample_numbers(
    total: int, min_value: int, max_value: int, rng: random.Random, zero_digit_prob: float = 0.0
) -> list[int]:
    """``total`` distinct numbers in [min_value, max_value], digit count roughly uniform."""
    if 2 * total > max_value - min_value + 1:
        # Nearly the whole range is wanted: rejection sampling would crawl, take a plain sample.
        return rng.sample(range(min_value, max_value + 1), total)
    ranges = []  # one (low, high) value range per digit count that meets [min_value, max_value]
    for digits in range(1, len(str(max_value)) + 1):
        low, high = (0 if digits == 1 else 10 ** (digits - 1)), 10**digits - 1
        if max(low, min_value) <= min(high, max_value):
            ranges.append((max(low, min_value), min(high, max_value)))
    chosen: dict[int, None] = {}  # an ordered set, so the result depends only on the seed
    while len(chosen) < total:
        low, high = ranges[rng.randrange(len(ranges))]
        n = rng.randint(low, high)
        if zero_digit_prob > 0:  # (skipped at 0 so that the default draws stay as they were)
            n = max(_sprinkle_zeros(n, zero_digit_prob, rng), low)
        chosen[n] = None
    return list(chosen)


def make_number_translation(
    num_train: int = 20_000,
    num_heldout: int = 1_000,
    max_value: int = MAX_NUMBER,
    seed: int = 0,
    min_value: int = 0,
    zero_digit_prob: float = 0.0,
) -> NumberTranslationData:
    """Build disjoint train and held-out sets of the number translation task.

    The number of digits is drawn uniformly (among those that fit in
    ``[min_value, max_value]``), then the value uniformly, so short and long sentences are
    both common. The vocabularies hold every possible token, so held-out numbers never
    contain an unknown one. Same arguments → same data.

    Uniform values rarely contain zeros (10000, 3005), yet zeros are where the rules of 零
    are; ``zero_digit_prob`` > 0 replaces each digit after the first by 0 with that
    probability, in train and held-out numbers alike (0, the default, leaves them as drawn).
    """
    if not 0.0 <= zero_digit_prob < 1.0:
        raise ValueError(f"zero_digit_prob must be in [0, 1); got {zero_digit_prob!r}")
    num_train = check_count("num_train", num_train)
    num_heldout = check_count("num_heldout", num_heldout, minimum=0)
    min_value = check_number(min_value, "min_value")
    max_value = check_number(max_value, "max_value")
    if min_value > max_value:
        raise ValueError(f"min_value {min_value} is larger than max_value {max_value}")
    available = max_value - min_value + 1
    if num_train + num_heldout > available:
        raise ValueError(
            f"asked for {num_train} + {num_heldout} distinct numbers but [{min_value}, "
            f"{max_value}] holds only {available}; lower the sizes or widen the range"
        )
    numbers_ = _sample_numbers(
        num_train + num_heldout, min_value, max_value, random.Random(seed), zero_digit_prob
    )
    train, heldout = numbers_[:num_train], numbers_[num_train:]
    src_vocab, tgt_vocab = number_translation_vocabs()
    return NumberTranslationData(
        train_pairs=[number_pair(n, src_vocab, tgt_vocab) for n in train],
        heldout_pairs=[number_pair(n, src_vocab, tgt_vocab) for n in heldout],
        train_numbers=train,
        heldout_numbers=heldout,
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
    )


# --------------------------------------------------------------------------- copy / reverse

FIRST_COPY_TOKEN = 3  # ids 0, 1, 2 are pad/bos/eos; a copy task has no <unk>, so 3 is regular


def _check_copy_args(seq_len: int, vocab_size: int) -> tuple[int, int]:
    seq_len = check_count("seq_len", seq_len)
    vocab_size = check_count("vocab_size", vocab_size, minimum=FIRST_COPY_TOKEN + 1)
    return seq_len, vocab_size


def make_copy_task(
    num_examples: int, seq_len: int, vocab_size: int, seed: int = 0, reverse: bool = False
) -> tuple[Tensor, Tensor]:
    """Random sequences and their copies (or reversals).

    Tokens are drawn uniformly from ``[3, vocab_size)``; ids 0, 1, 2 stay free for
    pad/bos/eos. The Annotated Transformer's copy task is ``vocab_size=11, seq_len=10``.
    Sequences may repeat: use :func:`make_disjoint_copy_splits` for a held-out set.

    Returns:
        ``(src, tgt)``, both ``LongTensor (num_examples, seq_len)``; ``tgt`` is ``src``,
        or ``src`` reversed along the sequence when ``reverse=True``.
    """
    num_examples = check_count("num_examples", num_examples)
    seq_len, vocab_size = _check_copy_args(seq_len, vocab_size)
    generator = torch.Generator().manual_seed(seed)
    src = torch.randint(FIRST_COPY_TOKEN, vocab_size, (num_examples, seq_len), generator=generator)
    return src, (src.flip(1) if reverse else src.clone())


def make_disjoint_copy_splits(
    train_size: int,
    test_size: int,
    seq_len: int,
    vocab_size: int,
    seed: int = 0,
    reverse: bool = False,
) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """Train and held-out copy (or reverse) sets with no sequence in common.

    All ``train_size + test_size`` source sequences are distinct, drawn uniformly.

    Returns:
        ``((train_src, train_tgt), (test_src, test_tgt))``, each ``LongTensor
        (size, seq_len)`` with tokens in ``[3, vocab_size)``.
    """
    train_size = check_count("train_size", train_size)
    test_size = check_count("test_size", test_size, minimum=0)
    seq_len, vocab_size = _check_copy_args(seq_len, vocab_size)
    base = vocab_size - FIRST_COPY_TOKEN
    total, possible = train_size + test_size, base**seq_len
    if total > possible:
        raise ValueError(
            f"only {possible} distinct sequences of length {seq_len} exist with "
            f"{base} regular tokens, fewer than the {total} asked for; "
            "lower the sizes or raise seq_len / vocab_size"
        )
    # Distinct indices into the space of all sequences, read as base-`base` numerals.
    indices = random.Random(seed).sample(range(possible), total)
    rows = [[index // base**p % base for p in range(seq_len)] for index in indices]
    src = torch.tensor(rows, dtype=torch.long).reshape(total, seq_len) + FIRST_COPY_TOKEN
    tgt = src.flip(1) if reverse else src.clone()
    return (src[:train_size], tgt[:train_size]), (src[train_size:], tgt[train_size:])


def as_pairs(src: Tensor, tgt: Tensor, eos_id: int = EOS_ID) -> list[Pair]:
    """Rows of ``src (N, S)`` and ``tgt (N, T)`` → ``(src_ids, tgt_ids)`` lists ending in EOS.

    Puts copy-task tensors in the same form as the translation pairs, for :func:`batches`.
    """
    if src.size(0) != tgt.size(0):
        raise ValueError(f"src has {src.size(0)} rows but tgt has {tgt.size(0)}; they must match")
    return [(s + [eos_id], t + [eos_id]) for s, t in zip(src.tolist(), tgt.tolist(), strict=True)]
