"""The kernel form of test cells (autograder/kernel_form.py): inputs and calls, no answers."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from autograder.kernel_form import WRAPPER, kernel_form, kernel_forms

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "solutions").glob("*/*.ipynb"))
# Stand-ins a test hands the learner's code (a sublayer, a scripted model, a recorder): inputs.
STAND_INS = {"sublayer", "big", "teacher_forcing", "MaskedReverser"}


def test_a_check_keeps_its_name_and_value_and_loses_what_built_the_answer():
    cell = """t = Test("test_x")
def _reference(a):
    return a * 2
expected = _reference(x)
wrong = {"doubled twice": _reference(_reference(x))}
out = t.call(f, x)
t.close("f(x)", out, expected, hint="double it", like=wrong)
t.equal("f(x) again", out, expected=expected)
t.raises("f(None)", TypeError, f, None)
t.agree("rows", out, expected, at_least=0.9)
print("difference", out - expected)
"""
    form = kernel_form(cell)
    assert "_reference" not in form and "expected" not in form and "wrong" not in form
    assert "t.close('f(x)', out)" in form and "t.equal('f(x) again', out)" in form
    assert "t.raises('f(None)', None, f, None)" in form and "t.agree('rows', out)" in form
    assert "print" not in form
    compile(form, "cell", "exec")


def test_a_name_another_cell_reads_stays():
    cell = "t = Test('a')\nshared = make()\nref = compute(shared)\nt.close('y', f(shared), ref)\n"
    form = kernel_form(cell, {"ref"})
    assert "ref = compute(shared)" in form and "global ref" in form


def test_a_test_cell_calls_no_name_the_learner_can_rebind():
    """Built-ins and the course's imports are the form's own local names: a learner's global
    ``str``, ``getattr`` or ``np`` changes nothing, and the cell's own names do not outlive it."""
    cell = "t = Test('x')\nout = f(np.ones(2))\n"
    cell += "t.equal('dtype', str(getattr(out, 'dtype', None)))\n"
    form = kernel_form(cell, (), ["import math\n\nimport numpy as np\n"])
    seen = []

    class Test:  # stands for checks.Test
        def __init__(self, grade_id):
            pass

        def equal(self, name, value):
            seen.append(value)

    learner = {
        "Test": Test,
        "f": lambda a: a,
        "str": lambda x: "float32",  # the learner's replacements
        "getattr": lambda *a: "float32",
        "np": None,
    }
    exec(compile(form, "form", "exec"), learner)
    assert seen == ["float64"]
    assert "out" not in learner and "t" not in learner and WRAPPER not in learner
    assert "import math" not in form  # only what the cell uses


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.parent.name)
def test_no_kernel_form_holds_reference_code(source):
    forms = kernel_forms(json.loads(source.read_text(encoding="utf-8")))
    assert forms
    for grade_id, form in forms.items():
        tree = ast.parse(form)
        defined = {
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        allowed = {WRAPPER, "__init__", "note", "encode", "decode", "targets"}
        assert defined <= STAND_INS | allowed, (
            grade_id,
            defined,
        )
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("close", "equal", "shape", "agree", "true")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "t"
            ):
                assert len(node.args) <= 2 and not node.keywords, (grade_id, ast.unparse(node))
        assert "print(" not in form, grade_id


def test_a_kernel_form_leaves_nothing_of_itself_in_the_kernels_history():
    """After a test cell ran, the learner's next cells find neither its kernel form in
    IPython's history (``In``, ``_i``, ``_i<n>``) nor its lines in ``linecache``; their own
    cells stay."""
    import linecache

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_cell("mine = 41 + 1", store_history=True)
    form = kernel_form("t = Test('x')\nsecret_input = [3.25, 7.5]\nt.close('y', f(secret_input))\n")
    shell.user_ns.update(Test=_RecordingTest, f=lambda a: a)
    assert shell.run_cell(form, store_history=True).success
    shell.run_cell("after = 1", store_history=True)
    history = "\n".join(shell.user_ns["In"]) + str(
        {k: v for k, v in shell.user_ns.items() if k.startswith("_i")}
    )
    cached = "".join(_cached_lines(linecache))
    assert "secret_input" not in history and "secret_input" not in cached
    assert "mine = 41 + 1" in history and "after = 1" in history
    assert _RecordingTest.seen == [[3.25, 7.5]]


def _cached_lines(linecache):
    """The lines ``linecache`` holds; a lazy entry (a 1-tuple, which ``traceback`` leaves when
    it formatted a frame of a module not read yet) has none."""
    return [line for entry in linecache.cache.values() if len(entry) == 4 for line in entry[2]]


class _RecordingTest:
    seen: list = []

    def __init__(self, grade_id):
        pass

    def close(self, name, value):
        _RecordingTest.seen.append(value)


def test_the_code_a_test_calls_does_not_find_the_tests_code_in_the_history():
    """While a test cell runs, the learner's function it calls reads IPython's history, the
    ``_i`` names and ``linecache``: the test's kernel form is already gone from all three."""
    import linecache

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    found = []

    def peek(a):
        kept = shell.history_manager.input_hist_raw[-1] + str(shell.user_ns.get("_i", ""))
        kept += "".join(_cached_lines(linecache))
        found.append("hidden_input_7" in kept)
        return a

    form = kernel_form("t = Test('x')\nhidden_input_7 = [1.5]\nt.close('y', f(hidden_input_7))\n")
    shell.user_ns.update(Test=_RecordingTest, f=peek)
    assert shell.run_cell(form, store_history=True).success
    assert found == [False]
