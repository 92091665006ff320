"""Crash handling: sys/threading excepthooks → a dialog with traceback and copy, plus a log file."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from types import TracebackType

from PySide6.QtCore import QObject, Signal
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

from .settings import state_dir

__all__ = ["CrashDialog", "install_crash_handlers", "log_file", "setup_logging", "show_error"]

log = logging.getLogger(__name__)


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
            f"this error. The details below are also in the log file:<br><code>{log_file()}</code>"
        )
        lab.setWordWrap(True)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        self.text.setMinimumSize(640, 280)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = QPushButton("Copy details")
        buttons.addButton(copy, QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(lab)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)


class _Relay(QObject):
    crashed = Signal(str)


_relay: _Relay | None = None


def install_crash_handlers(parent: QWidget | None = None) -> None:
    """Route uncaught exceptions (GUI and worker threads) to the log and a dialog on the GUI thread."""
    global _relay
    _relay = _Relay()
    _relay.crashed.connect(lambda text: CrashDialog(text, parent).exec())

    def hook(t: type[BaseException], v: BaseException, tb: TracebackType | None) -> None:
        if issubclass(t, KeyboardInterrupt):
            sys.__excepthook__(t, v, tb)
            return
        text = "".join(traceback.format_exception(t, v, tb))
        log.error("uncaught exception:\n%s", text)
        if _relay is not None:
            _relay.crashed.emit(text)

    def thook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        hook(args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thook


def show_error(parent: QWidget | None, title: str, text: str, details: str = "") -> None:
    """An actionable failure: what happened, what to do, details folded."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Session Studio")
    box.setText(f"<b>{title}</b>")
    first, _, rest = text.partition("\n\n")
    box.setInformativeText(first + (("\n\n" + rest) if rest and not details else ""))
    if details or rest:
        box.setDetailedText(details or rest)
    box.open()
