"""The context timeline in the window: shown from the View menu, hover names the entry, click selects
it in the tree and the token bar, and it follows the sliders, the pi profile and live reload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QToolTip

from tests.ui.conftest import write_session


def _session(tmp_path: Path) -> Path:
    spec: list[Any] = [("user", 3000), ("assistant", 3000)]
    for _ in range(6):
        spec += [("user", 400), ("assistant", 2000)]
    spec.append(
        {"type": "compaction", "summary": "s" * 4000, "firstKeptEntryId": "e0011", "tokensBefore": 19000}
    )
    for _ in range(5):
        spec += [("user", 300), ("assistant", 1500)]
    return write_session(tmp_path / "timeline.jsonl", spec)


def _shown(window: Any, qtbot: Any, path: Path) -> Any:
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    assert not window.timeline.isVisible()
    window.a_timeline.trigger()  # View → Context timeline (Ctrl+T)
    assert window.timeline.isVisible()
    qtbot.waitUntil(lambda: window.timeline.chart.timeline is not None)
    return window.timeline.chart


def _hover(chart: Any, x: int, y: int) -> None:
    """The pointer moves over the chart (with mouse tracking on). Sent to the chart itself: the
    offscreen platform routes QTest.mouseMove by its own idea of the window's place, which misses
    a panel that appeared in the same event-loop turn."""
    at = QPointF(x, y)
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        at,
        QPointF(chart.mapToGlobal(at)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(chart, event)


def _point_x(chart: Any, record: int) -> tuple[int, int]:
    lay = chart.current_layout()
    tl = chart.timeline
    k = list(tl.records).index(record)
    return round(lay.x(tl.positions[k])), round(lay.y(tl.tokens[k]))


def test_hover_names_the_entry_and_click_selects_it_in_tree_and_bar(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    chart = _shown(window, qtbot, _session(tmp_path))
    s = window.doc.session
    tl = chart.timeline
    assert len(tl.drops) == 1 and tl.drops[0].tokens_before == 19000
    target = s.get_index("e0005")  # an assistant message before the compaction
    x, y = _point_x(chart, target)
    _hover(chart, x, y)
    qtbot.waitUntil(lambda: QToolTip.isVisible())
    text = QToolTip.text()
    assert "assistant message e0005" in text and "provider usage" in text
    assert f"{s.records[target].usage_tokens:,}" in text
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert window.doc.selected == target
    assert window.tree_model.record_of(window.tree.currentIndex()) == target
    assert window.bar.selected == target and chart.selected == target
    # the drop names the compaction and selects it
    _, drop_x, _, _ = chart.current_layout().drops[0]
    assert "compaction e0014" in chart.describe_at(drop_x, 50)
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=QPoint(round(drop_x), 50))
    assert window.doc.selected == s.get_index("e0014")


def test_follows_sliders_profile_and_live_reload(window: Any, qtbot: Any, tmp_path: Path) -> None:
    path = _session(tmp_path)
    chart = _shown(window, qtbot, path)
    d = window.doc
    history = window.timeline.history
    before = chart.timeline
    assert before.limits.threshold == d.state.threshold
    d.set_params(keep=1000, reserve=30000, window=150000)
    moved = chart.timeline
    assert window.timeline.history is history  # a slider does not rebuild the history
    assert (moved.limits.context_window, moved.limits.threshold) == (150000, 120000)
    assert before.planned is None  # keepRecentTokens 20000 keeps everything after the compaction
    assert moved.planned is not None and moved.planned.tokens_before == d.state.context_tokens
    assert moved.planned.first_kept_record == d.state.first_kept_record
    d.set_profile(pin="1.6.0")
    qtbot.waitUntil(lambda: chart.timeline.profile == "1.6.0")
    # pi appends a turn: the new assistant message appears on the chart
    n = len(chart.timeline)
    with path.open("a", encoding="utf-8") as f:
        for k, role in ((100, "user"), (101, "assistant")):
            msg: dict[str, Any] = {
                "role": role,
                "content": [{"type": "text", "text": "x" * 400}],
                "timestamp": 1,
            }
            if role == "assistant":
                msg |= {"stopReason": "stop", "usage": {"input": 5000, "output": 10, "totalTokens": 5010}}
            parent = "e0024" if k == 100 else "e0100"
            f.write(
                json.dumps(
                    {
                        "type": "message",
                        "id": f"e0{k}",
                        "parentId": parent,
                        "timestamp": "2025-01-01T11:00:00.000Z",
                        "message": msg,
                    }
                )
                + "\n"
            )
    d.refresh()
    qtbot.waitUntil(lambda: len(chart.timeline) == n + 1)
    assert chart.timeline.tokens[-1] == 5010.0 and chart.timeline.from_usage[-1] == 1
    # the counts wrap as whole parts; how many points are usage is said in their tooltip
    usage = chart.timeline.usage_count()
    qtbot.waitUntil(lambda: f"{n + 1}\u00a0answers" in window.timeline.status.text())
    assert (
        f"{usage:,} at the provider's usage and {n + 1 - usage:,} estimated"
        in window.timeline.status.toolTip()
    )
    window.a_timeline.trigger()
    assert not window.timeline.isVisible()


def test_selected_branch_shows_the_branch_of_an_entry_off_the_active_path(
    window: Any, qtbot: Any, branching_session: Path
) -> None:
    chart = _shown(window, qtbot, branching_session)
    d = window.doc
    s = d.session
    active = d.loaded_state.planner
    off = next(r.index for r in s.records if r.index not in active.positions and r.type == "message")
    d.select(off)
    assert chart.timeline.leaf_record == active.leaf_index  # the active path until asked
    window.timeline.branch_box.setChecked(True)
    qtbot.waitUntil(lambda: chart.timeline.leaf_record != active.leaf_index)
    shown = window.timeline.built_for
    assert off in shown.positions and not s.children(s.records[chart.timeline.leaf_record].id)
    assert "branch to" in window.timeline.status.text()
    # its plan uses the document's settings on that path
    d.set_params(reserve=40000)
    assert chart.timeline.limits.reserve_tokens == 40000 and window.timeline.built_for is shown
    # a click on the chart selects an entry of the shown branch and keeps the branch
    x, y = _point_x(chart, chart.timeline.records[0])
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert d.selected == chart.timeline.records[0] and window.timeline.built_for is shown
    window.timeline.branch_box.setChecked(False)
    qtbot.waitUntil(lambda: chart.timeline.leaf_record == active.leaf_index)


def test_compaction_labels_stay_above_the_marker_row(window: Any, qtbot: Any, tmp_path: Path) -> None:
    """The label of a compaction that drops the context near the foot is lifted over the model
    change triangles standing under it (the layout places it, measured in the chart's font)."""
    from PySide6.QtGui import QFontMetricsF

    from session_studio.core.timeline_layout import LABEL_DESCENT, MARKER_HALF_WIDTH, MARKER_HEIGHT

    spec: list[Any] = [("user", 3000), ("assistant", 3000)]
    for _ in range(6):
        spec += [("user", 400), ("assistant", 2000)]
    spec.append(
        {"type": "compaction", "summary": "s" * 400, "firstKeptEntryId": "e0013", "tokensBefore": 19000}
    )
    spec += [
        {"type": "model_change", "provider": "openai", "modelId": "gpt-4o"},
        ("user", 30),
        ("assistant", 40),
    ]
    spec += [{"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}, ("user", 30)]
    chart = _shown(window, qtbot, write_session(tmp_path / "labels.jsonl", spec))
    lay = chart.current_layout()
    (label,) = lay.drop_labels
    assert label is not None and len(lay.markers) == 2
    right = label.x + QFontMetricsF(chart.label_font()).horizontalAdvance(label.text)
    under = [x for _, x in lay.markers if x - MARKER_HALF_WIDTH <= right and x + MARKER_HALF_WIDTH >= label.x]
    assert under, "the test needs a marker under the label"
    assert label.baseline + LABEL_DESCENT <= lay.area.bottom - MARKER_HEIGHT


def test_the_key_wraps_at_a_narrow_window_instead_of_cutting_items_off(qtbot: Any) -> None:
    """At 1024 px the key's last items ("planned" mid-word, "branch summary", "model change") were
    cut off by the status beside it. Now items that do not fit start a row of their own, and the
    key asks for the rows' height."""
    from session_studio.ui.timeline import _Legend

    legend = _Legend()
    qtbot.addWidget(legend)
    fm = legend.fontMetrics()
    wide = legend.sizeHint().width()
    assert legend.heightForWidth(wide) == legend._ROW
    for width in (wide - 1, 480, 300, legend.minimumSizeHint().width()):
        places = legend._places(width)
        rows = places[-1][1] + 1
        assert rows > 1 and legend.heightForWidth(width) == rows * legend._ROW
        for (_key, label), (x, _row) in zip(legend._ITEMS, places, strict=True):
            assert x + 22 + fm.horizontalAdvance(label) <= width, (width, label)


def test_the_chart_says_it_is_building_until_the_timeline_is_there(
    window: Any, qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """It said "No timeline" for the ~25 s a 1 GB session's timeline took to build."""
    from session_studio.ui import timeline as timeline_ui

    window.open_path(str(_session(tmp_path)))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    chart = window.timeline.chart
    seen: list[bool] = []
    real = timeline_ui.build_timeline

    def build(*args: Any, **kwargs: Any) -> Any:
        seen.append(chart.building)  # what the chart says while the worker builds
        return real(*args, **kwargs)

    monkeypatch.setattr(timeline_ui, "build_timeline", build)
    window.a_timeline.trigger()
    qtbot.waitUntil(lambda: chart.timeline is not None)
    assert seen == [True] and not chart.building


def test_the_timeline_leaves_the_preview_room_in_a_small_window(
    qtbot: Any, window: Any, tmp_path: Path
) -> None:
    """At 960×700 the timeline took ~230 px and left the Preview's summary editor 40 px. It takes a
    quarter of the panes' height (at least 130 px), the user can drag it, and it keeps that."""
    window.resize(960, 700)
    qtbot.wait(20)
    _shown(window, qtbot, _session(tmp_path))
    window.tabs.setCurrentWidget(window.preview)
    qtbot.wait(20)
    timeline, panes = window.vsplit.sizes()
    assert 150 <= timeline <= max(150, (timeline + panes) // 4 + 1), (timeline, panes)
    assert window.timeline.height() >= window.timeline.minimumSizeHint().height()  # nothing clipped
    assert window.preview.summary.height() >= 60
    window.vsplit.moveSplitter(300, 1)  # the user drags it down
    dragged = window.vsplit.sizes()[0]
    window.a_timeline.trigger()
    window.a_timeline.trigger()  # hidden and shown again: the dragged height
    assert window.vsplit.sizes()[0] == dragged
