"""The test cells' recorder (checks/recorder.py), the grader's verdicts (autograder/verdicts.py),
the replay of the solutions (autograder/replay.py) and the absent pieces (autograder/pieces.py),
without nbgrader. The same machinery through the real workflow: tests/grading/test_nbgrader.py."""

from __future__ import annotations

import base64
import functools
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

import checks
import checks.recorder
from autograder import pieces, regions, replay, verdicts
from checks import ATTENTION_BUILTINS, SOFTMAX_BUILTINS, Test, encode, released
from checks.compare import judge
from checks.record import decode
from checks.watch import call_watched

REPO = Path(__file__).resolve().parents[2]


def ref(kind: str, expected, **options) -> dict:
    return {"test": "t", "key": "x", "name": "x", "kind": kind, "expected": encode(expected),
            **options}  # fmt: skip


def wire(value):
    """What reaches the grader: the record's JSON, parsed back."""
    return json.loads(json.dumps(encode(value)))


# ---------------------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2.5,
        "torch.bool",
        [1, [2.0, "a"]],
        np.arange(6.0).reshape(2, 3),
        torch.tensor([[True, False]]),
        torch.arange(4),
        torch.randn(2, 3, dtype=torch.float16),
        float("-inf"),
    ],
)
def test_values_survive_the_trip(value):
    back = decode(wire(value))
    if isinstance(value, torch.Tensor):
        assert np.array_equal(back, value.double().numpy() if value.is_floating_point() else value)
    elif isinstance(value, np.ndarray):
        assert np.array_equal(back, value)
    elif isinstance(value, float) and np.isinf(value):
        assert back == value
    else:
        assert back == value


@pytest.mark.parametrize(
    "data",
    [
        [1, 2],
        {"nd": {"dtype": "object", "shape": [1], "data": ""}},
        {"nd": {"dtype": "float64", "shape": [3], "data": base64.b64encode(b"x" * 8).decode()}},
        {"nd": {"dtype": "float64", "shape": [10**9], "data": ""}},
        {"nd": {"dtype": "float64", "shape": [-1], "data": ""}},
        {"pickle": "gASVAAAA"},
        {"list": [1], "extra": 2},
    ],
)
def test_malformed_records_fail_the_check(data):
    message = judge(ref("close", [1.0]), data)
    assert message and "malformed" in message


WELL_FORMED_BUT_ODD = [  # values a record may carry that no check expects
    {"list": [{"nd": {"dtype": "float64", "shape": [2], "data": "AAAAAAAAAAAAAAAAAAAAAA=="}}, 1]},
    {"list": [{"list": []}, {"dict": {"a": 1}}]},
    {"dict": {"shape": {"list": [1, 2]}}},
    {"type": "x" * 10_000},
    {"float": "nan"},
    "a string",
    True,
    None,
    1e308,
    {"list": [{"float": "inf"}, {"float": "-inf"}]},
]


@pytest.mark.parametrize("kind", ["close", "equal", "shape", "true", "raises", "calls", "agree"])
@pytest.mark.parametrize("expected", [[1.0, 2.0], [2, 3], "float32", np.eye(2), [[1, 2], [3, 4]]])
def test_no_record_makes_the_comparison_raise(kind, expected):
    """Whatever a record carries, the comparison gives a message or passes, and never raises:
    a crafted record fails its own check, not the notebook and not the grader."""
    for data in WELL_FORMED_BUT_ODD:
        for extra in ({}, {"broadcast_to": [2, 2]}, {"where": encode(np.eye(2, dtype=bool))}):
            result = judge({**ref(kind, expected), **extra}, data)
            assert result is None or isinstance(result, str)


# ---------------------------------------------------------------------------------------
# verdicts and their messages
# ---------------------------------------------------------------------------------------
def test_close_messages_teach():
    r = ref("close", np.zeros((2, 3)), hint="did you take softmax over dim 0?")
    assert judge(r, wire(np.zeros((2, 3)) + 1e-7)) is None
    assert "should have shape (2, 3); got (3, 2)" in judge(r, wire(np.zeros((3, 2))))
    assert "NaN or inf" in judge(r, wire(np.full((2, 3), np.nan)))
    assert "forget a `return`" in judge(r, wire(None))
    message = judge(ref("close", [1.0], hint="over dim 0?"), wire([3.0]))
    assert "expected 1.0000, got 3.0000" in message and message.endswith("over dim 0?")
    assert "got str" in judge(r, wire("zeros"))


def test_close_accepts_matching_infinities_only():
    r = ref("close", [float("-inf"), 1.0])
    assert judge(r, wire([float("-inf"), 1.0])) is None
    assert judge(r, wire([float("inf"), 1.0]))


