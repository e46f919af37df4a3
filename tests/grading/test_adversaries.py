"""The adversarial class (assignment 01), graded by the real nbgrader through the instructor's
tool: an infinite loop, a kernel deaf to the interrupt, a dying kernel, a memory bomb, a deleted
and an edited test cell, invalid JSON, calls to the reference and to built-ins, a monkeypatched
checker, in-process tricks, records that could be rewritten, honest accidents, beside two
control students whose grades must not change. (The main class and the gradebook's engines:
test_nbgrader.py; the notebooks: tests/support/submissions.py.)
"""

from __future__ import annotations

from pathlib import Path

import grading_cases as CASES
import psutil
import pytest
from support import REPO
from support.submissions import (
    A1,
    FAKE_CHECKS,
    MISTAKES,
    adversaries,
    make_root,
    read,
    source,
    submit,
)

from course.autograde import autograde
from course.config import Course, load_settings
from course.reports import feedback

pytestmark = pytest.mark.usefixtures("grading_env")


@pytest.fixture(scope="session")
def adversarial_class(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("adversarial_class"))
    for student, (nb, _) in adversaries().items():
        submit(root, student, A1, nb)
    fake = root / "submitted" / "fakepkg" / A1 / "helpers"  # beside the notebook, as a zip may
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "fixtures.py").write_text("from numpy.random import default_rng as rng\n")
    (fake / "checks.py").write_text(FAKE_CHECKS)
    (fake / "grading.py").write_text("def assert_close(*a, **k):\n    pass\n")
    forger = root / "submitted" / "forger" / A1  # learners get this file with the exercise
    (forger / "expected_visible.json").write_bytes(
        (REPO / "exercises" / A1 / "expected_visible.json").read_bytes()
    )
    # Short limits keep the class quick: the loop's cell stops after 20 s, and the bomb's
    # MemoryError comes after one GiB filled, not three (which a busy 2-core machine took more
    # than 20 s to fill: interrupted first, the bomb was then graded as a time-out).
    course = Course(root, load_settings(root, ["cell_timeout=20", "kernel_memory_mb=2048"]))
    results = autograde([A1], course, workers=2)
    return root, {r.student: r for r in results}


def test_controls_unaffected_by_adversaries(adversarial_class):
    """The two controls score in this class what they score alone: "good" full marks, and
    "partial" (the table's first mistake of 01) what the dry grader gives that notebook with
    no adversary beside it (test_nbgrader.py checks that both graders agree)."""
    _, adv = adversarial_class
    assert adv["good"].status == "ok" and adv["good"].score == adv["good"].max_score == 22
    first = f"mistake: {MISTAKES[A1][0][0]}"  # the mistake of "partial"
    alone = CASES.dry_graded(A1, [first])[first]
    assert adv["partial"].status == "ok"
    assert adv["partial"].score == alone.score < 22


def test_infinite_loop_is_interrupted(adversarial_class):
    r = adversarial_class[1]["loop"]
    assert r.status == "ok" and any("time limit" in n for n in r.notes), r
    assert 0 < r.score < r.max_score  # only the tests that call causal_mask are lost


def test_dead_kernel_is_graded_zero(adversarial_class):
    r = adversarial_class[1]["exit"]
    assert r.status.startswith("error: the kernel died") and r.score == 0, r


def test_kernel_deaf_to_the_interrupt_is_graded_zero_with_a_status_that_says_so(
    adversarial_class,
):
    r = adversarial_class[1]["deaf"]
    assert r.score == 0 and r.status.startswith("error: a cell ran past the time limit"), r
    assert "went on running when interrupted" in r.status, r


def test_memory_bomb_hits_the_kernel_limit(adversarial_class):
    r = adversarial_class[1]["bomb"]
    assert any("out of memory" in n for n in r.notes), r
    assert psutil.virtual_memory().available > 1 << 30  # the machine is fine


def test_deleted_test_cell_is_restored(adversarial_class):
    r = adversarial_class[1]["deleted"]
    assert r.score == r.max_score and any("deleted" in n for n in r.notes), r


def test_edited_test_cells_are_reset(adversarial_class):
    r = adversarial_class[1]["edited"]
    assert r.score == 0 and any("edited" in n for n in r.notes), r


def test_invalid_json_in_submitted_is_an_error_not_a_crash(adversarial_class):
    r = adversarial_class[1]["rawjson"]
    assert r.status.startswith("error") and r.score == 0, r
    assert any("not valid JSON" in n for n in r.notes), r


def test_calling_reference_or_builtin_loses_points(adversarial_class):
    adv = adversarial_class[1]
    for student, lost in (
        ("reference", 9),
        ("builtin", 11),
        ("builtin_map", 11),
        ("builtin_unset", 22),  # sys.setprofile: the grader's reading fails every test
        ("ops_softmax", 11),  # torch.ops: the grader's reading of the source sees it
    ):
        r = adv[student]
        assert r.score == r.max_score - lost, (student, r)
        assert any("reference/built-in" in n for n in r.notes), (student, r)


