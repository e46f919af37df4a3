"""The adversarial class (assignment 01), graded by the real nbgrader through the instructor's
tool: an infinite loop, a kernel deaf to the interrupt, a dying kernel, a memory bomb, a deleted
and an edited test cell, invalid JSON, calls to the reference and to built-ins, a monkeypatched
checker, in-process tricks, records that could be rewritten, honest accidents, beside two
control students whose grades must not change. (The main class and the gradebook's engines:
test_nbgrader.py; the notebooks: tests/support/submissions.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import grading_cases as CASES
import psutil
import pytest
from support import REPO
from support.bound_adversaries import PROCESSES, TERMINAL, bounds_adversaries
from support.submissions import (
    A1,
    FAKE_CHECKS,
    HONEST_HABITS,
    MISTAKES,
    adversaries,
    honest_habits,
    make_root,
    reach_probe,
    read,
    source,
    submit,
)

from autograder import regions
from autograder.kernel_form import kernel_forms
from autograder.pieces import absent_modules
from course.config import Course, load_settings
from course.grading.batch import autograde
from course.reports import feedback

pytestmark = pytest.mark.usefixtures("grading_env")


@pytest.fixture(scope="session")
def adversarial_class(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("adversarial_class"))
    for student, (nb, _) in adversaries().items():
        submit(root, student, A1, nb)
    for student, (nb, _) in honest_habits().items():
        submit(root, student, A1, nb)
    submit(root, "reach", A1, reach_probe())
    for student, (nb, _) in bounds_adversaries().items():
        submit(root, student, A1, nb)
    fake = root / "submitted" / "fakepkg" / A1 / "helpers"  # beside the notebook, as a zip may
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "fixtures.py").write_text("from numpy.random import default_rng as rng\n")
    (fake / "checks.py").write_text(FAKE_CHECKS)
    (fake / "grading.py").write_text("def assert_close(*a, **k):\n    pass\n")
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
    """Only the tests whose code reaches the call lose their points, and the instructor's
    summary names the call (the verdict names the cell and the line too)."""
    adv = adversarial_class[1]
    for student, lost, named in (
        ("reference", 9, "helpers.attention"),
        ("builtin", 11, "torch.softmax"),
        ("builtin_map", 11, "torch.softmax"),
        ("builtin_unset", 11, "sys.setprofile"),  # around torch.softmax, in softmax
        ("ops_softmax", 11, "torch.ops.aten._softmax"),  # the reading knows private spellings
    ):
        r = adv[student]
        assert r.score == r.max_score - lost, (student, r)
        assert any(named in n for n in r.notes), (student, r)
    # a global str that says "torch.bool" does not fool the test: it calls the real str
    root = adversarial_class[0]
    assert adv["str_rebound"].score == 22 - 2, adv["str_rebound"]
    assert "the dtype of causal_mask(4)" in verdict_text(root, "str_rebound")


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


def verdict_text(root: Path, student: str, tests_only: bool = False) -> str:
    nb = read(root / "autograded" / student / A1 / source(A1).name)
    return "\n".join(
        str(o.get("evalue", "")) + "".join(o.get("text", ""))
        for c in nb["cells"]
        if not tests_only or regions.is_test_cell(c)
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
    r = adv["answers_by_frame"]  # looking around is a note: it finds no answer
    assert r.status == "ok" and r.score == 22 - 11, r
    text = verdict_text(root, "answers_by_frame", tests_only=True)  # by its type only
    assert "(its message is not shown" in text and "_plain_softmax" not in text, text
    assert any("sys._getframe" in n and "code cell" in n for n in r.notes), r


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
        "fresh_copy",
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


@pytest.mark.parametrize("student", ["helper_between", "own_module"])
def test_code_moved_out_of_the_answer_cells_keeps_full_marks(adversarial_class, student):
    """A helper cell between a solution cell and its test still runs before the test; a module
    the notebook writes (%%writefile) imports, as in the learner's Jupyter (the reading notes
    what it cannot see; that costs nothing)."""
    r = adversarial_class[1][student]
    assert r.status == "ok" and r.score == r.max_score == 22, r
    assert not any("refused" in n for n in r.notes), r


def test_a_learners_links_images_and_odd_characters_keep_grade_and_feedback(
    adversarial_class, bounds_feedback
):
    """A pasted image (an attachment feedback does not keep), an image of an absent attachment,
    script links (inline and by reference) and an image from elsewhere: graded as usual, and
    the feedback page is written with each shown as the text it was written with. Lone
    surrogates (which JSON allows and no UTF-8 file holds) become U+FFFD, with a note."""
    root, adv = adversarial_class
    for student in ("markdown_links", "surrogates"):
        assert adv[student].status == "ok" and adv[student].score == 22, adv[student]
        assert not [f for f in bounds_feedback[0] if f[1] == student], bounds_feedback[0]
    page = (root / "feedback" / "markdown_links" / A1 / "attention.html").read_text("utf-8")
    assert "javascript:" in page and "![pasted](attachment:p.svg)" in page
    assert not re.search(r"""(href|src)=["']?(javascript|data|https://example)""", page)
    assert "window.pwned=3" not in page  # the SVG's script: the attachment is not kept
    nb = read(root / "autograded" / "surrogates" / A1 / source(A1).name)
    assert "became \ufffd" in "".join(nb["cells"][0]["source"])
    assert (root / "feedback" / "surrogates" / A1 / "attention.html").exists()


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
    assert adv["probe"].score == 22  # looking for the grader finds nothing, and costs nothing
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


