"""``SafeFeedback``: run before the HTML feedback is written.

The outputs of the learner's own cells are not shown (a note stands in their place: feedback
is a verdict, not a window through which a notebook could send out what it read). Test cells
show only their visible part and their verdict; errors show only their type and message (the
teaching message), never a traceback (which quotes hidden test lines and the grader's paths);
every line that repeats a hidden-test or solution line of the source notebook is replaced; the
course's and the Python installation's paths are replaced. The setting
``feedback_shows_hidden`` keeps the hidden tests' code in the test cells (e.g. after the
deadline). What is kept is text only (``INERT_OUTPUTS``), Markdown cells show raw HTML as text
and raw cells are shown as text, so that nothing a notebook wrote runs in the browser that
opens its feedback. What a page draws of a learner's text is bounded (``SHOWN_*``,
``MARKDOWN_*``: a learner's Markdown that is long, deeply nested or costly to draw is shown as
text), and the conversion of one notebook has a time limit of its own (the setting
``feedback_timeout``), so that one notebook's page cannot cost the others theirs in a class's
feedback run. ``FEEDBACK_CSP`` is the policy every feedback page carries (``course.reports``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Unicode

from autograder import outcomes, regions
from autograder.preprocessors.common import DEFAULTS, notebook_of, unique_id

HIDDEN_NOTE = "# (hidden tests ran here; their code is not shown in feedback)"
REDACTED = "[line hidden: it repeats a hidden test or the solution]"
MAX_MESSAGE = 2000  # characters of an error message kept in feedback
# The only output types feedback shows: text, and raster images (which run nothing). HTML,
# JavaScript, SVG (which can hold scripts, and draw any text) and Markdown are dropped.
INERT_OUTPUTS = frozenset({"text/plain", "image/png", "image/jpeg"})
TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # what starts an HTML tag; "<=" is left alone
ACTIVE_NOTE = "[an output of a type that feedback does not show (HTML, JavaScript, SVG, ...)]"
OWN_OUTPUTS_NOTE = (
    "[the outputs of your own cells are not part of feedback; run your notebook to see them]\n"
)
# Written into the <head> of every feedback page (course/reports.py): no script, no frame, no
# form, no request anywhere; inline styles and data: images only. A learner's output that
# slipped past SafeFeedback would still run nothing in the browser that opens the page.
FEEDBACK_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "base-uri 'none'; form-action 'none'"
)
# What a feedback page draws of a notebook. The HTML exporter's cost grows with the text it is
# given, as the square of a line's length for a line of Markdown full of "[" (50,000 of them
# took 17 s), so a learner's text is bounded, and shown as text where drawing it is costly.
SHOWN_CELLS = 500  # cells besides the test cells; the rest is one line that says so
SHOWN_CELL_CHARS = 20_000  # of one cell's source
SHOWN_CHARS = 200_000  # of all the cells' sources of a notebook
MARKDOWN_CELL_CHARS = 5_000  # a learner's Markdown cell drawn as Markdown at most
MARKDOWN_CHARS = 20_000  # of a notebook's learner Markdown drawn as Markdown
MARKDOWN_DEPTH = 8  # lists and quotes nested deeper are shown as text
MARKDOWN_LINE_COST = 100_000  # a line's "[" times its length, drawn as Markdown at most
TEXT_LINE = 200  # text shown as text is folded at this many characters
_MARKERS = re.compile(r">|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])")
_PREFIX = re.compile(r"(?:[ \t]|>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))*")
_BACKTICKS = re.compile(r"`+")


class FeedbackTimeout(Exception):
    """One notebook's feedback took longer than its time limit."""


