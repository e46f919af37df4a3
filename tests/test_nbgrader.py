"""The nbgrader assignments, graded by the real nbgrader through the instructor's tool (course).

Every assignment in solutions/ is picked up. Two classes are graded, each once per session,
in a temporary course root with 2 worker processes:

* the *main class*: per assignment, the solution notebook (full marks), the untouched
  exercise (0, no crash), two typical mistakes of tests/grading_cases/ (they lose points) and
  a correct alternative (full marks); each scores what autograder/dry.py gives it, the
  kernel-less grader on which tests/test_grading_cases.py runs the whole table;
* the *adversarial class* (assignment 01): an infinite loop, a dying kernel, a memory bomb,
  a deleted and an edited test cell, invalid JSON, calls to the reference and to built-ins,
  a monkeypatched checker, beside two control students whose grades must not change.

And the gradebook: the results that parallel workers graded in copies of an SQLite gradebook,
merged into the main one through nbgrader's API, equal those of a run that graded straight
into it, field by field (``AFZ_TEST_GRADEBOOK_URL=postgresql://...`` also merges into that
server database).
"""

from __future__ import annotations

import csv
import json
import os
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import grading_cases as CASES
import psutil
import pytest

from course import gradebook, grading, leaks, release
from course.autograde import autograde
from course.collect import collect
from course.config import Course, CourseError
from course.release import check_release
from course.reports import feedback, grades
from course.runner import Run
from course.validate import validate, validation_passed

REPO = Path(__file__).resolve().parents[1]
COURSE = Course(REPO)
MISTAKES = CASES.MISTAKES
# AFZ_TEST_ASSIGNMENTS=01_attention,02_multi_head limits the run while an assignment is drafted.
ASSIGNMENTS = COURSE.assignments(
    [a for a in os.environ.get("AFZ_TEST_ASSIGNMENTS", "").split(",") if a] or None
)
FULL = "full"


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


@pytest.fixture(scope="session", autouse=True)
def grading_env():
    saved = {k: os.environ.get(k) for k in ("AFZ_GRADEBOOK_URL", "AFZ_CELL_TIMEOUT")}
    os.environ.pop("AFZ_GRADEBOOK_URL", None)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def by_key(results) -> dict[tuple[str, str], object]:
    return {(r.assignment, r.student): r for r in results}


# ---------------------------------------------------------------------------------------
# exercises/ is generated from solutions/
# ---------------------------------------------------------------------------------------
@pytest.mark.slow  # nbgrader generates every assignment again
def test_exercises_are_a_fresh_generation_without_solutions():
    problems = check_release(COURSE, ASSIGNMENTS)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_leak_check_finds_solution_lines(assignment):
    """The leak check is not vacuous: the source notebook itself leaks its solutions."""
    assert leaks.leaked_lines(source(assignment), source(assignment))
    assert leaks.leaked_lines(source(assignment), exercise(assignment)) == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_region_has_a_secret_line(assignment):
    """The leak scanner skips short lines (leaks.MIN_LINE_LENGTH); a solution or hidden-test
    region that leaked whole must still be found, so each has a line it searches for."""
    secret = leaks.secret_lines(source(assignment))
    regions = leaks.regions(source(assignment))
    assert regions
    for region in regions:
        assert secret & set(region), f"{assignment}: no secret line in {region[:3]}"


@pytest.mark.slow  # replays each solution notebook
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_test_cell_has_hidden_checks(assignment):
    """Visible checks' values are released (expected_visible.json); a test of visible checks
    only could be passed by hard-coding them, so every test also checks hidden inputs."""
    from autograder import replay

    full = replay.expected_checks(source(assignment))
    visible = replay.expected_checks(source(assignment), visible_only=True)
    for grade_id, checks in full.items():
        seen = [c["key"] for c in visible.get(grade_id, [])]
        hidden = [c["key"] for c in checks if c["key"] not in seen]
        assert hidden, f"{assignment}/{grade_id}: no hidden checks"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_assignment_has_points_and_20_to_30_of_them(assignment):
    nb = read(source(assignment))
    points = sum(
        c["metadata"].get("nbgrader", {}).get("points", 0)
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade")
    )
    assert 20 <= points <= 30, f"{assignment}: {points} points, expected 20-30"


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
    """The whole table is graded without Jupyter (tests/test_grading_cases.py); that is only
    worth something if it scores what real grading scores."""
    _, results, names = main_class
    differ = []
    for (a, s), name in names.items():
        dry = CASES.dry_graded(a)[name]
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
    os.environ["AFZ_CELL_TIMEOUT"] = "20"
    try:
        results = autograde([A1], Course(root), workers=2)
    finally:
        os.environ.pop("AFZ_CELL_TIMEOUT", None)
    return root, {r.student: r for r in results}


