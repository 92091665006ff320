"""Pane dividers by keyboard (GTK's keys for a paned): F8 puts the keys on a divider, then on the
next, and after the last back where they were; the arrows, Page keys and Home/End move it; Return
keeps it and Escape puts it back. Before, only the mouse could widen the tree or the planner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from session_studio.ui.main_window import MainWindow
from session_studio.ui.pane_keys import KeySplitterHandle

from .conftest import settle_window

Key = Qt.Key


def _press(
    qtbot: Any,
    window: MainWindow,
    key: Qt.Key,
    modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
) -> None:
    """A key as the keyboard gives it: to the window, which hands it to the focus widget or a shortcut."""
    qtbot.keyClick(window.windowHandle(), key, modifier)


def test_f8_walks_the_dividers_and_back(qtbot: Any, window: MainWindow, split_turn_session: Path) -> None:
    window.open_path(str(split_turn_session))
    qtbot.waitUntil(lambda: window.doc.state is not None and not window.doc.preparing, timeout=10000)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.tree.setFocus()
    qtbot.waitUntil(window.tree.hasFocus)
    first, second = window.splitter.handle(1), window.splitter.handle(2)
    assert isinstance(first, KeySplitterHandle) and not first.focusPolicy() & Qt.FocusPolicy.TabFocus

    _press(qtbot, window, Key.Key_F8)
    qtbot.waitUntil(first.hasFocus)
    sizes = window.splitter.sizes()
    _press(qtbot, window, Key.Key_Right)
    _press(qtbot, window, Key.Key_Right)
    moved = window.splitter.sizes()
    assert moved[0] == sizes[0] + 32 and moved[1] == sizes[1] - 32  # the tree wider, the entry narrower
    _press(qtbot, window, Key.Key_PageUp)
    assert window.splitter.sizes()[0] < moved[0] - 32
    _press(qtbot, window, Key.Key_Escape)  # put back where F8 found it, the keys back on the tree
    assert window.splitter.sizes() == sizes
    qtbot.waitUntil(window.tree.hasFocus)

    _press(qtbot, window, Key.Key_F8)
    qtbot.waitUntil(first.hasFocus)
    _press(qtbot, window, Key.Key_F8)  # the next divider: between the entry and the planner
    qtbot.waitUntil(second.hasFocus)
    _press(qtbot, window, Key.Key_Left)
    kept = window.splitter.sizes()
    assert kept[2] == sizes[2] + 16  # the planner wider
    _press(qtbot, window, Key.Key_Return)  # kept, the keys back on the tree
    qtbot.waitUntil(window.tree.hasFocus)
    assert window.splitter.sizes() == kept

    # with the timeline shown, its divider comes first (top to bottom); after the last, back
    window.a_timeline.trigger()
    qtbot.waitUntil(window.timeline.isVisible)
    window.tree.setFocus()
    qtbot.waitUntil(window.tree.hasFocus)
    top = window.vsplit.handle(1)
    qtbot.waitUntil(top.isVisible)  # the splitter shows it once it has laid the timeline out
    _press(qtbot, window, Key.Key_F8)
    qtbot.waitUntil(top.hasFocus)
    height = window.vsplit.sizes()[0]
    _press(qtbot, window, Key.Key_Down)
    assert window.vsplit.sizes()[0] == height + 16 and window.timeline_height == height + 16
    for divider in (first, second):
        _press(qtbot, window, Key.Key_F8)
        qtbot.waitUntil(divider.hasFocus)
    _press(qtbot, window, Key.Key_F8)
    qtbot.waitUntil(window.tree.hasFocus)
    assert window.vsplit.sizes()[0] == height + 16  # moving on kept it
    assert QApplication.focusWidget() is window.tree
    settle_window(qtbot, window)


def test_f8_is_in_the_view_menu_and_the_shortcut_list(window: MainWindow) -> None:
    from session_studio.ui.shortcuts import OTHER_KEYS, menu_shortcuts

    rows = [row for _menu, commands in menu_shortcuts(window.menuBar()) for row in commands]
    assert ("Move pane divider", "F8") in rows
    assert any(group.startswith("Pane divider") for group, _keys in OTHER_KEYS)
