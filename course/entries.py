"""The files of a folder or a .zip of submissions, each an *entry*, read safely.

Every file becomes an ``Entry``: its path parts as the platform named them (NFC, undecodable
bytes replaced), its size, and whether it is a system file (``__MACOSX/``, ``.DS_Store``...)
or an unsafe zip member (absolute, or with ``..``), which is never extracted. A link in a
folder (to a file or to a folder) is never followed: whatever it points at, the solutions or a
system file, is not the student's submission.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import signal
import time
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.settings import Settings

IGNORED_DIRS = {"__MACOSX", ".ipynb_checkpoints"}
IGNORED_FILES = {".DS_Store", "Thumbs.db", "desktop.ini"}


@dataclass
class Entry:
    """A file in the collected folder or zip."""

    inner: str  # its path inside the source, for messages
    parts: tuple[str, ...]
    size: int
    path: Path | None = None  # in a folder
    info: zipfile.ZipInfo | None = None  # in a zip
    unsafe: bool = False
    ignored: bool = False
    link: str = ""  # in a folder: a symbolic link, to this target (never followed)


def display(text: str) -> str:
    """``text`` in NFC, with undecodable bytes of a file name replaced (U+FFFD)."""
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return unicodedata.normalize("NFC", text)


def ignored(parts: tuple[str, ...]) -> bool:
    """System files that zip tools and notebook servers add: never a submission."""
    name = parts[-1]
    return bool(IGNORED_DIRS & set(parts[:-1])) or name in IGNORED_FILES or name.startswith("._")


def folder_entries(source: Path) -> list[Entry]:
    """The regular files under the folder ``source``, and its links (files or folders), which
    are listed but never followed."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(source):  # does not descend into linked folders
        dirnames.sort()
        for fn in sorted(filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]):
            path = Path(dirpath) / fn
            parts = tuple(display(p) for p in path.relative_to(source).parts)
            inner = "/".join(parts)
            if path.is_symlink():
                entries.append(Entry(inner, parts, 0, path=path, link=display(os.readlink(path))))
                continue
            if not path.is_file():
                continue  # a FIFO, a socket, ...
            size = path.lstat().st_size
            entries.append(Entry(inner, parts, size, path=path, ignored=ignored(parts)))
    return entries


def zip_entries(zf: zipfile.ZipFile) -> list[Entry]:
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
        raw = re.split(r"[/\\]", display(name))
        unsafe = name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or ".." in raw
        parts = tuple(p for p in raw if p not in ("", "."))
        if not parts:
            continue
        entries.append(
            Entry(
                "/".join(raw),
                parts,
                info.file_size,
                info=info,
                unsafe=unsafe,
                ignored=not unsafe and ignored(parts),
            )
        )
    return entries


def top_folders(entries: list[Entry], depth: int, assignment: str | None, known: list[str]) -> int:
    """How many common top folders to drop (e.g. the zip's own name): the number that puts
    the most notebooks at the expected depth (under a known assignment); fewest on a tie."""
    rel = [e.parts for e in entries if not e.ignored and not e.unsafe and not e.link]
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


def max_notebook_bytes(settings: Settings) -> int:
    """The setting ``max_notebook_mb`` (default 50) in bytes: larger files are not extracted."""
    return int(settings.max_notebook_mb * 1024 * 1024)


def read(entry: Entry, zf: zipfile.ZipFile | None, limit: int) -> tuple[bytes | None, str]:
    """The bytes of ``entry`` (at most ``limit``), or None and why not."""
    too_big = (
        f"larger than {limit / 2**20:g} MB uncompressed: not extracted (a notebook is far "
        "smaller; the limit is the setting max_notebook_mb)"
    )
    if entry.size > limit:
        return None, too_big
    try:
        if entry.info is not None and zf is not None:
            with zf.open(entry.info) as f:
                data = f.read(limit + 1)
        elif entry.path is not None:
            # O_NOFOLLOW: a file replaced by a link since it was listed is not read through it
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                data = f.read(limit + 1)
        else:
            raise OSError("neither a file nor a zip member")
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


# A notebook Jupyter saves holds a few thousand JSON values (lines of source, lists, objects),
# a few levels deep (the course's own: 600 to 1,700, depth below 10); a file of millions of
# them (``[[],[],...]`` or ``["ab","ab",...]``) costs gigabytes in every process that reads it.
# Within these limits and max_notebook_mb, reading and validating one takes about 5 s and
# 450 MiB at most (``check_notebook_limited`` holds it to limits of its own anyway).
MAX_CONTAINERS = 200_000
MAX_VALUES = 500_000
MAX_DEPTH = 64
# Strings are removed once their escaped backslashes and quotes are gone, so that no pattern
# repeats a group: ``"(?:[^"\\]|\\.)*"`` kept a mark per character, 1.2 GB for a 10 MB string.
_STRING = re.compile(rb'"[^"]*"')
_BRACKET = re.compile(rb"[\[\]{}]")


