"""Helpers that several test modules share (not tests: pytest collects nothing here).

``tests/conftest.py`` puts ``tests/`` on ``sys.path``, so a test imports these as ``support``,
``support.submissions`` and so on, and the table of typical mistakes as ``grading_cases``.
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
