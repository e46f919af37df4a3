"""Feedback is a verdict, not a window: nothing a notebook wrote runs in the browser that opens
its feedback page.

Two layers: ``SafeFeedback`` (autograder/nbgrader_plugins.py) shows none of the learner's own
outputs, keeps only text of the test cells' verdicts and shows a learner's raw HTML in Markdown
as text; ``course.reports.seal``
puts a content security policy first in every feedback page, so that a script that slipped
past the first layer would still not run. The attacked class of tests/grading/test_sandbox.py
runs both through the real ``python -m course feedback``; a real browser opens a sealed page in
tests/grading/test_feedback_in_browser.py.
"""

from __future__ import annotations

import nbformat
import pytest
from support.feedback import ATTACK_HTML

from autograder.nbgrader_plugins import INERT_OUTPUTS, OWN_OUTPUTS_NOTE, SafeFeedback
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
    """generate_feedback runs under a time and a memory limit; when the class's run is
    stopped, each submission gets its own run, and only those that ran too long or went over
    the memory have no page, each with its reason."""
    from course import reports
    from course.config import Course, CourseError
    from course.runner import Run

    for student in ("alice", "bob", "mallory", "oscar"):
        (tmp_path / "autograded" / student / "01_attention").mkdir(parents=True)
    calls = []

    def fake_run(args, course, timeout=None):
        calls.append((args, timeout))
        if "--student" not in args or "mallory" in args:
            return Run(-9, "")  # killed after its time limit
        if "oscar" in args:
            return Run(-9, "", grader_oom=True)  # killed for memory
        page = tmp_path / "feedback" / args[args.index("--student") + 1] / args[1] / "a.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<html><head></head><body>ok</body></html>")
        return Run(0, "")

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
    assert calls[0][1] == 28 and all(t == 7 for _, t in calls[1:])
    assert (tmp_path / "feedback" / "bob" / "01_attention" / "a.html").exists()
    (tmp_path / "grading.toml").write_text('feedback_timeout = "soon"\n')
    with pytest.raises(CourseError, match="feedback_timeout = 'soon' is not a number of seconds"):
        Course(tmp_path)
