"""Adversarial regression suite for the grading sandbox: every submission runs in one.

One class of assignment 01 goes through the real workflow, as separate processes the way an
instructor runs them (``python -m course collect``, ``autograde --workers 2``, ``feedback``,
``grades``): an honest learner (the solution), a learner who did no work (the untouched
exercise) and one attacker per kind of attack. Every attacker starts from the untouched
exercise, so its work deserves 0; each attack cell catches its own errors and prints what it
got, so the rest of the notebook still runs.

After the run: the attackers got 0, the honest learner 22, the no-work learner 0; the course's
files, the other learners' submissions and gradebook rows are unchanged; no feedback file holds
a hidden test or solution line or an instructor path; no process or cgroup of a sandbox is
left; nothing was written outside; every command exited as documented. (The sandbox's parts,
each on its own: tests/grading/test_sandbox_parts.py.)
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import re
import socket
import sqlite3
import threading
import time
from pathlib import Path

import psutil
import pytest
from support import REPO
from support.sandbox_runs import run_course, sandbox_leftovers
from support.submissions import read

from autograder import sandbox
from autograder.regions import REDACT_LENGTH, secret_lines
from course.diagnose import OUTCOMES
from course.reports import CSP_META

A1 = "01_attention"
NB = "attention.ipynb"

pytestmark = pytest.mark.skipif(
    sandbox.check_quick() is not None, reason=f"no sandbox here: {sandbox.check_quick()}"
)


def with_cell(nb: dict, code: str) -> dict:
    """``nb`` with a code cell after the imports cell (runs before every test)."""
    idx = next(
        i
        for i, c in enumerate(nb["cells"])
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "imports"
    )
    cell = {
        "cell_type": "code",
        "id": "attack",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": code,
    }
    nb["cells"].insert(idx + 1, cell)
    return nb


def outputs(root: Path, student: str) -> str:
    """Everything the autograded notebook's cells printed (not their source)."""
    nb = read(root / "autograded" / student / A1 / NB)
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            parts += [out.get("text", ""), out.get("evalue", ""), *out.get("traceback", [])]
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join("".join(p) if isinstance(p, list) else str(p) for p in parts)


def hidden(text: str) -> str:
    """A Python expression for ``text`` in which ``text`` itself does not appear."""
    return f"{text[::-1]!r}[::-1]"


