"""``Verdicts``: run right after execution. It replaces the outputs of every test cell with
the verdict that ``autograder.verdicts`` reaches, in this process, from the check records the
cell handed out and the solution's values (``autograder.replay``), and the grader's reading
of the learner's source (``autograder.scan``).
"""

from __future__ import annotations

import json

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder import outcomes, regions, stamp
from autograder.preprocessors.common import TAMPERED, notebook_of


class Verdicts(NbGraderPreprocessor):
    source_directory = Unicode("", help="nbgrader's source folder (solutions/)").tag(config=True)

    def preprocess(self, nb, resources):
        from autograder import replay, scan, verdicts

        source = notebook_of(self.source_directory, resources)
        expected = replay.expected_checks(source)  # a ReplayError stops this notebook
        reading = scan.Scan(nb, json.loads(source.read_text(encoding="utf-8")))
        quiet = reading.looks_around()
        for cell in nb.cells:
            if not regions.is_test_cell(cell):
                continue
            grade_id = regions.nbgrader_meta(cell).get("grade_id", "")
            verdict = verdicts.judge_test(
                grade_id,
                expected.get(grade_id, []),
                cell.get("outputs", []),
                tampered=resources.get(TAMPERED, {}).get(grade_id),
                refused=reading.interference(grade_id),
                static=reading.forbidden(grade_id, expected.get(grade_id, [])),
                quiet=quiet,
            )
            cell.outputs = [NotebookNode(o) for o in verdicts.verdict_outputs(verdict)]
        outcomes.execution(reading_notes=reading.noted())  # for the instructor's summary
        stamp("verdicts done")
        return nb, resources
