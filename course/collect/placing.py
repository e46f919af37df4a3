"""One file of an LMS download placed: the readings ``course.lms`` finds in its name, and the
one taken, by the part of the name the LMS wrote (never the part the learner typed) and the
roster's learner it names, with a note where the download's name and the roster's disagree.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from course.collect.download import odd_entry, wrapper
from course.collect.plan import CollectRow, Plan
from course.entries import Entry
from course.lms import (
    KEYS,
    SHAPES,
    Placed,
    canvas_name,
    clone_prefix,
    inner_name,
    moodle_name,
    readings,
)
from course.roster import Index, Learner


@dataclass
class Found:
    """A file of an LMS download, placed: its row, the reading taken, its learner."""

    entry: Entry
    row: CollectRow
    placed: Placed
    learner: Learner | None


def place_all(
    plan: Plan,
    source: Path,
    entries: list[Entry],
    layout: str,
    learners: list[Learner],
    index: Index,
) -> list[Found]:
    """Place every file of the download by the LMS's part of its name."""
    files = [e.parts for e in entries if not (e.ignored or e.unsafe or e.link)]
    strip = wrapper(files, layout)
    clones = ""
    if layout == "github-classroom":
        tops = [p[strip] for p in files if len(p) > strip + 1]
        clones = clone_prefix(tops, [x.username for x in learners])
    options: list[tuple[Entry, CollectRow, list[Placed]]] = []
    for e in entries:
        row = CollectRow(f"{source}/{e.inner}", "", "", "", e.parts[-1], "skipped")
        plan.rows.append((e, row))
        if odd_entry(e, row):
            continue
        if layout == "github-classroom" and ".git" in e.parts[:-1]:
            row.reason = "git's own files (.git/), ignored"
            continue
        found = readings(layout, e.parts[strip:], clones)
        if not found:
            row.reason = _unplaced(layout, e.parts[strip:])
            continue
        options.append((e, row, found))
    assignment_name = _common_assignment(layout, options, index)
    placed = []
    for e, row, found in options:
        p, learner, note = _choose(layout, found, index, assignment_name)
        row.name = p.shown or p.who
        if learner is not None:
            row.student_id = learner.student_id
        elif p.anonymous and layout == "canvas":
            row.student_id = anonymous_id(p.who)
        inner = inner_name(layout, p)
        notes = [n for n in (note, _inner_note(layout, p, inner)) if n]
        row.reason = "; ".join(notes)
        if p.receipt:
            row.reason = "; ".join([f"{layout}'s receipt of the attempt of {p.attempt}", *notes])
            continue
        placed.append(Found(e, row, p, learner))
    return placed


def _choose(
    layout: str, found: list[Placed], index: Index, assignment_name: str
) -> tuple[Placed, Learner | None, str]:
    """The reading to take, with a note when the download's name disagrees with the roster's:
    the leftmost whose learner the roster has and whose name there agrees with the
    download's (and, for Blackboard, whose assignment is the download's; for Canvas, where two
    learners agree, the one with the longer name, with a note); else the leftmost
    if it is Canvas's anonymous prefix; else the leftmost whose learner the roster has and
    whose name the LMS could have written; else the leftmost."""
    known = [(p, _learner(index, layout, p)) for p in found]
    known_only = [(p, x) for p, x in known if x is not None]
    if assignment_name:
        same = [(p, x) for p, x in known_only if p.assignment == assignment_name]
        known_only = same or known_only
    agreeing = [(p, x) for p, x in known_only if _agrees(layout, p, x)]
    if layout == "canvas" and len({x.student_id for _, x in agreeing}) > 1:
        # Canvas keeps a "_<digits>" at the end of a sortable name ("Smith, Bob_456" is
        # written "smithbob_456_<user id>_"): the leftmost reading would give the file to
        # user 456. The whole name is the uploader's: the longest name the roster confirms.
        p, x = max(agreeing, key=lambda px: len(px[0].shown))
        others = sorted({o.student_id for _, o in agreeing if o.student_id != x.student_id})
        return (
            p,
            x,
            f"the download's name {p.shown!r} ends in the id of another learner "
            f"({', '.join(others)}): taken as {x.student_id}, whose whole name it is",
        )
    if agreeing:
        return agreeing[0][0], agreeing[0][1], ""
    if found[0].anonymous:
        return found[0], None, ""
    possible = [(p, x) for p, x in known_only if _possible(layout, p)]
    if possible:
        p, x = possible[0]
        return (
            p,
            x,
            f"the download names the learner {p.shown!r}, the roster {x.name!r}: taken as "
            f"{x.student_id} by the {layout} {KEYS[layout].replace('_', ' ')} {p.who}",
        )
    return found[0], None, ""


def _possible(layout: str, p: Placed) -> bool:
    """Whether the LMS could have written the name of reading ``p``: Canvas lowercases names
    and joins ``_<digits>_`` in them."""
    if layout != "canvas":
        return True
    return p.shown == p.shown.lower() and not re.search(r"(^|_)[0-9]+_", p.shown)


def _agrees(layout: str, p: Placed, x: Learner) -> bool:
    """Whether the name the download writes for ``p`` is the roster's for ``x`` (as that LMS
    writes names into file names); True where the LMS writes no name."""
    if layout == "canvas" and not p.anonymous:
        names = {canvas_name(x.sortable), canvas_name(f"{x.last_name}, {x.first_name}")}
        names |= {canvas_name(x.name)}
        return p.shown in names or not (x.sortable or x.name)
    if layout == "moodle" and not p.anonymous:
        return not x.name or p.shown == moodle_name(x.name)
    return True


def _learner(index: Index, layout: str, p: Placed) -> Learner | None:
    """The roster's learner of a reading."""
    if p.anonymous and layout == "canvas":
        return None
    return index.find(KEYS[layout], p.who)


def _common_assignment(
    layout: str, options: list[tuple[Entry, CollectRow, list[Placed]]], index: Index
) -> str:
    """Blackboard's name of the assignment, as most files' first roster-known reading has it
    (a learner's part never decides it); "" for the other layouts."""
    if layout != "blackboard":
        return ""
    names: Counter[str] = Counter()
    for _, _, found in options:
        for p in found:
            if _learner(index, layout, p) is not None:
                names[p.assignment] += 1
                break
    return names.most_common(1)[0][0] if names else ""


def anonymous_id(who: str) -> str:
    """The course id of a learner Canvas names only by an anonymous id (``anon_X8kQ2``):
    case kept apart (``anon_-x8k-q2``), since two anonymous ids may differ in case only."""
    anon = who.removeprefix("anon_")
    return "anon_" + "".join("-" + c.lower() if c.isupper() else c for c in anon)


def _unplaced(layout: str, parts: tuple[str, ...]) -> str:
    """Why a file is not placed: the layout expected, and the nearest form it has."""
    why = f"not named as a {layout} download names its files ({SHAPES[layout]})"
    others = [x for x in ("canvas", "moodle", "blackboard") if x != layout and readings(x, parts)]
    if others:
        return why + f"; it is named as a {others[0]} download names its files"
    if layout == "moodle" and "_assignsubmission_" in parts[0]:
        return why + f"; nearest: {parts[0]!r} has Moodle's _assignsubmission_ but not its form"
    return why


def _inner_note(layout: str, p: Placed, inner: str) -> str:
    """The report's note on a learner's part that holds an LMS name of its own."""
    if not inner:
        return ""
    return (
        f"the name the learner chose holds another {layout} name ({inner!r}): taken as "
        f"{p.shown or p.who}'s by the LMS's part {p.prefix!r}, never by the learner's"
    )
