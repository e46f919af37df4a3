"""What a learner sees in Jupyter when a visible check fails or their code crashes inside a
test: the teaching message first, then at most a few lines of the notebook's own cells, none
of the course's frames (``checks.explain.rendered``, shown by IPython in place of a traceback).
A real kernel runs the cells, as JupyterLab's would."""

from __future__ import annotations

import re

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from checks import encode, released

ANSI = re.compile(r"\x1b\[[0-9;]*m")

ANSWER = '''\
def scale(x):
    """x (n,) -> 2 x."""
    y = x * 2
    return y.reshape(3, 7)
'''


def error_of(cells: list[str]) -> dict:
    """The error output of the last cell of a notebook made of ``cells``, run in a kernel."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(nb, timeout=120, kernel_name="python3")
    try:
        client.execute()
    except CellExecutionError:
        pass
    outputs = nb.cells[-1].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    assert errors, outputs
    return errors[0]


def test_a_failed_check_shows_its_message_first_and_no_course_frames():
    values = released.pack("01_x/x.ipynb", "test_scale", {"twice": encode([2.0, 4.0])})
    test = (
        "import numpy as np\nfrom checks import Test\n"
        f't = Test("test_scale", expected="{values}")\n'
        "t.close(\n    'twice',\n    np.array([2.0, 5.0]),\n    hint='multiply by 2.',\n)\n"
    )
    error = error_of([test])
    lines = [ANSI.sub("", line) for line in "\n".join(error.traceback).splitlines()]
    assert lines[0].startswith("CheckFailed: twice is wrong at index (1,)"), lines
    assert lines[0].endswith("multiply by 2."), lines
    assert any(line.startswith("Cell In[1], line 4") for line in lines), lines
    assert not any("checks/" in line or "site-packages" in line for line in lines), lines
    assert len(lines) <= 6, lines


def test_a_crash_in_the_learners_code_shows_the_explanation_then_their_line():
    test = (
        "import numpy as np\nfrom checks import Test\n"
        't = Test("test_scale")\nt.call(scale, np.arange(4.0))\n'
    )
    error = error_of([ANSWER, test])
    lines = [ANSI.sub("", line) for line in "\n".join(error.traceback).splitlines()]
    assert lines[0].startswith("ValueError: scale raised ValueError: cannot reshape"), lines
    assert "The test called scale(x=float64 array (4,))." in lines, lines
    assert "    return y.reshape(3, 7)" in lines, lines  # the learner's own line
    assert any(line.startswith("Cell In[1], line 4, in scale") for line in lines), lines
    assert not any("checks/" in line or "site-packages" in line for line in lines), lines
    assert len(lines) <= 12, lines
