"""The warm nbgrader's answers read by its client (``course.forkserver.Server._read``), with a
stand-in server: no nbgrader is started. (The real server: tests/grading/test_forkserver.py.)"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from course import forkserver


def stand_in(script: str) -> forkserver.Server:
    """A Server whose process is ``python -c script`` instead of the nbgrader server."""
    server = forkserver.Server.__new__(forkserver.Server)
    server.key = forkserver.startup_key({})
    server._pending = b""
    server.proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    return server


def test_both_answers_of_a_command_that_ends_at_once_are_read_without_waiting():
    """A command that fails at once (a notebook that is not JSON: 0.3 s) has its pid and its
    exit code written before the client reads the first; the second must not wait for the
    time limit (it waited 30 minutes in a class graded on a busy machine)."""
    server = stand_in(
        "import sys, time\n"
        'sys.stdout.write(\'{"pid": 42}\\n{"rc": 1}\\n\'); sys.stdout.flush()\n'
        "time.sleep(30)\n"
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


def test_an_answer_in_pieces_is_one_answer_and_silence_times_out():
    server = stand_in(
        "import sys, time\n"
        "sys.stdout.write('{\"pi'); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('d\": 7}\\n'); sys.stdout.flush(); time.sleep(30)\n"
    )
    try:
        assert server._read(timeout=5) == {"pid": 7}
        with pytest.raises(TimeoutError):
            server._read(timeout=0.5)
    finally:
        server.proc.kill()
        server.close()


def test_a_server_that_exits_is_gone_and_nonsense_is_refused():
    server = stand_in("print('{\"ready\": true}')")
    assert server._read(timeout=5) == {"ready": True}
    with pytest.raises(forkserver.ServerGone, match="exited"):
        server._read(timeout=5)
    server = stand_in("print('Traceback (most recent call last):')")
    with pytest.raises(forkserver.ServerGone, match="said"):
        server._read(timeout=5)
