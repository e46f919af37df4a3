"""The course's grader: what runs a learner's notebook, and nothing a learner imports.

- ``sandbox``: the OS sandbox (bubblewrap + cgroups + rlimits) around one grading kernel.
- ``kernel``: the kernel launcher named by the ``afz-grader`` kernelspec (``python -m
  autograder.kernel -f CONNECTION_FILE``): it starts ipykernel inside the sandbox.
- ``nbgrader_plugins``: nbgrader preprocessors: execution with an output cap, and feedback
  that shows no hidden test, solution line or instructor path.

None of this is visible inside the sandbox: a kernel cannot import, read or change it.
"""
