"""Pictures for the course: attention heat maps, positional encodings, loss curves.

Every plotting function first calls `use_cjk_font()`, so token labels such as 猫, 趴, 垫子
render as Chinese characters instead of empty boxes ("tofu"), in their Simplified Chinese forms.
The font is Noto Sans CJK SC, the Simplified Chinese face of the Noto Sans CJK collection that
Debian ships as the package `fonts-noto-cjk` (SIL Open Font License 1.1); `make cjk-font`
unpacks it into the virtual environment (.venv/share/fonts), and `cjk_font_path()` takes that
face out of the collection file once into matplotlib's cache folder. The same face, regular
and bold, is the book's web font (_ext/cjk_webfont.py). A machine without it falls back, with
a warning, to the Noto Sans CJK of the pip package `cvttf-NotoSansCJK-Regular`
(requirements.txt), whose glyphs are the Traditional Chinese forms: matplotlib applies no
OpenType `locl` feature, so a figure shows a font's default forms. Nothing is downloaded at
runtime.

The module never selects a matplotlib backend itself, so it works headless (Agg) as well as
inline in Jupyter.
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import math
import os
import sys
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

CJK_FONT_PACKAGE = "cvttf_NotoSansCJK_Regular"  # the fallback: Traditional Chinese forms
CJK_FAMILY = "Noto Sans CJK SC"  # the Simplified Chinese face of Noto Sans CJK
# The collections of Debian's fonts-noto-cjk: where `make cjk-font` unpacks them (the
# environment's share/fonts), else where the package installs them system-wide.
CJK_COLLECTIONS = {
    "regular": "NotoSansCJK-Regular.ttc",
    "bold": "NotoSansCJK-Bold.ttc",
}
FONT_ROOTS = (
    Path(sys.prefix) / "share" / "fonts",
    Path("/usr/share/fonts"),
    Path("/usr/local/share/fonts"),
)
FALLBACK_FONT = "DejaVu Sans"
ANNOTATE_MAX_SIZE = 8  # annotate cell values when both sides of the matrix are at most this

_FONT_SUFFIXES = (".otf", ".ttf", ".ttc")

ArrayLike = torch.Tensor | np.ndarray | Sequence[Any]


# ----------------------------------------------------------------------------------------------
# fonts


def _collection(weight: str) -> Path | None:
    """The Noto Sans CJK collection file (.ttc) of `weight`, if this machine has one."""
    for root in FONT_ROOTS:
        if root.is_dir():
            found = sorted(root.rglob(CJK_COLLECTIONS[weight]))
            if found:
                return found[0]
    return None


@functools.cache
def simplified_cjk_font_path(weight: str = "regular") -> Path:
    """Noto Sans CJK SC of `weight` ("regular" or "bold") as a font file of one face.

    Taken once out of the system's Noto Sans CJK collection (Debian: fonts-noto-cjk, installed
    by `make cjk-font`) into matplotlib's cache folder. Raises RuntimeError where the
    collection is missing.
    """
    if weight not in CJK_COLLECTIONS:
        raise ValueError(f"weight must be one of {sorted(CJK_COLLECTIONS)}, not {weight!r}")
    collection = _collection(weight)
    if collection is None:
        raise RuntimeError(
            f"The Simplified Chinese font {CJK_FAMILY} ({weight}) is not installed: its "
            f"collection {CJK_COLLECTIONS[weight]} was not found under "
            f"{', '.join(str(r) for r in FONT_ROOTS)}. Install Debian's fonts-noto-cjk "
            "(make cjk-font, as root: apt-get install fonts-noto-cjk)."
        )
    stat = collection.stat()
    out = Path(mpl.get_cachedir()) / "afz-cjk" / f"{collection.stem}-SC-{stat.st_size}.otf"
    if not out.is_file():
        from fontTools.ttLib import TTCollection

        fonts = TTCollection(str(collection), lazy=True)
        faces = [f for f in fonts if f["name"].getDebugName(1) == CJK_FAMILY]
        if not faces:
            raise RuntimeError(f"{collection} has no face named {CJK_FAMILY!r}")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        faces[0].save(str(tmp))
        tmp.replace(out)  # atomic: two processes may extract it at the same time
    return out


@functools.cache
def cjk_font_path() -> Path:
    """Path of the font file that draws Chinese in the figures: Noto Sans CJK SC.

    Falls back, with a warning, to the Noto Sans CJK file of the pip package
    `cvttf-NotoSansCJK-Regular` (Traditional Chinese forms) where the Simplified face is not
    installed.
    """
    try:
        return simplified_cjk_font_path("regular")
    except RuntimeError as missing:
        warnings.warn(
            f"{missing} Figures fall back to the pip package's Noto Sans CJK, whose glyphs are "
            "the Traditional Chinese forms.",
            RuntimeWarning,
            stacklevel=2,
        )
    if importlib.util.find_spec(CJK_FONT_PACKAGE) is None:
        raise RuntimeError(
            "Neither Noto Sans CJK SC (Debian's fonts-noto-cjk) nor the CJK font package "
            "'cvttf-NotoSansCJK-Regular' is installed, so Chinese labels would render as empty "
            "boxes. Run `make cjk-font`, or install the course environment with: "
            "pip install -r requirements.txt"
        )
    package_dir = importlib.resources.files(CJK_FONT_PACKAGE)
    fonts = sorted(
        Path(str(entry))
        for entry in package_dir.iterdir()
        if entry.name.lower().endswith(_FONT_SUFFIXES)
    )
    if not fonts:
        raise RuntimeError(
            f"No font file found in the package {CJK_FONT_PACKAGE!r} ({package_dir}); "
            "reinstall it with: pip install -r requirements.txt"
        )
    return fonts[0]


def use_cjk_font() -> str:
    """Make matplotlib render Chinese text with Noto Sans CJK SC; return the font family name.

    Registers the font file (and its bold face, where installed, for bold text) with
    matplotlib's font manager (once), puts its family first in
    `rcParams["font.sans-serif"]` with DejaVu Sans kept as a fallback, and selects the
    sans-serif family. Safe to call any number of times.
    """
    path = cjk_font_path()
    family = font_manager.FontProperties(fname=path).get_name()
    paths = [path]
    if family == CJK_FAMILY:
        try:
            paths.append(simplified_cjk_font_path("bold"))
        except RuntimeError:
            pass  # bold text then uses the regular face

    registered = {Path(entry.fname) for entry in font_manager.fontManager.ttflist}
    if any(p not in registered for p in paths):
        for p in paths:
            if p not in registered:
                font_manager.fontManager.addfont(str(p))
        # addfont does not invalidate findfont's cache; a lookup made before registration
        # would otherwise keep resolving to the fallback font.
        cached = getattr(font_manager.fontManager, "_findfont_cached", None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()

    sans = [name for name in mpl.rcParams["font.sans-serif"] if name != family]
    if FALLBACK_FONT not in sans:
        sans.insert(0, FALLBACK_FONT)
    mpl.rcParams["font.sans-serif"] = [family, *sans]
    mpl.rcParams["font.family"] = ["sans-serif"]
    if "\N{MINUS SIGN}" in missing_glyphs("\N{MINUS SIGN}", path):
        mpl.rcParams["axes.unicode_minus"] = False
    return family


@functools.cache
def _charmap(font_path: str) -> frozenset[int]:
    """Code points that have a glyph in the font at `font_path`."""
    try:
        from fontTools.ttLib import TTFont
    except ImportError:  # fontTools is a matplotlib dependency, but stay safe without it
        from matplotlib.ft2font import FT2Font

        return frozenset(FT2Font(font_path).get_charmap())
    with TTFont(font_path, lazy=True, fontNumber=0) as font:
        return frozenset(font.getBestCmap())


def missing_glyphs(text: str, font_path: str | Path | None = None) -> list[str]:
    """Characters of `text` that have no glyph in a font (default: the course's CJK font).

    Control characters such as newlines are ignored; each missing character is listed once,
    in order of first appearance. An empty list means the text renders without tofu boxes.
    """
    path = str(font_path) if font_path is not None else str(cjk_font_path())
    charmap = _charmap(path)
    missing: list[str] = []
    for char in text:
        if not char.isprintable() or char in missing:
            continue
        if ord(char) not in charmap:
            missing.append(char)
    return missing


def cjk_font_has_glyphs(text: str) -> bool:
    """True when every character of `text` has a glyph in the course's CJK font."""
    return not missing_glyphs(text)


# ----------------------------------------------------------------------------------------------
# input checks


def _to_numpy(values: ArrayLike, name: str) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().to("cpu", torch.float32).numpy()
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a numeric tensor or array: {error}") from error


def _check_tokens(tokens: Sequence[str] | None, size: int, kind: str, axis: str) -> list[str]:
    """Token labels as strings; positions 0..size-1 when `tokens` is None."""
    if tokens is None:
        return [str(i) for i in range(size)]
    if isinstance(tokens, str):
        raise TypeError(f"{kind} tokens must be a sequence of strings, not one string {tokens!r}")
    labels = [str(token) for token in tokens]
    if len(labels) != size:
        raise ValueError(f"got {len(labels)} {kind} tokens but weights have {size} {axis}")
    return labels


def _display_width(text: str) -> int:
    # CJK characters are about twice as wide as Latin ones.
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# ----------------------------------------------------------------------------------------------
# attention


def _draw_attention(
    ax: Axes,
    weights: np.ndarray,
    query_labels: list[str],
    key_labels: list[str],
    vmax: float | None,
) -> AxesImage:
    """Heat map of one (q_len, k_len) matrix on `ax`, with token tick labels."""
    q_len, k_len = weights.shape
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")

    ax.set_xticks(range(k_len), key_labels)
    ax.set_yticks(range(q_len), query_labels)
    if max((_display_width(label) for label in key_labels), default=0) > 4 or k_len > 12:
        ax.tick_params(axis="x", labelrotation=45)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    ax.set_xlabel("key")
    ax.set_ylabel("query")

    if q_len <= ANNOTATE_MAX_SIZE and k_len <= ANNOTATE_MAX_SIZE:
        low, high = image.get_clim()
        for i in range(q_len):
            for j in range(k_len):
                shade = (weights[i, j] - low) / (high - low) if high > low else 0.0
                ax.text(
                    j,
                    i,
                    f"{weights[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="black" if shade > 0.6 else "white",
                )
    return image


def plot_attention(
    weights: ArrayLike,
    query_tokens: Sequence[str] | None,
    key_tokens: Sequence[str] | None,
    ax: Axes | None = None,
    title: str | None = None,
    colorbar: bool = True,
) -> Axes:
    """Heat map of one attention matrix.

    weights: (q_len, k_len), row i = how query token i distributes its attention over keys.
    query_tokens: q_len labels for the rows (y axis); key_tokens: k_len labels for the columns
    (x axis); None labels by position. Cell values are written in when the matrix is at most
    8 x 8. Draws on `ax` (a new figure if None) and returns it.
    """
    use_cjk_font()
    matrix = _to_numpy(weights, "weights")
    if matrix.ndim != 2:
        raise ValueError(
            f"weights must have shape (q_len, k_len), got {matrix.ndim} dims {matrix.shape}; "
            "for several heads use plot_attention_heads"
        )
    q_len, k_len = matrix.shape
    query_labels = _check_tokens(query_tokens, q_len, "query", "rows")
    key_labels = _check_tokens(key_tokens, k_len, "key", "columns")

    if ax is None:
        width = min(max(3.5, 0.5 * k_len + 2.0), 16.0)
        height = min(max(3.0, 0.45 * q_len + 1.5), 16.0)
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    image = _draw_attention(ax, matrix, query_labels, key_labels, vmax=None)
    if colorbar:
        ax.figure.colorbar(image, ax=ax)
    if title is not None:
        ax.set_title(title)
    return ax


def plot_attention_heads(
    weights: ArrayLike,
    query_tokens: Sequence[str] | None,
    key_tokens: Sequence[str] | None,
    title: str | None = None,
    max_cols: int = 4,
    colorbar: bool = True,
) -> Figure:
    """Grid of attention heat maps, one panel per head, titled "head 0", "head 1", ...

    weights: (heads, q_len, k_len), or (1, heads, q_len, k_len) as returned for a batch of one.
    All panels share one colour scale (0 to the largest weight), so heads can be compared;
    with `colorbar` one shared colorbar is added. Returns the Figure.
    """
    use_cjk_font()
    stack = _to_numpy(weights, "weights")
    if stack.ndim == 4:
        if stack.shape[0] != 1:
            raise ValueError(
                f"weights has a batch of {stack.shape[0]} examples {stack.shape}; "
                "select one, e.g. weights[0]"
            )
        stack = stack[0]
    if stack.ndim != 3:
        raise ValueError(
            "weights must have shape (heads, q_len, k_len) or (1, heads, q_len, k_len), "
            f"got {stack.ndim} dims {stack.shape}"
        )
    if max_cols < 1:
        raise ValueError(f"max_cols must be at least 1, got {max_cols}")
    heads, q_len, k_len = stack.shape
    query_labels = _check_tokens(query_tokens, q_len, "query", "rows")
    key_labels = _check_tokens(key_tokens, k_len, "key", "columns")

    cols = min(heads, max_cols)
    rows = math.ceil(heads / cols)
    panel_w = min(max(2.8, 0.45 * k_len + 1.2), 8.0)
    panel_h = min(max(2.6, 0.4 * q_len + 1.2), 8.0)
    fig, grid = plt.subplots(
        rows,
        cols,
        figsize=(panel_w * cols + (1.0 if colorbar else 0.0), panel_h * rows),
        squeeze=False,
        layout="constrained",
    )
    vmax = float(stack.max()) if stack.size else None
    panels = list(grid.flat)
    image = None
    for head, ax in enumerate(panels[:heads]):
        image = _draw_attention(ax, stack[head], query_labels, key_labels, vmax=vmax)
        ax.set_title(f"head {head}")
        # Inner panels repeat the same labels; keep the figure readable.
        if head % cols != 0:
            ax.set_ylabel("")
    for ax in panels[heads:]:
        fig.delaxes(ax)
    if colorbar and image is not None:
        fig.colorbar(image, ax=panels[:heads])
    if title is not None:
        fig.suptitle(title)
    return fig


# ----------------------------------------------------------------------------------------------
# positional encoding and training curves


def plot_positional_encoding(pe: ArrayLike, title: str | None = None) -> Figure:
    """Heat map of a positional-encoding table: positions on y, dimensions on x.

    pe: (max_len, d_model), or (1, max_len, d_model) as stored in a module buffer.
    Values of a sinusoidal encoding lie in [-1, 1]; the colour scale is symmetric around 0.
    """
    use_cjk_font()
    table = _to_numpy(pe, "pe")
    if table.ndim == 3 and table.shape[0] == 1:
        table = table[0]
    if table.ndim != 2:
        raise ValueError(
            f"pe must have shape (max_len, d_model), got {table.ndim} dims {table.shape}"
        )
    limit = max(1.0, float(np.abs(table).max())) if table.size else 1.0
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    image = ax.imshow(table, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    ax.set_xlabel("dimension i")
    ax.set_ylabel("position pos")
    fig.colorbar(image, ax=ax)
    ax.set_title(title if title is not None else f"positional encoding {tuple(table.shape)}")
    return fig


def _smooth(values: np.ndarray, smoothing: float) -> np.ndarray:
    """Exponential moving average, bias-corrected so the curve starts at the first value."""
    out = np.empty_like(values)
    average = 0.0
    for i, value in enumerate(values):
        average = smoothing * average + (1.0 - smoothing) * value
        out[i] = average / (1.0 - smoothing ** (i + 1))
    return out


def plot_loss(
    history: Sequence[float] | Mapping[str, Sequence[float]],
    ax: Axes | None = None,
    title: str | None = None,
    smoothing: float | None = None,
    log_scale: bool = False,
) -> Axes:
    """Loss curve(s) against step.

    history: one list of per-step values, or {name: values} for several curves (e.g. "train"
    and "valid"). Values may be floats or 0-dim tensors. smoothing: None, or an exponential
    moving average factor in [0, 1); the raw curve is then drawn faintly behind the smoothed
    one. log_scale: logarithmic y axis. Returns the Axes.
    """
    use_cjk_font()
    if isinstance(history, Mapping):
        series = dict(history)
    elif isinstance(history, str):
        raise TypeError("history must be a list of numbers or a dict of name -> list")
    else:
        series = {"loss": history}
    if not series:
        raise ValueError("history is empty: nothing to plot")
    if smoothing is not None and not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    for name, values in series.items():
        curve = np.array([float(v) for v in values], dtype=np.float64)
        if curve.ndim != 1 or curve.size == 0:
            raise ValueError(f"history {name!r} must be a non-empty list of numbers")
        steps = np.arange(curve.size)
        if smoothing:
            (line,) = ax.plot(steps, _smooth(curve, smoothing), label=str(name))
            ax.plot(steps, curve, color=line.get_color(), alpha=0.25, linewidth=1)
        else:
            ax.plot(steps, curve, label=str(name))
    if log_scale:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    if len(series) > 1:
        ax.legend()
    ax.grid(True, alpha=0.3)
    if title is not None:
        ax.set_title(title)
    return ax
