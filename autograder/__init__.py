"""The course's grader: what runs a learner's notebook, and nothing a learner imports.

- ``sandbox``: the OS sandbox (bubblewrap + cgroups + rlimits) around one grading kernel.
- ``kernel``: the kernel launcher named by the ``afz-grader`` kernelspec (``python -m
  autograder.kernel -f CONNECTION_FILE``): it starts ipykernel inside the sandbox.
- ``nbgrader_plugins``: nbgrader preprocessors: execution with an output cap, and feedback
  that shows no hidden test, solution line or instructor path.
- ``stamp``: timestamps of the stages of one grading, for ``benchmarks/grading_cost.py``.

None of this is visible inside the sandbox: a kernel cannot import, read or change it.
"""

import json as _json
import os as _os
import time as _time


def stamp(stage: str, **info: object) -> None:
    """Note that ``stage`` was reached now, for ``benchmarks/grading_cost.py``.

    Only when ``AFZ_TIMING`` names a file: one JSON line (wall clock, pid, stage) is appended
    to it. Every process of one grading (the instructor tool, nbgrader, the kernel launcher)
    writes to the same file; the sandboxed kernel itself cannot reach it.
    """
    path = _os.environ.get("AFZ_TIMING")
    if not path:
        return
    line = _json.dumps({"t": _time.time(), "pid": _os.getpid(), "stage": stage, **info})
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
