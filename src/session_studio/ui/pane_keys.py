"""Pane dividers by keyboard, as GTK's paned widgets have them: F8 puts the focus on a divider
(again: the next one, and after the last back where it was), the arrow keys move it, Page Up/Down
by a tenth, Home/End to its ends, Return keeps it there and Escape puts it back. Qt's splitter
handles take no keys at all, so a keyboard user could not widen the tree or shorten the timeline.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFocusEvent, QKeyEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QSplitter, QSplitterHandle, QWidget

from .announce import announce
from .theme import current_theme

__all__ = ["KeySplitter", "KeySplitterHandle", "cycle_divider_focus", "dividers_of"]

#: an arrow key moves a divider this many pixels
STEP_PX = 16


class KeySplitterHandle(QSplitterHandle):
    """A splitter handle that takes the keys while it has the focus (given by :func:`cycle_divider_focus`
    only: it is no stop of the Tab chain)."""

    def __init__(self, orientation: Qt.Orientation, parent: QSplitter) -> None:
        super().__init__(orientation, parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setAccessibleName("Pane divider")
        #: the sizes when the divider got the focus (Escape restores them) and who had the focus
        self._sizes_before: list[int] | None = None
        self._return_to: QWidget | None = None

    def take_focus(self, return_to: QWidget | None) -> None:
        self._sizes_before = self.splitter().sizes()
        self._return_to = return_to
        self.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.update()
        along = "Left and Right" if self.orientation() == Qt.Orientation.Horizontal else "Up and Down"
        announce(self, f"Pane divider: {along} move it, Return keeps it, Escape puts it back")

    @property
    def return_to(self) -> QWidget | None:
        return self._return_to

    def _position(self) -> int:
        return self.x() if self.orientation() == Qt.Orientation.Horizontal else self.y()

    def _extent(self) -> int:
        s = self.splitter()
        return s.width() if self.orientation() == Qt.Orientation.Horizontal else s.height()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        horizontal = self.orientation() == Qt.Orientation.Horizontal
        back, on = (Qt.Key.Key_Left, Qt.Key.Key_Right) if horizontal else (Qt.Key.Key_Up, Qt.Key.Key_Down)
        page = max(STEP_PX, self._extent() // 10)
        moves = {
            back: -STEP_PX,
            on: STEP_PX,
            Qt.Key.Key_PageUp: -page,
            Qt.Key.Key_PageDown: page,
        }
        if key in moves:
            self.moveSplitter(self._position() + moves[key])  # the splitter keeps its panes' minimums
        elif key == Qt.Key.Key_Home:
            self.moveSplitter(0)
        elif key == Qt.Key.Key_End:
            self.moveSplitter(self._extent())
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._leave()
        elif key == Qt.Key.Key_Escape:
            if self._sizes_before is not None:
                self.splitter().setSizes(self._sizes_before)
                self.splitter().splitterMoved.emit(self._position(), self.splitter().indexOf(self))
            self._leave()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def _leave(self) -> None:
        target = self._return_to
        self._sizes_before = self._return_to = None
        if target is not None and target.isVisible():
            target.setFocus(Qt.FocusReason.OtherFocusReason)
        else:
            self.clearFocus()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self.hasFocus():  # where the keys go: the divider in the focus colour (the bar's cursor's)
            painter = QPainter(self)
            painter.fillRect(self.rect(), current_theme().focus)
            painter.end()


class KeySplitter(QSplitter):
    """A QSplitter whose dividers take the keys (:class:`KeySplitterHandle`)."""

    def createHandle(self) -> QSplitterHandle:
        return KeySplitterHandle(self.orientation(), self)


def dividers_of(root: QWidget) -> list[KeySplitterHandle]:
    """The dividers under ``root`` a user can see, top to bottom, then left to right; a splitter's
    handle 0 is never shown."""
    found = []
    for splitter in root.findChildren(KeySplitter):
        if not splitter.isVisible():
            continue
        for k in range(1, splitter.count()):
            handle = splitter.handle(k)
            if isinstance(handle, KeySplitterHandle) and handle.isVisible():
                found.append(handle)

    def place(h: QWidget) -> tuple[int, int]:
        at = h.mapTo(root, h.rect().topLeft())
        return at.y(), at.x()

    return sorted(found, key=place)


def cycle_divider_focus(root: QWidget, focus: QWidget | None) -> KeySplitterHandle | None:
    """F8: the focus to the first divider, from a divider to the next, from the last back to the
    widget that had it before the first F8. Returns the divider that has the focus (None: none)."""
    dividers = dividers_of(root)
    current = focus if isinstance(focus, KeySplitterHandle) and focus in dividers else None
    origin = current.return_to if current is not None else focus
    if current is None:
        nxt = 0
    else:
        current._sizes_before = None  # moving on keeps where it was put
        nxt = dividers.index(current) + 1
    if nxt >= len(dividers):
        if origin is not None and origin.isVisible():
            origin.setFocus(Qt.FocusReason.OtherFocusReason)
        return None
    dividers[nxt].take_focus(origin)
    return dividers[nxt]