def test_controls_unaffected_by_adversaries(adversarial_class, main_class):
    _, adv = adversarial_class
    _, main, names = main_class
    assert adv["good"].status == "ok" and adv["good"].score == adv["good"].max_score == 22
    first = f"mistake: {MISTAKES[A1][0][0]}"  # the mistake of "partial", also in the main class
    (key,) = [k for k, name in names.items() if k[0] == A1 and name == first]
    assert adv["partial"].score == main[key].score < 22


def test_infinite_loop_is_interrupted(adversarial_class):
    r = adversarial_class[1]["loop"]
    assert r.status == "ok" and any("time limit" in n for n in r.notes), r
    assert 0 < r.score < r.max_score  # only the tests that call causal_mask are lost


def test_dead_kernel_is_graded_zero(adversarial_class):
    r = adversarial_class[1]["exit"]
    assert r.status.startswith("error: the kernel died") and r.score == 0, r


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
    assert "assigning to `hc._call_watched`" in verdict_text(root, "monitor_off")


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


# ---------------------------------------------------------------------------------------
# The gradebook: workers' copies merged through nbgrader's API equal a direct run
# ---------------------------------------------------------------------------------------
DUE = datetime(2026, 3, 1, 12, 0)  # UTC
# Penalty method "zero": a late notebook's penalty is its whole score (nbgrader's default,
# "none", would leave every penalty empty and the comparison blind to it).
LATE_CONFIG = 'c.LateSubmissionPlugin.penalty_method = "zero"\n'


def merge_class() -> dict[str, tuple[dict, datetime]]:
    """student -> (notebook, submitted at): on time, late, late within an extension."""
    return {
        "ontime": (read(exercise(A1)), DUE - timedelta(days=1)),
        "late": (mutate(read(source(A1)), *MISTAKES[A1][0][1:]), DUE + timedelta(hours=5)),
        "extended": (read(source(A1)), DUE + timedelta(days=1)),
    }


def prepare(url: str, notebook: str) -> None:
    """What an instructor may have set before grading: a due date, an extension, a manual
    grade and comment, a flag."""
    with gradebook.open_gradebook(url) as gb:
        gb.update_or_create_assignment(A1, duedate=DUE)
        gb.update_or_create_submission(A1, "extended", extension=timedelta(days=2))
        gb.update_or_create_submission(A1, "ontime")
        gb.find_grade("test_softmax", notebook, A1, "ontime").manual_score = 1.5
        gb.find_comment("softmax", notebook, A1, "ontime").manual_comment = "see me"
        gb.find_submission_notebook(notebook, A1, "ontime").flagged = True
        gb.db.commit()


def _fields(obj) -> dict:
    """Every column of a gradebook object but its ids, and what nbgrader computes from them
    (its ``to_dict``: scores, needs-manual-grade, failed tests)."""
    from sqlalchemy import inspect

    out = obj.to_dict()
    out.update({a.key: getattr(obj, a.key) for a in inspect(obj).mapper.column_attrs})
    return {k: v for k, v in out.items() if k != "id" and not k.endswith("_id")}


def gradebook_content(url: str, students: list[str]) -> dict:
    """The submissions of ``students`` to A1, field by field."""
    content = {}
    with gradebook.open_gradebook(url) as gb:
        for s in students:
            sub = gb.find_submission(A1, s)
            content[s] = {
                "submission": _fields(sub),
                "late": (sub.total_seconds_late, sub.late_submission_penalty),
                "student": _fields(sub.student),
                "notebooks": {
                    nb.name: {
                        "notebook": _fields(nb),
                        "grades": {g.name: _fields(g) for g in nb.grades},
                        "comments": {c.name: _fields(c) for c in nb.comments},
                    }
                    for nb in sub.notebooks
                },
            }
    return content


