"""Instructor command line of the course: thin wrappers around the ordinary nbgrader commands.

    .venv/bin/python course.py release [ASSIGNMENT ...]      # solutions/ -> exercises/
    .venv/bin/python course.py check-release                  # exercises/ == fresh generation?
    .venv/bin/python course.py collect SOURCE [--assignment A] # folder or .zip -> submitted/
    .venv/bin/python course.py autograde [ASSIGNMENT ...] [--workers N]
    .venv/bin/python course.py feedback [ASSIGNMENT ...]       # HTML into feedback/
    .venv/bin/python course.py grades [--out grades.csv]       # CSV export
    .venv/bin/python course.py validate NOTEBOOK ...           # visible tests; exit 1 on failure

Autograding runs every notebook in an OS sandbox (``autograder/``: bubblewrap, cgroups,
rlimits; ``make sandbox-deps`` installs bubblewrap) and refuses to run without one unless
``--no-sandbox`` is given. Exit status: 0 when the command finished (autograde: whatever the
learners' outcomes, which ``reports/summary.csv`` lists); 1 when ``feedback`` could not write
some learner's feedback or ``validate`` failed; 2 for a problem the instructor must fix.

Every command takes ``--root DIR`` (the course root holding submitted/, autograded/,
feedback/, reports/; default: this repository) and honours ``AFZ_GRADEBOOK_URL``.

Parallel autograding: nbgrader's SQLite gradebook must not have concurrent writers, so with
an SQLite gradebook each worker process grades its share of the students against its own
copy of the gradebook, and the copies' results are merged into the main gradebook
afterwards (students are disjoint, so nothing collides). With a server database (e.g.
PostgreSQL in ``AFZ_GRADEBOOK_URL``) the workers write to it directly. Each submission is
graded by its own ``nbgrader autograde`` process, so a crash is contained to one student.
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from queue import Empty, Queue

REPO = Path(__file__).resolve().parent
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"
STUDENT_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")  # nbgrader: folder names, DB keys


class CourseError(RuntimeError):
    """A problem the instructor has to fix; printed without a traceback."""


# ---------------------------------------------------------------------------------------
# Running nbgrader
# ---------------------------------------------------------------------------------------
def nbgrader_env() -> dict[str, str]:
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from here
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def db_url(root: Path) -> str:
    return os.environ.get("AFZ_GRADEBOOK_URL", f"sqlite:///{root.resolve() / 'gradebook.db'}")


def sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


@dataclass
class Run:
    """What one nbgrader command did: exit code, output, and what its sandboxes reported."""

    rc: int
    out: str
    oom_killed: bool = False


def nbgrader(
    args: list[str],
    root: Path,
    url: str | None = None,
    log: Path | None = None,
    timeout: float | None = None,
    sandbox: bool = True,
) -> tuple[int, str]:
    """Run ``nbgrader <args>`` in the repository (so nbgrader_config.py applies) for ``root``.

    Returns (exit code, output); ``nbgrader_run`` also says what the sandboxes reported.
    """
    run = nbgrader_run(args, root, url, log, timeout, sandbox)
    return run.rc, run.out


def nbgrader_run(
    args: list[str],
    root: Path,
    url: str | None = None,
    log: Path | None = None,
    timeout: float | None = None,
    sandbox: bool = True,
) -> Run:
    """``nbgrader``, with the details of its kernels' sandboxes.

    Output goes to a file, not a pipe, so nothing a kernel leaves behind can keep this waiting;
    on timeout the whole process group (nbgrader and its kernel launcher) is killed and the exit
    code is -9. Afterwards every sandbox cgroup the run created is emptied and removed, even
    when its launcher was killed.
    """
    cmd = [
        sys.executable,
        "-m",
        "nbgrader",
        *args,
        f"--CourseDirectory.root={root.resolve()}",
        f"--CourseDirectory.db_url={url or db_url(root)}",
    ]
    with tempfile.TemporaryDirectory(prefix="afz-run-") as tmp:
        env = nbgrader_env()
        env["JUPYTER_RUNTIME_DIR"] = str(Path(tmp) / "runtime")
        env["AFZ_SANDBOX_STATE"] = state = str(Path(tmp) / "state")
        env["AFZ_SANDBOX"] = "bwrap" if sandbox else "off"
        env["AFZ_COURSE_ROOT"] = str(root.resolve())
        os.mkdir(state)
        out_path = Path(tmp) / "output.log"
        with out_path.open("wb") as out_file:
            proc = subprocess.Popen(
                cmd,
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                rc = -9
            try:  # whatever is left of the group (the kernel launcher) goes too
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        with out_path.open("rb") as f:
            data = f.read(MAX_LOG_BYTES)
        out = data.decode("utf-8", errors="replace")
        if out_path.stat().st_size > MAX_LOG_BYTES:
            out += f"\n[course.py] output cut at {MAX_LOG_BYTES} bytes\n"
        if rc == -9:
            out += f"\n[course.py] killed after {timeout:.0f} s (AFZ_STUDENT_TIMEOUT)\n"
        oom = _reap_sandboxes(Path(state))
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(" ".join(cmd) + "\n\n" + out)
    return Run(rc, out, oom)


MAX_LOG_BYTES = 2_000_000


def _reap_sandboxes(state: Path) -> bool:
    """Remove what the run's sandboxes left (their launcher may have been killed).

    Returns whether any of them was killed for memory.
    """
    from autograder.sandbox import Cgroup

    oom = False
    for record in sorted(state.glob("*.json")):
        try:
            info = json.loads(record.read_text())
        except ValueError:
            continue
        if info.get("cgroup_version") and info.get("cgroup_dirs"):
            cgroup = Cgroup.from_dirs(info["cgroup_version"], info["cgroup_dirs"])
            if not info.get("finished"):
                info["oom_killed"] = cgroup.oom_killed()
            cgroup.remove()
        oom |= bool(info.get("oom_killed"))
    return oom


def assignments(names: list[str] | None = None) -> list[str]:
    """The assignments in solutions/ (or ``names``, checked against it)."""
    known = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))
    if not names:
        return known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CourseError(f"unknown assignment(s) {unknown}; the course has {known}")
    return names


def notebook_names(assignment: str) -> list[str]:
    return sorted(p.name for p in (SOLUTIONS / assignment).glob("*.ipynb"))


# ---------------------------------------------------------------------------------------
# release / check-release
# ---------------------------------------------------------------------------------------
def release(names: list[str] | None, root: Path, release_dir: Path | None = None) -> None:
    """Generate the student versions (exercises/, or ``release_dir``) and register them."""
    extra = [f"--CourseDirectory.release_directory={release_dir}"] if release_dir else []
    for a in assignments(names):
        write_visible_checks(a)
        rc, out = nbgrader(["generate_assignment", a, "--force", *extra], root)
        if rc != 0 or "ERROR" in out:
            raise CourseError(f"nbgrader generate_assignment {a} failed:\n{out[-3000:]}")
        print(f"released {a}" + (f" into {release_dir}" if release_dir else " into exercises/"))


def write_visible_checks(assignment: str) -> None:
    """solutions/<a>/expected_visible.json: the solution's values of the visible checks, which
    the learner's notebook compares with while they work (the grader replays everything)."""
    from autograder import replay
    from helpers.checks import EXPECTED_FILE

    try:
        data = replay.visible_checks(SOLUTIONS / assignment)
    except replay.ReplayError as err:
        raise CourseError(str(err)) from None
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    path = SOLUTIONS / assignment / EXPECTED_FILE
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _code_lines(nb: dict) -> list[str]:
    return [
        line.strip()
        for cell in nb["cells"]
        for line in "".join(cell["source"]).splitlines()
        if line.strip()
    ]


