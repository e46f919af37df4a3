"""The Chinese edition's figures: Chinese labels rendered at execution time, shown by the zh build.

tools/bilingual_figures.py renders each figure of an executed chapter a second time with the
labels of locale/zh_CN/figure_labels.po and stores it in the output's metadata;
_ext/zh_figures.py makes the Chinese build show it. These tests check the stored chapters, the
catalog, the swap of labels in a figure, and the swap of images in the Chinese build only (in
a real Sphinx build: tests/book/test_zh_figures_build.py).
"""

from __future__ import annotations

import base64
import json
import re
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import nbformat
import pytest
from babel.messages.pofile import read_po

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from IPython.core.pylabtools import print_figure  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.text import Text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "_ext"))

import bilingual_figures as bf  # noqa: E402
import zh_figures  # noqa: E402

from helpers.pictures.plotting import missing_glyphs  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIX = "execute it with: .venv/bin/python tools/execute_chapters.py {}"

# The inline backend's PNG formatter, as matplotlib_inline registers it.
english_png = partial(print_figure, fmt="png", base64=True, bbox_inches="tight")


@pytest.fixture(scope="module")
def catalog():
    return bf.read_catalog()


@pytest.fixture(scope="module")
def chapters():
    return {path.stem: nbformat.read(path, as_version=4) for path in CHAPTERS}


# ----------------------------------------------------------------------------------------------
# (a) the stored chapters and the catalog


@pytest.mark.parametrize("stem", [p.stem for p in CHAPTERS])
def test_every_figure_with_word_labels_has_a_chinese_render(chapters, catalog, stem):
    nb = chapters[stem]
    images = bf.image_outputs(nb)
    fix = FIX.format(f"chapters/{stem}.ipynb")
    for index, output in images:
        meta = output.get("metadata", {}).get("image/png", {})
        assert bf.LABELS_KEY in meta, f"{stem}, cell {index}: figure made without Chinese; {fix}"
        labels = meta[bf.LABELS_KEY]
        assert all(bf.is_word_label(label) for label in labels), labels
        if labels:
            zh = base64.b64decode(meta[bf.ZH_KEY])
            assert zh.startswith(PNG_SIGNATURE), f"{stem}, cell {index}: not a PNG"
    problems = bf.figure_problems(nb, catalog)
    assert problems == [], (
        f"{stem}: " + "; ".join(problems[:10]) + " -- translate the labels in "
        f"locale/zh_CN/figure_labels.po, then {fix}"
    )


def test_the_chapters_have_chinese_figures(chapters):
    stored = [
        output.metadata["image/png"]
        for nb in chapters.values()
        for _, output in bf.image_outputs(nb)
        if bf.ZH_KEY in output.get("metadata", {}).get("image/png", {})
    ]
    # 36 figures in 10 chapters when this was written; every one of them has word labels.
    assert len(stored) >= 36
    assert sum(len(meta[bf.LABELS_KEY]) for meta in stored) >= 200


def test_the_catalog_is_complete_and_clean(chapters):
    with open(bf.CATALOG, "rb") as handle:
        entries = [m for m in read_po(handle) if m.id]
    placeholder = re.compile(r"\{\d+\}")
    used = set()
    for nb in chapters.values():
        for _, output in bf.image_outputs(nb):
            for label in output.get("metadata", {}).get("image/png", {}).get(bf.LABELS_KEY, {}):
                used.add(label)
                used.add(bf.number_template(label)[0])
    for m in entries:
        assert m.string.strip(), f"figure_labels.po: {m.id!r} has no translation"
        assert not m.fuzzy, f"figure_labels.po: {m.id!r} is fuzzy"
        assert sorted(placeholder.findall(m.id)) == sorted(placeholder.findall(m.string)), (
            f"figure_labels.po: {m.string!r} must keep the placeholders of {m.id!r}"
        )
        assert m.id in used, f"figure_labels.po: {m.id!r} is drawn in no figure: remove it"