def grade_merge_class(root: Path, workers: int, engine: str = "pool") -> tuple[str, dict]:
    """Grade ``merge_class`` in ``root`` with ``workers`` workers; (gradebook URL, content)."""
    course = Course(make_root(root))
    notebook = source(A1).stem
    for student, (nb, when) in merge_class().items():
        submit(root, student, A1, nb)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        (root / "submitted" / student / A1 / "timestamp.txt").write_text(stamp)
    url = course.gradebook_url
    release.register(course, [A1], sorted(merge_class()), url)
    prepare(url, notebook)
    results = autograde([A1], course, workers=workers, engine=engine)
    assert all(r.status == "ok" for r in results), results
    return url, gradebook_content(url, sorted(merge_class()))


@pytest.fixture(scope="session")
def merge_runs(tmp_path_factory):
    """The same class graded straight into the gradebook (1 worker), by 2 workers in copies of
    it, merged, and by 2 Dask workers from the seed gradebook (each submission graded before
    sent with its own state): {"direct" | "merged" | "dask": (url, content)}."""
    config = tmp_path_factory.mktemp("jupyter_config")
    (config / "nbgrader_config.py").write_text(LATE_CONFIG)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_CONFIG_DIR", str(config))
        return {
            "direct": grade_merge_class(tmp_path_factory.mktemp("direct"), workers=1),
            "merged": grade_merge_class(tmp_path_factory.mktemp("merged"), workers=2),
            "dask": grade_merge_class(tmp_path_factory.mktemp("dask"), 2, engine="dask"),
        }


# nbgrader's add_submission under SQLAlchemy 2 (prepare, and merge into an empty gradebook)
QUIET_SA = "ignore:Object of type .* not in session:sqlalchemy.exc.SAWarning"


@pytest.mark.filterwarnings(QUIET_SA)
def test_merged_gradebook_equals_a_direct_run(merge_runs):
    direct, merged = merge_runs["direct"][1], merge_runs["merged"][1]
    assert merged == direct
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
    their submissions are created, equal to the source's. With AFZ_TEST_GRADEBOOK_URL (e.g.
    postgresql://...) the target is that database."""
    url, content = merge_runs["direct"]
    target = os.environ.get("AFZ_TEST_GRADEBOOK_URL") or f"sqlite:///{tmp_path / 'target.db'}"
    students = sorted(merge_class())
    release.register(Course(make_root(tmp_path / "course")), [A1], [], target)
    with gradebook.open_gradebook(target) as gb:  # the assignment's own: not merged
        gb.update_or_create_assignment(A1, duedate=DUE)
    gradebook.merge(url, target, [(A1, s) for s in students])
    assert gradebook_content(target, students) == content


# ---------------------------------------------------------------------------------------
# collect
# ---------------------------------------------------------------------------------------
def test_collect_from_zip_rejects_bad_notebooks_and_keeps_them(tmp_path):
    root = make_root(tmp_path / "course")
    good = source(A1).read_bytes()
    zpath = tmp_path / "batch.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("batch/alice/01_attention/attention.ipynb", good)
        zf.writestr("batch/bob/01_attention/attention.ipynb", b'{"cells": [ oops')
        zf.writestr("batch/carol/01_attention/attention (1).ipynb", good)
        zf.writestr("batch/dave/01_attention/attention.ipynb", b'{"nbformat": 4}')
    rejected = collect(zpath, Course(root))
    assert (root / "submitted/alice/01_attention/attention.ipynb").read_bytes() == good
    reasons = {r.student: r.reason for r in rejected}
    assert set(reasons) == {"bob", "carol", "dave"}
    assert "not valid JSON" in reasons["bob"]
    assert "misnamed" in reasons["carol"] and "attention.ipynb" in reasons["carol"]
    assert "not a Jupyter notebook" in reasons["dave"]
    for r in rejected:
        assert (root / r.kept_as).exists(), r
        assert not (root / "submitted" / r.student).exists(), r
    assert (root / "reports/collect_rejected.csv").read_text().count("\n") == 4


