"""``LimitedExecute``: nbgrader's Execute with a cap on what a notebook may print.

Past the setting ``output_mb`` (default 8) outputs are dropped, so a print loop cannot fill
the grader's memory or the autograded notebook. Comm and widget messages count against the
cap and are never kept (no widget state in the autograded notebook, no widget views). The
test cells' results (check records, and the error that stopped a test) are kept apart: the
cap never cuts them, and they have a bound of their own per test cell (``MAX_RECORDS``,
``MAX_RECORD_BYTES``), past which the test fails, so that records cannot carry output past
the cap. Once the cap is reached, a grader's note at the top of the notebook says so, and
the run's execution record too. What stopped an execution (a dead or unresponsive kernel)
goes into the run's execution record (``autograder.outcomes``).

Each test cell runs in its kernel form (``autograder.kernel_form``: no answers). Once the last
cell has replied it ends the kernel with a signal rather than asking it to shut down
(``_async_end_kernel``), and it stamps each stage for ``benchmarks/grading_cost.py``
(``AFZ_TIMING``).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Set as AbstractSet

from jupyter_core.utils import ensure_async, run_sync
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer, Unicode

from autograder import outcomes, regions, stamp
from autograder.preprocessors.common import DEFAULTS, TAMPERED, notebook_of, unique_id
from checks.record import MIME

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
