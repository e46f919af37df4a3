"""How each LMS names the files of its "download all submissions", read back.

``place(layout, parts)`` says who handed in a file of a download, when, and under which name
the learner uploaded it, from the file's path as the LMS wrote it; ``detect`` tells the layout
of a download from its names. The layouts (each as its LMS documents it):

``canvas``
    Canvas, *Assignments > Download Submissions*: one flat zip, a file per uploaded file, named
    ``<name>[_LATE]_<user id>_<submission id>_<original file name>``; ``<name>`` is the
    learner's sortable name lowercased without spaces or punctuation, ``_LATE`` marks a
    submission after the due date, and a file uploaded again with the same name gets ``-1``,
    ``-2`` before its extension (``attention-1.ipynb``). Anonymous grading writes
    ``anon_<id>`` for the name. The download carries no submission time.
``moodle``
    Moodle, *Assignment > View all submissions > Download all submissions*: a folder per
    participant, ``<Full Name>_<participant id>_assignsubmission_file_/`` holding the uploaded
    files (Moodle 3.x and later, "Download submissions in folders"), or the older flat form
    ``<Full Name>_<participant id>_assignsubmission_file_<file>``. The participant id is the
    assignment's identifier of the learner (the grading worksheet's ``Identifier`` column,
    ``Participant <id>``), not the user id. Online text is ``..._assignsubmission_onlinetext_``.
``blackboard``
    Blackboard Learn, *Grade Center > column > Assignment File Download*: flat files
    ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<original file name>``, and a
    receipt ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt`` per attempt; the time
    is the server's local time (``--timezone``). "All attempts" downloads hold every attempt.
``github-classroom``
    GitHub Classroom, the assistant's or ``gh classroom clone student-repos``: a folder per
    learner, ``<assignment prefix>-<GitHub user name>/``, a clone of their repository
    (``.git/`` and all). Commit times are set by the learner's machine and are not used.
``course``
    The course's own ``<student>/<assignment>/<notebook>.ipynb`` (``course.collect``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from course.config import CourseError

LAYOUTS = ("canvas", "moodle", "blackboard", "github-classroom", "course")

CANVAS = re.compile(
    r"^(?P<name>[^_]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$"
)
CANVAS_ANON = re.compile(
    r"^anon_(?P<user>[A-Za-z0-9]+)(?P<late>_LATE)?_(?P<submission>\d+)_(?P<file>.+)$"
)
MOODLE = re.compile(
    r"^(?P<name>.+)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.*)$"
)
BLACKBOARD = re.compile(
    r"^(?P<head>.+)_attempt_(?P<time>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+)|(?P<receipt>\.txt))$"
)
UPLOAD_AGAIN = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")  # Canvas's -1, -2

# What each layout's names look like, for messages.
SHAPES = {
    "canvas": "<name>[_LATE]_<user id>_<submission id>_<file>",
    "moodle": "<Full Name>_<participant id>_assignsubmission_file_/<file>",
    "blackboard": "<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>",
    "github-classroom": "<assignment>-<username>/<files of the repository>",
    "course": "<student>/<assignment>/<notebook>.ipynb",
}
# Which roster field a layout's learner identity is.
KEYS = {
    "canvas": "lms_user_id",
    "moodle": "participant",
    "blackboard": "username",
    "github-classroom": "username",
}


@dataclass
class Placed:
    """What a layout says about one file of a download."""

    who: str  # the learner's identity in the LMS (KEYS says which roster field it is)
    shown: str  # the learner's name as the download writes it, for the report
    file: str  # the file's name as the learner uploaded it (folders inside kept, '/')
    attempt: str = ""  # sorts later attempts last (Blackboard's time, Canvas's submission id)
    submitted_at: datetime | None = None  # naive, in the LMS's time zone
    late: bool = False  # the LMS says it came after the due date
    receipt: bool = False  # Blackboard's receipt of an attempt, not the learner's file
    assignment: str = ""  # the LMS's name of the assignment, when the names carry it
    note: str = ""  # what the report should say about the name (e.g. "uploaded again")


def place(layout: str, parts: tuple[str, ...], clones: str = "") -> Placed | None:
    """Who handed in the file at ``parts`` of a ``layout`` download, or None when its path is
    not of that layout's form. ``clones``: GitHub Classroom's common folder-name prefix."""
    name = parts[-1]
    if layout == "canvas":
        m = CANVAS_ANON.match(name) or CANVAS.match(name)
        if not m:
            return None
        d = m.groupdict()
        shown = d.get("name") or f"anon_{d['user']}"
        file, note = d["file"], ""
        again = UPLOAD_AGAIN.match(file)
        if again:
            note = f"Canvas numbered it as uploaded again ({file})"
        return Placed(
            d["user"],
            shown,
            file,
            attempt=d["submission"].zfill(20),
            late=bool(d["late"]),
            note=note,
        )
    if layout == "moodle":
        for i, part in enumerate(parts):
            m = MOODLE.match(part)
            if not m:
                continue
            if m["file"]:  # the flat form
                if i != len(parts) - 1:
                    return None
                file = m["file"]
            elif i < len(parts) - 1:
                file = "/".join(parts[i + 1 :])
            else:
                return None
            if m["plugin"] != "file":
                file = f"({m['plugin']}) {file}"
            return Placed(m["participant"], m["name"], file)
        return None
    if layout == "blackboard":
        m = BLACKBOARD.match(name)
        if not m:
            return None
        head = m["head"]
        assignment, _, user = head.rpartition("_")
        at = datetime.strptime(m["time"], "%Y-%m-%d-%H-%M-%S")
        return Placed(
            user,
            user,
            m["file"] or name,
            attempt=m["time"],
            submitted_at=at,
            receipt=bool(m["receipt"]),
            assignment=assignment,
        )
    if layout == "github-classroom":
        for i, part in enumerate(parts[:-1]):
            if clones and part.startswith(clones) and len(part) > len(clones):
                return Placed(part[len(clones) :], part[len(clones) :], "/".join(parts[i + 1 :]))
        return None
    raise ValueError(layout)


def clone_prefix(tops: list[str], usernames: list[str]) -> str:
    """GitHub Classroom's ``<assignment>-`` prefix of the clone folders ``tops``: their
    common prefix up to a ``-``; for a single folder, what is left of it before a roster
    user name."""
    tops = sorted(set(tops))
    if not tops:
        return ""
    if len(tops) == 1:
        for user in sorted(usernames, key=len, reverse=True):
            if user and tops[0].lower().endswith("-" + user.lower()):
                return tops[0][: len(tops[0]) - len(user)]
        return tops[0].rpartition("-")[0] + "-" if "-" in tops[0] else ""
    common = tops[0]
    for t in tops[1:]:
        while not t.startswith(common):
            common = common[:-1]
    return common[: common.rfind("-") + 1] if "-" in common else ""


def detect(files: list[tuple[str, ...]], course_score: int) -> str:
    """The layout most of the ``files`` (paths of a download, system files left out) are
    named in; ``course_score``: how many fit the course's own layout."""
    scores = {"course": course_score}
    if any(".git" in p[:-1] for p in files):
        scores["github-classroom"] = len(files)
    for layout in ("canvas", "moodle", "blackboard"):
        scores[layout] = sum(place(layout, p) is not None for p in files)
    best = max(scores, key=lambda k: (scores[k], k == "course"))
    return best if scores[best] else ""


