"""How each LMS names the files of its "download all submissions", read back.

A name in a download has two parts: the part the LMS writes (who handed it in, and for some
LMSs when) and the part the learner typed (the name of the file they uploaded). Only the LMS's
part says who and when. ``readings(layout, parts)`` gives every way the LMS's part of a path
can be read, leftmost first (the learner's part always comes after it);
``course.collect.placing`` picks the reading whose learner the roster has (``roster.Index``),
and reports a learner's part that holds a name of the LMS's form of its own (``inner_name``).
``detect`` tells the layout of a download from its names.

Each layout, as the LMS's own code writes it:

``canvas``
    Canvas, *Assignments > Download Submissions* (``lib/content_zipper.rb``): one flat zip, a
    file per attached file, ``<name>[_LATE]_<user id>_<attachment id>_<file name>``:
    ``<name>`` is the learner's sortable name lowercased, ``_<digits>_`` taken out, every
    character that is not a letter, mark, digit or ``_`` dropped; the attachment id differs
    for every file of one submission (a download holds the latest submission only). Text and
    URL submissions are ``<name>_<user id>_text.html`` and ``..._link.html``. Under
    anonymous grading the name and user id are replaced by ``anon_<anonymous id>`` (five
    base58 characters), after ``LATE_`` when late: ``LATE_anon_<id>_<attachment id>_<file>``.
    Canvas's own upload of such a zip reads the first two all-digit ``_`` pieces as the user
    and the attachment. The download carries no submission time.
``moodle``
    Moodle, *Assignment > Download all submissions* (``mod/assign/classes/downloader.php``;
    Moodle 3.x: ``download_submissions`` in ``mod/assign/locallib.php``): with "Download
    submissions in folders" (the default) a folder per participant and plugin,
    ``<Full Name>_<participant id>_assignsubmission_file/`` (Moodle 4.1 and later;
    ``..._file_/`` before), holding the uploaded files and folders; without it, flat files
    ``<Full Name>_<participant id>_assignsubmission_file_<file>``. ``_`` in the full name is
    written as a space, so the LMS's part is the one before the first ``_<digits>_``; the
    full name is written as the site shows names (also last name first), and under blind
    marking it is the word for "Participant" in the downloader's language. The participant
    id is the worksheet's ``Participant <id>``, not the user id.
``blackboard``
    Blackboard Learn, *Grade Center > column > Assignment File Download*: flat files
    ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>``, and a receipt
    ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt`` per attempt, the time the
    server's local time (``--timezone``). "All attempts" downloads hold every attempt.
``github-classroom``
    GitHub Classroom (``gh classroom clone student-repos``): a folder per learner,
    ``<assignment prefix>-<GitHub user name>/``, a clone of their repository (``.git/`` and
    all). Commit times are set by the learner's machine and are not used.
``course``
    The course's own ``<student>/<assignment>/<notebook>.ipynb``
    (``course.collect.course_layout``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from course.config import CourseError
from course.lms_strings import blind_names, clean_filename

LAYOUTS = ("canvas", "moodle", "blackboard", "github-classroom", "course")

# What each layout's names look like, for messages.
SHAPES = {
    "canvas": "<name>[_LATE]_<user id>_<attachment id>_<file> (anonymous: "
    "[LATE_]anon_<id>_<attachment id>_<file>)",
    "moodle": "<Full Name>_<participant id>_assignsubmission_file/<file> (Moodle 3.x: "
    "..._file_/<file>; flat: ..._file_<file>)",
    "blackboard": "<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>",
    "github-classroom": "<assignment>-<username>/<files of the repository>",
    "course": "<student>/<assignment>/<notebook>.ipynb",
}
# The class list each LMS exports, which names its learners as its download does.
ROSTERS = {
    "canvas": "the gradebook export (Grades > Export)",
    "moodle": "the grading worksheet (Download grading worksheet)",
    "blackboard": "the Grade Center download (Work Offline > Download)",
    "github-classroom": "the classroom roster (Download roster)",
}
# Which roster field a layout's learner identity is.
KEYS = {
    "canvas": "lms_user_id",
    "moodle": "participant",
    "blackboard": "username",
    "github-classroom": "username",
}

DIGITS = re.compile(r"[0-9]+")
ANONYMOUS_ID = re.compile(r"[1-9A-HJ-NP-Za-km-z]+")  # base58
MOODLE_FOLDER = re.compile(
    r"(?P<name>[^_]*)_(?P<id>[0-9]+)_assignsubmission_(?P<plugin>[a-z0-9]+)(?P<old>_?)"
)
MOODLE_FLAT = re.compile(
    r"(?P<name>[^_]*)_(?P<id>[0-9]+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)"
)
BLACKBOARD_ATTEMPT = re.compile(
    r"_attempt_(?P<time>[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2})(?=_.|\.txt$)"
)
UPLOAD_AGAIN = re.compile(r"^(?P<stem>.+?)-(?P<n>[0-9]+)(?P<ext>\.[^.]+)$")  # Canvas's -1, -2


@dataclass
class Placed:
    """One reading of the LMS's part of a download's path."""

    who: str  # the learner's identity in the LMS (KEYS says which roster field it is)
    shown: str  # the learner's name as the download writes it ("" when it writes none)
    file: str  # the learner's part: the file's name as uploaded (folders inside kept, '/')
    prefix: str = ""  # the LMS's part, as written
    attempt: str = ""  # sorts later attempts last (Blackboard's time)
    submitted_at: datetime | None = None  # naive, in the LMS's time zone
    late: bool = False  # the LMS says it came after the due date
    receipt: bool = False  # Blackboard's receipt of an attempt, not the learner's file
    assignment: str = ""  # the LMS's name of the assignment, when the names carry it
    kind: str = "file"  # what the LMS made the file from: "file", or text, a link, ...
    anonymous: bool = False  # Canvas's anonymous grading: ``who`` is the anonymous id
    note: str = ""  # what the report should say about the name (e.g. "uploaded again")


def readings(layout: str, parts: tuple[str, ...], clones: str = "") -> list[Placed]:
    """Every reading of the LMS's part of the path ``parts`` in a ``layout`` download, the
    leftmost first; empty when the path is not of that layout's form. ``clones``: GitHub
    Classroom's common folder-name prefix."""
    if layout == "canvas":
        return _canvas(parts[-1]) if len(parts) == 1 else []
    if layout == "moodle":
        return _moodle(parts)
    if layout == "blackboard":
        return _blackboard(parts[-1]) if len(parts) == 1 else []
    if layout == "github-classroom":
        return _github(parts, clones)
    raise ValueError(layout)


