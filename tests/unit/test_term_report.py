"""The Chinese edition keeps one Chinese term per concept (tools/term_report.py, terms.yml)."""

import re
import shutil
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import term_report  # noqa: E402


@pytest.fixture(scope="module")
def base():
    return term_report.load_terms()


def edited_catalogs(tmp_path: Path, page: str, old: str, new: str) -> Path:
    """A copy of the catalogs where the first translation of page containing old has new instead."""
    catalogs = tmp_path / "LC_MESSAGES"
    shutil.copytree(term_report.CATALOGS, catalogs, ignore=shutil.ignore_patterns("*.mo"))
    po = catalogs / f"{page}.po"
    catalog = read_po(po.open("rb"), locale="zh_CN")
    message = next(m for m in catalog if m.id and old in m.string)
    message.string = message.string.replace(old, new, 1)
    with po.open("wb") as f:
        write_po(f, catalog, width=0)
    return catalogs


def flags(catalogs: Path) -> list[term_report.Flag]:
    return [flag for page in term_report.report(catalogs) for flag in page.flags]


def test_the_catalogs_keep_every_term():
    found = flags(term_report.CATALOGS)
    assert found == [], f"{len(found)} flags, first:\n" + "\n".join(map(str, found[:20]))


def test_every_page_is_reported_in_reading_order():
    pages = [page.page for page in term_report.report()]
    assert pages[:3] == ["intro", "chapters/01_why_attention", "chapters/02_attention_by_hand"]
    assert pages.index("exercises") < pages.index("exercises/01_attention/attention")
    assert len(pages) == len(list(term_report.CATALOGS.rglob("*.po"))) + 1
    # after the book's pages, with the catalogs of the site's own words (sphinx, booktheme)
    assert pages.index(term_report.FIGURE_LABELS) > pages.index("notes_on_the_article")


def test_the_figure_labels_are_scanned_too(tmp_path):
    """A variant in a figure's label (locale/zh_CN/figure_labels.po) is flagged as on a page."""
    catalogs = tmp_path / "LC_MESSAGES"
    shutil.copytree(term_report.CATALOGS, catalogs, ignore=shutil.ignore_patterns("*.mo"))
    labels = term_report.CATALOGS.parent / "figure_labels.po"
    text = labels.read_text(encoding="utf-8")
    assert 'msgstr "最后一个输出对前面每个词元的依赖程度"' in text
    assert flags(catalogs) == []  # no label file: nothing to flag
    planted = text.replace("前面每个词元的依赖程度", "前面每个词元的依赖程度（前向计算）", 1)
    (tmp_path / "figure_labels.po").write_text(planted, encoding="utf-8")
    found = flags(catalogs)
    assert [(f.page, f.kind, f.term.english) for f in found] == [
        (term_report.FIGURE_LABELS, "a", "forward pass")
    ], found


def test_the_term_base_is_the_glossary(base):
    """Every glossary headword is a glossary concept with the glossary's own Chinese term."""
    source = (ROOT / "glossary.md").read_text(encoding="utf-8")
    block = source.split("```{glossary}")[1].split("```")[0]
    headwords = re.findall(r"^(\S[^\n]*)$", block, flags=re.M)
    assert len(headwords) == 40
    terms = {t.english: t for t in base.terms if t.glossary}
    assert sorted(terms) == sorted(headwords)
    catalog = [m for m in read_po((term_report.CATALOGS / "glossary.po").open("rb")) if m.id]
    for headword, definition in zip(catalog, catalog[1:], strict=False):
        if headword.id in terms:
            chinese = terms[headword.id].chinese
            assert definition.string.startswith(chinese), (headword.id, definition.string[:20])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("箭头指向下一层", []),
        ("一个关键的细节", []),
        ("在笔记本电脑上", []),
        ("均值和方差都取最大值", []),
        ("每个头的维度", ["head"]),
        ("层归一化", ["layer normalization"]),
        ("因果掩码和掩码自注意力", ["causal mask", "masked self-attention"]),
        ("多头注意力", ["multi-head attention"]),
        ("查询、键和值", ["query", "key", "value"]),
        ("一次批量矩阵乘积", ["batch!"]),
        ("随机失活（dropout）", ["dropout"]),
        ("在 dropout 之后", ["dropout!"]),
        ("（在 post-norm 中）", ["post-norm!"]),
        ("后置归一化（post-norm，论文的做法）", ["post-norm"]),
        ("用 `dropout=0.1` 构建", []),
    ],
)
def test_find_terms(base, text, expected):
    """Uses and variants (marked !) found in a text, without false alarms on other words."""
    hits = term_report.find_terms(term_report.blank_markup(text), base)
    assert [h.term.english + ("!" if h.kind == "variant" else "") for h in hits] == expected


def test_a_variant_is_flagged(tmp_path):
    catalogs = edited_catalogs(tmp_path, "chapters/03_multi_head_attention", "批次", "批量")
    found = flags(catalogs)
    assert [(f.page, f.kind, f.term.english, f.text) for f in found] == [
        ("chapters/03_multi_head_attention", "a", "batch", "批量")
    ]
    assert term_report.main(["--catalogs", str(catalogs), "--flags-only"]) == 1


def test_a_variant_is_flagged_on_every_page(tmp_path):
    catalogs = edited_catalogs(tmp_path, "instructor_guide", "随机失活", "丢弃法")
    assert [(f.page, f.kind, f.text) for f in flags(catalogs)] == [
        ("instructor_guide", "a", "丢弃法")
    ]


@pytest.mark.parametrize(
    ("page", "old", "new", "term"),
    [
        ("chapters/02_attention_by_hand", "掩码（mask）", "掩码", "mask"),
        ("chapters/01_why_attention", "注意力（attention）", "注意力", "attention"),
        (
            "exercises/04_encoder/encoder",
            "前馈网络（feed-forward network）",
            "前馈网络",
            "feed-forward network",
        ),
    ],
)
def test_a_first_use_without_english_is_flagged(tmp_path, page, old, new, term):
    found = flags(edited_catalogs(tmp_path, page, old, new))
    assert [(f.page, f.kind, f.term.english) for f in found] == [(page, "b", term)]


def test_only_chapters_and_exercises_need_the_english_at_first_use(tmp_path):
    catalogs = edited_catalogs(tmp_path, "notes_on_the_article", "注意力（attention）", "注意力")
    assert flags(catalogs) == []
    assert term_report.main(["--catalogs", str(catalogs), "--flags-only"]) == 0


def test_a_variant_elided_in_a_list_is_flagged(tmp_path, base):
    """学习得到的、 in a list whose items share the head noun 位置编码 is the variant
    学习得到的位置编码 (the notes once had it, and the check missed it); the chosen term's own
    modifier, 可学习的、, is not a variant."""
    english = "sinusoidal, learned, rotary, ALiBi and no positions"
    elided = "正弦、学习得到的、旋转、ALiBi 以及不加位置编码"
    found = term_report.report_page("notes_on_the_article", [(english, elided)], base).flags
    assert [(f.kind, f.text, f.term.english) for f in found] == [
        ("a", "学习得到的", "learned positions")
    ]
    chosen = "正弦、可学习的、旋转、ALiBi 以及不加位置编码"
    assert term_report.report_page("notes_on_the_article", [(english, chosen)], base).flags == []
    assert term_report.elided_variant("只有解码器的", "仅解码器") is None  # no head noun
