"""The grader's reading of a learner's code (autograder/scan.py), case by case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.scan import Scan
from checks import ATTENTION_BUILTINS, SOFTMAX_BUILTINS

REPO = Path(__file__).resolve().parents[2]
SOURCE = json.loads((REPO / "solutions/01_attention/attention.ipynb").read_text("utf-8"))
SOFTMAX_REFS = [{"kind": "calls", "forbidden": list(SOFTMAX_BUILTINS), "called": "softmax"}]
SDPA_REFS = [
    {
        "kind": "calls",
        "forbidden": list(ATTENTION_BUILTINS),
        "called": "scaled_dot_product_attention",
    }
]
SOFTMAX_BODY = "    x = np.asarray(x)"


def learner(replace: str = SOFTMAX_BODY, by: str = SOFTMAX_BODY, extra: str = "") -> dict:
    """The solution notebook as a learner's: a line of softmax replaced, a cell added."""
    nb = json.loads(json.dumps(SOURCE))
    hits = 0
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if replace in text and cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = text.replace(replace, by)
            hits += 1
    assert hits == 1
    if extra:
        nb["cells"].insert(2, {"cell_type": "code", "metadata": {}, "source": extra})
    return nb


def problem(nb: dict, grade_id: str = "test_softmax", refs=None) -> str | None:
    return Scan(nb, SOURCE).problem(grade_id, SOFTMAX_REFS if refs is None else refs)


def test_the_solution_and_scratch_comparisons_pass():
    scratch = (
        "import torch\nprint(torch.softmax(torch.ones(3), 0))\n%time y = 1\n!ls\n"
        "import os, socket\nprint(os.getcwd())\n"
        "from checks import Test\nt = Test('test_softmax')\nt.close('x', softmax(1))\n"
    )  # a test's visible code pasted into a scratch cell is not tampering
    nb = learner(extra=scratch)
    for grade_id in ("test_softmax", "test_attention_numpy", "test_sdpa", "test_dtypes"):
        assert problem(nb, grade_id) is None, grade_id
    # the solution's attention uses torch.softmax: allowed where only attention is forbidden
    assert problem(nb, "test_sdpa", SDPA_REFS) is None


@pytest.mark.parametrize(
    "body",
    [
        "    return torch.softmax(torch.as_tensor(x), dim=axis).numpy()",
        "    import torch.nn.functional as F\n    return F.softmax(torch.as_tensor(x), axis)",
        "    from torch import softmax as s\n    return s(torch.as_tensor(x), axis).numpy()",
        "    return torch.as_tensor(x).softmax(axis).numpy()",
        "    return getattr(torch, 'softmax')(torch.as_tensor(x), axis).numpy()",
        "    return torch.special.softmax(torch.as_tensor(x), axis).numpy()",
        "    return helper(x, axis)",  # through a function of the learner's own
        "    return torch.special.log_softmax(torch.as_tensor(x), axis).exp().numpy()",
        "    return torch.nn.Softmax(dim=axis)(torch.as_tensor(x)).numpy()",
        "    return T.softmax(torch.as_tensor(x), axis).numpy()",  # T = torch, an assignment
        # the same sum under other names
        "    return torch.nn.functional.softmin(-torch.as_tensor(x), axis).numpy()",
        "    return torch.nn.Softmin(axis)(-torch.as_tensor(x)).numpy()",
        "    t = torch.as_tensor(x).movedim(axis, -1)\n"
        "    return torch.distributions.Categorical(logits=t).probs.movedim(-1, axis).numpy()",
        "    from torch.distributions.utils import logits_to_probs as p\n"
        "    return p(torch.as_tensor(x).movedim(axis, -1)).movedim(-1, axis).numpy()",
        # through another module's own import of torch
        "    from helpers.interop import F as F2\n"
        "    return F2.softmax(torch.as_tensor(x), axis).numpy()",
        "    import helpers.interop as hi\n"
        "    return hi.nn.functional.softmax(torch.as_tensor(x), axis).numpy()",
        # a star import: what it binds, in whichever cell it runs
        "    return sm(torch.as_tensor(x), axis).numpy()",
    ],
)
def test_forbidden_built_ins_under_any_name(body):
    extra = (
        "import torch\nT = torch\n"
        "def helper(x, axis):\n    return torch.nn.functional.softmax(x, axis)\n"
        "from torch.nn.functional import *\nsm = softmax\n"
    )
    message = problem(learner(by=body, extra=extra))
    assert message and "does the job this exercise asks you to write" in message, body