def _canvas(name: str) -> list[Placed]:
    """Readings of a Canvas download's file name (``ContentZipper#get_filename`` and
    ``#add_upload_submission``)."""
    tokens = name.split("_")
    out = _canvas_anonymous(tokens)
    for i in range(1, len(tokens) - 1):
        if not DIGITS.fullmatch(tokens[i]):
            continue
        head = tokens[:i]
        late = len(head) > 1 and head[-1] == "LATE"
        shown = "_".join(head[:-1] if late else head)
        rest = _canvas_rest(tokens[i + 1 :])
        if rest is None:
            continue
        file, kind = rest
        prefix = "_".join(tokens[: i + 2 if kind == "file" else i + 1])
        out.append(
            Placed(tokens[i], shown, file, prefix=prefix, late=late, kind=kind, note=_again(file))
        )
    return out


def _canvas_anonymous(tokens: list[str]) -> list[Placed]:
    """The reading of ``[LATE_]anon_<id>_...``, if the name is of that form."""
    late = tokens[:2] == ["LATE", "anon"]
    k = 1 if late else 0
    if tokens[k : k + 1] != ["anon"] or len(tokens) < k + 3:
        return []
    anonymous = tokens[k + 1]
    rest = _canvas_rest(tokens[k + 2 :])
    if not ANONYMOUS_ID.fullmatch(anonymous) or rest is None:
        return []
    file, kind = rest
    prefix = "_".join(tokens[: k + 3 if kind == "file" else k + 2])
    return [
        Placed(
            f"anon_{anonymous}",
            f"anon_{anonymous}",
            file,
            prefix=prefix,
            late=late,
            kind=kind,
            anonymous=True,
            note=_again(file),
        )
    ]


def _canvas_rest(tokens: list[str]) -> tuple[str, str] | None:
    """After the user id: ``<attachment id>_<file>`` (an uploaded file) or ``text.html`` /
    ``link.html`` (a text or URL submission); (the file, its kind), or None."""
    if len(tokens) >= 2 and DIGITS.fullmatch(tokens[0]):
        file = "_".join(tokens[1:])
        return (file, "file") if file else None
    if tokens in (["text.html"], ["link.html"]):
        return tokens[0], tokens[0].partition(".")[0]
    return None


