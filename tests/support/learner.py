"""What a learner has: the released notebook, answered by the solution or with one typical
mistake, and the documented install of the learners' environment.

``answered`` fills the answer cells of ``exercises/<a>/<nb>.ipynb`` with the solution's code
(``solutions/``), as a learner who got everything right would, and can then make one mistake
of the table (``tests/grading_cases/``) in it. ``documented_commands`` reads the install steps
from the instructor guide itself, so the test that runs them tests what the guide says.
"""

from __future__ import annotations

import copy
import json
import re

import grading_cases as CASES

from support.submissions import exercise, source


def answered(assignment: str, mistake: str | None = None) -> dict:
    """The released notebook of ``assignment`` with the solution's answers, and the table's
    ``mistake`` (a name of ``MISTAKES``) made in them."""
    nb = copy.deepcopy(json.loads(exercise(assignment).read_text(encoding="utf-8")))
    solution = json.loads(source(assignment).read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["nbgrader"]["grade_id"]: c["source"]
        for c in solution["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution")
    }
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    if mistake is None:
        return nb
    case = next((m for m in CASES.MISTAKES[assignment] if m[0] == mistake), None)
    if case is None:
        raise KeyError(f"{assignment}: no mistake {mistake!r} in tests/grading_cases/")
    return CASES.apply_edits(nb, CASES.edits(case))


def documented_commands(guide: str, heading: str) -> list[str]:
    """The shell commands of the first ```bash block after the Markdown ``heading`` of the
    text ``guide`` (comments and blank lines left out)."""
    start = guide.index(heading)
    block = re.search(r"```bash\n(.*?)```", guide[start:], re.S)
    if block is None:
        raise ValueError(f"no bash block after {heading!r}")
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]
