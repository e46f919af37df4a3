"""The nbgrader assignments, graded by the real nbgrader through the instructor's tool (course).

Every assignment in solutions/ is picked up. The *main class* is graded once per session, in
a temporary course root with 2 worker processes: per assignment, the solution notebook (full
marks), the untouched exercise (0, no crash), two typical mistakes of tests/grading_cases/
(they lose points) and a correct alternative (full marks); each scores what autograder/dry.py
gives it, the kernel-less grader on which tests/grading/test_grading_cases.py runs the whole
table. (The adversarial class of assignment 01: test_adversaries.py, a file of its own so that
pytest-xdist grades both classes at once.)

And the gradebook: the results that parallel workers graded in copies of an SQLite gradebook,
merged into the main one through nbgrader's API, equal those of a run that graded straight
into it, field by field (tests/grading/test_postgres.py does the same with a PostgreSQL
server).

The notebooks are built in tests/support/submissions.py; the checks that need
no kernel (the release's leak check and points, collect, validate's verdict) are in
tests/unit/test_release.py and tests/unit/test_workflow_steps.py.
"""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from pathlib import Path

import grading_cases as CASES
import pytest
from support.gradebooks import DUE, LATE_CONFIG, gradebook_content, merge_class, prepare
from support.learner import answered
from support.submissions import (
    A1,
    ASSIGNMENTS,
    COURSE,
    MISTAKES,
    exercise,
    make_root,
    source,
    submit,
)

from course import gradebook, release
from course.config import Course
from course.grading.batch import autograde
from course.release import verify_release
from course.reports import feedback, grades
from course.validate import validate

pytestmark = pytest.mark.usefixtures("grading_env")
FULL = "full"


def by_key(results) -> dict[tuple[str, str], object]:
    return {(r.assignment, r.student): r for r in results}


# ---------------------------------------------------------------------------------------
# exercises/ is generated from solutions/
# ---------------------------------------------------------------------------------------
# slow: nbgrader generates every assignment again
def test_exercises_are_a_fresh_generation_without_solutions():
    problems = verify_release(COURSE, ASSIGNMENTS)
    assert problems == [], "\n".join(problems)


# slow: replays each solution notebook
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_cell_has_hidden_checks(assignment):
    """Visible checks' values are released (in the test cells); a test of visible checks
    only could be passed by hard-coding them, so every test also checks hidden inputs."""
    from autograder import replay

    full = replay.expected_checks(source(assignment))
    visible = replay.expected_checks(source(assignment), visible_only=True)
    for grade_id, checks in full.items():
        seen = [c["key"] for c in visible.get(grade_id, [])]
        hidden = [c["key"] for c in checks if c["key"] not in seen]
        assert hidden, f"{assignment}/{grade_id}: no hidden checks"


# ---------------------------------------------------------------------------------------
# The main class
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def main_class(tmp_path_factory):
    """Per assignment, the sampled notebooks of the table (``grading_cases.sample``), each
    submitted by a student of its own: ``{(assignment, student): table name}``."""
    root = make_root(tmp_path_factory.mktemp("main_class"))
    names = {}
    for a in ASSIGNMENTS:
        nbs, _ = CASES.notebooks(a)
        for i, name in enumerate(CASES.sample(a)):
            student = {"solution": "solution", "untouched": "untouched"}.get(name, f"case{i}")
            submit(root, student, a, nbs[name])
            names[(a, student)] = name
    results = autograde(ASSIGNMENTS, Course(root), workers=2)
    return root, by_key(results), names


def test_solutions_get_full_marks(main_class):
    _, results, _ = main_class
    for a in ASSIGNMENTS:
        r = results[(a, "solution")]
        assert r.status == "ok", f"{a}: {r.status}"
        assert r.score == r.max_score > 0, f"{a}: solution scored {r.score}/{r.max_score}"


def test_untouched_exercises_get_zero_without_crashing(main_class):
    _, results, _ = main_class
    for a in ASSIGNMENTS:
        r = results[(a, "untouched")]
        assert r.status == "ok", f"{a}: {r.status}"
        assert r.score == 0, f"{a}: the untouched exercise scored {r.score}"


