"""Background work goes behind the foreground thread's paints (core.priority; issue 11: a paint of
the tree took 250-350 ms while the 1 GB session was re-planned in a worker)."""

from __future__ import annotations

import threading
import time

import pytest

from session_studio.core import priority
from session_studio.core.priority import foreground, yield_to_foreground


def test_a_worker_waits_at_its_step_while_foreground_work_runs() -> None:
    passed = threading.Event()

    def worker() -> None:
        yield_to_foreground()
        passed.set()

    with foreground():
        t = threading.Thread(target=worker)
        t.start()
        assert not passed.wait(0.1)  # held at the step for as long as the foreground works
        with foreground():  # nested marks: the outer one still holds
            pass
        assert not passed.wait(0.05)
    assert passed.wait(1)  # and goes on at once after
    t.join()


def test_without_foreground_work_a_step_costs_nothing() -> None:
    t0 = time.perf_counter()
    for _ in range(10_000):
        yield_to_foreground()
    assert time.perf_counter() - t0 < 1.0  # ~1 µs each; a wait would take 0.25 s


def test_a_stuck_foreground_never_stops_the_background_for_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(priority, "FOREGROUND_WAIT_LIMIT", 0.05)
    waited: list[float] = []

    def worker() -> None:
        t0 = time.perf_counter()
        yield_to_foreground()
        waited.append(time.perf_counter() - t0)

    with foreground():
        t = threading.Thread(target=worker)
        t.start()
        t.join(2)  # the foreground never lets go here
    assert waited and 0.04 <= waited[0] < 1.0


def test_an_exception_in_the_foreground_still_lets_the_workers_go() -> None:
    with pytest.raises(RuntimeError), foreground():
        raise RuntimeError("a paint failed")
    assert priority._idle.is_set()


def test_the_foreground_thread_itself_never_waits_at_a_step() -> None:
    """Core code a paint calls on the GUI thread (a path walked for a row) goes on at its steps."""
    with foreground():
        t0 = time.perf_counter()
        for _ in range(100):
            yield_to_foreground()
        assert time.perf_counter() - t0 < 0.2
