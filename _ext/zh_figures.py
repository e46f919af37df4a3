"""Sphinx extension: the Chinese edition shows the figures with Chinese labels.

When a chapter is executed with tools/execute_chapters.py, every figure output keeps the English
PNG in `image/png` and a copy with Chinese labels in its metadata,
`output.metadata["image/png"]["afz_zh_png"]` (tools/bilingual_figures.py). In a build whose
`language` is Chinese (zh, zh_CN, ...), this extension makes myst-nb read notebooks through
`read_notebook`, which puts the Chinese PNG in place of the English one before myst-nb renders
the stored outputs; nothing else of the notebook changes, and no notebook is executed. In any
other language it does nothing, so the English edition shows the English PNGs.

The hook is myst-nb's `nb_custom_formats`: a reader given for ".ipynb" replaces myst-nb's
default notebook reader (myst_nb/core/read.py, `create_nb_reader`). It is set when the
configuration is read, before myst-nb turns the Sphinx configuration into its own at
builder-inited.
"""

from __future__ import annotations

from typing import Any

import nbformat

ZH_KEY = "afz_zh_png"  # the key tools/bilingual_figures.py stores the Chinese PNG under
READER = f"{__name__}.read_notebook"


def swap_figures(nb: Any) -> int:
    """Put each output's Chinese PNG in place of its English one; the number swapped."""
    swapped = 0
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            chinese = output.get("metadata", {}).get("image/png", {}).get(ZH_KEY)
            if chinese and "image/png" in output.get("data", {}):
                output["data"]["image/png"] = chinese
                swapped += 1
    return swapped


def read_notebook(text: str) -> nbformat.NotebookNode:
    """myst-nb's notebook reader (a notebook from its JSON text), with the Chinese figures."""
    nb = nbformat.reads(text, as_version=4)
    swap_figures(nb)
    return nb


def is_chinese(language: str | None) -> bool:
    return bool(language) and str(language).lower().replace("-", "_").split("_")[0] == "zh"


def use_chinese_figures(app: Any, config: Any) -> None:
    """In a Chinese build, read .ipynb files with `read_notebook`."""
    if not is_chinese(config.language):
        return
    formats = dict(config.nb_custom_formats or {})
    current = formats.get(".ipynb", READER)
    if (current if isinstance(current, str) else current[0]) != READER:
        raise ValueError(
            "zh_figures: nb_custom_formats already has a reader for .ipynb "
            f"({formats['.ipynb']!r}); the Chinese figures would replace it"
        )
    formats[".ipynb"] = (READER, {}, False)
    config.nb_custom_formats = formats


def setup(app: Any) -> dict[str, Any]:
    # Before myst-nb's own config-inited handler (priority 500), which registers the suffixes
    # of nb_custom_formats.
    app.connect("config-inited", use_chinese_figures, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