def test_patching_libraries_and_checks_does_not_help(adversarial_class):
    adv = adversarial_class[1]
    r = adv["patcher"]  # the mistake of "partial", plus a cell that patches what it can
    assert r.status == "ok" and r.score <= adv["partial"].score < r.max_score, r


@pytest.mark.parametrize("student", ["neuter", "swallow", "printer", "forger", "fakepkg"])
def test_in_process_tricks_on_an_untouched_exercise_score_zero(adversarial_class, student):
    """Input transformers, exception handlers, fake "passed" lines, records forged from the
    visible expected values, a helpers package of its own: no work still scores 0."""
    r = adversarial_class[1][student]
    assert r.status == "ok" and r.score == 0, r


def verdict_text(root: Path, student: str) -> str:
    nb = read(root / "autograded" / student / A1 / source(A1).name)
    return "\n".join(
        str(o.get("evalue", "")) + "".join(o.get("text", ""))
        for c in nb["cells"]
        for o in c.get("outputs", [])
    )


def test_the_kernel_holds_no_answers(adversarial_class):
    """The hidden tests' reference softmax is not in the kernel (the call fails on its name),
    and the grader's reading names it too: the tests that call softmax score 0."""
    root, adv = adversarial_class
    r = adv["answers_by_name"]
    assert r.status == "ok" and r.score == 22 - 11, r
    text = verdict_text(root, "answers_by_name")
    assert "name '_plain_softmax' is not defined" in text, text
    r = adv["answers_by_frame"]
    assert r.status == "ok" and r.score == 0, r
    assert "sys._getframe" in verdict_text(root, "answers_by_frame")


def test_the_monitor_switched_off_changes_nothing(adversarial_class):
    root, adv = adversarial_class
    r = adv["monitor_off"]
    assert r.status == "ok" and r.score == 0, r
    assert "assigning to `hc.call_watched`" in verdict_text(root, "monitor_off")


def test_records_that_could_be_rewritten_fail(adversarial_class):
    """Records published with a display id fail their test in the executor (before the
    grader's reading of the source, which also names the IPython import)."""
    root, adv = adversarial_class
    r = adv["display_ids"]
    assert r.status == "ok" and r.score == 0, r
    assert "published with a display id" in verdict_text(root, "display_ids")


@pytest.mark.parametrize(
    "student",
    [
        "moved",
        "copied_test",
        "copied_solution",
        "lost_flag",
        "lost_metadata",
        "renamed",
        "markdown",
    ],
)
def test_an_honest_accident_costs_nothing_and_feedback_says_what_happened(
    adversarial_class, student
):
    root, adv = adversarial_class
    r = adv[student]
    assert r.status == "ok" and r.score == r.max_score == 22, r
    nb = read(root / "autograded" / student / A1 / source(A1).name)
    first = "".join(nb["cells"][0]["source"])
    assert first.startswith("**Grader's note.**"), first[:300]


def test_raising_the_points_of_a_cell_gains_nothing(adversarial_class):
    r = adversarial_class[1]["raised_points"]
    assert r.status == "ok" and r.score == r.max_score == 22, r


def test_exits_from_inside_a_function_cost_only_their_tests(adversarial_class):
    adv = adversarial_class[1]
    assert adv["sysexit"].status == "ok" and adv["sysexit"].score == 22 - 9, adv["sysexit"]
    assert adv["interrupt"].status == "ok" and adv["interrupt"].score == 22 - 2, adv["interrupt"]


def test_correct_solutions_written_differently_keep_full_marks(adversarial_class):
    r = adversarial_class[1]["own_way"]
    assert r.status == "ok" and r.score == r.max_score == 22, r


def test_grader_and_reference_are_absent_from_the_kernel(adversarial_class):
    root, adv = adversarial_class
    assert adv["probe"].score == 0  # importlib reaches into the interpreter: every test fails
    nb = read(root / "autograded" / "probe" / A1 / source(A1).name)
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "autograder: None" in text and "grading: None" in text, text
    assert "attention: helpers.attention cannot be imported here" in text, text


def test_feedback_shows_the_verdict_not_the_hidden_tests(adversarial_class):
    root, _ = adversarial_class
    feedback([A1], Course(root))
    html = (root / "feedback" / "partial" / A1 / "attention.html").read_text()
    assert "row sums of softmax(scores)" in html  # the first failing check, with its hint
    assert "did you sum over axis 0" in html
    assert "BEGIN HIDDEN TESTS" not in html and "cube = rng(1)" not in html