@pytest.mark.parametrize(
    "body",
    [
        "    return torch._softmax(torch.as_tensor(x), axis, False).numpy()",
        "    return torch.ops.aten._softmax(torch.as_tensor(x), axis, False).numpy()",
        "    return torch.ops.aten.softmax.int(torch.as_tensor(x), axis).numpy()",
        "    return torch._C._nn.softmax(torch.as_tensor(x), axis).numpy()",
        "    exec('y = torch.softmax(torch.as_tensor(x), axis)')\n    return y",  # a literal
    ],
)
def test_private_spellings_and_literal_code_of_a_forbidden_built_in_are_refused(body):
    message = problem(learner(by=body))
    assert message and "does the job this exercise asks you to write" in message, body
    assert "code cell" in message and "line" in message  # where it is


@pytest.mark.parametrize(
    ("body", "noted"),
    [
        ("    return getattr(torch, 'soft' + 'max')(torch.as_tensor(x), axis).numpy()", "getattr"),
        ("    return _plain_softmax(x, axis)", "`_plain_softmax`"),  # only a test sets it
        ("    return big_raw", "`big_raw`"),
        ("    return cube", "`cube`"),  # a test's input the learner also set at top level
        ("    code = 'torch.soft' + 'max(x)'\n    return eval(code)", "`eval(...)`"),
        ("    import sys\n    return sys._getframe(1).f_globals['x']", "sys._getframe"),
    ],
)
def test_what_the_reading_cannot_be_certain_of_is_a_note_not_a_refusal(body, noted):
    """Code in strings, computed names and a test's variables: the reading says so to the
    instructor, and the test is judged on what the function returned (the kernel holds no
    answer to find, and the in-kernel monitor still watches the call)."""
    nb = learner(by=body, extra="cube = 1")
    assert problem(nb) is None, body
    notes = Scan(nb, SOURCE).noted()
    assert any(noted in n and "code cell" in n for n in notes), (body, notes)


def test_a_softmax_from_a_module_the_notebook_wrote_is_a_note():
    """``my_softmax.softmax`` is the learner's, not torch's: the reading cannot see that
    module (a note), and the in-kernel watch sees what it calls."""
    extra = "%%writefile my_softmax.py\ndef softmax(x, axis=-1):\n    return x\n"
    nb = learner(by="    from my_softmax import softmax as own\n    return own(x, axis)",
                 extra=extra)  # fmt: skip
    nb["cells"].insert(3, {"cell_type": "code", "metadata": {}, "source": "import my_softmax"})
    assert problem(nb) is None
    refs = [{"kind": "calls", "forbidden": list(SOFTMAX_BUILTINS), "called": "attention_numpy"}]
    assert problem(nb, "test_attention_numpy", refs) is None
    assert any("my_softmax" in n for n in Scan(nb, SOURCE).noted())


