"""Toy tasks and batching: copy/reverse, and English number words → Chinese numerals.

Special token ids are the same for every task: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2
(and ``<unk>`` = 3 in a :class:`Vocab`). Sequences handed to :func:`make_batch` already
end with EOS; the batch adds BOS to the decoder input itself.

Conventions of the number translation
-------------------------------------
English (:func:`number_to_words`), British style, one token per word:

* tens and units are separate words: 42 → ``"forty two"`` (no hyphen);
* inside each group of three digits, ``"and"`` joins the hundreds to a non-zero rest:
  115 → ``"one hundred and fifteen"``;
* the last group, when it is below 100 and a higher group exists, is preceded by
  ``"and"``: 3005 → ``"three thousand and five"``, 1000005 → ``"one million and five"``;
  no other ``"and"``: 1005000 → ``"one million five thousand"``.

Chinese (:func:`number_to_chinese`), the usual rules, with 二 (never 两):

* the number is split into a 万 group (n // 10000) and a lower group (n % 10000);
* inside a group, one 零 stands for any run of zero digits between non-zero digits;
  zeros at the end of a group are not read: 1005 → 一千零五, 1010 → 一千零一十;
* across 万, a 零 is read when the lower group is non-zero but below 1000:
  10000100 → 一千万零一百, but 10001000 → 一千万一千;
* 十 alone (not 一十) only when it is the first digit of the whole number:
  15 → 十五, 110000 → 十一万, but 110 → 一百一十, 10010 → 一万零一十.
"""

from __future__ import annotations

import itertools
import numbers
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

MAX_NUMBER = 99_999_999

# --------------------------------------------------------------------------- numbers

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_CHINESE_DIGITS = "零一二三四五六七八九"
_CHINESE_UNITS = ((1000, "千"), (100, "百"), (10, "十"), (1, ""))


def _check_number(n: object, name: str = "number") -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ValueError(
            f"{name} must be an integer; got {n!r} of type {type(n).__name__}. "
            "Convert it with int(...) first."
        )
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{name} {n} is out of range; only 0 <= n <= {MAX_NUMBER:_} is supported")
    return int(n)


def _words_below_100(n: int) -> list[str]:
    if n < 20:
        return [_ONES[n]]
    return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])


