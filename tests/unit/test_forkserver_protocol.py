"""The warm nbgrader's answers read by its client (``course.grading.forkserver.Server._read``),
with a stand-in server: no nbgrader is started. (The real server:
tests/grading/test_forkserver.py.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from course.grading import forkserver

READY = "print('{\"ready\": true}', flush=True)\n"


def stand_in(script: str, monkeypatch) -> forkserver.Server:
    """A Server started as usual, whose process runs ``script`` (after saying it is ready)
    instead of the nbgrader server's loop."""
    monkeypatch.setattr(forkserver, "SERVER_MAIN", READY + script)
    return forkserver.Server(dict(os.environ), Path.cwd())


def test_both_answers_of_a_command_that_ends_at_once_are_read_without_waiting(monkeypatch):
    """A command that fails at once (a notebook that is not JSON: 0.3 s) has its pid and its
    exit code written before the client reads the first; the second must not wait for the
    time limit (it waited 30 minutes in a class graded on a busy machine)."""
    server = stand_in(
        "import sys, time\n"
        'sys.stdout.write(\'{"pid": 42}\\n{"rc": 1}\\n\'); sys.stdout.flush()\n'
        "time.sleep(30)\n",
        monkeypatch,
    )
    try:
        time.sleep(0.5)  # both lines are in the pipe before the first read
        assert server._read(timeout=5) == {"pid": 42}
        start = time.monotonic()
        assert server._read(timeout=5) == {"rc": 1}
        assert time.monotonic() - start < 1
    finally:
        server.proc.kill()
        server.close()


def test_an_answer_in_pieces_is_one_answer_and_silence_times_out(monkeypatch):
    server = stand_in(
        "import sys, time\n"
        "sys.stdout.write('{\"pi'); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('d\": 7}\\n'); sys.stdout.flush(); time.sleep(30)\n",
        monkeypatch,
    )
    try:
        assert server._read(timeout=5) == {"pid": 7}
        with pytest.raises(TimeoutError):
            server._read(timeout=0.5)
    finally:
        server.proc.kill()
        server.close()


def test_a_server_that_exits_is_gone_and_nonsense_is_refused(monkeypatch):
    server = stand_in("", monkeypatch)  # ready, then gone
    with pytest.raises(forkserver.ServerGone, match="exited"):
        server._read(timeout=5)
    server = stand_in("print('Traceback (most recent call last):')", monkeypatch)
    with pytest.raises(forkserver.ServerGone, match="said"):
        server._read(timeout=5)
