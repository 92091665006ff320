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
        qtbot.waitUntil(lambda: w.preview.status.text().startswith("Cancelled"), timeout=3000)
        assert time.monotonic() - start < 2.0
        assert w.preview.generate_button.isEnabled() and w.doc.outcome is None
        runner.wait_idle()
    assert split_turn_session.read_bytes() == before


def test_a_failed_generation_leaves_the_summary_as_it_was(
    qtbot: Any, tmp_path: Path, split_turn_session: Path, monkeypatch: Any
) -> None:
    """A second Generate whose answer broke off left its 20 characters in the editor as the
    summary ("edited"), Commit stayed enabled and wrote them, without the turn prefix. The
    editor and the document keep the summary made before, which commits."""
    import json

    failures: list[str] = []
    monkeypatch.setattr(
        "session_studio.ui.summary_generation.report_failure", lambda parent, f: failures.append(f.title)
    )
    asked: list[str] = []
    monkeypatch.setattr(MainWindow, "ask_yes_no", lambda self, title, *a, **k: asked.append(title) or True)
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.open_path(str(split_turn_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and w.doc.preparation is not None, timeout=20000)
    with llm_server("ok", text="## Goal\nThe first summary, whole.") as srv:
        w.set_custom_provider({"kind": "openai", "base_url": srv.openai_url, "model": "m", "key_env": ""})
        w.preview.generate_button.click()
        qtbot.waitUntil(
            lambda: w.doc.outcome is not None and w.preview.generate_button.isEnabled(), timeout=10000
        )
        first = w.doc.summary_text
        assert "The first summary, whole." in first
        srv.mode = "broken"  # half an answer, then the connection closes
        w.preview.generate_button.click()
        qtbot.waitUntil(lambda: bool(failures) and w.preview.generate_button.isEnabled(), timeout=10000)
        runner.wait_idle()
    qtbot.wait(400)  # past the editor's debounce: no late "edit" of the partial text
    assert w.preview.summary.toPlainText() == first and w.doc.summary_text == first
    assert w.preview.status.text().startswith("Failed") and not w.preview.is_edited()
    assert not w.doc.summary_is_stale and w.a_commit.isEnabled()
    w.a_commit.trigger()
    qtbot.waitUntil(lambda: '"compaction"' in split_turn_session.read_text().splitlines()[-1], timeout=10000)
    runner.wait_idle()
    entry = json.loads(split_turn_session.read_text().splitlines()[-1])
    assert entry["type"] == "compaction" and entry["summary"] == first
    assert asked == ["Commit compaction"]  # no "Replace your summary?" for the failed text
