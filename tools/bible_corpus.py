"""Make the course's real language pair: Spanish–English verse pairs from two public-domain Bibles.

    make corpus        # installs the Debian packages, then runs this script

Debian packages two public-domain Bibles for SWORD: the Reina-Valera 1909 (``sword-text-sparv``,
module ``spaRV1909eb``, KJV versification) and the World English Bible (``sword-text-web``,
module ``engWEB2015eb``, NRSVA versification). ``pysword`` (PyPI, pinned in requirements.txt)
reads their compressed OSIS markup. This script pairs their verses by reference and writes

- ``helpers/data/bible/es_en.tsv.gz``: one verse pair a line, ``ref  split  spanish  english``
  (tab-separated, a header line first, books in canonical order), gzip with no name and time in
  its header, so that the same packages give the same bytes;
- ``helpers/data/bible/PROVENANCE.md``: where it came from (the packages' versions, the
  modules' versions and licence statements), its checksums and what this script measured.

What the extraction cleans, each measured on these modules (the counts are in PROVENANCE.md):

- **Markup between two letters is a word boundary.** pysword's own clean mode deletes tags,
  and where the source has no space around a footnote (``God</w><note>…</note><w>created``)
  or between two word elements (``<transChange>enviada</transChange><w>por</w>``), deleting
  them glues words: "Godcreated", "bornSon", "enviadapormedio deFebe". Here a run of markup
  between two letters becomes a space. The one exception is Spanish: the translators' added
  words (``transChange``) include object pronouns that belong to the verb before them
  (desatar + la = desatarla, oyéndo + lo = oyéndolo); such a pronoun joins the word before
  it when that word is a verb form, which :func:`joins_as_enclitic` decides by its shape.
- **What is not the verse is dropped:** footnotes and cross-references (``note``), the
  speakers' names of the Song of Songs (``speaker``), headings that are not canonical
  (``title``), and the glossary that the English module appends to its last verse. A
  canonical psalm title ("A Psalm by David.") is kept: the Spanish verse 1 holds it too.
- **Poetry line breaks** (``l``, ``lb``, ``lg``) and paragraph marks (``div``, ``p``) become
  spaces; runs of white space become one space.
- **Capitals at chapter starts:** the Reina-Valera prints the first word(s) of each chapter in
  capitals ("Y ACONTECIÓ que", "EN el principio"); those words take the spelling they have
  most often elsewhere in the Spanish text (acontenció, Jehová), capitalised at a sentence start.
- **Versifications aligned only where they agree.** Verses are paired by reference (book,
  chapter, verse). A pair is kept only where both verses are non-empty and the cheapest
  alignment of their chapter pairs them one to one. The alignment is Gale & Church's (1993):
  dynamic programming over groups of verses (one to one, to none, two to one, two to two),
  each costed by its prior and the difference of the lengths in characters, here with one
  more cost, the share of the words that a rough dictionary (learned from the same-numbered
  verses, :func:`translations`) does not match, since lengths alone cannot tell apart verses
  of about the same length. This drops what the two numberings split differently (Job 39-41
  and 1 Samuel 24, where the Spanish follows the Hebrew numbering inside KJV's verse slots;
  Romans 14:23, where the English holds the doxology that the Spanish gives as 16:25-27) and
  verses where one text adds what the other lacks (the Spanish subscriptions of the
  epistles, "Fué escrita de Corinto...").

The split is by book, never by verse, so that near-identical verses of parallel passages
(Kings and Chronicles, the synoptic gospels) cannot sit on both sides of it: the books of
:data:`DEV_BOOKS` and :data:`TEST_BOOKS` are held out whole, chosen from several genres and
without a parallel book in the training set; every other book is training data.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import html
import io
import math
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "helpers" / "data" / "bible"
CORPUS = OUT_DIR / "es_en.tsv.gz"
PROVENANCE = OUT_DIR / "PROVENANCE.md"
SWORD = Path("/usr/share/sword")
MODULES = {"es": "spaRV1909eb", "en": "engWEB2015eb"}  # the SWORD module of each language
PACKAGES = {"es": "sword-text-sparv", "en": "sword-text-web"}  # the Debian package of each

# Held out whole (OSIS book names). None is one side of the long parallel passages (Samuel-Kings
# and Chronicles, the gospels, Samuel and the Psalms, Joshua and Judges); together
# they hold narrative, poetry, prophecy and letters of both testaments.
DEV_BOOKS = ("Dan", "Lam", "Phil", "1Thess")
TEST_BOOKS = ("Ruth", "Esth", "Jonah", "Acts", "Jas")

# ---------------------------------------------------------------------------------------
# cleaning the OSIS markup of one verse
# ---------------------------------------------------------------------------------------
# Elements dropped with what they hold: footnotes and cross-references, the speakers of the
# Song of Songs, and headings that are not part of the text (a canonical psalm title is).
DROPPED = re.compile(
    r"<(note|speaker)\b[^>]*?(?<!/)>.*?</\1>"
    r"|<title\b(?![^>]*canonical=\"true\")[^>]*?(?<!/)>.*?</title>",
    re.S,
)
# The English module appends its glossary to the last verse of Revelation.
APPENDIX = re.compile(r"<div\b[^>]*type=\"(?:glossary|introduction)\".*", re.S)
# Line and paragraph marks: poetry lines, line breaks, line groups, paragraphs, chapters.
BREAK = re.compile(r"</?(?:l|lb|lg|div|p|chapter)\b[^>]*>")
MARKUP = re.compile(r"((?:<[^>]*>)+)")
WORD_END = re.compile(r"(\w+)$")
ADDED = re.compile(r"<transChange\b[^>]*>$")

# Spanish object pronouns that the Reina-Valera writes joined to a verb (dióle, tomándolo).
CLITICS = frozenset("lo la los las le les me te se nos os".split())
# Short imperatives with no mark of their own (di + les = diles, haz + lo = hazlo).
SHORT_IMPERATIVES = frozenset("di da vi haz".split())
# Accented words that are not verbs, found before an added pronoun in these modules.
NOT_VERBS = frozenset("josué jehová cuánto cuánta ejército".split())
ACCENTED = re.compile(r"[áéíóú]")
# A lower-case letter followed by a capital: how glued words show ("bornSon", "deFebe").
CAMEL = re.compile(r"[a-záéíóúñü][A-ZÁÉÍÓÚÑÜ]")


def joins_as_enclitic(word: str, added: str) -> bool:
    """Whether the added words ``added`` (a ``transChange``) join the word before them.

    Only a lone object pronoun after a verb form does: an infinitive (-ar, -er, -ir), an
    imperative plural (-d), a gerund (-ndo), a short imperative (di, haz), or a verb the
    Reina-Valera writes with an accent before its pronoun (díjo + le, llenará + las); a name
    (Josué, Jehová) or a noun before the pronoun keeps the space.
    """
    w = word.lower()
    if added not in CLITICS:
        return False
    if w in NOT_VERBS:
        return False
    return (
        w.endswith(("r", "d", "ndo"))
        or w in SHORT_IMPERATIVES
        or bool(ACCENTED.search(w[:-1] if w.endswith("á") else w))
    )


def clean_osis(markup: str, lang: str) -> str:
    """One verse's OSIS markup → its plain text on one line (see the module's docstring)."""
    text = APPENDIX.sub("", markup)
    text = DROPPED.sub("<dropped/>", text)
    text = BREAK.sub(" ", text)
    parts = MARKUP.split(text)  # text, markup, text, markup, ..., text
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(part)
            continue
        before, after = "".join(out)[-1:], parts[i + 1][:1] if i + 1 < len(parts) else ""
        if not (before.isalnum() and after.isalnum()):
            continue  # markup beside a space or a mark: delete it
        glue = False
        if lang == "es" and ADDED.search(part):
            previous = WORD_END.search("".join(out))
            added = parts[i + 1].strip()
            if "</w>" not in part:  # the pronoun is inside the verb's own word element
                glue = added in CLITICS
            elif previous is not None:
                glue = joins_as_enclitic(previous.group(1), added)
        out.append("" if glue else " ")
    return " ".join(html.unescape("".join(out)).split())


def glued_by_plain_deletion(markup: str) -> int:
    """How many places pysword's clean mode (tags deleted) would glue two words: markup
    between two letters with no space on either side. A measurement for PROVENANCE.md."""
    text = DROPPED.sub("<dropped/>", APPENDIX.sub("", markup))
    return len(re.findall(r"\w(?:<[^>]*>)+\w", BREAK.sub(" ", text)))


# ---------------------------------------------------------------------------------------
# capitals at the start of a Spanish chapter
# ---------------------------------------------------------------------------------------
SENTENCE_END = (".", "!", "?", ":", ";")


def _core(token: str) -> str:
    return token.strip("¿¡.,;:!?()\"'“”‘’«»")


def spelling_counts(verses: Iterable[str]) -> collections.Counter[str]:
    """How often each spelling occurs inside a sentence (not first), over the Spanish text."""
    counts: collections.Counter[str] = collections.Counter()
    for verse in verses:
        tokens = verse.split()
        for before, token in zip(tokens, tokens[1:], strict=False):
            if not before.endswith(SENTENCE_END):
                counts[_core(token)] += 1
    return counts


def recase_chapter_start(verse: str, counts: collections.Counter[str]) -> str:
    """The first verse of a Spanish chapter with its words in capitals written as elsewhere."""
    tokens = verse.split()
    start = next(
        (
            i
            for i, t in enumerate(tokens)
            if sum(c.isalpha() for c in t) >= 2 and _core(t).isupper()
        ),
        None,
    )
    if start is None:
        return verse
    if start > 0 and tokens[start - 1] == "Á":  # "Y Á SUS discípulos"
        start -= 1
    i = start
    while i < len(tokens) and _core(tokens[i]).isupper() and any(c.isalpha() for c in tokens[i]):
        core = _core(tokens[i])
        lower, title = core.lower(), core[:1] + core[1:].lower()
        spelled = title if counts[title] > counts[lower] else lower
        if i == 0 or tokens[i - 1].endswith(SENTENCE_END):
            spelled = spelled[:1].upper() + spelled[1:]
        tokens[i] = tokens[i].replace(core, spelled, 1)
        i += 1
    return " ".join(tokens)


# ---------------------------------------------------------------------------------------
# alignment by length and words (Gale & Church, 1993, with a dictionary's evidence)
# ---------------------------------------------------------------------------------------
# Groups of (Spanish verses, English verses) and their prior probabilities: the two numberings
# mostly agree, so one verse to one verse is by far the likeliest.
BEADS = {(1, 1): 0.98, (1, 0): 0.002, (0, 1): 0.002, (2, 1): 0.007, (1, 2): 0.007, (2, 2): 0.002}
WORDS = 3.0  # the cost, per verse, of a group of verses none of whose words translate each other
BAND = 8  # the largest shift between the two numberings inside a chapter
WORD = re.compile(r"\w+")


def translations(
    pairs: list[tuple[frozenset[str], frozenset[str]]],
) -> tuple[dict[str, str], dict[str, str]]:
    """A rough dictionary learned from the verses of the same number: each word's likeliest
    translation, the word of the other language that shares most verses with it (Dice's
    coefficient at least 0.3; words in fewer than 3 or more than 3,000 verses are left out).
    Returns the Spanish → English and the English → Spanish dictionaries."""
    df_es = collections.Counter(w for es, _ in pairs for w in es)
    df_en = collections.Counter(w for _, en in pairs for w in en)
    both: collections.Counter[tuple[str, str]] = collections.Counter()
    for es, en in pairs:
        es_words = [w for w in es if 3 <= df_es[w] <= 3000]
        en_words = [w for w in en if 3 <= df_en[w] <= 3000]
        both.update((e, f) for e in es_words for f in en_words)
    best_es: dict[str, tuple[float, str]] = {}
    best_en: dict[str, tuple[float, str]] = {}
    for (e, f), n in sorted(both.items()):
        dice = 2 * n / (df_es[e] + df_en[f])
        if dice > best_es.get(e, (0.0, ""))[0]:
            best_es[e] = (dice, f)
        if dice > best_en.get(f, (0.0, ""))[0]:
            best_en[f] = (dice, e)
    return (
        {e: f for e, (d, f) in best_es.items() if d >= 0.3},
        {f: e for f, (d, e) in best_en.items() if d >= 0.3},
    )


def word_match(es: frozenset[str], en: frozenset[str], dictionaries: tuple[dict, dict]) -> float:
    """The share of the words of both verses whose dictionary translation is in the other."""
    es_en, en_es = dictionaries
    found = [es_en[w] in en for w in es if w in es_en] + [en_es[w] in es for w in en if w in en_es]
    return sum(found) / len(found) if found else 0.0


def _length_cost(es: int, en: int, ratio: float, variance: float) -> float:
    """-log P(the lengths | the texts translate each other): Gale & Church's match cost."""
    mean = (es + en / ratio) / 2
    delta = (en - es * ratio) / math.sqrt(max(mean, 1.0) * variance)
    return -math.log(max(math.erfc(abs(delta) / math.sqrt(2)), 1e-300))  # 2 (1 - Phi(|delta|))