def test_mistakes_lose_points_and_alternatives_keep_them(main_class):
    _, results, names = main_class
    wrong = []
    for (a, s), name in names.items():
        r = results[(a, s)]
        assert r.status == "ok", f"{a} / {name}: {r.status}"
        if name.startswith("mistake: ") and r.score >= r.max_score:
            wrong.append(f"{a} / {name}: {r.score}/{r.max_score}")
        if name.startswith("alternative: ") and r.score != r.max_score:
            wrong.append(f"{a} / {name}: {r.score}/{r.max_score}")
    assert wrong == [], "\n".join(wrong)
    kinds = {name.split(":")[0] for name in names.values()}
    assert {"mistake", "alternative"} <= kinds


def test_nbgrader_and_the_dry_grader_agree(main_class):
    """The whole table is graded without Jupyter (tests/grading/test_grading_cases.py); that is only
    worth something if it scores what real grading scores."""
    _, results, names = main_class
    by_assignment: dict[str, list[str]] = {}
    for (a, _), name in names.items():
        by_assignment.setdefault(a, []).append(name)
    # From 06 back: test_grading_cases.py, on another pytest-xdist worker, asks from 01 on, so
    # the two workers dry grade different assignments of the shared table at the same time.
    graded = {a: CASES.dry_graded(a, sampled) for a, sampled in reversed(by_assignment.items())}
    differ = []
    for (a, s), name in names.items():
        dry = graded[a][name]
        if results[(a, s)].score != dry.score:
            differ.append(f"{a} / {name}: nbgrader {results[(a, s)].score}, dry {dry.score}")
    assert differ == [], "\n".join(differ)


def test_feedback_and_grades(main_class):
    root, results, _ = main_class
    feedback(ASSIGNMENTS, Course(root))
    for a in ASSIGNMENTS:
        html = root / "feedback" / "solution" / a / source(a).with_suffix(".html").name
        assert html.exists(), f"no feedback for {a}"
        assert "Score" in html.read_text() or "score" in html.read_text()
    out = root / "grades.csv"
    grades(Course(root), out)
    rows = {(r["assignment"], r["student"]): r for r in csv.DictReader(out.open())}
    for key, r in results.items():
        assert float(rows[key]["score"]) == pytest.approx(r.score), key
        assert rows[key]["status"] == r.status


# ---------------------------------------------------------------------------------------
# The gradebook: the engine's two executors, threads and Dask, give the same one
# ---------------------------------------------------------------------------------------


def grade_merge_class(root: Path, scheduler: str | None = None) -> tuple[str, dict]:
    """Grade ``merge_class`` in ``root`` with 2 workers, threads of this process or (with
    ``scheduler="local"``) a Dask LocalCluster; (gradebook URL, content)."""
    course = Course(make_root(root))
    notebook = source(A1).stem
    for student, (nb, when) in merge_class().items():
        submit(root, student, A1, nb)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        (root / "submitted" / student / A1 / "timestamp.txt").write_text(stamp)
    url = course.gradebook_url
    release.register(course, [A1], sorted(merge_class()), url)
    prepare(url, notebook)
    results = autograde([A1], course, workers=2, scheduler=scheduler)
    assert all(r.status == "ok" for r in results), results
    return url, gradebook_content(url, sorted(merge_class()))


@pytest.fixture(scope="session")
def merge_runs(tmp_path_factory):
    """The same class graded by the one engine on 2 threads (the default) and on 2 Dask worker
    processes (each submission graded before sent with its own state): {"threads" | "dask":
    (url, content)}."""
    config = tmp_path_factory.mktemp("jupyter_config")
    (config / "nbgrader_config.py").write_text(LATE_CONFIG)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_CONFIG_DIR", str(config))
        return {
            "threads": grade_merge_class(tmp_path_factory.mktemp("threads")),
            "dask": grade_merge_class(tmp_path_factory.mktemp("dask"), scheduler="local"),
        }


# nbgrader's add_submission under SQLAlchemy 2 (prepare, and merge into an empty gradebook)
QUIET_SA = "ignore:Object of type .* not in session:sqlalchemy.exc.SAWarning"