# ---------------------------------------------------------------------------------------
# Neither too trusting nor too suspicious: the reading walked around, honest habits, and
# nothing secret within the kernel's reach
# ---------------------------------------------------------------------------------------
def test_the_reading_walked_around_still_loses_the_points(adversarial_class):
    """Code in a computed string is a note for the instructor, and the in-kernel monitor still
    sees the call; names bound by ``:=`` or ``match`` are read; a write into torch under a
    computed name costs every later test."""
    adv = adversarial_class[1]
    for student, score in (
        ("exec_softmax", 22 - 11),
        # bound again in a cell of the learner's own between the softmax and its test (it
        # stays there, as a helper cell would): test_softmax (4) and the later tests that call
        # softmax (attention_numpy, dtypes: 7) lose their points
        ("walrus_softmax", 22 - 4 - 7),
        ("match_softmax", 22 - 4 - 7),
        ("setattr_torch", 0),
    ):
        r = adv[student]
        assert r.status == "ok" and r.score == score, (student, r)
    assert any("exec(...)" in n and "cannot see" in n for n in adv["exec_softmax"].notes)
    assert any("setattr(torch, ...)" in n for n in adv["setattr_torch"].notes)


def test_an_output_a_notebook_cannot_hold_is_left_out_not_a_grader_error(adversarial_class):
    """A display whose text is a number, or whose metadata is not an object: nbformat refuses
    it; the grader leaves it out (a note in the notebook) instead of failing, so the notebook
    is graded like any other, not a grader error graded again at every run."""
    root, adv = adversarial_class
    r = adv["invalid_output"]
    assert r.status == "ok" and r.score == 22, r
    nb = read(root / "autograded" / "invalid_output" / A1 / source(A1).name)
    assert "an output that a notebook cannot hold was left out" in json.dumps(nb)


def test_raw_kernel_messages_are_left_out_and_cost_the_later_tests(adversarial_class):
    """Messages a notebook sends through the kernel's own session (a list as content, a number
    as a stream's text, an error without its fields): left out with a note, not a grader
    error. Sending them is a switch of how the kernel runs cells (a message could carry a
    test cell's parent): every later test scores 0, and the feedback says why."""
    root, adv = adversarial_class
    r = adv["raw_messages"]
    assert r.status == "ok" and r.score == 0, r
    nb = read(root / "autograded" / "raw_messages" / A1 / source(A1).name)
    text = json.dumps(nb)
    assert "an output that a notebook cannot hold was left out" in text
    assert "k.session.send(...)" in text and "changes how the kernel runs cells" in text


@pytest.mark.parametrize("student", sorted(HONEST_HABITS))
def test_an_honest_habit_keeps_full_marks(adversarial_class, student):
    """Each: the honest learner's notebook plus one habit that is not a forbidden call. What
    the reading notes (it looks around the kernel, say) costs nothing."""
    r = adversarial_class[1][student]
    assert r.status == "ok" and r.score == r.max_score == 22, (HONEST_HABITS[student][0], r)
    assert not any("refused" in n for n in r.notes), r


def _reach(root: Path) -> dict:
    nb = read(root / "autograded" / "reach" / A1 / source(A1).name)
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            text = "".join(o.get("text", ""))
            if text.startswith("REACH "):
                return json.loads(text[len("REACH ") :])
    raise AssertionError("the probe printed nothing")