Verse = tuple[int, int, frozenset[str]]  # (number, length in characters, lower-case words)


def aligned_verses(
    es: list[Verse], en: list[Verse], ratio: float, variance: float, dictionaries: tuple
) -> set[int]:
    """The verse numbers that the cheapest alignment of one chapter pairs one to one with the
    verse of the same number.

    ``es`` and ``en`` list the chapter's non-empty verses. An alignment cuts both into groups
    (one verse to one, to none, two to one, two to two); its cost adds, for each group, minus
    the log of its prior and Gale & Church's length cost, and for one verse to one,
    :data:`WORDS` times the share of their words that the dictionary does not match. A verse
    that one text lacks costs its prior alone.
    """
    inf = float("inf")
    n, m = len(es), len(en)
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    back = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(n + 1):
        for j in range(max(0, i - BAND), min(m, i + BAND) + 1):
            for (di, dj), prior in BEADS.items():
                if i < di or j < dj or cost[i - di][j - dj] == inf:
                    continue
                c = cost[i - di][j - dj] - math.log(prior)
                if di and dj:
                    es_len = sum(v[1] for v in es[i - di : i])
                    en_len = sum(v[1] for v in en[j - dj : j])
                    c += _length_cost(es_len, en_len, ratio, variance)
                    es_words = frozenset().union(*(v[2] for v in es[i - di : i]))
                    en_words = frozenset().union(*(v[2] for v in en[j - dj : j]))
                    unmatched = 1 - word_match(es_words, en_words, dictionaries)
                    c += WORDS * (di + dj) / 2 * unmatched
                if c < cost[i][j]:
                    cost[i][j], back[i][j] = c, (di, dj)
    if cost[n][m] == inf:
        return set()
    kept, i, j = set(), n, m
    while i or j:
        di, dj = back[i][j]
        if (di, dj) == (1, 1) and es[i - 1][0] == en[j - 1][0]:
            kept.add(es[i - 1][0])
        i, j = i - di, j - dj
    return kept