def test_every_chinese_label_has_glyphs(catalog):
    dejavu = font_manager.findfont("DejaVu Sans", fallback_to_default=False)
    for english, chinese in catalog.items():
        # drawn with the text's own font (DejaVu Sans or Noto Sans CJK), the CJK font as fallback
        tofu = [c for c in missing_glyphs(chinese) if c in missing_glyphs(c, dejavu)]
        assert not tofu, f"{chinese!r} (for {english!r}) has no glyph for {tofu}"


# ----------------------------------------------------------------------------------------------
# labels, numbers and templates


def test_word_labels():
    assert bf.is_word_label("gradient norm (log scale)")
    assert bf.is_word_label("head 3")
    assert bf.is_word_label("<eos>")
    for text in ["0.35", "猫", "$d_k$", "$\\mathdefault{10^{2}}$", "1e−3", "(2, 10, 512)", ""]:
        assert not bf.is_word_label(text), text


def test_exact_entries_win_and_templates_carry_the_numbers():
    catalog = {"layer {0}, head {1}": "第 {0} 层，头 {1}", "layer 0, head 0": "第一个头"}
    assert bf.translate("layer 3, head 12", catalog) == "第 3 层，头 12"
    assert bf.translate("layer 0, head 0", catalog) == "第一个头"
    assert bf.translate("layer 3", catalog) is None
    assert bf.number_template("float16 at 0.97, n^2") == ("float16 at {0}, n^{1}", ["0.97", "2"])


# ----------------------------------------------------------------------------------------------
# (b) the formatter swaps the labels of a figure


SMALL_PO = """
msgid "How much the last output depends on each earlier token"
msgstr "最后一个输出对前面每个词元的依赖程度"

msgid "step"
msgstr "训练步"

msgid "head {0}"
msgstr "头 {0}"

msgid "layer {0}, head {1}"
msgstr "第 {0} 层，头 {1}"

msgid "<bos>"
msgstr "<bos>"

#, fuzzy
msgid "A fuzzy title"
msgstr "模糊的标题"
"""

TITLE, TITLE_ZH = (
    "How much the last output depends on each earlier token",
    "最后一个输出对前面每个词元的依赖程度",
)


@pytest.fixture
def small_catalog(tmp_path):
    path = tmp_path / "figure_labels.po"
    path.write_text(SMALL_PO, encoding="utf-8")
    return path


def _figure(title, xlabel, legend, ticks, family=None):
    with matplotlib.rc_context({"font.family": family} if family else {}):
        fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
        ax.plot([0, 1, 2], [1, 3, 2], label=legend)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_xticks([0, 1, 2], ticks)
        ax.legend()
    return fig


def _english_figure():
    return _figure(TITLE, "step", "head 2", ["<bos>", "layer 1, head 3", "0.5"])


def test_the_catalog_reader_skips_fuzzy_entries(small_catalog):
    catalog = bf.read_catalog(small_catalog)
    assert catalog["step"] == "训练步" and "A fuzzy title" not in catalog


def test_the_formatter_draws_the_chinese_labels_and_restores_the_figure(small_catalog):
    fig = _english_figure()
    english_before = english_png(fig)
    catalog = bf.read_catalog(small_catalog)
    with bf.chinese_labels(fig, catalog) as used, bf.recording_drawn_texts() as drawn:
        fig.canvas.draw()
        families = {t.get_text(): t.get_fontfamily() for t in fig.findobj(Text) if t.get_text()}
    assert {TITLE_ZH, "训练步", "头 2", "<bos>", "第 1 层，头 3", "0.5"} <= set(drawn), drawn
    assert not {TITLE, "step", "head 2", "layer 1, head 3"} & set(drawn), drawn
    assert families[TITLE_ZH] == ["sans-serif", bf.cjk_family()]
    assert used[TITLE] == TITLE_ZH and used["layer 1, head 3"] == "第 1 层，头 3"

    data, metadata = bf.BilingualPNG(english_png, small_catalog)(fig)
    assert data == english_before, "the English PNG must not change"
    assert metadata[bf.LABELS_KEY] == {
        TITLE: TITLE_ZH,
        "step": "训练步",
        "<bos>": "<bos>",
        "layer 1, head 3": "第 1 层，头 3",
        "head 2": "头 2",
    }
    assert english_png(fig) == english_before, "the figure must be restored"
    assert fig.axes[0].get_title() == TITLE
    plt.close(fig)


