"""``launch_gui(argv)``: the desktop app entry point (cli.main calls it for non-subcommands)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the GUI modules load PySide6: imported at run time only when the window starts
    from PySide6.QtWidgets import QApplication

    from .main_window import MainWindow
    from .settings import AppSettings

__all__ = ["launch_gui", "parse_args"]

log = logging.getLogger(__name__)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="session-studio", description="Session Studio desktop app")
    p.add_argument(
        "file", nargs="?", help="a pi session file (.jsonl) to open; none opens the session browser"
    )
    p.add_argument(
        "--screenshot", metavar="OUT.png", help="render the window after loading and planning, then exit"
    )
    p.add_argument("--size", default=None, metavar="WxH", help="window size, e.g. 1600x1000")
    p.add_argument("--theme", choices=("light", "dark", "system"), default=None)
    p.add_argument("--tab", choices=("entry", "why", "preview"), default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.size:
        try:
            w, h = (int(x) for x in a.size.lower().split("x"))
        except ValueError:
            p.error("--size must look like 1600x1000")
        a.size = (w, h)
    return a


def wait_until(app: object, cond: Callable[[], bool], timeout: float = 60.0) -> bool:
    from PySide6.QtCore import QCoreApplication

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QCoreApplication.processEvents()
        if cond():
            return True
        time.sleep(0.01)
    return False


def launch_gui(argv: list[str]) -> int:
    a = parse_args(list(argv))
    if a.file and not os.path.exists(a.file):
        # before Qt: without a display it would abort over the missing platform plugin instead
        print(f"session-studio: session file not found: {a.file}", file=sys.stderr)
        return 1
    if a.screenshot and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from .import_check import forget_source_reads

    forget_source_reads()  # before PySide6 checks the window's imports (see import_check)
    from PySide6.QtCore import QCoreApplication, Qt
    from PySide6.QtWidgets import QApplication

    from .errors import install_crash_handlers, setup_logging
    from .main_window import MainWindow, stylesheet
    from .settings import AppSettings
    from .theme import apply_theme

    QCoreApplication.setOrganizationName("session-studio")
    QCoreApplication.setApplicationName("Session Studio")
    from PySide6.QtGui import QGuiApplication

    from .main_window import APP_ID

    QGuiApplication.setDesktopFileName(APP_ID)
    if QApplication.instance() is None:
        QApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    with contextlib.suppress(OSError):
        setup_logging()
    settings = _screenshot_settings() if a.screenshot else AppSettings()
    apply_theme(app, a.theme or settings.theme())
    app.setStyleSheet(stylesheet())
    win = MainWindow(settings)
    if a.theme:
        win.override_theme(a.theme)
    # a screenshot run has nobody to close a dialog: errors go to the log, stderr and the exit code
    install_crash_handlers(win, headless=bool(a.screenshot))
    if a.size:
        win.resize(*a.size)
    if a.file:
        win.open_path(a.file)
    else:
        win.show_browser()
    win.show()
    if a.screenshot:
        return _screenshot(app, win, a)
    return int(app.exec())


def _screenshot_settings() -> AppSettings:
    """The user's settings as they are, in a throw-away copy: a screenshot only renders, and
    must not add its file to the recent ones or keep its window size and splitters."""
    import atexit
    import shutil
    import tempfile

    from .settings import AppSettings, config_dir

    folder = tempfile.mkdtemp(prefix="session-studio-screenshot-")
    atexit.register(shutil.rmtree, folder, True)
    copy = Path(folder) / "session-studio.ini"
    with contextlib.suppress(OSError):
        shutil.copyfile(config_dir() / "session-studio.ini", copy)
    return AppSettings(copy)


def _screenshot(app: QApplication, w: MainWindow, a: argparse.Namespace) -> int:
    from .errors import crash_count

    runner = w.runner
    doc = w.doc
    if a.file:
        ok = wait_until(app, lambda: doc.state is not None or (not runner.busy and doc.session is None), 120)
        if not ok or doc.session is None:
            print("session-studio: the session did not load", file=sys.stderr)
            return 1
        tab = {"why": w.why, "preview": w.preview}.get(a.tab)
        if tab is not None:
            w.tabs.setCurrentWidget(tab)
    wait_until(app, lambda: not runner.busy, 60)
    wait_until(app, lambda: False, 0.2)
    if crash_count():
        # a widget that failed while painting may have left its painter open: grabbing now could
        # crash the process, and the picture would not be the window anyway
        print(f"session-studio: {crash_count()} unexpected error(s); no screenshot written", file=sys.stderr)
        return 3
    img = w.grab()
    if not img.save(a.screenshot):
        print(f"session-studio: cannot write {a.screenshot}", file=sys.stderr)
        return 1
    print(a.screenshot)
    w.close()
    return 0
