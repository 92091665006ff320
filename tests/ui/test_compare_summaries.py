"""Issue 10 #3: candidate summaries of the same plan side by side (Preview ▸ Compare summaries).

Each candidate streams in its own worker; one failing or being cancelled leaves the others
going; what each kept and its "after" context come from core; only the one committed is written.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox

from session_studio.core.summary_sections import summary_tokens
from session_studio.engine import requested_headings
from session_studio.llm.prompts import (
    HISTORY_HEADINGS,
    TURN_PREFIX_CONTINUATION_HEADINGS,
    TURN_PREFIX_HEADINGS,
)
from session_studio.ui.main_window import MainWindow
from session_studio.ui.preview import build_context_pair
from session_studio.ui.summary_candidates import CandidatePane
from session_studio.ui.summary_comparison import SummaryComparison
from tests.cli_support import LlmServer, llm_server

from .conftest import settle_window


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The titles of the questions the window asked (each answered yes)."""
    asked: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append(title)
        return True

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    return asked


@pytest.fixture
def dialogs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Message boxes the window opened (a candidate's failure belongs in its pane, not in one)."""
    shown: list[str] = []

    def record(box: QMessageBox) -> int:
        shown.append(box.text())
        return 0

    monkeypatch.setattr(QMessageBox, "exec", record)
    monkeypatch.setattr(QMessageBox, "open", record)
    return shown


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> Any:
    """A window whose tasks run in real worker threads (candidates run side by side)."""
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.tasks import TaskRunner

    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg" / "s.ini"), runner, sessions_root=str(tmp_path / "none"))

    def settle(w: MainWindow) -> None:
        w.comparison.cancel_all()
        settle_window(qtbot, w)

    qtbot.addWidget(w, before_close_func=settle)
    w.resize(1280, 800)
    w.show()
    return w


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _open_compare(qtbot: Any, w: MainWindow, path: Path, profile: str = "0.80.2") -> SummaryComparison:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    if profile != "0.80.2":
        w.doc.set_profile(pin=profile)
    qtbot.waitUntil(lambda: w.doc.preparation is not None, timeout=5000)
    assert w.doc.state is not None and w.doc.state.key.profile == profile
    w.tabs.setCurrentWidget(w.preview)
    w.preview.show_compare()
    return w.comparison


def _custom(pane: CandidatePane, srv: LlmServer) -> None:
    pane.set_provider("custom")
    pane.custom_values = {"kind": "openai", "base_url": srv.openai_url, "model": "m", "key_env": ""}


def _done(comp: SummaryComparison, pane: CandidatePane) -> bool:
    run = comp.runs[pane]
    return (
        run.outcome is not None and run.view is not None and run.view.kept is not None and run.view_op is None
    )


def _type_at_end(qtbot: Any, pane: CandidatePane, text: str) -> None:
    pane.summary.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(pane.summary, text)


@pytest.mark.parametrize("profile", ["0.80.2", "1.6.0"])
def test_two_candidates_stream_side_by_side_and_the_chosen_one_is_the_only_write(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[str], profile: str
) -> None:
    comp = _open_compare(qtbot, window, split_turn_session, profile)
    a, b = comp.pane("A"), comp.pane("B")
    assert a.provider_key() == b.provider_key() == "offline"
    b.instructions.setText("the token bar")  # pi's /compact <instructions>, for B only
    before = split_turn_session.read_bytes()
    a.generate_button.click()
    b.generate_button.click()
    assert a.running and b.running  # each in its own worker, at the same time
    comp.refresh_view(a)  # an edit signal while streaming: no "after" size of a part of the text
    assert a.after_title.text() == "<b>After</b>" and comp.runs[a].view_op is None
    qtbot.waitUntil(lambda: _done(comp, a) and _done(comp, b), timeout=20000)
    assert split_turn_session.read_bytes() == before  # nothing written by generating
    assert "Requested focus: the token bar" in b.text() and "the token bar" not in a.text()

    st = window.doc.state
    assert st is not None
    prefix = TURN_PREFIX_CONTINUATION_HEADINGS if profile == "1.6.0" else TURN_PREFIX_HEADINGS
    for pane in (a, b):
        run = comp.runs[pane]
        assert run.outcome is not None and run.view is not None and run.view.kept is not None
        # the "after" context is the single preview's: what committing this text makes pi rebuild
        want = build_context_pair(st, pane.text(), run.outcome)
        assert run.view.pair == want
        final = dataclasses.replace(run.outcome, summary=pane.text())
        assert run.view.pair is not None and run.view.pair.after_context == final.context_after().to_json()
        assert pane.after.toPlainText().startswith(want.after_text[:200].split("\n")[0])
        # what it kept: every heading the split turn's requests asked for, under this profile
        kept = run.view.kept
        assert requested_headings(run.outcome.draft) == HISTORY_HEADINGS + prefix
        assert [s.heading for s in kept.sections] == list(HISTORY_HEADINGS + prefix)
        assert kept.missing_sections == () and kept.read_files.intact and kept.modified_files.intact
        assert kept.tokens == summary_tokens(pane.text())
        assert f"≈{kept.tokens:,} tokens" in pane.status.text()
        assert "missing" not in pane.kept_title.text()
    assert comp.runs[a].view.pair.after_text != comp.runs[b].view.pair.after_text  # type: ignore[union-attr]

    _type_at_end(qtbot, b, " B, edited.")
    n = len(_lines(split_turn_session))
    chosen = b.text()
    outcome_b = comp.runs[b].outcome
    assert outcome_b is not None
    expected = dataclasses.replace(outcome_b, summary=chosen).entry().to_json_dict()
    b.commit_button.click()
    assert answers == ["Commit candidate B"]
    qtbot.waitUntil(lambda: len(_lines(split_turn_session)) == n + 1, timeout=5000)
    entry = _lines(split_turn_session)[-1]
    assert entry["type"] == "compaction" and entry["summary"] == chosen
    assert entry == json.loads(json.dumps(expected))  # exactly B's entry: its draft, id and text
    qtbot.waitUntil(lambda: b not in comp.runs)  # committed: its pane is gone with the others
    # the others were discarded: a fresh pair of candidates for the new plan
    assert [p.name for p in comp.view.panes] == ["A", "B"]
    assert all(comp.runs[p].outcome is None and not p.text() for p in comp.view.panes)
    assert "Candidate B was committed" in comp.pane("A").status.text()
    window.runner.wait_idle()
    assert len(_lines(split_turn_session)) == n + 1


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("error", "The model is overloaded"),  # the server refuses: its own message
        ("broken", "ended before it was complete"),  # the stream stops half way
    ],
)
def test_a_failing_candidate_shows_its_error_in_its_pane_and_the_other_commits(
    qtbot: Any,
    window: MainWindow,
    split_turn_session: Path,
    answers: list[str],
    dialogs: list[str],
    mode: str,
    said: str,
) -> None:
    comp = _open_compare(qtbot, window, split_turn_session)
    a, b = comp.pane("A"), comp.pane("B")
    n = len(_lines(split_turn_session))
    with llm_server(mode, text="The model is overloaded, try again later") as srv:
        _custom(a, srv)
        a.generate_button.click()
        b.generate_button.click()
        qtbot.waitUntil(lambda: a.failure_label.isVisible() and _done(comp, b), timeout=20000)
    assert said in a.failure_label.text()
    assert a.failure_label.text().startswith("Candidate A could not be generated")
    assert a.status.text() == "Failed" and not a.commit_button.isEnabled()
    assert not b.failure_label.isVisible() and b.commit_button.isEnabled()
    assert dialogs == []  # in its pane only
    assert len(_lines(split_turn_session)) == n
    chosen = b.text()
    b.commit_button.click()
    qtbot.waitUntil(lambda: len(_lines(split_turn_session)) == n + 1, timeout=5000)
    entry = _lines(split_turn_session)[-1]
    assert entry["type"] == "compaction" and entry["summary"] == chosen
    window.runner.wait_idle()
    assert len(_lines(split_turn_session)) == n + 1


