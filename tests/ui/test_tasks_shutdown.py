"""Closing the window stops its workers before the interpreter goes (TaskRunner.shutdown)."""

from __future__ import annotations

import threading
from typing import Any

from session_studio.ui.tasks import Operation, TaskRunner


def test_shutdown_cancels_running_operations_and_waits_for_their_workers(qtbot: Any) -> None:
    runner = TaskRunner()
    started, stopped = threading.Event(), threading.Event()

    def work(op: Operation) -> str:
        started.set()
        op.cancelled.wait(10)  # a cooperative worker: stops when cancelled (bounded, should it never be)
        stopped.set()
        return "stopped"

    work.wants_op = True  # type: ignore[attr-defined]
    got: list[Any] = []
    runner.op(work).on_success(got.append).start()
    assert started.wait(5)
    assert runner.busy
    assert runner.shutdown(5000)
    assert stopped.is_set() and not runner.busy
    qtbot.wait(50)
    assert got == []  # a cancelled operation's result is dropped


def test_shutdown_gives_up_on_a_worker_that_does_not_stop(qtbot: Any) -> None:
    runner = TaskRunner()
    started, release = threading.Event(), threading.Event()

    def stuck() -> bool:
        started.set()
        return release.wait(10)  # looks at nothing

    runner.op(stuck).start()
    assert started.wait(5)
    assert not runner.shutdown(100)  # bounded: the window still closes
    release.set()
    assert runner.wait_idle(5000)


def test_shutdown_never_cancels_a_write(qtbot: Any) -> None:
    """A commit being written when the window closes finishes, and its result is still reported."""
    runner = TaskRunner()
    started, release = threading.Event(), threading.Event()

    def write() -> str:
        started.set()
        release.wait(5)
        return "written"

    got: list[str] = []
    op = runner.op(write, pool="write").on_success(got.append).start()
    assert started.wait(5)
    threading.Timer(0.1, release.set).start()
    assert runner.shutdown(5000)
    assert not op.cancelled.is_set()
    qtbot.waitUntil(lambda: got == ["written"], timeout=3000)
