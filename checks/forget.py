"""What a test cell leaves of itself in the kernel, cleared when it ends.

IPython keeps the source of every cell it ran: in its input history (``In``, ``_ih``), in the
names ``_i`` and ``_i<n>``, and in ``linecache`` (for tracebacks). A grading kernel's test cell
runs in its answer-free kernel form, with its hidden tests' inputs; neither the learner's code
it calls nor the cells after it should find that form there. :func:`forget_this_cell` (called
by the kernel form before it calls anything of the learner's) blanks the running cell in all
three; outside IPython it does nothing.
"""

from __future__ import annotations

import linecache


def forget_this_cell() -> None:
    """Blank the running cell's source in IPython's history, its ``_i`` names and
    ``linecache``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    history = getattr(shell, "history_manager", None)
    if shell is None or history is None or not history.input_hist_raw:
        return
    sources = {history.input_hist_parsed[-1], history.input_hist_raw[-1]} - {""}
    history.input_hist_parsed[-1] = history.input_hist_raw[-1] = ""
    if history._i00 in sources:  # what the next cell's _i would be
        history._i00 = ""
    with history.db_input_cache_lock:
        cache = history.db_input_cache
        cache[:] = [(n, "", "") if {a, b} & sources else (n, a, b) for n, a, b in cache]
    for name, value in list(shell.user_ns.items()):
        if name.startswith("_i") and isinstance(value, str) and value in sources:
            shell.user_ns[name] = ""
    lines = {tuple(source.splitlines()) for source in sources}
    for key, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is None:  # IPython's entries never expire
            if tuple(line.rstrip("\n") for line in entry[2]) in lines:
                del linecache.cache[key]
