"""Whether a learner's score is the score of the notebook in submitted/ (``course.freshness``).

Quick: the state autograde leaves is written as autograde writes it (nbgrader's API and
``course.grading.submission.write_report``); no notebook is run.
"""

from __future__ import annotations

import os
from pathlib import Path

from support.lms_oracle import graded

from course.config import Course
from course.freshness import GRADED, NOT_GRADED, STALE, states
from course.grading.submission import Result, write_report
from course.grading.task import digest, pack

REPO = Path(__file__).resolve().parents[2]
A1 = "01_attention"
NB = (REPO / "solutions" / A1 / "attention.ipynb").read_bytes()


def course_with(tmp: Path, students: list[str]) -> Course:
    root = tmp / "course"
    root.mkdir()
    (root / "solutions").symlink_to(REPO / "solutions")
    for s in students:
        folder = root / "submitted" / s / A1
        folder.mkdir(parents=True)
        (folder / "attention.ipynb").write_bytes(NB)
    return Course(root)


def test_each_submission_is_graded_stale_or_waiting(tmp_path):
    course = course_with(tmp_path, ["ann", "bob", "cy", "dee", "eve"])
    graded(course.root, {"ann": 3.0, "bob": 4.0})
    (course.submitted / "bob" / A1 / "timestamp.txt").write_text("2026-03-01 12:00:00 UTC")
    # cy's grading failed before nbgrader recorded a submission: autograde recorded it
    folder = course.submitted / "cy" / A1
    write_report(course, [Result("cy", A1, "error: kernel died", sha256=digest(pack(folder)))])
    # dee was graded by nbgrader itself (no record): by the times of the two folders
    graded_by_hand = course.autograded / "dee" / A1
    graded_by_hand.mkdir(parents=True)
    (graded_by_hand / "attention.ipynb").write_bytes(NB)
    got = states(course, A1, scored={"ann", "bob", "dee"})
    assert got == {"ann": GRADED, "bob": STALE, "cy": GRADED, "dee": GRADED, "eve": NOT_GRADED}
    later = course.submitted / "dee" / A1 / "attention.ipynb"
    stamp = (graded_by_hand / "attention.ipynb").stat().st_mtime + 5
    os.utime(later, (stamp, stamp))
    assert states(course, A1, scored={"dee"})["dee"] == STALE


def test_the_score_table_says_not_graded_yet_for_a_collected_notebook(tmp_path):
    """A learner whose notebook is in submitted/ but was never graded is "not graded yet" in
    grades.csv and the LMS exports, never "no submission" (nor a 0 under --missing zero)."""
    from course import gradebook
    from course.lms_grades import scores
    from course.reports import score_table

    course = course_with(tmp_path, ["ann", "eve"])
    graded(course.root, {"ann": 3.0})
    with gradebook.open_gradebook(course.gradebook_url) as gb:
        gb.update_or_create_student("eve")  # on the roster, collected, not graded
        gb.update_or_create_student("zed")  # on the roster, nothing collected
        gb.db.commit()
    rows = {r[0]: r for r in score_table(course)}
    assert rows["ann"][4] == "graded" and rows["ann"][2] == 3.0
    assert rows["eve"][4] == "not graded yet" and rows["eve"][5] == NOT_GRADED
    assert rows["zed"][4] == "no submission"
    got, _ = scores(course, A1)
    assert got == {"ann": 3.0, "eve": None, "zed": None}