@pytest.mark.filterwarnings(QUIET_SA)
def test_threads_and_dask_give_the_same_gradebook_field_by_field(merge_runs):
    direct = merge_runs["threads"][1]
    assert merge_runs["dask"][1] == direct
    # ... and the content compared is the one that matters, not empty or all defaults
    notebook = source(A1).stem
    ontime, late, extended = (direct[s]["notebooks"][notebook] for s in merge_class())
    assert direct["late"]["late"][0] > 0
    assert late["notebook"]["late_submission_penalty"] == late["notebook"]["score"] > 0
    assert direct["extended"]["submission"]["extension"] == timedelta(days=2)
    assert direct["extended"]["late"] == (0, 0.0)
    assert extended["notebook"]["score"] == extended["notebook"]["max_score"] == 22
    assert direct["ontime"]["submission"]["timestamp"] == DUE - timedelta(days=1)
    assert ontime["notebook"]["flagged"] is True
    manual = ontime["grades"]["test_softmax"]
    assert manual["manual_score"] == 1.5 and manual["auto_score"] == 0
    assert manual["needs_manual_grade"] is True
    assert ontime["comments"]["softmax"]["manual_comment"] == "see me"
    assert ontime["comments"]["softmax"]["auto_comment"] == "No response."


@pytest.mark.filterwarnings(QUIET_SA)
def test_merge_creates_what_the_target_gradebook_lacks(merge_runs, tmp_path):
    """Merged into a gradebook that has the assignment but not the students: the students and
    their submissions are created, equal to the source's."""
    url, content = merge_runs["threads"]
    target = f"sqlite:///{tmp_path / 'target.db'}"
    students = sorted(merge_class())
    release.register(Course(make_root(tmp_path / "course")), [A1], [], target)
    with gradebook.open_gradebook(target) as gb:  # the assignment's own: not merged
        gb.update_or_create_assignment(A1, duedate=DUE)
    gradebook.merge(url, target, [(A1, s) for s in students])
    assert gradebook_content(target, students) == content


# ---------------------------------------------------------------------------------------
# collect
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------


# slow: nbgrader validate starts a kernel
def test_validate_fails_on_the_untouched_exercise(tmp_path, capsys):
    assert validate([exercise(A1)], Course(tmp_path)) is False
    assert "VALIDATION FAILED" in capsys.readouterr().out


# slow: nbgrader validate starts a kernel (in the sandbox, where there is one)
def test_validate_judges_the_visible_checks_like_the_learners_own_run(tmp_path, capsys):
    """A kernel that validates judges the visible checks at once (it does not only record
    them for a grader that never comes), with the values the released notebook carries alone
    in its folder: a wrong softmax fails with the whole teaching message, hint included."""
    name = source(A1).name
    (tmp_path / name).write_text(json.dumps(answered(A1, MISTAKES[A1][0][0])))
    assert validate([tmp_path / name], Course(tmp_path)) is False
    out = capsys.readouterr().out
    assert "VALIDATION FAILED" in out and "row sums of softmax(scores)" in out, out[-3000:]
    assert "each row should sum to 1: did you sum over axis 0 instead of `axis`?" in out, out
    assert "afz1:…" in out  # the packed values shortened, not the lines cut at 90 characters
    assert not [line for line in out.splitlines() if line.endswith("...")], out
    (tmp_path / name).write_text(json.dumps(answered(A1)))
    assert validate([tmp_path / name], Course(tmp_path)) is True  # the solution


@pytest.mark.filterwarnings(QUIET_SA)
def test_dask_workers_get_no_grades_but_each_task_its_own_submission(merge_runs, tmp_path):
    """The seed every Dask worker gets has the assignments and students and nothing graded, so
    it does not grow with the class; a submission already in the gradebook travels alone, in
    its own task, and a worker's seed with it equals the main gradebook for that submission."""
    from course.grading.engine import prior_states, seed_gradebook

    url, content = merge_runs["threads"]
    course = Course(make_root(tmp_path / "course"))
    jobs = [(A1, s) for s in sorted(merge_class())] + [(A1, "newcomer")]
    seed = seed_gradebook(course, url, [A1], jobs)
    seed_db = tmp_path / "seed.db"
    seed_db.write_bytes(seed)
    with gradebook.open_gradebook(f"sqlite:///{seed_db}") as gb:
        assert gb.find_assignment(A1).submissions == []
        assert sorted(s.id for s in gb.students) == sorted(s for _, s in jobs)
        assert gb.find_assignment(A1).duedate == DUE
    priors = prior_states(url, jobs)
    assert sorted(priors) == sorted(jobs[:-1])  # the newcomer has no submission yet
    for (a, s), data in priors.items():
        db = tmp_path / f"{s}.db"
        db.write_bytes(seed)  # as course.grading.task.grade_task prepares it
        with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
            gradebook.import_submission(gb, a, s, data)
        with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
            assert [sub.student.id for sub in gb.find_assignment(a).submissions] == [s]
        assert gradebook_content(f"sqlite:///{db}", [s]) == {s: content[s]}
