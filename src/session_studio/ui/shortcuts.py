"""Help ▸ Keyboard shortcuts: every menu command's shortcut, read off the menus themselves (so the list
cannot drift from them), and the keys that are not menu commands (the tree's, the searches')."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QMenuBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

__all__ = [
    "OTHER_KEYS",
    "PopupKeysFirst",
    "ShortcutsDialog",
    "chain_tab_order",
    "focusable",
    "menu_shortcuts",
    "return_clicks_buttons",
    "shortcuts_action_keys",
]

#: the keys handled by the views rather than by menu commands (main_window and browser wire them)
OTHER_KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Session tree",
        (
            ("Commands of the entry (context menu)", "Menu, Shift+F10"),
            ("Open or close a branch", "Right, Left"),
        ),
    ),
    (
        "Token bar",
        (
            ("Previous / next context message", "Left, Right"),
            ("A tenth of the bar back / on", "PgUp, PgDown"),
            ("First / last message", "Home, End"),
            ("The 'after' row / back to 'now'", "Down, Up"),
            ("Select the message's entry", "Return"),
        ),
    ),
    (
        "Context timeline",
        (
            ("Previous / next entry", "Left, Right"),
            ("Previous / next compaction (the planned one last)", "Ctrl+Left, Ctrl+Right"),
            ("Previous / next branch summary or model change", "Ctrl+Shift+Left, Ctrl+Shift+Right"),
            ("A tenth of the path back / on", "PgUp, PgDown"),
            ("First / last entry", "Home, End"),
            ("Select the entry", "Return"),
        ),
    ),
    (
        "Pane divider (after F8)",
        (
            ("Move it (Up, Down for one between panes above and below)", "Left, Right"),
            ("A tenth of its panes back / on", "PgUp, PgDown"),
            ("To its ends", "Home, End"),
            ("Keep it there / put it back", "Return, Escape"),
        ),
    ),
    (
        "Entry search",
        (
            ("Clear the search", "Escape"),
            ("Back to the tree (the search empty)", "Escape"),
        ),
    ),
    (
        "Session browser",
        (
            ("First session shown", "Down"),
            ("Open the session", "Return"),
            ("Clear the search", "Escape"),
            ("Back to the open session (the search empty)", "Escape"),
        ),
    ),
)


def _plain(text: str) -> str:
    """A menu text without its mnemonic marks ("Co&mmit" → "Commit", "&&" → "&") and ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").removesuffix("…")


def menu_shortcuts(bar: QMenuBar) -> list[tuple[str, list[tuple[str, str]]]]:
    """(menu title, [(command, its shortcuts as the platform writes them)]) for each menu of ``bar``
    that has commands with a shortcut, in menu order; a submenu's commands are named with it."""

    def walk(menu: QMenu, prefix: str, out: list[tuple[str, str]], seen: set[int]) -> None:
        for a in menu.actions():
            sub = a.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{prefix}{_plain(sub.title())} ▸ ", out, seen)
                continue
            keys = [k for k in a.shortcuts() if not k.isEmpty()]
            if a.isSeparator() or not keys or id(a) in seen:
                continue
            seen.add(id(a))  # a command in two menus (Compare pi versions) is listed once
            text = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)
            out.append((prefix + _plain(a.text()), text))

    seen: set[int] = set()
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    for a in bar.actions():
        menu = a.menu()
        if isinstance(menu, QMenu):
            rows: list[tuple[str, str]] = []
            walk(menu, "", rows, seen)
            if rows:
                groups.append((_plain(menu.title()), rows))
    return groups


