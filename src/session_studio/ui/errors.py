"""Errors, the one place an exception becomes what the user sees.

Expected failures (a file pi cannot open, a server refusing, a write refused) become a
``Failure`` (``explain_failure``) shown with ``report_failure``. Unexpected ones — uncaught in
a slot, in a thread, or in a background task nobody handles (``report_unexpected``) — go to
the log and a crash dialog with traceback and copy (``install_crash_handlers``).

Headless runs (``--screenshot``) never show a dialog: a modal dialog nobody can close would
keep the process waiting forever. There every error goes to the log and stderr, and the run
ends with a non-zero exit code (``crash_count``).
"""

from __future__ import annotations

import html
import logging
import sys
import threading
import traceback
from dataclasses import dataclass
from types import TracebackType

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.errors import SessionFileError, SessionLoadError, SessionStudioError, WriteError

from .plain import rich_escaped, rich_plain, visible
from .settings import state_dir

__all__ = [
    "CrashDialog",
    "Failure",
    "crash_count",
    "explain_failure",
    "install_crash_handlers",
    "is_headless",
    "log_file",
    "report_failure",
    "report_unexpected",
    "setup_logging",
    "show_error",
]

log = logging.getLogger(__name__)

_headless = False
_crashes: list[str] = []  # distinct tracebacks seen since the handlers were installed


def log_file() -> str:
    d = state_dir()
    d.mkdir(parents=True, exist_ok=True)
    return str(d / "session-studio.log")


def setup_logging() -> str:
    path = log_file()
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


class CrashDialog(QDialog):
    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Session Studio — unexpected error")
        lab = QLabel(
            "<b>Something went wrong inside Session Studio.</b><br>Your session files were not modified by "
            f"this error. The details below are also in the log file:<br><code>{html.escape(log_file())}</code>"
        )
        lab.setTextFormat(Qt.TextFormat.RichText)
        lab.setWordWrap(True)
        self.text = QPlainTextEdit(text)
        self.details = text
        self.text.setReadOnly(True)
        self.text.setMinimumSize(640, 280)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = QPushButton("Copy details")
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.details))
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(lab)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)

    def add(self, text: str) -> None:
        """Another error while this dialog is open: append it instead of opening a second one."""
        self.details += "\n" + text
        self.text.appendPlainText("\n" + text)


class _Relay(QObject):
    crashed = Signal(str)


_relay: _Relay | None = None


def is_headless() -> bool:
    return _headless


def crash_count() -> int:
    """How many distinct uncaught errors happened since ``install_crash_handlers``."""
    return len(_crashes)


def install_crash_handlers(parent: QWidget | None = None, headless: bool = False) -> None:
    """Route uncaught exceptions (GUI and worker threads) to the log and a dialog on the GUI thread.

    The dialog is opened without blocking (an error inside ``paintEvent`` must not start a
    nested event loop) and further errors are added to the open one. ``headless``: no dialog at
    all; each distinct error is written to stderr once.
    """
    global _relay, _headless
    _headless = headless
    _crashes.clear()
    _relay = _Relay()
    dialogs: list[CrashDialog] = []

    def show(text: str) -> None:
        if dialogs and dialogs[0].isVisible():
            dialogs[0].add(text)
            return
        dialogs[:] = [CrashDialog(text, parent)]
        dialogs[0].open()

    _relay.crashed.connect(show)

    def hook(t: type[BaseException], v: BaseException, tb: TracebackType | None) -> None:
        if issubclass(t, KeyboardInterrupt):
            sys.__excepthook__(t, v, tb)
            return
        text = "".join(traceback.format_exception(t, v, tb))
        # drop the frames: sys.last_traceback would keep e.g. a failed paintEvent's QPainter alive
        # (still painting), and Qt crashes when that widget is painted or destroyed later
        v.__traceback__ = None
        sys.last_type = sys.last_value = sys.last_traceback = None
        _crashed(text)

    def thook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        hook(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thook


def show_error(parent: QWidget | None, title: str, text: str, details: str = "") -> None:
    """An actionable failure: what happened, what to do, details folded.

    ``text`` and ``details`` may quote a session or a server: shown literally, never as HTML.
    Headless, the error goes to the log and stderr instead of a dialog.
    """
    first, _, rest = text.partition("\n\n")
    if _headless:
        log.error("%s: %s\n%s", title, text, details)
        # visible(): server or session text must not drive the terminal (OSC 52, title, cursor reports)
        print(f"session-studio: {visible(title, 500)}: {visible(text, 2_000)}", file=sys.stderr)
        return
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Session Studio")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(f"<b>{rich_escaped(title)}</b>")
    box.setInformativeText(rich_plain(first + (("\n\n" + rest) if rest and not details else "")))
    if details or rest:
        box.setDetailedText(details or rest)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # read: not left a child of the window
    box.open()


def _crashed(text: str) -> None:
    """An unexpected error (its traceback): logged once, then a dialog or, headless, stderr."""
    if text in _crashes:  # the same error again (e.g. every paint): logged once
        return
    _crashes.append(text)
    log.error("uncaught exception:\n%s", text)
    if _headless:
        print(
            f"session-studio: unexpected error (also in {log_file()}):\n{visible(text, None)}",
            file=sys.stderr,
        )
    elif _relay is not None:
        _relay.crashed.emit(text)


def report_unexpected(exc: BaseException, tb: str) -> None:
    """A background task failed and nobody handles it (``TaskRunner.unhandled``): a crash, not silence."""
    _crashed(tb or "".join(traceback.format_exception(exc)))


@dataclass(frozen=True)
class Failure:
    """What the window says about a failed load, generation or write."""

    title: str
    #: what happened and what to do (plain text; a blank line separates the two)
    text: str
    #: folded details (a traceback for errors that are not the user's to fix)
    details: str = ""


def explain_failure(exc: BaseException, tb: str, title: str) -> Failure:
    """The message for ``exc``; ``title`` says what failed ("Cannot open …", "Labelling failed").

    Errors raised on purpose (core, engine, llm) speak for themselves; anything else keeps its
    traceback in the details.
    """
    from session_studio.llm import LlmError  # the network package loads on first use

    if isinstance(exc, LlmError):
        # a known failure of the provider: its technical line (status, server's words, redacted)
        # is the detail, not our traceback
        said = str(getattr(exc, "user_message", None) or exc)
        return Failure(title, said, str(exc) if str(exc) != said else "")
    if isinstance(exc, WriteError):
        return Failure(f"{title}: nothing was written", f"{exc}\n\nThe session file was left as it was.", tb)
    if isinstance(exc, SessionFileError):
        return Failure(title, f"{exc}\n\nCheck that the file exists and is readable.")
    if isinstance(exc, SessionLoadError):
        where = f" (line {exc.line})" if exc.line else ""
        return Failure(
            f"pi cannot open this file{where}",
            f"{exc}\n\npi would fail on this file too. Open a copy in an editor to repair it.",
        )
    if isinstance(exc, SessionStudioError):
        return Failure(title, str(exc))
    return Failure(title, str(exc) or type(exc).__name__, tb)


def report_failure(parent: QWidget | None, failure: Failure) -> None:
    """Show an expected failure (headless: log and stderr, no dialog)."""
    show_error(parent, failure.title, failure.text, failure.details)
