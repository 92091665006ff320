"""Background work runs behind what the user waits for: helper processes behind the process that
started them, worker threads behind the foreground thread's paints.

Worker threads share the GIL with the window's GUI thread. A paint of the session tree calls into
Python ~10 times a row (the model, the delegate), and between those calls Qt runs C++ without the
GIL: a worker running Python takes it each time, and each of the paint's next calls waits for it to
be handed back. A 50 ms paint took 250-350 ms while the 1 GB session was re-planned after pi
appended an entry. So the foreground thread marks such work (:func:`foreground`), and the long
computations of core call :func:`yield_to_foreground` between their steps: a worker waits there
(without the GIL) until the paint is done.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

__all__ = [
    "FOREGROUND_WAIT_LIMIT",
    "NICENESS",
    "STEP_ITEMS",
    "can_start_helpers",
    "foreground",
    "run_behind",
    "yield_to_foreground",
]

#: how much nicer than this process its helper processes (scans, search text) run
NICENESS = 10


def can_start_helpers() -> bool:
    """Whether helper processes (``python -m session_studio...``) can be started here: a frozen
    app has no interpreter to start, and the helpers are tested on POSIX only."""
    return os.name == "posix" and not getattr(sys, "frozen", False)


def run_behind(pid: int) -> None:
    """Lower the priority of helper process ``pid``, right after it is started (its interpreter
    start and imports included): on a machine with few cores the window's GUI thread otherwise
    waits for a core while helpers run (a paint of 40 ms took 130). A helper still gets every cycle
    the window leaves. Nothing happens where priorities cannot be set."""
    with contextlib.suppress(AttributeError, OSError):
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, mine + NICENESS))


#: a worker never waits longer than this for the foreground at one step (s): a stuck paint does not
#: stop the background work
FOREGROUND_WAIT_LIMIT = 0.25
#: items a loop of background work handles between two steps (``if not k % STEP_ITEMS``)
STEP_ITEMS = 2048

_idle = threading.Event()  # set while no foreground work is marked
_idle.set()
_depth_lock = threading.Lock()
_depth: dict[int, int] = {}  # thread → how deep in foreground() it is


@contextlib.contextmanager
def foreground() -> Iterator[None]:
    """Mark what the foreground thread does inside (a paint): workers at a step wait meanwhile."""
    me = threading.get_ident()
    with _depth_lock:
        _depth[me] = _depth.get(me, 0) + 1
        _idle.clear()
    try:
        yield
    finally:
        with _depth_lock:
            _depth[me] -= 1
            if not _depth[me]:
                del _depth[me]
            if not _depth:
                _idle.set()


def yield_to_foreground() -> None:
    """A step of background work: wait while foreground work is marked (up to the limit), unless
    this thread is the one doing it (core code called from a paint goes on). Costs a lock's
    acquire when none is marked (call it between steps of ~1-10 ms, not per item)."""
    if _idle.is_set() or threading.get_ident() in _depth:
        return
    _idle.wait(FOREGROUND_WAIT_LIMIT)
