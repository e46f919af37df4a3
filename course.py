"""Instructor command line of the course: thin wrappers around the ordinary nbgrader commands.

    .venv/bin/python course.py release [ASSIGNMENT ...]      # solutions/ -> exercises/
    .venv/bin/python course.py check-release                  # exercises/ == fresh generation?
    .venv/bin/python course.py collect SOURCE [--assignment A] # folder or .zip -> submitted/
    .venv/bin/python course.py autograde [ASSIGNMENT ...] [--workers N]
    .venv/bin/python course.py feedback [ASSIGNMENT ...]       # HTML into feedback/
    .venv/bin/python course.py grades [--out grades.csv]       # CSV export
    .venv/bin/python course.py validate NOTEBOOK ...           # visible tests; exit 1 on failure

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

REPO = Path(__file__).resolve().parent
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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


def nbgrader(
    args: list[str],
    root: Path,
    url: str | None = None,
    log: Path | None = None,
    timeout: float | None = None,
) -> tuple[int, str]:
    """Run ``nbgrader <args>`` in the repository (so nbgrader_config.py applies) for ``root``.

    Returns (exit code, output). On timeout the whole process group (nbgrader and its kernel)
    is killed and the exit code is -9.
    """
    cmd = [
        sys.executable,
        "-m",
        "nbgrader",
        *args,
        f"--CourseDirectory.root={root.resolve()}",
        f"--CourseDirectory.db_url={url or db_url(root)}",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=nbgrader_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out += f"\n[course.py] killed after {timeout:.0f} s (AFZ_STUDENT_TIMEOUT)\n"
        rc = -9
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(" ".join(cmd) + "\n\n" + out)
    return rc, out


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
        rc, out = nbgrader(["generate_assignment", a, "--force", *extra], root)
        if rc != 0 or "ERROR" in out:
            raise CourseError(f"nbgrader generate_assignment {a} failed:\n{out[-3000:]}")
        print(f"released {a}" + (f" into {release_dir}" if release_dir else " into exercises/"))


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
    src = json.loads(source.read_text())
    hidden: set[str] = set()
    visible: set[str] = set()
    for cell in src["cells"]:
        region = None
        for line in "".join(cell["source"]).splitlines():
            s = line.strip()
            if s in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS"):
                region = s
            elif s in ("### END SOLUTION", "### END HIDDEN TESTS"):
                region = None
            elif s:
                (hidden if region else visible).add(s)
    secret = {s for s in hidden - visible if len(re.sub(r"[\W_]", "", s)) > 4}
    secret -= {"else:", "pass", "try:", "return out"}
    return sorted(s for s in _code_lines(json.loads(student.read_text())) if s in secret)


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
    """Copy submissions from a folder or .zip into submitted/<student>/<assignment>/.

    Layouts: ``<student>/<assignment>/<notebook>.ipynb`` (possibly under one top folder), or,
    with ``assignment``, ``<student>/<notebook>.ipynb``. Damaged or misnamed notebooks are
    not graded: each is kept under rejected/<student>/<assignment>/ and reported.
    """
    if not source.exists():
        raise CourseError(f"{source} does not exist; give a folder or a .zip of submissions")
    with tempfile.TemporaryDirectory() as tmp:
        if source.is_file():
            if not zipfile.is_zipfile(source):
                raise CourseError(f"{source} is neither a folder nor a .zip file")
            with zipfile.ZipFile(source) as zf:
                for member in zf.namelist():
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise CourseError(f"{source}: unsafe path {member!r} in the zip")
                zf.extractall(tmp)
            base = Path(tmp)
        else:
            base = source
        files = [
            p
            for p in base.rglob("*")
            if p.is_file() and "__MACOSX" not in p.parts and ".ipynb_checkpoints" not in p.parts
        ]
        # Drop a single common top folder (e.g. the zip's own name).
        parts = [p.relative_to(base).parts for p in files]
        depth = 2 if assignment else 3
        while parts and all(len(x) > depth for x in parts) and len({x[0] for x in parts}) == 1:
            parts = [x[1:] for x in parts]
        rejected: list[Rejected] = []
        count = 0
        for path, rel in zip(files, parts, strict=True):
            if len(rel) != depth:
                raise CourseError(
                    f"{path}: expected <student>/{'' if assignment else '<assignment>/'}"
                    "<notebook>.ipynb"
                )
            student = rel[0]
            a = assignment or rel[1]
            name = rel[-1]
            if not STUDENT_ID.match(student):
                raise CourseError(f"{path}: {student!r} is not a usable student id")
            if a not in assignments():
                raise CourseError(f"{path}: unknown assignment {a!r}; known: {assignments()}")
            expected = notebook_names(a)
            reason = None
            if name.endswith(".ipynb"):
                if name not in expected:
                    reason = (
                        f"misnamed notebook: expected {' or '.join(expected)}; rename the file "
                        "and collect again"
                    )
                else:
                    reason = _check_notebook(path.read_bytes())
            if reason:
                kept = root / "rejected" / student / a / name
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, kept)
                rejected.append(Rejected(student, a, name, reason, str(kept.relative_to(root))))
                continue
            dest = root / "submitted" / student / a / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
            count += 1
    report = root / "reports" / "collect_rejected.csv"
    report.parent.mkdir(parents=True, exist_ok=True)
    with report.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "file", "reason", "kept_as"])
        w.writerows([[r.student, r.assignment, r.file, r.reason, r.kept_as] for r in rejected])
    print(f"collected {count} file(s) into {root / 'submitted'}")
    for r in rejected:
        print(f"REJECTED {r.student}/{r.assignment}/{r.file}: {r.reason} (kept as {r.kept_as})")
    return rejected


# ---------------------------------------------------------------------------------------
# autograde
# ---------------------------------------------------------------------------------------
@dataclass
class Result:
    student: str
    assignment: str
    status: str
    score: float = 0.0
    max_score: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


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


def _diagnose(rc: int, out: str, submitted: Path, autograded: Path) -> tuple[str, list[str]]:
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
                elif ename.endswith("ForbiddenCallError"):
                    notes.append("called a reference/built-in it must replace")
    notes = list(dict.fromkeys(notes))
    if rc == -9:
        return "error: killed after the per-student time limit", notes
    if rc != 0:
        if "DeadKernelError" in out or "Kernel died" in out or "kernel died" in out:
            return "error: the kernel died (e.g. os._exit or a crash); graded 0", notes
        if "UnresponsiveKernelError" in out or "became unresponsive" in out:
            return "error: the kernel stopped responding; graded 0", notes
        return "error: nbgrader autograde failed (see the log); graded 0", notes
    return "ok", notes


KERNEL_START_FAILURE = "Kernel died before replying to kernel_info"
KERNEL_START_ATTEMPTS = 3


def _grade_one(job: tuple[str, str], root: Path, url: str, timeout: float) -> Result:
    a, s = job
    start = time.perf_counter()
    log = root / "reports" / "logs" / a / f"{s}.log"
    for _attempt in range(KERNEL_START_ATTEMPTS):
        rc, out = nbgrader(["autograde", a, "--student", s, "--force"], root, url, log, timeout)
        # A kernel that dies before answering kernel_info never ran learner code: with kernels
        # started side by side, jupyter_client's free-port pick can race ("Address already in
        # use"). That is the grader's fault, not the learner's, so try again.
        if rc == 0 or KERNEL_START_FAILURE not in out:
            break
    status, notes = _diagnose(rc, out, root / "submitted" / s / a, root / "autograded" / s / a)
    return Result(s, a, status, seconds=round(time.perf_counter() - start, 2), notes=notes)


def autograde(
    names: list[str] | None,
    root: Path,
    workers: int = 2,
    students: list[str] | None = None,
) -> list[Result]:
    """Autograde submitted/ (or only ``students``) with ``workers`` worker processes."""
    names = assignments(names)
    submitted = root / "submitted"
    all_students = (
        sorted(p.name for p in submitted.iterdir() if p.is_dir()) if submitted.is_dir() else []
    )
    students = students or all_students
    jobs = [(a, s) for a in names for s in students if (submitted / s / a).is_dir()]
    if not jobs:
        raise CourseError(f"nothing to grade: no submitted/<student>/<assignment>/ in {root}")
    url = db_url(root)
    _register(names, sorted({s for _, s in jobs}), root, url)
    main_db = sqlite_path(url)
    timeout = float(os.environ.get("AFZ_STUDENT_TIMEOUT", "1800"))
    workers = max(1, min(workers, len(jobs)))
    # Round-robin by student, so one student's assignments stay on one worker.
    order = sorted({s for _, s in jobs})
    share = [[j for j in jobs if order.index(j[1]) % workers == w] for w in range(workers)]
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
            _forget(copy, share[w])
            urls.append(f"sqlite:///{copy}")

        def run_share(w: int) -> list[Result]:
            return [_grade_one(job, root, urls[w], timeout) for job in share[w]]

        with ThreadPoolExecutor(workers) as pool:
            results = [r for rs in pool.map(run_share, range(workers)) for r in rs]
        if main_db is not None:
            for w in range(workers):
                _merge(main_db, Path(urls[w][len("sqlite:///") :]), share[w])
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
    return results


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
    ok = True
    for path in paths:
        rc, out = nbgrader(["validate", str(path.resolve())], root)
        passed = rc == 0 and validation_passed(out)
        ok &= passed
        lines = [x for x in out.splitlines() if not x.startswith("[") or "ERROR" in x]
        print("\n".join(lines).strip())
        print(f"{path}: {'PASSED' if passed else 'FAILED'}")
    return ok


# ---------------------------------------------------------------------------------------
# feedback / grades
# ---------------------------------------------------------------------------------------
def feedback(names: list[str] | None, root: Path) -> None:
    for a in assignments(names):
        if not any((root / "autograded").glob(f"*/{a}")):
            print(f"{a}: nothing autograded yet")
            continue
        rc, out = nbgrader(["generate_feedback", a, "--force"], root)
        if rc != 0:
            raise CourseError(f"nbgrader generate_feedback {a} failed:\n{out[-3000:]}")
        print(f"feedback for {a} in {root / 'feedback'}/<student>/{a}/")


def grades(root: Path, out: Path) -> None:
    """One row per (student, assignment): score, max score and the autograde status."""
    report = root / "reports" / "autograde.json"
    status = {}
    if report.exists():
        status = {(r["assignment"], r["student"]): r for r in json.loads(report.read_text())}
    rows = []
    with _gradebook(db_url(root)) as gb:
        for a in gb.assignments:
            for s in gb.students:
                r = status.get((a.name, s.id))
                try:
                    score = gb.find_submission(a.name, s.id).score
                    state = r["status"] if r else "ok"
                except Exception:  # noqa: BLE001 - nbgrader's MissingEntry
                    score, state = 0.0, "no submission"
                if r and r["status"] != "ok":
                    score = 0.0
                notes = "; ".join(r["notes"]) if r else ""
                rows.append([s.id, a.name, round(score, 2), a.max_score, state, notes])
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "assignment", "score", "max_score", "status", "notes"])
        w.writerows(sorted(rows))
    print(f"wrote {len(rows)} row(s) to {out}")


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
            autograde(args.assignments, root, args.workers, args.student)
        elif args.cmd == "feedback":
            feedback(args.assignments, root)
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