def test_equal_shape_true_raises_calls_agree():
    assert judge(ref("equal", "torch.bool"), wire("torch.bool")) is None
    assert "expected 'torch.bool', got 'torch.int64'" in judge(
        ref("equal", "torch.bool"), wire("torch.int64")
    )
    assert judge(ref("equal", 1), wire(True))  # a bool is not the number 1
    mask = np.tril(np.ones((3, 3), dtype=bool))
    r = ref("equal", mask[None], broadcast_to=[2, 1, 3, 3])
    assert judge(r, wire(torch.tensor(mask))) is None  # (3, 3) broadcasts
    assert "does not broadcast" in judge(r, wire(np.ones((2, 2))))
    where = np.zeros((2, 1, 3, 3), dtype=bool)
    r = ref("equal", mask, broadcast_to=[2, 1, 3, 3], where=encode(where))
    assert judge(r, wire(~mask)) is None  # only positions under `where` count
    assert "got (3,)" in judge(ref("shape", [2, 3]), wire([3]))
    assert "Expected" not in (judge(ref("true", True, hint="h"), wire(False)) or "")
    assert judge(ref("true", True), wire(1)) is not None  # only True itself passes
    assert judge(ref("raises", "ValueError"), wire(["ValueError", "Exception"])) is None
    assert "nothing was raised" in judge(ref("raises", "ValueError"), wire([]))
    assert "torch.softmax" in judge(ref("calls", []), wire(["torch.softmax"]))
    target = np.array([[3, 4, 2], [5, 2, 0]])
    r = ref("agree", target, at_least=0.5)
    assert judge(r, wire(np.array([[3, 4, 2], [6, 2, 0]]))) is None
    assert "0% of the 2" in judge(r, wire(np.zeros((2, 3), dtype=int)))


def record(key, value, test="t"):
    return {
        "output_type": "display_data",
        "data": {checks.MIME: {"test": test, "key": key, "value": encode(value)}},
    }


def test_a_test_passes_only_with_one_good_record_per_check():
    refs = [dict(ref("close", [1.0]), key="a", name="a"), dict(ref("equal", 2), key="b", name="b")]
    good = [record("a", [1.0]), record("b", 2)]
    assert verdicts.judge_test("t", refs, good).passed
    assert verdicts.judge_test("t", refs, [*good, {"output_type": "stream", "text": "x"}]).passed
    missing = verdicts.judge_test("t", refs, good[:1])
    assert not missing.passed and "No result for 'b'" in missing.message
    stopped = verdicts.judge_test(
        "t", refs, [good[0], {"output_type": "error", "ename": "SystemExit", "evalue": "0"}]
    )
    assert not stopped.passed and "stopped before" in stopped.message
    assert stopped.ename == "SystemExit"
    twice = verdicts.judge_test("t", refs, [*good, record("b", 2)])
    assert not twice.passed and "reported 2 times" in twice.message
    other_test = verdicts.judge_test("t", refs, [good[0], record("b", 2, test="u")])
    assert not other_test.passed
    assert not verdicts.judge_test("t", [], good).passed  # a test without checks never passes
    fake_text = {"output_type": "stream", "name": "stdout", "text": "t: all 2 checks passed"}
    assert not verdicts.judge_test("t", refs, [fake_text]).passed


def test_a_notebook_that_reads_the_kernels_internals_gets_no_window_in_its_messages():
    """What the learner's code raised is named by its type only when the notebook reads the
    kernel's internals: a message could carry a test's code out into feedback."""
    refs = [{"key": "k", "name": "k", "kind": "close", "expected": encode([1.0])}]
    raised = [{"output_type": "error", "ename": "ValueError", "evalue": "cHJpbnQoJ3NlY3JldCcp"}]
    plain = verdicts.judge_test("t", refs, raised)
    assert "cHJpbnQoJ3NlY3JldCcp" in plain.message
    quiet = verdicts.judge_test("t", refs, raised, quiet="code cell 3, line 2 (`sys._getframe`)")
    assert not quiet.passed and "cHJpbnQoJ3NlY3JldCcp" not in quiet.message
    assert (
        "ValueError (its message is not shown" in quiet.message and "code cell 3" in quiet.message
    )


def test_verdict_outputs_score_like_nbgrader():
    from nbformat.notebooknode import from_dict
    from nbgrader.utils import determine_grade

    cell = from_dict(
        {
            "cell_type": "code",
            "source": "",
            "metadata": {"nbgrader": {"grade": True, "solution": False, "points": 3}},
        }
    )
    cell.outputs = [from_dict(o) for o in verdicts.verdict_outputs(verdicts.Verdict(True, "ok"))]
    assert determine_grade(cell) == (3, 3)
    bad = verdicts.Verdict(False, "x is wrong")
    cell.outputs = [from_dict(o) for o in verdicts.verdict_outputs(bad)]
    assert determine_grade(cell) == (0, 3)