def fits(layout: str, files: list[tuple[str, ...]]) -> bool:
    """Whether any of ``files`` is named as a ``layout`` download names its files."""
    if layout == "github-classroom":
        return any(".git" in p[:-1] for p in files) or bool(
            clone_prefix([p[0] for p in files if len(p) > 1], [])
        )
    return any(place(layout, p) is not None for p in files)


def to_utc(at: datetime, zone: str) -> datetime:
    """The naive local time ``at`` of the time zone ``zone``, as naive UTC."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise CourseError(
            f"unknown time zone {zone!r}; give an IANA name such as Europe/Berlin or UTC"
        ) from None
    offset = at.replace(tzinfo=tz).utcoffset()
    return at - offset if offset else at


def nbgrader_timestamp(at_utc: datetime) -> str:
    """``timestamp.txt``'s content for the UTC time ``at_utc``, as nbgrader writes it."""
    return at_utc.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def notebook_for(files: list[str], expected: list[str]) -> tuple[str, str] | None:
    """When a learner's only notebook among ``files`` is not named as the assignment's one
    notebook in ``expected``: (that file, the expected name); else None."""
    notebooks = [f for f in files if f.lower().endswith(".ipynb")]
    if len(expected) != 1 or len(notebooks) != 1 or notebooks[0] in expected:
        return None
    return notebooks[0], expected[0]


def guess_assignment(files: list[str], notebooks: dict[str, list[str]]) -> str | None:
    """The assignment whose notebook names the most of ``files`` (base names) are; None on
    no match or a tie."""
    bases = [f.rsplit("/", 1)[-1] for f in files]
    counts = {a: sum(b in names for b in bases) for a, names in notebooks.items()}
    best = sorted(counts.items(), key=lambda kv: -kv[1])
    if not best or best[0][1] == 0 or (len(best) > 1 and best[1][1] == best[0][1]):
        return None
    return best[0][0]
