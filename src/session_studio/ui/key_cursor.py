"""What the views with a keyboard cursor share (the token bar, the context timeline): how the focus
comes and goes. Each view places its cursor and shows it; this says when."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QToolTip, QWidget

__all__ = ["KeyCursorView"]

#: how the focus came that says where the cursor is (a click shows its own hover text; a window
#: activated again says nothing new)
SAID_ON_FOCUS = (
    Qt.FocusReason.TabFocusReason,
    Qt.FocusReason.BacktabFocusReason,
    Qt.FocusReason.ShortcutFocusReason,
)
#: how a user's own move gives the focus (the window hands its first focus out otherwise)
USER_FOCUS = (*SAID_ON_FOCUS, Qt.FocusReason.MouseFocusReason)


class KeyCursorView(QWidget):
    """A painted view that takes the keys (Tab) and walks its items with a cursor."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: the focus came by Tab, a click or a shortcut (not as the window's first focus widget)
        self.focused_by_user = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def place_cursor(self) -> None:
        """Put the cursor where the keys start, if it has no place yet (the selected entry's item)."""

    def show_cursor(self, say: bool = True) -> None:
        """Draw the cursor and show its item's text (``say``: to a screen reader too)."""

    def event(self, e: QEvent) -> bool:
        # a window shortcut pressed here (Ctrl+T, Ctrl+L) never reaches the tooltip, which Qt hides
        # at every other key: the cursor's text stood over what the shortcut showed until its timeout
        if e.type() == QEvent.Type.ShortcutOverride and QToolTip.isVisible():
            QToolTip.hideText()
        return super().event(e)

    def focusInEvent(self, e: QFocusEvent) -> None:
        super().focusInEvent(e)
        self.focused_by_user = e.reason() in USER_FOCUS
        self.place_cursor()
        if e.reason() in SAID_ON_FOCUS:
            self.show_cursor()
        self.update()

    def focusOutEvent(self, e: QFocusEvent) -> None:
        super().focusOutEvent(e)
        QToolTip.hideText()
        self.update()