# ---------------------------------------------------------------------------------------
# the recorder: replay and local modes
# ---------------------------------------------------------------------------------------
def test_replay_collects_the_solution_and_checks_written_numbers():
    sink: list[dict] = []
    checks.replay_into(sink)
    try:
        t = Test("test_x")
        t.close("a", np.array([1.0, 2.0]), hint="h")
        t.close("a", [3.0], [3.0])
        t.equal("b", "torch.bool", "torch.bool")
    finally:
        checks.replay_into(None)
    assert [c["key"] for c in sink] == ["a", "a #2", "b"]
    assert sink[0]["hint"] == "h" and "solution" not in sink[0]
    assert "solution" in sink[1]


def released_test(grade_id: str, values: dict, notebook: str = "01_x/x.ipynb") -> Test:
    """A Test as a released test cell makes it: with the solution's values it carries."""
    packed = released.pack(notebook, grade_id, {k: encode(v) for k, v in values.items()})
    return Test(grade_id, expected=packed)


@pytest.fixture
def local(monkeypatch):
    monkeypatch.delenv("CHECKS_MODE", raising=False)


def test_local_mode_judges_with_the_values_the_released_cell_carries(local):
    t = released_test("test_x", {"a": [1.0, 2.0]})
    t.close("a", [1.0, 2.0])
    t.close("written out", [3.0], [3.0])  # a value the cell writes needs nothing released
    with pytest.raises(AssertionError, match="written out is wrong at index.*think"):
        t.close("written out", [4.0], [3.0], hint="think")
    with pytest.raises(checks.CheckFailed, match=r"a is wrong at index \(1,\).*think"):
        released_test("test_x", {"a": [1.0, 2.0]}).close("a", [1.0, 5.0], hint="think")


def test_local_mode_names_the_known_mistake_the_cell_computes(local):
    t = released_test("test_x", {"w": [0.5, 0.5]})
    with pytest.raises(checks.CheckFailed, match="exactly what you get when it is flipped"):
        t.close("w", [0.2, 0.8], like={"it is flipped": [0.2, 0.8]})


def test_a_local_check_without_its_value_fails_and_says_what_to_do(local):
    """Nothing passes unjudged: no values at all, a check the values do not know, values of
    another test cell, and damaged values each fail with what to do."""
    with pytest.raises(checks.CheckFailed, match="carries no solution values.*as released"):
        Test("test_x").close("a", [1.0])
    with pytest.raises(checks.CheckFailed, match="no value for this check"):
        released_test("test_x", {"a": [1.0]}).close("not released", [1.0])
    other = released.pack("04_y/y.ipynb", "test_y", {"a": encode([1.0])})
    with pytest.raises(checks.CheckFailed, match="those of test 'test_y' of 04_y/y.ipynb"):
        Test("test_x", expected=other)
    with pytest.raises(checks.CheckFailed, match="cannot be read"):
        Test("test_x", expected="afz1:not base64 at all!")
    Test("test_x").equal("written out", 3, 3)  # a value the cell writes needs nothing released


def test_released_values_pack_and_unpack():
    packed = released.pack("01_x/x.ipynb", "test_x", {"a": encode([1.0, 2.0])})
    assert packed.startswith(released.PREFIX) and "\n" not in packed and '"' not in packed
    payload = released.unpack(packed)
    assert payload == {
        "notebook": "01_x/x.ipynb",
        "test": "test_x",
        "values": {"a": encode([1.0, 2.0])},
    }
    for bad in ("", "afz0:abc", released.PREFIX + "!!", released.PREFIX + "eJw="):
        with pytest.raises(released.NotReleasedValues):
            released.unpack(bad)


def test_record_mode_publishes_and_never_judges(monkeypatch):
    published = []
    monkeypatch.setenv("CHECKS_MODE", "record")
    monkeypatch.setattr(checks.recorder, "_publish", published.append)
    t = Test("test_x")
    t.close("a", [99.0])  # wrong, but the kernel decides nothing
    assert published == [{"test": "test_x", "key": "a", "value": encode([99.0])}]


# ---------------------------------------------------------------------------------------
# the built-in watch (a best effort)
# ---------------------------------------------------------------------------------------
def own_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.size(-1) ** 0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf")))
    e = (scores - scores.amax(-1, keepdim=True)).exp()
    weights = e / e.sum(-1, keepdim=True)
    return weights @ v, weights