def tree_hash(*paths: Path) -> dict[str, str]:
    out = {}
    for top in paths:
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for p in files:
            if "__pycache__" in p.parts:
                continue
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# Each attack runs in a cell of its own; ROOT and REPO are the instructor's real paths (an
# attacker can guess them), MARK a file that must never appear, PORT a listener on the host.
ATTACKS = {
    "gradebook": """
import glob, sqlite3
for db in [ROOT + "/gradebook.db", *glob.glob(ROOT + "/reports/*/worker*.db"),
           "../../../gradebook.db", "/gradebook.db"]:
    try:
        con = sqlite3.connect(db)
        con.execute("UPDATE grade SET manual_score = 0")
        con.execute("CREATE TRIGGER t AFTER INSERT ON grade BEGIN "
                    "UPDATE grade SET manual_score = 99; END")
        con.commit()
        print("WROTE", db)
    except Exception as err:
        print("no gradebook at", db, type(err).__name__)
""",
    "checker": """
import importlib.util
path = importlib.util.find_spec("helpers").submodule_search_locations[0] + "/checks.py"
try:
    with open(path, "a") as f:
        f.write("\\ndef assert_close(*a, **k):\\n    pass\\n")
    print("PATCHED", path)
except Exception as err:
    print("checker not writable:", type(err).__name__)
""",
    "secrets": """
import os
for path in [REPO + "/solutions/01_attention/attention.ipynb", ROOT + "/gradebook.db",
             REPO + "/course/cli.py", REPO + "/autograder/sandbox.py", "/etc/shadow",
             ROOT + "/submitted/honest/01_attention/attention.ipynb"]:
    try:
        print("READ", path, open(path, errors="replace").read()[:20000])
    except Exception as err:
        print("cannot read", path, type(err).__name__)
print("ENV", dict(os.environ))
try:
    import autograder
    print("IMPORTED the grader", autograder.__file__)
except ImportError as err:
    print("no grader:", err)
""",
    "sockets": """
# The kernel's socket folder is the one folder of the grader's disk it is given: fill it, and
# make a tree there deeper than the grader's removal can follow.
import os
made = 0
try:
    for i in range(100000):
        with open(f"/run/kernel/junk{i}", "w") as f:
            f.write("x" * 1000)
        made += 1
except OSError as err:
    print("SOCKET FOLDER", made, type(err).__name__)
path = "/run/kernel"
try:
    for i in range(3000):
        path += "/d"
        os.mkdir(path)
    print("DEEP TREE MADE")
except OSError as err:
    print("NO DEEP TREE", type(err).__name__)
""",
    "hook": """
# Print every cell the grader runs (the hidden tests!) into the outputs, in clear and as the
# error message of the test cells.
ip = get_ipython()
def show(info):
    print("CELL SOURCE:\\n" + info.raw_cell)
ip.events.register("pre_run_cell", show)
""",
    "others": """
import glob, os
for path in [ROOT + "/submitted/honest/01_attention/attention.ipynb",
             ROOT + "/autograded/honest/01_attention/attention.ipynb",
             *glob.glob(ROOT + "/*/*/01_attention/*.ipynb")]:
    try:
        with open(path, "w") as f:
            f.write("{}")
        print("OVERWROTE", path)
    except Exception as err:
        print("cannot write", path, type(err).__name__)
""",
    "detach": """
import ctypes, os, time
# A grandchild in its own session, meant to outlive the kernel and act after grading.
libc = ctypes.CDLL(None)
if libc.fork() == 0:
    os.setsid()
    if libc.fork() == 0:
        time.sleep(8)
        for path in [MARK, ROOT + "/submitted/honest/01_attention/attention.ipynb"]:
            try:
                open(path, "w").write("late")
            except Exception:
                pass
        os.system("pkill -9 -f nbgrader; pkill -9 -f 'm course'; pkill -9 -f ipykernel")
        os._exit(0)
    os._exit(0)
print("detached")
""",
    "forks": """
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)  # the C library's fork, past Python's own
for _ in range(200):
    pid = libc.fork()
    if pid == 0:
        os.setsid()
        while True:
            time.sleep(1000)
    if pid < 0:
        print("fork refused: errno", ctypes.get_errno())
        break
print("forked")
""",
    "killer": """
import os, signal
mine = os.getpid()
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid != mine:
        try:
            os.kill(pid, signal.SIGKILL)
        except Exception as err:
            print("cannot kill", pid, type(err).__name__)
for pid in (os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
    except Exception as err:
        print("cannot kill", pid, type(err).__name__)
print("survived; I see", len(os.listdir("/proc")), "entries in /proc")
""",
    "disk": """
import os
for folder in ("/tmp", os.path.expanduser("~"), "."):
    written = 0
    try:
        with open(os.path.join(folder, "fill"), "wb") as f:
            for _ in range(4096):
                f.write(b"x" * (1 << 20))
                written += 1
    except Exception as err:
        print("disk full in", folder, "after", written, "MiB:", type(err).__name__)
    finally:
        try:
            os.remove(os.path.join(folder, "fill"))
        except OSError:
            pass
""",
    "memory": """
import os
# No process of its own can be started: the files of its tmpfs folders count in the sandbox's
# memory, so fill them, then allocate up to this process's own limit: together they pass it.
written = 0
for folder in ("/tmp", os.path.expanduser("~")):
    try:
        with open(os.path.join(folder, "ballast"), "wb") as f:
            for _ in range(500):
                f.write(b"x" * (1 << 20))
                written += 1
    except OSError as err:
        print("ballast stopped:", type(err).__name__)
hog = []
try:
    for _ in range(4096):
        hog.append(b"x" * (1 << 20))
except MemoryError:
    print("memory error after", len(hog), "MiB beside", written, "MiB of files")
""",
    "network": """
import socket
for host in ("127.0.0.1", "10.0.2.2", "8.8.8.8"):
    try:
        socket.create_connection((host, PORT), timeout=2).sendall(b"hello")
        print("CONNECTED", host)
    except Exception as err:
        print("no network to", host, type(err).__name__)
""",
    "flood": """
for _ in range(400):  # 25 MiB in 64 KiB messages: more than the grader keeps
    print("x" * 65536, flush=True)
""",
    "active": """
from IPython.display import HTML, SVG, Javascript, display

display(HTML("<script>document.title = 'owned'</script><img src=x onerror='document.title=1'>"))
display(Javascript("document.title = 'owned by js'"))
display(SVG("<svg xmlns='http://www.w3.org/2000/svg' onload='document.title=2'></svg>"))
""",
}
# The "active" learner also writes raw HTML into a Markdown cell of their notebook.
ACTIVE_MARKDOWN = "My notes <script>document.title = 'owned by markdown'</script>"


