"""Course roots and the notebooks submitted into them, shared by the grading tests.

The assignments of solutions/, a course root with solutions/ and exercises/ linked in, edits
of the solution notebooks, and the adversarial class of assignment 01 (each student's notebook
and what it does), which tests/grading/test_nbgrader.py, test_adversaries.py and
test_distributed.py grade.
"""

from __future__ import annotations

import base64
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
# The released notebook's packed visible values (Test("...", expected="afz1:...")), copied by
# the learner into a cell of their own, then forged into records for every test cell.
FORGE_RECORDS = """
from IPython.display import publish_display_data

from checks.released import unpack

RELEASED = {released!r}


def forge(lines):
    text = "".join(lines)
    if "Test(" not in text:
        return lines
    grade_id = text.split("Test(")[1].split(")")[0].strip("\\"' ")
    if grade_id not in RELEASED:
        return lines
    values = unpack(RELEASED[grade_id])["values"]
    records = [{{"test": grade_id, "key": k, "value": v}} for k, v in values.items()]
    return [f"publish_display_data({{{{'application/vnd.afz.check+json': {{r!r}}}}}})\\n"
            for r in records]


get_ipython().input_transformers_cleanup.append(forge)
"""


def released_values() -> dict[str, str]:
    """{grade_id: the packed values} of the released notebook of assignment 01's test cells."""
    import re

    found = {}
    for cell in read(exercise(A1))["cells"]:
        match = re.search(r'expected="(afz1:[^"]+)"', "".join(cell["source"]))
        if match:
            found[grade_id(cell)] = match.group(1)
    return found


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


SVG_WITH_SCRIPT = base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.pwned=3"><rect/></svg>'
).decode()


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
        insert_cell(
            read(exercise(A1)), "imports", FORGE_RECORDS.format(released=released_values())
        ),
        "forges records from the visible values the released notebook carries",
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
    out.update(own_arrangements())
    linked = released_with_solutions()
    linked["cells"].append(
        {
            "cell_type": "markdown",
            "id": "links",
            "metadata": {},
            "attachments": {"p.svg": {"image/svg+xml": SVG_WITH_SCRIPT}},
            "source": "![pasted](attachment:p.svg) ![gone](attachment:missing.png) "
            "[confirm your grade](javascript:window.pwned=1) ![far](https://example.org/x.png)"
            "\n\n[ref][r]\n\n[r]: javascript:window.pwned=2",
        }
    )
    out["markdown_links"] = (linked, "pasted images, an absent attachment, script links")
    surrogates = released_with_solutions()
    surrogates["cells"][0]["source"] = "".join(surrogates["cells"][0]["source"]) + "\udfff"
    at = [grade_id(c) for c in surrogates["cells"]].index("softmax")
    surrogates["cells"][at]["source"] = "# note \ud83d\n" + "".join(
        surrogates["cells"][at]["source"]
    )
    out["surrogates"] = (
        json.dumps(surrogates, indent=1),  # as "\ud83d": JSON allows it, UTF-8 cannot hold it
        "lone surrogates in a Markdown and a code cell",
    )
    # Answers the kernel no longer holds, the monitor gone around or switched off.
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
    # The reading of the source, walked around: a rebound built-in, code in a string, names
    # bound by statements other than def and =, a write into torch under a computed name.
    out["str_rebound"] = (
        insert_cell(
            mutate(
                read(source(A1)),
                "    return torch.ones(size, size, dtype=torch.bool).tril()",
                "    return torch.ones(size, size).tril()",
            ),
            "imports",
            "def str(value):\n    return 'torch.bool'",
        ),
        "a float mask, and a global str that says torch.bool",
    )
    out["exec_softmax"] = (
        mutate(
            read(source(A1)),
            "    x = np.asarray(x)",
            "    ns = {'torch': torch, 'x': x, 'axis': axis}\n"
            "    exec('out = torch.soft' + 'max(torch.as_tensor(x), dim=axis).numpy()', ns)\n"
            "    return ns['out']",
        ),
        "torch.softmax in a computed string run by exec",
    )
    out["walrus_softmax"] = (
        insert_cell(
            read(source(A1)),
            "softmax",
            "(softmax := lambda x, axis=-1: torch.softmax(torch.as_tensor(x), dim=axis).numpy())",
        ),
        "softmax bound again by an assignment expression",
    )
    out["match_softmax"] = (
        insert_cell(
            read(source(A1)),
            "softmax",
            "match 1:\n    case _:\n        def softmax(x, axis=-1):\n"
            "            return torch.softmax(torch.as_tensor(x), dim=axis).numpy()",
        ),
        "softmax bound again inside a match statement",
    )
    out["setattr_torch"] = (
        insert_cell(read(source(A1)), "imports", "setattr(torch, 'ex' + 'p', torch.sigmoid)"),
        "a write into torch under a computed name",
    )
    out["invalid_output"] = (
        insert_cell(
            read(source(A1)),
            "imports",
            "from IPython.display import publish_display_data\n\n"
            "publish_display_data({'text/plain': 5})\n"
            "publish_display_data({'text/html': ['<b>', 7]}, metadata={'text/html': 3})",
        ),
        "outputs a notebook cannot hold (nbformat would refuse them and stop nbgrader)",
    )
    out["raw_messages"] = (
        insert_cell(
            read(source(A1)),
            "imports",
            # raw messages: their content a list (bytes are sent as they are: the session
            # refuses a list), a number as a stream's text, an error without its fields
            "k = get_ipython().kernel\n"
            "k.session.send(k.iopub_socket, 'display_data', b'[1, 2]', parent=k.get_parent())\n"
            "k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 12345},\n"
            "               parent=k.get_parent())\n"
            "k.session.send(k.iopub_socket, 'error', {'ename': 1}, parent=k.get_parent())",
        ),
        "raw messages through the kernel's session whose content is not what the protocol says",
    )
    own = read(source(A1))
    for old, new in OWN_WAY.items():
        own = mutate(own, old, new)
    out["own_way"] = (own, "control: correct, written differently (einsum, torch.where)")
    out["good"] = (sol, "control: the solution")
    out["partial"] = (mutate(read(source(A1)), *MISTAKES[A1][0][1:]), "control: one mistake")
    return out