@pytest.mark.parametrize(
    "cell",
    [
        "import checks.watch as hc\nhc.call_watched = lambda fn, a, k, f, h: fn(*a, **k)",
        "import torch\ntorch.softmax = lambda *a, **k: None",
        "import torch as T\nsetattr(T, 'soft' + 'max', print)",
        "import sys\nsys.modules['checks'] = None",
        "import sys\nsys.modules.update(checks=None)",
        "import numpy\nvars(numpy)['allclose'] = print",
        "import torch\ntorch.nn.functional.__dict__['softmax'] = print",
        "import checks\nchecks.Test.close = lambda *a, **k: None",
        "from checks import Test\ndel Test.close",
        "import builtins\nbuiltins.AssertionError = Exception",
        "__builtins__.print = None",
        "get_ipython().input_transformers_cleanup.append(lambda lines: lines)",
        "get_ipython().events.register('post_run_cell', print)",
        "ip = get_ipython()\nip.set_custom_exc((Exception,), print)",
        "import IPython.display as d\nd.publish_display_data = print",
        "def setup():\n    import torch\n    torch.exp = print\n\nsetup()",
    ],
)
def test_a_write_into_a_module_or_the_shell_refuses_every_later_test(cell):
    nb = learner(extra=cell)  # a cell before every test
    message = problem(nb)
    assert message and "scores 0" in message and "code cell 2" in message, cell
    assert problem(nb, "test_causal_mask", []) == message
    # the same cell after the last test changes none of them
    after = learner()
    after["cells"].append({"cell_type": "code", "metadata": {}, "source": cell})
    assert problem(after) is None and problem(after, "test_dtypes", []) is None, cell


def test_a_write_inside_a_function_costs_the_tests_that_call_it():
    body = "    import torch\n    torch.exp = print\n    x = np.asarray(x)"
    nb = learner(by=body)
    assert "writes into a module" in (problem(nb) or "")
    assert problem(nb, "test_causal_mask", []) is None  # does not call softmax


def test_the_monitor_switched_off_in_the_tested_code_is_refused():
    body = "    import sys\n    sys.setprofile(None)\n    x = np.asarray(x)"
    message = problem(learner(by=body))
    assert message and "monitor off" in message and "sys.setprofile" in message
    # at the top level (the profiler of a scratch cell) it changes nothing of the tests
    assert problem(learner(extra="import sys\nsys.setprofile(None)")) is None


@pytest.mark.parametrize(
    "cell",
    [
        "for _i in range(3):\n    print(_i)",  # a loop variable named like IPython's
        "import gc\ngc.collect()",
        "%load_ext autoreload\n%autoreload 2",
        "import sys\nsys.path.insert(0, '..')",
        "from types import SimpleNamespace\ncfg = SimpleNamespace(d=4)",
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.rcParams['figure.dpi'] = 80",
        "import torch\ntorch.backends.cudnn.deterministic = True\ntorch.manual_seed(0)",
        "import os\nos.environ['OMP_NUM_THREADS'] = '1'",
        "for i in range(10_000):\n    print('debug', i)",
        "%%time\nx = softmax(np.ones(3))",
        "import warnings\nwarnings.filterwarnings('ignore')",
        "print(In[-1] if False else 1)",  # reads IPython's history: a note at most
    ],
)
def test_honest_habits_cost_nothing(cell):
    nb = learner(extra=cell)
    for grade_id, refs in (("test_softmax", SOFTMAX_REFS), ("test_sdpa", SDPA_REFS)):
        assert problem(nb, grade_id, refs) is None, (cell, grade_id)


def test_a_star_import_after_the_tests_changes_none_of_them():
    """Cells are read in the order they run: a scratch cell after the tests that star-imports
    torch binds softmax for what comes after it, not for the tests before it."""
    nb = learner()
    nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "from torch import *\n"})
    assert problem(nb) is None
    refs = [{"kind": "calls", "forbidden": list(SOFTMAX_BUILTINS), "called": "attention_numpy"}]
    assert problem(nb, "test_attention_numpy", refs) is None
    assert Scan(nb, SOURCE).noted() == []


