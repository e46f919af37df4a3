"""Course roots and the notebooks submitted into them, shared by the grading tests.

The assignments of solutions/, a course root with solutions/ and exercises/ linked in, edits
of the solution notebooks, and the adversarial class of assignment 01 (each student's notebook
and what it does), which tests/grading/test_nbgrader.py, test_adversaries.py and
test_distributed.py grade.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grading_cases as CASES

from course.config import Course
from support import REPO

COURSE = Course(REPO)
MISTAKES = CASES.MISTAKES
ASSIGNMENTS = COURSE.assignments()


def source(assignment: str) -> Path:
    return REPO / "solutions" / assignment / COURSE.notebook_names(assignment)[0]


def exercise(assignment: str) -> Path:
    return REPO / "exercises" / assignment / COURSE.notebook_names(assignment)[0]


def mutate(nb: dict, old: str, new: str) -> dict:
    """``nb`` with the one occurrence of ``old`` in a cell source replaced by ``new``."""
    return CASES.apply_edits(nb, [(old, new)])


def insert_cell(nb: dict, after_grade_id: str, code: str) -> dict:
    idx = next(
        i
        for i, c in enumerate(nb["cells"])
        if c["metadata"].get("nbgrader", {}).get("grade_id") == after_grade_id
    )
    cell = {
        "cell_type": "code",
        "id": f"inserted-{idx}",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": code,
    }
    nb["cells"].insert(idx + 1, cell)
    return nb


def submit(root: Path, student: str, assignment: str, nb: dict | str) -> None:
    dest = root / "submitted" / student / assignment / COURSE.notebook_names(assignment)[0]
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(nb if isinstance(nb, str) else json.dumps(nb, indent=1, ensure_ascii=False))


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def make_root(tmp: Path) -> Path:
    """A course root in ``tmp`` with the repository's solutions/ and exercises/ linked in
    (nbgrader's source; the release, against which deleted and edited cells are found)."""
    tmp.mkdir(parents=True, exist_ok=True)
    for folder in ("solutions", "exercises"):
        (tmp / folder).symlink_to(REPO / folder)
    return tmp


def course_root(tmp: Path) -> Path:
    """A course root with solutions/ linked in and a copy of exercises/ (``release`` writes
    there, and must not write into the repository's)."""
    tmp.mkdir(parents=True)
    (tmp / "solutions").symlink_to(REPO / "solutions")
    shutil.copytree(REPO / "exercises", tmp / "exercises", symlinks=True)
    return tmp


# ---------------------------------------------------------------------------------------
# The adversarial class (assignment 01)
# ---------------------------------------------------------------------------------------
A1 = "01_attention"
PATCH_CHECKER = """
import builtins
import functools
import sys
import types

import numpy as np
import torch

import checks

np.abs = functools.partial(np.abs)  # a C function in disguise
np.allclose = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
builtins.AssertionError = type("Quiet", (Exception,), {})
np.testing.assert_allclose = lambda *args, **kwargs: None
checks.Test.close = lambda *args, **kwargs: None
checks.Test.equal = lambda *args, **kwargs: None
sys.modules["checks.fixtures"] = types.SimpleNamespace(rng=np.random.default_rng)
"""
NEUTER_TESTS = """
def neuter(lines):
    return ["pass\\n"] if "Test(" in "".join(lines) else lines


get_ipython().input_transformers_cleanup.append(neuter)
"""
SWALLOW_ERRORS = """
def swallow(shell, etype, value, tb, tb_offset=None):
    print("all checks passed")


get_ipython().set_custom_exc((BaseException,), swallow)
"""
FAKE_PASS_LINES = """
for line in ("test_softmax: all 11 checks passed", "Score: 20 / 20"):
    print(line)
get_ipython().events.register("post_run_cell", lambda result: print("all checks passed"))
"""
FORGE_RECORDS = """
import json

from IPython.display import publish_display_data

visible = json.load(open("expected_visible.json"))["checks"]


def forge(lines):
    text = "".join(lines)
    if "Test(" not in text:
        return lines
    grade_id = text.split('Test("')[1].split('"')[0]
    records = [
        {"test": c["test"], "key": c["key"], "value": c["expected"]}
        for c in visible
        if c["test"] == grade_id
    ]
    return [f"publish_display_data({{'application/vnd.afz.check+json': {r}}})\\n"
            for r in map(repr, records)]


get_ipython().input_transformers_cleanup.append(forge)
"""
DISPLAY_IDS = """
import IPython.display as shown

_publish, _count = shown.publish_display_data, [0]


def publish(data, metadata=None, source=None, *, transient=None, **kwargs):
    _count[0] += 1
    return _publish(data, metadata, transient={"display_id": f"record-{_count[0]}"}, **kwargs)


shown.publish_display_data = publish
"""
PROBE = """
import importlib.util

print("autograder:", importlib.util.find_spec("autograder"))
print("grading:", importlib.util.find_spec("helpers.grading"))
try:
    import helpers.attention
except ImportError as err:
    print("attention:", err)
"""
OWN_WAY = {  # correct solutions written differently from the reference
    "    x = np.asarray(x)\n    shifted = x - x.max(axis=axis, keepdims=True)\n"
    "    e = np.exp(shifted)\n    return e / e.sum(axis=axis, keepdims=True)": (
        "    x = np.array(x)\n"
        "    e = np.exp(x - np.amax(x, axis=axis, keepdims=True))\n"
        "    return np.divide(e, np.sum(e, axis=axis, keepdims=True))"
    ),
    "    scores = Q @ K.T / math.sqrt(d_k)": "    scores = np.einsum('qd,kd->qk', Q, K) / d_k**0.5",
    "    return torch.ones(size, size, dtype=torch.bool).tril()": (
        "    i = torch.arange(size)\n    return i[:, None] >= i[None, :]"
    ),
    "    return (tokens != pad_id)[:, None, None, :]": (
        "    return tokens.ne(pad_id).unsqueeze(1).unsqueeze(2)"
    ),
    "    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n"
    "    if mask is not None:\n"
    '        scores = scores.masked_fill(~mask, float("-inf"))\n'
    "    weights = torch.softmax(scores, dim=-1)": (
        "    scores = torch.einsum('...qd,...kd->...qk', q, k) / d_k**0.5\n"
        "    if mask is not None:\n"
        "        scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)\n"
        "    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))\n"
        "    weights = e / e.sum(dim=-1, keepdim=True)"
    ),
}


FAKE_CHECKS = """
SOFTMAX_BUILTINS = ATTENTION_BUILTINS = MASK_BUILTINS = ()


class Test:
    def __init__(self, grade_id):
        print(grade_id, "passed")

    def call(self, fn, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return lambda *args, **kwargs: print("check passed")
"""


def adversaries() -> dict[str, tuple[dict | str, str]]:
    """student -> (notebook, what it does)."""
    sol = read(source(A1))
    out: dict[str, tuple[dict | str, str]] = {}
    out["loop"] = (
        mutate(
            read(source(A1)), "    if size < 1:", "    while True:\n        pass\n    if size < 1:"
        ),
        "infinite loop in causal_mask",
    )
    out["exit"] = (insert_cell(read(source(A1)), "imports", "import os\n\nos._exit(1)"), "os._exit")
    out["bomb"] = (
        insert_cell(
            read(source(A1)),
            "imports",
            "hog = []\nwhile True:\n    hog.append(bytearray(1024**3))  # 1 GiB each",
        ),
        "memory bomb",
    )
    out["deaf"] = (
        insert_cell(
            read(source(A1)),
            "imports",
            "import signal, time\n\nfor sig in (signal.SIGINT, signal.SIGTERM):\n"
            "    signal.signal(sig, signal.SIG_IGN)\ntime.sleep(10**6)",
        ),
        "ignores the time limit's interrupt (and SIGTERM) and sleeps",
    )
    deleted = read(source(A1))
    deleted["cells"] = [
        c
        for c in deleted["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") != "test_softmax"
    ]
    out["deleted"] = (deleted, "deleted test cell")
    edited = read(exercise(A1))
    for c in edited["cells"]:
        if c["metadata"].get("nbgrader", {}).get("grade"):
            c["source"] = "print('all tests passed')"
    out["edited"] = (edited, "edited test cells")
    out["rawjson"] = ('{"cells": [ this is not json', "invalid JSON in submitted/")
    out["reference"] = (
        mutate(
            read(source(A1)),
            "    d_k = q.size(-1)\n    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)",
            "    import helpers.attention as ha\n\n"
            "    return ha.scaled_dot_product_attention(q, k, v, mask)",
        ),
        "calls the helpers reference",
    )
    out["builtin"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis).numpy()",
        ),
        "calls torch.softmax",
    )
    out["builtin_map"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    t = torch.as_tensor(np.asarray(x, dtype=float)).movedim(axis, -1)\n"
            "    rows = list(map(torch.softmax, t.reshape(-1, t.shape[-1]), [-1] * t.numel()))\n"
            "    return torch.stack(rows).reshape(t.shape).movedim(-1, axis).numpy()",
        ),
        "calls torch.softmax through map() (from C)",
    )
    out["builtin_unset"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    import sys\n\n    saved = sys.getprofile()\n    sys.setprofile(None)\n"
            "    y = torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis).numpy()\n"
            "    sys.setprofile(saved)\n    return y",
        ),
        "switches the profiler off around torch.softmax",
    )
    wrong = mutate(read(source(A1)), *MISTAKES[A1][0][1:])
    out["patcher"] = (insert_cell(wrong, "imports", PATCH_CHECKER), "patches libraries/checks")
    untouched = read(exercise(A1))
    out["neuter"] = (insert_cell(untouched, "imports", NEUTER_TESTS), "input transformer")
    out["swallow"] = (
        insert_cell(read(exercise(A1)), "imports", SWALLOW_ERRORS),
        "custom exception handler",
    )
    out["printer"] = (insert_cell(read(exercise(A1)), "imports", FAKE_PASS_LINES), "fake lines")
    out["forger"] = (
        insert_cell(read(exercise(A1)), "imports", FORGE_RECORDS),
        "forges records from the visible expected values",
    )
    out["fakepkg"] = (read(exercise(A1)), "submits its own helpers package")
    out["sysexit"] = (
        mutate(read(source(A1)), "    d_k = q.size(-1)\n", "    raise SystemExit(0)\n"),
        "SystemExit inside scaled_dot_product_attention",
    )
    out["interrupt"] = (
        mutate(
            read(source(A1)),
            "    return (tokens != pad_id)[:, None, None, :]",
            "    raise KeyboardInterrupt",
        ),
        "KeyboardInterrupt inside padding_mask",
    )
    out["probe"] = (insert_cell(read(source(A1)), "imports", PROBE), "looks for the grader")
    out.update(accidents())
    # Issue 22: answers the kernel no longer holds, the monitor gone around or switched off.
    out["answers_by_name"] = (
        mutate(read(source(A1)), "    x = np.asarray(x)", "    return _plain_softmax(x, axis)"),
        "softmax calls the plain softmax a hidden test cell used to define",
    )
    out["answers_by_frame"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    import sys\n\n    return sys._getframe(2).f_globals['_plain_softmax'](x, axis)",
        ),
        "softmax looks for the test's reference through the caller's frame",
    )
    out["ops_softmax"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    t = torch.as_tensor(np.asarray(x, dtype=float))\n"
            "    return torch.ops.aten._softmax(t, axis, False).numpy()",
        ),
        "torch.ops.aten._softmax, which the in-kernel monitor does not see",
    )
    out["monitor_off"] = (
        insert_cell(
            mutate(
                read(source(A1)),
                "    x = np.asarray(x)",
                "    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()",
            ),
            "imports",
            "import checks.recorder as hc\n\n"
            "hc.call_watched = lambda fn, args, kwargs, forbidden, hits: fn(*args, **kwargs)",
        ),
        "switches the in-kernel monitor off, then calls torch.softmax",
    )
    out["display_ids"] = (
        insert_cell(read(source(A1)), "imports", DISPLAY_IDS),
        "every record gets a display id, so that a later cell could rewrite it",
    )
    own = read(source(A1))
    for old, new in OWN_WAY.items():
        own = mutate(own, old, new)
    out["own_way"] = (own, "control: correct, written differently (einsum, torch.where)")
    out["good"] = (sol, "control: the solution")
    out["partial"] = (mutate(read(source(A1)), *MISTAKES[A1][0][1:]), "control: one mistake")
    return out


