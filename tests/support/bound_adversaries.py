"""Learners of assignment 01 who test the bounds of grading: what the grader keeps of a
notebook's output and how it tells the learner, what the kernel may start and see, what a
feedback page draws, what reaches the instructor's logs. Each starts from the solution, so an
honest grade is full marks and anything less is what the defence costs.

``bounds_adversaries()`` has the return shape of ``submissions.adversaries()``; the adversarial
class of tests/grading/test_adversaries.py submits both.
"""

from __future__ import annotations

from support.submissions import A1, insert_cell, mutate, read, source

MIME = "application/vnd.afz.check+json"
# A debugging loop that prints about 10 MB, past the default output cap of 8 MiB, and a
# softmax that prints what it is given, so that the tests' own cells print after the cap.
DEBUG_LOOP = """
for step in range(12_000):
    print(f"step {step}: loss is still", "x" * 800)
"""
DEBUG_PRINT = (
    "    x = np.asarray(x)",
    "    print('softmax got', np.shape(x))\n    x = np.asarray(x)",
)
# padding_mask (2 points) hands the grader records of its own: many small ones (past the count
# bound), then large ones (past the bytes bound), 40 MB in all.
RECORD_FLOOD = (
    "    return (tokens != pad_id)[:, None, None, :]",
    "    from IPython.display import publish_display_data\n\n"
    "    for i in range(300):\n"
    f"        publish_display_data({{{MIME!r}: {{'test': 'test_padding_mask', 'key': f'k{{i}}',"
    " 'value': 'v'}})\n"
    "    for i in range(20):\n"
    f"        publish_display_data({{{MIME!r}: {{'test': 'x', 'key': f'big{{i}}',"
    " 'value': 'v' * 2**20}})\n"
    "    return (tokens != pad_id)[:, None, None, :]",
)
WIDGETS = """
import ipywidgets
from comm import create_comm

shown = ipywidgets.Output()
display(shown)
with shown:
    for i in range(2000):
        print("w" * 1000)
text = ipywidgets.Text()
display(text)
for i in range(12):
    text.value = f"{i}" + "z" * 2**20
channel = create_comm(target_name="jupyter.widget", data={"state": {"_model_name": "Blob"}})
for i in range(12):
    channel.send({"method": "custom", "blob": "z" * 2**20})
"""
# Markdown that nbconvert draws in time that grows with the square of a line's length
MARKDOWN_BOMBS = [
    "[" * 60_000,
    "[a](b " * 30_000,
    "".join(f"- item {i}\n" for i in range(100_000)),
    "".join("  " * i + "- deeper\n" for i in range(3_000)),
]
RAW_PANEL = (
    '<div style="position:fixed;top:0;left:0;width:100%;background:#2e7d32;color:white">'
    "<h1>Score: 22 / 22</h1><p>Graded by the course staff. "
    '<a href="https://appeal.example/form">Confirm your grade here</a></p></div>'
)
TERMINAL = "\x1b]0;owned\x07\x1b[2J\x1b[31mFAKE: every test passed\x1b[0m\r\u202egnp.egami"
ESCAPES = f"""
import os, sys

os.write(2, {TERMINAL.encode()!r})
sys.__stderr__.write({TERMINAL!r} + "\\n")
sys.__stderr__.flush()
print({TERMINAL!r})
"""
# The system calls the kernel never needs, asked for by number: each must be denied (EPERM)
INTERFACES = """
import ctypes, errno

libc = ctypes.CDLL(None, use_errno=True)
calls = {
    "io_uring_setup": (425, 8, 0), "io_setup": (206, 8, 0), "kcmp": (312, 1, 1, 0, 0, 0),
    "lookup_dcookie": (212, 0, 0, 0), "quotactl": (179, 0, 0, 0, 0), "syslog": (103, 3, 0, 0),
    "settimeofday": (164, 0, 0), "clock_settime": (227, 0, 0), "adjtimex": (159, 0),
    "vhangup": (153,), "iopl": (172, 3), "ioperm": (173, 0, 8, 1),
    "modify_ldt": (154, 0, 0, 0), "pidfd_getfd": (438, 0, 0, 0), "memfd_secret": (447, 0),
    "fanotify_init": (300, 0, 0), "personality(ADDR_NO_RANDOMIZE)": (135, 0x0040000),
    "execve": (59, 0, 0, 0),
}
for name, (number, *args) in calls.items():
    ctypes.set_errno(0)
    answer = libc.syscall(number, *args)
    denied = answer == -1 and ctypes.get_errno() == errno.EPERM
    print("DENIED" if denied else f"ALLOWED ({answer}, errno {ctypes.get_errno()})", name)
# A process of its own through the C library, past Python's own functions
ctypes.set_errno(0)
child = libc.fork()
if child == 0:
    libc._exit(0)
print("DENIED" if child == -1 and ctypes.get_errno() == errno.EPERM else "ALLOWED", "fork")
argv = (ctypes.c_char_p * 2)(b"true", None)
spawned = libc.posix_spawn(ctypes.byref(ctypes.c_int()), b"/bin/true", None, None, argv, None)
print("DENIED" if spawned == errno.EPERM else f"ALLOWED ({spawned})", "posix_spawn")
print("MOUNTS", open("/proc/self/mountinfo").read())
"""
# Each in a cell of its own: every one fails its own cell, and the notebook goes on.
PROCESSES = {
    "shell": "!ls /",
    "subprocess": "import subprocess\n\nsubprocess.run(['ls', '/'])",
    "system": "import os\n\nos.system('ls /')",
    "multiprocessing": (
        "import multiprocessing\n\nchild = multiprocessing.Process(target=print, args=(1,))\n"
        "child.start()"
    ),
    "threads": (
        "import threading\n\nfound = []\nworkers = [threading.Thread(target=found.append, "
        "args=(i,)) for i in range(4)]\nfor w in workers:\n    w.start()\nfor w in workers:\n"
        "    w.join()\nprint('threads ran:', sorted(found))"
    ),
}


