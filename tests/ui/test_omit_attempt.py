"""Session ▸ Omit failed attempt: pi 1.6.0's overflow recovery omits the failed answer and its tool
results with context edits before it compacts; the window offers the same step where the plan says
pi would take it, and the plan after it is the one pi's recovery compacts."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.ui.main_window import MainWindow

from .conftest import settle_window, write_session

OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 300000 tokens > 200000 maximum"}


def _failed_session(tmp_path: Path, result_chars: int = 400) -> Path:
    calls = [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}]
    failed = {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": calls,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-test",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "timestamp": 1_700_000_100_000,
            **OVERFLOW,
        },
    }
    result = {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x" * result_chars}],
            "isError": False,
            "timestamp": 1_700_000_100_001,
        },
    }
    spec: list[Any] = [("user", 3000), ("assistant", 3000), ("user", 400), ("assistant", 500), ("user", 300)]
    return write_session(tmp_path / "failed.jsonl", [*spec, failed, result])


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.doc.preparing, timeout=10000)


@pytest.mark.parametrize("version", ["1.6.0", "0.80.2"])
def test_the_failed_attempt_is_omitted_as_pi_1_6_0_does(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    path = _failed_session(tmp_path)
    window.doc.profile_plain = version  # the file has no 1.6.0 entry: the setting decides
    _open(qtbot, window, path)
    st = window.doc.state
    assert st is not None and st.profile.version == version and st.overflow is not None
    details = window.planner.cut_details.text()
    action = window.a_omit_attempt
    if version == "0.80.2":  # context edits are 1.6.0's: offered, greyed, saying why
        assert not action.isEnabled() and "read as pi 0.80.2" in action.toolTip()
        assert "Omit failed attempt" not in details
        settle_window(qtbot, window)
        return
    assert action.isEnabled() and "Omit failed attempt appends the context edits" in details
    asked: list[str] = []

    def answer(self: MainWindow, title: str, text: str, *args: Any, **kw: Any) -> bool:
        asked.append(text)
        return len(asked) > 1  # the first time: Cancel

    monkeypatch.setattr(MainWindow, "ask_yes_no", answer)
    before = path.read_bytes()
    action.trigger()
    assert "the failed answer #5 (e0005) and its 1 tool result" in asked[0]
    # where pi's compaction then cuts (the recovery's plan, as the planner says it)
    assert "Without the failed attempt, pi&#x27;s cut leaves nothing to compact" in asked[0]
    assert path.read_bytes() == before  # cancelled: nothing written
    action.trigger()
    qtbot.waitUntil(lambda: not window.doc.writing and path.read_bytes() != before, timeout=10000)
    written = [json.loads(x) for x in path.read_bytes()[len(before) :].splitlines()]
    assert [(e["type"], e["targetId"], e["replacement"]) for e in written] == [
        ("context_edit", "e0005", None),
        ("context_edit", "e0006", None),
    ]
    # reloaded: the answer pi checks now is the one before, which needs no recovery
    qtbot.waitUntil(lambda: window.doc.state is not None and window.doc.state.overflow is None, timeout=10000)
    assert not window.a_omit_attempt.isEnabled()
    assert "Omit failed attempt" not in window.planner.cut_details.text()
    settle_window(qtbot, window)


def test_the_planner_says_where_pi_s_recovery_cuts_without_writing(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The failed answer's tool result fills this plan's kept tail; pi 1.6.0's recovery, without
    the attempt, keeps from further back: the planner says both, before anything is written."""
    path = _failed_session(tmp_path, result_chars=16_000)
    before = path.read_bytes()
    window.doc.profile_plain = "1.6.0"
    _open(qtbot, window, path)
    window.doc.set_params(2000, 16384, 200_000)
    qtbot.waitUntil(lambda: window.doc.recovery is not None, timeout=10000)
    st, recovery = window.doc.state, window.doc.recovery
    assert st is not None and recovery is not None and st.cut is not None and recovery.first_kept is not None
    assert recovery.first_kept < st.cut.first_kept_index
    details = html.unescape(window.planner.cut_details.text())
    assert f"Without the failed attempt, pi's recovery keeps from path #{recovery.first_kept}" in details
    assert f"this plan keeps from #{st.cut.first_kept_index}" in details
    assert f"this plan keeps from #{st.cut.first_kept_index}" in window.bar.accessibleDescription()
    # the pi versions page: 1.6.0's side names the recovery, 0.80.2's (which omits nothing) does not
    window.a_compare.trigger()
    shown = window.compare.comparison
    assert shown is not None
    assert "Without the failed attempt, pi's recovery keeps from path #" in shown.new.automatic
    assert "Without the failed attempt" not in shown.old.automatic
    # another keepRecentTokens: planned again (from the planner built once: the next test)
    window.doc.set_params(20_000, 16384, 200_000)
    assert window.doc.recovery is not None
    assert "finds nothing to compact and stops there, without a retry" in html.unescape(
        window.planner.cut_details.text()
    )
    assert path.read_bytes() == before
    settle_window(qtbot, window)


