"""The chapters' prose states no measured number that their stored outputs do not print.

tools/prose_numbers.py reads the stored notebooks (nothing is executed): every decimal number
of a chapter's text must be printed by one of its cells (as written, or rounded), or be listed
with its source in chapters/cited_numbers.yml. Re-executing a chapter whose numbers move then
fails here until its text follows.
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
    """ch05's text says the warm-up run reaches 0.9976: a re-run printing 0.9912 must fail."""
    copy = _copy_of_chapters(tmp_path)
    monkeypatch.setattr(prose_numbers, "CHAPTERS", copy)
    chapter = copy / "05_residual_and_layernorm.ipynb"
    assert prose_numbers.check([chapter], copy / "cited_numbers.yml") == []
    _replace_output(chapter, "200 steps 0.9976", "200 steps 0.9912")
    problems = prose_numbers.check([chapter], copy / "cited_numbers.yml")
    assert [p.number for p in problems] == ["0.9976"], problems
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
            {"cell_type": "code", "source": [""], "outputs": [{"text": "4.8e-14 0.982\n"}]},
            {
                "cell_type": "markdown",
                "source": ["$4.8 \\cdot 10^{-14}$, 98.2%, $4.9 \\cdot 10^{-14}$"],
            },
        ]
    }
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    problems = prose_numbers.unmatched(path, cited=set(), sections=set())
    assert [p.number for p in problems] == ["4.9"]


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
