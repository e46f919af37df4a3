"""The two editions: the Chinese one is built beside the English one, page for page.

`make book` builds the English book into _build/html/ and the Chinese one into _build/html/zh/
(tools/build_zh.py): the same pages from the same notebooks, the prose from the catalogs in
locale/zh_CN/LC_MESSAGES/. These tests check the pieces (the switch's URLs, the Chinese
search language); tests/book/test_built_editions.py reads the built site: every page has its
twin, is in Chinese, links to its twin, and the Chinese search index holds the course's terms
whole.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
import editions  # noqa: E402
import zh_search  # noqa: E402

# ----------------------------------------------------------------------------------------------
# the pieces


@pytest.mark.parametrize(
    ("pagename", "source", "target", "expected"),
    [
        ("intro", "en", "zh_CN", "zh/intro.html"),
        ("intro", "zh_CN", "en", "../intro.html"),
        ("chapters/02_x", "en", "zh_CN", "../zh/chapters/02_x.html"),
        ("chapters/02_x", "zh_CN", "en", "../../chapters/02_x.html"),
        ("exercises/01_attention/01_attention", "zh_CN", "en",
         "../../../exercises/01_attention/01_attention.html"),
        ("glossary", "en", "en", "glossary.html"),
        ("glossary", "zh_CN", "zh_CN", "../zh/glossary.html"),
    ],
)  # fmt: skip
def test_switch_urls_lead_to_the_same_page(pagename, source, target, expected):
    assert editions.href(pagename, source, target) == expected


@pytest.mark.parametrize(
    ("language", "expected"), [(None, "en"), ("en", "en"), ("zh_CN", "zh_CN"), ("zh", "zh_CN")]
)
def test_the_edition_follows_sphinx_language(language, expected):
    assert editions.edition(language) == expected


@pytest.fixture
def chinese_search(tmp_path, monkeypatch):
    terms = tmp_path / "terms.yml"
    terms.write_text(
        "- english: scaled dot-product attention\n  chinese: 缩放点积注意力\n"
        "- english: layer normalization\n  chinese: 层归一化\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(zh_search, "TERMS", terms)
    return zh_search.SearchCourseChinese({})


def test_the_index_keeps_course_terms_whole_and_in_parts(chinese_search):
    words = chinese_search.split("缩放点积注意力先算分数，再做层归一化")
    assert "缩放点积注意力" in words, words
    assert {"缩放", "注意力"} <= set(words), words  # and its parts, as far as jieba knows them
    assert "层归一化" in words, words


def test_the_index_keeps_one_character_words_but_not_function_words(chinese_search):
    assert chinese_search.word_filter("猫")
    assert chinese_search.word_filter("垫子")
    assert not chinese_search.word_filter("a")  # as Sphinx: one Latin letter is noise
    assert not chinese_search.word_filter("的")
    assert not chinese_search.word_filter("the")
    assert {"的", "了", "和"} <= chinese_search.stopwords
    assert "the" in chinese_search.stopwords


def test_course_terms_read_the_term_base(tmp_path):
    terms = tmp_path / "terms.yml"
    terms.write_text("- {english: batch, chinese: 批次}\n- {english: x}\n", encoding="utf-8")
    assert zh_search.course_terms(terms) == ["批次"]
    assert zh_search.course_terms(tmp_path / "absent.yml") == []


def test_theme_words_without_gettext_are_translated_in_the_built_pages(tmp_path):
    """sphinx-book-theme writes a few words into its templates without gettext (the sidebar
    buttons' titles, two landmarks' aria-labels): _ext/site_strings.py replaces them in the
    Chinese pages from booktheme.po, and leaves the English edition alone."""
    from types import SimpleNamespace

    import site_strings

    page = tmp_path / "chapters" / "x.html"
    page.parent.mkdir()
    html = (
        '<button title="Toggle primary sidebar"></button><nav aria-label="Main"></nav>'
        '<button title="Toggle secondary sidebar"></button><nav aria-label="Page"></nav>'
        "<p>Main Page</p>"
    )

    def app(language):
        page.write_text(html, encoding="utf-8")
        config = SimpleNamespace(language=language, locale_dirs=["locale/"])
        builder = SimpleNamespace(format="html")
        return SimpleNamespace(config=config, srcdir=ROOT, outdir=tmp_path, builder=builder)

    site_strings.replace_hard_coded(app("zh_CN"), None)
    translated = page.read_text(encoding="utf-8")
    for attribute, english in site_strings.HARD_CODED:
        assert f'{attribute}="{english}"' not in translated
    assert 'title="显示或隐藏左侧目录"' in translated and 'aria-label="全书目录"' in translated
    assert "<p>Main Page</p>" in translated  # only the attribute values
    site_strings.replace_hard_coded(app("en"), None)
    assert page.read_text(encoding="utf-8") == html
