"""helpers.data.bpe against Hugging Face tokenizers' BPE trainer (a test-only dependency, pinned
in requirements.txt), on the course's own corpus: the same ordered merges under the same
pre-tokenisation and tie rule, and the same pieces for every word."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from helpers.data import BPE, Vocab, load_verse_pairs, pretokenize, train_bpe


def hugging_face_bpe(texts: list[str], num_merges: int) -> tuple[list[tuple[str, str]], Tokenizer]:
    """Hugging Face's BPE trained as helpers.data.bpe trains: white space splits, "▁" starts
    each word, no special tokens, no minimum count; its vocabulary is the characters plus one
    piece per merge."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False),
        ]
    )
    alphabet = {c for text in texts for word in pretokenize(text) for c in word}
    trainer = trainers.BpeTrainer(
        vocab_size=len(alphabet) + num_merges, min_frequency=0, show_progress=False
    )
    tokenizer.train_from_iterator(texts, trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges], tokenizer


def test_pretokenize_is_hugging_faces():
    text = "In  the beginning,\t¿Qué? "
    assert pretokenize(text) == ["▁In", "▁the", "▁beginning,", "▁¿Qué?"]
    _, tokenizer = hugging_face_bpe(["x"], 0)
    assert [w for w, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)] == pretokenize(text)


def test_the_tie_rule_by_hand():
    """Every pair occurs once: the older left piece wins, then the older right piece.
    Characters are older in code-point order (a < b < c < d < ▁), merged pieces after them."""
    bpe = train_bpe(["ab cd"], 10)
    assert bpe.merges == [("a", "b"), ("c", "d"), ("▁", "ab"), ("▁", "cd")]
    assert hugging_face_bpe(["ab cd"], 10)[0] == bpe.merges


def test_overlapping_pairs_count_each_place_and_merge_left_to_right():
    bpe = train_bpe(["aaa"], 1)
    assert bpe.merges == [("a", "a")]  # twice in "a a a", against ("▁", "a") once
    assert bpe.segment("▁aaa") == ["▁", "aa", "a"]


def test_encode_and_decode():
    bpe = train_bpe(["the cat sat on the mat", "the hat"], 20)
    assert bpe.vocab.itos[: len(Vocab.SPECIALS)] == list(Vocab.SPECIALS)
    ids = bpe.encode("the cat sat on the mat")
    assert ids[-1] == Vocab.EOS and bpe.decode(ids) == "the cat sat on the mat"
    assert bpe.decode(bpe.encode(" the  cat\tsat ")) == "the cat sat"  # white space: one space
    assert Vocab.UNK in bpe.encode("the dog")  # "d" and "g" were never seen
    assert bpe.decode(bpe.encode("the dog")) == "the <unk>o<unk>"
    assert "▁the" in bpe.vocab and bpe.tokenize("the the") == ["▁the", "▁the"]
    assert repr(bpe) == "BPE(merges=14, vocab=28)"  # every word is one piece: pairs ran out


@pytest.fixture(scope="module")
def corpus_slice() -> list[str]:
    """Both sides of the first 1,500 training verses (about 70,000 words): a few seconds."""
    return [t for p in load_verse_pairs("train")[:1500] for t in (p.spanish, p.english)]


@pytest.fixture(scope="module")
def both(corpus_slice) -> tuple[BPE, list[tuple[str, str]], Tokenizer]:
    bpe = train_bpe(corpus_slice, 400)
    merges, tokenizer = hugging_face_bpe(corpus_slice, 400)
    return bpe, merges, tokenizer


def test_the_same_merges_in_the_same_order_as_hugging_face(both):
    bpe, merges, _ = both
    assert len(bpe.merges) == 400
    pairs = zip(bpe.merges, merges, strict=False)
    first = next((i for i, (ours, theirs) in enumerate(pairs) if ours != theirs), None)
    assert first is None, f"merge {first}: ours {bpe.merges[first]}, theirs {merges[first]}"
    assert bpe.merges == merges


def test_every_word_is_cut_into_the_same_pieces(both, corpus_slice):
    bpe, _, tokenizer = both
    words = sorted({w for text in corpus_slice for w in pretokenize(text)})
    theirs = tokenizer.encode_batch([w[1:] for w in words])
    different = [w for w, t in zip(words, theirs, strict=True) if bpe.segment(w) != t.tokens]
    assert different == [], f"{len(different)} of {len(words)} words, e.g. {different[:5]}"
    text = corpus_slice[1]
    assert bpe.decode(bpe.encode(text)) == text