# Reads everything the grading kernel can see and every cell the kernel is sent, and prints it
# at the end (a learner's own cell: its output stays in the autograded notebook).
REACH_FIRST = """
seen_cells = []
get_ipython().events.register("pre_run_cell", lambda info: seen_cells.append(info.raw_cell))
"""
REACH_LAST = """
import json
import os
import sys

readable = {}
python = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
skip = ("/usr", "/proc", "/sys", "/dev", *python)
for folder, dirs, files in os.walk("/"):
    if folder.startswith(skip):
        dirs[:] = []
        continue
    for name in files:
        path = os.path.join(folder, name)
        try:
            readable[path] = open(path, "rb").read(200_000).decode("utf-8", "replace")
        except OSError:
            readable[path] = None
for pid in os.listdir("/proc"):
    for part in ("cmdline", "environ", "mountinfo"):
        try:
            text = open(f"/proc/{pid}/{part}", "rb").read().decode("utf-8", "replace")
        except OSError:
            continue
        readable[f"/proc/{pid}/{part}"] = text.replace(chr(0), " ")
import linecache

kept = {
    "In": list(In),
    "names": {k: v for k, v in globals().items() if k.startswith("_i") and isinstance(v, str)},
    "linecache": ["".join(entry[2]) for entry in linecache.cache.values()],
}
found = {"files": readable, "environ": dict(os.environ), "cells": seen_cells, "kept": kept}
print("REACH " + json.dumps(found))
"""


def reach_probe() -> dict:
    """The solution, with a cell that records every cell the kernel is sent and, last, one
    that prints every file, process command line and environment the kernel can read."""
    nb = insert_cell(read(source(A1)), "imports", REACH_FIRST)
    nb["cells"].append(
        {
            "cell_type": "code",
            "id": "reach",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": REACH_LAST,
        }
    )
    return nb


