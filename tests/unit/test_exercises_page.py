"""The exercises page's "you write" column is each exercise's list of tasks, in both languages:
written by tools/exercises_page.py from the task headings of solutions/<name>/ and their
translations in the exercise's catalog, so that a new task is written once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import exercises_page  # noqa: E402

from checks.exercises import EXERCISES  # noqa: E402

FIX = "run: flock /tmp/afz-i18n.lock .venv/bin/python tools/exercises_page.py --write"


def test_the_page_lists_every_exercises_tasks():
    page = exercises_page.PAGE.read_text(encoding="utf-8")
    assert exercises_page.replaced(page) == page, FIX


def test_the_catalog_translates_each_cell_from_the_task_headings():
    with exercises_page.CATALOG.open("rb") as f:
        catalog = read_po(f)
    for english, chinese in exercises_page.translations().items():
        message = catalog.get(english)
        assert message is not None and message.string == chinese, (english, FIX)
        assert not message.fuzzy, (english, FIX)


def test_every_exercise_has_tasks_and_each_is_listed():
    for exercise in EXERCISES:
        headings = exercises_page.headings(exercise.name)
        assert len(headings) >= 2, exercise.name
        assert exercises_page.cell(exercise.name).count("; ") == len(headings) - 1


def test_a_task_added_to_a_notebook_changes_the_page(monkeypatch):
    name = EXERCISES[3].name
    real = exercises_page.headings
    monkeypatch.setattr(
        exercises_page,
        "headings",
        lambda n: real(n) + (["Task 9 — a piece nobody wrote (1 point)"] if n == name else []),
    )
    page = exercises_page.PAGE.read_text(encoding="utf-8")
    rewritten = exercises_page.replaced(page)
    assert rewritten != page and "; a piece nobody wrote |" in rewritten
    with pytest.raises(SystemExit, match="translate the heading 'Task 9 — a piece nobody wrote"):
        exercises_page.cell_zh(name)