def leaked_lines(source: Path, student: Path) -> list[str]:
    """Lines that the source has only inside solution or hidden-test regions yet ``student`` has.

    Trivial lines (brackets, ``else:``, ``pass`` ...) are not counted.
    """
    from autograder.nbgrader_plugins import secret_lines

    secret = secret_lines(json.loads(source.read_text()))
    return sorted(s for s in _code_lines(json.loads(student.read_text())) if s in secret)


def _stale_visible_checks(assignment: str) -> list[str]:
    from autograder import replay
    from helpers.checks import EXPECTED_FILE

    path = SOLUTIONS / assignment / EXPECTED_FILE
    try:
        fresh = json.dumps(replay.visible_checks(SOLUTIONS / assignment), indent=1,
                           ensure_ascii=False) + "\n"  # fmt: skip
    except replay.ReplayError as err:
        return [f"{assignment}: {err}"]
    if not path.exists() or path.read_text(encoding="utf-8") != fresh:
        return [f"solutions/{assignment}/{EXPECTED_FILE} is stale: run `make release`"]
    return []


def check_release(root: Path, names: list[str] | None = None) -> list[str]:
    """Problems with exercises/: differences from a fresh generation, leaked solution lines."""
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "release"
        tmp_db = f"sqlite:///{Path(tmp) / 'gradebook.db'}"
        for a in assignments(names):
            rc, out = nbgrader(
                [
                    "generate_assignment",
                    a,
                    "--force",
                    f"--CourseDirectory.release_directory={fresh}",
                ],
                root,
                url=tmp_db,
            )
            if rc != 0:
                problems.append(f"{a}: nbgrader generate_assignment failed:\n{out[-2000:]}")
                continue
            problems += _stale_visible_checks(a)
            ours, theirs = EXERCISES / a, fresh / a
            files = sorted(
                {p.relative_to(ours) for p in ours.rglob("*") if p.is_file()}
                | {p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()}
            )
            for rel in files:
                if not (ours / rel).exists():
                    problems.append(f"exercises/{a}/{rel} is missing: run `make release`")
                elif not (theirs / rel).exists():
                    problems.append(f"exercises/{a}/{rel} is not generated from solutions/")
                elif not filecmp.cmp(ours / rel, theirs / rel, shallow=False):
                    problems.append(f"exercises/{a}/{rel} is stale: run `make release`")
            for nb in notebook_names(a):
                if (ours / nb).exists():
                    for line in leaked_lines(SOLUTIONS / a / nb, ours / nb):
                        problems.append(f"exercises/{a}/{nb} contains solution line {line!r}")
        extra = {p.name for p in EXERCISES.iterdir() if p.is_dir()} - set(assignments())
        problems += [f"exercises/{e} has no source in solutions/" for e in sorted(extra)]
    return problems


# ---------------------------------------------------------------------------------------
# collect
# ---------------------------------------------------------------------------------------
@dataclass
class Rejected:
    student: str
    assignment: str
    file: str
    reason: str
    kept_as: str


@dataclass
class CollectRow:
    """One row of reports/collect.csv: a file found in the source and what became of it."""

    source_path: str
    name: str  # the student's folder name, as the platform exported it
    student_id: str
    assignment: str
    file: str
    outcome: str  # accepted, unchanged, rejected or skipped
    reason: str = ""
    kept_as: str = ""


@dataclass
class _Entry:
    """A file in the collected folder or zip."""

    inner: str  # its path inside the source, for messages
    parts: tuple[str, ...]
    size: int
    path: Path | None = None  # in a folder
    info: zipfile.ZipInfo | None = None  # in a zip
    unsafe: bool = False
    ignored: bool = False


COLLECT_COLUMNS = [
    "source_path",
    "name",
    "student_id",
    "assignment",
    "file",
    "outcome",
    "reason",
    "kept_as",
]
IGNORED_DIRS = {"__MACOSX", ".ipynb_checkpoints"}
IGNORED_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}
# Latin letters that Unicode does not decompose into an ASCII letter and an accent.
_LATIN = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "þ": "th", "ı": "i", "ħ": "h"}
)


def _display(text: str) -> str:
    """``text`` in NFC, with undecodable bytes of a file name replaced (U+FFFD)."""
    import unicodedata

    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return unicodedata.normalize("NFC", text)


def student_key(name: str) -> str:
    """Names with the same key are the same student: NFC, casefolded, outer spaces dropped."""
    import unicodedata

    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold().strip())


