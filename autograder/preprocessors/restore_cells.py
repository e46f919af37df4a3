"""``RestoreCells``: before nbgrader's own checks, the submission rebuilt on the released
notebook's cells (``autograder.restore``), so that a moved, copied or changed cell costs at
most its test, never the whole notebook.
"""

from __future__ import annotations

import json

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder.preprocessors.common import notebook_of


class RestoreCells(NbGraderPreprocessor):
    """Before nbgrader's own checks: the submission rebuilt on the released notebook's cells
    (``autograder/restore.py``), so that a moved, copied or changed cell costs at most its
    test, never the whole notebook."""

    release_directory = Unicode("", help="nbgrader's release folder (exercises/)").tag(config=True)

    def preprocess(self, nb, resources):
        import nbformat

        from autograder.restore import restore

        path = notebook_of(self.release_directory, resources)
        release = json.loads(path.read_text(encoding="utf-8"))
        restored, notes = restore(json.loads(json.dumps(nb)), release)
        if notes:
            self.log.warning("cells put back as released: %s", "; ".join(notes))
        # read back as nbformat reads a file (sources as one string, not a list of lines)
        return nbformat.reads(json.dumps(restored), as_version=4), resources
