"""Find numbers in a chapter's prose that none of its stored outputs prints.

    .venv/bin/python tools/prose_numbers.py [chapters/05_residual_and_layernorm.ipynb ...]

A chapter states measured numbers in its text ("held-out accuracy 0.9775"); when the chapter is
executed again and a cell prints something else, the text is left behind. This check reads the
stored notebook only (no execution): every decimal number written in a markdown cell (outside
code spans, code blocks and link targets) must appear among the numbers of the chapter's code
cells, their sources or their stored outputs, either as written or as the rounding of a printed
number (0.98 for a printed 0.9775), or be listed in chapters/cited_numbers.yml with its
source: the paper's values, the article's, and the few numbers the text derives by hand.
Section numbers are not checked (§5.2, "section 6.3", or a heading number of the book).

Integers are checked the same way ("161 of 500 outputs", "63 million", "35 %"): each must be a
number of the chapter's code cells or their outputs (settings such as 12 layers are numbers of
the code), exactly or, for a round number (100,000), as the rounding of one (103,192), or be
cited; not checked are the numbers of chapters, sections, tables, figures, equations, rows and
exercises ("chapter 9", "Table 3"), years (2017), list and heading numbers, and numbers inside
math, code and link targets. The paper's constants that every chapter may state (512, 2048,
37 000) are listed once in cited_numbers.yml under `paper`. Timings are a special case: a cell
that prints them is not reproducible, so the text should cite the ratios or slopes the cell
prints, which this check then compares like any other number.

The Chinese edition states the same numbers: `check_catalog` compares each translated message
of a chapter's catalog (locale/zh_CN/LC_MESSAGES/chapters/) with its English message, which the
check above has checked: every number of one must be a number of the other (1,000 and 1 000 are
the same number; 0.85 and 85% are not).

Exit status 1 and one line per unmatched number when any is found.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
CITED = CHAPTERS / "cited_numbers.yml"
PAPER = "paper"  # the cited numbers every chapter may state: the paper's constants

DECIMAL = re.compile(
    r"(?<![\w.])(?P<number>\d+\.\d+)(?![\w.]*\d)"
    r"(?:\s*\\cdot\s*10\^\{?(?P<exponent>[-−]?\d+)\}?|(?P<unit>\s?%|M\b))?"
)
PRINTED = re.compile(r"\d+\.\d+(?:[eE][-+]?\d+)?|\d+")
HEADING = re.compile(r"^#+\s+(\d+\.\d+)\b", re.MULTILINE)
REFERENCE = re.compile(r"(?:§|[Ss]ections?\s|[Ss]ection\s)\s*$")
# An integer of the prose: 161, 1,000, 37 000; not part of a word or of a decimal (float16, 0.5)
INTEGER = re.compile(
    r"(?<![\w.,\-−^_/{\\])(?P<number>\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+(?![\d.])|\d+)"
    r"(?![\w.]*\d|\w)(?P<unit>\s?%|\s(?:million|billion)\b)?"
)
# What an integer may follow without being checked: a reference to a part of a text
NAMED_PART = re.compile(
    r"(?:§|\b(?:[Cc]hapters?|[Ss]ections?|[Tt]ables?|[Ff]igures?|[Ee]quations?|[Ee]xercises?"
    r"|[Rr]ows?|[Pp]arts?))\s*\(?(?:\d+[.–-]?\)?\s*(?:,|and|to|or|–)?\s*)*$"
)
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.DOTALL)
ENUMERATION = re.compile(r"^\s*(?:#+\s*)?\d+\.\s", re.MULTILINE)  # "1. A sentence", "# 5. Title"
LABELS = re.compile(r"\{cite[^}]*\}`[^`]*`|^\([\w-]+\)=", re.MULTILINE)
SCALE = {"%": 0.01, "million": 1e6, "billion": 1e9}
CODE = re.compile(r"```.*?```|`[^`\n]*`|\]\([^)]*\)|\{ref\}`[^`]*`", re.DOTALL)


@dataclass(frozen=True)
class Unmatched:
    """A number of the prose that no output prints and no citation lists."""

    chapter: str
    number: str
    context: str

    def __str__(self) -> str:
        return f"{self.chapter}: {self.number} in '...{self.context}...'"


def load_cited(path: Path = CITED) -> dict[str, set[str]]:
    """Chapter name -> the numbers it may state without printing them.

    Each entry has a `value` and either a `source` (a cited constant: the paper, the article,
    a number derived in the text) or `printed_by` (another chapter, whose stored outputs must
    then print it: a number quoted from another chapter is checked there)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    cited: dict[str, set[str]] = {}
    for chapter, entries in data.items():
        for entry in entries or []:
            if (
                not isinstance(entry, dict)
                or "value" not in entry
                or not (entry.get("source") or entry.get("printed_by"))
            ):
                raise ValueError(
                    f"{path.name}: {chapter}: every entry needs a value and a source (where the "
                    f"number comes from) or printed_by (the chapter that prints it); got {entry!r}"
                )
            value = str(entry["value"])
            other = entry.get("printed_by")
            if other:
                nb = json.loads((path.parent / f"{other}.ipynb").read_text(encoding="utf-8"))
                shown = code_and_outputs(nb).replace(",", "")
                strings = set(PRINTED.findall(shown))
                values = [float(s) for s in strings]
                if not (
                    printed(value, strings, values)
                    if "." in value
                    else printed_integer(value, set(values))
                ):
                    raise ValueError(
                        f"{path.name}: {chapter} quotes {value} as printed by {other}, "
                        f"which no longer prints it: correct the text of {chapter}"
                    )
            cited.setdefault(chapter, set()).add(value)
    return cited


