"""The instructor's tool of the course, run as ``python -m course`` (see ``course.cli``).

Importing the package imports nothing heavy: ``nbgrader_config.py`` reads ``course.config``.
Its modules, one line each:

- ``__main__``: ``python -m course``.
- ``cli``: the command line: one subcommand per step of the workflow.
- ``config``: the course id, the folder names, the gradebook URL; ``Course``, one course root.
- ``release``: ``release`` and ``verify-release``: ``exercises/`` from ``solutions/``.
- ``leaks``: the solution lines that must not appear in a released notebook.
- ``wheel``: the learners' wheel (``helpers`` and ``checks``, one file to install).
- ``collect``: a folder or .zip of submissions into ``submitted/`` (a package).
- ``entries``: the files of a download, each an *entry*, read with limits.
- ``students``: student ids from the names a platform exports; ``students.csv``.
- ``lms``: how each LMS names the files of its download of all submissions.
- ``lms_strings``: the words an LMS writes in the downloader's language.
- ``roster``: an LMS's class list; ``roster.csv``; nbgrader's student import.
- ``validate``: a notebook's visible tests, run as the grader runs them.
- ``grading``: a class graded by the one engine, down to one nbgrader command (a package).
- ``gradebook``: nbgrader's gradebook, through its API: merge, export.
- ``diagnose``: what happened to one graded submission, in words.
- ``freshness``: whether a score is the score of the notebook in ``submitted/``.
- ``reports``: feedback, ``grades.csv``, the class summary.
- ``lms_grades``: grades in the import files of Canvas, Moodle and Blackboard.
- ``similarity``: learners' own code compared, for a person to look at.
"""
