"""Guard against Qt binding refcount bugs that crash long-running sessions.

PySide6 6.12.0 released a reference to None on every QCoreApplication.processEvents()
call; on Python 3.11 (where None is not immortal) a long session then aborts with
"Fatal Python error: none_dealloc". pyproject excludes that release; this test keeps
any future binding with the same bug out.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, QTimer


def test_event_processing_keeps_none_and_bool_refcounts(qapp) -> None:
    ticks: list[int] = []
    timer = QTimer()
    timer.setInterval(0)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(500):
        QCoreApplication.processEvents()
        timer.isActive()
    timer.stop()
    assert ticks
    assert sys.getrefcount(None) - none_before > -50
    assert sys.getrefcount(True) - true_before > -50