def via_thread(x):
    out = {}
    th = threading.Thread(target=lambda: out.setdefault("r", torch.softmax(x, -1)))
    th.start()
    th.join()
    return out["r"]


def via_unset(x):
    saved = sys.getprofile()
    sys.setprofile(None)
    try:
        return torch.softmax(x, -1)
    finally:
        sys.setprofile(saved)


def via_disabled_function_mode(x):
    with torch._C.DisableTorchFunction():
        return torch.softmax(x, -1)


CHEATS = {
    "direct": lambda x: torch.softmax(x, -1),
    "private": lambda x: torch._softmax(x, -1, False),
    "operator": lambda x: torch.ops.aten._log_softmax(x, -1, False).exp(),
    "partial": lambda x: functools.partial(torch.softmax, dim=-1)(x),
    "disabled function mode": via_disabled_function_mode,
    "traced": lambda x: torch.jit.trace(lambda y: torch.softmax(y, -1), (x,))(x),
    "method": lambda x: x.softmax(-1),
    "functional": lambda x: torch.nn.functional.softmax(x, dim=-1),
    "map": lambda x: torch.stack(list(map(torch.softmax, x, [-1] * len(x)))),
    "thread": via_thread,
    "unset": via_unset,
}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_watch_sees_builtins_by_several_routes(cheat):
    hits: list[str] = []
    call_watched(CHEATS[cheat], (torch.randn(3, 4),), {}, SOFTMAX_BUILTINS, hits)
    assert hits, cheat


def test_watch_names_a_kernel_only_when_no_python_name_was_seen():
    hits: list[str] = []
    call_watched(lambda x: torch.ops.aten._softmax(x, -1, False), (torch.randn(3),), {},
                 SOFTMAX_BUILTINS, hits)  # fmt: skip
    assert hits == ["torch.softmax (its kernel aten::_softmax ran)"]
    hits = []
    q = torch.randn(1, 1, 2, 4)
    call_watched(lambda: torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, q, q),
                 (), {}, ATTENTION_BUILTINS, hits)  # fmt: skip
    assert hits == ["torch.nn.functional.scaled_dot_product_attention (its kernel "
                    "aten::_scaled_dot_product_flash_attention_for_cpu ran)"]  # fmt: skip
    hits = []
    call_watched(torch.softmax, (torch.randn(3), -1), {}, SOFTMAX_BUILTINS, hits)
    assert hits == ["torch.softmax"]


def test_watch_accepts_own_code_with_its_backward():
    def own(x):
        x = x.clone().requires_grad_()
        e = (x - x.amax(-1, keepdim=True)).exp()
        (e / e.sum(-1, keepdim=True)).pow(2).sum().backward()
        return x.grad

    hits: list[str] = []
    call_watched(own, (torch.randn(2, 3, dtype=torch.float64),), {}, SOFTMAX_BUILTINS, hits)
    assert hits == []


def test_watch_accepts_own_code_and_restores_the_profiler():
    hits: list[str] = []
    q = torch.randn(2, 3, 4)
    call_watched(own_attention, (q, q, q), {}, ATTENTION_BUILTINS, hits)
    assert hits == [] and sys.getprofile() is None
    call_watched(
        lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q), (), {},
        ATTENTION_BUILTINS, hits,
    )  # fmt: skip
    assert hits == ["torch.nn.functional.scaled_dot_product_attention"]


# ---------------------------------------------------------------------------------------
# absent pieces
# ---------------------------------------------------------------------------------------
def import_in(path: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(path)!r})\n{code}"],
        capture_output=True,
        text=True,
        cwd=path,
    )


