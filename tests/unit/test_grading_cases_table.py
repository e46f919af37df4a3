"""The table of typical mistakes and correct alternatives (``tests/grading_cases/``) is big
enough, and the instructor guide reports it as it is, in both languages: its rows, the
sentence under them and their Chinese are written by ``tools/grading_table.py --write``, and
checked here without grading anything (every notebook of the table graded:
``tests/grading/test_grading_cases.py``)."""

from __future__ import annotations

import sys

import pytest
from babel.messages.pofile import read_po
from grading_cases import ALTERNATIVES, MISTAKES
from support import REPO
from support.table import ASSIGNMENTS

sys.path.insert(0, str(REPO / "tools"))
import grading_table  # noqa: E402
import guide_catalog  # noqa: E402

MIN_MISTAKES = 13
RERUN = "run tools/grading_table.py {}--write (under the i18n lock)"


def guide() -> str:
    return guide_catalog.GUIDE.read_text(encoding="utf-8")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_table_is_big_enough(assignment):
    names = [c[0] for c in MISTAKES.get(assignment, [])]
    assert len(names) >= MIN_MISTAKES, f"{assignment}: {len(names)} typical mistakes"
    assert len(set(names)) == len(names), f"{assignment}: two mistakes share a name"
    assert ALTERNATIVES.get(assignment), f"{assignment}: no correct alternative solution"


def test_the_instructor_guide_reports_the_table_as_it_is():
    """One row per assignment of the table, whose counts, points and number of notebooks are the
    table's and the solution's (only the mean score and the time are measured), with every
    mistake caught and every alternative at full marks (the test above and
    tests/grading/test_grading_cases.py make sure that each is)."""
    rows = {r.assignment: r for r in grading_table.rows(guide())}
    assert sorted(rows) == sorted(MISTAKES), RERUN.format("ASSIGNMENT ")
    for a, row in rows.items():
        counted = grading_table.counted(a)
        said = {k: getattr(row, k) for k in counted}
        assert said == counted, RERUN.format(a + " ")
        assert (row.caught, row.full) == (row.mistakes, row.alternatives), RERUN.format(a + " ")


def test_the_sentence_under_the_table_adds_its_rows_up():
    text = guide()
    table = grading_table.rows(text)
    assert f"\n\n{grading_table.totals(table)}\n\n" in text, RERUN.format("ASSIGNMENT ")


def catalog_messages(path=guide_catalog.CATALOG) -> dict:
    with path.open("rb") as f:
        return {m.id: m for m in read_po(f, locale="zh_CN") if m.id}


def test_the_chinese_guide_shows_the_table():
    messages = catalog_messages()
    wrong = [
        f"{english!r}: {getattr(messages.get(english), 'string', None)!r}, not {chinese!r}"
        for english, chinese in grading_table.translations(grading_table.rows(guide())).items()
        if english not in messages or messages[english].string != chinese or messages[english].fuzzy
    ]
    assert wrong == [], RERUN.format("ASSIGNMENT ")


def test_a_measured_row_replaces_its_own_and_the_sentence_follows(tmp_path):
    """--write replaces the measured assignments' rows and the sentence under the table, and
    nothing else; the catalog gets their Chinese."""
    text = guide()
    table = grading_table.rows(text)
    assert grading_table.replaced(text, table) == text
    old = next(r for r in table if r.assignment == "04_encoder")
    new = old._replace(mistakes=old.mistakes + 1, caught=old.caught + 1, mean=9.0, seconds=7)
    written = grading_table.replaced(text, [new])
    assert (
        written.replace(new.markdown(), old.markdown()).replace(
            grading_table.totals(grading_table.rows(written)), grading_table.totals(table)
        )
        == text
    )
    assert f"In all, {sum(r.mistakes for r in table) + 1} typical mistakes" in written
    copy = tmp_path / "instructor_guide.po"
    copy.write_bytes(guide_catalog.CATALOG.read_bytes())
    translations = grading_table.translations(grading_table.rows(text))
    assert guide_catalog.write_messages(translations, copy) is False
    assert copy.read_bytes() == guide_catalog.CATALOG.read_bytes()
    assert guide_catalog.write_messages(grading_table.translations([new]), copy) is True
    messages = catalog_messages(copy)
    assert messages[new.cells()[4]].string == f"{new.notebooks} 个笔记本共 7 s"
    assert messages[new.cells()[3]].string == f"9.0 / {new.points:g}"