def _words_below_1000(n: int) -> list[str]:
    """Words for 1 <= n <= 999, with "and" between the hundreds and the rest."""
    words = [_ONES[n // 100], "hundred"] if n >= 100 else []
    if n % 100:
        words += (["and"] if n >= 100 else []) + _words_below_100(n % 100)
    return words


def number_to_words(n: int) -> str:
    """English words for ``0 <= n <= 99_999_999``, e.g. 3005 → "three thousand and five".

    Words are separated by single spaces (see the module docstring for the "and" rule).
    """
    n = _check_number(n)
    if n == 0:
        return "zero"
    millions, thousands, units = n // 1_000_000, n // 1000 % 1000, n % 1000
    words: list[str] = []
    if millions:
        words += _words_below_1000(millions) + ["million"]
    if thousands:
        words += _words_below_1000(thousands) + ["thousand"]
    if units:
        if units < 100 and n >= 1000:
            words.append("and")
        words += _words_below_1000(units)
    return " ".join(words)


def _chinese_group(g: int) -> str:
    """Chinese for 1 <= g <= 9999, always with the digit before 十 (一十)."""
    out: list[str] = []
    zero_pending = False
    for power, unit in _CHINESE_UNITS:
        digit = g // power % 10
        if digit == 0:
            zero_pending = bool(out)  # a zero only counts once something precedes it
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        out.append(_CHINESE_DIGITS[digit] + unit)
    return "".join(out)


def number_to_chinese(n: int) -> str:
    """Chinese numerals for ``0 <= n <= 99_999_999``.

    E.g. 3005 → "三千零五", 10010 → "一万零一十", 110000 → "十一万" (rules: module docstring).
    """
    n = _check_number(n)
    if n == 0:
        return "零"
    high, low = divmod(n, 10_000)
    text = _chinese_group(high) + "万" if high else ""
    if low:
        if high and low < 1000:
            text += "零"
        text += _chinese_group(low)
    # Only the leading digit may drop its 一 before 十 (十五, 十一万; but 一百一十).
    return text[1:] if text.startswith("一十") else text


def english_tokens(text: str) -> list[str]:
    """Split an English sentence into word tokens on whitespace."""
    return text.split()


def chinese_tokens(text: str) -> list[str]:
    """Split a Chinese numeral into one token per character."""
    return list(text)


def english_number_vocabulary() -> list[str]:
    """Every word :func:`number_to_words` can produce, in a fixed order."""
    return _ONES + [t for t in _TENS if t] + ["hundred", "thousand", "million", "and"]


def chinese_number_vocabulary() -> list[str]:
    """Every character :func:`number_to_chinese` can produce, in a fixed order."""
    return list(_CHINESE_DIGITS + "十百千万")


# --------------------------------------------------------------------------- vocabulary


class Vocab:
    """A token ↔ id map whose first ids are the special tokens.

    ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3, then the given tokens in the
    order they first appear (duplicates and special names are skipped).
    """

    PAD, BOS, EOS, UNK = 0, 1, 2, 3
    PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN = "<pad>", "<bos>", "<eos>", "<unk>"
    SPECIALS = (PAD_TOKEN, BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)

    def __init__(self, tokens: Iterable[str]) -> None:
        if isinstance(tokens, str):
            raise ValueError(
                "Vocab expects an iterable of tokens, not one string; "
                "pass e.g. english_tokens(text) or list(text)"
            )
        self.itos: list[str] = list(self.SPECIALS)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        for token in tokens:
            if not isinstance(token, str) or not token:
                raise ValueError(f"tokens must be non-empty strings; got {token!r}")
            if token not in self.stoi:
                self.stoi[token] = len(self.itos)
                self.itos.append(token)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: object) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocab(size={len(self)}, tokens={self.itos[len(self.SPECIALS) :][:8]}...)"

    def encode(
        self,
        tokens: Sequence[str],
        add_bos: bool = False,
        add_eos: bool = True,
        unk_ok: bool = False,
    ) -> list[int]:
        """Token strings → ids (length ``len(tokens) + add_bos + add_eos``).

        An unknown token raises ``ValueError`` unless ``unk_ok=True`` maps it to ``<unk>``.
        """
        if isinstance(tokens, str):
            raise ValueError(
                f"encode expects a list of tokens, not the string {tokens!r}; "
                "split it first with english_tokens(...) or chinese_tokens(...)"
            )
        ids = [self.BOS] if add_bos else []
        for position, token in enumerate(tokens):
            if token in self.stoi:
                ids.append(self.stoi[token])
            elif unk_ok:
                ids.append(self.UNK)
            else:
                raise ValueError(
                    f"unknown token {token!r} at position {position}: it is not in this "
                    f"vocabulary of {len(self)} tokens. Build the Vocab from every token you "
                    "will encode, or pass unk_ok=True to map unknown tokens to <unk>."
                )
        if add_eos:
            ids.append(self.EOS)
        return ids

    def decode(self, ids: Iterable[int] | Tensor, strip_special: bool = True) -> list[str]:
        """Ids (a list or a 1-D tensor) → token strings.

        With ``strip_special`` (the default), stop at the first ``<eos>`` and drop ``<pad>``
        and ``<bos>``; ``<unk>`` is kept so that it stays visible.
        """
        if isinstance(ids, Tensor):
            if ids.dim() != 1:
                raise ValueError(
                    f"decode takes one sequence, a 1-D tensor; got shape {tuple(ids.shape)}. "
                    "Decode a batch row by row."
                )
            ids = ids.tolist()
        tokens: list[str] = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, numbers.Integral):
                raise ValueError(f"token ids must be integers; got {i!r}")
            if not 0 <= i < len(self):
                raise ValueError(f"token id {i} is out of range for a vocabulary of {len(self)}")
            if strip_special:
                if i == self.EOS:
                    break
                if i in (self.PAD, self.BOS):
                    continue
            tokens.append(self.itos[i])
        return tokens


PAD_ID, BOS_ID, EOS_ID, UNK_ID = Vocab.PAD, Vocab.BOS, Vocab.EOS, Vocab.UNK

Pair = tuple[list[int], list[int]]

# --------------------------------------------------------------------------- translation


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


def _check_positive(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


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
    num_train = _check_positive("num_train", num_train)
    num_heldout = _check_positive("num_heldout", num_heldout, minimum=0)
    min_value = _check_number(min_value, "min_value")
    max_value = _check_number(max_value, "max_value")
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
    seq_len = _check_positive("seq_len", seq_len)
    vocab_size = _check_positive("vocab_size", vocab_size, minimum=FIRST_COPY_TOKEN + 1)
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
    num_examples = _check_positive("num_examples", num_examples)
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
    train_size = _check_positive("train_size", train_size)
    test_size = _check_positive("test_size", test_size, minimum=0)
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


# --------------------------------------------------------------------------- batching


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
    batch_size = _check_positive("batch_size", batch_size)
    if len(pairs) == 0:
        raise ValueError("batches got no pairs; build the data set first")
    order = list(range(len(pairs)))
    if shuffle:
        random.Random(seed).shuffle(order)
    for start in range(0, len(order), batch_size):
        chunk = [pairs[i] for i in order[start : start + batch_size]]
        if drop_last and len(chunk) < batch_size:
            return
        yield make_batch([s for s, _ in chunk], [t for _, t in chunk], pad_id, bos_id)


def endless_batches(
    pairs: Sequence[Pair], batch_size: int, seed: int = 0, **kwargs: object
) -> Iterator[Seq2SeqBatch]:
    """:func:`batches` epoch after epoch, without end; epoch ``e`` is shuffled with seed
    ``seed * 1000 + e``, so every epoch has a new order and runs are reproducible.

    The caller decides when to stop (a step count, a target accuracy, a time budget).
    """
    for epoch in itertools.count():
        yield from batches(pairs, batch_size, seed=seed * 1000 + epoch, **kwargs)
