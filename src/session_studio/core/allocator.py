"""How glibc's malloc serves our processes (issue 11: memory on big sessions).

An index is built from many short-lived buffers of 1-10 MB (a column's bytes from a scan
process, a chunk of lines, an outline's arrays). glibc serves the first such buffer with mmap and,
when it is freed, raises its mmap threshold to the buffer's size (up to 32 MB): every later one
comes from the heap, and what is freed there mostly stays in the process as free space between
live blocks. Each thread that allocates may also get an arena of its own (up to 8 per core), with
free space of its own. Measured on the 1 GB session: a fixed 1 MB threshold and two arenas take
the CLI's `plan` from 134 to 119.5 MB peak RSS and the window's from 258-279 to 250-251 MB
(227-232 MB once loaded, was 252), at the same speed.

:func:`tune_allocator` sets both with ``mallopt`` at a process's start (the CLI, the window, the
helper processes; forked scan processes inherit it). Blocks under the threshold that are freed
still stay in the process, between live ones: :func:`release_free_memory` (glibc's ``malloc_trim``)
gives their pages back, which the window does once its background work has ended (after loading
the 1 GB session: 228 -> 212 MB resident, in 3 ms). It does nothing where there is no glibc,
and nothing where the user set glibc's own knobs (``GLIBC_TUNABLES`` or ``MALLOC_*`` variables):
theirs win. ``SESSION_STUDIO_DEFAULT_MALLOC=1`` keeps glibc's defaults (to measure the
difference).

The command line's short reads of one session (`plan`, `context`, `branch`) also ask for a
*huge-page heap* (``tune_allocator(heap_pad=HEAP_PAD)``, the compiled helper only): the heap grows
by 64 MB at a time and keeps what is freed at its top, and its first 64 MB get transparent huge
pages. On a virtual machine the first touch of each 4 KB page costs ~2 us, and these commands
touch tens of thousands: 330k page faults and 0.8 s of system time in the 1 GB session's cold plan,
6,700 faults (~13 ms of 57) in a cached reopen of the 117 MB one. With the heap: 17-30k and 0.15-0.3 s,
~3,600 faults; the 1 GB cold plan 1.45 -> 1.05-1.1 s and a cached reopen ~10% faster, for ~9 MB more
peak RSS on the 1 GB session (1-2 MB on a cached one). The window keeps the plain heap: it lives long,
and its memory is what issue 11 holds it to.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["ARENA_MAX", "HEAP_PAD", "MMAP_THRESHOLD", "release_free_memory", "tune_allocator"]

#: allocations of at least this many bytes get pages of their own, given back when freed
MMAP_THRESHOLD = 1 << 20
#: at most this many malloc arenas (the GUI thread and the workers share them)
ARENA_MAX = 2
#: the huge-page heap's growth step and advised part (tune_allocator's heap_pad)
HEAP_PAD = 64 << 20
# mallopt's parameter numbers (glibc's malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _user_tuned(environ: dict[str, str] | os._Environ[str]) -> bool:
    return "malloc" in environ.get("GLIBC_TUNABLES", "") or any(k.startswith("MALLOC_") for k in environ)


def _glibc_function(name: str, argtypes: tuple[Any, ...]) -> Any:
    """glibc's function ``name`` through ctypes (int result), for where the compiled helper is not
    built; None where there is no glibc (musl's mallopt only says "not supported")."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return None
        function = getattr(libc, name)
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function


def _glibc_defaults_wanted(environ: dict[str, str] | os._Environ[str]) -> bool:
    """No glibc here, or SESSION_STUDIO_DEFAULT_MALLOC asks for glibc's defaults (to measure them)."""
    return not sys.platform.startswith("linux") or bool(environ.get("SESSION_STUDIO_DEFAULT_MALLOC"))


def tune_allocator(environ: dict[str, str] | os._Environ[str] = os.environ, heap_pad: int = 0) -> bool:
    """Set glibc's mmap threshold and arena count for this process (see the module's text), and
    with `heap_pad` (HEAP_PAD) the huge-page heap, where the compiled helper is built. Returns
    whether the threshold and the arenas were set. Call it before the process allocates much."""
    if _glibc_defaults_wanted(environ) or _user_tuned(environ):
        return False
    try:
        from . import _bulkindex  # the compiled helper, when pip built it: no ctypes to import
    except ImportError:
        pass
    else:
        tuned = _bulkindex.tune_malloc(MMAP_THRESHOLD, ARENA_MAX)
        if tuned and heap_pad:
            # the probe block: more than any free block of a young heap, still served from the heap
            _bulkindex.huge_page_heap(heap_pad, MMAP_THRESHOLD - (64 << 10))
        return tuned
    import ctypes

    mallopt = _glibc_function("mallopt", (ctypes.c_int, ctypes.c_int))
    if mallopt is None:
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_ARENA_MAX, ARENA_MAX))


def release_free_memory(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Give the free pages of the heap back to the system (glibc's ``malloc_trim(0)``); returns
    whether any were. Nothing where there is no glibc, or where ``SESSION_STUDIO_DEFAULT_MALLOC``
    asks for glibc's defaults. A few ms on a big session's heap, without holding the GIL."""
    if _glibc_defaults_wanted(environ):
        return False
    try:
        from . import _bulkindex

        return _bulkindex.trim_malloc()
    except ImportError:
        pass
    import ctypes

    trim = _glibc_function("malloc_trim", (ctypes.c_size_t,))
    return trim is not None and bool(trim(0))