# Each: the released notebook with the solution written in, plus one habit of an honest learner
# (a cell before the tests, unless it says "after"). None is a forbidden call: each keeps 22.
HONEST_HABITS = {
    "habit_print_loop": (
        "a debugging loop that prints a lot",
        "before",
        "for i in range(400_000):\n    print('step', i, 'of a long debug run')",
    ),
    "habit_autoreload": ("%autoreload", "before", "%load_ext autoreload\n%autoreload 2"),
    "habit_gc": ("import gc", "before", "import gc\n\ngc.collect()\nprint(gc.get_count())"),
    "habit_sys_path": ("sys.path.insert", "before", "import sys\n\nsys.path.insert(0, '..')"),
    "habit_namespace": (
        "types.SimpleNamespace",
        "before",
        "from types import SimpleNamespace\n\ncfg = SimpleNamespace(d_k=3)",
    ),
    "habit_loop_i": (
        "a loop variable named _i",
        "before",
        "for _i in range(3):\n    print(_i, softmax(np.ones(3) * _i))",
    ),
    "habit_star_after": (
        "from torch import * after the tests",
        "after",
        "from torch import *\n\nprint(softmax(tensor([1.0, 2.0]), 0))",
    ),
    "habit_history": ("IPython's names", "before", "print(len(In), _i if '_i' in dir() else '')"),
    "habit_plot": (
        "%matplotlib and a plot",
        "before",
        "%matplotlib inline\nimport matplotlib.pyplot as plt\n\n"
        "plt.rcParams['figure.dpi'] = 60\nplt.plot([1, 2, 3])\nplt.show()",
    ),
    "habit_settings": (
        "seeds and library settings",
        "before",
        "torch.manual_seed(0)\ntorch.backends.cudnn.deterministic = True\n"
        "np.set_printoptions(precision=3)\nimport warnings\n\n"
        "warnings.filterwarnings('ignore')\nimport os\n\n"
        "os.environ['MY_DEBUG'] = '1'",
    ),
    "habit_time": (
        "%%time on a call of the learner's function",
        "before",
        "%%time\nprint(softmax(np.arange(4.0)))",
    ),
    "habit_shell": ("a shell command", "before", "!ls -la\n!pip list | head -3"),
    "habit_compare_builtin": (
        "torch.softmax in a scratch cell to compare",
        "after",
        "print(torch.softmax(torch.tensor([1.0, 2.0]), 0), softmax(np.array([1.0, 2.0])))",
    ),
}


def honest_habits() -> dict[str, tuple[dict, str]]:
    """student -> (notebook, what habit it adds to an honest learner's notebook)."""
    out = {}
    for student, (what, where, code) in HONEST_HABITS.items():
        nb = released_with_solutions()
        if where == "after":
            nb["cells"].append(
                {
                    "cell_type": "code",
                    "id": "habit",
                    "metadata": {},
                    "execution_count": None,
                    "outputs": [],
                    "source": code,
                }
            )
        else:
            nb = insert_cell(nb, "imports", code)
        out[student] = (nb, f"honest habit: {what}")
    return out


def released_with_solutions() -> dict:
    """The released notebook of assignment 01 with the solution's code in its answer cells."""
    nb = read(exercise(A1))
    code = {grade_id(c): c["source"] for c in read(source(A1))["cells"] if grade_id(c)}
    for c in nb["cells"]:
        if c["metadata"].get("nbgrader", {}).get("solution"):
            c["source"] = code[grade_id(c)]
    return nb


def accidents() -> dict[str, tuple[dict, str]]:
    """Honest learners whose JupyterLab changed cells and metadata; and one who raised points."""
    import copy

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
        "fresh_copy": (
            edit(lambda c, at: [cell.update(metadata={}) for cell in c]),
            "accident: every cell pasted into a new notebook (no nbgrader metadata left)",
        ),
        "raised_points": (
            edit(
                lambda c, at: meta(c[at["softmax"]]).update(grade=True, points=100, solution=True)
            ),
            "tampering: a solution cell made a graded cell of 100 points",
        ),
    }


# Honest notebooks that moved code out of the answer cells; each keeps 22 with no note.
SOFTMAX_IN_PARTS = (
    "def softmax(x, axis=-1):\n    e = _shifted_exp(x, axis)\n"
    "    return e / e.sum(axis=axis, keepdims=True)\n"
)
SHIFTED_EXP = (
    "def _shifted_exp(x, axis):\n    x = np.asarray(x)\n"
    "    return np.exp(x - x.max(axis=axis, keepdims=True))\n"
)


def own_arrangements() -> dict[str, tuple[dict, str]]:
    between = released_with_solutions()
    at = [grade_id(c) for c in between["cells"]].index("softmax")
    between["cells"][at]["source"] = SOFTMAX_IN_PARTS
    between = insert_cell(between, "softmax", SHIFTED_EXP)
    module = released_with_solutions()
    at = [grade_id(c) for c in module["cells"]].index("softmax")
    module["cells"][at]["source"] = "from my_softmax import softmax\n"
    module = insert_cell(
        module, "imports", "%%writefile my_softmax.py\nimport numpy as np\n\n\n"
        + SHIFTED_EXP + "\n\n" + SOFTMAX_IN_PARTS
    )  # fmt: skip
    return {
        "helper_between": (between, "a helper cell between softmax and its test"),
        "own_module": (module, "softmax in a module the notebook writes (%%writefile)"),
    }


def grade_id(cell: dict) -> str | None:
    return cell["metadata"].get("nbgrader", {}).get("grade_id")
