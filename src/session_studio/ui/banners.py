"""The banners above the workspace: load issues, a legacy (v1/v2) file, a big file still loading."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.migrate import version_name

from .document import Partial
from .plain import rich_escaped
from .theme import current_theme

if TYPE_CHECKING:
    from session_studio.core.reader import LoadIssue

__all__ = ["DiskBanner", "IssueBanner", "LegacyBanner", "LoadingBanner"]


#: issues the details list (a file of garbage has one per line)
LISTED_ISSUES = 2000


class IssueBanner(QFrame):
    """Non-modal banner for damaged lines, with details on demand."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.details = QPushButton("Details…")
        #: shown when the file ends with a line of ours torn by a crash (Session.torn_tail)
        self.repair = QPushButton("Cut the torn line off")
        self.repair.hide()
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.details)
        lay.addWidget(self.repair)
        lay.addWidget(self.close_button)
        self.text = ""
        self.count = 0
        self.lines = 0  # the lines the issues are on
        self.dialog: QDialog | None = None  # the last details dialog
        self.close_button.clicked.connect(self.hide)
        self.details.clicked.connect(self._show)
        self.hide()

    def set_issues(self, issues: list[LoadIssue], reset: bool, verdict: str = "") -> None:
        """``verdict``: what the file's pi does with it when it has no valid header (``reset``)."""
        if not issues:
            self.hide()
            return
        # a line can have several issues (a torn last line: not JSON, and no newline at its end)
        dropped = len({i.line for i in issues if i.dropped})
        msg = (
            f"<b>No valid session header: {rich_escaped(verdict or 'pi would reset this file')}</b>. "
            f"{rich_escaped(issues[0].message)}"
            if reset
            else f"<b>{len(issues)} issue{'s' if len(issues) != 1 else ''} in this file</b> · {dropped} damaged "
            f"line{'s' if dropped != 1 else ''} that pi skips. The rest of the session is shown as pi sees it."
            if dropped
            # nothing skipped (a missing final newline, an odd value): "0 damaged lines that pi skips"
            else f"<b>{len(issues)} issue{'s' if len(issues) != 1 else ''} in this file</b>; pi skips no line of "
            "it. The session is shown as pi sees it."
        )
        self.label.setText(msg)
        self.count = len(issues)
        self.lines = len({i.line for i in issues})
        self.text = "\n".join(i.describe() for i in issues[:LISTED_ISSUES])
        self.show()

    def _show(self) -> None:
        """The issues, listed at once: a message box hid them behind a second "Show Details…"."""
        n = self.count
        dlg = QDialog(self.window())  # not the banner's child: its warning colours would cascade
        dlg.setWindowTitle("Load issues")
        lay = QVBoxLayout(dlg)
        lines = self.lines
        head = (
            f"{n:,} issue{'s' if n != 1 else ''} on {lines:,} line{'s' if lines != 1 else ''}: "
            "what pi drops, and what looks suspicious"
        )
        lay.addWidget(QLabel(head + (f" (the first {LISTED_ISSUES:,}):" if n > LISTED_ISSUES else ":")))
        listing = QPlainTextEdit()
        listing.setReadOnly(True)  # session text, shown as plain text
        # each issue is a long sentence: wrapped, not behind a sideways scroll
        listing.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        listing.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        listing.setPlainText(self.text)
        lay.addWidget(listing, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dlg.reject)
        lay.addWidget(buttons)
        dlg.resize(820, 360)
        self.dialog = dlg
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # read: not left a child of the window
        dlg.open()


class LegacyBanner(QFrame):
    """A version 1/2 file: say up front that it cannot be committed to, with Upgrade / Fork."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("legacy")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.upgrade_button = QPushButton("Upgrade…")
        self.upgrade_button.setToolTip("Rewrite the file as version 3 the way pi would, keeping a backup")
        self.fork_button = QPushButton("Fork…")
        self.fork_button.setToolTip("Write the active path to a new version 3 session file")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.upgrade_button)
        lay.addWidget(self.fork_button)
        self.hide()

    def set_session(self, session: object) -> None:
        if not getattr(session, "migrated", False) or getattr(session, "reset", False):
            self.hide()
            return
        version = version_name(getattr(session, "source_version", None))
        self.label.setText(
            f"<b>This is a {version} session file</b>; pi rewrites it with new ids when it opens it. "
            "To commit here, upgrade it (a backup is kept) or fork it."
        )
        self.show()


class DiskBanner(QFrame):
    """What happened to the open file on disk other than pi appending (rewritten, shortened,
    deleted): said until the user closes it, not only as a passing status message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("disk")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # it may quote a path
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Hide this note")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.close_button)
        self.close_button.clicked.connect(self.hide)
        self.hide()

    def say(self, text: str) -> None:
        """Show ``text``; an empty text hides the banner."""
        if not text:
            self.hide()
            return
        self.label.setText(text)
        self.show()


class LoadingBanner(QFrame):
    """ "Loading… 12 %" over a partially shown big file, with Cancel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("loading")
        self.label = QLabel()
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(220)
        self.bar.setMaximumHeight(10)
        self.cancel = QPushButton("Cancel")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.bar)
        lay.addWidget(self.cancel)
        self.head_text = ""
        self.hide()

    def start(self, head: Partial) -> None:
        th = current_theme()
        self.setStyleSheet(f"#loading {{ border-bottom: 1px solid {th.grid.name()}; }}")
        self.head_text = (
            f"Showing the first {head.head_bytes / 1e6:,.0f} MB ({len(head.session.records):,} entries) "
            "while the rest is read; planning starts when the whole file is loaded."
        )
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.set_value(int(head.fraction * 1000))
        self.show()

    def set_value(self, permille: int) -> None:
        """``permille`` of the file read; once it is all read, the plan is still to come."""
        if self.bar.maximum() == 0:  # already planning
            return
        permille = max(self.bar.value(), min(1000, permille))
        if permille >= 1000:
            self.bar.setRange(0, 0)  # busy: the outline and the plan take no measurable steps
            self.label.setText(
                "<b>Planning…</b> · the whole file is read; the whole tree and the plan come next."
            )
            return
        self.bar.setValue(permille)
        self.label.setText(f"<b>Loading… {permille // 10} %</b> · {html.escape(self.head_text)}")
