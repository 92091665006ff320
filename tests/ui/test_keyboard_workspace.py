"""The workspace by keyboard: a session opens with the keys on its tree, Ctrl+P leaves them on the
next step (Generate, then the summary), Ctrl+G generates from anywhere, Alt+1…4 pick the tabs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from session_studio.ui.main_window import MainWindow


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None, timeout=3000)


def test_a_session_opens_with_the_keys_on_its_tree(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    shown: list[int] = []
    window.doc.selection_changed.connect(shown.append)
    _open(qtbot, window, split_turn_session)
    qtbot.waitUntil(lambda: window.focusWidget() is window.tree)  # it was the filter list
    leaf = window.doc.session.leaf_index() if window.doc.session is not None else None
    assert shown == [leaf] and window.doc.selected == leaf  # focusing made no other row current


def test_ctrl_p_then_ctrl_g_and_the_tab_keys(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    window.preview.provider.setCurrentIndex(window.preview.provider.findData("offline"))
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.preview
    assert window.focusWidget() is window.preview.generate_button  # no summary yet: Generate is next
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert window.tabs.currentWidget() is window.why
    qtbot.keyClick(window, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)  # from the Why tab
    qtbot.waitUntil(lambda: window.doc.outcome is not None, timeout=20000)
    assert window.tabs.currentWidget() is window.preview and window.doc.summary_text
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.AltModifier)
    assert window.tabs.currentWidget() is window.inspector
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert window.focusWidget() is window.preview.summary  # a summary of this plan: read or edit it
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)
    assert window.tabs.currentWidget() is window.compare


def test_return_on_a_focused_button_clicks_it(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Qt clicks a focused button on Return only in dialogs; Space worked, Return did nothing."""
    _open(qtbot, window, split_turn_session)
    window.preview.provider.setCurrentIndex(window.preview.provider.findData("offline"))
    window.tabs.setCurrentWidget(window.preview)
    window.preview.generate_button.setFocus()
    qtbot.keyClick(window.preview.generate_button, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.doc.outcome is not None, timeout=20000)


def test_ctrl_p_with_a_typed_summary_still_lands_on_generate(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Return in the summary typed a line, and Ctrl+P then stayed on the summary: a typed text is
    no generated summary (it cannot be committed), so Generate is still the next step."""
    _open(qtbot, window, split_turn_session)
    window.preview.summary.setPlainText("\n")
    qtbot.keyClick(window, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert window.focusWidget() is window.preview.generate_button


def test_back_to_the_browser_the_keys_are_on_its_search(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """After Ctrl+B the keys were on the list, with no current row: typing went nowhere."""
    _open(qtbot, window, split_turn_session)
    qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.focusWidget() is window.browser.search
    qtbot.keyClicks(window.browser.search, "xyz")
    assert window.browser.search.text() == "xyz"


def test_go_to_the_leaf_or_cut_clears_an_entry_search_that_hides_it(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The tree kept showing a row the search found while the inspector showed the cut."""
    _open(qtbot, window, split_turn_session)
    s = window.doc.session
    assert s is not None
    first = window.tree_model.record_of(window.tree_model.index(0, 0))
    window.search.setText(s.records[first].id)  # an exact id: one row, not the leaf
    window._search_timer.stop()
    window._apply_filter()
    qtbot.waitUntil(lambda: not window.tree_model.rebuilding and window.tree_model.rowCount() >= 1)
    leaf = s.leaf_index()
    assert leaf is not None and not window.tree_model.index_of(leaf).isValid()
    window.a_leaf.trigger()
    assert window.search.text() == "" and window.doc.selected == leaf
    qtbot.waitUntil(lambda: window.tree_model.record_of(window.tree.currentIndex()) == leaf, timeout=5000)