class ShortcutsDialog(QDialog):
    """The shortcuts of ``bar``'s menus and the views' own keys, grouped, in a read-only list."""

    def __init__(self, bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.view = QTreeWidget()
        self.view.setHeaderLabels(["Command", "Keys"])
        self.view.setRootIsDecorated(False)
        self.view.setSelectionMode(QTreeWidget.SelectionMode.NoSelection)
        self.view.setAccessibleName("Keyboard shortcuts")
        groups = [*menu_shortcuts(bar), *((g, list(rows)) for g, rows in OTHER_KEYS)]
        for title, rows in groups:
            head = QTreeWidgetItem(self.view, [title])
            f = head.font(0)
            f.setBold(True)
            head.setFont(0, f)
            head.setFirstColumnSpanned(True)
            for command, keys in rows:
                QTreeWidgetItem(head, [command, keys])
            head.setExpanded(True)
        self.view.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.view.header().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.view, 1)
        lay.addWidget(buttons)
        self.resize(540, 560)

    def showEvent(self, e: QShowEvent) -> None:
        """Tall enough for the whole list where the screen allows (it scrolls beyond that): the rows'
        height is known once the view is laid out."""
        super().showEvent(e)
        group = self.view.topLevelItem(self.view.topLevelItemCount() - 1)
        last = group.child(group.childCount() - 1) if group is not None else None
        if last is None:
            return
        bottom = self.view.visualItemRect(last).bottom()
        spare = self.view.viewport().height() - bottom - 8
        screen = self.screen().availableGeometry().height() if self.screen() is not None else 800
        self.resize(self.width(), min(screen - 80, self.height() - spare))

    def rows(self) -> list[tuple[str, str, str]]:
        """(group, command, keys) as shown, in order."""
        out = []
        for g in range(self.view.topLevelItemCount()):
            head = self.view.topLevelItem(g)
            assert head is not None
            for k in range(head.childCount()):
                item = head.child(k)
                assert item is not None
                out.append((head.text(0), item.text(0), item.text(1)))
        return out


def shortcuts_action_keys() -> list[QKeySequence]:
    """Help ▸ Keyboard shortcuts' own key: Ctrl+? (GNOME's; F1 is the help page's, as everywhere)."""
    return [QKeySequence("Ctrl+?")]


def return_clicks_buttons(root: QWidget) -> None:
    """Return (and Enter) on a focused button of ``root`` clicks it, as Space does. Qt gives
    buttons that only in dialogs (autoDefault); a keyboard user who tabbed to Generate in the main
    window pressed Return and nothing happened. Outside a dialog no button becomes the default one,
    so this draws nothing differently."""
    for button in root.findChildren(QPushButton):
        button.setAutoDefault(True)


class PopupKeysFirst(QObject):
    """Alt+Down and Alt+Up open and close a focused combo box's list, as everywhere else, before the
    window's Go ▸ Next/Previous entry take them: in the pi version box, the tree filter and the
    Preview's provider, Alt+Down moved the tree's selection and the list stayed shut. Installed on
    the application (the focus widget gets ShortcutOverride first; accepting it keeps the key)."""

    _KEYS = (Qt.Key.Key_Down, Qt.Key.Key_Up)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() in self._KEYS
            and event.modifiers() == Qt.KeyboardModifier.AltModifier
            and (isinstance(watched, QComboBox) or isinstance(watched.parent(), QComboBox))
        ):
            event.accept()
        return False


def focusable(root: QWidget | None) -> list[QWidget]:
    """The widgets under ``root`` that Tab stops at, in the order they were made (their layout's):
    not the inner parts of a control that takes the focus itself (a spin box's line edit), nor those
    in another window (a combo box's popup)."""
    if root is None:
        return []
    tab = Qt.FocusPolicy.TabFocus

    def stops_at(w: QWidget) -> bool:
        if not w.focusPolicy() & tab or w.focusProxy() is not None or w.window() is not root.window():
            return False
        up = w.parentWidget()
        while up is not None and up is not root:
            if up.focusPolicy() & tab:
                return False
            up = up.parentWidget()
        return True

    return [w for w in root.findChildren(QWidget) if stops_at(w)]


def chain_tab_order(anchor: QWidget, root: QWidget) -> None:
    """Tab goes from ``anchor`` through ``root``'s widgets in turn: widgets made after the window
    joined the focus chain at its end (the Compare summaries page came after the planner)."""
    for w in focusable(root):
        QWidget.setTabOrder(anchor, w)
        anchor = w
