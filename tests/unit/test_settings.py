"""The grading settings (``autograder.settings``): one object, built once from the defaults,
the course's ``grading.toml``, ``AFZ_GRADEBOOK_URL`` and ``--set``, written into each run
folder; and the rule that the course reads at most three environment variables, each in the
instructor guide's table."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest
from support import REPO

from autograder import settings as st
from autograder.settings import Settings, SettingsError
from course.cli import main
from course.config import Course, CourseError, load_settings
from course.grading.submission import grader_fingerprint

NAMES = [f.name for f in fields(Settings) if f.name != "origin"]


@pytest.fixture(autouse=True)
def no_url(monkeypatch):
    monkeypatch.delenv("AFZ_GRADEBOOK_URL", raising=False)


def test_later_sources_win_and_each_value_says_where_it_came_from(tmp_path, monkeypatch):
    (tmp_path / "grading.toml").write_text(
        "cell_timeout = 60\nkernel_memory_mb = 3000\nfeedback_shows_hidden = true\n"
    )
    monkeypatch.setenv("AFZ_GRADEBOOK_URL", "sqlite:////tmp/other.db")
    got = st.load(tmp_path, ["cell_timeout=30", "sandbox=false"])
    assert (got.cell_timeout, got.kernel_memory_mb, got.feedback_shows_hidden) == (30, 3000, True)
    assert got.sandbox is False and got.gradebook_url == "sqlite:////tmp/other.db"
    assert got.notebook_timeout == Settings().notebook_timeout  # untouched: the default
    assert got.where("cell_timeout") == "cell_timeout = 30, --set cell_timeout"
    assert got.where("kernel_memory_mb").endswith("grading.toml")
    assert got.where("gradebook_url").endswith("AFZ_GRADEBOOK_URL")
    assert got.where("notebook_timeout") == "notebook_timeout = 1800, the default"


def test_a_grading_table_is_read_as_well(tmp_path):
    (tmp_path / "grading.toml").write_text("[grading]\noutput_mb = 2.5\n")
    assert st.load(tmp_path).output_bytes == int(2.5 * 2**20)


@pytest.mark.parametrize(
    "toml, message",
    [
        ("cel_timeout = 60", "there is no setting 'cel_timeout'; the settings are cell_timeout"),
        ('cell_timeout = "soon"', "cell_timeout = 'soon' is not a number of seconds"),
        ("cell_timeout = 0", "cell_timeout = 0 must be above 0 (seconds)"),
        ("kernel_memory_mb = 2.5", "kernel_memory_mb = 2.5 is not a whole number of MiB"),
        ("grader_memory_mb = 10", "grader_memory_mb = 10 must be at least 64 (MiB)"),
        ("sandbox = 3", "sandbox = 3 is not true or false"),
        ("gradebook_url = 5", "gradebook_url = 5 is not a text"),
        ("cell_timeout = [1]", "cell_timeout = [1] is not a number of seconds"),
        ("[limits]\ncell_timeout = 1", "write the settings as NAME = VALUE lines"),
        ("cell_timeout = ", "is not TOML"),
    ],
)
def test_a_wrong_file_is_refused_with_its_name_and_the_fix(tmp_path, toml, message):
    (tmp_path / "grading.toml").write_text(toml + "\n")
    with pytest.raises(SettingsError) as err:
        st.load(tmp_path)
    assert message in str(err.value) and str(tmp_path / "grading.toml") in str(err.value)


def test_the_command_line_refuses_a_wrong_setting_before_it_does_anything(tmp_path, capsys):
    (tmp_path / "solutions" / "01_x").mkdir(parents=True)
    for option, message in [
        ("cell_timeout", "--set 'cell_timeout': write it as --set NAME=VALUE"),
        ("=5", "--set '=5': write it as --set NAME=VALUE"),
        ("cpu=2", "--set cpu: there is no setting 'cpu'"),
        ("kernel_cpu_cores=-1", "kernel_cpu_cores = '-1' must be at least 0"),
        ("sandbox=maybe", "sandbox = 'maybe' is not true or false"),
    ]:
        assert main(["--root", str(tmp_path), "--set", option, "grades"]) == 2, option
        assert message in capsys.readouterr().err, option
    assert not (tmp_path / "grades.csv").exists() and not (tmp_path / "gradebook.db").exists()


def test_no_sandbox_is_the_sandbox_setting(tmp_path):
    from course.cli import parser

    args = parser().parse_args(["--root", str(tmp_path), "autograde", "--no-sandbox"])
    options = [*args.settings, "sandbox=false"] if args.no_sandbox else args.settings
    assert load_settings(tmp_path, options).sandbox is False


def test_a_run_folder_gets_the_settings_without_the_gradebook_url(tmp_path):
    mine = Settings(cell_timeout=7, gradebook_url="postgresql+psycopg2://u:secret@h/db")
    mine = mine.with_values({"output_mb": 3}, "grading.toml")
    path = mine.write(tmp_path)
    assert "secret" not in path.read_text()
    back = st.of_run(tmp_path)
    assert back is not None and back == mine.for_workers()
    assert back.cell_timeout == 7 and back.gradebook_url == "" and back.output_mb == 3
    assert back.origin["output_mb"] == "grading.toml"
    assert st.of_run(tmp_path / "nothing") is None


def test_a_course_carries_its_settings_and_they_change_the_fingerprint(tmp_path):
    (tmp_path / "solutions" / "01_x").mkdir(parents=True)
    plain = Course(tmp_path)
    assert plain.settings == Settings()
    assert plain.gradebook_url == f"sqlite:///{tmp_path.resolve()}/gradebook.db"
    longer = Course(tmp_path, load_settings(tmp_path, ["cell_timeout=900"]))
    assert longer == plain  # the same course root
    assert grader_fingerprint(longer, "01_x") != grader_fingerprint(plain, "01_x")
    shown = Course(tmp_path, load_settings(tmp_path, ["feedback_shows_hidden=true"]))
    assert grader_fingerprint(shown, "01_x") == grader_fingerprint(plain, "01_x")
    (tmp_path / "grading.toml").write_text("gradebook_url = 'postgres://u@h/db'\n")
    with pytest.raises(CourseError, match=r"grading.toml .*psycopg2"):
        Course(tmp_path).gradebook_url  # noqa: B018 - the property checks


# ---------------------------------------------------------------------------------------
# The environment: three variables, one table
# ---------------------------------------------------------------------------------------
# What runs for an instructor or a learner, and its scripts (the tests set old names on purpose,
# to show that a worker's environment does not count).
CODE = ["autograder", "checks", "helpers", "course", "tools", "benchmarks", "_ext"]
ALLOWED = {"AFZ_RUN", "AFZ_GRADEBOOK_URL", "AFZ_TIMING"}


def variables_read() -> dict[str, list[str]]:
    """Every ``AFZ_*`` name in the code and its scripts: name -> files."""
    found: dict[str, list[str]] = {}
    paths = [REPO / "nbgrader_config.py", REPO / "Makefile", REPO / "conftest.py"]
    for folder in CODE:
        paths += sorted((REPO / folder).rglob("*.py")) + sorted((REPO / folder).rglob("*.sh"))
    for path in paths:
        if path.is_file():
            for name in set(re.findall(r"\bAFZ_[A-Z][A-Z_]*[A-Z]\b", path.read_text())):
                found.setdefault(name, []).append(str(path.relative_to(REPO)))
    return found


def guide_table(heading: str) -> dict[str, str]:
    """The first column (in backquotes) -> the row, of the table under ``heading``."""
    text = (REPO / "instructor_guide.md").read_text()
    section = text.split(heading, 1)[1]
    rows, fenced = {}, False
    for line in section.splitlines()[1:]:
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            break
        m = re.match(r"^\| `([^`]+)` \|", line)
        if m:
            rows[m.group(1)] = line
    return rows


def test_the_course_reads_at_most_three_environment_variables():
    found = variables_read()
    assert set(found) <= ALLOWED, {k: v for k, v in found.items() if k not in ALLOWED}
    assert len(ALLOWED) <= 3


def test_the_guide_has_one_row_for_each_variable_and_each_setting_with_its_default():
    variables = guide_table("### Environment variables")
    assert set(variables) == ALLOWED, variables
    table = guide_table("### Settings")
    assert list(table) == NAMES, "one row per setting, in the order of autograder/settings.py"
    defaults = Settings()
    for name, row in table.items():
        value = getattr(defaults, name)
        if isinstance(value, bool):
            shown = "true" if value else "false"
        else:
            shown = '""' if value == "" else f"{value:g}"
        assert f"| `{shown}` |" in row, (name, row)
        assert name in st.DESCRIPTIONS


def test_the_replay_cache_and_the_report_share_one_fingerprint_of_the_grader(tmp_path, monkeypatch):
    """Both keys come from ``autograder.fingerprint``: a change to the grader's code changes
    the replay cache's key of a notebook and the grader recorded with each result."""
    from autograder import fingerprint, replay
    from course.grading import submission

    code = tmp_path / "verdicts.py"
    code.write_text("x = 1\n")
    monkeypatch.setattr(fingerprint, "grader_code", lambda: [code])
    (tmp_path / "solutions" / "01_x").mkdir(parents=True)
    notebook = tmp_path / "solutions" / "01_x" / "x.ipynb"
    notebook.write_text("{}")
    course = Course(tmp_path)

    def keys() -> tuple[str, str]:
        submission._grader_fingerprint.cache_clear()
        return replay._fingerprint(notebook, False), grader_fingerprint(course, "01_x")

    before = keys()
    code.write_text("x = 2\n")
    after = keys()
    assert before[0] != after[0] and before[1] != after[1]
    assert len(set(before + after)) == 4  # the replay and the report key different things