# ---------------------------------------------------------------------------------------
# reading the modules
# ---------------------------------------------------------------------------------------
Ref = tuple[str, int, int]  # (OSIS book, chapter, verse)


def read_module(module: str, sword: Path) -> tuple[list[str], dict[Ref, str]]:
    """The OSIS book names of a module in canonical order, and every verse's raw markup."""
    from pysword.modules import SwordModules

    modules = SwordModules(str(sword))
    modules.parse_modules()
    bible = modules.get_bible_from_module(module)
    books = bible.get_structure().get_books()
    order, verses = [], {}
    for testament in ("ot", "nt"):
        for book in books.get(testament, []):
            order.append(book.osis_name)
            for chapter, count in enumerate(book.chapter_lengths, 1):
                texts = bible.get_iter(books=[book.name], chapters=[chapter], clean=False)
                for verse, text in enumerate(texts, 1):
                    verses[(book.osis_name, chapter, verse)] = text or ""
                if verse != count:
                    raise RuntimeError(f"{module} {book.osis_name} {chapter}: {verse} != {count}")
    return order, verses


def split_of(book: str) -> str:
    if book in DEV_BOOKS:
        return "dev"
    return "test" if book in TEST_BOOKS else "train"


def extract(sword: Path) -> tuple[list[tuple[Ref, str, str]], dict[str, object]]:
    """The aligned, cleaned verse pairs in canonical order, and what was measured on the way."""
    books, raw_es = read_module(MODULES["es"], sword)
    _, raw_en = read_module(MODULES["en"], sword)
    es = {ref: clean_osis(text, "es") for ref, text in raw_es.items()}
    en = {ref: clean_osis(text, "en") for ref, text in raw_en.items() if ref[0] in books}
    counts = spelling_counts(es.values())
    recased = 0
    for ref in es:
        if ref[2] == 1 and es[ref]:
            new = recase_chapter_start(es[ref], counts)
            recased += new != es[ref]
            es[ref] = new
    # The length ratio and its variance (Gale & Church's c and s²), measured on these texts,
    # and a rough dictionary, from the verses of the same number.
    both = [r for r in es if es[r] and en.get(r)]
    ratio = sum(len(en[r]) for r in both) / sum(len(es[r]) for r in both)
    variance = sum((len(en[r]) - len(es[r]) * ratio) ** 2 for r in both) / sum(
        len(es[r]) for r in both
    )
    words = {lang: {r: frozenset(WORD.findall(t.lower())) for r, t in side.items()}
             for lang, side in (("es", es), ("en", en))}  # fmt: skip
    dictionaries = translations([(words["es"][r], words["en"][r]) for r in both])

    chapters: dict[tuple[str, int], list[Ref]] = collections.defaultdict(list)
    en_chapters: dict[tuple[str, int], list[Ref]] = collections.defaultdict(list)
    for ref in es:
        chapters[ref[:2]].append(ref)
    for ref in en:
        en_chapters[ref[:2]].append(ref)
    pairs, dropped = [], collections.Counter()
    for (book, chapter), all_refs in chapters.items():
        # An empty verse (its text given with a neighbour's) is left out of the alignment.
        refs = [r for r in all_refs if es[r]]
        en_refs = [r for r in en_chapters[(book, chapter)] if en[r]]
        same = aligned_verses(
            [(r[2], len(es[r]), words["es"][r]) for r in refs],
            [(r[2], len(en[r]), words["en"][r]) for r in en_refs],
            ratio,
            variance,
            dictionaries,
        )
        dropped["a side is empty or absent"] += sum(1 for r in all_refs if not es[r])
        for ref in refs:
            if not en.get(ref):
                dropped["a side is empty or absent"] += 1
            elif ref[2] not in same:
                dropped["not aligned one to one"] += 1
            else:
                pairs.append((ref, es[ref], en[ref]))
    glued = {
        lang: sum(glued_by_plain_deletion(raw[r]) for r in raw_es)
        for lang, raw in (("es", raw_es), ("en", raw_en))
    }
    after = {
        lang: sum(len(CAMEL.findall(pair[side])) for pair in pairs)
        for lang, side in (("es", 1), ("en", 2))
    }
    stats: dict[str, object] = {
        "books": books,
        "verses": len(raw_es),
        "dropped": dict(dropped),
        "ratio": ratio,
        "variance": variance,
        "recased": recased,
        "glued_by_deletion": glued,
        "camel_case_after": after,
    }
    return pairs, stats


