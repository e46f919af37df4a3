"""nbgrader preprocessors of the course (named in ``nbgrader_config.py``).

- ``LimitedExecute``: nbgrader's Execute with a cap on what a notebook may print: past
  the setting ``output_mb`` (default 8) outputs are dropped, so a print loop cannot fill
  the grader's memory or the autograded notebook. Comm and widget messages count against the
  cap and are never kept (no widget state in the autograded notebook, no widget views). The
  test cells' results (check records, and the error that stopped a test) are kept apart: the
  cap never cuts them, and they have a bound of their own per test cell (``MAX_RECORDS``,
  ``MAX_RECORD_BYTES``), past which the test fails, so that records cannot carry output past
  the cap. Once the cap is reached, a grader's note at the top of the notebook says so, and
  the run's execution record too. What stopped an execution (a dead or unresponsive kernel)
  goes into the run's execution record (``autograder.outcomes``).
  Once the last cell has replied it ends the kernel with a signal rather than asking it to
  shut down (``_async_end_kernel``), and it stamps each stage for
  ``benchmarks/grading_cost.py`` (``AFZ_TIMING``).
- ``Verdicts``: run right after execution. It replaces the outputs of every test cell with
  the verdict that ``autograder/verdicts.py`` reaches, in this process, from the check
  records the cell handed out and the solution's values (``autograder/replay.py``).
- ``SafeFeedback``: run before the HTML feedback is written. The outputs of the learner's own
  cells are not shown (a note stands in their place: feedback is a verdict, not a window
  through which a notebook could send out what it read). Test cells show only their visible
  part and their verdict; errors show only their type and message (the teaching message),
  never a traceback (which quotes hidden test lines and the grader's paths); every line that
  repeats a hidden-test or solution line of the source notebook is replaced; the course's
  and the Python installation's paths are replaced. The setting ``feedback_shows_hidden`` keeps
  the hidden tests' code in the test cells (e.g. after the deadline). What is kept is text only
  (``INERT_OUTPUTS``), Markdown cells show raw HTML as text and raw cells are shown as text,
  so that nothing a notebook wrote runs in the browser that opens its feedback. What a page
  draws of a learner's text is bounded (``SHOWN_*``, ``MARKDOWN_*``: a learner's Markdown that
  is long, deeply nested or costly to draw is shown as text), and the conversion of one
  notebook has a time limit of its own (the setting ``feedback_timeout``), so that one
  notebook's page cannot cost the others theirs in a class's feedback run.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Set as AbstractSet
from pathlib import Path
from types import FrameType

from jupyter_core.utils import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Float, Integer, Unicode

from autograder import outcomes, regions, stamp
from autograder.settings import Settings
from checks.record import MIME

DEFAULTS = Settings()  # the traitlets that carry a setting take its declared default
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
TAMPERED = "afz_tampered"  # resources key: {grade_id: why its records cannot be trusted}
KERNEL_STOP_WAIT = 10.0  # seconds the kernel's launcher gets to clean up after SIGTERM
# A test cell's own results, kept apart from the output cap: an honest one makes at most 37
# check records in about 110 KB (assignment 05's largest).
MAX_RECORDS = 200
MAX_RECORD_BYTES = 2 * 1024 * 1024
KEPT_TRACEBACK = 20  # lines of a test cell's error kept (each cut to KEPT_LINE characters)
KEPT_LINE = 2000
WIDGET_MIMES = frozenset(
    {"application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"}
)


def notebook_of(folder: str, resources: dict) -> Path:
    """The notebook in ``folder`` (solutions/ or exercises/) that nbgrader is working on."""
    from autograder.verdicts import source_notebook

    info = resources.get("nbgrader", {})
    return source_notebook(folder, info.get("assignment", ""), info.get("notebook", ""))


def execution_error(err: BaseException) -> str:
    """The kind of what stopped a notebook's execution, for its record (``outcomes``)."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbgrader.preprocessors.execute import UnresponsiveKernelError

    if isinstance(err, DeadKernelError):
        return "dead kernel"
    if isinstance(err, CellTimeoutError):  # interrupted after the time limit, it went on
        return "uninterruptible kernel"
    if isinstance(err, UnresponsiveKernelError):
        return "unresponsive kernel"
    if isinstance(err, RuntimeError) and "before replying to kernel_info" in str(err):
        return "kernel start"  # jupyter_client's wait_for_ready: no learner code ran yet
    return type(err).__name__


