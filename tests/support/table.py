"""The assignments whose table of typical mistakes the tests read and grade
(``AFZ_TEST_ASSIGNMENTS=01_attention,...`` limits them); shared by
tests/unit/test_grading_cases_table.py and tests/grading/test_grading_cases.py."""

import os

from support import REPO

ASSIGNMENTS = sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir())
if os.environ.get("AFZ_TEST_ASSIGNMENTS"):
    ASSIGNMENTS = [a for a in ASSIGNMENTS if a in os.environ["AFZ_TEST_ASSIGNMENTS"].split(",")]