def test_cancelling_one_candidate_leaves_the_other_streaming(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[str]
) -> None:
    comp = _open_compare(qtbot, window, split_turn_session)
    a, b = comp.pane("A"), comp.pane("B")
    n = len(_lines(split_turn_session))
    with llm_server("trickle") as stuck, llm_server("slow", text="## Goal\nFinish the port. " * 8) as slow:
        _custom(a, stuck)
        _custom(b, slow)
        a.generate_button.click()
        b.generate_button.click()
        qtbot.waitUntil(lambda: len(stuck.requests) >= 1 and len(slow.requests) >= 1, timeout=10000)
        start = time.monotonic()
        a.cancel_button.click()
        qtbot.waitUntil(lambda: not a.running, timeout=3000)
        assert time.monotonic() - start < 2.0
        assert a.status.text().startswith("Cancelled") and comp.runs[a].outcome is None
        assert b.running and b.cancel_button.isEnabled()  # B goes on
        qtbot.waitUntil(lambda: _done(comp, b), timeout=20000)
    assert "Finish the port." in b.text()
    assert len(_lines(split_turn_session)) == n  # nothing written by generating or cancelling
    chosen = b.text()
    b.commit_button.click()
    qtbot.waitUntil(lambda: len(_lines(split_turn_session)) == n + 1, timeout=5000)
    assert _lines(split_turn_session)[-1]["summary"] == chosen
    window.runner.wait_idle()