def test_nothing_secret_is_within_the_kernels_reach(adversarial_class):
    """A probe reads every file the grading kernel can open (the system and the Python
    installation aside), every process's command line, environment and mounts, and every cell
    the kernel is sent. None holds a hidden test, a solution line of the assignment or an
    expected value; each cell it is sent is the learner's own or one test cell's answer-free
    kernel form, sent as that cell runs."""
    root, _ = adversarial_class
    found = _reach(root)
    source_nb = read(source(A1))
    forms = set(kernel_forms(source_nb).values())
    theirs = {
        "".join(c["source"])
        for c in read(root / "submitted" / "reach" / A1 / source(A1).name)["cells"]
    }
    for cell in found["cells"]:
        assert cell in forms or cell in theirs or cell.strip() in {t.strip() for t in theirs}, cell[
            :300
        ]
    # the public course packages hold some of the same lines (the chapters teach them); the
    # sandbox's copy of helpers lacks this assignment's pieces
    public = " ".join(
        regions.normalize(line)
        for folder in ("checks", "helpers")
        for path in (REPO / folder).rglob("*.py")
        if path.parent.name != "pictures" and path.stem not in absent_modules(A1)
        for line in path.read_text().splitlines()
    )
    secret = [s for s in regions.secret_lines(source_nb) if s not in public]
    expected = set(re.findall(r"\d\.\d{6,}", json.dumps(source_nb)))  # the visible values
    assert len(secret) > 100 and len(expected) >= 3
    texts = {**found["files"], **{f"env {k}": v for k, v in found["environ"].items()}}
    assert not [p for p in texts if p.endswith((".ipynb", "expected_visible.json"))]
    for where, text in texts.items():
        flat = regions.normalize(text or "")
        leaked = [s for s in secret if s in flat] + [e for e in expected if e in flat]
        assert not leaked, (where, leaked[:3])
    # once a test cell has run, the kernel's history keeps nothing of its kernel form (the
    # learner's own cells stay; the probe is the solution, so solution lines are its own)
    hidden = {
        line
        for cell in source_nb["cells"]
        if regions.is_test_cell(cell)
        for region in regions.split("".join(cell["source"]))[0]
        for line in region
        if line in secret
    }
    assert len(hidden) > 20
    theirs_flat = regions.normalize(" ".join(theirs))
    kept = found["kept"]
    places = [("In", t) for t in kept["In"]] + list(kept["names"].items())
    places += [("linecache", t) for t in kept["linecache"]]
    for where, text in places:
        flat = regions.normalize(text)
        assert not [h for h in hidden if h in flat and h not in theirs_flat], (where, text[:300])


# ---------------------------------------------------------------------------------------
# Bounds: the output cap and the tests' own results, widgets, what a feedback page draws,
# the instructor's logs, the kernel's system calls and processes, what the sandbox shows of
# the grader's machine (the notebooks: tests/support/bound_adversaries.py)
# ---------------------------------------------------------------------------------------
def autograded_notebook(root: Path, student: str) -> Path:
    return root / "autograded" / student / A1 / source(A1).name


def feedback_page(root: Path, student: str) -> str:
    return (root / "feedback" / student / A1 / "attention.html").read_text(encoding="utf-8")


def cell_with(nb: dict, code: str) -> dict:
    """The one cell of ``nb`` whose source is ``code``."""
    (cell,) = [c for c in nb["cells"] if "".join(c["source"]).strip() == code.strip()]
    return cell


@pytest.fixture(scope="session")
def bounds_feedback(adversarial_class):
    """The class's feedback, by the instructor's command: (submissions without a page,
    seconds)."""
    import time

    root, _ = adversarial_class
    start = time.monotonic()
    failed = feedback([A1], Course(root))
    return failed, time.monotonic() - start


def test_an_honest_notebook_printing_past_the_cap_keeps_full_marks_and_is_told(
    adversarial_class, bounds_feedback
):
    """A debugging loop and prints in the tested function pass the output cap: the tests'
    records are kept apart (full marks), and the summary, the autograded notebook and the
    learner's feedback say that the cap was reached."""
    root, adv = adversarial_class
    r = adv["capped_printer"]
    assert r.status == "ok" and r.score == r.max_score == 22, r
    assert any("printed more than the output limit (output_mb = 8" in n for n in r.notes), r
    path = autograded_notebook(root, "capped_printer")
    first = "".join(read(path)["cells"][0]["source"])
    assert first.startswith("**Grader's note.** Your notebook printed more than"), first
    assert path.stat().st_size < 9 << 20
    assert "printed more than the grader keeps" in feedback_page(root, "capped_printer")
    assert not any("output limit" in n for n in adv["good"].notes)


def test_check_records_have_a_bound_of_their_own(adversarial_class):
    """Records published by the tested code itself cannot carry output past the cap: past
    the test cell's own bound the test fails, and only that test (padding_mask's)."""
    root, adv = adversarial_class
    r = adv["record_flooder"]
    assert r.status == "ok" and r.score == 22 - 2, r
    assert "more than 200 check records" in verdict_text(root, "record_flooder")
    assert autograded_notebook(root, "record_flooder").stat().st_size < 9 << 20