class LimitedExecute(Execute):
    max_output_bytes = Integer(
        DEFAULTS.output_bytes,
        help="Outputs of one notebook past this many bytes are dropped (the setting output_mb).",
    ).tag(config=True)
    source_directory = Unicode(
        "", help="nbgrader's source folder (solutions/): the test cells' kernel forms"
    ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        from autograder import kernel_form

        self._output_bytes = 0
        self._output_capped = False
        self._tampered: dict[int, str] = {}
        self._results: dict[int, list[int]] = {}  # test cell -> [records, bytes] kept apart
        self._forms: dict[str, str] = {}
        self.store_widget_state = False
        nb.metadata.pop("widgets", None)  # a submission's own widget state is not kept either
        if self.source_directory:  # the kernel runs each test cell's kernel form: no answers
            source = notebook_of(self.source_directory, resources or {})
            self._forms = kernel_form.kernel_forms(json.loads(source.read_text("utf-8")))
        stamp("execute")
        try:
            nb, resources = super().preprocess(nb, resources, km)
        except BaseException as err:  # recorded for the instructor's diagnosis, then as before
            outcomes.execution(error=execution_error(err), message=str(err)[:500])
            raise
        finally:
            stamp("executed")
            if self._output_bytes > self.max_output_bytes:
                outcomes.execution(output_capped=self._output_bytes)
        nb.metadata.pop("widgets", None)
        tampered = {}
        for index, reason in self._tampered.items():
            meta = nb.cells[index].metadata.get("nbgrader", {})
            tampered[meta.get("grade_id", f"cell {index}")] = reason
        resources[TAMPERED] = tampered
        if self._output_bytes > self.max_output_bytes:
            taken = {cell.get("id") for cell in nb.cells}
            nb.cells.insert(0, cap_note(self.max_output_bytes, taken))
        return nb, resources

    # Stages for benchmarks/grading_cost.py (AFZ_TIMING); nothing else changes. (nbclient's
    # sync methods wrap its coroutines at class level, so these are the ones to override.)
    def start_new_kernel(self, **kwargs):
        stamp("kernel start")
        return super().start_new_kernel(**kwargs)

    def start_new_kernel_client(self):
        kc = super().start_new_kernel_client()
        stamp("kernel ready")
        return kc

    def preprocess_cell(self, cell, resources, index):
        kind = {"solution": "learner", "test": "tests"}.get(regions.cell_kind(cell), "setup")
        stamp("cell", kind=kind)
        original = cell.source
        if regions.is_test_cell(cell):
            grade_id = str(regions.nbgrader_meta(cell).get("grade_id"))
            cell.source = self._forms.get(grade_id, original)
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = original
            stamp("cell done", kind=kind)

    def process_message(self, msg, cell, cell_index):
        """Outputs are kept as they came, in the cell that was running: no display update is
        applied (nbclient would copy an update into every earlier output of the same display
        id, in any cell: records rewritten after their cell ran, or one large update made a
        thousand times). An update is counted against the output cap, and a check record that
        carries a display id, or an update aimed at one, fails the test cell it belongs to."""
        content = msg.get("content")
        if not isinstance(content, dict):  # a raw message from the kernel's own socket
            self._count(msg)
            return self._left_out(cell)
        transient = content.get("transient")
        display_id = transient.get("display_id") if isinstance(transient, dict) else None
        kind = msg.get("msg_type")
        if str(kind).startswith("comm"):  # widgets: counted, never kept, no frontend mimicked
            self._count(msg)
            return None
        if display_id and kind in ("execute_result", "display_data", "update_display_data"):
            data = content.get("data")
            data = data if isinstance(data, dict) else {}
            if MIME in data:
                self._tampered.setdefault(
                    cell_index,
                    "a check record was published with a display id, so it could "
                    "be rewritten after the test ran",
                )
            for target in self._record_cells.get(str(display_id), ()):
                self._tampered.setdefault(
                    target, "a check record of this test cell was updated after it was made"
                )
            if kind == "update_display_data":
                self._count(msg)
                return None
            if MIME in data:
                self._record_cells.setdefault(str(display_id), set()).add(cell_index)
            msg = {**msg, "content": {k: v for k, v in content.items() if k != "transient"}}
        count = msg["content"].get("execution_count")
        if count is not None and type(count) is not int:  # nbformat would refuse the cell
            kept = {k: v for k, v in msg["content"].items() if k != "execution_count"}
            msg = {**msg, "content": kept}
        try:
            return super().process_message(msg, cell, cell_index)
        except (KeyError, TypeError, AttributeError):  # fields the protocol does not allow
            self._count(msg)
            return self._left_out(cell)

    @property
    def _record_cells(self) -> dict[str, set[int]]:
        if not hasattr(self, "_records_by_display_id"):
            self._records_by_display_id: dict[str, set[int]] = {}
        return self._records_by_display_id

    def _count(self, msg) -> bool:
        """Count a message's size against the cap; ``False`` once the cap is passed."""
        self._output_bytes = getattr(self, "_output_bytes", 0) + message_bytes(msg)
        return self._output_bytes <= self.max_output_bytes

    def _cleanup_kernel(self):
        stamp("kernel shutdown")
        try:
            run_sync(self._async_end_kernel)()
            return super()._cleanup_kernel()
        finally:
            stamp("kernel gone")

    async def _async_end_kernel(self) -> None:
        """End the kernel at once: SIGTERM to its process group, instead of nbclient's polite
        shutdown request (with which ipykernel tears itself down, torch and all, and the
        client polls for its end: about 1.5 s of a grading, for nothing once the last cell
        has replied). The launcher (``autograder.kernel``) then kills its sandbox, removes
        the cgroup and its folders, and exits; nbclient's cleanup finds it gone. Should the
        launcher not exit within ``KERNEL_STOP_WAIT`` seconds, nbclient's cleanup kills it.
        """
        km = self.km
        if km is None or not km.has_kernel or not await ensure_async(km.is_alive()):
            return
        await ensure_async(km.signal_kernel(signal.SIGTERM))
        deadline = time.monotonic() + KERNEL_STOP_WAIT
        while await ensure_async(km.is_alive()) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    def output(self, outs, msg, display_id, cell_index):
        if self._is_test_result(msg, cell_index):
            return self._keep_result(outs, msg, display_id, cell_index)
        if not self._count(msg):
            if not getattr(self, "_output_capped", False):
                self._output_capped = True
                note = NotebookNode(
                    output_type="stream",
                    name="stderr",
                    text=f"[grader] output limit of {self.max_output_bytes // 1024} KiB "
                    "reached: the rest of this notebook's output is not kept\n",
                )
                outs.append(note)
            return None
        msg = without_widgets(msg)
        if msg is None:
            return None
        return self._append_valid(outs, msg, display_id, cell_index)

    def _append_valid(self, outs, msg, display_id, cell_index: int):
        """nbclient's output, unless the kernel sent one a notebook cannot hold (a MIME
        bundle whose text is a number, say): nbformat would refuse it and stop nbgrader, and the
        notebook would be a grader error graded again at every run. It is left out with a note;
        a test cell's record left out fails its own check."""
        from nbformat import ValidationError

        try:
            return super().output(outs, msg, display_id, cell_index)
        except (ValidationError, KeyError, TypeError, AttributeError):
            return self._left_out(None, outs)

    def _left_out(self, cell, outs=None):
        """A note where an output was left out (a message the protocol does not allow)."""
        outs = outs if outs is not None else cell.setdefault("outputs", [])
        note = "[grader] an output that a notebook cannot hold was left out\n"
        outs.append(NotebookNode(output_type="stream", name="stderr", text=note))
        return None

    def _is_test_result(self, msg, cell_index: int) -> bool:
        """A check record or an error, in a test cell: what its verdict is made of."""
        cells = self.nb.cells if self.nb is not None else []
        if not (0 <= cell_index < len(cells) and regions.is_test_cell(cells[cell_index])):
            return False
        kind = msg.get("msg_type")
        data = (msg.get("content") or {}).get("data")
        return kind == "error" or (
            kind in ("display_data", "execute_result") and isinstance(data, dict) and MIME in data
        )

    def _keep_result(self, outs, msg, display_id, cell_index: int):
        """Keep a test cell's result apart from the output cap, within the cell's own bound;
        past it the test fails (its results could no longer be trusted to be its own)."""
        if msg.get("msg_type") == "error":
            msg = bounded_error(msg)
        used = getattr(self, "_results", {}).setdefault(cell_index, [0, 0])
        used[0] += 1
        used[1] += message_bytes(msg)
        if used[0] > MAX_RECORDS or used[1] > MAX_RECORD_BYTES:
            self._tampered.setdefault(
                cell_index,
                f"the test cell handed the grader more than {MAX_RECORDS} check records or "
                f"{MAX_RECORD_BYTES // 1024 // 1024} MiB of them (a test makes a few dozen); "
                "what the tested code printed counts against the output limit instead",
            )
            return None
        return self._append_valid(outs, msg, display_id, cell_index)


def message_bytes(msg) -> int:
    """The size of a kernel message as the output cap counts it (content and buffers)."""
    size = len(json.dumps(msg.get("content", {}), default=str))
    return size + sum(len(b) for b in msg.get("buffers") or () if isinstance(b, bytes | memoryview))


def without_widgets(msg):
    """``msg`` without widget views (which show nothing without the widget state, never kept);
    None when nothing else is left of it."""
    data = (msg.get("content") or {}).get("data")
    if not isinstance(data, dict) or not WIDGET_MIMES & set(data):
        return msg
    data = {k: v for k, v in data.items() if k not in WIDGET_MIMES}
    if not data:
        return None
    return {**msg, "content": {**msg["content"], "data": data}}


def bounded_error(msg):
    """An error message of a test cell, its text cut to what a verdict needs."""
    content = msg.get("content") or {}
    lines = content.get("traceback")
    lines = (
        [str(line)[:KEPT_LINE] for line in lines[-KEPT_TRACEBACK:]]
        if isinstance(lines, list)
        else []
    )
    bounded = {
        **content,
        "ename": str(content.get("ename", ""))[:KEPT_LINE],
        "evalue": str(content.get("evalue", ""))[: 4 * KEPT_LINE],
        "traceback": lines,
    }
    return {**msg, "content": bounded}


def unique_id(base: str, taken: AbstractSet[str | None]) -> str:
    """A cell id made of ``base`` that is none of ``taken``."""
    return next(f"{base}-{n}" for n in range(len(taken) + 1) if f"{base}-{n}" not in taken)


def cap_note(limit: int, taken: AbstractSet[str | None] = frozenset()) -> NotebookNode:
    """The grader's note that a notebook printed past the output cap (a Markdown cell whose
    id is none of ``taken``)."""
    text = (
        f"**Grader's note.** Your notebook printed more than the grader keeps "
        f"({limit / 2**20:g} MiB): what it printed after that was left out of the graded "
        "notebook. The tests' results were kept apart and graded as usual; print less to keep "
        "your own outputs."
    )
    cell_id = unique_id("grader-output-note", taken)
    return NotebookNode(cell_type="markdown", id=cell_id, metadata={}, source=text)


class RestoreCells(NbGraderPreprocessor):
    """Before nbgrader's own checks: the submission rebuilt on the released notebook's cells
    (``autograder/restore.py``), so that a moved, copied or changed cell costs at most its
    test, never the whole notebook."""

    release_directory = Unicode("", help="nbgrader's release folder (exercises/)").tag(config=True)

    def preprocess(self, nb, resources):
        import nbformat

        from autograder.restore import restore

        path = notebook_of(self.release_directory, resources)
        release = json.loads(path.read_text(encoding="utf-8"))
        restored, notes = restore(json.loads(json.dumps(nb)), release)
        if notes:
            self.log.warning("cells put back as released: %s", "; ".join(notes))
        # read back as nbformat reads a file (sources as one string, not a list of lines)
        return nbformat.reads(json.dumps(restored), as_version=4), resources


class Verdicts(NbGraderPreprocessor):
    source_directory = Unicode("", help="nbgrader's source folder (solutions/)").tag(config=True)

    def preprocess(self, nb, resources):
        from autograder import replay, scan, verdicts

        source = notebook_of(self.source_directory, resources)
        expected = replay.expected_checks(source)  # a ReplayError stops this notebook
        reading = scan.Scan(nb, json.loads(source.read_text(encoding="utf-8")))
        quiet = reading.looks_around()
        for cell in nb.cells:
            if not regions.is_test_cell(cell):
                continue
            grade_id = regions.nbgrader_meta(cell).get("grade_id", "")
            verdict = verdicts.judge_test(
                grade_id,
                expected.get(grade_id, []),
                cell.get("outputs", []),
                tampered=resources.get(TAMPERED, {}).get(grade_id),
                refused=reading.interference(grade_id),
                static=reading.forbidden(grade_id, expected.get(grade_id, [])),
                quiet=quiet,
            )
            cell.outputs = [NotebookNode(o) for o in verdicts.verdict_outputs(verdict)]
        outcomes.execution(reading_notes=reading.noted())  # for the instructor's summary
        stamp("verdicts done")
        return nb, resources


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