def test_collect_from_folder_with_assignment(tmp_path):
    root = make_root(tmp_path / "course")
    src = tmp_path / "downloads"
    (src / "erin").mkdir(parents=True)
    (src / "erin" / "attention.ipynb").write_bytes(exercise(A1).read_bytes())
    assert collect(src, Course(root), assignment=A1) == []
    assert (root / "submitted/erin/01_attention/attention.ipynb").exists()
    with pytest.raises(CourseError, match="unknown assignment"):
        collect(src, Course(root), assignment="99_nothing")


# ---------------------------------------------------------------------------------------
# validate
# ---------------------------------------------------------------------------------------
def test_validation_verdict_is_read_from_the_output():
    assert validation_passed("Success! Your notebook passes all the tests.\n")
    assert not validation_passed("VALIDATION FAILED ON 3 CELL(S)! If you submit ...")
    assert not validation_passed("")


@pytest.mark.slow  # nbgrader validate starts a kernel
def test_validate_fails_on_the_untouched_exercise(tmp_path, capsys):
    assert validate([exercise(A1)], Course(tmp_path)) is False
    assert "VALIDATION FAILED" in capsys.readouterr().out


@pytest.mark.slow  # nbgrader validate starts a kernel (in the sandbox, where there is one)
def test_validate_judges_the_visible_checks_like_the_learners_own_run(tmp_path, capsys):
    """A kernel that validates judges the visible checks at once (it does not only record
    them for a grader that never comes): a wrong softmax fails with the teaching message."""
    folder = tmp_path / A1
    folder.mkdir()
    wrong = mutate(read(source(A1)), *MISTAKES[A1][0][1:])
    (folder / source(A1).name).write_text(json.dumps(wrong))
    (folder / "expected_visible.json").write_bytes(
        (REPO / "exercises" / A1 / "expected_visible.json").read_bytes()
    )
    assert validate([folder / source(A1).name], Course(tmp_path)) is False
    out = capsys.readouterr().out
    assert "VALIDATION FAILED" in out and "row sums of softmax(scores)" in out, out[-3000:]
    (folder / source(A1).name).write_text(json.dumps(read(source(A1))))
    assert validate([folder / source(A1).name], Course(tmp_path)) is True  # the solution


def test_kernel_start_race_is_retried_not_charged_to_the_learner(monkeypatch, tmp_path):
    """A kernel that dies before kernel_info (a port race between kernels started side by side)
    never ran learner code: grading is retried; a learner's dead kernel is not."""
    calls = []

    def fake_run(args, course, url=None, log=None, timeout=None, sandbox=True):
        calls.append(args)
        if len(calls) == 1:
            out = "Address already in use\nRuntimeError: " + grading.KERNEL_START_FAILURE
            return Run(1, out)
        return Run(0, "graded")

    def fake_diagnose(course, rc, out, s, a, oom=False, grader_oom=False):
        return ("ok" if rc == 0 else out, [])

    monkeypatch.setattr(grading, "nbgrader_run", fake_run)
    monkeypatch.setattr(grading, "diagnose", fake_diagnose)
    result = grading.grade_one(("01_attention", "someone"), Course(tmp_path), "sqlite://", 60)
    assert len(calls) == 2 and result.status == "ok"

    calls.clear()
    monkeypatch.setattr(
        grading, "nbgrader_run", lambda *a, **k: calls.append(a) or Run(1, "DeadKernelError")
    )
    result = grading.grade_one(("01_attention", "someone"), Course(tmp_path), "sqlite://", 60)
    assert len(calls) == 1 and result.status == "DeadKernelError"


@pytest.mark.filterwarnings(QUIET_SA)
def test_dask_workers_get_no_grades_but_each_task_its_own_submission(merge_runs, tmp_path):
    """The seed every Dask worker gets has the assignments and students and nothing graded, so
    it does not grow with the class; a submission already in the gradebook travels alone, in
    its own task, and a worker's seed with it equals the main gradebook for that submission."""
    from course.distributed import prior_states, seed_gradebook

    url, content = merge_runs["direct"]
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
        db.write_bytes(seed)  # as course.tasks.grade_task prepares it
        with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
            gradebook.import_submission(gb, a, s, data)
        with gradebook.open_gradebook(f"sqlite:///{db}") as gb:
            assert [sub.student.id for sub in gb.find_assignment(a).submissions] == [s]
        assert gradebook_content(f"sqlite:///{db}", [s]) == {s: content[s]}