def test_pieces_of_this_and_later_assignments_are_absent(tmp_path):
    copy = pieces.filtered_copy(REPO / "helpers", tmp_path / "helpers", "02_multi_head")
    assert not (copy / "__pycache__").exists()
    # code only: the chapters' corpus (megabytes) is not copied into every grading sandbox
    data = [p for p in copy.rglob("*") if p.is_file() and p.suffix != ".py"]
    assert {p.name for p in data} <= {"py.typed"}, data
    ok = import_in(
        tmp_path,
        "from helpers import scaled_dot_product_attention, make_copy_task\n"
        "import checks.fixtures, checks.watch\n"
        "assert checks.watch._resolve('helpers.multi_head.MultiHeadAttention') is None\n"
        "assert checks.watch._resolve('helpers.attention.causal_mask') is not None\n"
        "print('ok')",
    )
    assert ok.returncode == 0 and "ok" in ok.stdout, ok.stderr
    absent = {
        "from helpers import MultiHeadAttention": "exercise 02_multi_head asks you to write",
        "import helpers.multi_head": "exercise 02_multi_head asks you to write",
        "from helpers import Encoder": "later exercise (04_encoder)",
        "from helpers.model import Transformer": "later exercise (06_train_and_generate)",
        "from helpers import format_vector": "pictures and measurements",
        "import helpers.pictures.tracing": "pictures and measurements",
    }
    # One process tries them all (each import of torch costs a process about 2 CPU-s); a failed
    # import leaves nothing in sys.modules, so each one fails as it would alone.
    done = import_in(
        tmp_path,
        "import json\nfor code in " + repr(list(absent)) + ":\n"
        "    try:\n        exec(code, {})\n"
        "    except ImportError as e:\n        print(json.dumps([code, str(e)]))\n"
        "    else:\n        print(json.dumps([code, None]))",
    )
    assert done.returncode == 0, done.stderr
    errors = dict(json.loads(line) for line in done.stdout.splitlines())
    for code, says in absent.items():
        assert errors[code] is not None, f"{code!r} imported"
        assert says in errors[code], (code, errors[code])


def test_every_helpers_module_is_placed(tmp_path):
    """A module of helpers that imports a piece as it loads must be absent whenever that piece
    is: in the copy graded for the first assignment (every piece absent), every other module
    imports. (A piece imported inside a function, as helpers.interop does, fails only when
    called, with the absent piece's own message.)"""
    placed = {m for ms in pieces.PIECES.values() for m in ms}
    support = {"__init__", "data", "interop", "pictures"}
    helpers_dir = REPO / "helpers"
    packages = {p.name for p in helpers_dir.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in helpers_dir.glob("*.py")} | packages
    assert modules <= placed | support, modules - placed - support
    first = next(iter(pieces.PIECES))
    assert set(pieces.absent_modules(first)) == placed
    pieces.filtered_copy(helpers_dir, tmp_path / "helpers", first)
    names = sorted(support - {"__init__", "pictures"})  # pictures: a stub, below
    done = import_in(
        tmp_path,
        f"import importlib\nfor m in {names!r}:\n    importlib.import_module('helpers.' + m)\n"
        "print('ok')",
    )
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr
    drawn = import_in(tmp_path, "from helpers.pictures.plotting import plot_attention")
    assert "helpers.pictures cannot be imported here" in drawn.stderr, drawn.stderr
    drawn = import_in(tmp_path, "import helpers; helpers.best_time")
    assert "helpers.pictures cannot be imported here" in drawn.stderr, drawn.stderr
    assert pieces.absent_modules("unknown") == {}


def test_the_kernel_side_never_imports_the_grader():
    """helpers and checks are what a grading kernel has; neither names autograder or course
    (tests/unit/test_architecture.py checks every arrow; this says it for the sandbox's two)."""
    for package in ("helpers", "checks"):
        for path in (REPO / package).rglob("*.py"):
            imports = re.findall(
                r"^\s*(?:from|import) (?:autograder|course)\b.*$", path.read_text(), re.M
            )
            assert imports == [], (path, imports)


# ---------------------------------------------------------------------------------------
# the replay
# ---------------------------------------------------------------------------------------
def test_replay_fails_loudly_when_the_solution_fails_its_own_test(tmp_path, monkeypatch):
    import nbformat

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    nb = nbformat.v4.new_notebook()
    meta = {"grade": False, "solution": True, "locked": False, "grade_id": "f",
            "schema_version": 3}  # fmt: skip
    test = {"grade": True, "solution": False, "locked": True, "grade_id": "test_f",
            "points": 1, "schema_version": 3}  # fmt: skip
    nb.cells = [
        nbformat.v4.new_code_cell("def f():\n    return 2", metadata={"nbgrader": meta}),
        nbformat.v4.new_code_cell(
            "from checks import Test\nt = Test('test_f')\nt.equal('f()', f(), 3)",
            metadata={"nbgrader": test},
        ),
    ]
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(replay.ReplayError, match="the solution fails: f\\(\\): expected 3"):
        replay.expected_checks(path)
    nb.cells[1].source = nb.cells[1].source.replace("3)", "2)")
    nbformat.write(nb, path)
    assert [c["key"] for c in replay.expected_checks(path)["test_f"]] == ["f()"]


def test_hidden_parts_are_stripped_for_the_visible_file():
    text = "a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3\n"
    assert regions.without_hidden(text) == "a = 1\nc = 3\n"
    assert (
        regions.without_hidden("  ### BEGIN HIDDEN TESTS x\nb\n  ### END HIDDEN TESTS\n", "#")
        == "#\n"
    )