class SafeFeedback(NbGraderPreprocessor):
    source_directory = Unicode(
        "", help="Folder of the source notebooks (solutions/), to know what is secret."
    ).tag(config=True)
    show_hidden_tests = Bool(
        DEFAULTS.feedback_shows_hidden,
        help="Keep the hidden tests' code in feedback (the setting feedback_shows_hidden).",
    ).tag(config=True)
    course_paths = Unicode(
        "", help="os.pathsep-separated paths replaced by <course> in feedback."
    ).tag(config=True)
    time_limit = Float(
        0.0,
        help="Seconds one notebook's conversion may take (0: the run's feedback_timeout, none "
        "outside a run of python -m course).",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        self._limit_time(str(resources.get("nbgrader", {}).get("student", "")))
        source = notebook_of(self.source_directory, resources)
        try:
            notebook = json.loads(source.read_text())
            self._secret = regions.secret_lines(notebook, at_least=regions.REDACT_LENGTH)
        except (OSError, ValueError):
            notebook, self._secret = {}, set()
        self._course_markdown = {
            regions.source_of(c)
            for c in notebook.get("cells", [])
            if c.get("cell_type") == "markdown"
        }
        long_secrets = sorted((x for x in self._secret if len(x) >= 12), key=len, reverse=True)
        self._long = re.compile("|".join(map(re.escape, long_secrets))) if long_secrets else None
        paths = [p for p in self.course_paths.split(os.pathsep) if p]
        paths += [sys.prefix, sys.base_prefix, str(Path(sys.base_prefix).resolve())]
        self._paths = sorted({p for p in paths if len(p) > 1}, key=len, reverse=True)
        self._chars_left, self._markdown_left = SHOWN_CHARS, MARKDOWN_CHARS
        nb.cells = self._shown_cells(nb.cells)
        for cell in nb.cells:
            self._clean(cell)
        return nb, resources

    def _limit_time(self, student: str) -> None:
        """Arm this notebook's time limit (in nbgrader's main thread only; each notebook re-arms
        it, and nbgrader is done long before the last one's would go off)."""
        seconds = self.time_limit
        if not seconds:
            from autograder.settings import of_run

            run = of_run()
            seconds = run.feedback_timeout if run is not None else 0.0
        if seconds <= 0 or threading.current_thread() is not threading.main_thread():
            return

        def too_slow(signum: int, frame: FrameType | None) -> None:
            if not converting(frame):  # it ended in time: nbgrader is between notebooks
                return
            why = f"its feedback took longer than {seconds:g} s (feedback_timeout)"
            outcomes.feedback(student, why)
            raise FeedbackTimeout(why)

        signal.signal(signal.SIGALRM, too_slow)
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def _shown_cells(self, cells: list) -> list:
        """Every test cell, and the first ``SHOWN_CELLS`` others."""
        shown: list = []
        others = left_out = 0
        for cell in cells:
            if regions.is_test_cell(cell) or others < SHOWN_CELLS:
                others += not regions.is_test_cell(cell)
                shown.append(cell)
            else:
                left_out += 1
        if left_out:
            note = f"*[{left_out} more cells of this notebook are not shown in feedback]*"
            cell_id = unique_id("left-out", {c.get("id") for c in shown})
            shown.append(NotebookNode(cell_type="markdown", id=cell_id, metadata={}, source=note))
        return shown

    def _redact(self, text: str) -> str:
        lines = []
        for line in text.split("\n"):
            s = regions.normalize(line)
            if s and (s in self._secret or (self._long and self._long.search(s))):
                line = REDACTED
            lines.append(line)
        text = "\n".join(lines)
        for path in self._paths:
            text = text.replace(path, "<course>")
        return text

    def _bounded(self, text: str) -> str:
        """``text`` redacted, within what is left of the notebook's characters (cut at a line's
        end, with a note)."""
        room = min(SHOWN_CELL_CHARS, self._chars_left)
        if len(text) > room:
            cut = text.rfind("\n", 0, room + 1)
            kept = text[: cut if cut > 0 else room]
            note = f"[... {len(text) - len(kept):,} more characters not shown in feedback]"
            text = kept + "\n" + note
        self._chars_left -= min(len(text), self._chars_left)
        return self._redact(text)

    def _markdown(self, cell) -> None:
        """The course's Markdown as it is; a learner's drawn as Markdown while it is short,
        shallow and cheap, else shown as text. Raw HTML in it is shown as text either way, and
        its links and images as the text they were written with."""
        text = cell.source
        own = text not in self._course_markdown
        if own and not self._drawable(text):
            cell.source = as_text(self._bounded(text))
            return
        if own:
            self._markdown_left -= len(text)
        shown = TAG_START.sub("&lt;", self._bounded(text))
        cell.source = inert_links(shown) if own else shown

    def _drawable(self, text: str) -> bool:
        return (
            len(text) <= min(MARKDOWN_CELL_CHARS, self._markdown_left)
            and markdown_depth(text) <= MARKDOWN_DEPTH
            and all(line.count("[") * len(line) <= MARKDOWN_LINE_COST for line in text.split("\n"))
        )

    def _clean(self, cell) -> None:
        is_test = regions.is_test_cell(cell)
        if is_test and not self.show_hidden_tests:
            cell.source = regions.without_hidden(cell.source, HIDDEN_NOTE)
        if cell.cell_type == "markdown":
            # A learner's Markdown may hold raw HTML (<script>, onerror=...): shown as text.
            self._markdown(cell)
            cell.pop("attachments", None)
        elif cell.cell_type == "raw":  # drawn as the page's own HTML otherwise: shown as text
            cell.cell_type, cell.metadata = "markdown", {}
            cell.source = as_text(self._bounded(cell.source))
            cell.pop("attachments", None)
        if cell.cell_type != "code":
            return
        cell.source = self._bounded(cell.source)
        if not is_test:  # feedback is a verdict: what a learner's cell printed is not shown
            if cell.get("outputs"):
                cell.outputs = [
                    NotebookNode(output_type="stream", name="stdout", text=OWN_OUTPUTS_NOTE)
                ]
            return
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                evalue = out.evalue
                if len(evalue) > MAX_MESSAGE:
                    evalue = evalue[:MAX_MESSAGE] + " [...]"
                out.ename, out.evalue = self._redact(out.ename), self._redact(evalue)
                out.traceback = [f"{out.ename}: {out.evalue}"]
            elif out.output_type == "stream":
                out.text = self._redact(out.text)
            elif "data" in out:
                for mime, value in list(out.data.items()):
                    if mime not in INERT_OUTPUTS or not isinstance(value, str):
                        del out.data[mime]  # HTML, JavaScript, SVG, Markdown...: not shown
                    elif mime == "text/plain":
                        out.data[mime] = self._redact(value)
                if not out.data:
                    out.data["text/plain"] = ACTIVE_NOTE


LINK_DEFINITION = re.compile(r"^( {0,3})\[", re.MULTILINE)


def inert_links(markdown: str) -> str:
    """``markdown`` with no link or image left: ``[text](url)``, ``![alt](url)`` and
    ``[label]: url`` shown as written, and a bare address (``https://...``, which the renderer
    would make a link) as text. A link's address could run a script where feedback is opened
    (``javascript:``), an image load from anywhere, and an image of an attachment (not kept in
    feedback: it could be an SVG with a script) stops nbconvert."""
    escaped = markdown.replace("](", "]\\(").replace("://", ":\\/\\/")
    return LINK_DEFINITION.sub(r"\1\\[", escaped)


def converting(frame: FrameType | None) -> bool:
    """Whether ``frame`` is inside nbconvert's conversion of a notebook."""
    while frame is not None:
        if frame.f_code.co_name == "from_notebook_node":
            return True
        frame = frame.f_back
    return False


def markdown_depth(text: str) -> int:
    """How deeply the lists and quotes of the Markdown ``text`` nest, on its deepest line: its
    quote and list markers, and its indentation (two spaces a level)."""
    deepest = 0
    for line in text.split("\n"):
        prefix = _PREFIX.match(line).group()  # type: ignore[union-attr]  # always matches
        width = prefix.count(" ") + 4 * prefix.count("\t")
        deepest = max(deepest, len(_MARKERS.findall(prefix)) + width // 2)
    return deepest


def as_text(text: str) -> str:
    """Markdown that shows ``text`` as it is: a fenced block (a fence longer than any run of
    backticks in it), lines folded at ``TEXT_LINE`` characters."""
    folded = "\n".join(
        line[i : i + TEXT_LINE]
        for line in text.split("\n")
        for i in range(0, max(len(line), 1), TEXT_LINE)
    )
    fence = "`" * max(3, 1 + max((len(m) for m in _BACKTICKS.findall(folded)), default=0))
    return f"{fence}text\n{folded}\n{fence}"
