"""helpers.translation and helpers.data.token_batches, the pieces of chapter 11's pipeline: the
word-by-word dictionary (IBM Model 1) on a made-up corpus and against the textbook's loop, text
through byte-pair pieces and back, the model's translations in their order, and the BLEU calls
wired to sacrebleu as sacrebleu itself computes them."""

from __future__ import annotations

import collections

import pytest
import sacrebleu
import torch

from helpers import Transformer, TransformerConfig
from helpers.data import load_verse_pairs, token_batches, train_bpe
from helpers.translation import (
    NULL,
    corpus_bleu,
    paired_bootstrap,
    split_word,
    train_word_dictionary,
    translate,
    words,
)

TINY = [
    ("la casa", "the house"),
    ("la casa verde", "the green house"),
    ("el perro", "the dog"),
    ("el perro verde", "the green dog"),
    ("una casa", "a house"),
    ("un perro", "a dog"),
]


def test_split_word_keeps_the_punctuation_around_a_word_apart():
    assert split_word("¿Quién") == ("¿", "Quién", "")
    assert split_word("tierra.") == ("", "tierra", ".")
    assert split_word("daughters-in-law,") == ("", "daughters-in-law", ",")
    assert split_word("(¡Oh!)") == ("(¡", "Oh", "!)")
    assert split_word("...") == ("...", "", "")
    assert words("¿Quién es? ... Dios.") == ["Quién", "es", "Dios"]


def test_the_dictionary_learns_each_word_of_a_made_up_corpus():
    dictionary = train_word_dictionary(TINY, iterations=10)
    assert dictionary.table == {
        "la": "the",
        "el": "the",
        "casa": "house",
        "verde": "green",
        "perro": "dog",
        "una": "a",
        "un": "a",
    }
    # word by word, in the source's order; punctuation after a word kept, ¿ ¡ dropped, an
    # unknown word (a name) copied
    assert dictionary.translate("¿la casa, el perro verde de Juan!") == (
        "the house, the dog green de Juan!"
    )


def ibm1_by_the_book(pairs: list[tuple[str, str]], iterations: int) -> dict[tuple[str, str], float]:
    """IBM Model 1's EM as the textbook writes it (Koehn, Statistical Machine Translation,
    figure 4.3, with the NULL word): loops over sentences and words, t(e|f) in a dict."""
    corpus = [([NULL, *words(f)], words(e)) for f, e in pairs]
    t: dict[tuple[str, str], float] = collections.defaultdict(lambda: 1.0)
    for _ in range(iterations):
        count: dict[tuple[str, str], float] = collections.defaultdict(float)
        total: dict[str, float] = collections.defaultdict(float)
        for fs, es in corpus:
            for e in es:
                z = sum(t[e, f] for f in fs)
                for f in fs:
                    count[e, f] += t[e, f] / z
                    total[f] += t[e, f] / z
        t = collections.defaultdict(float, {(e, f): c / total[f] for (e, f), c in count.items()})
    return t


def test_the_dictionary_is_the_textbooks_model_1_on_real_verses():
    pairs = [(p.spanish, p.english) for p in load_verse_pairs("train")[:60]]
    t = ibm1_by_the_book(pairs, iterations=3)
    best: dict[str, tuple[float, str]] = {}
    for (e, f), p in t.items():
        if f != NULL and (f not in best or p > best[f][0]):
            best[f] = (p, e)
    table = train_word_dictionary(pairs, iterations=3).table
    assert table.keys() == best.keys()
    # the same best word wherever it is clearly best (a tie may fall either way)
    for f, (p, e) in best.items():
        runner_up = max((q for (e2, f2), q in t.items() if f2 == f and e2 != e), default=0.0)
        if p - runner_up > 1e-9:
            assert table[f] == e, f


def test_text_goes_through_byte_pair_pieces_and_back_unchanged():
    train = load_verse_pairs("train")[:300]
    bpe = train_bpe([p.spanish for p in train] + [p.english for p in train], 300)
    known = set(bpe.vocab.itos)
    dev = [p for p in load_verse_pairs("dev")[:200] if set(p.spanish.replace(" ", "")) <= known]
    assert len(dev) > 100
    for pair in dev:
        assert bpe.decode(bpe.encode(pair.spanish)) == pair.spanish