def _again(file: str) -> str:
    return f"Canvas numbered it as uploaded again ({file})" if UPLOAD_AGAIN.match(file) else ""


def canvas_name(text: str) -> str:
    """A name as Canvas writes it into a download's file names (``sanitize_user_name``, then
    ``sanitize_file_name``): ``_<digits>_`` joined, lowercased, only letters, marks, digits and
    ``_`` kept."""
    text = re.sub(r"_([0-9]+)_", r"\1", text).lower()
    return "".join(c for c in text if _word(c))


def _word(c: str) -> bool:
    """Ruby's ``[[:word:]]``: a letter, a mark, a decimal digit or a connector (``_``)."""
    cat = unicodedata.category(c)
    return cat[0] in "LM" or cat in ("Nd", "Pc")


def _moodle(parts: tuple[str, ...]) -> list[Placed]:
    """The reading of a Moodle download's path: its first part is the LMS's."""
    if len(parts) > 1:
        m = MOODLE_FOLDER.fullmatch(parts[0])
        file = "/".join(parts[1:])
    else:
        m = MOODLE_FLAT.fullmatch(parts[0])
        file = m["file"] if m else ""
    if not m:
        return []
    prefix = parts[0] if len(parts) > 1 else parts[0][: len(parts[0]) - len(file)]
    shown = m["name"]
    return [
        Placed(
            m["id"],
            shown,
            file,
            prefix=prefix,
            kind=m["plugin"],
            anonymous=shown in blind_names(),
        )
    ]


def moodle_name(full_name: str) -> str:
    """A full name as Moodle writes it into a download's names (``_`` as a space, then
    ``clean_filename``)."""
    return clean_filename(full_name.replace("_", " "))


def _blackboard(name: str) -> list[Placed]:
    """Readings of a Blackboard download's file name: each ``_attempt_<time>`` from the left,
    and before it each split of ``<assignment>_<username>``, the longest user name first."""
    out = []
    for m in BLACKBOARD_ATTEMPT.finditer(name):
        head, rest = name[: m.start()], name[m.end() :]
        receipt = rest == ".txt"
        at = datetime.strptime(m["time"], "%Y-%m-%d-%H-%M-%S")
        for j, c in enumerate(head):
            if c != "_" or j == len(head) - 1:
                continue
            assignment, user = head[:j], head[j + 1 :]
            out.append(
                Placed(
                    user,
                    user,
                    name if receipt else rest[1:],
                    prefix=name[: m.end()],
                    attempt=m["time"],
                    submitted_at=at,
                    receipt=receipt,
                    assignment=assignment,
                )
            )
    return out


def _github(parts: tuple[str, ...], clones: str) -> list[Placed]:
    """The reading of a path in a folder of GitHub Classroom clones: its first folder."""
    top = parts[0]
    if len(parts) < 2 or not clones or not top.startswith(clones) or len(top) == len(clones):
        return []
    user = top[len(clones) :]
    return [Placed(user, user, "/".join(parts[1:]), prefix=top)]


def inner_name(layout: str, p: Placed) -> str:
    """The part of the learner's file name that is itself named as the LMS names its files
    (someone else's prefix in a name the learner chose), or ""."""
    if p.receipt:
        return ""
    if layout == "github-classroom":
        clones = p.prefix[: len(p.prefix) - len(p.who)]
        inner = _github(tuple(p.file.split("/")), clones)
        return inner[0].prefix if inner else ""
    pieces = [p.file] if layout != "moodle" else [p.file, *p.file.split("/")]
    for piece in pieces:
        if layout == "moodle":
            found = _moodle((piece,)) or _moodle((piece, "x"))
        else:
            found = readings(layout, (piece,))
        if found:
            return found[0].prefix or piece
    return ""


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
        scores[layout] = sum(bool(readings(layout, p)) for p in files)
    best = max(scores, key=lambda k: (scores[k], k == "course"))
    return best if scores[best] else ""


def fits(layout: str, files: list[tuple[str, ...]]) -> bool:
    """Whether any of ``files`` is named as a ``layout`` download names its files."""
    if layout == "github-classroom":
        return any(".git" in p[:-1] for p in files) or bool(
            clone_prefix([p[0] for p in files if len(p) > 1], [])
        )
    return any(readings(layout, p) for p in files)


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
