"""The Chinese message catalogs keep up with the English book (tools/i18n_check.py)."""

import shutil
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_check  # noqa: E402


@pytest.fixture(scope="module")
def pot_root(tmp_path_factory):
    out = tmp_path_factory.mktemp("gettext")
    i18n_check.extract(out)
    return out / "_build" / "gettext"


def test_every_page_has_a_catalog_and_every_message_a_translation(pot_root):
    found = i18n_check.problems(pot_root)
    assert found == [], f"{len(found)} problems, first: " + "\n".join(found[:20])


def test_an_untranslated_fuzzy_or_missing_page_is_reported(pot_root, tmp_path):
    catalogs = tmp_path / "LC_MESSAGES"
    shutil.copytree(i18n_check.CATALOGS, catalogs)
    po = catalogs / "glossary.po"
    catalog = read_po(po.open("rb"), locale="zh_CN")
    messages = [m for m in catalog if m.id and m.string]
    messages[3].string = ""
    messages[4].flags.add("fuzzy")
    with po.open("wb") as f:
        write_po(f, catalog)
    (catalogs / "intro.po").unlink()
    found = i18n_check.problems(pot_root, catalogs)
    assert any("glossary #" in p and "no translation" in p for p in found), found
    assert any("glossary #" in p and "fuzzy" in p for p in found), found
    assert any(p.startswith("intro: no catalog") for p in found), found


@pytest.mark.parametrize(
    ("english", "chinese", "expected"),
    [
        ("Use $d_k$ and `mask`.", "使用 $d_k$ 和 `mask`。", None),
        ("Use $d_k$ and `mask`.", "使用 $d$ 和 `mask`。", "markup differs"),
        ("See {ref}`the note <note-a>`.", "见{ref}`说明 <note-a>`。", None),
        ("See {ref}`the note <note-a>`.", "见{ref}`说明 <note-b>`。", "markup differs"),
        ("See [chapter 2](02.ipynb).", "见[第 2 章](02.ipynb)。", None),
        ("See [chapter 2](02.ipynb).", "见第 2 章。", "markup differs"),
        ("**Bounded.** Next", "**取值有界。**无论", "cannot close"),
        ("**Bounded.** Next", "**取值有界。** 无论", None),
        ("a **“quoted”** word", "一个**“引号”**词", "cannot open"),
        ("7. Training vs. inference", "7. 训练与推理", "numbered list"),
        ("7. Training vs. inference", "7\\. 训练与推理", None),
    ],
)
def test_message_problems(english, chinese, expected):
    found = i18n_check.message_problems(english, chinese)
    if expected is None:
        assert found == []
    else:
        assert any(expected in p for p in found), found


# Sphinx's and the theme's own words (_ext/site_strings.py): written by hand, never by make i18n
NOT_FROM_PAGES = {"booktheme.po", "sphinx.po"}


def test_every_catalog_is_stored_as_make_i18n_writes_it():
    """sphinx-intl rewrites a catalog whose messages changed at a line width of 76: a catalog
    stored in another form turns a one-line change into a diff of the whole file."""
    import io

    differ = []
    for po in sorted(i18n_check.CATALOGS.rglob("*.po")):
        if po.name in NOT_FROM_PAGES:
            continue
        data = po.read_bytes()
        written = io.BytesIO()
        write_po(written, read_po(io.BytesIO(data)), width=76)
        if written.getvalue() != data:
            differ.append(str(po.relative_to(ROOT)))
    assert differ == [], (
        "not as make i18n writes them (babel, width 76): rewrite them with "
        "sphinx_intl.catalog.dump_po(path, load_po(path), width=76): " + ", ".join(differ)
    )
