"""Check the Chinese message catalogs (locale/zh_CN/LC_MESSAGES/*.po) against the English book.

The Chinese edition translates the book's prose through Sphinx's gettext catalogs: one .po per
page, whose msgids are the English paragraphs, headings and table cells as Sphinx extracts them
(`jupyter-book build . --builder custom --custom-builder gettext`). Code, outputs and figures are
not in the catalogs: they come from the one set of notebooks.

    python tools/i18n_check.py [POT_DIR]

lists every problem: a page without a catalog, an English message with no translation or a fuzzy
(out-of-date) one, and a translation that breaks the markup of its message. With no POT_DIR it
extracts the English messages into a temporary folder first (about 10 s).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES"

# Markup a translation must carry over unchanged. A {ref}`text <label>` may translate its text.
MARKUP = [
    r"\{[a-z:-]+\}`[^`]*`",  # MyST roles: {cite}`key`, {term}`word`, {ref}`text <label>`
    r"`[^`\n]+`",  # inline code
    r"\$\$.+?\$\$|\$[^$\n]+\$",  # math
    r"\]\([^)]+\)",  # link targets
    r"https?://\S+",
]


def markup(text: str) -> Counter[str]:
    """The markup spans of a message, as a multiset (each span counted once)."""
    found: Counter[str] = Counter()
    for pattern in MARKUP:
        for match in re.finditer(pattern, text, flags=re.S):
            found[re.sub(r"^(\{[a-z:-]+\})`[^`]*<([^>]+)>`$", r"\1`<\2>`", match.group(0))] += 1
        text = re.sub(pattern, " ", text, flags=re.S)
    return found


def _is_punctuation(ch: str) -> bool:
    return unicodedata.category(ch).startswith(("P", "S"))


def bold_problems(text: str) -> list[str]:
    """'**' delimiters that CommonMark will not pair because of Chinese punctuation.

    A closing '**' right after punctuation must be followed by a space or punctuation
    ('**取值有界。**无论' stays literal); an opening one right before punctuation must follow a
    space or punctuation.
    """
    problems = []
    for n, match in enumerate(re.finditer(r"\*\*", text), start=1):
        i, j = match.start(), match.end()
        before = text[i - 1] if i else " "
        after = text[j] if j < len(text) else " "
        closing = n % 2 == 0
        free_after = after.isspace() or _is_punctuation(after)
        free_before = before.isspace() or _is_punctuation(before)
        if closing and _is_punctuation(before) and not free_after:
            problems.append(f"'**' cannot close before {after!r}: put a space after it")
        if not closing and _is_punctuation(after) and not free_before:
            problems.append(f"'**' cannot open after {before!r}: put a space before it")
    return problems


def message_problems(english: str, chinese: str) -> list[str]:
    """What is wrong with one translation (empty when it is fine)."""
    problems = []
    lost, added = markup(english) - markup(chinese), markup(chinese) - markup(english)
    if lost or added:
        problems.append(f"markup differs: missing {sorted(lost)}, extra {sorted(added)}")
    problems += bold_problems(chinese)
    if re.match(r"\d+\. ", english) and re.match(r"\d+\. ", chinese):
        problems.append("a heading starting 'N. ' reads as a numbered list: write 'N\\. '")
    return problems


def extract(pot_dir: Path) -> None:
    """Write the English messages of every page into pot_dir (Sphinx's gettext builder)."""
    subprocess.run(
        [Path(sys.executable).parent / "jupyter-book", "build", str(ROOT), "--builder", "custom",
         "--custom-builder", "gettext", "--path-output", str(pot_dir)],
        check=True, capture_output=True,
    )  # fmt: skip


def problems(pot_root: Path, catalogs: Path = CATALOGS) -> list[str]:
    """Every problem of the catalogs against the English messages under pot_root."""
    found = []
    for pot in sorted(pot_root.rglob("*.pot")):
        page = pot.relative_to(pot_root).with_suffix("")
        if page.parts[0] == "_static":
            continue
        english = [m.id for m in read_po(pot.open("rb")) if m.id]
        po = catalogs / page.with_suffix(".po")
        if not po.is_file():
            found.append(f"{page}: no catalog {po} ({len(english)} messages)")
            continue
        catalog = {m.id: m for m in read_po(po.open("rb"), locale="zh_CN") if m.id}
        for number, message in enumerate(english):
            where = f"{page} #{number} {str(message)[:60]!r}"
            entry = catalog.get(message)
            if entry is None or not entry.string:
                found.append(f"{where}: no translation")
            elif entry.fuzzy:
                found.append(f"{where}: fuzzy (the English changed): check and unmark it")
            else:
                found += [f"{where}: {p}" for p in message_problems(message, entry.string)]
    return found


def main() -> int:
    if len(sys.argv) > 1:
        pot_root = Path(sys.argv[1])
        found = problems(pot_root)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            extract(Path(tmp))
            found = problems(Path(tmp) / "_build" / "gettext")
    print("\n".join(found) or "every message of every page has a translation")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
