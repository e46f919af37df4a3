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
        "    return getattr(torch, 'soft' + 'max')(torch.as_tensor(x), axis).numpy()",
        "    return _plain_softmax(x, axis)",  # a name only a hidden test cell sets
        "    return big_raw",
        "    return cube",  # a test's input the learner also set at top level (see `extra`)
        "    import functools\n    return functools.partial(getattr, torch)('softmax')(x, axis)",
    ],
)
def test_private_names_computed_names_and_test_variables(body):
    # The learner sets `cube` too: a function that reads it while a test runs gets the test's.
    assert problem(learner(by=body, extra="cube = 1")) is not None, body


@pytest.mark.parametrize(
    "cell",
    [
        "import checks.watch as hc\nhc.call_watched = lambda fn, a, k, f, h: fn(*a, **k)",
        "import torch\ntorch.softmax = lambda *a, **k: None",
        "import sys\nframe = sys._getframe(0)",
        "import gc\nobjs = gc.get_objects()",
        "import inspect",
        "exec('x = 1')",
        "values = globals()",
        "source = In[3]",
        "get_ipython().user_ns",
        "%run evil.py",
        "%time import gc",
        "import evil",
        "import torch\nm = torch.load('w.pt', weights_only=False)",
        "x = (1).__class__.__subclasses__()",
        "import threading",
        "import builtins",
        "import torch.ops",
        "import operator\nf = operator.attrgetter('softmax')",
        "import checks\nchecks.Test.close = lambda *a, **k: None",
    ],
)
def test_tampering_anywhere_fails_every_test(cell):
    message = problem(learner(extra=cell))
    assert message and "every test scores 0" in message, cell
    assert problem(learner(extra=cell), "test_causal_mask", []) == message


def test_a_star_import_that_binds_a_forbidden_name_is_named():
    """``from torch.nn.functional import *`` after the learner's softmax binds F.softmax to
    the name the tests call: the message names the import, and how to avoid it."""
    nb = learner()
    nb["cells"].append(
        {"cell_type": "code", "metadata": {}, "source": "from torch.nn.functional import *\n"}
    )
    message = problem(nb)
    assert message and "`from torch.nn.functional import *`" in message, message
    assert "Import only the names you need" in message
    # a star import of a module without such a name changes nothing
    nb["cells"][-1]["source"] = "from math import *\nfrom checks import *\n"
    assert problem(nb) is None
