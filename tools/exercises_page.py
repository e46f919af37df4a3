"""Write the "you write" column of the exercises page, and its Chinese, from the exercises' tasks.

    .venv/bin/python tools/exercises_page.py            # print each exercise's cell
    flock /tmp/afz-i18n.lock .venv/bin/python tools/exercises_page.py --write

An exercise's tasks are the Markdown cells of its source notebook (``solutions/<name>/``) whose
nbgrader ``grade_id`` starts with ``task`` and whose heading reads ``## Task N — what (P
points)``; its cell in ``exercises.md`` is the list of those ``what``, in order, joined by
"; ". The Chinese comes from the same headings in the exercise's catalog
(``locale/zh_CN/LC_MESSAGES/exercises/<name>/<notebook>.po``: ``任务 N——what（P 分）``), so a
new task is written once, in its notebook, and translated once, in that catalog. ``--write``
rewrites the column in ``exercises.md`` and sets the cells' messages in
``locale/zh_CN/LC_MESSAGES/exercises.po``; ``tests/unit/test_exercises_page.py`` fails while
either differs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tools")]

from guide_catalog import write_messages  # noqa: E402  (tools/ is not a package)

from checks.exercises import EXERCISES  # noqa: E402

PAGE = REPO / "exercises.md"
CATALOG = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "exercises.po"
PAGE_LOCATION = "../../../../exercises.md"  # as Sphinx's gettext builder names the page
COLUMN = 2  # | exercise | notebook | you write | read first |

HEADING = re.compile(r"## Task \d+ — (?P<what>.+) \([\d +]+ points?\)")
HEADING_ZH = re.compile(r"任务 \d+——(?P<what>.+)（[\d +]+ 分）")


def notebook(name: str) -> Path:
    (found,) = sorted((REPO / "solutions" / name).glob("*.ipynb"))
    return found


def headings(name: str) -> list[str]:
    """The task headings of exercise ``name``'s source notebook, without their ``## ``."""
    cells = json.loads(notebook(name).read_text(encoding="utf-8"))["cells"]
    found = []
    for cell in cells:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        first = "".join(cell["source"]).split("\n", 1)[0]
        if cell["cell_type"] == "markdown" and grade_id.startswith("task"):
            if HEADING.fullmatch(first):
                found.append(first.removeprefix("## "))
    return found


def cell(name: str) -> str:
    """Exercise ``name``'s "you write" cell: what each task asks, in order."""
    return "; ".join(HEADING.fullmatch("## " + h)["what"] for h in headings(name))  # type: ignore[index]


def cell_zh(name: str) -> str:
    """The Chinese of :func:`cell`, from the headings' translations in the exercise's catalog."""
    from babel.messages.pofile import read_po

    path = REPO / "locale/zh_CN/LC_MESSAGES/exercises" / name / (notebook(name).stem + ".po")
    with path.open("rb") as f:
        catalog = read_po(f)
    parts = []
    for heading in headings(name):
        message = catalog.get(heading)
        match = HEADING_ZH.fullmatch(message.string) if message and not message.fuzzy else None
        if match is None:
            raise SystemExit(
                f"{path.relative_to(REPO)}: translate the heading {heading!r} as "
                "'任务 N——...（P 分）' (make i18n adds it to the catalog), then run this again"
            )
        parts.append(match["what"])
    return "；".join(parts)


def row_index(lines: list[str], name: str) -> int:
    (index,) = [i for i, line in enumerate(lines) if f"](exercises/{name}/" in line]
    return index


def replaced(page: str) -> str:
    """``page`` with every exercise's "you write" cell rewritten from its tasks."""
    lines = page.split("\n")
    for exercise in EXERCISES:
        i = row_index(lines, exercise.name)
        cells = lines[i].split(" | ")
        cells[COLUMN] = cell(exercise.name)
        lines[i] = " | ".join(cells)
    return "\n".join(lines)


def translations() -> dict[str, str]:
    return {cell(e.name): cell_zh(e.name) for e in EXERCISES}


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        text = PAGE.read_text(encoding="utf-8")
        new = replaced(text)
        if new != text:
            PAGE.write_text(new, encoding="utf-8")
            print(f"{PAGE.name}: the 'you write' column rewritten")
        if write_messages(translations(), CATALOG, PAGE_LOCATION):
            print(f"{CATALOG.relative_to(REPO)}: the column's cells written")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for english, chinese in translations().items():
        print(f"{english}\n  {chinese}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
