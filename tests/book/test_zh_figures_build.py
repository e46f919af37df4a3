"""The Chinese edition's figures in a real Sphinx build: a one-notebook project built in
English shows the English PNG, built in Chinese the Chinese one that tools/bilingual_figures.py
stored beside it (_ext/zh_figures.py swaps them). The stored chapters, the catalog and the swap
of labels: tests/unit/test_figure_labels.py.
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import matplotlib
import nbformat

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import bilingual_figures as bf  # noqa: E402


def test_a_sphinx_build_in_chinese_shows_the_chinese_png(tmp_path):
    """A one-notebook Sphinx project built in English and in Chinese (about 10 s)."""
    from sphinx.application import Sphinx

    def png(color):
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.set_facecolor(color)
        out = io.BytesIO()
        fig.savefig(out, format="png")
        plt.close(fig)
        return out.getvalue()

    english, chinese = png("red"), png("blue")
    nb = nbformat.v4.new_notebook()
    output = nbformat.v4.new_output(
        "display_data",
        data={"image/png": base64.b64encode(english).decode(), "text/plain": "<Figure>"},
        metadata={"image/png": {bf.ZH_KEY: base64.b64encode(chinese).decode()}},
    )
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Page"),
        nbformat.v4.new_code_cell("x", outputs=[output]),
    ]
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nb, src / "index.ipynb")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'zh_figures']\nnb_execution_mode = 'off'\n",
        encoding="utf-8",
    )
    for language, expected in [("en", english), ("zh_CN", chinese)]:
        out = tmp_path / language
        app = Sphinx(
            src,
            src,
            out,
            out / ".doctrees",
            "html",
            {"language": language},
            status=None,
            warning=io.StringIO(),
            freshenv=True,
        )
        app.build()
        images = [p.read_bytes() for p in (out / "_images").glob("*.png")]
        assert images == [expected], language
