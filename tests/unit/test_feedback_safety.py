"""Feedback is a verdict, not a window: nothing a notebook wrote runs in the browser that opens
its feedback page.

Two layers: ``SafeFeedback`` (autograder/preprocessors/safe_feedback.py) shows none of the
learner's own outputs, keeps only text of the test cells' verdicts and shows a learner's raw
HTML in Markdown as text; ``course.reports.seal`` puts a content security policy first in every
feedback page, so that a script that slipped past the first layer would still not run. The
attacked class of tests/grading/test_sandbox.py runs both through the real ``python -m course
feedback``; a real browser opens a sealed page in tests/grading/test_feedback_in_browser.py.
"""

from __future__ import annotations

import nbformat
import pytest
from support.feedback import ATTACK_HTML

from autograder.preprocessors.safe_feedback import INERT_OUTPUTS, OWN_OUTPUTS_NOTE, SafeFeedback
from course.reports import CSP_META, seal

PNG = (  # one pixel
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def notebook_with_active_content() -> nbformat.NotebookNode:
    md = nbformat.v4.new_markdown_cell(
        "My answer: " + ATTACK_HTML + "\n\nand `i <= j` is the causal rule."
    )
    code = nbformat.v4.new_code_cell("display(...)")
    code.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": ATTACK_HTML}),
        nbformat.v4.new_output(
            "display_data",
            data={"application/javascript": "window.pwned = 'js'", "text/plain": "<JS>"},
        ),
        nbformat.v4.new_output(
            "display_data", data={"image/svg+xml": "<svg><text>hidden test</text></svg>"}
        ),
        nbformat.v4.new_output("display_data", data={"text/markdown": ATTACK_HTML}),
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
    ]
    return nbformat.v4.new_notebook(cells=[md, code])


def test_feedback_shows_no_learner_output_and_raw_html_as_text():
    nb = notebook_with_active_content()
    test = nbformat.v4.new_code_cell("t = Test('test_x')")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_x"}
    verdict = {"data": {"image/svg+xml": "<svg/>", "text/plain": "a verdict"}}
    test.outputs = [
        nbformat.v4.new_output("error", ename="AssertionError", evalue="x is wrong"),
        nbformat.v4.new_output("display_data", **verdict),
    ]
    nb.cells.append(test)
    nb, _ = SafeFeedback().preprocess(nb, {})
    md, code, test = nb.cells
    assert "<script" not in md.source and "<img" not in md.source and "<svg" not in md.source
    assert "&lt;script>" in md.source and "`i <= j`" in md.source  # "<=" is not a tag
    # the learner's outputs (HTML, JavaScript, SVG, Markdown, a PNG): one note instead
    assert [o.get("text") for o in code.outputs] == [OWN_OUTPUTS_NOTE]
    # a test cell keeps its verdict, as text
    assert test.outputs[0].evalue == "x is wrong"
    assert set(test.outputs[1].data) <= INERT_OUTPUTS
    assert test.outputs[1].data["text/plain"] == "a verdict"


def test_seal_puts_the_policy_first_in_the_head_once(tmp_path):
    page = tmp_path / "feedback.html"
    page.write_text("<!DOCTYPE html>\n<html><head><title>t</title></head><body>x</body></html>")
    seal(page)
    seal(page)  # a second feedback run does not add another
    text = page.read_text()
    assert text.count(CSP_META) == 1
    assert text.index("<head>") + len("<head>") == text.index(CSP_META)
    assert "script-src" not in CSP_META and "default-src 'none'" in CSP_META


def test_a_slow_feedback_costs_only_its_own_page(tmp_path, monkeypatch, capsys):
    """generate_feedback runs the class under a time and a memory limit, and each notebook
    under a time limit of its own inside it: a page that ran past it is named with its reason
    and not tried again; a page missing for another reason is tried again on its own, to learn
    why; the others are written by the class's run."""
    from autograder.outcomes import Outcome
    from course import reports
    from course.config import Course, CourseError
    from course.grading.nbgrader_command import Run

    for student in ("alice", "bob", "mallory", "oscar"):
        (tmp_path / "autograded" / student / "01_attention").mkdir(parents=True)
    calls = []

    def write_page(student):
        page = tmp_path / "feedback" / student / "01_attention" / "a.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<html><head></head><body>ok</body></html>")

    def fake_run(args, course, timeout=None):
        calls.append((args, timeout))
        if "--student" not in args:  # the class: mallory's page ran past its own limit
            write_page("alice")
            write_page("bob")
            return Run(1, "", outcome=Outcome(feedback={"mallory": "its feedback took longer"}))
        if "oscar" in args:
            return Run(-9, "", grader_oom=True)  # killed for memory
        raise AssertionError(f"tried again: {args}")

    monkeypatch.setattr(reports, "nbgrader_run", fake_run)
    (tmp_path / "grading.toml").write_text("feedback_timeout = 7\n")
    course = Course(tmp_path)
    monkeypatch.setattr(Course, "assignments", lambda self, names: ["01_attention"])
    import course.gradebook as gb

    monkeypatch.setattr(gb, "open_gradebook", lambda url: __import__("contextlib").nullcontext())
    failed = reports.feedback(None, course)
    assert [s for _, s, _ in failed] == ["mallory", "oscar"]
    assert "stopped after 7 s (feedback_timeout = 7, " in failed[0][2]
    assert "grading.toml" in failed[0][2]
    assert "went over 2048 MiB (grader_memory_mb = 2048, the default)" in failed[1][2]
    assert [t for _, t in calls] == [28, 7]  # the class, then oscar alone
    assert (tmp_path / "feedback" / "bob" / "01_attention" / "a.html").exists()
    (tmp_path / "grading.toml").write_text('feedback_timeout = "soon"\n')
    with pytest.raises(CourseError, match="feedback_timeout = 'soon' is not a number of seconds"):
        Course(tmp_path)