def test_widget_messages_count_against_the_cap_and_no_widget_state_is_kept(adversarial_class):
    """Comm and widget messages (an output widget, a text widget's updates, a raw comm) count
    against the cap; the autograded notebook keeps no widget state (not even the submitted
    one) and no widget view; the honest work keeps full marks."""
    root, adv = adversarial_class
    r = adv["widget_flooder"]
    assert r.status == "ok" and r.score == r.max_score == 22, r
    assert any("printed more than the output limit" in n for n in r.notes), r
    path = autograded_notebook(root, "widget_flooder")
    nb = read(path)
    assert "widgets" not in nb["metadata"], list(nb["metadata"])
    kept = {k for c in nb["cells"] for o in c.get("outputs", []) for k in o.get("data", {})}
    assert not [k for k in kept if "widget" in k], kept
    assert path.stat().st_size < 9 << 20


def test_feedback_draws_a_learners_markdown_and_raw_cells_within_bounds(
    adversarial_class, bounds_feedback
):
    """Markdown that nbconvert draws in quadratic time is shown as text, cut with a note; a raw
    cell's HTML is shown as text (no fake score panel, no live link); every learner of the
    class has a page."""
    root, _ = adversarial_class
    failed, seconds = bounds_feedback
    assert failed == [], failed
    print(f"the class's feedback took {seconds:.0f} s")
    bomber = feedback_page(root, "markdown_bomber")
    assert bomber.count("more characters not shown in feedback") >= 3
    assert len(bomber) < 1 << 20  # the lists drawn in full made a 2.4 MB page
    raw = feedback_page(root, "raw_panel")
    assert '<a href="https://appeal' not in raw and '<div style="position:fixed' not in raw
    assert "&lt;h1&gt;Score: 22 / 22&lt;/h1&gt;" in raw


def test_the_kernels_terminal_escapes_reach_the_instructors_log_as_text(adversarial_class):
    root, adv = adversarial_class
    assert adv["terminal_escapes"].score == 22
    log = (root / "reports" / "logs" / A1 / "terminal_escapes.log").read_text(encoding="utf-8")
    assert "FAKE: every test passed" in log  # the kernel's own stderr reached the log
    for raw in ("\x1b", "\x07", "\r", "\u202e"):
        assert raw not in log, repr(raw)
    assert ascii(TERMINAL[:12])[1:-1] in log  # as escapes: \x1b]0;owned\x07


def test_the_kernel_is_denied_what_it_never_needs_and_sees_no_folder_of_the_grader(
    adversarial_class,
):
    """io_uring, the kernel log, the clocks, I/O ports, another process's file descriptors, a
    process of its own through the C library...: denied; the honest work keeps full marks.
    /proc/self/mountinfo names no folder of the grader's disk but the system's and the
    Python installation's (no staging folder, no course folder)."""
    from autograder import sandbox

    root, adv = adversarial_class
    r = adv["kernel_interfaces"]
    assert r.status == "ok" and r.score == 22, r
    nb = read(autograded_notebook(root, "kernel_interfaces"))
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    verdicts = [line for line in text.splitlines() if line.startswith(("DENIED", "ALLOWED"))]
    assert len(verdicts) == 20 and all(v.startswith("DENIED") for v in verdicts), verdicts
    mounts = [line for line in text.split("MOUNTS", 1)[1].splitlines() if " - " in line]
    assert len(mounts) > 10, text[-3000:]
    host = ("/usr/", "/etc/", *(f"{p}/" for p in sandbox.python_paths()))
    for line in mounts:
        fields, kind = line.split(" - ")[0].split(), line.split(" - ")[1].split()[0]
        if kind not in ("tmpfs", "proc", "devtmpfs", "devpts"):  # a folder of the grader's disk
            assert f"{fields[3]}/".startswith(host), line
    assert "afz-" not in text and str(root) not in text
    assert str(REPO / "helpers") not in text and str(REPO / "checks") not in text


def test_a_process_of_its_own_fails_its_cell_only_and_threads_work(adversarial_class):
    """A shell command, subprocess, os.system and multiprocessing each fail their own cell
    with an error that says why; threads work; the honest work keeps full marks."""
    from autograder.seccomp import NO_PROCESS

    root, adv = adversarial_class
    r = adv["process_starter"]
    assert r.status == "ok" and r.score == r.max_score == 22, r
    nb = read(autograded_notebook(root, "process_starter"))
    for name, code in PROCESSES.items():
        outs = cell_with(nb, code).get("outputs", [])
        if name == "threads":
            assert "threads ran: [0, 1, 2, 3]" in "".join("".join(o.get("text", "")) for o in outs)
            continue
        errors = [o for o in outs if o["output_type"] == "error"]
        assert len(errors) == 1 and errors[0]["ename"] == "PermissionError", (name, outs)
        assert NO_PROCESS in errors[0]["evalue"], (name, errors)
