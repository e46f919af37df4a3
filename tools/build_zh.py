"""Build the Chinese edition of the book into _build/html/zh/ (`make book` runs it).

The Chinese edition is the English book's sources, with the prose taken from the gettext
catalogs in locale/zh_CN/LC_MESSAGES/ (Sphinx's `language` and `locale_dirs`) and every code
cell, output and figure from the same notebooks. It is built like the English edition
(`jupyter-book build --all -W -n --keep-going .`, through the same Jupyter Book function and
_config.yml), with only these settings changed:

- `language`: zh_CN (the translations; `<html lang="zh-CN">`; the theme's own words);
- `html_search_language`: zh, so the search index is segmented with jieba (_ext/zh_search.py);
- `html_title`: the edition's title, the same as its landing page's heading (intro.po);
- its own build folder, _build/zh/ (doctrees hold translated text, and myst-nb writes the
  notebooks' images next to the HTML folder), copied to _build/html/zh/ when the build passes.

    python tools/build_zh.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build" / "zh"  # html/, .doctrees/ and jupyter_execute/ of this edition
PUBLISHED = ROOT / "_build" / "html" / "zh"  # beside the English edition

SETTINGS = {
    "language": "zh_CN",
    "locale_dirs": ["locale/"],
    "html_search_language": "zh",
    "html_title": "从零实现注意力",  # the landing page's title (intro.po)
}


def build(build: Path = BUILD) -> int:
    """Build the Chinese HTML edition into build/html; the Sphinx exit status (warnings fail)."""
    from jupyter_book.sphinx import build_sphinx

    # From scratch: Sphinx merges a new search index into the one it finds in the output folder,
    # so words that left the pages (or a changed segmenter's words) would stay searchable.
    shutil.rmtree(build, ignore_errors=True)
    result = build_sphinx(
        ROOT,
        build / "html",
        use_external_toc=True,
        noconfig=True,
        path_config=str(ROOT / "_config.yml"),
        confoverrides={
            "external_toc_path": (ROOT / "_toc.yml").as_posix(),
            "latex_individualpages": False,
            "nitpicky": True,
            **SETTINGS,
        },
        doctreedir=build / ".doctrees",
        builder="html",
        freshenv=True,
        warningiserror=True,
        keep_going=True,
    )
    if isinstance(result, Exception):
        raise result
    return result


def publish(build: Path = BUILD, published: Path = PUBLISHED) -> None:
    """Put the built edition at _build/html/zh/, replacing the previous one."""
    shutil.rmtree(published, ignore_errors=True)
    shutil.copytree(build / "html", published)


if __name__ == "__main__":
    status = build()
    if status == 0:
        publish()
        print(f"The Chinese edition is in {PUBLISHED.relative_to(ROOT)}/.")
    sys.exit(status)