def test_a_third_candidate_runs_alongside_the_first_two(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    comp = _open_compare(qtbot, window, split_turn_session)
    comp.view.add_button.click()
    panes = comp.view.panes
    assert [p.name for p in panes] == ["A", "B", "C"]
    assert all(p.remove_button.isVisible() for p in panes)  # more than two: each can go
    with llm_server("trickle") as s1, llm_server("trickle") as s2, llm_server("trickle") as s3:
        for pane, srv in zip(panes, (s1, s2, s3), strict=True):
            _custom(pane, srv)
            pane.generate_button.click()
        # every candidate has its request out at once: none waits for another to end
        qtbot.waitUntil(lambda: all(s.requests for s in (s1, s2, s3)), timeout=5000)
        for pane in panes:
            pane.cancel_button.click()
        qtbot.waitUntil(lambda: not any(p.running for p in panes), timeout=3000)
    assert all(p.status.text().startswith("Cancelled") for p in panes)


def test_a_candidate_made_for_another_plan_cannot_be_committed_and_edits_are_named(
    qtbot: Any, window: MainWindow, split_turn_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, str]] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append((title, text))
        return True

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    comp = _open_compare(qtbot, window, split_turn_session)
    a, b = comp.pane("A"), comp.pane("B")
    a.generate_button.click()
    b.generate_button.click()
    qtbot.waitUntil(lambda: _done(comp, a) and _done(comp, b), timeout=20000)
    keep = window.doc.keep
    window.planner.keep.spin.setValue(4000)  # the cut moves: both were made for another plan
    window.planner.flush_params()
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    assert comp.is_stale(a) and not a.commit_button.isEnabled()
    assert "another plan" in a.commit_button.toolTip() and "Made for cut at path #" in a.status.text()
    n = len(_lines(split_turn_session))
    a.commit_requested.emit()  # even if asked directly: nothing is written
    assert asked == [] and len(_lines(split_turn_session)) == n
    window.planner.keep.spin.setValue(keep)  # back to the plan they were made for
    window.planner.flush_params()
    qtbot.waitUntil(lambda: a.commit_button.isEnabled() and b.commit_button.isEnabled(), timeout=5000)
    assert a.status.text().endswith("tokens (pi's estimate)")  # no longer "made for another plan"
    _type_at_end(qtbot, a, " mine")
    a.flush()
    b.commit_button.click()
    assert [t for t, _ in asked] == ["Commit candidate B"]
    assert "<b>A</b> has text you edited" in asked[0][1]
    qtbot.waitUntil(lambda: len(_lines(split_turn_session)) == n + 1, timeout=5000)