def test_a_star_import_that_binds_a_forbidden_name_is_named():
    """``from torch.nn.functional import *`` after the learner's softmax and before its test
    binds F.softmax to the name the test calls: the message names the import, and how to
    avoid it."""
    nb = learner()
    at = next(
        i
        for i, c in enumerate(nb["cells"])
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_softmax"
    )
    nb["cells"].insert(
        at, {"cell_type": "code", "metadata": {}, "source": "from torch.nn.functional import *\n"}
    )
    message = problem(nb)
    assert message and "`from torch.nn.functional import *`" in message, message
    assert "Import only the names you need" in message
    # a star import of a module without such a name changes nothing
    nb["cells"][at]["source"] = "from math import *\nfrom checks import *\n"
    assert problem(nb) is None


@pytest.mark.parametrize(
    "cell",
    [
        "x = " + "-" * 100_000 + "1",  # Python's own parser gives up (MemoryError)
        "x = a" + ".b" * 100_000,  # RecursionError while building the tree
        "x = " + " if 1 else ".join(["1"] * 3000),  # ... while reading it
    ],
)
def test_code_built_to_crash_the_reading_is_a_note(cell):
    """Code nested too deeply for Python to read does not stop the grader (a crash there
    would make the notebook a grader error, graded again at every run): it is noted."""
    nb = learner(extra=cell)
    assert problem(nb) is None
    assert any("nested too deeply" in n for n in Scan(nb, SOURCE).noted())


@pytest.mark.parametrize(
    ("body", "extra"),
    [
        # the kernel stored where no name binds it
        ("    return _tools['sm'](torch.as_tensor(x), axis, False).numpy()",
         "_tools = {}\n_tools.update(sm=torch._softmax)"),
        ("    return _tools['sm'](torch.as_tensor(x), axis, False).numpy()",
         "_tools = {}\n_tools['sm'] = torch._softmax"),
        ("    return _sm(torch.as_tensor(x), axis, False).numpy()",
         "def _setup():\n    global _sm\n    _sm = torch._softmax\n\n\n_setup()"),
        # the kernel named in a string
        ("    import operator\n    sm = operator.attrgetter('_softmax')(torch)\n"
         "    return sm(torch.as_tensor(x), axis, False).numpy()", ""),
        ("    import functools\n"
         "    op = functools.reduce(getattr, ('ops', 'aten', '_softmax', 'default'), torch)\n"
         "    return op(torch.as_tensor(x), axis, False).numpy()", ""),
        ("    op = torch._C._jit_get_operation('aten::_softmax')[0]\n"
         "    return op(torch.as_tensor(x), axis, False).numpy()", ""),
        # the monitors switched off or gone around
        ("    with torch._C.DisableTorchFunction():\n        y = torch.exp(torch.as_tensor(x))\n"
         "    return (y / y.sum(axis, keepdims=True)).numpy()", ""),
        ("    import _thread\n\n    _thread.start_new_thread(print, ('x',))\n"
         "    x = np.asarray(x)", ""),
    ],
)  # fmt: skip
def test_the_kernel_stored_named_in_a_string_or_run_past_the_monitors_is_refused(body, extra):
    """Written by a red team that had the code: each passed with full marks and no note."""
    message = problem(learner(by=body, extra=extra))
    assert message and "scores 0" in message and "code cell" in message, (body, extra)


def test_a_star_import_of_a_module_that_exits_on_import_stops_nothing():
    """The reading imports a star-imported module only from a list it knows; another (one that
    calls sys.exit on import stopped nbgrader, a grader error graded again at every run) is
    a note."""
    nb = learner(extra="from torch.utils.model_dump.__main__ import *")
    assert problem(nb) is None
    assert any("model_dump" in n for n in Scan(nb, SOURCE).noted())


def test_functions_calling_one_another_every_way_are_read_at_once():
    """Ten functions that each call all ten, and one call at the top level: read once each
    (the reading took minutes per test before, and held a grading worker)."""
    import time

    defs = "\n".join(
        f"def f{i}():\n    return 0 if True else " + "+".join(f"f{j}()" for j in range(10))
        for i in range(10)
    )
    nb = learner(extra=defs + "\nf0()")
    start = time.perf_counter()
    assert problem(nb) is None
    assert time.perf_counter() - start < 5
