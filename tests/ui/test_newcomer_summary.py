"""Issue 9 #3: an edited summary is never thrown away (re-plans, pi appending, Generate again)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from session_studio.ui.main_window import MainWindow

from .conftest import append_as_pi


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None or w.doc.state.nothing_to_compact, timeout=3000)


def _generate(qtbot: Any, w: MainWindow) -> None:
    w.tabs.setCurrentWidget(w.preview)
    w.preview.provider.setCurrentIndex(w.preview.provider.findData("offline"))
    before = w.doc.outcome
    w.preview.generate_button.click()
    qtbot.waitUntil(lambda: w.doc.outcome is not None and w.doc.outcome is not before, timeout=20000)


def _type_at_end(qtbot: Any, w: MainWindow, text: str) -> None:
    ed = w.preview.summary
    ed.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(ed, text)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Scripted answers to the window's questions: [(title, answer)] consumed in order, then yes."""
    script: list[Any] = []
    asked: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append(title)
        return bool(script.pop(0)) if script else True

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    return [script, asked]


def test_edit_survives_keep_change_and_use_it_anyway_commits_current_plan(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    made_for = window.doc.plan_signature()
    assert window.preview.status.text().startswith("Summary ready · ")
    _type_at_end(qtbot, window, " my own words")
    qtbot.waitUntil(lambda: window.doc.summary_text.endswith(" my own words"))
    edited = window.doc.summary_text
    assert window.preview.status.text().startswith(f"Summary edited · {len(edited):,} chars · ")
    # move keepRecentTokens so that the cut moves: the summary was made for another plan now
    window.planner.keep.spin.setValue(4000)
    window.planner.flush_params()  # the slider is debounced
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=3000)
    now = window.doc.plan_signature()
    assert now is not None and made_for is not None and now != made_for
    assert window.preview.summary.toPlainText().endswith(" my own words")
    assert window.doc.summary_is_stale
    note = window.preview.stale_note
    assert note.isVisible()
    assert f"made for cut at path #{made_for.first_kept_pos}" in note.label.text()
    assert (
        f"since then the cut moved to path #{now.first_kept_pos} ({now.first_kept_id})" in note.label.text()
    )
    assert window.planner.commit_button.isEnabled()
    assert "another plan" in window.planner.commit_button.toolTip()
    n = len(_lines(split_turn_session))
    note.use_button.click()
    assert answers[1] == ["Use this summary anyway?"]
    lines = _lines(split_turn_session)
    assert len(lines) == n + 1
    entry = lines[-1]
    assert entry["type"] == "compaction"
    assert entry["summary"].endswith(" my own words")
    assert entry["firstKeptEntryId"] == now.first_kept_id


