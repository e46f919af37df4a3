"""The committed Spanish–English corpus (helpers/data/bible/), without apt or the network: the
file is the one PROVENANCE.md records, and it holds what tools/bible_corpus.py promises (no
empty side, no words glued by deleted markup, a split by whole books)."""

from __future__ import annotations

import collections
import hashlib
import re
import sys
from pathlib import Path

import pytest

from helpers.data import SPLITS, VersePair, load_verse_pairs
from helpers.data.parallel import BIBLE_CORPUS

REPO = Path(__file__).resolve().parents[2]
PROVENANCE = BIBLE_CORPUS.parent / "PROVENANCE.md"
sys.path.insert(0, str(REPO / "tools"))
import bible_corpus  # noqa: E402  (tools/, the script that writes the corpus)

PAIRS = 30_742  # as PROVENANCE.md says; a new extraction changes it knowingly


@pytest.fixture(scope="module")
def pairs() -> list[VersePair]:
    return load_verse_pairs()


def test_the_file_is_the_one_provenance_records():
    text = PROVENANCE.read_text(encoding="utf-8")
    recorded = re.search(r"\| `es_en.tsv.gz` \| (\d+) \| `([0-9a-f]{64})` \|", text)
    assert recorded, "PROVENANCE.md has no checksum row for es_en.tsv.gz"
    data = BIBLE_CORPUS.read_bytes()
    assert len(data) == int(recorded.group(1))
    assert hashlib.sha256(data).hexdigest() == recorded.group(2), (
        "helpers/data/bible/es_en.tsv.gz is not the file PROVENANCE.md records: rebuild both "
        "with `make corpus`"
    )
    assert data[4:8] == b"\0\0\0\0", "gzip header time is not 0: the bytes would not repeat"
    assert f"{PAIRS} verse pairs" in text
    for package in ("sword-text-web", "sword-text-sparv", "Public Domain"):
        assert package in text


def test_pairs_are_whole_one_line_texts(pairs):
    assert len(pairs) == PAIRS
    assert len({p.ref for p in pairs}) == len(pairs), "a reference twice"
    for p in pairs:
        for text in (p.spanish, p.english):
            assert text and text == " ".join(text.split()), p.ref
            assert "<" not in text and ">" not in text and "&" not in text, p.ref


def test_no_words_glued_where_markup_was(pairs):
    """pysword's clean mode deletes the tags, and 126 English and 588 Spanish places glue two
    words (measured by the script, PROVENANCE.md): "bornSon", "Godcreated", "deFebe". A glued
    word shows as a lower-case letter followed by a capital; the script leaves none, and known
    places read as words."""
    camel = [(p.ref, w) for p in pairs for t in (p.spanish, p.english) for w in t.split()
             if bible_corpus.CAMEL.search(w)]  # fmt: skip
    assert camel == []
    by_ref = {p.ref: p for p in pairs}
    assert "only born Son" in by_ref["John.3.16"].english  # a footnote between born and Son
    assert "God created" in by_ref["Gen.1.1"].english
    assert "Y fué que á los treinta" in by_ref["Ezek.1.1"].spanish  # added words, spaced
    assert "desatarla" in by_ref["Luke.13.16"].spanish  # an added pronoun, joined to its verb
    assert "preguntándole" in by_ref["1Chr.10.13"].spanish
    assert by_ref["Gen.1.1"].spanish.startswith("En el principio")  # was "EN el principio"


def test_split_is_by_whole_books(pairs):
    books = collections.defaultdict(set)
    for p in pairs:
        books[p.split].add(p.book)
    assert set(books) == set(SPLITS)
    assert books["dev"] == set(bible_corpus.DEV_BOOKS)
    assert books["test"] == set(bible_corpus.TEST_BOOKS)
    assert not (books["train"] & books["dev"] or books["train"] & books["test"])
    assert not books["dev"] & books["test"]
    assert [p.split for p in load_verse_pairs("test")] == ["test"] * sum(
        p.split == "test" for p in pairs
    )


def test_the_cleaning_rules_on_markup():
    clean = bible_corpus.clean_osis
    note = '<note placement="foot">a footnote</note>'
    assert clean(f"<w>God</w>{note}<w>created</w> <w>the</w>", "en") == "God created the"
    assert clean("<w>the</w> <w>earth</w>. <l/><l/>", "en") == "the earth."
    assert clean('<title type="psalm" canonical="true">A Psalm.</title> <w>Yahweh</w>', "en") == (
        "A Psalm. Yahweh"
    )
    assert clean("<title>Heading</title><speaker>Beloved</speaker>Let him", "en") == "Let him"
    added = '<transChange type="added">'
    assert clean(f"<w>desatar</w>{added}la</transChange> de", "es") == "desatarla de"
    assert clean(f"<w>os</w>{added}lo</transChange> <w>hubiera</w>", "es") == "os lo hubiera"
    assert clean(f"<w>Josué</w>{added}los</transChange> <w>circuncidó</w>", "es") == (
        "Josué los circuncidó"
    )
    assert clean(f"<w>preguntándo{added}le</transChange></w>,", "es") == "preguntándole,"
    assert clean(f"{added}enviada</transChange><w>por</w>{added}medio", "es") == "enviada por medio"
