"""Help ▸ Keyboard shortcuts lists every menu command's keys, read off the menus themselves."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from session_studio.ui.main_window import MainWindow
from session_studio.ui.shortcuts import OTHER_KEYS, ShortcutsDialog


def _menu_actions(menu: QMenu, prefix: str = "") -> list[tuple[str, QAction]]:
    """(the command's name as listed: a submenu's commands are named with it, the action)."""
    out: list[tuple[str, QAction]] = []
    for a in menu.actions():
        sub = a.menu()
        if isinstance(sub, QMenu):
            out.extend(_menu_actions(sub, f"{prefix}{sub.title().replace('&', '')} ▸ "))
        else:
            out.append((prefix + a.text().replace("&", "").removesuffix("…"), a))
    return out


def test_ctrl_question_mark_opens_the_list_of_every_menu_commands_keys(
    qtbot: Any, window: MainWindow
) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_Question, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(
        lambda: isinstance(window.last_dialog, ShortcutsDialog) and window.last_dialog.isVisible()
    )
    dialog = window.last_dialog
    assert isinstance(dialog, ShortcutsDialog)
    shown = {command: keys for _group, command, keys in dialog.rows()}
    with_keys = {
        name: a
        for m in window.menuBar().actions()
        if isinstance(m.menu(), QMenu)
        for name, a in _menu_actions(m.menu())
        if not a.shortcut().isEmpty()
    }
    assert len(with_keys) >= 15
    assert shown.get("Tab ▸ 2 Why this cut") == "Alt+2"
    for name, a in with_keys.items():
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts())
        assert shown.get(name) == keys, (name, keys)
    # a command in two menus is listed once; the views' own keys follow the menus'
    assert [c for _g, c, _k in dialog.rows()].count("Compare pi versions") == 1
    assert all(k.split(", ")[0] != "Double-click" for _g, _c, k in dialog.rows())  # keys only
    groups = [g for g, _c, _k in dialog.rows()]
    assert groups[-1] == OTHER_KEYS[-1][0] and "Session tree" in groups
    dialog.close()


def test_the_list_follows_the_menus(qtbot: Any, window: MainWindow) -> None:
    """A command added to a menu with a shortcut is listed with no list to update by hand."""
    extra = QAction("&Frobnicate…", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+F"))
    go = next(m.menu() for m in window.menuBar().actions() if m.text() == "&Go")
    assert isinstance(go, QMenu)
    go.addAction(extra)
    window.a_shortcuts.trigger()
    dialog = window.last_dialog
    assert isinstance(dialog, ShortcutsDialog)
    expected = QKeySequence("Ctrl+Alt+F").toString(QKeySequence.SequenceFormat.NativeText)
    assert ("Go", "Frobnicate", expected) in dialog.rows()
    dialog.close()


def test_f1_opens_how_pi_compacts(qtbot: Any, window: MainWindow) -> None:
    """F1 is help, as everywhere: a page on what compaction is and where the window shows it, read
    beside the window (not modal), with no link that leaves it."""
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.help_page import HELP_HTML, HelpDialog

    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: isinstance(window.last_dialog, HelpDialog) and window.last_dialog.isVisible())
    page = window.last_dialog
    assert isinstance(page, HelpDialog) and not page.isModal() and QApplication.activeModalWidget() is None
    text = page.text.toPlainText()
    for term in ("keepRecentTokens", "reserveTokens", "valid cut point", "split turn", "CompactionEntry"):
        assert term in text, term
    assert "http" not in HELP_HTML and "<a " not in HELP_HTML and not page.text.openLinks()
    # the commands it names are the menus' own
    names = {
        a.text().replace("&", "").removesuffix("…")
        for m in window.menuBar().actions()
        if m.menu()
        for a in m.menu().actions()
    }
    for command in ("Omit failed attempt", "Cut here", "Commit compaction", "Keyboard shortcuts"):
        assert command in names and command in text, command
    qtbot.keyClick(window, Qt.Key.Key_F1)  # again: the same page, not a second one
    assert window.last_dialog is page
    page.close()
