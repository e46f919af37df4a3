"""nbgrader configuration of the course (nbgrader 0.9.6; run nbgrader from the repository root).

Folders: solutions/ is nbgrader's "source" (solutions and hidden tests), exercises/ its
"release" (what learners get; regenerate with `make release`). Submissions, autograded
notebooks and feedback live in submitted/, autograded/ and feedback/ (git-ignored). The
course id, the folder names and the default gradebook come from `course.config`, which the
instructor's tool (`python -m course`) uses too.

The course root and the limits come from the run folder that `python -m course` made for this
command (AFZ_RUN: its course.json names the root, its settings.json holds the grading settings,
autograder/settings.py); nbgrader started by hand grades this repository under the settings of
its grading.toml (and AFZ_GRADEBOOK_URL), or the defaults.
"""

import atexit
import json
import os
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_runtime_dir
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from traitlets import default

from autograder import settings, stamp
from autograder.preprocessors.limited_execute import LimitedExecute
from autograder.preprocessors.restore_cells import RestoreCells
from autograder.preprocessors.safe_feedback import SafeFeedback
from autograder.preprocessors.verdicts import Verdicts
from course import config

stamp("config")  # AFZ_TIMING (benchmarks/grading_cost.py): nbgrader started and imported
atexit.unregister(stamp)  # nbgrader reads this file twice: one exit stamp
atexit.register(stamp, "exit")

ROOT = Path(__file__).resolve().parent


class GradingKernelSpecs(KernelSpecManager):
    """The kernelspecs Jupyter finds, and before them the course's grading kernel."""

    @default("kernel_dirs")
    def _with_the_grading_kernel(self) -> list[str]:
        return [str(ROOT / "tools" / "kernels"), *super()._kernel_dirs_default()]


class GradingKernelManager(AsyncKernelManager):
    """nbgrader's kernel manager, which finds the grading kernel (``afz-grader``)."""

    @default("kernel_spec_manager")
    def _grading_kernel_specs(self) -> KernelSpecManager:
        return GradingKernelSpecs(data_dir=self.data_dir)


run = settings.run_folder()
if run is not None and (run / settings.COURSE_FILE).is_file():  # a command of `python -m course`
    root = Path(json.loads((run / settings.COURSE_FILE).read_text())["root"])
    course = config.Course(root, settings.of_run(run) or config.load_settings(root))
    (run / settings.NBGRADER_PID).write_text(str(os.getpid()))  # the kernel launcher's parent
else:
    course = config.Course(ROOT)
c = get_config()  # noqa: F821  (injected by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = config.COURSE_ID
c.CourseDirectory.root = str(course.root)
c.CourseDirectory.source_directory = config.SOURCE
c.CourseDirectory.release_directory = config.RELEASE
c.CourseDirectory.submitted_directory = config.SUBMITTED
c.CourseDirectory.autograded_directory = config.AUTOGRADED
c.CourseDirectory.feedback_directory = config.FEEDBACK
c.CourseDirectory.db_url = course.gradebook_url

# Student versions: code between the markers becomes the stub below; hidden tests vanish.
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.enforce_metadata = True
c.ClearHiddenTests.begin_test_delimeter = "BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "END HIDDEN TESTS"
c.ClearOutput.remove_metadata_fields = ["collapsed", "scrolled", "execution"]

# Autograding: first the submission is rebuilt on the released cells (moved, copied, changed
# or lost test cells and metadata: autograder/restore.py), then nbgrader's own steps put back
# deleted test cells and reset edited ones to the source version.
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    RestoreCells,
    ClearOutput,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]
c.RestoreCells.release_directory = str(course.root / config.RELEASE)

# Every cell gets a time limit (the setting cell_timeout, below); a cell over it is interrupted
# and graded as an error.
c.Execute.interrupt_on_timeout = True
# After the interrupt the kernel has this long to finish the cell (a cell inside one long C call,
# such as a large allocation on a busy machine, stops only when that call returns). A kernel still
# busy then ignores interrupts: nbgrader stops, and the submission is graded 0 with that status.
c.Execute.iopub_timeout = 10
c.Execute.startup_timeout = 120
# The grading kernel: ipykernel inside the OS sandbox (autograder/kernel.py). It has no
# network, so the client talks to it over Unix sockets (the ipc transport).
c.Execute.kernel_name = "afz-grader"
c.KernelManager.transport = "ipc"
os.makedirs(jupyter_runtime_dir(), mode=0o700, exist_ok=True)
c.KernelManager.ip = os.path.join(jupyter_runtime_dir(), f"afz-{os.getpid()}")  # <ip>-<port>
# Execution with an output cap (the setting output_mb, below); then the verdicts, reached here
# from the test cells' check records and the solution's values; then nbgrader's own steps.
c.Autograde.autograde_preprocessors = [
    LimitedExecute,
    Verdicts,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
# Feedback: visible test code and teaching messages only (no hidden tests, solution lines,
# tracebacks or instructor paths); the setting feedback_shows_hidden (below) shows hidden tests.
c.Verdicts.source_directory = str(course.solutions)
c.LimitedExecute.source_directory = str(course.solutions)
c.GenerateFeedback.preprocessors = [SafeFeedback, GetGrades, CSSHTMLHeaderPreprocessor]
c.SafeFeedback.source_directory = str(course.solutions)
c.SafeFeedback.course_paths = os.pathsep.join(dict.fromkeys([str(ROOT), str(course.root)]))
# The grading kernel's spec (tools/kernels/afz-grader) is found by nbgrader's own kernel
# manager, never through JUPYTER_PATH: a Jupyter server that loads this file (nbgrader's
# extensions do) must not offer the sandbox's kernel in its launcher.
c.Execute.kernel_manager_class = GradingKernelManager
# The grading settings that nbgrader's traitlets carry, each where its declaration says
# (autograder/settings.py: cell_timeout to Execute.timeout, output_mb to
# LimitedExecute.max_output_bytes, feedback_shows_hidden to SafeFeedback.show_hidden_tests).
for trait, value in course.settings.traitlets().items():
    section, _, name = trait.partition(".")
    setattr(c[section], name, value)