def with_markdown(nb: dict, sources: list[str], kind: str = "markdown") -> dict:
    """``nb`` with cells of ``kind`` holding ``sources`` at its top."""
    for i, text in enumerate(sources):
        nb["cells"].insert(
            i, {"cell_type": kind, "id": f"{kind}-{i}", "metadata": {}, "source": text}
        )
    return nb


def with_cells(nb: dict, codes: list[str]) -> dict:
    """``nb`` with code cells ``codes``, in this order, after its imports cell."""
    for code in reversed(codes):
        nb = insert_cell(nb, "imports", code)
    for i, cell in enumerate(c for c in nb["cells"] if c["id"].startswith("inserted-")):
        cell["id"] = f"inserted-{i}"
    return nb


def bounds_adversaries() -> dict[str, tuple[dict | str, str]]:
    """student -> (notebook, what it does)."""
    chatty = insert_cell(mutate(read(source(A1)), *DEBUG_PRINT), "imports", DEBUG_LOOP)
    widgets = insert_cell(read(source(A1)), "imports", WIDGETS)
    widgets["metadata"]["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "state": {"stored": {"model_name": "Blob", "state": {"blob": "s" * 2**21}}},
            "version_major": 2,
            "version_minor": 0,
        }
    }
    return {
        "capped_printer": (chatty, "honest: a debugging loop and prints past the output cap"),
        "record_flooder": (
            mutate(read(source(A1)), *RECORD_FLOOD),
            "padding_mask publishes check records past the tests' own bound",
        ),
        "widget_flooder": (widgets, "comm and widget messages, stored widget state"),
        "markdown_bomber": (
            with_markdown(read(source(A1)), MARKDOWN_BOMBS),
            "Markdown that nbconvert draws in quadratic time",
        ),
        "raw_panel": (
            with_markdown(read(source(A1)), [RAW_PANEL], "raw"),
            "a raw cell's HTML: a fake score panel with a live link",
        ),
        "terminal_escapes": (
            insert_cell(read(source(A1)), "imports", ESCAPES),
            "terminal escapes on the kernel's own stderr",
        ),
        "kernel_interfaces": (
            insert_cell(read(source(A1)), "imports", INTERFACES),
            "system calls a kernel never needs; the mounts it can see",
        ),
        "process_starter": (
            with_cells(read(source(A1)), list(PROCESSES.values())),
            "a shell command, subprocess, os.system, multiprocessing; threads",
        ),
    }