def code_and_outputs(nb: dict) -> str:
    """The sources and stored text outputs of every code cell, as one string."""
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        parts.append(re.sub(r"(?<=\d)_(?=\d)", "", "".join(cell["source"])))  # 20_000
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            for kind in ("text/plain", "text/markdown", "text/html"):
                parts.append("".join(output.get("data", {}).get(kind, "")))
    return "\n".join(parts)


def section_numbers(paths: list[Path]) -> set[str]:
    """The numbers of the book's own sections ("5.2"), from the chapters' headings."""
    found: set[str] = set()
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                found.update(HEADING.findall("".join(cell["source"])))
    return found


def printed(number: str, strings: set[str], values: list[float], scale: float = 1.0) -> bool:
    """Whether `number` times `scale` is printed: as written, or as the rounding of a printed
    number (0.98 for 0.9775; 4.8 with scale 1e-14 for 4.8e-14; 98.2 with scale 0.01 for 0.982;
    63.1 with scale 1e6 for 63,119,496; 15.8 % also for a printed 15.8, from a cell that prints
    percentages, as for integers)."""
    if scale == 1.0 and number in strings:
        return True
    decimals = len(number.split(".")[1])
    target = float(number)
    if scale == 0.01 and any(abs(round(value, decimals) - target) < 1e-9 for value in values):
        return True
    return any(abs(round(value / scale, decimals) - target) < 1e-9 for value in values)


def printed_integer(number: str, values: set[float], scale: float = 1.0) -> bool:
    """Whether the integer `number` times `scale` is a printed number, or for a round number
    (100,000; 20 000) the rounding of one to its last non-zero digit (103,192 to 100,000);
    with a scale, the rounding of a printed number (35 % for 0.3504, 63 million for 63,119,496)."""
    target = int(number.replace(",", "").replace(" ", ""))
    if scale == 1.0 and float(target) in values:
        return True
    zeros = len(str(target)) - len(str(target).rstrip("0")) if target >= 100 else 0
    if scale == 0.01:  # 30% for a printed 0.3 or 30.0 (a cell that prints percentages)
        return any(round(v / scale) == target or v == target for v in values if v)
    if scale != 1.0:
        return any(round(v / scale) == target for v in values if v)
    return zeros > 0 and any(round(v, -zeros) == target for v in values)


def prose_integers(prose: str) -> list[re.Match[str]]:
    """The integers of a markdown cell's text that the check compares (see the docstring)."""
    found = []
    for match in INTEGER.finditer(prose):
        number = match["number"].replace(",", "").replace(" ", "")
        before = prose[max(0, match.start() - 40) : match.start()]
        if NAMED_PART.search(before):
            continue
        if len(number) == 4 and 1900 <= int(number) <= 2099 and not match["unit"]:  # a year
            continue
        found.append(match)
    return found


