"""Which glossary terms each page of the Chinese edition uses, and where a term is not kept.

The Chinese edition (locale/zh_CN/LC_MESSAGES/<page>.po) follows one term base,
locale/zh_CN/terms.yml: for every concept the English term, the one Chinese term the book uses
for it, and the other renderings ("variants") that it must not use.

    python tools/term_report.py [--page TEXT] [--all-terms] [--flags-only]

prints, for each page in the book's reading order (intro, chapters, exercises, instructor guide,
glossary, notes on the article; then the labels of the Chinese figures,
locale/zh_CN/figure_labels.po), the glossary concepts it uses (English, Chinese, how often), and
two kinds of flags:

(a) a variant: a concept rendered another way than the term base's one term, on any page; a
    variant's modifier also counts where it stands alone in a list whose items share the head
    noun (正弦、学习得到的、旋转……位置编码: 学习得到的 is the variant 学习得到的位置编码 with its
    head noun given once at the end), unless it is the chosen term's own modifier;
(b) on a chapter or exercise page, the first use of a glossary concept in running text without
    its English term in parentheses right after it, 注意力（attention） or 掩码（`mask`）.

Only the Chinese side of each message (msgstr) is scanned, with code, math, roles and link targets
blanked out, in the order of the catalog (the order of the page). Exit status 1 when there is
any flag.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES"
TERMS = ROOT / "locale" / "zh_CN" / "terms.yml"

# Pages whose first use of a glossary concept must carry the English term: the chapters and the
# exercise pages, each read on its own by a learner.
FIRST_USE_PAGES = re.compile(r"^(chapters|exercises)/")
# The English term must open a parenthesis within this many characters after the Chinese term,
# with no sentence punctuation in between (查询、键和值（Q、K、V） is fine for all three).
WINDOW = 12
CLAUSE_END = "，。；：！？,;:!?\n"
# Blanked before scanning, as in tools/i18n_check.py: roles, inline code, math, link targets, URLs.
# A {ref} keeps its visible text.
BLANK = [
    r"\{[a-z:-]+\}`[^`]*`",
    r"`[^`\n]+`",
    r"\$\$.+?\$\$|\$[^$\n]+\$",
    r"\]\([^)]+\)",
    r"https?://\S+",
]
TOC = ROOT / "_toc.yml"
# locale/zh_CN/figure_labels.po: the words of the Chinese figures, reported as one more page
FIGURE_LABELS = "figure_labels"


@dataclass
class Term:
    """One concept of the term base."""

    english: str
    chinese: str
    glossary: bool = False
    match: list[re.Pattern[str]] = field(default_factory=list)  # uses of the chosen term
    also: list[re.Pattern[str]] = field(default_factory=list)  # accepted other names
    variants: list[re.Pattern[str]] = field(default_factory=list)  # rejected renderings
    english_forms: list[re.Pattern[str]] = field(default_factory=list)  # for (b)


@dataclass
class TermBase:
    terms: list[Term]
    ignore: list[re.Pattern[str]]  # words that contain a term's characters but are another word

    @functools.cached_property
    def searches(self) -> list[tuple[re.Pattern[str], str | None, Term, str]]:
        """Every pattern of every term once: (pattern, its text when it is a plain word, term,
        "use" or "variant"). A plain word absent from a text needs no regex scan of it."""
        return [
            (pattern, pattern.pattern if _is_literal(pattern.pattern) else None, term, kind)
            for term in self.terms
            for kind, patterns in (("use", term.match + term.also), ("variant", term.variants))
            for pattern in patterns
        ]


@dataclass
class Hit:
    term: Term
    kind: str  # "use" (chosen term or accepted name) or "variant"
    start: int
    end: int
    text: str


@dataclass
class Flag:
    page: str
    number: int  # message number in the page (0-based, catalog order)
    kind: str  # "a" or "b"
    term: Term
    text: str  # what was found
    context: str

    def __str__(self) -> str:
        if self.kind == "a":
            what = f"{self.text!r} used for {self.term.english!r}: write {self.term.chinese!r}"
        else:
            what = (
                f"first use of {self.term.chinese!r} without ({self.term.english}) after it: "
                f"write {self.term.chinese}（{self.term.english}）"
            )
        return f"{self.page} #{self.number}: ({self.kind}) {what}: …{self.context}…"


@dataclass
class PageReport:
    page: str
    messages: int
    counts: Counter[str]  # english -> uses
    flags: list[Flag]


def _patterns(values: list[str] | None) -> list[re.Pattern[str]]:
    return [re.compile(v) for v in values or []]


def elided_variant(variant: str, chinese: str) -> str | None:
    """The variant's modifier as an item of a list that shares the head noun, or None.

    For a variant "<modifier>的<head>" (学习得到的位置编码) the modifier followed by the list
    comma 、 (学习得到的、) renders the same concept with the head noun written once after the
    last item. None for a variant without a head after 的, or whose modifier is the chosen
    term's own (可学习的、 shortens 可学习的位置编码 itself).
    """
    depth = 0
    for i, char in enumerate(variant):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "的" and depth == 0 and i < len(variant) - 1:
            modifier = variant[: i + 1]
            if re.fullmatch(modifier, chinese[: chinese.find("的") + 1] or "\0"):
                return None
            return modifier + "(?=、)"
    return None


def load_terms(path: Path = TERMS) -> TermBase:
    """The term base: every concept with its chosen term, accepted names and variants."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    terms = []
    for entry in data["terms"]:
        # "aliases" (other books' names, shown in the glossary only) are read by
        # _ext/glossary_aliases.py, not here: in running text they are variants.
        unknown = set(entry) - {"english", "chinese", "glossary", "match", "also", "variants",
                                "english_forms", "aliases"}  # fmt: skip
        if unknown:
            raise ValueError(f"{path}: {entry.get('english')!r}: unknown keys {sorted(unknown)}")
        english = entry["english"]
        forms = [r"\b" + r"[- ]?".join(re.escape(w) for w in re.split(r"[- ]", english))]
        terms.append(
            Term(
                english=english,
                chinese=entry["chinese"],
                glossary=bool(entry.get("glossary", False)),
                match=_patterns(entry.get("match") or [re.escape(entry["chinese"])]),
                also=_patterns(entry.get("also")),
                variants=_patterns(
                    list(entry.get("variants") or [])
                    + [
                        elided
                        for v in entry.get("variants") or []
                        if (elided := elided_variant(v, entry["chinese"]))
                    ]
                ),
                english_forms=[re.compile(f, re.I) for f in forms + entry.get("english_forms", [])],
            )
        )
    return TermBase(terms, _patterns(data.get("ignore")))


