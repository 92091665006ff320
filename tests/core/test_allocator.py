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
        assert "tune_allocator(" in inspect.getsource(module.main), module.__name__


def test_only_the_short_reads_get_the_huge_page_heap() -> None:
    """`plan`, `context` and `branch` ask for it; the window (a file argument) and the other commands do not."""
    from session_studio.cli import heap_pad_for
    from session_studio.core.allocator import HEAP_PAD

    assert [heap_pad_for(a) for a in (["plan", "f"], ["context", "f"], ["branch", "f"])] == [HEAP_PAD] * 3
    assert [heap_pad_for(a) for a in ([], ["f.jsonl"], ["export", "f"], ["compact", "f"], ["--help"])] == [
        0
    ] * 5


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


#: touches 32 MB of heap blocks (256 KB each, under the mmap threshold) twice, freeing them in between,
#: and prints the bytes advised for huge pages and the page faults of each round
_HEAP_PROBE = r"""
import resource, sys
from session_studio.core.allocator import HEAP_PAD, tune_allocator
if sys.argv[1] == "heap":
    tune_allocator(heap_pad=HEAP_PAD)
else:
    tune_allocator()
with open("/proc/self/smaps") as smaps:
    advised = int(any(line.startswith("VmFlags:") and " hg" in line for line in smaps))
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
f0 = faults()
blocks = [b"\x01" * (256 << 10) for _ in range(128)]
f1 = faults()
del blocks
blocks = [b"\x01" * (256 << 10) for _ in range(128)]
f2 = faults()
print(advised, f1 - f0, f2 - f1)
"""


def _thp_mode() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return "never"
    return text.split("[", 1)[1].split("]", 1)[0] if "[" in text else "never"


@glibc_only
def test_the_huge_page_heap_saves_page_faults() -> None:
    """With the heap, 32 MB of blocks take a fraction of the 8,192 page faults of 4 KB pages, and
    freeing them keeps the pages for the next 32 MB; the plain tuning (the control) faults per page
    and gives the freed top of the heap back."""
    pytest.importorskip("session_studio.core._bulkindex")
    clean = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES" and not k.startswith("MALLOC_")}

    def probe(kind: str) -> list[int]:
        out = subprocess.run(
            [sys.executable, "-c", _HEAP_PROBE, kind], env=clean, capture_output=True, text=True, check=True
        )
        return [int(v) for v in out.stdout.split()]

    advised, first, second = probe("heap")
    assert second < 256, (first, second)  # the freed 32 MB stayed in the heap
    control_advised, control_first, control_second = probe("plain")
    assert control_advised == 0 and control_second > 4096, (control_first, control_second)
    if _thp_mode() == "never":
        assert advised == 0
        return
    assert advised == 1
    if _thp_mode() == "madvise":  # under "always" the control gets huge pages too
        assert first < 2048 and control_first > 6000, (first, control_first)  # 8,192 pages of 4 KB


def test_glibcs_defaults_are_left_as_they_are_when_asked() -> None:
    from session_studio.core.allocator import release_free_memory

    assert release_free_memory({"SESSION_STUDIO_DEFAULT_MALLOC": "1"}) is False


def test_the_huge_page_heap_refuses_a_pad_glibc_cannot_take() -> None:
    """Twice the pad is glibc's trim threshold, an int: 1 GB would wrap to a negative one."""
    helper = pytest.importorskip("session_studio.core._bulkindex")
    for pad in (1 << 30, 2 << 20):
        with pytest.raises(ValueError, match="pad from 4 MB to under 1 GB"):
            helper.huge_page_heap(pad, 1 << 20)
