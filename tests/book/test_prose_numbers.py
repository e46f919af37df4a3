"""The chapters' prose states no measured number that their stored outputs do not print.

tools/prose_numbers.py reads the stored notebooks (nothing is executed): every decimal number
and every integer of a chapter's text (not the numbers of chapters, sections, tables, nor
years) must be a number of one of its cells (as written, or rounded), or be listed with its
source in chapters/cited_numbers.yml. Re-executing a chapter whose numbers move then fails here
until its text follows. The Chinese edition's catalog of each chapter states the numbers of
the English it translates.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import prose_numbers  # noqa: E402

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_prose_numbers_are_printed_or_cited(chapter: Path) -> None:
    problems = prose_numbers.check([chapter])
    assert not problems, "\n".join(str(p) for p in problems)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_the_chinese_states_the_numbers_of_the_english(chapter: Path) -> None:
    problems = prose_numbers.check_catalog(prose_numbers.CATALOGS / f"{chapter.stem}.po")
    assert not problems, "\n".join(str(p) for p in problems)


def _copy_of_chapters(tmp_path: Path) -> Path:
    copy = tmp_path / "chapters"
    copy.mkdir()
    for path in CHAPTERS:
        shutil.copy(path, copy / path.name)
    shutil.copy(prose_numbers.CITED, copy / prose_numbers.CITED.name)
    return copy


def _replace_output(nb_path: Path, old: str, new: str) -> None:
    """Change a printed number in a stored output, as a re-execution that drifted would."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    hits = 0
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", ""))
            if old in text:
                output["text"] = text.replace(old, new)
                hits += 1
    assert hits == 1, f"{old!r} is printed {hits} times in {nb_path.name}; pick another number"
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def test_a_planted_drift_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ch05's text says the warm-up run reaches 0.9973: a re-run printing 0.9912 must fail."""
    copy = _copy_of_chapters(tmp_path)
    monkeypatch.setattr(prose_numbers, "CHAPTERS", copy)
    chapter = copy / "05_residual_and_layernorm.ipynb"
    assert prose_numbers.check([chapter], copy / "cited_numbers.yml") == []
    _replace_output(chapter, "200 steps 0.9973", "200 steps 0.9912")
    problems = prose_numbers.check([chapter], copy / "cited_numbers.yml")
    assert [p.number for p in problems] == ["0.9973"], problems
    assert "warm-up" in problems[0].context or "accuracy" in problems[0].context


def test_a_rounded_number_must_be_the_rounding(tmp_path: Path) -> None:
    """0.16 for a printed 0.1652 is a drift (it rounds to 0.17); 0.17 and 0.165 are not."""
    nb = {
        "cells": [
            {"cell_type": "code", "source": ["print(w)"], "outputs": [{"text": "w 0.1652\n"}]},
            {"cell_type": "markdown", "source": ["weights 0.17, 0.165 and 0.16"]},
        ]
    }
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    problems = prose_numbers.unmatched(path, cited=set(), sections=set())
    assert [p.number for p in problems] == ["0.16"]


def test_scientific_and_percent_forms(tmp_path: Path) -> None:
    nb = {
        "cells": [
            {"cell_type": "code", "source": [""], "outputs": [{"text": "4.8e-14 0.982 15.8%\n"}]},
            {
                "cell_type": "markdown",
                "source": ["$4.8 \\cdot 10^{-14}$, 98.2%, $4.9 \\cdot 10^{-14}$, 15.8 %, 15.9 %"],
            },
        ]
    }
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    problems = prose_numbers.unmatched(path, cited=set(), sections=set())
    assert [p.number for p in problems] == ["4.9", "15.9"]


def test_cited_numbers_need_a_source(tmp_path: Path) -> None:
    cited = tmp_path / "cited_numbers.yml"
    cited.write_text("05_residual_and_layernorm:\n  - {value: '24.6'}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a value and a source"):
        prose_numbers.load_cited(cited)


def test_a_number_quoted_from_another_chapter_is_checked_there(tmp_path: Path) -> None:
    copy = _copy_of_chapters(tmp_path)
    cited = copy / "cited_numbers.yml"
    cited.write_text(
        "09_putting_it_together:\n  - {value: '0.123', printed_by: 10_from_2017_to_today}\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="no longer prints it"):
        prose_numbers.load_cited(cited)


def test_integers_are_checked_too(tmp_path: Path) -> None:
    """Counts, rounded counts, percentages and millions must be numbers of the cells; chapter
    and table numbers, years, list numbers and math are not checked."""
    nb = {
        "cells": [
            {"cell_type": "code", "source": ["n = 20_000"], "outputs": [
                {"text": "161 / 500 rows; 63,119,496 parameters; weight 0.3504; 103,192\n"}
            ]},
            {"cell_type": "markdown", "source": [
                "1. Beam search changed 161 of 500 outputs (chapter 7, Table 3, in 2017), "
                "about 35 % of the weight, 63 million parameters, about 100,000 of them, "
                "20 000 pairs, $x^{42}$ and `43`."
            ]},
        ]
    }  # fmt: skip
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert prose_numbers.unmatched(path, cited=set(), sections=set()) == []
    drifted = json.dumps(nb).replace("161 / 500", "162 / 500")
    path.write_text(drifted, encoding="utf-8")
    problems = prose_numbers.unmatched(path, cited=set(), sections=set())
    assert [p.number for p in problems] == ["161"], problems
    assert prose_numbers.unmatched(path, cited={"161"}, sections=set()) == []


def test_a_catalog_must_state_the_numbers_of_its_english(tmp_path: Path) -> None:
    """0.85 written as 85% is another number; 450 万 is 4.5 million, 八个头 and 8 个头 are
    eight heads; an integer the English does not have is a number left behind."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    english = "Accuracy fell from 0.85 to 0.22 with eight heads and 4.5 million pairs."
    translations = {
        "准确率从 0.85 降到 0.22，用了 8 个头和 450 万个句对。": [],
        "准确率从 0.85 降到 0.22，用了八个头和 450 万个句对。": [],
        "准确率从 85% 降到 22%，用了 8 个头和 450 万个句对。": [(["0.22", "0.85"], ["22", "85"])],
        "准确率从 0.85 降到 0.22，用了 16 个头和 450 万个句对。": [([], ["16"])],
    }
    for chinese, expected in translations.items():
        catalog = Catalog(locale="zh_CN")
        catalog.add(english, chinese)
        po = tmp_path / "x.po"
        with po.open("wb") as handle:
            write_po(handle, catalog)
        found = [(p.only_english, p.only_chinese) for p in prose_numbers.check_catalog(po)]
        assert found == expected, (chinese, found)
