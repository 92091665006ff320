"""Saying a text to a screen reader, if one listens: what only the eyes would get otherwise (a
status message, where the token bar's or the timeline's keyboard cursor went)."""

from __future__ import annotations

from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget

__all__ = ["announce"]


def announce(source: QWidget, text: str) -> None:
    """Announce ``text`` on behalf of ``source`` (nothing when no assistive technology is active:
    the event would be built for nobody)."""
    if text and QAccessible.isActive():
        QAccessible.updateAccessibility(QAccessibleAnnouncementEvent(source, text))
