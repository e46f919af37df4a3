"""The course's grader: what runs a learner's notebook, and nothing a learner imports.

None of this is visible inside the sandbox: a kernel cannot import, read or change it. Its
modules, one line each:

- ``settings``: every limit and policy of one grading run, declared once, carried to each run.
- ``fingerprint``: one hash of the grader's code, for the replay cache and the report.
- ``outcomes``: the records a run's kernels and execution leave in its run folder (``AFZ_RUN``).
- ``sandbox``: the OS sandbox (bubblewrap, cgroups, rlimits) around one grading kernel.
- ``seccomp``: the system calls the sandbox denies.
- ``kernel``: the launcher the ``afz-grader`` kernelspec runs: ipykernel inside the sandbox.
- ``pieces``: the kernel's copy of ``helpers``, without the exercise's own (and later) pieces.
- ``regions``: a notebook's marked parts: test cells, solution and hidden-test regions, secrets.
- ``kernel_form``: a test cell as the kernel runs it (its *kernel form*): calls, no answers.
- ``contracts``: per exercise, the contract sweep: hidden checks of each piece's whole contract.
- ``restore``: cells put back as released when a learner moved, copied or changed them.
- ``cells``: a notebook's code cells run without Jupyter (for ``replay`` and ``dry``).
- ``replay``: the solution's value of every check, computed in the grader's process and cached.
- ``scan``: the grader's reading of the learner's source: forbidden built-ins, tampering.
- ``verdicts``: a test cell's verdict, from its records and the solution's values.
- ``preprocessors``: the nbgrader preprocessors, one a module: restore, execute, verdicts, feedback.
- ``dry``: a *dry* grader (no Jupyter, no nbgrader) with the same verdicts, for the tests.

``stamp`` (below) notes when a stage of one grading is reached, for
``benchmarks/grading_cost.py``. ``nbgrader_config.py``, beside the packages, wires these
preprocessors into nbgrader and hands the settings to their traitlets.
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
