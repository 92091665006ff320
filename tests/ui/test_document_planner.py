from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextLayout

from session_studio.ui import document
from session_studio.ui.document import SessionDocument
from session_studio.ui.planner import PlannerPanel
from session_studio.ui.why import explain_cut

from .conftest import write_session


def _doc(qtbot: Any, runner: Any, path: Path) -> SessionDocument:
    d = SessionDocument(runner)
    d.open(str(path))
    qtbot.waitUntil(lambda: d.state is not None)
    return d


def test_split_turn_plan(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    st = d.state
    assert st.cut.is_split_turn and st.cut.turn_start_index == 2
    marks = st.marks
    assert marks[st.path[st.cut.first_kept_index]] == "cut"
    assert marks[st.path[2]] == "turn_start"
    assert "prefix" in marks.values()
    assert not st.nothing_to_compact
    html = explain_cut(st)
    assert "Split turn" in html and "budget reached" in html
    qtbot.waitUntil(lambda: d.preparation is not None)
    assert d.preparation.is_split_turn


def test_slider_replans_instantly(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    before = d.state.cut.first_kept_index
    with qtbot.waitSignal(d.plan_changed):
        d.set_params(keep=2000)
    assert d.state.cut.first_kept_index > before
    d.set_params(keep=10_000_000)
    assert d.state.nothing_to_compact


def test_manual_cut_and_invalid_reason(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    tool_result = d.state.path[4]
    assert "tool result" in (d.set_manual_cut(tool_result) or "")
    assert d.set_manual_cut(d.state.path[2]) is None
    assert d.state.manual and not d.state.cut.is_split_turn
    assert "Manual cut" in explain_cut(d.state)
    d.clear_manual_cut()
    assert not d.state.manual


def test_example_d_quirk(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    spec = [("user", 10), ("assistant", 10), ("user", 10), ("assistant", 10), ("toolResult", 25000)]
    d = _doc(qtbot, runner, write_session(tmp_path / "d.jsonl", spec))
    d.set_params(keep=100)
    assert d.state.nothing_to_compact
    assert any(q.code == "12.1.2" for q in d.state.quirks)


def test_example_c_quirk(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    spec = [
        ("user", 100),
        ("assistant", 100),
        {"type": "thinking_level_change", "thinkingLevel": "high"},
        ("user", 100),
        ("assistant", 100),
    ]
    d = _doc(qtbot, runner, write_session(tmp_path / "c.jsonl", spec))
    d.set_params(keep=150)
    assert d.state.cut.first_kept_index == 2 and d.state.cut.is_split_turn
    assert any(q.code == "12.1.1" for q in d.state.quirks)


def test_planner_panel_follows_state(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    p = PlannerPanel()
    qtbot.addWidget(p)
    p.set_state(d.state)
    assert p.keep.value() == 20000
    assert "split turn" in p.cut_title.text()
    with qtbot.waitSignal(p.params_changed) as b:
        p.keep.spin.setValue(5000)
    assert b.args == [5000, None, None]


def test_live_append_keeps_selection(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    d.select(3)
    n = len(d.session.records)
    with open(split_turn_session, "a", encoding="utf-8") as fh:
        fh.write(
            '{"type":"message","id":"new1","parentId":"e'
            + f"{n - 1:04d}"
            + '","timestamp":"2025-01-02T00:00:00.000Z",'
            '"message":{"role":"user","content":"more","timestamp":1}}\n'
        )
    with qtbot.waitSignal(d.appended, timeout=3000):
        d.refresh()
    assert len(d.session.records) == n + 1
    assert d.selected == 3
    assert d.state.path[-1] == n


def test_load_failure_is_reported(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    d = SessionDocument(runner)
    with qtbot.waitSignal(d.load_failed) as b:
        d.open(str(tmp_path / "missing.jsonl"))
    failure = b.args[0]
    assert "Cannot open" in failure.title
    assert "exists and is readable" in failure.text


def test_manual_cut_after_metadata_is_the_engines_cut(qtbot: Any, runner: Any, tmp_path: Path) -> None:
    """Issue 7: a manual cut on the user right after a model_change. The window showed first kept =
    that user, no split, 4 messages; pi (and the engine) move the cut onto the model_change: a split
    turn with 2 messages + a turn prefix of 2."""
    spec = [
        ("user", 100),
        ("assistant", 100),
        ("user", 100),
        ("assistant", 100),
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        ("user", 100),
        ("assistant", 100),
    ]
    d = _doc(qtbot, runner, write_session(tmp_path / "m.jsonl", spec))
    assert d.set_manual_cut(d.state.path[5]) is None
    cut = d.state.cut
    assert (cut.first_kept_index, cut.turn_start_index, cut.is_split_turn) == (4, 2, True)
    assert d.state.marks[d.state.path[4]] == "cut"
    qtbot.waitUntil(lambda: d.preparation is not None)
    prep = d.preparation
    assert (len(prep.messages_to_summarize), len(prep.turn_prefix_messages)) == (2, 2)
    assert "Split turn" in explain_cut(d.state)


def test_slider_drag_is_debounced_to_one_plan(qtbot: Any) -> None:
    p = PlannerPanel()
    qtbot.addWidget(p)
    sent: list[tuple[Any, Any, Any]] = []
    p.params_changed.connect(lambda *a: sent.append(a))
    for v in range(1000, 6000, 500):  # a drag: one value per step
        p.keep.slider.setValue(v)
    assert sent == []
    qtbot.waitUntil(lambda: len(sent) == 1, timeout=1000)
    assert sent == [(5500, None, None)]


def test_settings_source_is_shown_as_written(qtbot: Any) -> None:
    """The note names pi's settings (and paths from them): shown literally, never as double-escaped markup."""
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_source("keepRecentTokens from pi's settings (/tmp/<b>x</b>/settings.json)")
    img = panel.source_note.grab()  # painted, not only set
    assert not img.isNull()
    assert (
        panel.source_note.text()
        == "Defaults: keepRecentTokens from pi's settings (/tmp/<b>x</b>/settings.json)"
    )
    assert panel.source_note.textFormat() == Qt.TextFormat.PlainText


def test_an_option_in_the_note_is_never_broken_across_lines(qtbot: Any) -> None:
    """Qt breaks a wrapped line after a hyphen: at the planner's width the note read "or with --"
    above "context-window". At no width may a line end inside the option."""
    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_source(
        "keepRecentTokens/reserveTokens from pi's settings; context window 200,000 (model unknown: "
        "set it in the Context window box, or with --context-window)"
    )
    note = panel.source_note
    assert note.text().replace("\u2060", "").endswith("or with --context-window)")
    for width in range(120, 400, 2):
        layout = QTextLayout(note.text(), note.font())
        layout.beginLayout()
        ends = []
        while (line := layout.createLine()).isValid():
            line.setLineWidth(width)
            ends.append(note.text()[line.textStart() : line.textStart() + line.textLength()])
        layout.endLayout()
        for text in ends[:-1]:
            assert not text.rstrip().endswith(("--", "-\u2060-\u2060", "context-", "context-\u2060")), (
                width,
                ends,
            )


class _WaitRecorded(threading.Event):
    waits = 0

    def wait(self, timeout: float | None = None) -> bool:
        type(self).waits += 1
        return True


class _LoadOp:
    """What load_session asks of its Operation, for a load run in a worker."""

    def __init__(self) -> None:
        self.runner = SimpleNamespace(synchronous=False)
        self.cancelled = threading.Event()
        self.heads: list[Any] = []

    def report_interim(self, head: Any) -> None:
        object.__setattr__(head, "shown", _WaitRecorded())
        self.heads.append(head)

    def report(self, done: int, total: int, text: str = "") -> None:
        pass


@pytest.mark.parametrize("in_children", [True, False])
def test_a_heads_paint_is_waited_for_only_when_the_rest_is_indexed_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_children: bool
) -> None:
    """Issue 11 (plan usable within 2x the CLI): the load gave the GUI thread 150 ms to paint a big
    file's head before indexing the rest, so that the indexing would not take the GIL from it; scan
    processes do not take it, and that wait was 150-360 ms of every open of a big file. It is left
    only where the rest is indexed in this process."""
    path = write_session(tmp_path / "s.jsonl", [("user", 40), ("assistant", 40)] * 200)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 2)
    monkeypatch.setattr(document, "indexed_in_children", lambda _size: in_children)
    _WaitRecorded.waits = 0
    op = _LoadOp()
    res = document.load_session(str(path), op=op)  # type: ignore[arg-type]
    assert len(op.heads) == 1 and len(res.session.records) == 400
    assert _WaitRecorded.waits == (0 if in_children else 1)


def test_big_files_are_indexed_in_children_for_the_window() -> None:
    """The files the window indexes in scan processes: big ones (their values are re-read on
    demand); smaller ones are read, values kept, in the loading thread."""
    from session_studio.core import session as core_session

    big = max(core_session.PARALLEL_MIN_BYTES, core_session.KEEP_VALUES_MAX_BYTES) + 1
    assert core_session.indexed_in_children(big) is (os.name == "posix")
    assert not core_session.indexed_in_children(core_session.KEEP_VALUES_MAX_BYTES)


def test_planner_shows_no_settings_before_a_plan(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    """While a big file loads there is no plan and no settings yet (pi's come with the file's
    folder): the boxes said 0 / 0 / 0, which reads like settings; they say "—" until the plan."""
    p = PlannerPanel()
    qtbot.addWidget(p)
    p.set_state(None)
    texts = [p.keep.spin.text(), p.reserve.spin.text(), p.window_spin.text()]
    assert texts == ["—", "—", "—"]
    d = _doc(qtbot, runner, split_turn_session)
    p.set_state(d.state)
    assert p.keep.spin.text() == f"{d.state.keep:,}" and p.window_spin.text() == f"{d.state.window:,}"
    d.set_params(0, None, None)  # keepRecentTokens 0 is a setting: shown as 0, not "—"
    p.set_state(d.state)
    assert p.keep.spin.value() == 0 and p.keep.spin.text() == "0"
    p.set_state(None, waiting="Planned when the whole file is read")
    assert p.keep.spin.text() == "—"
    assert "Planned when the whole file is read" in p.cut_title.text()


def test_a_short_planner_panel_scrolls_instead_of_cutting_its_texts(
    qtbot: Any, runner: Any, split_turn_session: Path
) -> None:
    """With the context timeline shown the panel got short and its wrapped texts (the pi version's
    reason, the cut's lines) were squeezed and cut off mid-line. The settings, cut and rules now
    scroll; each wrapped label keeps the height its text needs, and the buttons stay in view."""
    from PySide6.QtWidgets import QApplication, QLabel

    d = _doc(qtbot, runner, split_turn_session)
    p = PlannerPanel()
    qtbot.addWidget(p)
    p.set_state(d.state)
    p.resize(330, 320)
    p.show()
    QApplication.processEvents()
    wrapped = [lb for lb in p.findChildren(QLabel) if lb.wordWrap() and lb.text() and lb.isVisible()]
    assert len(wrapped) >= 3
    for lb in wrapped:
        assert lb.height() >= lb.heightForWidth(lb.width()), lb.text()[:60]
    assert p.body_scroll.verticalScrollBar().maximum() > 0
    assert p.commit_button.isVisible() and p.rect().contains(p.commit_button.geometry())
