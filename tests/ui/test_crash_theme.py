"""Crash dialog, live colour-scheme changes, the app icon and the load progress dialog."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QPushButton

from session_studio.ui import errors
from session_studio.ui.main_window import APP_ID, MainWindow, app_icon, icon_dirs
from session_studio.ui.tasks import TaskRunner

from .conftest import settle_window


def test_crash_dialog_shows_traceback(qtbot: Any, monkeypatch: Any) -> None:
    shown: list[errors.CrashDialog] = []
    monkeypatch.setattr(errors.CrashDialog, "open", lambda self: shown.append(self))
    old_hook = sys.excepthook
    try:
        errors.install_crash_handlers(None)
        try:
            raise RuntimeError("boom in a slot")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
        qtbot.waitUntil(lambda: bool(shown))
    finally:
        sys.excepthook = old_hook
    dlg = shown[0]
    assert "RuntimeError: boom in a slot" in dlg.text.toPlainText()
    assert "Traceback" in dlg.text.toPlainText()
    log = Path(errors.log_file())
    assert log.parent.exists()


def test_crash_dialog_from_worker_thread(qtbot: Any, monkeypatch: Any) -> None:
    import threading

    shown: list[str] = []
    monkeypatch.setattr(errors.CrashDialog, "open", lambda self: shown.append(self.text.toPlainText()))
    old = threading.excepthook
    try:
        errors.install_crash_handlers(None)
        t = threading.Thread(target=lambda: 1 / 0)
        t.start()
        t.join()
        qtbot.waitUntil(lambda: bool(shown))
    finally:
        threading.excepthook = old
    assert "ZeroDivisionError" in shown[0]


def test_theme_follows_system_scheme_change(window: MainWindow, monkeypatch: Any) -> None:
    from session_studio.ui import theme

    window.settings.set_theme("system")
    monkeypatch.setattr(theme, "system_prefers_dark", lambda: True)
    window._on_color_scheme_changed()
    assert theme.current_theme().dark
    monkeypatch.setattr(theme, "system_prefers_dark", lambda: False)
    window._on_color_scheme_changed()
    assert not theme.current_theme().dark
    window.settings.set_theme("dark")
    window._on_color_scheme_changed()  # an explicit theme ignores the desktop
    assert not theme.current_theme().dark


def test_app_icon_found() -> None:
    assert not app_icon().isNull()
    pkg = icon_dirs()[-1]
    assert (pkg / f"{APP_ID}.png").is_file() and (pkg / "session-studio.svg").is_file()


def test_load_progress_can_cancel(qtbot: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """The progress dialog appears after the delay; Cancel stops Session.open (LoadCancelled)."""
    from session_studio.core import Session
    from session_studio.ui import document
    from session_studio.ui.settings import AppSettings

    from .conftest import write_session

    path = write_session(tmp_path / "big.jsonl", [("user", 20), ("assistant", 20)] * 50)
    real_open = Session.open
    calls: list[Any] = []

    def slow_open(p: Any, **kw: Any) -> Any:
        calls.append(kw)
        import time

        for _ in range(300):
            kw["progress"](1, 10)
            if kw["cancel"]():
                from session_studio.core.errors import LoadCancelled

                raise LoadCancelled("cancelled")
            time.sleep(0.01)
        return real_open(p)

    monkeypatch.setattr(document.Session, "open", staticmethod(slow_open))
    w = MainWindow(AppSettings(tmp_path / "s.ini"), TaskRunner(), sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.show()
    op = w.open_path(str(path))
    qtbot.waitUntil(lambda: op._dialog is not None, timeout=3000)
    assert op._dialog.maximum() == 1000
    op._dialog.findChild(QPushButton).click()  # the user presses Cancel
    qtbot.waitUntil(lambda: op.cancelled.is_set())
    w.runner.wait_idle()
    QApplication.processEvents()
    assert w.doc.session is None and calls


def _raise_value_error() -> None:
    raise ValueError("boom in a background task")


def test_unhandled_background_failure_reaches_the_crash_dialog(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """A worker-thread task with no failure handler: the window's crash reporting shows it."""
    from session_studio.ui.settings import AppSettings

    shown: list[str] = []
    monkeypatch.setattr(errors.CrashDialog, "open", lambda self: shown.append(self.text.toPlainText()))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    w = MainWindow(AppSettings(tmp_path / "s.ini"), TaskRunner(), sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    errors.install_crash_handlers(w)
    w.runner.op(_raise_value_error).start()
    qtbot.waitUntil(lambda: bool(shown), timeout=5000)
    assert "ValueError: boom in a background task" in shown[0]
    assert "_raise_value_error" in shown[0]  # the worker's traceback, not just the message
    assert errors.crash_count() == 1


def test_unhandled_failure_headless_goes_to_stderr_without_a_dialog(
    window: MainWindow, monkeypatch: Any, capsys: Any
) -> None:
    opened: list[object] = []
    monkeypatch.setattr(errors.CrashDialog, "open", lambda self: opened.append(self))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(errors, "_headless", errors._headless)  # restored after the test
    errors.install_crash_handlers(window, headless=True)
    window.runner.op(_raise_value_error).start()  # the fixture's runner is synchronous
    assert "boom in a background task" in capsys.readouterr().err
    assert errors.crash_count() == 1 and not opened


def test_a_theme_change_redraws_the_entry_shown(window: MainWindow, monkeypatch: Any) -> None:
    """Applying a theme re-renders what draws with its colours (window_state → MainWindow)."""
    shown: list[int] = []
    monkeypatch.setattr(window.inspector, "show_entry", lambda index: shown.append(index))
    window.apply_theme_key("dark")
    window.apply_theme_key("light")
    assert shown == [window.inspector.index] * 2


def test_a_dark_check_box_shows_its_frame(qtbot: Any) -> None:
    """Fusion draws a check box's frame in the window colour darkened: on the dark palette it all but
    vanished. The theme's style draws it in the muted text colour there (and leaves light alone)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QCheckBox, QStyle, QStyleOptionButton

    from session_studio.ui.theme import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)

    def frame_contrast(theme: str) -> float:
        apply_theme(app, theme)
        box = QCheckBox("an option")
        qtbot.addWidget(box)
        box.resize(160, 30)
        opt = QStyleOptionButton()
        box.initStyleOption(opt)
        r = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)
        img = box.grab().toImage()
        edge = QColor(img.pixel(QPoint(r.left(), r.center().y())))
        inside = QColor(img.pixel(r.center()))
        return abs(edge.lightnessF() - inside.lightnessF())

    try:
        dark = frame_contrast("dark")
        light = frame_contrast("light")
    finally:
        apply_theme(app, "light")
    assert dark > 0.15, dark  # Fusion's own frame there: < 0.01
    assert light > 0.15, light


def test_after_a_theme_switch_the_planners_wrapped_texts_keep_their_height(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """Seen under X at 1100×700 with the timeline shown: after View ▸ Theme ▸ Dark the settings'
    "Defaults: …" note got four of its five lines, cut off mid-line, and kept them through later
    resizes (about one switch in two, offscreen too). The panel's layouts measure again once the
    new style is in."""
    from PySide6.QtWidgets import QLabel

    from .conftest import write_session

    path = write_session(tmp_path / "s.jsonl", [("user", 400), ("assistant", 400)] * 20)
    w = window
    w.show()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    w.planner.set_source(
        "keepRecentTokens/reserveTokens from pi's settings; context window of google/gemini-2.5-pro"
    )
    w.resize(1100, 700)
    qtbot.wait(30)
    squeezed = []
    for key in ("dark", "light") * 4:
        w.a_timeline.setChecked(False)
        w.apply_theme_key(key)
        qtbot.wait(30)
        w.a_timeline.setChecked(True)  # the panel gets short: its body scrolls
        qtbot.wait(60)
        for label in w.planner.findChildren(QLabel):
            shown = label.wordWrap() and label.text() and label.isVisible()
            if shown and label.height() < label.heightForWidth(label.width()):
                squeezed.append((key, label.text()[:40], label.height(), label.heightForWidth(label.width())))
    assert squeezed == []


def test_a_banner_shown_follows_a_theme_switch(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """The banners set their colours when shown: after View ▸ Theme ▸ Dark a cream banner stayed on
    the dark window (its × all but invisible). Their colours are the window's style sheet's now."""
    from PySide6.QtGui import QColor

    from session_studio.ui.theme import current_theme

    from .conftest import write_session

    path = write_session(tmp_path / "s.jsonl", [("user", 20), ("assistant", 20)])
    path.write_bytes(path.read_bytes() + b"{not json\n")  # a damaged line: the issues banner
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None and window.banner.isVisible())

    def banner_colour() -> QColor:
        return QColor(window.banner.grab().toImage().pixel(3, 3))

    try:
        for theme in ("dark", "light", "dark"):
            window.apply_theme_key(theme)
            qtbot.wait(10)
            got, want = banner_colour(), current_theme().warn_bg
            assert abs(got.lightness() - want.lightness()) < 8, (theme, got.name(), want.name())
    finally:
        window.apply_theme_key("light")


def test_a_theme_given_at_launch_is_checked_in_the_menu_and_not_saved(
    window: MainWindow, monkeypatch: Any
) -> None:
    """`--theme light` showed "Follow system" checked under View ▸ Theme, and the desktop's switch
    to dark then turned the window dark."""
    from session_studio.ui import theme

    window.settings.set_theme("system")
    window.override_theme("light")
    assert window.theme_actions["light"].isChecked() and window.settings.theme() == "system"
    monkeypatch.setattr(theme, "system_prefers_dark", lambda: True)
    window._on_color_scheme_changed()
    assert not theme.current_theme().dark
    window.theme_actions["system"].trigger()  # chosen in the menu: saved, and follows the desktop
    assert window.settings.theme() == "system" and theme.current_theme().dark
    window.apply_theme_key("light")
