"""The words an LMS writes into its files in the language of the user who downloads them.

Moodle writes the grading worksheet's headers, its participant identifiers, the blind-marking
folder names of its download and its dates in the language of the person who downloads them.
The strings here are Moodle's own: English from Moodle's source (``mod/assign/lang/en``,
``lang/en``), German and Simplified Chinese from Moodle's language packs as AMOS builds them
(Moodle 4.5; ``de/`` and ``zh_cn/`` of the packs kept in projectestac/moodle-langpacks:
``assign.php``, ``moodle.php``, ``langconfig.php``). ``moodle_time`` reads a worksheet date
back: ``userdate`` writes it with ``strftimedaydatetime``, the day and the 12-hour hour without
a leading zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class MoodleLanguage:
    """Moodle's strings of one language that the worksheet and the download use."""

    code: str
    recordid: str  # assign 'recordid': the worksheet's first column
    hiddenuser: str  # assign 'hiddenuser': before the participant id in that column
    participant: str  # assign 'participant': the download's folder name under blind marking
    fullname: str  # moodle 'fullname'
    email: str  # moodle 'email'
    idnumber: str  # moodle 'idnumber'
    username: str  # moodle 'username'
    status: str  # assign 'status'
    grade: str  # moodle 'gradenoun' (Moodle 4); 'grade' before it
    submitted: str  # assign 'lastmodifiedsubmission'
    daydatetime: str  # langconfig 'strftimedaydatetime'
    months: tuple[str, ...]  # %B, January first
    weekdays: tuple[str, ...]  # %A, Monday first


MOODLE = (
    MoodleLanguage(
        "en",
        recordid="Identifier",
        hiddenuser="Participant ",
        participant="Participant",
        fullname="Full name",
        email="Email address",
        idnumber="ID number",
        username="Username",
        status="Status",
        grade="Grade",
        submitted="Last modified (submission)",
        daydatetime="%A, %d %B %Y, %I:%M %p",
        months=(
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ),
        weekdays=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    ),
    MoodleLanguage(
        "de",
        recordid="ID",
        hiddenuser="Teilnehmer/in",
        participant="Teilnehmer/in",
        fullname="Vollständiger Name",
        email="E-Mail-Adresse",
        idnumber="ID-Nummer",
        username="Anmeldename",
        status="Status",
        grade="Bewertung",
        submitted="Zuletzt geändert (Abgabe)",
        daydatetime="%A, %d. %B %Y, %H:%M",
        months=(
            "Januar",
            "Februar",
            "März",
            "April",
            "Mai",
            "Juni",
            "Juli",
            "August",
            "September",
            "Oktober",
            "November",
            "Dezember",
        ),
        weekdays=("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    ),
    MoodleLanguage(
        "zh_cn",
        recordid="标识符",
        hiddenuser="参与人",
        participant="参与人",
        fullname="全名",
        email="电子邮件地址",
        idnumber="学号",
        username="用户名",
        status="状态",
        grade="成绩",
        submitted="上次修改（作业）",
        daydatetime="%Y年%m月%d日 %A %H:%M",
        months=tuple(f"{n}月" for n in range(1, 13)),
        weekdays=("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"),
    ),
)


def moodle_language(header: list[str]) -> MoodleLanguage | None:
    """The language of a Moodle grading worksheet whose first row is ``header``: its first
    column is Moodle's 'recordid' and its name column (unless blind marking hides it) is
    'fullname', both in that language; None for any other file."""
    if not header:
        return None
    first = header[0].strip()
    names = {h.strip() for h in header[1:]}
    for lang in MOODLE:
        if first == lang.recordid and (lang.fullname in names or lang.status in names):
            return lang
    return None


def participant_id(cell: str, lang: MoodleLanguage) -> str | None:
    """The participant id of a worksheet's identifier cell (``Participant 123456``), or None
    when the cell is not one."""
    m = re.fullmatch(re.escape(lang.hiddenuser.strip()) + r"\s*(\d+)", cell.strip())
    return m[1] if m else None


def blind_names() -> set[str]:
    """The names the download gives every participant under blind marking, in each language:
    Moodle's 'participant' with the characters ``clean_filename`` drops taken out."""
    return {clean_filename(lang.participant) for lang in MOODLE}


# What Moodle's clean_filename (PARAM_FILE) takes out of a name.
_PARAM_FILE = re.compile(r"[\x00-\x1f\x7f&<>\"`|':\\/]")


def clean_filename(text: str) -> str:
    """``text`` as Moodle's ``clean_filename`` writes it into a file name."""
    return _PARAM_FILE.sub("", text)


def moodle_time(text: str) -> datetime | None:
    """A worksheet date (``userdate``: ``Sunday, 1 March 2026, 6:30 PM``, ``Sonntag, 1. März
    2026, 18:30``, ``2026年03月1日 星期日 18:30``) as a naive local time; None when it is not
    a date of any of these languages."""
    for lang in MOODLE:
        m = _date_pattern(lang).fullmatch(text.strip())
        if m:
            return _from_match(m, lang)
    return None


def _date_pattern(lang: MoodleLanguage) -> re.Pattern[str]:
    parts = {
        "%A": "(?:" + "|".join(map(re.escape, lang.weekdays)) + ")",
        "%B": "(?P<month_name>" + "|".join(map(re.escape, lang.months)) + ")",
        "%d": r"(?P<day>\d{1,2})",
        "%m": r"(?P<month>\d{1,2})",
        "%Y": r"(?P<year>\d{4})",
        "%H": r"(?P<hour>\d{1,2})",
        "%I": r"(?P<hour12>\d{1,2})",
        "%M": r"(?P<minute>\d{2})",
        "%p": r"(?P<ampm>[AaPp][Mm])",
    }
    pattern = ""
    for piece in re.split(r"(%[A-Za-z])", lang.daydatetime):
        pattern += parts[piece] if piece in parts else re.escape(piece)
    return re.compile(pattern)


def _from_match(m: re.Match[str], lang: MoodleLanguage) -> datetime | None:
    got = m.groupdict()
    month = int(got["month"]) if got.get("month") else lang.months.index(got["month_name"]) + 1
    if got.get("hour12"):
        hour = int(got["hour12"]) % 12 + (12 if got["ampm"].lower() == "pm" else 0)
    else:
        hour = int(got["hour"])
    try:
        return datetime(int(got["year"]), month, int(got["day"]), hour, int(got["minute"]))
    except ValueError:
        return None
