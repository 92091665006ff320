"""A narrow window (1024–1100 px, a laptop's half screen): nothing cut off, the reading column first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication

from session_studio.ui.main_window import MainWindow

from .conftest import write_session


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


def _settle(qtbot: Any) -> None:
    for _ in range(3):  # the fit runs now and once more after the layout settled
        QApplication.processEvents()
        qtbot.wait(10)


def test_the_default_split_gives_the_middle_column_more_than_the_tree(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """At 1100 px the tree took 40% and the middle column (the entry, the preview's summary, before
    and after) was left ~340 px; the tree's rows need less."""
    _open(qtbot, window, write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50)]))
    for width in (1024, 1100):
        window.resize(width, 700)
        _settle(qtbot)
        tree, middle, side = window.splitter.sizes()
        assert middle > tree, (width, window.splitter.sizes())
        assert tree >= 300 and side >= window.planner.minimumSizeHint().width()


def test_the_planner_is_never_narrower_than_its_settings(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The planner's body scrolls without a horizontal bar: a panel narrower than its form cut off
    the spin boxes' right end and the notes' line ends (seen at 1100 px in the light theme)."""
    _open(qtbot, window, write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50)]))
    window.resize(1024, 700)
    _settle(qtbot)
    window.splitter.setSizes([500, 500, 40])  # the user drags the planner as narrow as it goes
    _settle(qtbot)
    scroll = window.planner.body_scroll
    assert scroll.widget().width() <= scroll.viewport().width()


def test_a_long_inspector_title_wraps_instead_of_running_under_the_buttons(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """ "message · bashExecution · id f3a… · line 3167 · <time>" was cut off mid-word under Copy id
    and Raw JSON in a narrow middle column, the id with it."""
    _open(qtbot, window, write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50)]))
    window.tabs.setCurrentWidget(window.inspector)
    window.doc.select(1)
    window.resize(1024, 700)
    _settle(qtbot)  # the window's own fit first: the user drags the splitter after it
    window.splitter.setSizes([600, 120, 300])
    _settle(qtbot)
    title = window.inspector.title
    assert "line" in title.text()
    need = title.heightForWidth(title.width())
    assert need > 1.5 * title.fontMetrics().lineSpacing()  # more than one line at this width …
    qtbot.waitUntil(lambda: title.height() >= need)  # … and given the height for all of them


def test_the_why_table_keeps_its_words_whole(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """The accumulation table's last column ("≥ keep: budget reached") is wide: in a narrow pane the
    other columns got their minimum, and an entry such as "bashExecution" broke mid-word."""
    turns: list[Any] = [("user", 3000), ("assistant", 3000), ("toolResult", 3000)] * 6
    _open(qtbot, window, write_session(tmp_path / "s.jsonl", [*turns, ("user", 100)]))
    window.tabs.setCurrentWidget(window.why)
    window.resize(1024, 700)
    _settle(qtbot)  # the window's own fit first: the user drags the splitter after it
    window.splitter.setSizes([600, 300, 320])
    _settle(qtbot)
    assert "budget reached" in window.why.toPlainText()  # the wide column is there
    doc = window.why.document()
    words = []
    block = doc.begin()
    while block.isValid():
        text = block.text()
        if text and " " not in text and block.layout() is not None:
            words.append((text, block.layout().lineCount()))
        block = block.next()
    assert any(t == "toolResult" for t, _ in words), words
    assert all(n == 1 for _, n in words), [w for w in words if w[1] != 1]


def test_the_tree_panes_title_and_count_wrap_in_a_narrow_pane(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The file's name and project folder above the tree, and "N of M entries shown · active path
    K · L labels" below it, were cut off at the pane's edge."""
    _open(qtbot, window, write_session(tmp_path / "session-with-a-long-name.jsonl", [("user", 50)]))
    window.resize(1024, 700)
    _settle(qtbot)  # the window's own fit first: the user drags the splitter after it
    window.splitter.setSizes([150, 600, 320])
    _settle(qtbot)
    for label in (window.session_title, window.tree_count):
        assert label.text()
        need = label.heightForWidth(label.width())
        assert need > 1.5 * label.fontMetrics().lineSpacing(), label.text()
        qtbot.waitUntil(lambda label=label, need=need: label.height() >= need)
