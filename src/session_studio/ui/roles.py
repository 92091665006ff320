"""Custom item-data roles shared by the models and views."""

from __future__ import annotations

from PySide6.QtCore import Qt

__all__ = ["Roles"]


class Roles:
    RECORD = Qt.ItemDataRole.UserRole + 1  # record index (int)
    ACTIVE = Qt.ItemDataRole.UserRole + 2  # on the active path (bool)
    CUT_MARK = Qt.ItemDataRole.UserRole + 3  # "cut" | "turn_start" | "prefix" | "valid" | "invalid" | ""
    HEAD = Qt.ItemDataRole.UserRole + 4  # first row of a branch chain (bool)
    KIND = Qt.ItemDataRole.UserRole + 5  # role or entry type (str)
    PATH = Qt.ItemDataRole.UserRole + 6  # file path (browser)
    SORT = Qt.ItemDataRole.UserRole + 7  # sort key (browser)
    SEARCH = Qt.ItemDataRole.UserRole + 8  # casefolded text the browser search matches (str)
    EDIT = (
        Qt.ItemDataRole.UserRole + 9
    )  # pi 1.6.0 context edit on the active path: "hidden" | "replaced" | ""
    NOT_SESSION = Qt.ItemDataRole.UserRole + 10  # a listed .jsonl that is no session (browser; bool)
    GROUP_COUNT = Qt.ItemDataRole.UserRole + 11  # a browser project's count: "3 sessions" (str)
    SESSIONS = Qt.ItemDataRole.UserRole + 12  # how many sessions a browser project holds (int)
