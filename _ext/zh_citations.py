"""Sphinx extension: citations in the Chinese edition read 等人, not "et al.".

sphinxcontrib-bibtex writes the author part of an author-year citation itself ("Vaswani et al.,
2017"), outside every message catalog, so the Chinese pages showed the Latin abbreviation. This
extension registers a referencing style, `author_year_zh`: the book's author-year style with
the persons joined the Chinese way (Vaswani 等人, 2017; Ba 和 Hinton, 2016), and selects it at
`config-inited` when the build's `language` is Chinese. The bibliography entries themselves stay
as published (author names and titles in their own language, as Chinese textbooks list them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pybtex.richtext import Text
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

STYLE = "author_year_zh"


def _chinese_persons() -> PersonStyle:
    return PersonStyle(sep="、", sep2=" 和 ", last_sep=" 和 ", other=Text(" 等人"))


@dataclass
class ChineseAuthorYearStyle(AuthorYearReferenceStyle):
    """Author-year references with 等人 and 和 between the authors."""

    person: PersonStyle = field(default_factory=_chinese_persons)


def select(app, config) -> None:
    """`config-inited`: the Chinese edition cites with the Chinese style."""
    if (config.language or "").startswith("zh") and config.bibtex_reference_style == "author_year":
        config.bibtex_reference_style = STYLE


def setup(app):
    register_plugin("sphinxcontrib.bibtex.style.referencing", STYLE, ChineseAuthorYearStyle)
    app.connect("config-inited", select)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
