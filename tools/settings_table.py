"""Write the instructor guide's table of grading settings, and its Chinese rows, from the
settings' declarations.

    .venv/bin/python tools/settings_table.py            # print the table
    flock /tmp/afz-i18n.lock .venv/bin/python tools/settings_table.py --write

Each setting is declared once, in ``autograder/settings.py`` (its name, default, unit, what it
limits in English and in Chinese); the guide's table under "### Settings" is one row per
declaration, in their order. ``--write`` replaces that table in ``instructor_guide.md`` and
sets the Chinese catalog's messages of its cells (``locale/zh_CN/LC_MESSAGES/
instructor_guide.po``: the name and the default as they are, the description in Chinese;
a row the catalog does not have yet is added, and the next ``make i18n`` puts it in its
place). ``tests/unit/test_settings_table.py`` fails while the guide or the catalog differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tools")]

from guide_catalog import CATALOG, GUIDE, write_messages  # noqa: E402  (tools/ is not a package)

from autograder.settings import DECLARED, DESCRIPTIONS, DESCRIPTIONS_ZH, Settings  # noqa: E402

HEADER = "| setting | default | what it limits |\n|---|---|---|\n"


def shown(value: object) -> str:
    """A default as the guide writes it, in TOML: ``true``, ``180``, ``""``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def cells() -> list[tuple[str, str, str]]:
    """Each declared setting's row: its name, its default and what it limits, as Markdown."""
    defaults = Settings()
    return [
        (f"`{f.name}`", f"`{shown(getattr(defaults, f.name))}`", DESCRIPTIONS[f.name])
        for f in DECLARED
    ]


def translations() -> dict[str, str]:
    """The Chinese of every cell of the table: the names and defaults stay as they are."""
    found: dict[str, str] = {}
    for f, (name, default, description) in zip(DECLARED, cells(), strict=True):
        found |= {name: name, default: default, description: DESCRIPTIONS_ZH[f.name]}
    return found


def table() -> str:
    return HEADER + "".join(f"| {' | '.join(row)} |\n" for row in cells())


def write_catalog(path: Path = CATALOG) -> bool:
    """Set the catalog's message of every cell of the table; True if the catalog changed."""
    return write_messages(translations(), path)


def replaced(guide: str) -> str:
    """``guide`` with the table under its "### Settings" heading replaced by :func:`table`."""
    section = guide.index("\n### Settings\n")
    start = guide.index(HEADER, section)
    end = guide.index("\n\n", start)
    return guide[:start] + table() + guide[end + 1 :]


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        text = GUIDE.read_text(encoding="utf-8")
        new = replaced(text)
        if new != text:
            GUIDE.write_text(new, encoding="utf-8")
            print(f"{GUIDE.name}: the settings table rewritten")
        if write_catalog():
            print(f"{CATALOG.relative_to(REPO)}: the settings table's rows written")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
