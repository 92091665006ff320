"""A cancelled operation whose worker is still running stays alive until the worker's last signal
has reached the GUI thread (TaskRunner._finishing)."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from typing import Any

from session_studio.ui.tasks import TaskRunner


def test_cancelling_a_running_operation_and_dropping_it_is_safe(qtbot: Any) -> None:
    """A re-plan cancels the running preparation and starts another: the cancelled Operation, dropped
    at once, had its Python side freed while Qt still delivered a queued call to it (a segfault in
    PySide's qt_metacall on a null object, 2–3 runs in 4 of the test below it was found by)."""
    runner = TaskRunner()
    got: list[str] = []
    for k in range(4):
        started = threading.Event()

        def slow(started: threading.Event = started) -> str:
            started.set()
            time.sleep(0.2)  # a long path's preparation
            return "slow"

        op = runner.op(slow).on_success(got.append)
        op.start()
        assert started.wait(5)
        op.cancel()
        assert not runner.busy  # busy indicators end at once
        del op
        gc.collect()
        runner.op(lambda k=k: f"next {k}").on_success(got.append).start()
        qtbot.waitUntil(lambda k=k: f"next {k}" in got, timeout=5000)
    assert runner.pool("compute").waitForDone(5000)
    qtbot.waitUntil(lambda: not runner._finishing, timeout=5000)  # each one let go once it reported back
    assert got == [f"next {k}" for k in range(4)]  # a cancelled operation's result is dropped


def test_an_operation_cancelled_before_its_delayed_start_is_let_go(qtbot: Any) -> None:
    runner = TaskRunner()
    ran: list[int] = []
    op = runner.op(lambda: ran.append(1)).start(after_ms=30)
    op.cancel()
    assert not runner.busy
    qtbot.waitUntil(lambda: not runner._finishing, timeout=5000)
    assert ran == []  # never ran


def test_a_write_progress_dialog_has_no_cancel_and_escape_keeps_its_report(qtbot: Any) -> None:
    """A write cannot be abandoned halfway: its progress dialog offers no Cancel, and Escape (which
    hides the dialog) leaves the operation reporting what it did."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QProgressDialog, QPushButton, QWidget

    parent = QWidget()
    qtbot.addWidget(parent)
    runner = TaskRunner()
    release = threading.Event()
    got: list[str] = []

    def write() -> str:
        release.wait(5)
        return "written"

    op = runner.op(write, pool="write").with_progress("Writing", parent, cancellable=False)
    op.on_success(got.append).start()
    qtbot.waitUntil(
        lambda: any(isinstance(d, QProgressDialog) and d.isVisible() for d in QApplication.topLevelWidgets()),
        timeout=3000,
    )
    dlg = next(d for d in QApplication.topLevelWidgets() if isinstance(d, QProgressDialog) and d.isVisible())
    assert not [b for b in dlg.findChildren(QPushButton) if b.isVisible()]
    qtbot.keyClick(dlg, Qt.Key.Key_Escape)
    release.set()
    qtbot.waitUntil(lambda: got == ["written"], timeout=5000)
    assert not op.cancelled.is_set() and not runner.busy


def test_an_operation_is_never_freed_on_its_worker_thread(qtbot: Any, monkeypatch: Any) -> None:
    """Its worker kept the last reference when the GUI thread had handled the result and let the
    operation go first: the Operation (a QObject of the GUI thread, with its timer) was destroyed on
    the pool thread (a segfault in libshiboken on a "Thread (pooled)", seen once by a keyboard
    audit). The runner now holds it until the worker has dropped every reference."""
    from session_studio.ui import tasks

    real = tasks.Operation._execute
    lingering = threading.Event()

    def execute_then_linger(self: Any) -> None:
        real(self)  # the result is on its way to the GUI thread ...
        lingering.wait(5)  # ... which handles it and lets go while this worker is still here

    monkeypatch.setattr(tasks.Operation, "_execute", execute_then_linger)
    runner = TaskRunner()
    freed_on: list[str] = []
    got: list[str] = []
    op = runner.op(lambda: "done").on_success(got.append)
    # the thread that drops the last reference frees the Python side and destroys the QObject
    weakref.finalize(op, lambda: freed_on.append(threading.current_thread().name))
    op.start()
    del op
    qtbot.waitUntil(lambda: got == ["done"], timeout=5000)
    gc.collect()
    lingering.set()
    assert runner.pool("compute").waitForDone(5000)
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5000)
    assert freed_on == [threading.main_thread().name]