def student_slug(name: str) -> str:
    """The id ``name`` asks for: itself when it is a valid id (casefolded), else its ASCII
    letters and digits (accents dropped) joined by ``_``, else ``s_`` + 8 hex digits of the
    SHA-1 of its key (a name in another script, e.g. 张伟)."""
    import hashlib
    import unicodedata

    key = student_key(name)
    if STUDENT_ID.match(key) and len(key) <= 64:
        return key
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold().translate(_LATIN)
    slug = re.sub(r"[^a-z0-9]+", "_", text).strip("_")[:64].strip("_")
    return slug or "s_" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _load_students(root: Path) -> dict[str, str]:
    """students.csv as {key of the name: student id}; the first row of a key wins."""
    path = root / "students.csv"
    if not path.exists():
        return {}
    ids: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        if not {"student_id", "name"} <= set(reader.fieldnames or []):
            raise CourseError(f"{path}: expected the columns student_id,name")
        for line, row in enumerate(reader, start=2):
            sid = (row["student_id"] or "").strip()
            if not STUDENT_ID.match(sid):
                raise CourseError(
                    f"{path} line {line}: {sid!r} is not a usable student id "
                    "(lowercase ASCII letters, digits, '_', '.', '-')"
                )
            ids.setdefault(student_key(row["name"] or ""), sid)
    return ids


def _assign_ids(names: list[str], ids: dict[str, str]) -> list[tuple[str, str]]:
    """Add an id for each new name to ``ids`` (key -> id); return the new (id, name) pairs.

    A name that is a valid id gets itself if it is free; other names get their slug, or the
    slug with ``_2``, ``_3``, ... when another name already has it.
    """
    pending: dict[str, str] = {}
    for name in names:
        if student_key(name) not in ids:
            pending.setdefault(student_key(name), name)
    order = sorted(pending, key=lambda k: student_slug(pending[k]) != k)  # stable
    taken = set(ids.values())
    new = []
    for key in order:
        base = sid = student_slug(pending[key])
        n = 2
        while sid in taken:
            sid, n = f"{base}_{n}", n + 1
        taken.add(sid)
        ids[key] = sid
        new.append((sid, pending[key].strip()))
    return new


def _save_students(root: Path, new: list[tuple[str, str]]) -> None:
    """Append the new (id, name) pairs to students.csv (created with its header)."""
    if not new:
        return
    path = root / "students.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = not path.exists() or path.stat().st_size == 0
    if not fresh and not path.read_bytes().endswith(b"\n"):
        with path.open("a", encoding="utf-8") as f:
            f.write("\n")
    with path.open("a", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if fresh:
            w.writerow(["student_id", "name"])
        w.writerows(new)


def _ignored(parts: tuple[str, ...]) -> bool:
    """System files that zip tools and notebook servers add: never a submission."""
    name = parts[-1]
    return bool(IGNORED_DIRS & set(parts[:-1])) or name in IGNORED_FILES or name.startswith("._")


def _folder_entries(source: Path) -> list[_Entry]:
    entries = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames.sort()
        for fn in sorted(filenames):
            path = Path(dirpath) / fn
            if not path.is_file():
                continue  # a broken link, a FIFO, ...
            parts = tuple(_display(p) for p in path.relative_to(source).parts)
            entries.append(
                _Entry(
                    "/".join(parts), parts, path.stat().st_size, path=path, ignored=_ignored(parts)
                )
            )
    return entries


def _zip_entries(zf: zipfile.ZipFile) -> list[_Entry]:
    """The members of ``zf``, one by one (a name that occurs twice gives two entries)."""
    entries = []
    for info in zf.infolist():
        if info.is_dir():
            continue
        name = info.filename
        if not info.flag_bits & 0x800:  # not flagged UTF-8: often UTF-8 anyway (macOS, Linux)
            try:
                name = name.encode("cp437").decode("utf-8")
            except UnicodeError:
                pass
        raw = re.split(r"[/\\]", _display(name))
        unsafe = name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or ".." in raw
        parts = tuple(p for p in raw if p not in ("", "."))
        if not parts:
            continue
        entries.append(
            _Entry(
                "/".join(raw),
                parts,
                info.file_size,
                info=info,
                unsafe=unsafe,
                ignored=not unsafe and _ignored(parts),
            )
        )
    return entries


def _top_folders(
    entries: list[_Entry], depth: int, assignment: str | None, known: list[str]
) -> int:
    """How many common top folders to drop (e.g. the zip's own name): the number that puts
    the most notebooks at the expected depth (under a known assignment); fewest on a tie."""
    rel = [e.parts for e in entries if not e.ignored and not e.unsafe]
    if not rel:
        return 0
    common = 0
    while all(len(p) - 1 > common for p in rel) and len({p[common] for p in rel}) == 1:
        common += 1

    def score(k: int) -> int:
        return sum(
            len(p) - k == depth
            and p[-1].lower().endswith(".ipynb")
            and (assignment is not None or p[k + 1] in known)
            for p in rel
        )

    return max(range(common + 1), key=lambda k: (score(k), -k))


def _max_notebook_bytes() -> int:
    raw = os.environ.get("AFZ_MAX_NOTEBOOK_MB", "50")
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise CourseError(f"AFZ_MAX_NOTEBOOK_MB={raw!r} is not a positive number of megabytes")
    return int(mb * 1024 * 1024)


def _read(entry: _Entry, zf: zipfile.ZipFile | None, limit: int) -> tuple[bytes | None, str]:
    """The bytes of ``entry`` (at most ``limit``), or None and why not."""
    import zlib

    too_big = (
        f"larger than {limit / 2**20:g} MB uncompressed: not extracted (a notebook is far "
        "smaller; the limit is AFZ_MAX_NOTEBOOK_MB)"
    )
    if entry.size > limit:
        return None, too_big
    try:
        if entry.info is not None and zf is not None:
            with zf.open(entry.info) as f:
                data = f.read(limit + 1)
        else:
            with entry.path.open("rb") as f:
                data = f.read(limit + 1)
    except (
        OSError,
        EOFError,
        RuntimeError,
        NotImplementedError,
        zipfile.BadZipFile,
        zlib.error,
    ) as err:
        return None, f"could not be read ({type(err).__name__}: {err}); ask for a fresh download"
    if len(data) > limit:
        return None, too_big
    return data, ""


def _keep(
    root: Path,
    student: str,
    assignment: str,
    name: str,
    data: bytes,
    used: set[Path],
    numbered: bool,
) -> str:
    """Keep ``data`` under rejected/ without overwriting another file; its path from root."""
    folder = root / "rejected" / (student or "_unknown") / (assignment or "_unknown")
    folder.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        target = folder / (f"{n}-{name}" if numbered or n > 1 else name)
        if target not in used and (
            not target.exists() or (target.is_file() and target.read_bytes() == data)
        ):
            break
        n += 1
    target.write_bytes(data)
    used.add(target)
    return target.relative_to(root).as_posix()


def _archive_folder(root: Path, student: str, assignment: str, stamp: str) -> Path:
    """A new folder archive/<student>/<assignment>/<stamp>[-N] for an earlier submission."""
    base = root / "archive" / student / assignment
    dest, n = base / stamp, 2
    while dest.exists():
        dest, n = base / f"{stamp}-{n}", n + 1
    return dest


def _check_notebook(data: bytes) -> str | None:
    """Why ``data`` is not a usable notebook, or None."""
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return f"not valid JSON ({err}); the file is damaged: ask for a fresh download"
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "valid JSON but not a Jupyter notebook (no 'cells' list)"
    try:
        import nbformat

        nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))
    except Exception as err:  # noqa: BLE001 - nbformat raises many types
        return f"not a valid notebook ({type(err).__name__}: {str(err)[:200]})"
    return None


