"""Ctrl-C while the engine stores a result (course.grading.engine.ctrl_c_held): the result is
stored whole, then the run stops, even when another thread of the process takes the signal."""

import os
import signal
import threading
import time

import pytest

from course.grading.engine import ctrl_c_held


def test_ctrl_c_during_a_store_is_raised_after_it_with_another_thread_running():
    before = signal.getsignal(signal.SIGINT)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # as a Dask client's or an executor's thread
    other.start()
    stored = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with ctrl_c_held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)  # a KeyboardInterrupt here would leave the store half done
                stored.append("report")
    finally:
        stop.set()
        other.join()
    assert stored == ["report"]
    assert signal.getsignal(signal.SIGINT) is before


def test_no_ctrl_c_no_interrupt():
    with ctrl_c_held():
        pass


def test_outside_the_main_thread_it_holds_nothing_and_fails_nothing():
    """grade() run in a thread of the caller's (as the grading tests do) cannot set a handler."""
    errors = []

    def store() -> None:
        try:
            with ctrl_c_held():
                pass
        except Exception as error:  # noqa: BLE001 - the test reports it
            errors.append(error)

    thread = threading.Thread(target=store)
    thread.start()
    thread.join()
    assert errors == []
