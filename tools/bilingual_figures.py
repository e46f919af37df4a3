"""Chinese labels for the chapters' figures, rendered when a chapter is executed.

An IPython extension (loaded by tools/execute_chapters.py) that renders every matplotlib figure
a notebook displays twice: the English PNG exactly as the inline backend makes it (the output's
`image/png`, what the English book and nbval see), and a copy whose word labels (titles, axis
labels, legend entries, tick labels, annotations, colorbar labels, `text()`) are swapped for
their Chinese translations, stored in the same output's metadata:

    output.metadata["image/png"] = {
        "afz_labels": {"English label as drawn": "中文标签", ...},  # every word label drawn
        "afz_zh_png": "<base64 PNG with the Chinese labels>",
    }

The Chinese edition shows `afz_zh_png` instead of `image/png` (_ext/zh_figures.py). A label is a
"word label" when it has Latin letters outside `$...$` math and outside numbers such as 1e-3;
other texts (numbers, Chinese tokens, pure math) are drawn as they are. Translations come from
locale/zh_CN/figure_labels.po (gettext; msgid = the English label exactly as drawn). A msgid may
also be the label with its numbers written {0}, {1}, ... ("layer {0}, head {1}"), which matches
every label that differs only in those numbers; an exact msgid wins. A label without a
translation stays English in the Chinese image and is recorded with the value None, so that
tools/execute_chapters.py and tests/test_figure_labels.py report it. In the Chinese render each text
keeps its own font and falls back to the course's CJK font (Noto Sans CJK) for the characters
that font lacks, so Latin text, numbers and symbols look as in the English figure; afterwards
the figure is restored exactly (texts, fonts, tick formatters).

In a notebook (the executor does this for you):

    %load_ext bilingual_figures        # with tools/ on sys.path
"""

from __future__ import annotations

import base64
import functools
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "locale" / "zh_CN" / "figure_labels.po"

ZH_KEY = "afz_zh_png"  # base64 PNG with Chinese labels, in output.metadata["image/png"]
LABELS_KEY = "afz_labels"  # {English label: Chinese label used, or None}, same place

_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")
_NUMBER_WITH_EXPONENT = re.compile(r"\d[\d.]*[eE][-+\N{MINUS SIGN}]?\d+")
_LATIN = re.compile(r"[A-Za-z]")
# A number that is not part of a name: "layer 3", "(1, 8, 64)", "0.97", "n^2", but not the 16 of
# "float16", the 1 of "W_1" or the 9 of "1e9".
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:\.\d+)?(?![A-Za-z_\d])")
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


# ----------------------------------------------------------------------------------------------
# the catalog


def read_catalog(path: Path = CATALOG) -> dict[str, str]:
    """{English label: Chinese label} of the usable entries: translated and not fuzzy."""
    from babel.messages.pofile import read_po

    with open(path, "rb") as handle:
        catalog = read_po(handle)
    return {
        message.id: message.string
        for message in catalog
        if message.id
        and isinstance(message.id, str)
        and isinstance(message.string, str)
        and message.string.strip()
        and not message.fuzzy
    }


def is_word_label(text: str) -> bool:
    """True when `text` has Latin letters outside math ($...$) and numbers such as 1e-3."""
    rest = _NUMBER_WITH_EXPONENT.sub("", _MATH.sub("", text))
    return bool(_LATIN.search(rest))


def number_template(text: str) -> tuple[str, list[str]]:
    """`text` with each number written {0}, {1}, ..., and the numbers in order."""
    numbers: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        numbers.append(match.group())
        return f"{{{len(numbers) - 1}}}"

    return _NUMBER.sub(placeholder, text), numbers