def collect(source: Path, root: Path, assignment: str | None = None) -> list[Rejected]:
    """Copy submissions from a folder or .zip into submitted/<student id>/<assignment>/.

    Layouts: ``<student>/<assignment>/<notebook>.ipynb`` (possibly under one top folder), or,
    with ``assignment``, ``<student>/<notebook>.ipynb``. A student folder may have any name;
    it is mapped to a safe id (``students.csv`` keeps the mapping for later collects).
    Damaged or misnamed notebooks, and two files for one student and assignment, are not
    graded: each is kept under rejected/<student>/<assignment>/ and reported. Files elsewhere
    are skipped. An earlier submission that a new one replaces is moved to archive/. Every
    file is listed in reports/collect.csv (and appended to reports/collect_history.csv).
    """
    if not source.exists():
        raise CourseError(f"{source} does not exist; give a folder or a .zip of submissions")
    if assignment is not None:
        assignments([assignment])  # an unknown --assignment is the instructor's typo
    known = assignments()
    depth = 2 if assignment else 3
    layout = (
        "<student>/<notebook>.ipynb" if assignment else "<student>/<assignment>/<notebook>.ipynb"
    )
    limit = _max_notebook_bytes()
    zf: zipfile.ZipFile | None = None
    if source.is_file():
        if not zipfile.is_zipfile(source):
            raise CourseError(f"{source} is neither a folder nor a .zip file")
        try:
            zf = zipfile.ZipFile(source)
            entries = _zip_entries(zf)
        except (zipfile.BadZipFile, OSError) as err:
            raise CourseError(f"{source}: damaged zip ({err})") from err
    else:
        entries = _folder_entries(source)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    try:
        entries.sort(key=lambda e: e.inner)  # stable: a name twice in a zip keeps its order
        top = _top_folders(entries, depth, assignment, known)
        rows: list[tuple[_Entry, CollectRow]] = []
        candidates: list[tuple[_Entry, CollectRow]] = []  # notebooks to check
        for e in entries:
            rel = e.parts if e.ignored or e.unsafe else e.parts[top:]
            row = CollectRow(f"{source}/{e.inner}", "", "", "", rel[-1], "skipped")
            if len(rel) > 1 and not (e.ignored or e.unsafe):
                row.name = rel[0]
            if len(rel) == depth and not (e.ignored or e.unsafe):
                row.assignment = assignment or rel[1]
            if e.ignored:
                row.reason = "system file, ignored"
            elif e.unsafe:
                row.outcome = "rejected"
                row.reason = "unsafe path in the zip (absolute, or with '..'): not extracted"
            elif len(rel) != depth:
                where = "in an extra folder" if len(rel) > depth else "not in a student folder"
                row.reason = f"{where}; expected {layout}"
            elif row.assignment not in known:
                row.reason = (
                    f"unknown assignment folder {row.assignment!r}; the assignments are "
                    f"{', '.join(known)}"
                )
            elif not rel[-1].lower().endswith(".ipynb"):
                row.reason = "not a notebook (.ipynb)"
            else:
                candidates.append((e, row))
            rows.append((e, row))

        ids = _load_students(root)
        new_students = _assign_ids([row.name for _, row in candidates], ids)
        _save_students(root, new_students)
        for _, row in rows:
            row.student_id = ids.get(student_key(row.name), "") if row.name else ""

        groups: dict[tuple[str, str], list[tuple[_Entry, CollectRow]]] = {}
        for e, row in candidates:
            groups.setdefault((row.student_id, row.assignment), []).append((e, row))

        used: set[Path] = set()
        archived: list[tuple[str, str]] = []
        for (sid, a), items in sorted(groups.items()):
            files = [row.file for _, row in items]
            twice = {f for f in files if files.count(f) > 1}
            if twice:
                paths = [e.inner for e, _ in items]
                count = {2: "two", 3: "three"}.get(len(paths), str(len(paths)))
                same = (
                    " (the same name more than once in the zip)"
                    if len(set(paths)) < len(paths)
                    else ""
                )
                message = (
                    f"{count} files for student {sid}, assignment {a} in this collect: "
                    f"{', '.join(paths)}{same}; keep one and collect again"
                )
                for e, row in items:
                    row.outcome, row.reason = "rejected", message
                    data, why = _read(e, zf, limit)
                    if data is None:
                        row.reason += f" (this copy is not kept: {why})"
                    else:
                        row.kept_as = _keep(root, sid, a, row.file, data, used, numbered=True)
                continue
            expected = notebook_names(a)
            good: list[tuple[CollectRow, bytes]] = []
            for e, row in items:
                data, why = _read(e, zf, limit)
                if data is None:
                    row.outcome, row.reason = "rejected", why
                    continue
                if row.file not in expected:
                    why = (
                        f"misnamed notebook: expected {' or '.join(expected)}; rename the file "
                        "and collect again"
                    )
                else:
                    why = _check_notebook(data) or ""
                if why:
                    row.outcome, row.reason = "rejected", why
                    row.kept_as = _keep(root, sid, a, row.file, data, used, numbered=False)
                else:
                    good.append((row, data))
            if not good:
                continue
            folder = root / "submitted" / sid / a
            if all(
                (folder / row.file).is_file() and (folder / row.file).read_bytes() == data
                for row, data in good
            ):
                for row, _ in good:
                    row.outcome, row.reason = "unchanged", "identical to the file in submitted/"
                    row.kept_as = (folder / row.file).relative_to(root).as_posix()
                continue
            note = ""
            if folder.is_dir() and any(folder.iterdir()):
                dest = _archive_folder(root, sid, a, stamp)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(folder), str(dest))
                old, new = folder.relative_to(root).as_posix(), dest.relative_to(root).as_posix()
                archived.append((old, new))
                note = f"replaces the earlier submission, moved to {new}/"
            folder.mkdir(parents=True, exist_ok=True)
            for row, data in good:
                (folder / row.file).write_bytes(data)
                row.outcome, row.reason = "accepted", note
                row.kept_as = (folder / row.file).relative_to(root).as_posix()
    finally:
        if zf is not None:
            zf.close()

    report = [row for _, row in rows]
    reports = root / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    with (reports / "collect.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLLECT_COLUMNS)
        w.writeheader()
        w.writerows(asdict(r) for r in report)
    history = reports / "collect_history.csv"
    fresh = not history.exists() or history.stat().st_size == 0
    with history.open("a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["collected_at", *COLLECT_COLUMNS])
        if fresh:
            w.writeheader()
        w.writerows({"collected_at": stamp, **asdict(r)} for r in report)
    rejected = [
        Rejected(r.student_id, r.assignment, r.file, r.reason, r.kept_as)
        for r in report
        if r.outcome == "rejected"
    ]
    with (reports / "collect_rejected.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "file", "reason", "kept_as"])
        w.writerows([[r.student, r.assignment, r.file, r.reason, r.kept_as] for r in rejected])

    outcomes = [r.outcome for r in report]
    silent = sum(r.reason == "system file, ignored" for r in report)
    taken = {(r.student_id, r.assignment) for r in report if r.outcome in ("accepted", "unchanged")}
    for r in report:
        if r.outcome == "rejected":
            kept = f"kept as {r.kept_as}" if r.kept_as else "not kept"
            earlier = root / "submitted" / r.student_id / r.assignment
            if r.student_id and (r.student_id, r.assignment) not in taken and earlier.is_dir():
                kept += f"; the earlier submitted/{r.student_id}/{r.assignment}/ stays"
            print(f"REJECTED {r.source_path}: {r.reason} ({kept})")
        elif r.outcome == "skipped" and r.reason != "system file, ignored":
            print(f"SKIPPED {r.source_path}: {r.reason}")
    for old, new in archived:
        print(f"ARCHIVED {old}/ -> {new}/ (replaced by this collect)")
    print(
        f"collected {outcomes.count('accepted')} file(s) into {root / 'submitted'} "
        f"({outcomes.count('unchanged')} unchanged); {outcomes.count('rejected')} rejected, "
        f"{outcomes.count('skipped') - silent} skipped, {len(archived)} archived"
        + (f", {silent} system file(s) ignored" if silent else "")
        + f"; report: {reports / 'collect.csv'}"
    )
    if not any(o in ("accepted", "unchanged", "rejected") for o in outcomes):
        raise CourseError(
            f"nothing to collect in {source}: expected {layout}"
            + (
                f" for assignment {assignment}"
                if assignment
                else f" with <assignment> one of {', '.join(known)}"
            )
            + " (one top folder around it is fine)"
            + (f"; {len(report)} file(s) skipped, see {reports / 'collect.csv'}" if report else "")
        )
    return rejected


# ---------------------------------------------------------------------------------------
# autograde
# ---------------------------------------------------------------------------------------
@dataclass
class Result:
    student: str
    assignment: str
    status: str  # "ok", or "error: <why>" (graded 0)
    score: float = 0.0
    max_score: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    outcome: str = "graded"  # graded, timed out, killed for memory, kernel died, ... (OUTCOMES)


OUTCOMES = (
    "graded",
    "timed out",
    "killed for memory",
    "kernel died",
    "kernel unresponsive",
    "sandbox failed",
    "grader error",
    "rejected",
    "no submission",
)


def _gradebook(url: str):
    os.environ.update({k: nbgrader_env()[k] for k in ("PATH", "JUPYTER_PLATFORM_DIRS")})
    from nbgrader.api import Gradebook

    return Gradebook(url)


def _register(names: list[str], students: list[str], root: Path, url: str) -> None:
    """Make sure the gradebook knows the assignments (from solutions/) and the students."""
    with _gradebook(url) as gb:
        known = {a.name for a in gb.assignments}
    missing = [a for a in names if a not in known]
    if missing:
        with tempfile.TemporaryDirectory() as tmp:
            release(missing, root, release_dir=Path(tmp))
    with _gradebook(url) as gb:
        for s in students:
            gb.update_or_create_student(s)


def _forget(db: Path, jobs: list[tuple[str, str]]) -> None:
    """Delete the stored results of (assignment, student) pairs from an SQLite gradebook."""
    con = sqlite3.connect(db)
    try:
        for a, s in jobs:
            sa = (
                "SELECT sa.id FROM submitted_assignment sa JOIN assignment a "
                "ON sa.assignment_id = a.id WHERE a.name = ? AND sa.student_id = ?"
            )
            sn = f"SELECT id FROM submitted_notebook WHERE assignment_id IN ({sa})"
            for table in ("grade", "comment"):
                con.execute(f"DELETE FROM {table} WHERE notebook_id IN ({sn})", (a, s))
            con.execute(f"DELETE FROM submitted_notebook WHERE assignment_id IN ({sa})", (a, s))
            con.execute(f"DELETE FROM submitted_assignment WHERE id IN ({sa})", (a, s))
        con.commit()
    finally:
        con.close()


def _merge(main: Path, worker: Path, jobs: list[tuple[str, str]]) -> None:
    """Copy the results of ``jobs`` from a worker's gradebook into the main one."""
    _forget(main, jobs)
    con = sqlite3.connect(main)
    try:
        con.execute("ATTACH DATABASE ? AS w", (str(worker),))
        for a, s in jobs:
            sa = (
                "SELECT sa.id FROM w.submitted_assignment sa JOIN w.assignment a "
                "ON sa.assignment_id = a.id WHERE a.name = ? AND sa.student_id = ?"
            )
            sn = f"SELECT id FROM w.submitted_notebook WHERE assignment_id IN ({sa})"
            con.execute("INSERT OR IGNORE INTO student SELECT * FROM w.student WHERE id = ?", (s,))
            con.execute(
                f"INSERT INTO submitted_assignment SELECT * FROM w.submitted_assignment "
                f"WHERE id IN ({sa})",
                (a, s),
            )
            con.execute(
                f"INSERT INTO submitted_notebook SELECT * FROM w.submitted_notebook "
                f"WHERE assignment_id IN ({sa})",
                (a, s),
            )
            for table in ("grade", "comment"):
                con.execute(
                    f"INSERT INTO {table} SELECT * FROM w.{table} WHERE notebook_id IN ({sn})",
                    (a, s),
                )
        con.commit()
        con.execute("DETACH DATABASE w")
    finally:
        con.close()


def _locked_cells(path: Path) -> dict[str, str]:
    """grade_id -> source of the locked/test cells of a notebook (empty if unreadable)."""
    try:
        nb = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    cells = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") or meta.get("locked"):
            if not meta.get("solution"):
                cells[meta.get("grade_id", "")] = "".join(cell.get("source", ""))
    return cells


def _diagnose(
    rc: int, out: str, submitted: Path, autograded: Path, oom: bool = False
) -> tuple[str, list[str]]:
    notes: list[str] = []
    assignment = submitted.name
    for nb in notebook_names(assignment):
        if not (submitted / nb).exists():
            notes.append(f"{nb} was not submitted")
            continue
        problem = _check_notebook((submitted / nb).read_bytes())
        if problem:
            notes.append(f"{nb}: {problem}")
            continue
        released, theirs = _locked_cells(EXERCISES / assignment / nb), _locked_cells(submitted / nb)
        deleted = sorted(set(released) - set(theirs))
        source = _locked_cells(SOLUTIONS / assignment / nb)  # with hidden tests
        edited = sorted(
            g for g in released if g in theirs and theirs[g] not in (released[g], source.get(g))
        )
        if deleted:
            notes.append(f"deleted test/locked cell(s) {', '.join(deleted)} restored")
        if edited:
            notes.append(f"edited test/locked cell(s) {', '.join(edited)} reset to the original")
    for nb_path in sorted(autograded.glob("*.ipynb")):
        nb = json.loads(nb_path.read_text())
        for cell in nb["cells"]:
            for o in cell.get("outputs", []):
                if o.get("output_type") != "error":
                    continue
                ename = o.get("ename", "")
                if ename == "CellTimeoutError":
                    notes.append("a cell ran past the time limit and was interrupted")
                elif ename == "MemoryError" or "not enough memory" in o.get("evalue", ""):
                    notes.append("a cell ran out of memory (kernel memory limit)")
                elif ename.endswith("ForbiddenCallError") or (
                    "cannot be imported here" in o.get("evalue", "")
                ):
                    notes.append("called a reference/built-in it must replace")
    notes = list(dict.fromkeys(notes))
    if rc == -9:
        return "error: killed after the per-student time limit (AFZ_STUDENT_TIMEOUT)", notes
    from autograder.sandbox import Limits

    limit = Limits.from_env().memory_mb
    if oom and rc != 0:
        return (
            "error: killed for memory (its processes together went over the sandbox's "
            f"{limit} MiB); graded 0"
        ), notes
    if oom:
        notes.append(f"a process was killed for memory (the sandbox's {limit} MiB)")
    if rc != 0:
        if SANDBOX_FAILURE in out:
            why = next(x for x in out.splitlines() if SANDBOX_FAILURE in x)
            return f"error: the grading sandbox failed to start ({why.strip()})", notes
        if "DeadKernelError" in out or "Kernel died" in out or "kernel died" in out:
            return "error: the kernel died (e.g. os._exit or a crash); graded 0", notes
        if "UnresponsiveKernelError" in out or "became unresponsive" in out:
            return "error: the kernel stopped responding; graded 0", notes
        return "error: nbgrader autograde failed (see the log); graded 0", notes
    return "ok", notes


def _outcome(status: str) -> str:
    for key, outcome in (
        ("time limit", "timed out"),
        ("killed for memory", "killed for memory"),
        ("sandbox failed", "sandbox failed"),
        ("kernel died", "kernel died"),
        ("stopped responding", "kernel unresponsive"),
    ):
        if key in status:
            return outcome
    return "graded" if status == "ok" else "grader error"


KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"
KERNEL_START_ATTEMPTS = 3
SANDBOX_FAILURE = "afz-grader kernel:"


def _grade_one(
    job: tuple[str, str], root: Path, url: str, timeout: float, sandbox: bool = True
) -> Result:
    a, s = job
    start = time.perf_counter()
    log = root / "reports" / "logs" / a / f"{s}.log"
    for _attempt in range(KERNEL_START_ATTEMPTS):
        run = nbgrader_run(
            ["autograde", a, "--student", s, "--force"], root, url, log, timeout, sandbox
        )
        # A kernel that dies before answering kernel_info never ran learner code: with kernels
        # started side by side, jupyter_client's free-port pick can race ("Address already in
        # use"). That is the grader's fault, not the learner's, so try again.
        if run.rc == 0 or KERNEL_START_FAILURE not in run.out or SANDBOX_FAILURE in run.out:
            break
    status, notes = _diagnose(
        run.rc, run.out, root / "submitted" / s / a, root / "autograded" / s / a, run.oom_killed
    )
    seconds = round(time.perf_counter() - start, 2)
    return Result(s, a, status, seconds=seconds, notes=notes, outcome=_outcome(status))


def replay_solutions(names: list[str]) -> None:
    """The solution's value of every check, computed (or read from the replay cache) before
    any learner's notebook runs: a solution that fails its own test stops the batch here."""
    from autograder import replay

    for a in names:
        for nb in notebook_names(a):
            try:
                replay.expected_checks(SOLUTIONS / a / nb)
            except replay.ReplayError as err:
                raise CourseError(f"cannot grade {a}: {err}") from None


def autograde(
    names: list[str] | None,
    root: Path,
    workers: int = 2,
    students: list[str] | None = None,
    sandbox: bool = True,
) -> list[Result]:
    """Autograde submitted/ (or only ``students``) with ``workers`` worker processes.

    Every notebook runs in the OS sandbox (``autograder.sandbox``); ``sandbox=False``
    (``--no-sandbox``) runs learners' code with the grader's own rights.
    """
    names = assignments(names)
    check_sandbox(sandbox)
    submitted = root / "submitted"
    all_students = (
        sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    )
    students = students or all_students
    jobs = [(a, s) for a in names for s in students if (submitted / s / a).is_dir()]
    if not jobs:
        raise CourseError(f"nothing to grade: no submitted/<student>/<assignment>/ in {root}")
    replay_solutions(sorted({a for a, _ in jobs}))
    url = db_url(root)
    _register(names, sorted({s for _, s in jobs}), root, url)
    main_db = sqlite_path(url)
    timeout = float(os.environ.get("AFZ_STUDENT_TIMEOUT", "1800"))
    workers = max(1, min(workers, len(jobs)))
    # Workers take the next submission from one queue, so a slow notebook does not leave
    # another worker idle; each remembers what it graded, for the merge.
    queue: Queue[tuple[str, str]] = Queue()
    for job in jobs:
        queue.put(job)
    done: list[list[tuple[str, str]]] = [[] for _ in range(workers)]
    start = time.perf_counter()
    (root / "reports").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root / "reports") as tmp:
        urls = []
        for w in range(workers):
            if main_db is None:  # a server database takes concurrent writers
                urls.append(url)
                continue
            copy = Path(tmp) / f"worker{w}.db"
            shutil.copy2(main_db, copy)
            _forget(copy, jobs)
            urls.append(f"sqlite:///{copy}")

        def work(w: int) -> list[Result]:
            results = []
            while True:
                try:
                    job = queue.get_nowait()
                except Empty:
                    return results
                results.append(_grade_one(job, root, urls[w], timeout, sandbox))
                done[w].append(job)

        with ThreadPoolExecutor(workers) as pool:
            results = [r for rs in pool.map(work, range(workers)) for r in rs]
        if main_db is not None:
            for w in range(workers):
                _merge(main_db, Path(urls[w][len("sqlite:///") :]), done[w])
    elapsed = time.perf_counter() - start
    with _gradebook(url) as gb:
        for r in results:
            r.max_score = gb.find_assignment(r.assignment).max_score
            if r.status == "ok":
                r.score = gb.find_submission(r.assignment, r.student).score
    results.sort(key=lambda r: (r.assignment, r.student))
    _write_report(root, results)
    for r in results:
        extra = f" ({'; '.join(r.notes)})" if r.notes else ""
        print(
            f"{r.assignment:<24} {r.student:<24} {r.score:5.1f}/{r.max_score:<5.1f} "
            f"{r.seconds:6.1f}s  {r.status}{extra}"
        )
    print(f"autograded {len(results)} submission(s) with {workers} worker(s) in {elapsed:.1f} s")
    write_summary(root)
    return results


NO_SANDBOX_WARNING = (
    "WARNING: grading WITHOUT the sandbox (--no-sandbox). Every submission runs with the "
    "grader's own rights: it can read solutions/, the hidden tests and the gradebook, change "
    "the gradebook, the checking code and other learners' submissions, reach the network and "
    "stop the batch. Use it only for notebooks you trust (your own solutions)."
)


def check_sandbox(sandbox: bool) -> None:
    """Refuse to grade without a working sandbox, unless the instructor said --no-sandbox."""
    from autograder import sandbox as sb

    if not sandbox:
        print(NO_SANDBOX_WARNING, file=sys.stderr)
        return
    problem = sb.check()
    if problem:
        raise CourseError(
            f"cannot grade in the sandbox: {problem}.\nGrading untrusted notebooks without it "
            "is unsafe; to grade anyway, pass --no-sandbox (see `course.py autograde --help`)."
        )
    if sb.cgroup_version() is None:
        print(
            "note: no writable cgroup (v1 or v2) on this machine: the memory limit applies to "
            "each process of a sandbox, not to all of them together, and there is no process "
            "count limit but RLIMIT_NPROC",
            file=sys.stderr,
        )


def _write_report(root: Path, results: list[Result]) -> None:
    path = root / "reports" / "autograde.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    old = json.loads(path.read_text()) if path.exists() else []
    keep = {(r.assignment, r.student) for r in results}
    merged = [o for o in old if (o["assignment"], o["student"]) not in keep]
    merged += [asdict(r) for r in results]
    path.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------
# validate (for learners: run the visible tests of a notebook the way the grader does)
# ---------------------------------------------------------------------------------------
def validation_passed(output: str) -> bool:
    """``nbgrader validate`` exits 0 even when tests fail: read its verdict from the output."""
    failed = ("VALIDATION FAILED", "THE CONTENTS OF", "THE TYPES OF", "[ValidateApp | ERROR]")
    return "Success! Your notebook passes all the tests." in output and not any(
        f in output for f in failed
    )


def validate(paths: list[Path], root: Path) -> bool:
    """Run the visible tests; in the sandbox where this machine has one."""
    from autograder import sandbox as sb

    in_sandbox = sb.check_quick() is None
    ok = True
    for path in paths:
        rc, out = nbgrader(["validate", str(path.resolve())], root, sandbox=in_sandbox)
        passed = rc == 0 and validation_passed(out)
        ok &= passed
        lines = [x for x in out.splitlines() if not x.startswith("[") or "ERROR" in x]
        print("\n".join(lines).strip())
        print(f"{path}: {'PASSED' if passed else 'FAILED'}")
    return ok


# ---------------------------------------------------------------------------------------
# feedback / grades
# ---------------------------------------------------------------------------------------
def feedback(names: list[str] | None, root: Path) -> list[tuple[str, str, str]]:
    """HTML feedback for every autograded submission; goes on past a broken one.

    Returns the (assignment, student, why) of every submission without feedback.
    """
    failed: list[tuple[str, str, str]] = []
    for a in assignments(names):
        students = sorted(p.parent.name for p in (root / "autograded").glob(f"*/{a}"))
        if not students:
            print(f"{a}: nothing autograded yet")
            continue
        rc, out = nbgrader(["generate_feedback", a, "--force"], root)
        if rc != 0:  # find out which submissions broke it, and write the others
            for s in students:
                rc, out = nbgrader(["generate_feedback", a, "--student", s, "--force"], root)
                if rc != 0:
                    errors = [x for x in out.splitlines() if "ERROR" in x or "Error" in x]
                    why = (errors[-1] if errors else out.strip()[-300:]).strip()
                    failed.append((a, s, why))
                    print(f"NO FEEDBACK {a}/{s}: {why}", file=sys.stderr)
        print(f"feedback for {a} in {root / 'feedback'}/<student>/{a}/")
    return failed


def _load_json(path: Path, default):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def grades(root: Path, out: Path) -> None:
    """One row per (student, assignment): score, max score, outcome and status."""
    status = {
        (r["assignment"], r["student"]): r
        for r in _load_json(root / "reports" / "autograde.json", [])
    }
    rows = []
    with _gradebook(db_url(root)) as gb:
        for a in gb.assignments:
            for s in gb.students:
                r = status.get((a.name, s.id))
                try:
                    score = gb.find_submission(a.name, s.id).score
                    state = r["status"] if r else "ok"
                    outcome = r.get("outcome", "graded") if r else "graded"
                except Exception:  # noqa: BLE001 - nbgrader's MissingEntry, or a broken row
                    score, state, outcome = 0.0, "no submission", "no submission"
                if r and r["status"] != "ok":
                    score = 0.0
                notes = "; ".join(r["notes"]) if r else ""
                rows.append([s.id, a.name, round(score, 2), a.max_score, outcome, state, notes])
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "score", "max_score", "outcome", "status", "notes"])
        w.writerows(sorted(rows))
    print(f"wrote {len(rows)} row(s) to {out}")
    write_summary(root)


