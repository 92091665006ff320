"""Cancelling "Branch with summary" while its summary is being written writes nothing and leaves the
window able to write again: Escape in the stream dialog cancels (it only hid the dialog, and the
entry was appended when the answer came), and no second progress dialog offers a Cancel that
dropped the job's callbacks while the job went on and wrote."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QProgressDialog

from session_studio.ui.main_window import MainWindow
from session_studio.ui.preview import StreamDialog
from session_studio.ui.settings import AppSettings
from session_studio.ui.tasks import TaskRunner
from tests.cli_support import llm_server

from .conftest import settle_window

CASE = Path(__file__).resolve().parent.parent / "oracle" / "pi-1.6.0" / "cases" / "m2-edit-null.jsonl"


def test_escape_in_the_stream_dialog_cancels_the_branch_summary(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    work = tmp_path / "s.jsonl"
    shutil.copy(CASE, work)
    monkeypatch.setattr(MainWindow, "ask_yes_no", lambda *a, **k: True)
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.open_path(str(work))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.doc.preparing, timeout=20000)
    s = w.doc.session
    path = w.doc.state.path
    target = next(i for i in path[len(path) // 2 :] if s.records[i].role == "assistant")
    w.doc.select(target)
    before = work.read_bytes()
    with llm_server("trickle") as srv:
        w.set_custom_provider({"kind": "openai", "base_url": srv.openai_url, "model": "m", "key_env": ""})
        w.a_branch_sum.trigger()
        qtbot.waitUntil(lambda: isinstance(w.last_dialog, StreamDialog) and bool(srv.requests), timeout=10000)
        dlg = w.last_dialog
        qtbot.wait(700)  # past the moment a write's generic progress dialog would show
        assert not [
            d for d in QApplication.topLevelWidgets() if isinstance(d, QProgressDialog) and d.isVisible()
        ]
        qtbot.keyClick(dlg, Qt.Key.Key_Escape)
        assert dlg.isVisible() and dlg.status.text() == "Cancelling…"
        qtbot.waitUntil(lambda: not w.doc.writing, timeout=5000)
        assert dlg.status.text() == "Cancelled: nothing was written."  # not "Failed or cancelled"
        runner.wait_idle()
    assert work.read_bytes() == before
    assert w.a_branch_sum.isEnabled() and w.a_label.isEnabled()  # the window can write again