@pytest.fixture(scope="module")
def tiny_model():
    train = load_verse_pairs("train")[:200]
    bpe = train_bpe([p.spanish for p in train] + [p.english for p in train], 100)
    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=len(bpe.vocab),
        tgt_vocab_size=len(bpe.vocab),
        d_model=32,
        num_heads=2,
        d_ff=64,
        num_encoder_layers=1,
        num_decoder_layers=1,
        max_len=512,
    )
    return Transformer(config).eval(), bpe


def test_translate_keeps_the_sentences_order_whatever_the_batches(tiny_model):
    model, bpe = tiny_model
    sentences = ["Y dijo Dios.", "En el principio crió Dios los cielos y la tierra.", "Amén."]
    # a batch may generate max_len_a · (its longest source) + max_len_b pieces: a fixed limit
    together = translate(model, bpe, sentences, max_len_a=0, max_len_b=6)
    alone = [translate(model, bpe, [s], max_len_a=0, max_len_b=6)[0] for s in sentences]
    assert together == alone
    assert all(isinstance(s, str) for s in together)
    beams = translate(model, bpe, sentences, beam_size=3, max_len_a=0, max_len_b=6)
    assert len(beams) == len(sentences)


def test_token_batches_hold_every_pair_once_under_the_budget():
    pairs = [([5] * n + [2], [6] * (n % 7 + 1) + [2]) for n in range(1, 60)]
    seen = []
    for batch in token_batches(pairs, max_tokens=100, seed=3):
        assert batch.src.numel() <= 100 and batch.tgt_out.numel() <= 100
        seen += [
            (tuple(s[s != 0].tolist()), tuple(t[t != 0].tolist()))
            for s, t in zip(batch.src, batch.tgt_out, strict=True)
        ]
    assert sorted(seen) == sorted((tuple(s), tuple(t)) for s, t in pairs)
    again = [b.src.tolist() for b in token_batches(pairs, max_tokens=100, seed=3)]
    assert again == [b.src.tolist() for b in token_batches(pairs, max_tokens=100, seed=3)]
    assert again != [b.src.tolist() for b in token_batches(pairs, max_tokens=100, seed=4)]


def test_a_pair_longer_than_the_budget_is_a_batch_of_its_own():
    pairs = [([5] * 30 + [2], [6, 2]), ([5, 2], [6, 2])]
    sizes = sorted(b.src.size(0) for b in token_batches(pairs, max_tokens=10))
    assert sizes == [1, 1]


REFS = ["The house is green.", "The dog sleeps in the house.", "A green dog!", "And God said."]


def test_corpus_bleu_is_sacrebleus_with_its_signature():
    hyps = ["The house is green.", "A dog sleeps in a house.", "A dog!", "God said."]
    score, signature = corpus_bleu(hyps, REFS)
    assert score == pytest.approx(sacrebleu.corpus_bleu(hyps, [REFS]).score)
    assert corpus_bleu(REFS, REFS)[0] == pytest.approx(100.0)
    assert (
        signature == f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"
    )
    with pytest.raises(ValueError, match="3 hypotheses for 4 references"):
        corpus_bleu(hyps[:3], REFS)


def test_paired_bootstrap_compares_each_system_with_the_first():
    copy = ["La casa es verde.", "El perro duerme en la casa.", "¡Un perro verde!", "Y dijo Dios."]
    better = ["The house is green.", "The dog sleeps in the house.", "A green dog.", "God said."]
    results, signature = paired_bootstrap(
        {"copy": copy, "better": better, "copy again": copy}, REFS, samples=100
    )
    assert [r.name for r in results] == ["copy", "better", "copy again"]
    assert results[0].p_value is None
    assert results[1].bleu == pytest.approx(corpus_bleu(better, REFS)[0])
    assert results[1].p_value is not None and results[1].p_value < 0.05
    # sacrebleu counts only resamples whose difference is above the real one (multeval's rule:
    # "a zero difference should not be attributed to chance"), so a system compared with
    # itself gets the smallest p-value there is, 1 / (samples + 1): read the scores too
    assert results[2].bleu == results[0].bleu and results[2].p_value == pytest.approx(1 / 101)
    assert results[1].mean - results[1].ci <= results[1].bleu <= results[1].mean + results[1].ci
    assert "bs:100" in signature and "seed:12345" in signature and "tok:13a" in signature
