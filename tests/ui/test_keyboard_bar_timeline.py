"""The token bar and the context timeline by keyboard: both take the focus (Tab), a cursor moves over
their items with the arrows, Page keys, Home/End (the timeline's Ctrl+arrows go from compaction to
compaction), says the item as its hover text does, and Return selects the entry, as a click does.
Before, both were for the mouse only: a keyboard user never reached a segment's or a point's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolTip

from session_studio.ui.main_window import MainWindow
from tests.ui.test_timeline_window import _session, _shown

Key = Qt.Key


def _tab_to(qtbot: Any, widget: Any) -> None:
    """Reach ``widget`` as a keyboard user does: Tab from the control before it."""
    before = widget.previousInFocusChain()
    while not (before.focusPolicy() & Qt.FocusPolicy.TabFocus and before.isVisible() and before.isEnabled()):
        before = before.previousInFocusChain()
    before.setFocus()
    qtbot.waitUntil(before.hasFocus)
    # through the window, as the keyboard does: the press reaches `before`, the release the widget
    qtbot.keyClick(widget.window().windowHandle(), Key.Key_Tab)
    qtbot.waitUntil(widget.hasFocus)


def _bar_ready(qtbot: Any, window: MainWindow, path: Path) -> Any:
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    bar = window.bar
    _tab_to(qtbot, bar)
    return bar


def test_the_token_bar_takes_the_focus_and_starts_at_the_selected_entry(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    bar = _bar_ready(qtbot, window, split_turn_session)
    assert bar.focusPolicy() & Qt.FocusPolicy.TabFocus
    sp = bar.cursor_span()
    assert sp is not None and sp.key == window.doc.selected  # the leaf, selected at open
    assert bar.cursor_text().startswith("now: ")
    qtbot.waitUntil(QToolTip.isVisible)
    assert QToolTip.text() == bar.cursor_text()  # said where the hover text would be


def test_arrows_and_home_end_walk_the_context_items_and_return_selects(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    bar = _bar_ready(qtbot, window, split_turn_session)
    items = bar.layout_.items
    qtbot.keyClick(bar, Key.Key_Home)
    assert bar.cursor_span().item == 0
    qtbot.keyClick(bar, Key.Key_Right)
    qtbot.keyClick(bar, Key.Key_Right)
    sp = bar.cursor_span()
    assert sp.item == 2 and sp.key == items.keys[2]
    assert QToolTip.text() == bar.cursor_text() and "path #" in bar.cursor_text()
    qtbot.keyClick(bar, Key.Key_Left)
    assert bar.cursor_span().item == 1
    qtbot.keyClick(bar, Key.Key_End)
    assert bar.cursor_span().item == len(items.keys) - 1
    qtbot.keyClick(bar, Key.Key_Right)  # at the end it stays
    assert bar.cursor_span().item == len(items.keys) - 1
    qtbot.keyClick(bar, Key.Key_Home)
    qtbot.keyClick(bar, Key.Key_PageDown)  # a tenth of the bar: further than one item
    paged = bar.cursor_span().item
    assert paged >= 1
    qtbot.keyClick(bar, Key.Key_Return)
    assert window.doc.selected == items.keys[paged]  # as a click on the segment
    assert bar.hasFocus() and bar.cursor_span().item == paged  # the cursor stays where it was


def test_down_goes_to_the_after_row_and_up_back_to_the_same_item(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    bar = _bar_ready(qtbot, window, split_turn_session)
    st = window.doc.state
    assert st is not None and st.first_kept_item is not None
    qtbot.keyClick(bar, Key.Key_End)
    qtbot.keyClick(bar, Key.Key_Down)
    assert bar.cursor_text().startswith("after the compaction: ")
    kept = bar.cursor_span()
    assert kept.item == len(bar.layout_.items.keys) - 1  # the newest item is kept: the same one
    qtbot.keyClick(bar, Key.Key_Home)  # the after row starts with the projected summary
    assert bar.cursor_span().key < 0 and "Compaction summary (projected)" in bar.cursor_text()
    selected = window.doc.selected
    qtbot.keyClick(bar, Key.Key_Return)  # the projected summary is no entry: nothing to select
    assert window.doc.selected == selected
    qtbot.keyClick(bar, Key.Key_End)
    qtbot.keyClick(bar, Key.Key_Up)
    assert bar.cursor_text().startswith("now: ") and bar.cursor_span().item == kept.item


def test_each_step_is_said_to_a_screen_reader(
    qtbot: Any, window: MainWindow, split_turn_session: Path, screen_reader: list[str]
) -> None:
    bar = _bar_ready(qtbot, window, split_turn_session)
    qtbot.keyClick(bar, Key.Key_Home)
    assert screen_reader[-1] == bar.cursor_text() and "path #" in screen_reader[-1]
    count = len(screen_reader)
    qtbot.keyClick(bar, Key.Key_Right)
    assert (
        len(screen_reader) == count + 1
    )  # once a step: the text shown again at the key's release is not said


def test_a_window_shortcut_takes_the_cursor_s_text_away(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Ctrl+T on the bar left its text standing over the timeline it opened, until Qt's timeout."""
    bar = _bar_ready(qtbot, window, split_turn_session)
    qtbot.keyClick(bar, Key.Key_Home)
    qtbot.waitUntil(QToolTip.isVisible)
    qtbot.keyClick(window.windowHandle(), Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    assert window.timeline.isVisible()  # the shortcut did its work
    qtbot.waitUntil(lambda: not QToolTip.isVisible())


def test_tab_passes_through_the_bar_and_other_keys_go_on(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    bar = _bar_ready(qtbot, window, split_turn_session)
    qtbot.keyClick(bar, Key.Key_Tab)
    assert not bar.hasFocus()
    _tab_to(qtbot, bar)
    selected = window.doc.selected
    qtbot.keyClick(bar, Key.Key_Up, Qt.KeyboardModifier.AltModifier)  # Go ▸ Previous entry still works
    qtbot.waitUntil(lambda: window.doc.selected != selected)
    assert bar.cursor_span().key == window.doc.selected  # and the cursor follows the selection


def test_the_bar_keeps_the_keys_through_a_reload_but_is_not_the_first_focus(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The session page's first widget that takes the keys is now the bar: a session opens with the
    keys on its tree all the same, and a user at work on the bar keeps them when the file is read
    again."""
    bar = _bar_ready(qtbot, window, split_turn_session)
    window.a_reload.trigger()
    qtbot.waitUntil(lambda: window.doc.state is not None and not window.runner.busy)
    qtbot.wait(50)
    assert bar.hasFocus()


def test_the_focused_bar_draws_its_cursor(qtbot: Any, window: MainWindow, split_turn_session: Path) -> None:
    from session_studio.ui.theme import current_theme

    bar = _bar_ready(qtbot, window, split_turn_session)
    qtbot.keyClick(bar, Key.Key_Home)
    sp = bar.cursor_span()
    image = bar.grab().toImage()
    focus = current_theme().focus.rgb()
    top = bar.layout_.row_y - 2
    row = [image.pixelColor(x, top).rgb() for x in range(sp.x - 2, sp.x + max(sp.w, 3) + 2)]
    assert focus in row
    bar.clearFocus()
    qtbot.waitUntil(lambda: not bar.hasFocus())
    image = bar.grab().toImage()
    assert focus not in [image.pixelColor(x, top).rgb() for x in range(sp.x - 2, sp.x + max(sp.w, 3) + 2)]


def test_the_timeline_takes_the_keyboard(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    chart = _shown(window, qtbot, _session(tmp_path))
    tl = chart.timeline
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    _tab_to(qtbot, chart)
    assert chart.key_cursor is not None and chart.key_cursor.record == window.doc.selected
    assert QToolTip.text() == chart.cursor_text() != ""
    qtbot.keyClick(chart, Key.Key_Home)
    assert chart.key_cursor.kind == "point" and chart.key_cursor.index == 0
    qtbot.keyClick(chart, Key.Key_Right)
    assert chart.key_cursor.index == 1 and QToolTip.text() == chart.cursor_text()
    qtbot.keyClick(chart, Key.Key_Right, Qt.KeyboardModifier.ControlModifier)  # the next compaction
    assert chart.key_cursor.kind == "drop" and chart.key_cursor.record == tl.drops[0].record
    assert "ompact" in chart.cursor_text()
    qtbot.keyClick(chart, Key.Key_Return)
    assert window.doc.selected == tl.drops[0].record  # as a click on the drop
    qtbot.keyClick(chart, Key.Key_Right)  # on from the drop: the first point after it
    assert chart.key_cursor.kind == "point" and tl.positions[chart.key_cursor.index] > tl.drops[0].position
    qtbot.keyClick(chart, Key.Key_Left, Qt.KeyboardModifier.ControlModifier)
    assert chart.key_cursor.kind == "drop"
    qtbot.keyClick(chart, Key.Key_End)
    assert chart.key_cursor.index == len(tl) - 1
    qtbot.keyClick(chart, Key.Key_Return)
    assert window.doc.selected == tl.records[len(tl) - 1]
