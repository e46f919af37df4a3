"""One declaration per grading setting (autograder/settings.py): its name, default, unit and
what it limits. The instructor guide's table is written from the declarations
(tools/settings_table.py), its Chinese catalog translates each row, and the nbgrader traitlets
that carry a setting take its default and, in a run, its value (nbgrader_config.py)."""

from __future__ import annotations

import json
import os
import runpy
import sys
from dataclasses import replace
from pathlib import Path

from babel.messages.pofile import read_po
from traitlets.config import Config

from autograder import settings as st
from autograder.preprocessors.limited_execute import LimitedExecute
from autograder.preprocessors.safe_feedback import SafeFeedback

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import settings_table  # noqa: E402

CATALOG = REPO / "locale" / "zh_CN" / "LC_MESSAGES" / "instructor_guide.po"


def guide_table(guide: str) -> str:
    section = guide.split("\n### Settings\n", 1)[1]
    start = section.index(settings_table.HEADER)
    return section[start : section.index("\n\n", start) + 1]


def test_the_guide_shows_the_declarations():
    guide = (REPO / "instructor_guide.md").read_text(encoding="utf-8")
    assert guide_table(guide) == settings_table.table(), "run tools/settings_table.py --write"


def test_a_row_edited_by_hand_is_caught_and_rewritten():
    guide = (REPO / "instructor_guide.md").read_text(encoding="utf-8")
    edited = guide.replace("| `cell_timeout` | `180` |", "| `cell_timeout` | `120` |")
    assert edited != guide and guide_table(edited) != settings_table.table()
    assert guide_table(settings_table.replaced(edited)) == settings_table.table()
    assert settings_table.replaced(edited).replace(guide_table(guide), "") == guide.replace(
        guide_table(guide), ""
    ), "only the table is rewritten"


def test_each_declaration_is_whole():
    """A unit where the value is a quantity, and the description says it first (the guide's
    table has no column of its own for it); a flag or a text has none."""
    for f in st.DECLARED:
        unit, text = f.metadata["unit"], f.metadata["description"]
        assert text and text == text.strip(), f.name
        assert f.metadata["zh"] and f.metadata["zh"] == f.metadata["zh"].strip(), f.name
        if f.type in ("bool", "str"):
            assert unit == "", f.name
        else:
            assert unit and text.startswith(unit + " "), (f.name, unit, text)
    assert st.GRADING_KEYS[:2] == ("cell_timeout", "notebook_timeout")
    assert set(st.DESCRIPTIONS) == set(st.UNITS) == {f.name for f in st.DECLARED}


def test_the_unit_is_the_one_messages_give():
    for name, raw, says in [
        ("kernel_cpu_seconds", "lots", "is not a whole number of CPU seconds"),
        ("max_notebook_mb", "0", "must be above 0 (MiB)"),
        ("kernel_processes", "8", "must be at least 16 (processes)"),
    ]:
        try:
            st.Settings().with_values({name: raw}, "--set")
        except st.SettingsError as err:
            assert says in str(err), str(err)
        else:
            raise AssertionError(f"{name} = {raw!r} was taken")


def catalog_messages(path: Path = CATALOG) -> dict:
    with path.open("rb") as f:
        return {m.id: m for m in read_po(f, locale="zh_CN") if m.id}


def test_the_chinese_guide_shows_the_declarations():
    messages = catalog_messages()
    wrong = [
        f"{english!r}: {getattr(messages.get(english), 'string', None)!r}, not {chinese!r}"
        for english, chinese in settings_table.translations().items()
        if english not in messages or messages[english].string != chinese or messages[english].fuzzy
    ]
    assert wrong == [], "run tools/settings_table.py --write (under the i18n lock)"


def test_the_catalog_s_rows_are_written_back(tmp_path):
    """A row translated by hand, left fuzzy or missing is written from the declarations; the
    rest of the catalog is written as make i18n writes it."""
    copy = tmp_path / "instructor_guide.po"
    copy.write_bytes(CATALOG.read_bytes())
    assert settings_table.write_catalog(copy) is False and copy.read_bytes() == CATALOG.read_bytes()
    name = st.DECLARED[0].name
    text = copy.read_text(encoding="utf-8")
    chinese = st.DESCRIPTIONS_ZH[name]
    assert text.count(f'msgstr "{chinese}"') == 1
    text = text.replace(f'msgstr "{chinese}"', 'msgstr "别的"')
    copy.write_text(text, encoding="utf-8")
    assert catalog_messages(copy)[st.DESCRIPTIONS[name]].string == "别的"
    assert settings_table.write_catalog(copy) is True
    assert copy.read_bytes() == CATALOG.read_bytes()


def test_the_course_s_traitlets_take_the_declared_defaults():
    """Each traitlet a declaration names exists; those of the course's own preprocessors
    (autograder/preprocessors/) default to the setting's default, in their unit."""
    from nbgrader.preprocessors import Execute

    owners = {"Execute": Execute, "LimitedExecute": LimitedExecute, "SafeFeedback": SafeFeedback}
    carried = st.Settings().traitlets()
    assert {
        "Execute.timeout",
        "LimitedExecute.max_output_bytes",
        "SafeFeedback.show_hidden_tests",
    } <= set(carried)
    for trait, default in carried.items():
        section, _, name = trait.partition(".")
        owner = owners[section]
        assert name in owner.class_trait_names(config=True), trait
        if owner.__module__.startswith("autograder.preprocessors."):
            assert owner.class_traits()[name].default_value == default, trait
    assert LimitedExecute.max_output_bytes.default_value == st.Settings().output_bytes
    assert SafeFeedback.show_hidden_tests.default_value is False


def test_nbgrader_config_carries_a_run_s_settings_into_the_traitlets(tmp_path, monkeypatch):
    """nbgrader_config.py, loaded as nbgrader loads it inside a run folder whose settings are
    not the defaults, gives each traitlet that carries a setting the run's value."""
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "solutions").mkdir()
    changed = replace(st.Settings(), cell_timeout=77.0, output_mb=1.5, feedback_shows_hidden=True)
    changed.write(run)
    (run / st.COURSE_FILE).write_text(json.dumps({"root": str(tmp_path)}))
    monkeypatch.setenv(st.RUN_VAR, str(run))
    config = Config()
    cwd = os.getcwd()
    try:
        runpy.run_path(str(REPO / "nbgrader_config.py"), {"get_config": lambda: config})
    finally:
        os.chdir(cwd)
    assert config.Execute.timeout == 77
    assert config.LimitedExecute.max_output_bytes == int(1.5 * 2**20)
    assert config.SafeFeedback.show_hidden_tests is True
    for trait, value in changed.traitlets().items():
        section, _, name = trait.partition(".")
        assert config[section][name] == value, trait
    assert config.CourseDirectory.root == str(tmp_path.resolve())