# Markdown that nbconvert draws in time that grows with the square of a line's length: before
# the bounds, this notebook's page took 70 s on a 2-core machine.
MARKDOWN_BOMBS = [
    "[" * 60_000,
    "[a](b " * 30_000,
    "".join(f"- item {i}\n" for i in range(100_000)),
    "".join("  " * i + "- deeper\n" for i in range(3_000)),
]
RAW_PANEL = (
    '<div style="position:fixed;top:0"><h1>Score: 22 / 22</h1>'
    '<a href="https://appeal.example/form">Confirm your grade</a></div>'
)


def test_a_learners_markdown_and_raw_cells_are_drawn_within_bounds():
    """A learner's Markdown that is long, deep or costly to draw is shown as text (cut, with a
    note), a raw cell is shown as text, and a short answer is still drawn as Markdown; the
    whole page is drawn in a few seconds."""
    import time

    from nbconvert import HTMLExporter

    cells = [nbformat.v4.new_markdown_cell(text) for text in MARKDOWN_BOMBS]
    cells += [nbformat.v4.new_markdown_cell("My answer: **masks** use `True` = may attend.")]
    cells += [nbformat.v4.new_raw_cell(RAW_PANEL)]
    cells += [nbformat.v4.new_markdown_cell(f"note {i} [a](b)") for i in range(3000)]
    nb, _ = SafeFeedback().preprocess(nbformat.v4.new_notebook(cells=cells), {})
    start = time.monotonic()
    page, _ = HTMLExporter().from_notebook_node(nb)
    seconds = time.monotonic() - start
    assert seconds < 20, seconds
    assert page.count("more characters not shown in feedback") >= 3
    assert "more cells of this notebook are not shown in feedback" in page
    assert "<strong>masks</strong>" in page  # a short answer is Markdown
    assert '<a href="https://appeal' not in page and '<div style="position:fixed' not in page
    assert '&lt;a href="https://appeal.example/form"&gt;Confirm' in page


def test_a_notebook_past_its_time_limit_is_stopped_and_named(tmp_path, monkeypatch):
    """Inside a class's feedback run each notebook's conversion has a time limit: the
    conversion that runs past it raises, and the run's record names the student."""
    import signal
    import time

    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import Preprocessor

    from autograder import outcomes
    from autograder.preprocessors.safe_feedback import FeedbackTimeout

    class Slow(Preprocessor):  # a conversion that takes its time, as a costly page would
        def preprocess(self, nb, resources):
            time.sleep(5)
            return nb, resources

    monkeypatch.setenv("AFZ_RUN", str(tmp_path))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("hi")])
    resources = {"nbgrader": {"student": "mallory"}}
    exporter = HTMLExporter(preprocessors=[SafeFeedback(time_limit=1.0), Slow()])
    start = time.monotonic()
    try:
        with pytest.raises(FeedbackTimeout, match="longer than 1 s"):
            exporter.from_notebook_node(nb, resources=resources)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    assert time.monotonic() - start < 4
    assert "mallory" in outcomes.read(tmp_path).feedback
    # a notebook done in time: its limit going off later, between notebooks, changes nothing
    try:
        fast = HTMLExporter(preprocessors=[SafeFeedback(time_limit=0.5)])
        fast.from_notebook_node(nb, resources={"nbgrader": {"student": "bob"}})
        time.sleep(1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    assert "bob" not in outcomes.read(tmp_path).feedback
    # without a limit the same conversion ends
    exporter = HTMLExporter(preprocessors=[SafeFeedback(), Slow()])
    exporter.from_notebook_node(nb, resources={"nbgrader": {"student": "alice"}})


@pytest.mark.parametrize(
    "markdown",
    [
        "[confirm your grade](javascript:window.pwned=1)",
        "![far](https://example.org/x.png) and ![pasted](attachment:p.svg)",
        "[ref][r]\n\n[r]: javascript:window.pwned=2",
        "see https://example.org/answers or <https://example.org/a>",
        "   [r]: data:text/html,hi\n\n[r]",
    ],
)
def test_a_learners_markdown_links_drawn_by_nbconvert_are_text(markdown):
    """What nbconvert's own Markdown renderer makes of a learner's cell after ``SafeFeedback``:
    no address, inline, by reference or bare (the renderer links a bare ``https://``), becomes
    an ``href`` or a ``src``; the words stay readable."""
    import re

    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)])
    nb, _ = SafeFeedback().preprocess(nb, {})
    html = markdown2html_mistune(nb.cells[0].source)
    assert not re.search(r"\b(href|src)\s*=", html), html
    assert "example.org" in html or "pwned" in html or "data:" in html
