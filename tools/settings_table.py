"""Write the instructor guide's table of grading settings from their declarations.

    .venv/bin/python tools/settings_table.py            # print the table
    .venv/bin/python tools/settings_table.py --write    # replace it in instructor_guide.md

Each setting is declared once, in ``autograder/settings.py`` (its name, default, unit and what
it limits); the guide's table under "### Settings" is one row per declaration, in their order.
``tests/unit/test_settings_table.py`` fails while the guide's table differs from this output.
After ``--write``, ``make i18n`` lists the rows whose Chinese translation is missing or fuzzy.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.settings import DECLARED, DESCRIPTIONS, Settings  # noqa: E402

GUIDE = REPO / "instructor_guide.md"
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


def table() -> str:
    defaults = Settings()
    rows = [
        f"| `{f.name}` | `{shown(getattr(defaults, f.name))}` | {DESCRIPTIONS[f.name]} |\n"
        for f in DECLARED
    ]
    return HEADER + "".join(rows)


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
            print(f"{GUIDE.name}: the settings table rewritten; run make i18n and translate")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
