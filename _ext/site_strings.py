"""Sphinx extension: the site's own words (theme, footer, tooltips) in the edition's language.

The pages' prose is translated through the per-page catalogs; the words around it come from the
theme's and Sphinx's own catalogs, which have gaps and regional usage for zh_CN: sphinx-book-theme
says 列印成 PDF (Taiwan) for "Print to PDF", Jupyter Book's "Search this book..." placeholder is a
theme option no catalog translates, and Sphinx 7.4's zh_CN catalog lacks the newer permalink
tooltips ("Link to this heading", "Link to this term") and pydata-sphinx-theme's footer
"© Copyright 2026.".

The book's own catalogs for these words live beside the pages' ones, in
locale/<language>/LC_MESSAGES/:

- sphinx.po: Sphinx's domain (permalink tooltips, the footer). Sphinx itself reads a sphinx.mo
  from `locale_dirs` before its own catalog, so these entries win (it compiles the .po).
- booktheme.po: sphinx-book-theme's domain ("Print to PDF", "Search this book..."). The theme
  registers only its own folder for that domain, so at `config-inited` this extension puts the
  book's catalog in front of the theme's (the theme's stays as the fallback) and translates the
  search placeholder, which Jupyter Book sets as a theme option.

A few of the theme's words are written into its templates without gettext (the titles of the
two sidebar buttons, "Toggle primary sidebar" and "Toggle secondary sidebar", and the labels that
screen readers announce for two navigation landmarks, aria-label="Main" and "Page"): no catalog
can reach them, so at `build-finished` this extension replaces those attribute values in the
built pages with their booktheme.po translations (HARD_CODED).

The English edition is untouched (no catalog is read for English).
"""

from __future__ import annotations

import gettext
from pathlib import Path

from babel.messages.pofile import read_po
from sphinx.locale import translators

DOMAIN = "booktheme"
# (attribute, English value) pairs that sphinx-book-theme's templates write without gettext
HARD_CODED = [
    ("title", "Toggle primary sidebar"),
    ("title", "Toggle secondary sidebar"),
    ("aria-label", "Main"),
    ("aria-label", "Page"),
]


class _Catalog(gettext.NullTranslations):
    """A translation from a .po file's entries (no .mo needed), falling back to the theme's."""

    def __init__(self, messages: dict[str, str]) -> None:
        super().__init__()
        self._messages = messages

    def gettext(self, message: str) -> str:
        if message in self._messages:
            return self._messages[message]
        return self._fallback.gettext(message) if self._fallback else message


def _messages(po: Path) -> dict[str, str]:
    """The translated, non-fuzzy entries of a .po file."""
    with po.open("rb") as handle:
        catalog = read_po(handle)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


def install(app, config) -> None:
    """`config-inited`: the book's booktheme catalog first; the search placeholder translated."""
    language = config.language or "en"
    if language.startswith("en"):
        return
    messages: dict[str, str] = {}
    for folder in config.locale_dirs:
        po = Path(app.srcdir, folder, language, "LC_MESSAGES", f"{DOMAIN}.po")
        if po.is_file():
            messages.update(_messages(po))
    if not messages:
        return
    ours = _Catalog(messages)
    theirs = translators.get(("general", DOMAIN))
    if theirs is not None:
        ours.add_fallback(theirs)
    translators["general", DOMAIN] = ours
    options = dict(config.html_theme_options or {})
    if options.get("search_bar_text"):
        options["search_bar_text"] = ours.gettext(options["search_bar_text"])
        config.html_theme_options = options


def _book_messages(app) -> dict[str, str]:
    """The book's booktheme.po translations for the edition's language ({} for English)."""
    language = app.config.language or "en"
    if language.startswith("en"):
        return {}
    messages: dict[str, str] = {}
    for folder in app.config.locale_dirs:
        po = Path(app.srcdir, folder, language, "LC_MESSAGES", f"{DOMAIN}.po")
        if po.is_file():
            messages.update(_messages(po))
    return messages


def replace_hard_coded(app, exception) -> None:
    """`build-finished`: the theme's words that no catalog reaches, translated in the pages."""
    if exception is not None or app.builder.format != "html":
        return
    messages = _book_messages(app)
    pairs = [
        (f'{attribute}="{english}"', f'{attribute}="{messages[english]}"')
        for attribute, english in HARD_CODED
        if english in messages
    ]
    if not pairs:
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        for old, translated in pairs:
            new = new.replace(old, translated)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app):
    app.connect("config-inited", install)
    app.connect("build-finished", replace_hard_coded)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
