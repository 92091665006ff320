"""Issue 9 #20 / 12 #6 in the window: Cancel stops a summary from a server that never finishes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from session_studio.ui.main_window import MainWindow
from session_studio.ui.settings import AppSettings
from session_studio.ui.tasks import TaskRunner
from tests.cli_support import llm_server

from .conftest import settle_window


def test_cancel_stops_generating_from_a_trickling_server(
    qtbot: Any, tmp_path: Path, split_turn_session: Path
) -> None:
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.open_path(str(split_turn_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and w.doc.preparation is not None, timeout=20000)
    before = split_turn_session.read_bytes()
    with llm_server("trickle") as srv:
        w.set_custom_provider({"kind": "openai", "base_url": srv.openai_url, "model": "m", "key_env": ""})
        w.preview.generate_button.click()
        qtbot.waitUntil(lambda: len(srv.requests) == 2, timeout=10000)  # the split turn's two calls
        assert w.preview.cancel_button.isEnabled()
        start = time.monotonic()
        w.preview.cancel_button.click()
        qtbot.waitUntil(lambda: w.preview.status.text() == "Cancelled", timeout=3000)
        assert time.monotonic() - start < 2.0
        assert w.preview.generate_button.isEnabled() and w.doc.outcome is None
        runner.wait_idle()
    assert split_turn_session.read_bytes() == before
