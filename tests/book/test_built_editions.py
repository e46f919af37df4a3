"""The two editions as built: the Chinese one beside the English one, page for page.

`make book` builds the English book into _build/html/ and the Chinese one into _build/html/zh/
(tools/build_zh.py). These tests read the built site: every page has its twin, is in Chinese,
links to its twin, the table of contents is translated, and the Chinese search index holds the
course's terms whole. (The pieces, without a build: tests/unit/test_editions.py.)
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
ZH = SITE / "zh"
sys.path.insert(0, str(ROOT / "_ext"))
import zh_search  # noqa: E402

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")


def _pages(root: Path) -> set[str]:
    skip = {"_static", "_sources", "_images", "_downloads", "zh"}
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.html")
        if not skip.intersection(p.relative_to(root).parts[:-1])
    }


def _prose(page: Path) -> str:
    """The text of the page's article, without code, outputs, math, references and tags."""
    text = page.read_text(encoding="utf-8")
    match = re.search(r"<article[^>]*>(.*)</article>", text, flags=re.S)
    text = match.group(1) if match else ""
    text = re.split(r'<div[^>]*class="[^"]*citation-list', text)[0]  # references stay English
    text = re.sub(r"<(pre|script|style|code)\b.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r'<div class="cell_output.*?</div>\s*</div>', " ", text, flags=re.S)
    text = re.sub(r"\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


@pytest.fixture(scope="module")
def built():
    if not (ZH / "intro.html").is_file():
        pytest.fail("no Chinese edition in _build/html/zh: run `make book` first")
    return _pages(SITE), _pages(ZH)


def test_every_page_has_its_twin(built):
    english, chinese = built
    only = sorted(english - chinese), sorted(chinese - english)
    assert english == chinese, f"only in English: {only[0]}; only in Chinese: {only[1]}"
    assert len(english) > 20


def test_every_chinese_page_is_in_chinese(built):
    _, chinese = built
    for name in sorted(chinese - {"index.html", "search.html", "genindex.html"}):
        page = ZH / name
        assert '<html lang="zh-CN"' in page.read_text(encoding="utf-8"), name
        prose = _prose(page)
        han, latin = len(HAN.findall(prose)), len(LATIN.findall(prose))
        # the Chinese prose keeps English terms in parentheses, names and units: still, a page
        # whose translation is not applied has almost no Chinese and thousands of letters
        assert han > 0.5 * latin, f"{name}: {han} Chinese characters, {latin} Latin letters"


def test_every_page_links_to_its_twin(built):
    english, _ = built
    for name in sorted(english - {"index.html"}):
        for root, other in ((SITE, ZH), (ZH, SITE)):
            text = (root / name).read_text(encoding="utf-8")
            links = re.findall(r'<a class="btn btn-sm afz-language-switch" href="([^"]+)"', text)
            assert len(links) == 1, f"{root / name}: {len(links)} language switches"
            target = ((root / name).parent / links[0]).resolve()
            assert target == (other / name).resolve(), f"{root / name} links to {target}"


def test_the_table_of_contents_captions_are_translated():
    text = (ZH / "intro.html").read_text(encoding="utf-8")
    captions = re.findall(r'<span class="caption-text">([^<]+)</span>', text)
    assert captions and all(HAN.search(c) for c in captions), captions


def test_the_chinese_search_index_holds_course_terms():
    raw = (ZH / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(raw[raw.index("(") + 1 : raw.rindex(")")])
    terms = set(index["terms"]) | set(index["titleterms"])
    docnames = index["docnames"]
    for word, page in [("注意力", "chapters/02_attention_by_hand"), ("猫", None)]:
        assert word in terms, f"{word!r} is not in the Chinese search index"
        if page:
            hits = [index[kind].get(word, []) for kind in ("terms", "titleterms")]
            hits = [i for h in hits for i in ([h] if isinstance(h, int) else h)]
            assert page in {docnames[i] for i in hits}, f"{word!r} does not lead to {page}"
    for term in zh_search.course_terms()[:50]:
        if HAN.search(term) and not re.search(r"[/、，,;；\s]", term):
            found = term in terms or any(term in t for t in terms)
            assert found or term in raw, f"the course term {term!r} is not indexed"
    assert "的" not in terms, "function words are indexed"


def test_the_web_font_is_noto_sans_cjk_sc_regular_and_bold():
    """The Chinese edition's font script carries two faces of Noto Sans CJK SC, the regular one
    for weights 100-500 and the bold one for 600-900 (the browser test checks that bold text is
    drawn with the bold face)."""
    import base64
    import io

    from fontTools.ttLib import TTFont

    script = (ZH / "_static" / "cjk-font.js").read_text(encoding="utf-8")
    faces = re.findall(r'face\("([A-Za-z0-9+/=]+)", "([0-9 ]+)"\)', script)
    assert [weight for _, weight in faces] == ["100 500", "600 900"], [w for _, w in faces]
    names = []
    for data, _ in faces:
        font = TTFont(io.BytesIO(base64.b64decode(data)))
        names.append((font["name"].getDebugName(1), font["OS/2"].usWeightClass))
        assert "猫" in "".join(chr(c) for c in font.getBestCmap()), "the subset lacks 猫"
    assert names == [("Noto Sans CJK SC", 400), ("Noto Sans CJK SC", 700)], names
