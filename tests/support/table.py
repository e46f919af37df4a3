"""The assignments whose table of typical mistakes the tests read and grade (each test's id
names its assignment: ``pytest -k 01_attention`` runs one); shared by
tests/unit/test_grading_cases_table.py and tests/grading/test_grading_cases.py."""

from support import REPO

ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
