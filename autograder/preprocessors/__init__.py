"""The course's nbgrader preprocessors, one per module as nbgrader keeps its own; each is named
in ``nbgrader_config.py``, which puts it in its place among nbgrader's steps. Its modules, one
line each:

- ``common``: what the preprocessors share: the notebook nbgrader works on, free cell ids.
- ``restore_cells``: ``RestoreCells``, the submission rebuilt on the released notebook's cells.
- ``limited_execute``: ``LimitedExecute``, nbgrader's execution with a cap on what is printed.
- ``verdicts``: ``Verdicts``, each test cell's outputs replaced by its verdict.
- ``safe_feedback``: ``SafeFeedback``, feedback that shows no secret and runs nothing.

Importing the package imports none of them (nor nbgrader).
"""