def _blank(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def markdown_prose(source: str) -> str:
    """A markdown cell's text without code, link targets, math, labels and list numbers."""
    prose = CODE.sub(" ", source)
    for pattern in (MATH, LABELS, ENUMERATION):
        prose = _blank(pattern, prose)
    return prose


def unmatched(path: Path, cited: set[str], sections: set[str]) -> list[Unmatched]:
    """The decimal numbers of one chapter's prose that its cells do not print."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    shown = code_and_outputs(nb)
    strings = set(PRINTED.findall(shown.replace(",", "")))  # 63,119,496 -> 63119496
    values = [float(s) for s in strings]
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        prose = CODE.sub(" ", "".join(cell["source"]))
        for match in DECIMAL.finditer(prose):
            number = match["number"]
            if match["exponent"]:
                scale = 10.0 ** int(match["exponent"].replace("−", "-"))
            else:
                scale = {"%": 0.01, "M": 1e6}.get((match["unit"] or "").strip(), 1.0)
            before = prose[max(0, match.start() - 10) : match.start()]
            if number in sections or REFERENCE.search(before) or number in cited:
                continue
            if not printed(number, strings, values, scale):
                context = prose[max(0, match.start() - 40) : match.end() + 20]
                found.append(Unmatched(path.stem, number, " ".join(context.split())))
        prose = markdown_prose("".join(cell["source"]))
        for match in prose_integers(prose):
            number = match["number"]
            if number.replace(",", "").replace(" ", "") in cited:
                continue
            scale = SCALE.get((match["unit"] or "").strip(), 1.0)
            if not printed_integer(number, set(values), scale):
                context = prose[max(0, match.start() - 40) : match.end() + 20]
                found.append(Unmatched(path.stem, number, " ".join(context.split())))
    return found


def check(paths: list[Path], cited_path: Path = CITED) -> list[Unmatched]:
    """Every unmatched number of the given chapters."""
    cited = load_cited(cited_path)
    sections = section_numbers(sorted(CHAPTERS.glob("*.ipynb")))
    paper = cited.get(PAPER, set())
    return [
        problem
        for path in paths
        for problem in unmatched(path, cited.get(path.stem, set()) | paper, sections)
    ]


CATALOGS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "chapters"
# In a catalog, a number next to a Chinese character is still a number (第 7 章, 第7章): word
# characters are ASCII here.
CATALOG_DECIMAL = re.compile(r"(?<![A-Za-z0-9_.])\d+\.\d+(?![A-Za-z0-9_.]*\d)", re.ASCII)
CATALOG_INTEGER = re.compile(
    r"(?<![A-Za-z0-9_.,\-−^_/{\\])(\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+(?![\d.])|\d+)"
    r"(?![A-Za-z0-9_.]*\d|[A-Za-z_])",
    re.ASCII,
)


@dataclass(frozen=True)
class Mistranslated:
    """A message of a chapter's catalog whose Chinese states other numbers than its English."""

    page: str
    english: str
    only_english: list[str]
    only_chinese: list[str]

    def __str__(self) -> str:
        return (
            f"{self.page}: numbers only in the English {self.only_english}, only in the "
            f"Chinese {self.only_chinese}: '{self.english[:70]}...'"
        )


# Numbers that English writes as words and Chinese often as digits (八个头 or 8 个头)
NUMBER_WORDS = dict(
    zip(
        "zero one two three four five six seven eight nine ten eleven twelve".split(),
        range(13),
        strict=True,
    )
)
WORD_NUMBER = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")s?\b", re.IGNORECASE)
# Units that scale a number: English million and billion, Chinese 万 and 亿 (450 万 = 4.5 million)
SCALED = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*(million|billion|万|亿)",
    re.ASCII,
)
UNITS = {"million": 1e6, "billion": 1e9, "万": 1e4, "亿": 1e8}


def message_numbers(text: str, english: bool = False) -> tuple[set[str], set[str]]:
    """(decimals, integers) of a message, outside code, math and link targets: integers written
    without thousands separators, a number with a unit (4.5 million, 450 万) as its value among
    the integers, and for English the numbers it writes as words (eight) among them too."""
    prose = markdown_prose(text).replace("\\.", ".")  # 1\. in a translated heading
    prose = re.sub(r"^\s*\d+\.\s", " ", prose, flags=re.MULTILINE)
    scaled = {f"{float(n) * UNITS[u]:.10g}" for n, u in SCALED.findall(prose)}
    prose = SCALED.sub(" ", prose)
    decimals = set(CATALOG_DECIMAL.findall(prose))
    integers = {n.replace(",", "").replace(" ", "") for n in CATALOG_INTEGER.findall(prose)}
    if english:
        integers |= {str(NUMBER_WORDS[w.lower()]) for w in WORD_NUMBER.findall(prose)}
    return decimals, integers | scaled


def check_catalog(po: Path) -> list[Mistranslated]:
    """Messages of a catalog whose translation has other numbers than the English: a decimal
    of either missing from the other (0.85 written as 85%), or an integer of the Chinese that
    the English does not have (a number left from an older English text)."""
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        catalog = read_po(handle)
    found = []
    for message in catalog:
        if not message.id or not message.string or message.fuzzy:
            continue
        english = message_numbers(str(message.id), english=True)
        chinese = message_numbers(str(message.string))
        only_english = sorted(english[0] - chinese[0])
        only_chinese = sorted((chinese[0] - english[0]) | (chinese[1] - english[1] - english[0]))
        if only_english or only_chinese:
            found.append(Mistranslated(po.stem, str(message.id), only_english, only_chinese))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or sorted(CHAPTERS.glob("*.ipynb"))
    problems: list[Unmatched | Mistranslated] = [*check(paths)]
    for path in paths:
        po = CATALOGS / f"{path.stem}.po"
        if po.is_file():
            problems += check_catalog(po)
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"{len(problems)} number(s) of the prose are printed by no cell: correct the text "
            f"to what the cells print, or list a cited number with its source in {CITED.name}"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
