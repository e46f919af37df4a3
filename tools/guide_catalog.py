"""The instructor guide and its Chinese catalog, as the tools that write the guide's measured or
declared tables use them (``tools/settings_table.py``, ``tools/grading_table.py``); the same
writing serves ``tools/exercises_page.py`` for the exercises page's catalog.

A table's Chinese is one message per cell in ``locale/zh_CN/LC_MESSAGES/instructor_guide.po``;
:func:`write_messages` sets those messages and writes the catalog as ``make i18n`` writes it.
Run a tool that writes under the i18n lock where several people work
(``flock /tmp/afz-i18n.lock ...``).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "instructor_guide.md"
CATALOG = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "instructor_guide.po"
GUIDE_LOCATION = "../../../../instructor_guide.md"  # as Sphinx's gettext builder names the page
WIDTH = 76  # sphinx-intl's line width, so that the catalog is written as make i18n writes it


def write_messages(
    messages: dict[str, str], path: Path = CATALOG, location: str = GUIDE_LOCATION
) -> bool:
    """Set the catalog's Chinese of each English message of ``messages``; True if the catalog
    changed. A message the catalog does not have yet is added at ``location`` (the page, as
    Sphinx names it; the next ``make i18n`` puts it in its place); a fuzzy one loses its flag."""
    from sphinx_intl import catalog as po

    catalog = po.load_po(str(path))
    changed = False
    for english, chinese in messages.items():
        message = catalog.get(english)
        if message is None:
            catalog.add(english, chinese, locations=[(location, None)])
            changed = True
        elif message.string != chinese or message.fuzzy:
            message.string = chinese
            message.flags.discard("fuzzy")
            changed = True
    if changed:
        po.dump_po(str(path), catalog, width=WIDTH, ignore_obsolete=False)
    return changed
