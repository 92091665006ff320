"""What a keyboard-only and a screen-reader user met (an audit driving the real window with keys):
a combo's own keys taken by window shortcuts, no way back from the browser, links for the mouse
only, unnamed controls, menus whose letters clash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from session_studio.ui.main_window import MainWindow
from session_studio.ui.window_parts import PAGE_BROWSER, PAGE_SESSION


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


def test_alt_down_opens_a_focused_combo_box_instead_of_moving_the_tree(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """Go ▸ Next entry is Alt+Down everywhere in the window; in a combo box the key is the combo's."""
    _open(qtbot, window, split_turn_session)
    window.activateWindow()
    combo = window.planner.profile_combo
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus)
    selected = window.doc.selected
    qtbot.keyClick(combo, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: combo.view().isVisible())
    assert window.doc.selected == selected
    combo.hidePopup()
    window.tree.setFocus()  # elsewhere Alt+Up is still Previous entry (the leaf is selected: no next)
    qtbot.waitUntil(window.tree.hasFocus)
    qtbot.keyClick(window.tree, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: window.doc.selected != selected)


def test_escape_in_the_browser_goes_back_to_the_open_session(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    window.show_browser()
    assert window.stack.currentIndex() == PAGE_BROWSER
    window.browser.search.setText("x")
    qtbot.keyClick(window.browser.search, Qt.Key.Key_Escape)  # first Escape: clears the search
    assert window.browser.search.text() == "" and window.stack.currentIndex() == PAGE_BROWSER
    qtbot.keyClick(window.browser.search, Qt.Key.Key_Escape)
    assert window.stack.currentIndex() == PAGE_SESSION


def test_escape_in_the_browser_with_no_session_open_stays(qtbot: Any, window: MainWindow) -> None:
    window.show_browser()
    qtbot.keyClick(window.browser.search, Qt.Key.Key_Escape)
    assert window.stack.currentIndex() == PAGE_BROWSER


def test_the_pi_versions_links_take_the_keyboard(window: MainWindow) -> None:
    page = window.compare
    for label in (page.table, page.rules):
        assert label.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByKeyboard


def test_the_planner_and_preview_controls_have_names(window: MainWindow) -> None:
    p = window.planner
    names = [
        p.keep.slider.accessibleName(),
        p.keep.spin.accessibleName(),
        p.reserve.slider.accessibleName(),
        p.window_spin.accessibleName(),
        window.search.accessibleName(),
        window.preview.summary.accessibleName(),
        window.preview.before.accessibleName(),
        window.why.accessibleName(),
        window.filter_combo.accessibleName(),
        p.profile_combo.accessibleName(),
        window.bar.accessibleName(),
        window.timeline.chart.accessibleName(),
    ]
    assert names == [
        "keepRecentTokens",
        "keepRecentTokens",
        "reserveTokens",
        "Context window",
        "Search entries",
        "Summary",
        "Context before compaction",
        "Why this cut",
        "Entry filter",
        "pi version",
        "Token bar",
        "Context timeline",
    ]


def test_no_menu_gives_two_commands_one_letter(window: MainWindow) -> None:
    """Alt+E, C turned "In content" on when Copy entry id was disabled; Alt+V, T opened Theme."""

    def letters(menu: QMenu) -> list[str]:
        out = []
        for a in menu.actions():
            text = a.text().replace("&&", "")
            if "&" in text and a.isVisible():
                out.append(text[text.index("&") + 1].lower())
        return out

    menus = [a.menu() for a in window.menuBar().actions()]
    window.tree_menu = None
    for menu in [*menus, *(a.menu() for m in menus if isinstance(m, QMenu) for a in m.actions() if a.menu())]:
        if isinstance(menu, QMenu):
            keys = letters(menu)
            assert len(keys) == len(set(keys)), (menu.title(), keys)
    tree_menu = [window.a_cut_here, window.a_goto_cut, window.a_branch, window.a_branch_sum]
    tree_menu += [window.a_fork, window.a_label, window.a_copy_id]
    keys = [a.text()[a.text().index("&") + 1].lower() for a in tree_menu]
    assert len(keys) == len(set(keys)), keys


def test_scroll_areas_are_no_tab_stops_of_their_own(window: MainWindow) -> None:
    """Tab stopped on the planner's scroll area and drew nothing: one press seemed lost."""
    from PySide6.QtWidgets import QScrollArea

    areas = window.findChildren(QScrollArea)
    assert areas and all(a.focusPolicy() == Qt.FocusPolicy.NoFocus for a in areas if type(a) is QScrollArea)


def test_the_focused_control_is_outlined_in_the_focus_colour_not_the_pale_selection(
    qtbot: Any, window: MainWindow
) -> None:
    """Fusion outlines the focused control in the highlight colour, the light theme's pale selection
    blue (about 1.3:1 on the window): a keyboard user could not find the focus. A focused spin box's
    outline now carries the theme's focus colour; an item view's selection stays pale."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QSpinBox, QStyle, QStyleOptionViewItem, QVBoxLayout, QWidget

    from session_studio.ui.theme import _focus_drawn, current_theme

    host = QWidget()  # in the window's theme and style (the fixture applied them)
    qtbot.addWidget(host)
    spin = QSpinBox(host)
    QVBoxLayout(host).addWidget(spin)
    host.show()
    host.activateWindow()
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    img = spin.grab().toImage()
    focus = current_theme().focus
    drawn = {img.pixelColor(x, y).rgb() for x in range(img.width()) for y in range(img.height())}
    assert any(_close(QColor(c), focus) for c in drawn)
    item = QStyleOptionViewItem()
    item.state |= QStyle.StateFlag.State_HasFocus | QStyle.StateFlag.State_Selected
    assert _focus_drawn(item, False).palette.color(QPalette.ColorRole.Highlight) == current_theme().highlight


def _close(a: Any, b: Any) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 90


def test_status_messages_are_announced_to_a_screen_reader(
    window: MainWindow, screen_reader: list[str]
) -> None:
    """ "Not a cut point: …" after Ctrl+K reached only the eyes."""
    window.statusBar().showMessage("Not a cut point: a tool result must stay after its tool call")
    assert screen_reader == ["Not a cut point: a tool result must stay after its tool call"]


def test_the_token_bar_says_in_text_what_it_paints(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The bar is painted: a screen reader got only its name. Its description carries the header
    lines, the cut and what pi's check weighs."""
    _open(qtbot, window, split_turn_session)
    qtbot.waitUntil(lambda: "cut at path #" in window.bar.accessibleDescription())
    said = window.bar.accessibleDescription()
    assert "threshold 183,616" in said and "keep 20,000" in said and "pi would not compact" not in said
    assert "context" in said and "·" not in said