def shape_problem(data: bytes) -> str | None:
    """Why the JSON text ``data`` has too many values, lists and objects, or nests them too
    deeply (counted on the text, before anything reads it into memory)."""
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    bare = _STRING.sub(b"", unescaped)  # brackets inside strings (printed tensors) do not count
    opened = bare.count(b"[") + bare.count(b"{")
    if opened > MAX_CONTAINERS:
        return (
            f"{opened:,} JSON lists and objects (a notebook has a few thousand; the limit is "
            f"{MAX_CONTAINERS:,}): this is not a notebook as Jupyter saves it; ask for a fresh "
            "download"
        )
    values = opened + bare.count(b",")  # each item after a list's or object's first: a comma
    if values > MAX_VALUES:
        return (
            f"{values:,} JSON values (a notebook has a few thousand; the limit is "
            f"{MAX_VALUES:,}): this is not a notebook as Jupyter saves it; ask for a fresh "
            "download"
        )
    depth = deepest = 0
    for m in _BRACKET.finditer(bare):
        depth += 1 if m.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        return (
            f"JSON nested {deepest} levels deep (a notebook has fewer than 10; the limit is "
            f"{MAX_DEPTH}): a notebook saved by Jupyter is never so; ask for a fresh download"
        )
    return None


def check_notebook(data: bytes) -> str | None:
    """Why ``data`` is not a usable notebook, or None."""
    problem = shape_problem(data)
    if problem:
        return problem
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return f"not valid JSON ({err}); the file is damaged: ask for a fresh download"
    except RecursionError:
        return (
            "JSON nested too deeply to read (brackets inside brackets, thousands deep); a "
            "notebook saved by Jupyter is never so: ask for a fresh download"
        )
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return "valid JSON but not a Jupyter notebook (no 'cells' list)"
    try:
        import nbformat

        nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))
    except MemoryError:
        raise  # not the file's form: its size (check_notebook_limited says so)
    except Exception as err:  # noqa: BLE001 - nbformat raises many types
        return f"not a valid notebook ({type(err).__name__}: {str(err)[:200]})"
    return None


def _address_space() -> int:
    """Bytes of address space this process has mapped now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


_warmed = False


def _warm() -> None:
    """nbformat imports its validator lazily: once here, not in every child."""
    global _warmed
    if not _warmed:
        check_notebook(b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
        _warmed = True


TIME, MEMORY, FAILED = "time", "memory", "failed"  # why run_limited has no result


def run_limited(work: Callable[[], Any], memory_mb: float, seconds: float) -> tuple[Any, str]:
    """``work()`` in a forked child with limits of its own: ``memory_mb`` MiB beyond what this
    process has mapped, and ``seconds``. (its result, which must be JSON, and ""), or (None,
    ``TIME``, ``MEMORY`` or ``FAILED``): the limits hold whatever the data does to the code
    that reads it, and this process takes in only the result."""
    _warm()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, answer through the pipe, exit without cleanup
        code = 0
        try:
            os.close(read_end)
            cap = _address_space() + int(memory_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            cpu = int(seconds) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
            try:
                answer = {"result": work()}
            except MemoryError:
                answer = {"memory": True}
            message = json.dumps(answer).encode("utf-8")
            while message:
                message = message[os.write(write_end, message) :]
        except BaseException:  # noqa: BLE001 - no answer: the parent says so
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, timed_out = _read_until(read_end, time.monotonic() + seconds)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out or os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        return None, TIME
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        return None, FAILED
    if not isinstance(answer, dict) or "result" not in answer:
        return None, MEMORY if isinstance(answer, dict) and answer.get("memory") else FAILED
    return answer["result"], ""


def _read_until(fd: int, deadline: float) -> tuple[list[bytes], bool]:
    """What comes through the pipe ``fd`` until it closes or ``deadline`` (then: timed out);
    closes it."""
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return chunks, True
            chunk = os.read(fd, 65536)
            if not chunk:
                return chunks, False
            chunks.append(chunk)
    finally:
        os.close(fd)


def check_notebook_limited(data: bytes, settings: Settings) -> str | None:
    """``check_notebook`` in a forked child with limits of its own: the settings
    ``collect_memory_mb`` (beyond what the reading process starts with) and
    ``collect_timeout``. A notebook that needs more is rejected by name with the reason, and
    the caller goes on; the limits hold whatever the file does to the parser."""
    memory_mb, seconds = settings.collect_memory_mb, settings.collect_timeout
    why, failure = run_limited(lambda: check_notebook(data) or "", memory_mb, seconds)
    if failure:
        return limits_problem(failure, settings)
    return str(why) or None


def limits_problem(failure: str, settings: Settings) -> str:
    """Why a notebook could not be read within collect's limits (``run_limited``'s failure)."""
    memory_mb, seconds = settings.collect_memory_mb, settings.collect_timeout
    if failure == TIME:
        return (
            f"took longer than {seconds:g} s to read (collect_timeout); a notebook saved "
            "by Jupyter takes well under a second: ask for a fresh download"
        )
    if failure == MEMORY:
        return (
            f"needs more than {memory_mb:g} MiB to read (collect_memory_mb); a "
            "notebook saved by Jupyter never does: ask for a fresh download"
        )
    return (
        f"could not be read within the limits collect gives a notebook ({memory_mb:g} MiB, "
        f"collect_memory_mb; {seconds:g} s, collect_timeout): ask for a fresh download"
    )