def test_the_single_summarys_size_is_pis_estimate_in_utf16_units(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    from tests.ui.conftest import write_session

    emoji = "🚀" * 60  # two UTF-16 units each: pi counts 120 chars where Python counts 60
    spec: list[Any] = [
        {"type": "message", "message": {"role": "user", "content": f"Ship it {emoji}", "timestamp": 1}},
        ("assistant", 3000),
        ("user", 400),
        ("assistant", 400),
    ]
    path = write_session(tmp_path / "emoji.jsonl", spec)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    window.planner.keep.spin.setValue(700)
    window.planner.flush_params()
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    window.tabs.setCurrentWidget(window.preview)
    window.preview.provider.setCurrentIndex(window.preview.provider.findData("offline"))
    window.preview.generate_button.click()
    qtbot.waitUntil(lambda: window.doc.outcome is not None, timeout=20000)
    text = window.doc.outcome.summary
    assert emoji in text
    assert f"≈{summary_tokens(text):,} tokens" in window.preview.status.text()


def test_leaving_the_file_asks_for_edited_candidates_and_discards_them(
    qtbot: Any,
    window: MainWindow,
    split_turn_session: Path,
    branching_session: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = [False, True]
    asked: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append(title)
        return script.pop(0)

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    comp = _open_compare(qtbot, window, split_turn_session)
    a = comp.pane("A")
    a.generate_button.click()
    qtbot.waitUntil(lambda: _done(comp, a), timeout=20000)
    _type_at_end(qtbot, a, " mine")
    assert window.open_path(str(branching_session)) is None  # declined: nothing changes
    assert asked == ["Discard the edited candidates?"] and a.text().endswith(" mine")
    window.open_path(str(branching_session))
    qtbot.waitUntil(lambda: window.doc.path == str(branching_session) and window.doc.state is not None)
    assert a not in comp.runs and [p.name for p in comp.view.panes] == ["A", "B"]
    assert all(comp.runs[p].outcome is None and not p.text() for p in comp.view.panes)


def test_closing_the_window_cancels_the_candidates_requests(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    comp = _open_compare(qtbot, window, split_turn_session)
    a = comp.pane("A")
    with llm_server("trickle") as srv:
        _custom(a, srv)
        a.generate_button.click()
        qtbot.waitUntil(lambda: bool(srv.requests), timeout=10000)
        token = comp.runs[a].cancel
        assert token is not None and not token.cancelled
        window.close()
        assert token.cancelled
        qtbot.waitUntil(lambda: not a.running, timeout=3000)


def test_two_candidates_fit_side_by_side_in_a_default_sized_window(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """At the window's default size (1440 × 900) both candidates are shown whole: a candidate
    needed 384 pixels (title, provider and buttons on one row) and B lay behind a sideways scroll."""
    window.resize(1440, 900)
    window._fit_splitter()
    comp = _open_compare(qtbot, window, split_turn_session)
    qtbot.waitUntil(lambda: comp.view.scroll_area.viewport().width() > 0)
    qtbot.wait(50)
    assert comp.view.scroll_area.horizontalScrollBar().maximum() == 0
    for pane in comp.view.panes:
        assert pane.visibleRegion().boundingRect().width() == pane.width()
        assert pane.commit_button.isVisible()


def _wheel(target: Any, dy: int) -> None:
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    at = QPointF(target.width() / 2, target.height() / 2)
    event = QWheelEvent(
        at,
        QPointF(target.mapToGlobal(at.toPoint())),
        QPoint(0, 0),
        QPoint(0, dy),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(target, event)


def test_candidates_stand_one_under_the_other_when_too_narrow_for_side_by_side(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Under 1200 px the middle column had no room for two candidates: B lay behind a sideways
    scroll. There the panes now stand one under the other, each as wide as the view (scrolled
    down), and side by side again once the window is wide enough."""
    from session_studio.ui.summary_candidates import PANE_MIN_WIDTH

    window.resize(1100, 720)
    window._fit_splitter()
    comp = _open_compare(qtbot, window, split_turn_session)
    view = comp.view
    qtbot.waitUntil(lambda: view.scroll_area.viewport().width() > 0)
    qtbot.wait(50)
    assert view.scroll_area.width() < 2 * PANE_MIN_WIDTH + 20  # (what this test is about)
    a, b = view.panes
    assert view.row.orientation() == Qt.Orientation.Vertical
    assert view.scroll_area.horizontalScrollBar().maximum() == 0
    assert b.y() >= a.y() + a.height() and a.width() == b.width() == view.row.width()
    assert view.scroll_area.verticalScrollBar().maximum() > 0  # B is below, scrolled to
    # the wheel over A's summary (nothing to scroll there) goes on down to B, and back up
    outer = view.scroll_area.verticalScrollBar()
    outer.setValue(0)
    _wheel(a.summary.viewport(), -120)
    assert outer.value() > 0
    a.summary.setPlainText("\n".join(f"line {k}" for k in range(400)))  # A's own text scrolls first
    inner = a.summary.verticalScrollBar()
    inner.setValue(0)
    outer.setValue(0)
    _wheel(a.summary.viewport(), -120)
    assert inner.value() > 0 and outer.value() == 0
    inner.setValue(inner.maximum())
    _wheel(a.summary.viewport(), -120)
    assert outer.value() > 0
    window.resize(1600, 900)
    window._fit_splitter()
    qtbot.waitUntil(lambda: view.row.orientation() == Qt.Orientation.Horizontal)
    qtbot.wait(50)
    assert view.scroll_area.horizontalScrollBar().maximum() == 0 and b.x() >= a.x() + a.width()


def test_candidates_name_and_offer_pis_default_model(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The candidates' lists name pi's default model like the Preview's and, until the user chose a
    summariser, offer what the Preview offers: pi's model where pi's settings name one."""
    import os

    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text('{"defaultProvider": "openai", "defaultModel": "gpt-4o"}')
    comp = _open_compare(qtbot, window, split_turn_session)
    for pane in (comp.pane("A"), comp.pane("B"), comp.add_candidate()):
        assert pane.provider_key() == "pi"
        assert pane.provider.itemText(pane.provider.findData("pi")) == "pi's default model (openai/gpt-4o)"


def test_a_candidates_summariser_is_named_whole_in_its_tooltip(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Two candidates share the centre pane: the provider box cuts "pi's default model (…)" short,
    so its tooltip names the chosen summariser whole, as chosen and as pi's settings name it."""
    import os

    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text('{"defaultProvider": "openai", "defaultModel": "gpt-4o"}')
    comp = _open_compare(qtbot, window, split_turn_session)
    pane = comp.pane("A")
    assert pane.provider.toolTip() == "pi's default model (openai/gpt-4o)"
    pane.set_provider("offline")
    assert pane.provider.toolTip() == pane.provider.currentText() != ""
    assert "default model" not in pane.provider.toolTip()


def test_tab_goes_from_the_compare_tab_through_add_candidate_and_each_candidate(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The Compare summaries page joined the focus chain at its end: from its tab, Tab went to the
    planner, and reached Add candidate and the candidates last (the keyboard audit)."""
    comp = _open_compare(qtbot, window, split_turn_session)
    view = comp.view
    a, b = view.panes
    tabs = window.preview.modes.tabBar()
    window.activateWindow()
    tabs.setFocus()
    qtbot.waitUntil(tabs.hasFocus)
    owners: list[str] = []
    for _ in range(60):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        now = window.focusWidget()
        owner = (
            "add"
            if now is view.add_button
            else "A"
            if a.isAncestorOf(now)
            else "B"
            if b.isAncestorOf(now)
            else "other"
        )
        if not owners or owners[-1] != owner:
            owners.append(owner)
        if owner == "other":
            break
    assert owners == ["add", "A", "B", "other"], owners
