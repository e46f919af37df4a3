"""Translating real text (chapter 11): the model on sentences, a word-by-word baseline, BLEU.

- :func:`translate` turns sentences into sentences: byte-pair pieces in, greedy decoding or
  beam search, pieces joined back into words (the corpus's words are separated by single
  spaces, so joining the pieces is the whole detokenisation).
- :class:`WordDictionary` is the baseline a model must beat: every Spanish word replaced by
  the English word most likely to be its translation, learned from the same training pairs
  with IBM Model 1 (Brown et al., 1993), in the Spanish word order.
- :func:`corpus_bleu` and :func:`paired_bootstrap` score with sacrebleu (Post, 2018), the
  field's standard: BLEU on detokenised text with sacrebleu's own tokenisation, and its
  signature, which says exactly how the number was computed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from .data.batching import pad_batch
from .data.bpe import BPE
from .decoding import beam_search, greedy_decode
from .model import Transformer


def translate(
    model: Transformer,
    bpe: BPE,
    sentences: Sequence[str],
    *,
    beam_size: int = 1,
    length_penalty: float = 0.6,
    batch_size: int = 64,
    max_len_a: float = 1.5,
    max_len_b: int = 10,
    target_bpe: BPE | None = None,
) -> list[str]:
    """Translate ``sentences`` (plain text) into plain text, in their order.

    The sentences are encoded with ``bpe`` (the shared vocabulary of source and target, or the
    source's alone when ``target_bpe`` reads the output), sorted by length so that a batch
    holds little padding, and decoded greedily
    (``beam_size=1``) or with beam search and the GNMT ``length_penalty``. A batch may generate
    up to ``max_len_a · (longest source) + max_len_b`` pieces.
    """
    ids = [bpe.encode(s) for s in sentences]
    reader = bpe if target_bpe is None else target_bpe
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out: list[str] = [""] * len(ids)
    step = max(1, batch_size // beam_size)
    for start in range(0, len(order), step):
        rows = order[start : start + step]
        src = pad_batch([ids[i] for i in rows])
        max_len = int(max_len_a * src.size(1)) + max_len_b
        if beam_size == 1:
            hyp = greedy_decode(model, src, max_len)
        else:
            hyp = beam_search(
                model, src, max_len, beam_size=beam_size, length_penalty=length_penalty
            )
        for row, i in enumerate(rows):
            out[i] = reader.decode(hyp[row])
    return out


# --- the word-by-word baseline --------------------------------------------------------------

NULL = "<null>"  # IBM Model 1's empty source word: target words without a counterpart
_EDGES = re.compile(r"^(\W*)(.*?)(\W*)$")  # punctuation before, the word, punctuation after


def split_word(word: str) -> tuple[str, str, str]:
    """``"¿Quién"`` → ``("¿", "Quién", "")``, ``"tierra."`` → ``("", "tierra", ".")``: the
    punctuation around a word and the word itself (a hyphen or an apostrophe inside stays)."""
    match = _EDGES.match(word)
    assert match is not None  # the pattern matches every string
    before, core, after = match.groups()
    return before, core, after


def words(text: str) -> list[str]:
    """The words of ``text`` without the punctuation around them (empty ones dropped)."""
    return [core for w in text.split() if (core := split_word(w)[1])]


@dataclass
class WordDictionary:
    """Each source word's most likely translation: one target word."""

    table: dict[str, str]

    def translate(self, sentence: str) -> str:
        """Word by word, in the source's order: a word the dictionary lacks (a name, mostly)
        is copied, the punctuation after a word is kept, the Spanish ¿ and ¡ are dropped."""
        out: list[str] = []
        for word in sentence.split():
            before, core, after = split_word(word)
            english = self.table.get(core, core) if core else ""
            token = before.replace("¿", "").replace("¡", "") + english + after
            if token:
                out.append(token)
        return " ".join(out)


def train_word_dictionary(pairs: Sequence[tuple[str, str]], iterations: int = 5) -> WordDictionary:
    """IBM Model 1 on ``(source, target)`` sentence pairs; each source word's best target word.

    Model 1 says each target word was made by one word of its source sentence (or by
    :data:`NULL`), any of them equally likely a priori, with probability ``t(target | source)``.
    Expectation–maximisation: start from uniform ``t``; for every target word, share one count
    among the source words of its sentence in proportion to ``t``; ``t`` becomes those counts
    normalised per source word; repeat. The dictionary keeps, for each source word, the target
    word of highest ``t``.

    Written with NumPy over every (target position, source position) of the corpus at once: a
    row per target word of every sentence, holding an entry per word of its source (NULL first).
    """
    src_ids: dict[str, int] = {NULL: 0}
    tgt_ids: dict[str, int] = {}
    keys, row_lengths = [], []
    for source, target in pairs:
        f = np.array([0] + [src_ids.setdefault(w, len(src_ids)) for w in words(source)])
        e = np.array([tgt_ids.setdefault(w, len(tgt_ids)) for w in words(target)], dtype=np.int64)
        if len(e) == 0:
            continue
        # one row per target word, one entry per source word: (target id, source id)
        grid = np.stack(np.broadcast_arrays(e[:, None], f[None, :]), axis=-1)
        keys.append(grid.reshape(-1, 2))
        row_lengths.extend([len(f)] * len(e))
    if not keys:
        return WordDictionary({})
    positions = np.concatenate(keys)  # (entries, 2): target id, source id
    # each distinct (target, source) pair once; `entry` says which pair each entry is
    pair, entry = np.unique(positions[:, 0] * len(src_ids) + positions[:, 1], return_inverse=True)
    pair_src = pair % len(src_ids)
    lengths = np.array(row_lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    t = np.ones(len(pair))  # uniform: normalising is left to the first step
    for _ in range(iterations):
        p = t[entry]
        posterior = p / np.repeat(np.add.reduceat(p, starts), lengths)  # per target word, sums to 1
        counts = np.bincount(entry, weights=posterior, minlength=len(pair))
        t = counts / np.bincount(pair_src, weights=counts, minlength=len(src_ids))[pair_src]
    # for every source word, its pair of highest t (the first of each source word, by t down)
    order = np.lexsort((-t, pair_src))
    first = order[np.r_[True, pair_src[order][1:] != pair_src[order][:-1]]]
    src_words, tgt_words = list(src_ids), list(tgt_ids)
    table = {
        src_words[pair_src[i]]: tgt_words[pair[i] // len(src_ids)]
        for i in first
        if pair_src[i] != 0
    }
    return WordDictionary(table)


# --- scoring ----------------------------------------------------------------------------------


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> tuple[float, str]:
    """sacrebleu's corpus BLEU (its defaults: 13a tokenisation, case-sensitive, exponential
    smoothing) of detokenised ``hypotheses`` against one reference each, and its signature,
    e.g. ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    metric = BLEU()
    score = metric.corpus_score(list(hypotheses), [list(references)])
    return score.score, str(metric.get_signature())


@dataclass
class Paired:
    """One system's BLEU in a paired bootstrap: the score, the bootstrap mean, the half-width
    of its 95 % interval, and the p-value of its difference with the baseline (``None`` for
    the baseline itself)."""

    name: str
    bleu: float
    mean: float
    ci: float
    p_value: float | None


def paired_bootstrap(
    systems: dict[str, Sequence[str]], references: Sequence[str], samples: int = 1000
) -> tuple[list[Paired], str]:
    """sacrebleu's paired bootstrap resampling (Koehn, 2004): the first system of ``systems``
    is the baseline, each other one is compared with it on the same resampled sentences.

    Returns one :class:`Paired` per system, in order, and the test's signature (sacrebleu's
    BLEU signature with the seed and the number of samples; the seed is sacrebleu's,
    ``SACREBLEU_SEED``, 12345 unless set).
    """
    test = PairedTest(
        list(systems.items()), {"BLEU": BLEU()}, [list(references)], "bs", n_samples=samples
    )
    signatures, scores = test()
    results = []
    for name, result in zip(scores["System"], scores["BLEU"], strict=True):
        assert not isinstance(result, str)
        assert result.mean is not None and result.ci is not None
        results.append(
            Paired(str(name), result.score, float(result.mean), float(result.ci), result.p_value)
        )
    return results, str(signatures["BLEU"])
