"""Issue 9 #7 (custom instructions in the window) and #9 (typing and Generate stay responsive)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QTextCursor

from session_studio.core import Session
from session_studio.engine import draft_compaction
from session_studio.llm import OfflineSummarizer
from session_studio.ui import actions
from session_studio.ui.main_window import MainWindow
from session_studio.ui.preview import SUMMARY_EDIT_DEBOUNCE_MS

from .conftest import write_session


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None or w.doc.state.nothing_to_compact, timeout=5000)


def _generate(qtbot: Any, w: MainWindow) -> None:
    w.tabs.setCurrentWidget(w.preview)
    w.preview.provider.setCurrentIndex(w.preview.provider.findData("offline"))
    w.preview.generate_button.click()
    qtbot.waitUntil(lambda: w.doc.outcome is not None, timeout=20000)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every SummaryRequest the window's summariser receives."""
    seen: list[Any] = []

    class Recording(OfflineSummarizer):
        def summarize(self, request: Any, **kw: Any) -> Any:
            seen.append(request)
            return super().summarize(request, **kw)

    monkeypatch.setattr(actions, "make_summarizer_for", lambda *a, **k: Recording())
    return seen


def test_focus_field_reaches_the_summary_request_like_the_cli(
    qtbot: Any, window: MainWindow, split_turn_session: Path, recorded: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    focus = "Focus on the database migration decisions"
    qtbot.keyClicks(window.preview.focus, focus)
    _generate(qtbot, window)
    # what `compact --instructions TEXT` drafts for the same plan
    cli = draft_compaction(
        Session.open(str(split_turn_session)), keep_recent_tokens=window.doc.keep, custom_instructions=focus
    )
    history = [r for r in recorded if r.kind in ("history", "update")]
    assert len(history) == 1
    assert focus in history[0].prompt_text
    assert history[0].prompt_text == cli.requests[0].prompt_text


def test_empty_focus_sends_no_additional_focus(
    qtbot: Any, window: MainWindow, split_turn_session: Path, recorded: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    window.preview.focus.setText("   ")
    _generate(qtbot, window)
    cli = draft_compaction(Session.open(str(split_turn_session)), keep_recent_tokens=window.doc.keep)
    assert recorded[0].prompt_text == cli.requests[0].prompt_text


@pytest.fixture
def thousand_entries(tmp_path: Path) -> Path:
    spec: list[Any] = []
    for _ in range(250):
        spec += [("user", 120), ("assistant", 200), ("toolResult", 400), ("assistant", 150)]
    return write_session(tmp_path / "thousand.jsonl", spec)


def test_typing_in_the_summary_does_no_per_keystroke_work(
    qtbot: Any, window: MainWindow, thousand_entries: Path
) -> None:
    _open(qtbot, window, thousand_entries)
    assert len(window.doc.session.records) >= 1000
    _generate(qtbot, window)
    qtbot.wait(SUMMARY_EDIT_DEBOUNCE_MS + 100)
    plans: list[object] = []
    replans: list[object] = []
    window.doc.after_changed.connect(plans.append)
    window.doc.plan_changed.connect(replans.append)
    ed = window.preview.summary
    ed.setFocus()
    ed.moveCursor(QTextCursor.MoveOperation.End)
    typed = " the user adds thirty letters!"
    assert len(typed) == 30
    t0 = time.perf_counter()
    qtbot.keyClicks(ed, typed)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.5, f"30 keystrokes took {elapsed:.2f} s"
    assert plans == []  # nothing derived while typing
    qtbot.waitUntil(lambda: len(plans) >= 1, timeout=3000)
    qtbot.wait(SUMMARY_EDIT_DEBOUNCE_MS + 100)
    assert len(plans) == 1  # once, after the pause
    assert replans == []  # the text changes the summary's size, not the plan
    assert window.doc.summary_text.endswith(typed)
    summary_tokens = next(t for r, kind, t in plans[0].after_tokens if kind == "compactionSummary")
    assert summary_tokens == pytest.approx(-(-len(window.doc.summary_text) // 4))


_STALL_PROBE = r"""
import os, sys, time, json
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from session_studio.ui.main_window import MainWindow
from session_studio.ui.settings import AppSettings
from session_studio.ui.tasks import TaskRunner
d = Path(sys.argv[2])
w = MainWindow(AppSettings(d / "s.ini"), TaskRunner(), sessions_root=str(d / "none"))
w.resize(1600, 1000)
w.show()
def wait(cond, t=30.0):
    end = time.time() + t
    while not cond() and time.time() < end:
        app.processEvents()
        time.sleep(0.002)
w.open_path(sys.argv[1])
wait(lambda: w.doc.preparation is not None)
w.tabs.setCurrentWidget(w.preview)
wait(lambda: w.preview.pair is not None and not w.runner.busy)
gaps, last = [], [time.perf_counter()]
def beat():
    now = time.perf_counter()
    gaps.append(now - last[0])
    last[0] = now
hb = QTimer()
hb.setInterval(5)
hb.timeout.connect(beat)
hb.start()
last[0] = time.perf_counter()
w.preview.generate_button.click()
wait(lambda: w.doc.outcome is not None)
wait(lambda: not w.runner.busy)
end = time.time() + 0.3
while time.time() < end:
    app.processEvents()
    time.sleep(0.002)
print(json.dumps({"max_gap_ms": max(gaps) * 1000, "summary": bool(w.doc.summary_text)}))
"""


@pytest.mark.slow
def test_generate_does_not_stall_the_gui(thousand_entries: Path, tmp_path: Path) -> None:
    """A fresh process (nothing imported yet), a threaded runner, a 5 ms heartbeat during Generate.

    Measured ~80 ms on a loaded 2-core machine; before the fix the first Generate imported the
    summariser stack on the GUI thread (> 1 s). The bound leaves room for a busy CI machine.
    """
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SESSION_STUDIO_CONFIG_DIR=str(tmp_path / "cfg"))
    out = subprocess.run(
        [sys.executable, "-c", _STALL_PROBE, str(thousand_entries), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["summary"]
    assert res["max_gap_ms"] < 300, res
    print(f"Generate: longest GUI stall {res['max_gap_ms']:.0f} ms")
