"""The cyclic GC is paused while a preparation makes a long path's messages (on a 100k-entry path
its collections were 1.3 s of 3.1 s), counted across threads, and on again afterwards."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from session_studio.core import file_ops
from session_studio.core.gc_pause import gc_paused, hold_gc_pause, release_gc_pause
from session_studio.core.preparation import plan_compaction
from session_studio.core.projected_plan import plan_projected_compaction
from tests.core.util import A, T, U, call, session_of


@pytest.mark.parametrize("projected", [False, True], ids=["0.80.2", "1.6.0"])
def test_a_preparation_runs_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, projected: bool
) -> None:
    s = session_of(
        *[e for n in range(6) for e in (U(400), A(blocks=[call("read", path=f"f{n}.py")]), T(800), A(300))]
    )
    seen: list[bool] = []
    real = file_ops.FileOps.add_from_message

    def recording(self: Any, *args: Any) -> None:
        seen.append(gc.isenabled())
        real(self, *args)

    monkeypatch.setattr(file_ops.FileOps, "add_from_message", recording)
    path = s.path_indices(s.leaf_index())
    plan = plan_projected_compaction(s, path) if projected else plan_compaction(s, path)
    assert gc.isenabled()
    prep = plan.prepare(1000)
    assert prep is not None and prep.file_lists[0]  # the read files were collected
    assert seen and not any(seen)
    assert gc.isenabled()


def test_pauses_in_two_threads_end_when_both_are_done() -> None:
    """One thread's pause ending while another's runs leaves the collector off."""
    assert gc.isenabled()
    inside = threading.Event()
    finish = threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            finish.wait(5)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(5)
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's pause still holds
    finish.set()
    t.join()
    assert gc.isenabled()
    hold_gc_pause()
    release_gc_pause()
    release_gc_pause()  # an unmatched release changes nothing
    assert gc.isenabled()