# ---------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------
HEADER = "ref\tsplit\tspanish\tenglish\n"


def tsv_bytes(pairs: list[tuple[Ref, str, str]]) -> bytes:
    lines = [HEADER]
    for (book, chapter, verse), es, en in pairs:
        assert "\t" not in es + en and "\n" not in es + en
        lines.append(f"{book}.{chapter}.{verse}\t{split_of(book)}\t{es}\t{en}\n")
    return "".join(lines).encode("utf-8")


def gzip_bytes(data: bytes) -> bytes:
    """gzip with no file name and time 0 in its header: the same data, the same bytes."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as f:
        f.write(data)
    return buffer.getvalue()


def _package_version(package: str) -> str:
    return subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=True
    ).stdout


def _conf(module: str, sword: Path) -> dict[str, str]:
    conf: dict[str, str] = {}
    for line in (sword / "mods.d" / f"{module}.conf").read_text("utf-8").splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#") and key not in conf:
            conf[key] = value.strip()
    return conf


def provenance(data: bytes, packed: bytes, pairs: list, stats: dict, sword: Path) -> str:
    """The text of PROVENANCE.md."""
    from importlib.metadata import version

    split_counts = collections.Counter(split_of(ref[0]) for ref, _, _ in pairs)
    lines = [
        "# The Spanish–English verse pairs: provenance",
        "",
        "Written by `tools/bible_corpus.py` (`make corpus`); do not edit by hand. The script's",
        "docstring says what it cleans and how it aligns and splits.",
        "",
        "| file | bytes | sha256 |",
        "|---|---|---|",
        f"| `es_en.tsv.gz` | {len(packed)} | `{hashlib.sha256(packed).hexdigest()}` |",
        f"| its content, uncompressed | {len(data)} | `{hashlib.sha256(data).hexdigest()}` |",
        "",
        f"{len(pairs)} verse pairs: "
        + ", ".join(f"{split_counts[s]} {s}" for s in ("train", "dev", "test"))
        + f". Held out: dev {', '.join(DEV_BOOKS)}; test {', '.join(TEST_BOOKS)}.",
        "",
        "## Sources",
        "",
        "| language | Debian package | SWORD module | module version | versification |",
        "|---|---|---|---|---|",
    ]
    confs = {lang: _conf(MODULES[lang], sword) for lang in ("es", "en")}
    for lang in ("es", "en"):
        c = confs[lang]
        lines.append(
            f"| {lang} | `{PACKAGES[lang]}` {_package_version(PACKAGES[lang])} | "
            f"`{MODULES[lang]}` ({c['Description']}) | {c['Version']} ({c['SwordVersionDate']}) "
            f"| {c['Versification']} |"
        )
    lines += [
        "",
        f"Read with `pysword` {version('pysword')} (PyPI).",
        "",
        "## Licences, as each module's `.conf` states them",
        "",
    ]
    for lang in ("es", "en"):
        c = confs[lang]
        lines += [
            f"- `{MODULES[lang]}`: Copyright={c['Copyright']}; DistributionLicense="
            f"{c['DistributionLicense']}; CopyrightNotes: {c['CopyrightNotes']}",
        ]
    web_about = confs["en"]["About"]
    ask = web_about[web_about.find("However") : web_about.find("This is to avoid confusion")]
    lines += [
        "",
        "The World English Bible's `.conf` adds: " + ask.strip(),
        "This corpus changes the text (markup removed, verses dropped and cleaned), so it is",
        "derived from the World English Bible and is not the World English Bible.",
        "",
        "## Measured while extracting",
        "",
        f"- verses of the Spanish (KJV) versification: {stats['verses']}; dropped: "
        + "; ".join(f"{n} ({why})" for why, n in sorted(stats["dropped"].items())),
        f"- places where deleting the tags (pysword's clean mode) glues two words: "
        f"{stats['glued_by_deletion']['es']} in the Spanish, "
        f"{stats['glued_by_deletion']['en']} in the English; here each is a space, or a "
        "Spanish pronoun joined to its verb",
        f"- a lower-case letter followed by a capital inside a word, after cleaning: "
        f"{stats['camel_case_after']['es']} (Spanish), {stats['camel_case_after']['en']} (English)",
        f"- Spanish chapter starts written in capitals and recased: {stats['recased']}",
        f"- characters, English per Spanish: {stats['ratio']:.4f}; Gale & Church's variance "
        f"s² = {stats['variance']:.3f}",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sword", type=Path, default=SWORD, help="the SWORD library folder")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="where to write the files")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pairs, stats = extract(args.sword)
    data = tsv_bytes(pairs)
    packed = gzip_bytes(data)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / CORPUS.name).write_bytes(packed)
    (args.out / PROVENANCE.name).write_text(
        provenance(data, packed, pairs, stats, args.sword), "utf-8"
    )
    print(
        f"{len(pairs)} pairs, {len(packed)} bytes, sha256 {hashlib.sha256(packed).hexdigest()}"
        f" -> {args.out / CORPUS.name} ({time.perf_counter() - started:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
