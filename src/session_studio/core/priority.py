"""Helper processes run behind the process that started them."""

from __future__ import annotations

import contextlib
import os

__all__ = ["NICENESS", "run_behind"]

#: how much nicer than this process its helper processes (scans, search text) run
NICENESS = 10


def run_behind(pid: int) -> None:
    """Lower the priority of helper process ``pid``, right after it is started (its interpreter
    start and imports included): on a machine with few cores the window's GUI thread otherwise
    waits for a core while helpers run (a paint of 40 ms took 130). A helper still gets every cycle
    the window leaves. Nothing happens where priorities cannot be set."""
    with contextlib.suppress(AttributeError, OSError):
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(19, mine + NICENESS))