def blank_markup(text: str) -> str:
    """The text with code, math, roles, link targets and URLs replaced by spaces (same length).

    A {ref}`text <label>` keeps its text: it is what the reader sees.
    """

    def spaces(match: re.Match[str]) -> str:
        ref = re.fullmatch(r"(\{ref\}`)([^`<]*)(<[^>]*>)?`", match.group(0))
        if ref:
            return " " * len(ref.group(1)) + ref.group(2) + " " * (len(match.group(0)) - ref.end(2))
        return " " * len(match.group(0))

    for pattern in BLANK:
        text = re.sub(pattern, spaces, text, flags=re.S)
    return text


def _opens_parenthesis(text: str, start: int) -> bool:
    """Whether position start of text is the beginning of a （…） or (…): the gloss position.

    随机失活（dropout） and 后置归一化（post-norm，论文的做法） have the English there;
    （在 post-norm 中） uses it as a word.
    """
    before = text[:start].rstrip(" *_`")
    return before.endswith(("（", "("))


def _is_literal(pattern: str) -> bool:
    """Whether a pattern matches only its own text (no character with a meaning in a regex)."""
    return not any(c in pattern for c in ".^$*+?{}[]\\|()")


def find_terms(text: str, base: TermBase) -> list[Hit]:
    """Every term use and variant in a (blanked) text, longest match first, no overlaps.

    An ignored word (箭头 for 头) takes its characters away from every term. A variant that is
    plain ASCII (an English word left in the Chinese text) is not counted where it opens a
    parenthesis, the place of the English gloss: 随机失活（dropout）.
    """
    candidates: list[tuple[int, int, Term | None, str]] = []
    for pattern in base.ignore:
        candidates += [(m.start(), m.end(), None, "ignore") for m in pattern.finditer(text)]
    for pattern, word, term, kind in base.searches:
        if word is not None and word not in text:
            continue
        for m in pattern.finditer(text):
            if m.end() > m.start():
                candidates.append((m.start(), m.end(), term, kind))
    candidates.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
    taken = [False] * len(text)
    hits = []
    for start, end, term, kind in candidates:
        if any(taken[start:end]):
            continue
        taken[start:end] = [True] * (end - start)
        if term is None:
            continue
        found = text[start:end]
        if kind == "variant" and found.isascii() and _opens_parenthesis(text, start):
            continue
        hits.append(Hit(term, kind, start, end, found))
    return sorted(hits, key=lambda h: h.start)


def gloss_after(raw: str, end: int) -> str | None:
    """The text of the parenthesis that opens right after position end of raw, if any.

    Right after: within WINDOW characters, with no sentence punctuation in between (bold and
    italic markers do not count); code spans count as text: 掩码（`mask`）.
    """
    after = raw[end:].replace("*", "")
    for i, ch in enumerate(after[: WINDOW + 1]):
        if ch in "（(":
            close = re.search(r"[）)]", after[i:])
            inside = after[i + 1 : i + close.start()] if close else after[i + 1 :]
            return inside.replace("`", "")
        if ch in CLAUSE_END:
            return None
    return None


def has_english(gloss: str | None, term: Term) -> bool:
    """Whether a parenthesis text names the English term."""
    return gloss is not None and any(f.search(gloss) for f in term.english_forms)


def is_running_text(english: str) -> bool:
    """Whether a message is a sentence (not a heading, a table cell or a label).

    The first use of a term must carry its English in running text; a chapter title or a table
    cell does not need it, and the next sentence that uses the term does.
    """
    english = english.strip().rstrip("*_`\"'”)")
    return bool(re.search(r"[.:;?!]$", english)) or len(english.split()) >= 15


