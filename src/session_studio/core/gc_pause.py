"""One pause of Python's cyclic garbage collector for the whole process, counted across threads.

Indexing a session, re-reading a long path's values or preparing a summary of 100k messages makes
containers by the hundred thousand; each collection those allocations set off walks all of them
again (on a 100k-entry path: 1.3 s of a 3.1 s preparation). They make no reference cycles:
reference counting frees their garbage, so the collector has nothing to find meanwhile.

The pause is counted: a load, a search index build and a preparation overlap in different threads,
and the collector is back on only when the last of them is done (with a plain disable/enable per
caller, the first to finish turned it on under the others).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["gc_paused", "hold_gc_pause", "release_gc_pause"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


def hold_gc_pause() -> None:
    """No cyclic GC until the matching :func:`release_gc_pause`."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1


def release_gc_pause() -> None:
    """End one :func:`hold_gc_pause` (an unmatched release changes nothing)."""
    global _holders
    with _lock:
        if _holders == 0:
            return
        _holders -= 1
        if _holders == 0 and _was_enabled:
            gc.enable()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    hold_gc_pause()
    try:
        yield
    finally:
        release_gc_pause()
