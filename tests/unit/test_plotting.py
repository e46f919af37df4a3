"""Tests for helpers.pictures.plotting: CJK font setup, glyph coverage and the plotting
functions."""

import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib import font_manager

from helpers.pictures.plotting import (
    CJK_FAMILY,
    cjk_font_has_glyphs,
    cjk_font_path,
    missing_glyphs,
    plot_attention,
    plot_attention_heads,
    plot_loss,
    plot_positional_encoding,
    use_cjk_font,
)

CHINESE = "猫趴垫子咬人零一二三四五六七八九十百千万"
TOKENS = ["猫", "趴", "在", "垫子"]

plt.switch_backend("Agg")  # headless, and the backend the book build uses


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _glyph_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_use_cjk_font_registers_a_cjk_family_first():
    family = use_cjk_font()
    assert "CJK" in family, f"expected a Noto Sans CJK family, got {family!r}"
    assert use_cjk_font() == family, "use_cjk_font must be idempotent"
    sans = matplotlib.rcParams["font.sans-serif"]
    assert sans[0] == family and sans.count(family) == 1
    assert "DejaVu Sans" in sans, "DejaVu Sans must stay as a fallback"
    found = font_manager.findfont(
        font_manager.FontProperties(family=family), fallback_to_default=False
    )
    assert found == str(cjk_font_path())


def test_figures_draw_simplified_chinese_regular_and_bold():
    """The figures' font is Noto Sans CJK SC (`make cjk-font`), not a face whose default glyphs
    are the Traditional forms, and bold text gets the bold face."""
    assert use_cjk_font() == CJK_FAMILY == "Noto Sans CJK SC"
    found = {
        weight: font_manager.FontProperties(
            fname=font_manager.findfont(
                font_manager.FontProperties(family=CJK_FAMILY, weight=weight),
                fallback_to_default=False,
            )
        )
        for weight in ("normal", "bold")
    }
    assert {w: p.get_name() for w, p in found.items()} == {"normal": CJK_FAMILY, "bold": CJK_FAMILY}
    assert found["normal"].get_file() != found["bold"].get_file()
    assert "Bold" in str(found["bold"].get_file())


def test_cjk_font_has_every_course_character():
    assert missing_glyphs(CHINESE) == []
    assert cjk_font_has_glyphs(CHINESE + " attention 0.35 −1")


def test_missing_glyphs_detects_a_font_without_chinese():
    dejavu = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans"))
    assert missing_glyphs(CHINESE, dejavu) == list(dict.fromkeys(CHINESE))
    assert missing_glyphs("attention", dejavu) == []


def test_plot_attention_small_matrix_is_annotated():
    weights = torch.softmax(torch.randn(3, 4), dim=-1)
    ax = plot_attention(weights, TOKENS[:3], TOKENS, title="注意力")
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS[:3]
    assert len(ax.texts) == 12
    assert ax.texts[0].get_text() == f"{weights[0, 0].item():.2f}"
    assert ax.get_title() == "注意力"


def test_plot_attention_large_matrix_is_not_annotated():
    ax = plot_attention(np.full((10, 10), 0.1), None, None, colorbar=False)
    assert len(ax.texts) == 0
    assert len(ax.figure.axes) == 1


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 4)])
def test_plot_attention_heads_grid(shape):
    weights = torch.softmax(torch.randn(shape), dim=-1)
    fig = plot_attention_heads(weights, TOKENS[:3], TOKENS, title="两个头", colorbar=False)
    assert len(fig.axes) == 2
    for head, ax in enumerate(fig.axes):
        assert ax.get_title() == f"head {head}"
        assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
        assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS[:3]


def test_plot_attention_heads_removes_unused_panels_and_adds_one_colorbar():
    fig = plot_attention_heads(np.random.rand(5, 2, 2), None, None, max_cols=4)
    heat_maps = [ax for ax in fig.axes if ax.get_title().startswith("head")]
    assert len(heat_maps) == 5
    assert len(fig.axes) == 6  # 5 heads + the shared colorbar


def test_chinese_labels_render_without_missing_glyph_warnings():
    weights = torch.softmax(torch.randn(2, 4, 4), dim=-1)
    fig = plot_attention_heads(weights, TOKENS, TOKENS, title=CHINESE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.canvas.draw()
    assert _glyph_warnings(caught) == []


def test_glyph_warning_check_can_fail():
    # The same draw with only DejaVu Sans available must warn, or the test above proves nothing.
    use_cjk_font()
    with matplotlib.rc_context({"font.family": ["DejaVu Sans"]}):
        fig, ax = plt.subplots()
        ax.set_title("猫")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.canvas.draw()
    assert _glyph_warnings(caught)


@pytest.mark.parametrize(
    ("queries", "keys", "message"),
    [
        (TOKENS[:3], TOKENS, "got 3 query tokens but weights have 4 rows"),
        (TOKENS, TOKENS[:2], "got 2 key tokens but weights have 4 columns"),
    ],
)
def test_label_count_mismatch_raises(queries, keys, message):
    with pytest.raises(ValueError, match=message):
        plot_attention(torch.rand(4, 4), queries, keys)
    with pytest.raises(ValueError, match=message):
        plot_attention_heads(torch.rand(2, 4, 4), queries, keys)


def test_wrong_ndim_raises():
    with pytest.raises(ValueError, match="q_len, k_len"):
        plot_attention(torch.rand(2, 4, 4), TOKENS, TOKENS)
    with pytest.raises(ValueError, match="heads, q_len, k_len"):
        plot_attention_heads(torch.rand(4, 4), TOKENS, TOKENS)
    with pytest.raises(ValueError, match="batch of 2"):
        plot_attention_heads(torch.rand(2, 2, 4, 4), TOKENS, TOKENS)
    with pytest.raises(ValueError, match="max_len, d_model"):
        plot_positional_encoding(torch.rand(4))


def test_plot_positional_encoding():
    pe = torch.sin(torch.arange(50.0)[:, None] / 10 ** (torch.arange(16.0) / 8))
    fig = plot_positional_encoding(pe[None], title="位置编码")
    ax = fig.axes[0]
    assert ax.images[0].get_array().shape == (50, 16)
    assert ax.get_xlabel().startswith("dimension") and ax.get_ylabel().startswith("position")


def test_plot_loss_list_and_dict():
    ax = plot_loss([3.0, 2.0, 1.5, 1.2], title="损失")
    assert len(ax.lines) == 1
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [3.0, 2.0, 1.5, 1.2])

    history = {"train": [torch.tensor(2.0), torch.tensor(1.0)], "valid": [2.5, 1.5]}
    ax = plot_loss(history, smoothing=0.5, log_scale=True)
    assert ax.get_yscale() == "log"
    assert len(ax.lines) == 4  # smoothed + faint raw curve per series
    assert ax.lines[0].get_ydata()[0] == pytest.approx(2.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["train", "valid"]


def test_plot_loss_rejects_bad_input():
    with pytest.raises(ValueError, match="smoothing"):
        plot_loss([1.0], smoothing=1.0)
    with pytest.raises(ValueError, match="empty"):
        plot_loss({})
