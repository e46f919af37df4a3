"""Byte-pair encoding (Sennrich et al., 2016): a vocabulary of subword pieces learned from text.

A word is first a sequence of characters. Training counts every pair of adjacent pieces in
the corpus, merges the most frequent pair into one new piece everywhere, and repeats: the
ordered list of merges *is* the tokenizer. Frequent words end as one piece ("▁the"), rare
ones as a few ("▁un" "believ" "ing"), and no word is out of the vocabulary as long as its
characters are in it. Training on both languages at once gives the paper's shared
source–target vocabulary.

Three choices, stated:

- **Pre-tokenisation:** the text is split on white space, and each word starts with
  :data:`WORD_START` ("▁", as in SentencePiece), so that pieces never cross words and
  decoding puts the spaces back. Punctuation stays in its word ("earth." is ▁ e a r t h .).
- **Tie rule:** among pairs equally frequent, the one whose left piece entered the vocabulary
  first wins, then the one whose right piece did; characters enter in code-point order, merged
  pieces in the order they were made. It is the rule of Hugging Face ``tokenizers``' BPE
  trainer, whose merges the tests compare with these.
- **Overlaps:** a pair counts once per place it occurs ("a a a" holds two "a a" pairs), and a
  merge joins occurrences from left to right ("a a a" becomes "aa a").
"""

from __future__ import annotations

import collections
import heapq
from collections.abc import Iterable, Sequence

from torch import Tensor

from .vocab import Vocab

WORD_START = "▁"  # U+2581, marks the start of a word in a piece
Pair = tuple[str, str]


def pretokenize(text: str) -> list[str]:
    """Split ``text`` on white space and mark each word's start: ``"▁In", "▁the", ...``."""
    return [WORD_START + word for word in text.split()]


def _pairs(word: Sequence[str]) -> collections.Counter[Pair]:
    """Every adjacent pair of pieces in one word, with how often it occurs there."""
    return collections.Counter(zip(word, word[1:], strict=False))


def _merge(word: list[str], pair: Pair, new: str) -> list[str]:
    """``word`` with each occurrence of ``pair`` joined into ``new``, from left to right."""
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


class BPE:
    """A trained byte-pair encoding: its merges in order and the vocabulary they make.

    ``vocab`` is a :class:`~helpers.data.vocab.Vocab`: the special tokens (``<pad>`` = 0,
    ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3), then the characters in code-point order,
    then each merged piece in the order it was made.
    """

    def __init__(self, alphabet: Iterable[str], merges: Sequence[Pair]) -> None:
        self.merges: list[Pair] = list(merges)
        self.ranks: dict[Pair, int] = {pair: rank for rank, pair in enumerate(self.merges)}
        self.vocab = Vocab([*sorted(alphabet), *(a + b for a, b in self.merges)])
        self._cache: dict[str, list[str]] = {}

    def __repr__(self) -> str:
        return f"BPE(merges={len(self.merges)}, vocab={len(self.vocab)})"

    def segment(self, word: str) -> list[str]:
        """One pre-tokenised word (``"▁beginning,"``) → its pieces, merges applied in order."""
        if word not in self._cache:
            pieces = list(word)
            while len(pieces) > 1:
                pair = min(_pairs(pieces), key=lambda p: self.ranks.get(p, len(self.ranks)))
                if pair not in self.ranks:
                    break
                pieces = _merge(pieces, pair, pair[0] + pair[1])
            self._cache[word] = pieces
        return self._cache[word]

    def tokenize(self, text: str) -> list[str]:
        """Text → pieces: ``"In the beginning"`` → ``["▁In", "▁the", "▁begin", "ning"]``."""
        return [piece for word in pretokenize(text) for piece in self.segment(word)]

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = True) -> list[int]:
        """Text → piece ids (ending with ``<eos>`` by default); a character never seen in
        training becomes ``<unk>``."""
        return self.vocab.encode(self.tokenize(text), add_bos, add_eos, unk_ok=True)

    def decode(self, ids: Iterable[int] | Tensor) -> str:
        """Ids → text: the pieces joined, each "▁" a space again; stops at ``<eos>`` and drops
        ``<pad>`` and ``<bos>`` (as :meth:`Vocab.decode <helpers.data.vocab.Vocab.decode>`)."""
        return "".join(self.vocab.decode(ids)).replace(WORD_START, " ").strip()


def train_bpe(texts: Iterable[str], num_merges: int) -> BPE:
    """Learn ``num_merges`` merges (fewer if the pairs run out) from ``texts``.

    Pass the source and the target texts together for a shared vocabulary. The count of every
    pair is kept up to date as words change, so that a merge costs the words it touches, not
    the whole corpus: a heap holds the pairs by count (and the tie rule), and an entry whose
    count went down since it was pushed is pushed again with its count when it comes up.
    """
    word_counts = collections.Counter(w for text in texts for w in pretokenize(text))
    words = [list(word) for word in word_counts]  # each distinct word, as its pieces
    counts = list(word_counts.values())  # how often it occurs
    alphabet = sorted({c for word in words for c in word})
    rank = {piece: i for i, piece in enumerate(alphabet)}  # when each piece entered

    pair_counts: collections.Counter[Pair] = collections.Counter()
    where: dict[Pair, set[int]] = collections.defaultdict(set)  # pair -> words holding it
    for i, word in enumerate(words):
        for pair, n in _pairs(word).items():
            pair_counts[pair] += n * counts[i]
            where[pair].add(i)

    def entry(pair: Pair) -> tuple[int, int, int, Pair]:  # the heap's order: count, tie rule
        return (-pair_counts[pair], rank[pair[0]], rank[pair[1]], pair)

    heap = [entry(pair) for pair in pair_counts]
    heapq.heapify(heap)
    merges: list[Pair] = []
    while heap and len(merges) < num_merges:
        count, _, _, pair = heapq.heappop(heap)
        if -count != pair_counts[pair]:  # stale: push it again with its count, if any
            if pair_counts[pair] > 0:
                heapq.heappush(heap, entry(pair))
            continue
        new = pair[0] + pair[1]
        rank.setdefault(new, len(rank))
        merges.append(pair)
        grown: set[Pair] = set()  # pairs with the new piece: only those can have grown
        for i in where.pop(pair):
            before = _pairs(words[i])
            words[i] = _merge(words[i], pair, new)
            after = _pairs(words[i])
            for p, n in before.items():
                pair_counts[p] -= n * counts[i]
                if p not in after and p != pair:
                    where[p].discard(i)
            for p, n in after.items():
                pair_counts[p] += n * counts[i]
                if p not in before:
                    where[p].add(i)
                if new in p:
                    grown.add(p)
        del pair_counts[pair]
        for p in grown:
            heapq.heappush(heap, entry(p))
    return BPE(alphabet, merges)
