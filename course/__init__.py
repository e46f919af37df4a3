"""The instructor's tool of the course, run as ``python -m course`` (see ``course.cli``).

One module per idea: ``config`` (course id, folder names, the gradebook URL, ``Course``: the
folders of one course root), ``runner`` (one nbgrader command), ``release`` (release and
check-release), ``leaks`` (the solution-leak scanner), ``students``, ``entries`` and
``collect`` (submissions into submitted/), ``gradebook`` (everything that talks to nbgrader's
gradebook), ``diagnose`` and ``autograde``, ``validate``, ``reports`` (feedback, grades, the
class summary) and ``cli``.

Importing the package imports nothing heavy: ``nbgrader_config.py`` reads ``course.config``.
"""
