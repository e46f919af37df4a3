"""Grading a class: the submissions in ``submitted/`` graded by nbgrader in the sandbox, each
result stored in the gradebook and ``reports/autograde.json`` as it arrives.

``python -m course autograde`` calls ``batch.autograde``; there is one engine, whatever runs the
work (threads of this process or a Dask cluster). Its modules, one line each, from the class
down to one nbgrader process:

- ``batch``: a class graded as one batch: what to grade, what was graded already, the results.
- ``engine``: the one grading engine: tasks to threads or to a Dask cluster, results stored.
- ``task``: one submission as a task, carried to a worker (a thread or a Dask worker).
- ``submission``: one submission's ``nbgrader autograde`` and its result; ``autograde.json``.
- ``nbgrader_command``: one nbgrader command (any, also release's and feedback's) in a run folder.
- ``forkserver``: a warm nbgrader, forked per command instead of started afresh.

Importing the package imports none of them: ``course.release`` and the other commands use
``nbgrader_command`` without the engine.
"""