def accidents() -> dict[str, tuple[dict, str]]:
    """Honest learners whose JupyterLab changed cells and metadata; and one who raised points."""
    import copy

    def released_with_solutions() -> dict:
        nb = read(exercise(A1))
        code = {grade_id(c): c["source"] for c in read(source(A1))["cells"] if grade_id(c)}
        for c in nb["cells"]:
            if c["metadata"].get("nbgrader", {}).get("solution"):
                c["source"] = code[grade_id(c)]
        return nb

    def edit(change) -> dict:
        nb = released_with_solutions()
        at = {grade_id(c): i for i, c in enumerate(nb["cells"]) if grade_id(c)}
        change(nb["cells"], at)
        return nb

    def meta(cell: dict) -> dict:
        return cell["metadata"]["nbgrader"]

    def to_markdown(cell: dict) -> None:
        cell["cell_type"] = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)

    return {
        "moved": (
            edit(lambda c, at: c.insert(1, c.pop(at["test_softmax"]))),
            "accident: test cell moved above the function it tests",
        ),
        "copied_test": (
            edit(lambda c, at: c.append(copy.deepcopy(c[at["test_softmax"]]))),
            "accident: a test cell copied with its metadata (a grade id twice)",
        ),
        "copied_solution": (
            edit(lambda c, at: c.insert(at["softmax"] + 1, copy.deepcopy(c[at["softmax"]]))),
            "accident: a solution cell copied with its metadata",
        ),
        "lost_flag": (
            edit(lambda c, at: meta(c[at["test_softmax"]]).pop("grade")),
            "accident: a test cell's metadata changed",
        ),
        "lost_metadata": (
            edit(lambda c, at: c[at["softmax"]]["metadata"].pop("nbgrader")),
            "accident: a solution cell lost its metadata",
        ),
        "renamed": (
            edit(lambda c, at: meta(c[at["test_softmax"]]).update(grade_id="test_softmax_2")),
            "accident: a test cell's grade id changed",
        ),
        "markdown": (
            edit(lambda c, at: to_markdown(c[at["test_softmax"]])),
            "accident: a test cell turned into Markdown",
        ),
        "raised_points": (
            edit(
                lambda c, at: meta(c[at["softmax"]]).update(grade=True, points=100, solution=True)
            ),
            "tampering: a solution cell made a graded cell of 100 points",
        ),
    }


def grade_id(cell: dict) -> str | None:
    return cell["metadata"].get("nbgrader", {}).get("grade_id")