def test_the_recovery_is_planned_once_the_engine_is_imported_in_the_background(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's first import (~0.4 s of Python) held the GIL from the recovery's worker as the
    session was shown (130-190 ms GUI stalls on a 117 MB file): the recovery asks the window for
    it, which imports it in the background PRELOAD_AFTER_MS after the session is shown."""
    import sys

    from session_studio.engine import context_edits
    from session_studio.ui import main_window
    from session_studio.ui.write_commands import WriteCommands

    order: list[str] = []
    real_imported, real_plan = WriteCommands._engine_imported, context_edits.recovery_plan
    delays: list[int] = []
    real_call_later = window.runner.call_later

    def call_later(fn: Any, after_ms: int = 0) -> Any:
        if getattr(fn, "__qualname__", "").endswith("_engine_for_recovery.<locals>.load"):
            delays.append(after_ms)
        return real_call_later(fn, after_ms)

    monkeypatch.setattr(window.runner, "call_later", call_later)

    def imported(self: Any, module: object) -> None:
        order.append("import")
        real_imported(self, module)

    def plan(state: Any, params: Any = None) -> Any:
        order.append("plan")
        return real_plan(state, params)

    monkeypatch.setattr(WriteCommands, "_engine_imported", imported)
    monkeypatch.setattr(context_edits, "recovery_plan", plan)
    monkeypatch.delitem(sys.modules, "session_studio.engine")  # as in a window just started
    window.doc.profile_plain = "1.6.0"
    _open(qtbot, window, _failed_session(tmp_path, result_chars=16_000))
    qtbot.waitUntil(lambda: window.doc.recovery is not None, timeout=10000)
    assert order == ["import", "plan"]
    # not while the session is first shown (its paints would wait for the GIL)
    assert delays and set(delays) == {main_window.PRELOAD_AFTER_MS}
    window.doc.set_params(2000, 16384, 200_000)  # other settings: planned again
    assert "Without the failed attempt, pi" in html.unescape(window.planner.cut_details.text())
    assert order == ["import", "plan", "plan"]
    window.doc.set_params(2000, 16384, 200_000)  # the same: the answer kept
    assert order == ["import", "plan", "plan"] and window.doc.recovery is not None
    settle_window(qtbot, window)


def test_a_recovery_planned_for_a_session_that_is_gone_is_dropped(qtbot: Any, tmp_path: Path) -> None:
    """The worker's answer for a session closed (or read again) meanwhile is not shown, nor kept."""
    import session_studio.engine  # noqa: F401  (the window's background import, done)
    from session_studio.core import Session
    from session_studio.core.plan import PathPlanner, PlanParams
    from session_studio.core.profile import PROFILE_1_6_0
    from session_studio.ui.recovery_preview import RecoveryPreview
    from session_studio.ui.tasks import TaskRunner

    session = Session.open(_failed_session(tmp_path, result_chars=16_000))
    st = PathPlanner(session, profile=PROFILE_1_6_0).plan(PlanParams(keep_recent_tokens=2000))
    runner = TaskRunner()
    preview = RecoveryPreview(runner)
    said: list[Any] = []
    preview.changed.connect(said.append)
    preview.update(st)  # planned in a worker
    preview.forget()  # the session is gone before it answers
    qtbot.waitUntil(lambda: not runner.busy, timeout=10000)
    assert said == [] and preview.cut is None
    preview.update(st)
    qtbot.waitUntil(lambda: bool(said), timeout=10000)
    assert said == [preview.cut] and preview.cut is not None and preview.cut.first_kept == 1