def write_summary(root: Path) -> Path:
    """reports/summary.csv: every student's outcome per assignment, with why.

    From the autograde report (graded, timed out, killed for memory, kernel died, ...) and the
    collect report (files rejected at collect, with the reason).
    """
    rows: dict[tuple[str, str], list] = {}
    for r in _load_json(root / "reports" / "autograde.json", []):
        why = "; ".join([r["status"]] * (r["status"] != "ok") + r.get("notes", []))
        rows[(r["student"], r["assignment"])] = [
            r["student"],
            r["assignment"],
            r.get("outcome", "graded" if r["status"] == "ok" else "grader error"),
            r["score"],
            r["max_score"],
            why,
        ]
    rejected = root / "reports" / "collect_rejected.csv"
    if rejected.exists():
        with rejected.open(newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                key = (r["student"], r["assignment"])
                if key not in rows:
                    rows[key] = [*key, "rejected", 0, "", f"{r['file']}: {r['reason']}"]
    path = root / "reports" / "summary.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "outcome", "score", "max_score", "why"])
        w.writerows(sorted(rows.values()))
    counts: dict[str, int] = {}
    for row in rows.values():
        counts[row[2]] = counts.get(row[2], 0) + 1
    print(
        f"class summary in {path}: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda x: -x[1]))
    )
    return path


# ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--root", type=Path, default=REPO, help="course root (default: repository)")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("release", help="regenerate exercises/ from solutions/")
    r.add_argument("assignments", nargs="*")
    sub.add_parser("check-release", help="exercises/ must equal a fresh generation")
    c = sub.add_parser("collect", help="copy a folder or .zip of submissions into submitted/")
    c.add_argument("source", type=Path)
    c.add_argument("--assignment", help="the source holds <student>/<notebook>.ipynb for this")
    g = sub.add_parser("autograde", help="autograde submitted/ in parallel worker processes")
    g.add_argument("assignments", nargs="*")
    g.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    g.add_argument("--student", action="append", help="only this student (repeatable)")
    g.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade without the OS sandbox (UNSAFE: submissions then run with your rights and "
        "can read the hidden tests, change the gradebook and stop the batch); only for "
        "machines without bubblewrap, and notebooks you trust",
    )
    f = sub.add_parser("feedback", help="HTML feedback into feedback/")
    f.add_argument("assignments", nargs="*")
    v = sub.add_parser("validate", help="run a notebook's visible tests (exit 1 on failure)")
    v.add_argument("notebooks", nargs="+", type=Path)
    e = sub.add_parser("grades", help="export grades as CSV")
    e.add_argument("--out", type=Path, default=None, help="default: <root>/grades.csv")
    args = p.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.cmd == "release":
            release(args.assignments, root)
        elif args.cmd == "check-release":
            problems = check_release(root)
            for line in problems:
                print("PROBLEM:", line)
            print("exercises/ is up to date" if not problems else f"{len(problems)} problem(s)")
            return 1 if problems else 0
        elif args.cmd == "collect":
            collect(args.source, root, args.assignment)
        elif args.cmd == "autograde":
            autograde(args.assignments, root, args.workers, args.student, not args.no_sandbox)
        elif args.cmd == "feedback":
            failed = feedback(args.assignments, root)
            if failed:
                print(f"{len(failed)} submission(s) without feedback (named above)")
                return 1
        elif args.cmd == "validate":
            return 0 if validate(args.notebooks, root) else 1
        elif args.cmd == "grades":
            grades(root, args.out or root / "grades.csv")
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
