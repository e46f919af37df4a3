"""``python -m course ...``: the instructor's command line (``course.cli``)."""

import sys

from course.cli import main

sys.exit(main())
