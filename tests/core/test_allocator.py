"""core.allocator: glibc's malloc set for big sessions at each process's start, the user's own
settings left alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from session_studio.core.allocator import tune_allocator

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
    reason="glibc's mallopt",
)

#: prints whether a 2 MB buffer, allocated after a 4 MB one was freed, came from mmap (pages of its
#: own, given back when freed) -- what the tuned threshold guarantees -- by glibc's mallinfo2
_PROBE = r"""
import ctypes, os, sys
if os.environ.get("PROBE_WITHOUT_HELPER"):  # as where pip built no compiled helper: ctypes
    sys.modules["session_studio.core._bulkindex"] = None
from session_studio.core.allocator import tune_allocator
print(tune_allocator())
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = Info
big = bytearray(4 << 20); del big  # glibc's default raises its threshold past 4 MB here
before = mallinfo2().hblkhd
buf = bytearray(2 << 20)
print(mallinfo2().hblkhd - before >= 2 << 20)
"""


def _probe(env: dict[str, str]) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES" and not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


@glibc_only
@pytest.mark.parametrize("helper", [True, False])
def test_big_buffers_get_pages_of_their_own_after_tuning(helper: bool) -> None:
    assert _probe({} if helper else {"PROBE_WITHOUT_HELPER": "1"}) == ["True", "True"]


@glibc_only
def test_glibcs_defaults_keep_them_in_the_heap() -> None:
    """The probe tells the difference: without the tuning the 2 MB buffer reuses the heap."""
    assert _probe({"SESSION_STUDIO_DEFAULT_MALLOC": "1"}) == ["False", "False"]


def test_the_users_own_malloc_settings_win() -> None:
    assert tune_allocator({"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"}) is False
    assert tune_allocator({"MALLOC_ARENA_MAX": "4"}) is False
    assert tune_allocator({"SESSION_STUDIO_DEFAULT_MALLOC": "1"}) is False


@glibc_only
def test_the_cli_and_the_helpers_tune_at_their_start() -> None:
    """Each process entry point calls it first (the window starts through cli.main)."""
    import inspect

    from session_studio import cli
    from session_studio.core import count_worker, scan_worker
    from session_studio.ui import search_worker

    for module in (cli, scan_worker, count_worker, search_worker):
        assert "tune_allocator()" in inspect.getsource(module.main), module.__name__


#: prints the resident anonymous memory (KB) after 60 MB of 1 KB blocks are freed but the last one,
#: which keeps the heap from shrinking by itself, and again after release_free_memory
_TRIM_PROBE = r"""
import os, sys
if os.environ.get("PROBE_WITHOUT_HELPER"):  # as where pip built no compiled helper: ctypes
    sys.modules["session_studio.core._bulkindex"] = None
from session_studio.core.allocator import release_free_memory, tune_allocator
tune_allocator()
def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
blocks = [bytes(1024) for _ in range(60_000)]
last = blocks.pop()
del blocks
before = anon()
print(release_free_memory(), before - anon())
"""


@glibc_only
@pytest.mark.parametrize("helper", [True, False])
def test_freed_heap_pages_go_back_to_the_system(helper: bool) -> None:
    """Blocks under the mmap threshold stay in the heap when freed: release_free_memory gives their
    pages back (the window does it once its background work has ended)."""
    clean = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES" and not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", _TRIM_PROBE],
        env={**clean, **({} if helper else {"PROBE_WITHOUT_HELPER": "1"})},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == "True" and int(out[1]) > 30_000, out  # most of the 60 MB, in KB


def test_glibcs_defaults_are_left_as_they_are_when_asked() -> None:
    from session_studio.core.allocator import release_free_memory

    assert release_free_memory({"SESSION_STUDIO_DEFAULT_MALLOC": "1"}) is False
