"""Find numbers in a chapter's prose that none of its stored outputs prints.

    .venv/bin/python tools/prose_numbers.py [chapters/05_residual_and_layernorm.ipynb ...]

A chapter states measured numbers in its text ("held-out accuracy 0.9775"); when the chapter is
executed again and a cell prints something else, the text is left behind. This check reads the
stored notebook only (no execution): every decimal number written in a markdown cell (outside
code spans, code blocks and link targets) must appear among the numbers of the chapter's code
cells, their sources or their stored outputs, either as written or as the rounding of a printed
number (0.98 for a printed 0.9775), or be listed in chapters/cited_numbers.yml with its
source: the paper's values, the article's, and the few numbers the text derives by hand.
Integers are not checked (they are mostly settings: 12 layers, 512 dimensions), nor are
section numbers (§5.2, "section 6.3", or a heading number of the book). Timings are a special
case: a cell that prints them is not reproducible, so the text should cite the ratios or slopes
the cell prints, which this check then compares like any other number.

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

DECIMAL = re.compile(
    r"(?<![\w.])(?P<number>\d+\.\d+)(?![\w.]*\d)"
    r"(?:\s*\\cdot\s*10\^\{?(?P<exponent>[-−]?\d+)\}?|(?P<unit>\s?%|M\b))?"
)
PRINTED = re.compile(r"\d+\.\d+(?:[eE][-+]?\d+)?|\d+")
HEADING = re.compile(r"^#+\s+(\d+\.\d+)\b", re.MULTILINE)
REFERENCE = re.compile(r"(?:§|[Ss]ections?\s|[Ss]ection\s)\s*$")
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
                if not printed(value, strings, [float(s) for s in strings]):
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
        parts.append("".join(cell["source"]))
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
    63.1 with scale 1e6 for 63,119,496)."""
    if scale == 1.0 and number in strings:
        return True
    decimals = len(number.split(".")[1])
    target = float(number)
    return any(abs(round(value / scale, decimals) - target) < 1e-9 for value in values)


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
    return found


def check(paths: list[Path], cited_path: Path = CITED) -> list[Unmatched]:
    """Every unmatched number of the given chapters."""
    cited = load_cited(cited_path)
    sections = section_numbers(sorted(CHAPTERS.glob("*.ipynb")))
    return [
        problem
        for path in paths
        for problem in unmatched(path, cited.get(path.stem, set()), sections)
    ]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    paths = [Path(a) for a in args] or sorted(CHAPTERS.glob("*.ipynb"))
    problems = check(paths)
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
