"""A real language pair: Spanish–English verse pairs from two public-domain Bibles.

The Reina-Valera 1909 and the World English Bible, verse-aligned: one pair a line in
``bible/es_en.tsv.gz`` beside this module, made by ``tools/bible_corpus.py`` (``make corpus``),
which says how the text was cleaned and aligned; ``bible/PROVENANCE.md`` gives the sources,
their licences (both public domain) and the file's checksum. The split is by book: the
``dev`` and ``test`` books are held out whole, so that no verse of a held-out book, nor a
near-identical verse of a parallel passage, is in ``train``.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import NamedTuple

BIBLE_CORPUS = Path(__file__).resolve().parent / "bible" / "es_en.tsv.gz"
SPLITS = ("train", "dev", "test")


class VersePair(NamedTuple):
    """One verse in both languages: its reference (OSIS, ``"Gen.1.1"``), split and texts."""

    ref: str
    split: str
    spanish: str
    english: str

    @property
    def book(self) -> str:
        """The OSIS name of the verse's book, ``"Gen"`` for ``"Gen.1.1"``."""
        return self.ref.split(".", 1)[0]


def load_verse_pairs(split: str | None = None, path: str | Path | None = None) -> list[VersePair]:
    """The verse pairs of one split (``"train"``, ``"dev"`` or ``"test"``), or all of them
    (``split=None``), in the Bible's order.

    Each text is one line, words separated by single spaces, punctuation as printed.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None; got {split!r}")
    with gzip.open(BIBLE_CORPUS if path is None else path, "rt", encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != ["ref", "split", "spanish", "english"]:
            raise ValueError(f"not a verse-pair file: its header is {header}")
        pairs = [VersePair(*line.rstrip("\n").split("\t")) for line in f]
    return [p for p in pairs if split is None or p.split == split]