def toc_order(toc: Path = TOC) -> list[str]:
    """The pages of the book in reading order: the root, then every file of _toc.yml."""
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    order = [data["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            if "file" in entry:
                order.append(entry["file"])
            walk(entry.get("chapters", []) + entry.get("sections", []))

    walk(data.get("parts", []) + data.get("chapters", []))
    return order


def read_pages(catalogs: Path = CATALOGS) -> dict[str, list[tuple[str, str]]]:
    """Every page's (English, Chinese) messages in catalog order (the order of the page).

    Pages come in the book's reading order (_toc.yml), any others after them.
    """
    pages = {}
    for po in catalogs.rglob("*.po"):
        page = po.relative_to(catalogs).with_suffix("").as_posix()
        catalog = read_po(po.open("rb"), locale="zh_CN")
        pages[page] = [(m.id, m.string) for m in catalog if m.id and isinstance(m.id, str)]
    # the labels of the Chinese figures, beside the page catalogs (not a page Sphinx reads)
    labels = catalogs.parent / f"{FIGURE_LABELS}.po"
    if labels.is_file():
        catalog = read_po(labels.open("rb"), locale="zh_CN")
        pages[FIGURE_LABELS] = [(m.id, m.string) for m in catalog if m.id and m.string]
    order = toc_order()
    ranked = sorted(pages, key=lambda p: (order.index(p) if p in order else len(order), p))
    return {page: pages[page] for page in ranked}


def _titles(text: str) -> list[tuple[int, int]]:
    """The spans of link texts [...] and titles 《...》: a term there is part of a title."""
    return [m.span() for m in re.finditer(r"\[[^\]]*\]|《[^》]*》", text)]


def report_page(page: str, messages: list[tuple[str, str]], base: TermBase) -> PageReport:
    """The term counts and flags of one page."""
    counts: Counter[str] = Counter()
    flags: list[Flag] = []
    seen: set[str] = set()
    check_first_use = bool(FIRST_USE_PAGES.match(page))
    glossary = [t for t in base.terms if t.glossary]
    for number, (english, chinese) in enumerate(messages):
        if chinese == english:  # math, code, a glossary headword: nothing was translated
            continue
        blanked = blank_markup(chinese)
        titles = _titles(chinese)
        for hit in find_terms(blanked, base):
            context = chinese[max(0, hit.start - 15) : hit.end + 15].replace("\n", " ")
            if hit.kind == "variant":
                flags.append(Flag(page, number, "a", hit.term, hit.text, context))
                continue
            counts[hit.term.english] += 1
            if not check_first_use or not is_running_text(english):
                continue
            if any(a <= hit.start < b for a, b in titles):
                continue
            gloss = gloss_after(chinese, hit.end)
            # 因果掩码（causal mask） also introduces 掩码 (mask): the reader saw both words.
            for part in glossary:
                if part.chinese in hit.text and has_english(gloss, part):
                    seen.add(part.english)
            if not hit.term.glossary or hit.term.english in seen:
                continue
            seen.add(hit.term.english)
            if not (hit.text.isascii() or has_english(gloss, hit.term)):
                flags.append(Flag(page, number, "b", hit.term, hit.text, context))
    return PageReport(page, len(messages), counts, flags)


def report(catalogs: Path = CATALOGS, terms: Path = TERMS) -> list[PageReport]:
    """The report of every page, in reading order."""
    base = load_terms(terms)
    return [report_page(page, msgs, base) for page, msgs in read_pages(catalogs).items()]


def _pad(text: str, width: int) -> str:
    """text padded with spaces to width terminal columns (a Chinese character takes two)."""
    columns = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(0, width - columns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", default="", help="only pages whose name contains this text")
    parser.add_argument("--all-terms", action="store_true", help="count every term, not only "
                        "the glossary's")  # fmt: skip
    parser.add_argument("--flags-only", action="store_true", help="print only the flags")
    parser.add_argument("--catalogs", type=Path, default=CATALOGS)
    parser.add_argument("--terms", type=Path, default=TERMS)
    args = parser.parse_args(argv)
    base = load_terms(args.terms)
    chinese = {t.english: t.chinese for t in base.terms}
    glossary = {t.english for t in base.terms if t.glossary}
    kinds: Counter[str] = Counter()
    pages = [p for p in report(args.catalogs, args.terms) if args.page in p.page]
    for page in pages:
        kinds.update(f.kind for f in page.flags)
        if args.flags_only:
            print("".join(f"! {flag}\n" for flag in page.flags), end="")
            continue
        used = [(e, n) for e, n in page.counts.most_common() if args.all_terms or e in glossary]
        print(f"{page.page} ({page.messages} messages, {len(used)} concepts)")
        for english, n in used:
            print(f"    {english:32} {_pad(chinese[english], 14)} {n:4}")
        print("".join(f"  ! {flag}\n" for flag in page.flags), end="")
    print(
        f"{len(pages)} pages: {kinds['a']} flags (a) a concept written another way, "
        f"{kinds['b']} flags (b) a first use without the English term"
    )
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