def test_the_chinese_png_is_the_figure_drawn_with_the_chinese_strings(small_catalog):
    fig = _english_figure()
    _, metadata = bf.BilingualPNG(english_png, small_catalog)(fig)
    plt.close(fig)
    # The same figure made directly with the Chinese strings, the CJK font as the fallback.
    chinese = _figure(
        TITLE_ZH,
        "训练步",
        "头 2",
        ["<bos>", "第 1 层，头 3", "0.5"],
        family=["sans-serif", bf.cjk_family()],
    )
    expected = english_png(chinese)
    plt.close(chinese)
    assert metadata[bf.ZH_KEY] == expected


def test_an_untranslated_label_stays_english_and_is_reported(small_catalog):
    fig = _figure("A fuzzy title", "step", "head 2", ["a", "b", "c"])
    _, metadata = bf.BilingualPNG(english_png, small_catalog)(fig)
    plt.close(fig)
    assert metadata[bf.LABELS_KEY]["A fuzzy title"] is None
    assert metadata[bf.LABELS_KEY]["step"] == "训练步"
    nb = nbformat.v4.new_notebook()
    output = nbformat.v4.new_output(
        "display_data", data={"image/png": "iVBORw0KGgo="}, metadata={"image/png": metadata}
    )
    nb.cells = [nbformat.v4.new_code_cell(outputs=[output])]
    problems = bf.figure_problems(nb, bf.read_catalog(small_catalog))
    assert sorted(problems) == [
        "cell 0: no Chinese for the label 'A fuzzy title'",
        "cell 0: no Chinese for the label 'a'",
        "cell 0: no Chinese for the label 'b'",
        "cell 0: no Chinese for the label 'c'",
    ]
    # A translation changed after the figure was rendered: the stored figure is out of date.
    changed = {**bf.read_catalog(small_catalog), "step": "步"}
    assert any("execute the chapter again" in p for p in bf.figure_problems(nb, changed))


def test_a_figure_without_words_gets_no_chinese_copy():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    data, metadata = bf.BilingualPNG(english_png)(fig)
    plt.close(fig)
    assert data and metadata == {bf.LABELS_KEY: {}}


# ----------------------------------------------------------------------------------------------
# (c) the Chinese build reads the Chinese PNGs, the English build the English ones


def _read_with_myst_nb(text, language):
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    config = SimpleNamespace(language=language, nb_custom_formats={})
    zh_figures.use_chinese_figures(None, config)
    nb_config = NbParserConfig(custom_formats=config.nb_custom_formats)
    reader = create_nb_reader("chapters/x.ipynb", MdParserConfig(), nb_config, text)
    return reader.read(text)


@pytest.mark.parametrize("language", ["zh_CN", "zh", "en", None])
def test_only_a_chinese_build_reads_the_chinese_images(chapters, language):
    nb = chapters["02_attention_by_hand"]
    text = json.dumps(nb)
    read = _read_with_myst_nb(text, language)
    (_, stored), (_, shown) = bf.image_outputs(nb)[0], bf.image_outputs(read)[0]
    chinese = str(language).startswith("zh")
    expected = stored.metadata["image/png"][bf.ZH_KEY] if chinese else stored.data["image/png"]
    assert shown.data["image/png"] == expected
    assert shown.data["text/plain"] == stored.data["text/plain"]
    assert [c.source for c in read.cells] == [c.source for c in nb.cells]


def test_the_extension_keys_agree():
    assert zh_figures.ZH_KEY == bf.ZH_KEY


def test_the_chinese_figures_are_drawn_in_simplified_chinese_forms():
    """The swapped labels fall back to Noto Sans CJK SC (`make cjk-font`): a face whose default
    glyphs are Traditional (TC) or Japanese (JP) would draw 说 or 编码 in another form, since
    matplotlib applies no OpenType locl feature."""
    assert bf.cjk_family() == "Noto Sans CJK SC"