def test_use_it_anyway_can_be_declined(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    window.planner.keep.spin.setValue(4000)
    window.planner.flush_params()  # the slider is debounced
    before = split_turn_session.read_bytes()
    answers[0].append(False)
    window.planner.commit_button.click()
    assert answers[1] == ["Use this summary anyway?"]
    assert split_turn_session.read_bytes() == before


def test_moving_back_to_the_plan_makes_the_summary_current_again(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    keep = window.doc.keep
    window.planner.keep.spin.setValue(4000)
    window.planner.flush_params()  # the slider is debounced
    assert window.doc.summary_is_stale
    window.planner.keep.spin.setValue(keep)
    window.planner.flush_params()  # the slider is debounced
    assert not window.doc.summary_is_stale
    assert not window.preview.stale_note.isVisible()


def test_pi_appending_keeps_the_edited_summary(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    _type_at_end(qtbot, window, " kept")
    window.preview.flush_summary()
    append_as_pi(split_turn_session)
    window.doc.refresh()
    assert window.preview.summary.toPlainText().endswith(" kept")
    assert window.doc.summary_text.endswith(" kept")
    assert window.doc.summary_is_stale
    assert window.preview.stale_note.isVisible()
    assert window.planner.commit_button.isEnabled()


def test_regenerate_asks_before_replacing_an_edit_and_undo_brings_it_back(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    generated = window.preview.summary.toPlainText()
    _type_at_end(qtbot, window, " edit")
    edited = window.preview.summary.toPlainText()
    assert edited == generated + " edit"
    # declined: nothing is replaced and nothing generated
    answers[0].append(False)
    outcome = window.doc.outcome
    window.preview.generate_button.click()
    assert answers[1] == ["Replace your summary?"]
    assert window.preview.summary.toPlainText() == edited
    assert window.doc.outcome is outcome
    # accepted: replaced, and one Ctrl+Z restores the edited text
    _generate(qtbot, window)
    assert answers[1] == ["Replace your summary?", "Replace your summary?"]
    assert window.preview.summary.toPlainText() != edited
    qtbot.keyClick(window.preview.summary, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.preview.summary.toPlainText() == edited


def test_generate_without_edits_does_not_ask(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    _generate(qtbot, window)
    assert answers[1] == []


def test_another_file_does_not_inherit_the_summary(
    qtbot: Any, window: MainWindow, split_turn_session: Path, branching_session: Path
) -> None:
    """Issue 9 #12: a reopened file showed an old summary while "After" said "not generated yet"."""
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    assert window.preview.summary.toPlainText()
    _open(qtbot, window, branching_session)
    assert window.preview.summary.toPlainText() == ""
    assert window.doc.summary_text == "" and window.doc.outcome is None
    assert not window.preview.stale_note.isVisible()


def test_after_context_of_a_stale_summary_follows_the_current_plan(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    window.planner.keep.spin.setValue(4000)
    window.planner.flush_params()  # the slider is debounced
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=3000)
    assert window.doc.summary_is_stale
    st = window.doc.state
    qtbot.waitUntil(lambda: window.preview.pair is not None and window.preview.pair.after_context is None)
    kept = sum(1 for r, kind, _t in st.after_tokens if kind != "compactionSummary")
    assert window.preview.pair.after_count == kept + 1  # the summary + this plan's kept messages


def test_opening_another_file_asks_before_dropping_a_typed_summary(
    qtbot: Any, window: MainWindow, split_turn_session: Path, branching_session: Path, answers: list[Any]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    _type_at_end(qtbot, window, " mine")
    answers[0].append(False)
    assert window.open_path(str(branching_session)) is None
    assert answers[1] == ["Discard your summary?"]
    assert window.doc.path == str(split_turn_session)
    assert window.preview.summary.toPlainText().endswith(" mine")
    window.a_close.trigger()  # answered yes: closed
    assert answers[1] == ["Discard your summary?", "Discard your summary?"]
    assert window.doc.session is None and window.preview.summary.toPlainText() == ""


def test_a_file_rewritten_on_disk_keeps_settings_and_summary(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    window.planner.keep.spin.setValue(15000)
    window.planner.flush_params()  # the slider is debounced
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=3000)
    _generate(qtbot, window)
    _type_at_end(qtbot, window, " kept")
    window.preview.flush_summary()
    # rewritten in place (shorter, as an editor or a migration would): not an append
    lines = split_turn_session.read_text().splitlines(keepends=True)
    split_turn_session.write_text("".join(lines[:-1]))
    window.doc.refresh()
    qtbot.waitUntil(lambda: window.doc.session is not None and window.doc.state is not None)
    qtbot.waitUntil(lambda: len(window.doc.session.records) == len(lines) - 2)
    assert window.doc.keep == 15000
    assert window.doc.summary_text.endswith(" kept")
    assert window.preview.summary.toPlainText().endswith(" kept")
    assert window.doc.summary_is_stale


def test_partial_text_of_a_cancelled_generation_leaves_the_editor(qtbot: Any) -> None:
    """What the editor shows is what the document commits. The partial text of a cancelled or
    failed generation once became the document's summary (and a broken-off answer was committed);
    now the editor shows what it showed before, which the document still holds."""
    from session_studio.ui.preview import PreviewPane

    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.summary.setPlainText("old")
    pane.set_running(True)
    pane.stream.part.emit(0, "partial sum")
    assert pane.summary.toPlainText() == "partial sum"
    edits: list[str] = []
    pane.summary_edited.connect(edits.append)
    pane.set_running(False)  # cancelled: no finish_stream
    pane.abandon_stream()
    assert pane.summary.toPlainText() == "old"
    qtbot.wait(400)  # past the editor's debounce
    assert edits == []  # the document was never told of the partial text


def test_use_it_anyway_after_pi_appended_says_what_changed_and_keeps_the_calls_usage(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    """pi appends while a summary waits: the note says so (not the same plan twice), and the entry
    committed anyway carries the usage of the call that wrote the text, as a fresh commit does."""
    from session_studio.engine.compaction import combined_usage

    _open(qtbot, window, split_turn_session)
    window.doc.set_profile(pin="1.6.0")  # the pi that writes a compaction's usage
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    _generate(qtbot, window)
    assert window.doc.outcome.draft.profile.version == "1.6.0"
    call = {"input": 1200, "output": 300, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1500}
    window.doc.outcome.usage = [call]  # what a model's answer reports (the offline draft has none)
    made_for = window.doc.plan_signature()
    append_as_pi(split_turn_session)
    window.doc.refresh()
    qtbot.waitUntil(
        lambda: window.doc.summary_is_stale and window.preview.stale_note.isVisible(), timeout=5000
    )
    text = window.preview.stale_note.label.text()
    assert text == (
        f"This summary was made for {made_for.describe()}; "
        "since then pi appended 1 entry and the leaf moved to pi000001."
    )
    window.preview.stale_note.use_button.click()
    assert answers[1] == ["Use this summary anyway?"]
    entry = _lines(split_turn_session)[-1]
    assert entry["type"] == "compaction" and entry["parentId"] == "pi000001"
    assert entry["usage"] == combined_usage([call])


@pytest.mark.parametrize("default_yes", [True, False])
def test_return_answers_the_default_button(qtbot: Any, window: MainWindow, default_yes: bool) -> None:
    """A question whose Yes writes something unexpected (a stale summary) has Cancel as default."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    def press_return() -> None:
        box = QApplication.activeModalWidget()
        assert box is not None
        qtbot.keyClick(box, Qt.Key.Key_Return)

    QTimer.singleShot(0, press_return)
    assert window.ask_yes_no("Question", "Write it?", yes="Write", default_yes=default_yes) is default_yes


def test_after_a_commit_the_profile_note_says_why_as_the_cli_does(
    qtbot: Any, window: MainWindow, split_turn_session: Path, answers: list[Any]
) -> None:
    """A 1.6.0 commit makes a plain file a 1.6.0 one: the planner's "Read as" says the new reason."""
    from session_studio.core import Session
    from session_studio.ui.document import choose_profile

    _open(qtbot, window, split_turn_session)
    window.doc.set_profile(plain="1.6.0")  # the user's setting for plain v3 files
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    assert "plain" in window.planner.profile_note.text()
    _generate(qtbot, window)
    window.planner.commit_button.click()
    qtbot.waitUntil(lambda: _lines(split_turn_session)[-1]["type"] == "compaction", timeout=5000)
    cli = choose_profile(Session.open(str(split_turn_session)), "auto", "1.6.0")
    assert "compaction" in cli.reason
    qtbot.waitUntil(lambda: cli.reason in window.planner.profile_note.text(), timeout=5000)


def test_tab_in_the_summary_moves_on_and_edits_nothing(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    text = window.doc.summary_text
    ed = window.preview.summary
    ed.setFocus()
    qtbot.keyClick(ed, Qt.Key.Key_Tab)
    window.preview.flush_summary()
    assert ed.toPlainText() == text == window.doc.summary_text


def test_a_retry_is_said_in_the_status_line_while_generating(qtbot: Any) -> None:
    from session_studio.ui.preview import PreviewPane

    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.set_running(True)
    pane.stream.note.emit("Attempt 1 of 3 failed (the server said 429); trying again in 2 s…")
    assert pane.status.text().startswith("Attempt 1 of 3 failed")
    pane.stream.part.emit(0, "## Goal")  # the next attempt answers
    assert pane.status.text() == "Generating…"
    pane.set_running(False)
    pane.stream.note.emit("Attempt 2 of 3 failed")  # late: says nothing
    assert not pane.status.text().startswith("Attempt 2")
