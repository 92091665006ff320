"""A dialog that was answered or read is deleted, not left a hidden child of the window.

Every export, provider edit, error and load-issues listing made a new dialog and kept the last
one's widgets (the listing: all of a damaged file's issues as text) for the window's lifetime, and
each theme switch re-polished all of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QTimer
from PySide6.QtWidgets import QApplication, QDialog

from session_studio.ui.errors import show_error
from session_studio.ui.main_window import MainWindow

from .conftest import side_branch_assistant


def _dialogs_left(w: MainWindow) -> list[str]:
    """The window's dialogs once Qt ran the deletes it was asked for."""
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    return [type(d).__name__ for d in w.findChildren(QDialog)]


def _reject_the_next_modal() -> None:
    def reject() -> None:
        modal = QApplication.activeModalWidget()
        if isinstance(modal, QDialog):
            modal.reject()
        else:  # exec() has not shown it yet
            QTimer.singleShot(20, reject)

    QTimer.singleShot(0, reject)


def _close_the_modal(qtbot: Any) -> None:
    qtbot.waitUntil(lambda: isinstance(QApplication.activeModalWidget(), QDialog))
    modal = QApplication.activeModalWidget()
    assert isinstance(modal, QDialog)
    modal.close()


def test_answered_and_read_dialogs_are_deleted(
    qtbot: Any, window: MainWindow, branching_session: Path, tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(branching_session.read_bytes() + b'{"type":"message", torn\n')
    window.open_path(str(damaged))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    assert _dialogs_left(window) == []

    _reject_the_next_modal()
    assert window.ask_export(str(tmp_path), "damaged", False) is None
    _reject_the_next_modal()
    window.edit_provider()
    show_error(window, "Could not write", "The disk is full.")
    _close_the_modal(qtbot)
    window.banner.details.click()  # the load issues, listed
    assert window.banner.dialog is not None
    window.banner.dialog.close()
    window.doc.select(side_branch_assistant(window))
    window.a_branch.trigger()  # "Branch here": what it did, said in a box
    _close_the_modal(qtbot)
    assert window.doc.working_leaf is not None
    assert _dialogs_left(window) == []