def translate(text: str, catalog: Mapping[str, str]) -> str | None:
    """The Chinese for a label: its exact entry, else its number template's; None if neither."""
    if text in catalog:
        return catalog[text]
    template, numbers = number_template(text)
    if not numbers or template not in catalog:
        return None

    def number(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return numbers[index] if index < len(numbers) else match.group()

    return _PLACEHOLDER.sub(number, catalog[template])


# ----------------------------------------------------------------------------------------------
# swapping a figure's labels


@functools.cache
def cjk_family() -> str:
    """Family name of the course's CJK font, registered with matplotlib (rcParams untouched)."""
    from matplotlib import font_manager

    from helpers.pictures.plotting import cjk_font_path

    path = cjk_font_path()
    if not any(Path(entry.fname) == path for entry in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(path))
        cached = getattr(font_manager.fontManager, "_findfont_cached", None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    return font_manager.FontProperties(fname=path).get_name()


@contextmanager
def recording_drawn_texts() -> Iterator[list[str]]:
    """Collect the strings of every visible, non-empty Text artist drawn inside the block."""
    from matplotlib.text import Text

    drawn: list[str] = []
    original = Text.draw

    @functools.wraps(original)
    def draw(self: Text, renderer: Any) -> Any:
        text = self.get_text()
        if self.get_visible() and text:
            drawn.append(text)
        return original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield drawn
    finally:
        Text.draw = original  # type: ignore[method-assign]


def _translating_formatter(inner: Any, swap: Callable[[str], str]) -> Any:
    """A tick formatter that gives `inner`'s labels through `swap`; other calls go to `inner`."""
    from matplotlib.ticker import Formatter

    class Translating(Formatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return swap(inner(x, pos))

        def format_ticks(self, values: Any) -> list[str]:
            return [swap(label) for label in inner.format_ticks(values)]

        def get_offset(self) -> str:
            return swap(inner.get_offset())

        def set_locs(self, locs: Any) -> None:
            inner.set_locs(locs)

        def format_data(self, value: float) -> str:
            return inner.format_data(value)

        def format_data_short(self, value: float) -> str:
            return inner.format_data_short(value)

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

    return Translating()


@contextmanager
def chinese_labels(fig: Any, catalog: Mapping[str, str]) -> Iterator[dict[str, str | None]]:
    """Inside the block, `fig` draws its word labels in Chinese, the CJK font as a fallback.

    Yields {English label: translation or None} of the word labels swapped so far; tick
    labels are added as they are drawn. Everything is restored when the block ends.
    """
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    used: dict[str, str | None] = {}

    def swap(text: str) -> str:
        if not text or not is_word_label(text):
            return text
        if text not in used:
            used[text] = translate(text, catalog)
        return used[text] or text

    family = cjk_family()
    texts = [(t, t.get_text(), t.get_fontproperties()) for t in fig.findobj(Text)]
    axes = [a for a in fig.findobj(lambda artist: isinstance(artist, Axis))]
    tickers = [(axis, axis.major.formatter, axis.minor.formatter) for axis in axes]
    try:
        for text, english, props in texts:
            chinese = props.copy()
            chinese.set_family([*props.get_family(), family])
            text.set_fontproperties(chinese)
            if english:
                text.set_text(swap(english))
        for axis, major, minor in tickers:
            axis.major.formatter = _translating_formatter(major, swap)
            axis.minor.formatter = _translating_formatter(minor, swap)
            axis.stale = True
        yield used
    finally:
        for axis, major, minor in tickers:
            axis.major.formatter = major
            axis.minor.formatter = minor
            axis.stale = True
        for text, english, props in texts:
            text.set_text(english)
            text.set_fontproperties(props)


# ----------------------------------------------------------------------------------------------
# stored notebooks


def image_outputs(nb: Any) -> list[tuple[int, Any]]:
    """(cell index, output) of every output of a notebook that holds a PNG."""
    return [
        (index, output)
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]


def figure_problems(nb: Any, catalog: Mapping[str, str]) -> list[str]:
    """What is wrong with the Chinese figures stored in an executed notebook, one line each.

    A figure made without this extension, a figure with word labels but no Chinese render,
    a label that has no translation in `catalog`, or one whose translation has changed since
    the figure was rendered (the stored Chinese figure is out of date).
    """
    problems = []
    for index, output in image_outputs(nb):
        meta = output.get("metadata", {}).get("image/png", {})
        if LABELS_KEY not in meta:
            problems.append(
                f"cell {index}: a figure without {LABELS_KEY} (not executed with "
                "tools/execute_chapters.py?)"
            )
            continue
        if meta[LABELS_KEY] and ZH_KEY not in meta:
            problems.append(f"cell {index}: a figure with word labels but no Chinese render")
        for label, used in meta[LABELS_KEY].items():
            current = translate(label, catalog)
            if used is None or current is None:
                problems.append(f"cell {index}: no Chinese for the label {label!r}")
            elif current != used:
                problems.append(
                    f"cell {index}: the figure shows {used!r} for {label!r}, the catalog now "
                    f"says {current!r} (execute the chapter again)"
                )
    return problems


# ----------------------------------------------------------------------------------------------
# the IPython formatter


class BilingualPNG:
    """The 'image/png' formatter of Figure: `english(fig)`, plus the Chinese render as metadata.

    `english` is the formatter the inline backend registered (a partial of IPython's
    print_figure with base64=True and the backend's print_figure_kwargs, bbox_inches="tight"),
    so the English PNG is byte for byte what it would be without this extension, and the
    Chinese one is made the same way (same dpi, same bounding box rule).
    """

    def __init__(self, english: Callable[[Any], Any], catalog_path: Path = CATALOG) -> None:
        self.english = english
        self.catalog_path = catalog_path

    def __call__(self, fig: Any) -> Any:
        with recording_drawn_texts() as drawn:
            data = self.english(fig)
        if data is None:
            return None
        labels = list(dict.fromkeys(text for text in drawn if is_word_label(text)))
        metadata: dict[str, Any] = {LABELS_KEY: {}}
        if not labels:
            return data, metadata
        catalog = read_catalog(self.catalog_path)
        try:
            with chinese_labels(fig, catalog) as used:
                zh = self.english(fig)
        except Exception as error:  # keep the English figure; say loudly what went wrong
            print(f"bilingual_figures: no Chinese figure: {error!r}", file=sys.stderr)
            return data, metadata
        if isinstance(zh, bytes):
            zh = base64.b64encode(zh).decode("ascii")
        # Labels without a translation are kept as None; the executor reports them.
        metadata[LABELS_KEY] = {
            label: used.get(label, translate(label, catalog)) for label in labels
        }
        metadata[ZH_KEY] = zh
        return data, metadata


def _wrap_png_formatter(ip: Any) -> None:
    """Wrap the inline backend's Figure → PNG formatter, if there is one and it is not ours."""
    from matplotlib.figure import Figure

    png = ip.display_formatter.formatters["image/png"]
    current = png.type_printers.get(Figure)
    if current is not None and not isinstance(current, BilingualPNG):
        png.for_type(Figure, BilingualPNG(current))


def load_ipython_extension(ip: Any) -> None:
    """`%load_ext bilingual_figures`: make every displayed Figure bilingual.

    pyplot loads its backend at the first figure, and matplotlib_inline registers its PNG
    formatter then; the backend is loaded now instead, so that the formatter can be wrapped
    before the first cell. `%matplotlib inline` or `set_matplotlib_formats` in a cell replace
    it, so it is wrapped again before every cell runs and before the figures left open are
    flushed after it.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    plt.switch_backend(matplotlib.get_backend())
    _wrap_png_formatter(ip)
    ip.events.register("pre_run_cell", lambda *args: _wrap_png_formatter(ip))
    # First of the post_execute callbacks, so before the inline backend's flush_figures.
    ip.events.callbacks["post_execute"].insert(0, lambda *args: _wrap_png_formatter(ip))


def unload_ipython_extension(ip: Any) -> None:
    """Put the inline backend's own PNG formatter back."""
    from matplotlib.figure import Figure

    png = ip.display_formatter.formatters["image/png"]
    current = png.type_printers.get(Figure)
    if isinstance(current, BilingualPNG):
        png.for_type(Figure, current.english)