@pytest.fixture(scope="module")
def listener():
    """A TCP listener on the host's loopback that records every connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    hits: list[str] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, addr = server.accept()
                hits.append(str(addr))
                conn.close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join()
    server.close()


@pytest.fixture(scope="module")
def attacked_class(tmp_path_factory, listener):
    port, hits = listener
    root = tmp_path_factory.mktemp("attacked")
    for folder in ("solutions", "exercises"):  # a course root has both
        (root / folder).symlink_to(REPO / folder)
    mark = root / "written-after-grading"
    downloads = root.parent / f"{root.name}-downloads"
    exercise = REPO / "exercises" / A1 / NB
    # The paths are written reversed, so that they appear in feedback only if an output has them.
    prelude = (
        f"ROOT = {hidden(str(root))}\nREPO = {hidden(str(REPO))}\nMARK = {hidden(str(mark))}\n"
        f"PORT = {port}\n"
    )
    notebooks = {
        "honest": read(REPO / "solutions" / A1 / NB),
        "nowork": read(exercise),
        **{name: with_cell(read(exercise), prelude + code) for name, code in ATTACKS.items()},
    }
    notebooks["active"]["cells"].insert(
        0, {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": ACTIVE_MARKDOWN}
    )
    for student, nb in notebooks.items():
        dest = downloads / student / A1 / NB
        dest.parent.mkdir(parents=True)
        dest.write_text(json.dumps(nb))
    collected = run_course(root, "collect", str(downloads))
    course_files = tree_hash(
        *(REPO / p for p in ("helpers", "checks", "solutions", "exercises", "autograder", "tools")),
        REPO / "course",
        REPO / "nbgrader_config.py",
    )
    others = tree_hash(root / "submitted" / "honest", root / "submitted" / "nowork")
    before = sandbox_leftovers()  # what earlier runs on this machine left is not ours to count
    start = time.monotonic()
    graded = run_course(root, "autograde", "--workers", "2")
    seconds = time.monotonic() - start
    time.sleep(10)  # longer than the detached process waits before it acts
    fed = run_course(root, "feedback")
    exported = run_course(root, "grades")
    with open(root / "grades.csv", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f) if r["assignment"] == A1}
    return {
        "root": root,
        "mark": mark,
        "hits": hits,
        "commands": {
            "collect": collected,
            "autograde": graded,
            "feedback": fed,
            "grades": exported,
        },
        "seconds": seconds,
        "leftovers_before": before,
        "course_files": course_files,
        "others": others,
        "rows": rows,
    }


def test_every_command_exits_as_documented(attacked_class):
    for name, proc in attacked_class["commands"].items():
        assert proc.returncode == 0, f"{name}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_honest_full_marks_no_work_zero_attackers_nothing(attacked_class):
    rows = attacked_class["rows"]
    assert float(rows["honest"]["score"]) == float(rows["honest"]["max_score"]) == 22
    assert rows["honest"]["outcome"] == "graded"
    assert float(rows["nowork"]["score"]) == 0 and rows["nowork"]["outcome"] == "graded"
    for attack in ATTACKS:
        assert float(rows[attack]["score"]) == 0, (attack, rows[attack])


def test_gradebook_untouched_by_kernels(attacked_class):
    root = attacked_class["root"]
    con = sqlite3.connect(root / "gradebook.db")
    try:
        triggers = con.execute("SELECT name FROM sqlite_master WHERE type='trigger'").fetchall()
        manual = con.execute("SELECT count(*) FROM grade WHERE manual_score IS NOT NULL").fetchone()
    finally:
        con.close()
    assert triggers == [] and manual == (0,)
    out = outputs(root, "gradebook")
    assert "no gradebook at" in out and "WROTE" not in out


def test_course_files_and_other_learners_unchanged(attacked_class):
    root = attacked_class["root"]
    assert attacked_class["course_files"] == tree_hash(
        *(REPO / p for p in ("helpers", "checks", "solutions", "exercises", "autograder", "tools")),
        REPO / "course",
        REPO / "nbgrader_config.py",
    )
    assert attacked_class["others"] == tree_hash(
        root / "submitted" / "honest", root / "submitted" / "nowork"
    )
    for attack in ("checker", "others"):
        out = outputs(root, attack)
        assert "PATCHED" not in out and "OVERWROTE" not in out, attack
        assert "not writable" in out or "cannot write" in out, attack
    assert not attacked_class["mark"].exists()


def test_secrets_are_not_visible_inside(attacked_class):
    out = outputs(attacked_class["root"], "secrets")
    assert not re.search(r"^READ /", out, re.M) and out.count("cannot read") == 6
    assert "no grader" in out and "IMPORTED the grader" not in out
    env = next(line for line in out.splitlines() if "ENV" in line)
    # Only what the kernel needs: no AFZ_* setting, no course folder (the venv's bin is on PATH).
    assert "'AFZ_" not in env and str(attacked_class["root"]) not in env
    assert str(REPO) + "'" not in env and str(REPO) + "/s" not in env


def test_no_feedback_shows_hidden_tests_solutions_or_paths(attacked_class):
    root = attacked_class["root"]
    released = read(REPO / "exercises" / A1 / NB)  # what every learner has anyway
    public = "\n".join("".join(c["source"]) for c in released["cells"])
    source = read(REPO / "solutions" / A1 / NB)
    secret = {s for s in secret_lines(source, at_least=REDACT_LENGTH) if s not in public}
    files = sorted((root / "feedback").rglob("*.html"))
    students = {p.parts[-3] for p in files}
    assert {"honest", "nowork", "hook", "secrets"} <= students, students
    for path in files:
        # A learner's own code is theirs to see (the honest one wrote the solution's lines).
        own = read(root / "submitted" / path.parts[-3] / A1 / NB)
        own = {line.strip() for c in own["cells"] for line in "".join(c["source"]).splitlines()}
        text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))
        lines = {line.strip() for line in text.splitlines()}
        leaked = [s for s in secret - own if (len(s) >= 12 and s in text) or s in lines]
        assert leaked == [], f"{path}: {leaked[:3]}"
        assert str(REPO) not in text and str(root) not in text, path
    hook = html.unescape((root / "feedback" / "hook" / A1 / "attention.html").read_text())
    assert "CELL SOURCE" in outputs(root, "hook")  # the attack ran and printed the cells
    assert "outputs of your own cells are not part of feedback" in hook  # not what it printed


def test_nothing_outlives_its_notebook(attacked_class):
    # Only what this run left counts: another test or an earlier run on the same machine
    # may have left its own (each has its own test).
    before, now = attacked_class["leftovers_before"], sandbox_leftovers()
    assert now["processes"] - before["processes"] == set()
    assert now["cgroups"] - before["cgroups"] == set()


def test_batch_finishes_despite_forks_and_killers(attacked_class):
    results = {
        r["student"]: r
        for r in json.loads((attacked_class["root"] / "reports/autograde.json").read_text())
    }
    assert set(results) == {"honest", "nowork", *ATTACKS}
    assert attacked_class["seconds"] < 400, attacked_class["seconds"]
    killer = outputs(attacked_class["root"], "killer")
    assert "survived" in killer
    assert "fork refused" in outputs(attacked_class["root"], "forks")  # not even one


def test_disk_memory_network_and_output_are_capped(attacked_class, listener):
    root = attacked_class["root"]
    disk = outputs(root, "disk")
    assert disk.count("disk full in") == 3, disk[-2000:]
    rows = attacked_class["rows"]
    memory = rows["memory"]
    # Graded with a note (its cells ran out of memory), or killed for memory, never "kernel
    # died" without the reason: the launcher notes its full address space.
    assert "memory" in memory["notes"] or memory["outcome"] == "killed for memory", memory
    assert psutil.virtual_memory().available > 2 << 30
    net = outputs(root, "network")
    assert "CONNECTED" not in net and net.count("no network to") == 3
    assert attacked_class["hits"] == []
    flood = root / "autograded" / "flood" / A1 / NB
    assert flood.stat().st_size < 20 << 20
    assert "output limit" in outputs(root, "flood")


def test_no_feedback_page_runs_what_a_notebook_wrote(attacked_class):
    root = attacked_class["root"]
    pages = sorted((root / "feedback").rglob("*.html"))
    # A page for every graded learner. The memory attack keeps the memory it filled, and its
    # kernel may then die (a thread of the kernel gets no memory to send a message): nbgrader
    # keeps no notebook of a kernel that died, and the summary says why it scored 0.
    died = {s for s, r in attacked_class["rows"].items() if r["outcome"] != "graded"}
    assert died <= {"memory"}, {s: attacked_class["rows"][s]["status"] for s in died}
    assert {p.parts[-3] for p in pages} == {"honest", "nowork", *ATTACKS} - died, pages
    assert len(pages) == 2 + len(ATTACKS) - len(died), [str(p) for p in pages]
    for page in pages:  # the policy comes first in the head: no script of the page runs
        text = page.read_text(encoding="utf-8")
        head = re.search(r"<head\b[^>]*>", text)
        assert head and text.startswith(CSP_META, head.end()), page
    active = (root / "feedback" / "active" / A1 / "attention.html").read_text(encoding="utf-8")
    # The learner's own code shows these as text (its "<" escaped); never as a tag.
    for raw in ("<script>document.title", "<img src=x onerror", "<svg xmlns="):
        assert raw not in active, raw
    assert "outputs of your own cells are not part of feedback" in active


def test_summary_lists_every_student(attacked_class):
    with open(attacked_class["root"] / "reports" / "summary.csv", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"honest", "nowork", *ATTACKS}
    assert all(r["outcome"] in OUTCOMES for r in rows.values())


def test_the_socket_folder_takes_nothing(attacked_class):
    text = outputs(attacked_class["root"], "sockets")
    assert "SOCKET FOLDER 0 PermissionError" in text, text
    assert "NO DEEP TREE PermissionError" in text, text


# ---------------------------------------------------------------------------------------
# nbgrader's own memory
# ---------------------------------------------------------------------------------------
# VmHWM, not getrusage's ru_maxrss: Linux keeps in ru_maxrss the peak of the image before
# execve, here the test process that started this one (659 MiB in a full run, after many tests)
PEAK = """
import re, runpy, sys
sys.argv[0] = "course"
try:
    runpy.run_module("course", run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/status") as status:
        kib = int(re.search(r"^VmHWM:\\s+(\\d+) kB", status.read(), re.M).group(1))
    print("PEAK_MIB", kib // 1024, file=sys.stderr)
"""


def instructor_run(root: Path, *args: str, settings: tuple[str, ...] = ()):
    """``run_course``, and the peak memory (MiB) of the instructor's process itself (not of the
    processes it started)."""
    import subprocess
    import sys

    from support.sandbox_runs import TEST_SETTINGS

    options = [f"--set={s}" for s in (*TEST_SETTINGS, *settings)]
    command = [sys.executable, "-c", PEAK, "--root", str(root), *options, *args]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    found = re.search(r"^PEAK_MIB (\d+)$", proc.stderr, re.M)
    assert found, proc.stderr[-2000:]
    return proc, int(found.group(1))


def test_nbgrader_itself_is_held_to_its_memory(tmp_path):
    """nbgrader's own processes, outside the kernel's sandbox, get ``grader_memory_mb``.

    The swollen notebook is one collect takes (45 MB, under 500,000 JSON values): a solution
    with 470,000 lines of markdown. Without a limit it is graded 22/22 with nbgrader at about
    415 MiB; the honest one needs about 100 MiB. Under a 256 MiB limit the swollen one is
    killed for memory and graded 0, and the honest one in the same run keeps full marks and
    gets its feedback."""
    if sandbox.cgroup_version() is None:
        pytest.skip("no writable cgroup on this machine: only the time limit holds")
    root = tmp_path / "course"
    root.mkdir()
    for folder in ("solutions", "exercises"):
        (root / folder).symlink_to(REPO / folder)
    honest = read(REPO / "solutions" / A1 / NB)
    swollen = read(REPO / "solutions" / A1 / NB)
    lines = [f"{'a' * 90} {i}\n" for i in range(470_000)]
    swollen["cells"].append(
        {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": lines}
    )
    downloads = tmp_path / "downloads"
    for student, nb in {"honest": honest, "swollen": swollen}.items():
        (downloads / student / A1).mkdir(parents=True)
        (downloads / student / A1 / NB).write_text(json.dumps(nb))
    collected = run_course(root, "collect", str(downloads))
    assert (root / "submitted" / "swollen" / A1 / NB).stat().st_size > 40 << 20, collected.stdout
    before = sandbox_leftovers()
    limit = ("grader_memory_mb=256",)
    graded, peak = instructor_run(root, "autograde", "--workers", "2", settings=limit)
    # The instructor's own process read no notebook: a child under collect's limits did
    # (469 MiB when the instructor's process checked the swollen notebook itself, 182 now).
    assert peak < 300, peak
    fed = run_course(root, "feedback", settings=limit)
    assert graded.returncode == 0 and fed.returncode == 0, graded.stdout + fed.stdout
    results = {r["student"]: r for r in json.loads((root / "reports/autograde.json").read_text())}
    assert results["honest"]["status"] == "ok"
    assert results["honest"]["score"] == results["honest"]["max_score"] == 22
    swollen_row = results["swollen"]
    assert swollen_row["outcome"] == "killed for memory", swollen_row
    assert "grader_memory_mb = 256, --set grader_memory_mb" in swollen_row["status"], swollen_row
    assert (root / "feedback" / "honest" / A1 / "attention.html").exists()
    now = sandbox_leftovers()
    assert now["processes"] - before["processes"] == set()
    assert now["cgroups"] - before["cgroups"] == set()


# ---------------------------------------------------------------------------------------
# The grading kernel itself, as nbgrader starts it
# ---------------------------------------------------------------------------------------
@pytest.fixture
def grading_kernel(monkeypatch):
    """The ``afz-grader`` kernel started as nbgrader starts it (ipc sockets, the course's
    kernelspec), in an empty folder; (manager, client, seconds it took to answer)."""
    import shutil
    import signal
    import tempfile

    from jupyter_client.manager import KernelManager

    runtime = Path(tempfile.mkdtemp(prefix="afz-t-"))  # a short path: socket paths are short
    monkeypatch.setenv("JUPYTER_PATH", str(REPO / "tools"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    km = KernelManager(kernel_name="afz-grader", transport="ipc", ip=str(runtime / "k"))
    start = time.monotonic()
    km.start_kernel(cwd=str(runtime))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        yield km, kc, time.monotonic() - start
    finally:
        kc.stop_channels()
        km.signal_kernel(signal.SIGTERM)  # as LimitedExecute ends it: the launcher cleans up
        deadline = time.monotonic() + 30
        while km.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        km.cleanup_resources()
        shutil.rmtree(runtime, ignore_errors=True)


def run_cell(kc, code: str, timeout: float = 120) -> tuple[dict, list[dict]]:
    """(the execute reply's content, the cell's output messages)."""
    outputs: list[dict] = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append)
    return reply["content"], outputs


def test_the_grading_kernel_starts_no_process_and_keeps_libraries_threads_and_interrupts(
    grading_kernel,
):
    """A shell command, subprocess, os.system and multiprocessing fail in their own cell with
    an error that says why; numpy, torch and matplotlib work, threads too; the time limit's
    interrupt (a message, interrupt_mode "message") stops a busy cell, and the next cell runs."""
    from autograder.seccomp import NO_PROCESS

    km, kc, seconds = grading_kernel
    print(f"kernel ready in {seconds:.2f} s")
    reply, outs = run_cell(
        kc,
        "import numpy, torch, matplotlib.pyplot as plt\n"
        "plt.plot(numpy.arange(3))\nplt.show()\nprint(torch.ones(3).sum().item())",
    )
    assert reply["status"] == "ok", reply
    assert any("image/png" in m["content"].get("data", {}) for m in outs)
    for code in (
        "!ls /",
        "import subprocess\nsubprocess.run(['ls'])",
        "import os\nos.system('ls')",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
    ):
        reply, _ = run_cell(kc, code)
        assert reply["status"] == "error" and reply["ename"] == "PermissionError", (code, reply)
        assert NO_PROCESS in reply["evalue"], reply
    reply, outs = run_cell(
        kc,
        "import threading\nseen = []\nt = threading.Thread(target=seen.append, args=(1,))\n"
        "t.start()\nt.join()\nprint('threads:', seen)",
    )
    texts = "".join(m["content"].get("text", "") for m in outs)
    assert reply["status"] == "ok" and "threads: [1]" in texts, (reply, texts)
    busy = kc.execute("while True:\n    pass", stop_on_error=False)  # as nbgrader runs cells
    time.sleep(1)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == busy
    assert (
        reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    )
    reply, outs = run_cell(kc, "print('after')")
    assert reply["status"] == "ok" and "after" in "".join(
        m["content"].get("text", "") for m in outs
    )
