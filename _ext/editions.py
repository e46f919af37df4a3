"""Sphinx extension: the English and the Chinese edition, each page linked to its twin.

The English book is built into `_build/html/` and the Chinese one into `_build/html/zh/`
(`tools/build_zh.py`), from the same sources and the same table of contents, so every page
exists in both under the same name. This extension

- puts a button in each page's header ("中文" on an English page, "English" on a Chinese one)
  and `<link rel="alternate" hreflang>` tags in its head;
- translates the captions of the table of contents (Chapters, Exercises, ...) from the root
  page's catalog: Sphinx extracts them for translation but does not apply the translation to
  the toctrees that sphinx-external-toc inserts.

The edition a build makes is read from Sphinx's `language`.
"""

from __future__ import annotations

from pathlib import Path

from sphinx import addnodes
from sphinx.locale import init as init_locale
from sphinx.util.i18n import docname_to_domain

# language code -> (folder of that edition below the English root, hreflang, switch label)
EDITIONS = {
    "en": ("", "en", "English"),
    "zh_CN": ("zh/", "zh-CN", "中文"),
}
TEMPLATE = "language-switch.html"
CSS = "editions.css"
HERE = Path(__file__).resolve().parent


def edition(language: str | None) -> str:
    """The edition a build with this Sphinx `language` makes (anything not Chinese is English)."""
    return "zh_CN" if (language or "").startswith("zh") else "en"


def href(pagename: str, source: str, target: str) -> str:
    """Relative URL from `pagename` of edition `source` to the same page of edition `target`.

    >>> href("chapters/01_why_attention", "en", "zh_CN")
    '../zh/chapters/01_why_attention.html'
    >>> href("intro", "zh_CN", "en")
    '../intro.html'
    """
    up = "../" * pagename.count("/")
    to_root = "../" * EDITIONS[source][0].count("/")  # from this edition's root to the English one
    return f"{up}{to_root}{EDITIONS[target][0]}{pagename}.html"


def add_switch(app, pagename, templatename, context, doctree) -> None:
    """`html-page-context`: the other editions' URLs for the header button and the head."""
    here = edition(app.config.language)
    links = []
    for code, (_folder, hreflang, label) in EDITIONS.items():
        url = href(pagename, here, code)
        if code != here:
            links.append({"href": url, "hreflang": hreflang, "label": label})
        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" hreflang="{hreflang}" href="{url}" />'
        )
    context["afz_other_editions"] = links


def translate_captions(app, doctree) -> None:
    """`doctree-read`: toctree captions in the page's own catalog (non-English builds only)."""
    if edition(app.config.language) == "en":
        return
    toctrees = [node for node in doctree.findall(addnodes.toctree) if node.get("caption")]
    if not toctrees:
        return
    docname = app.env.docname
    domain = docname_to_domain(docname, app.config.gettext_compact)
    dirs = [str(Path(app.srcdir, d)) for d in app.config.locale_dirs]
    catalog, found = init_locale(dirs, app.config.language, domain)
    if found:
        for node in toctrees:
            node["caption"] = catalog.gettext(node["caption"])


def configure(app, config) -> None:
    """`config-inited`: the template and style of the button, first in the article header."""
    config.templates_path = [*config.templates_path, str(HERE / "templates")]
    config.html_static_path = [*config.html_static_path, str(HERE / "static")]
    options = dict(config.html_theme_options or {})
    end = options.get("article_header_end") or ["article-header-buttons.html"]
    if isinstance(end, str):
        end = [item.strip() for item in end.split(",") if item.strip()]
    if TEMPLATE not in end:
        options["article_header_end"] = [TEMPLATE, *end]
    config.html_theme_options = options


def setup(app):
    app.connect("config-inited", configure)
    app.connect("doctree-read", translate_captions)
    app.connect("html-page-context", add_switch)
    app.add_css_file(CSS)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
