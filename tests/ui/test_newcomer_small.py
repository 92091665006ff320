"""Issue 9 #12: the smaller things a newcomer met (messages, Recent, wrapping, dialogs, status bar)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QPlainTextEdit

from session_studio.core import Session
from session_studio.ui.main_window import MainWindow
from session_studio.ui.preview import ProviderDialog, custom_key_problem

from .conftest import side_branch_assistant, write_session


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None or w.doc.state.nothing_to_compact, timeout=5000)


def _boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def _close_boxes() -> None:
    for b in _boxes():
        b.close()


@pytest.fixture
def binary_file(tmp_path: Path) -> Path:
    p = tmp_path / "blob.jsonl"
    p.write_bytes(random.Random(7).randbytes(150_000))
    return p


def test_binary_file_is_not_called_empty(binary_file: Path) -> None:
    s = Session.open(str(binary_file))
    assert s.reset
    assert s.issues[0].message.startswith("not a pi session: binary data")
    assert "empty" not in s.issues[0].message
    assert Session.from_bytes(b"").issues[0].message.startswith("the file is empty")


def test_binary_file_banner_in_the_window(
    qtbot: Any, window: MainWindow, binary_file: Path, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    window.tabs.setCurrentWidget(window.preview)
    qtbot.waitUntil(lambda: "messages" in window.preview.before_title.text())
    window.open_path(str(binary_file))
    qtbot.waitUntil(lambda: window.doc.session is not None and window.doc.session.reset)
    text = window.banner.label.text()
    assert "binary data" in text and "empty" not in text
    # the previous file's context counts are gone
    assert "messages" not in window.preview.before_title.text()
    assert "messages" not in window.preview.after_title.text()


def test_deleted_recent_file_is_removed_on_open(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    gone = write_session(tmp_path / "gone.jsonl", [("user", 20), ("assistant", 20)])
    _open(qtbot, window, gone)
    assert str(gone) in window.settings.recent_files()
    window.doc.close()
    gone.unlink()
    window.open_path(str(gone))
    qtbot.waitUntil(lambda: bool(_boxes()))
    _close_boxes()
    assert str(gone) not in window.settings.recent_files()
    shown = [window.browser.recent.item(i).data(256) for i in range(window.browser.recent.count())]
    assert str(gone) not in shown


def test_bad_recent_file_is_marked(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    bad = write_session(tmp_path / "bad.jsonl", [("user", 20), ("assistant", 20)])
    _open(qtbot, window, bad)
    window.doc.close()
    os.chmod(bad, 0)
    if os.access(bad, os.R_OK):  # root reads anything: make it unreadable another way
        os.chmod(bad, 0o644)
        bad.unlink()
        bad.mkdir()
    try:
        window.open_path(str(bad))
        qtbot.waitUntil(lambda: bool(_boxes()))
        _close_boxes()
        assert str(bad) in window.settings.recent_files()
        assert str(bad) in window.settings.recent_problems()
        item = window.browser.recent.item(0)
        assert "cannot open" in item.text() and "Last attempt" in item.toolTip()
    finally:
        if bad.is_dir():
            bad.rmdir()
        else:
            os.chmod(bad, 0o644)


def test_failed_command_line_open_still_fills_the_browser(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    assert window.browser.model.rowCount() == 0
    window.open_path(str(tmp_path / "does-not-exist.jsonl"))
    qtbot.waitUntil(lambda: bool(_boxes()))
    _close_boxes()
    qtbot.waitUntil(lambda: window.browser.model.rowCount() > 0)


def test_long_tool_arguments_wrap_in_the_inspector(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    long_arg = "x" * 3000
    call = {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": long_arg}}],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "api": "anthropic-messages",
            "stopReason": "toolUse",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "timestamp": 1,
        },
    }
    path = write_session(tmp_path / "long.jsonl", [("user", 20), call])
    _open(qtbot, window, path)
    window.tabs.setCurrentWidget(window.inspector)
    window.doc.select(1)
    b = window.inspector.browser
    qtbot.waitUntil(lambda: "xxxx" in b.toPlainText())
    assert b.horizontalScrollBar().maximum() == 0
    assert b.document().size().width() <= b.viewport().width() + 1


def test_branch_here_speaks_window_language(qtbot: Any, window: MainWindow, branching_session: Path) -> None:
    _open(qtbot, window, branching_session)
    side = side_branch_assistant(window)
    window.doc.select(side)
    window.a_branch.trigger()
    text = window.last_dialog.informativeText()
    window.last_dialog.close()
    assert "--" not in text
    assert "Session ▸ Branch with summary…" in text and "Session ▸ Label entry…" in text


def test_provider_key_placeholder_follows_the_api(qtbot: Any) -> None:
    dlg = ProviderDialog({"kind": "anthropic"})
    qtbot.addWidget(dlg)
    assert "ANTHROPIC_API_KEY" in dlg.key_env.placeholderText()
    assert "anthropic.com" in dlg.base_url.placeholderText()
    dlg.kind.setCurrentIndex(dlg.kind.findData("openai"))
    assert "OPENAI_API_KEY" in dlg.key_env.placeholderText()
    assert "openai.com" in dlg.base_url.placeholderText()


def test_the_provider_dialog_shows_its_examples_whole(qtbot: Any) -> None:
    """The base URL's example was cut off mid-host ("… · http://localh") in the dialog as it
    opened; each field is now as wide as its example, for either API, and stays so."""
    dlg = ProviderDialog({"kind": "openai"})
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    for kind in ("openai", "anthropic", "openai"):
        dlg.kind.setCurrentIndex(dlg.kind.findData(kind))
        QApplication.processEvents()
        for field in (dlg.base_url, dlg.model, dlg.key_env):
            text = field.placeholderText()
            assert field.width() >= field.fontMetrics().horizontalAdvance(text) + 8, (kind, text)


def test_the_name_and_label_prompts_have_room_and_say_what_they_write(
    qtbot: Any, window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rename session opened a 200 px dialog saying only "Session name:"."""
    from PySide6.QtCore import QCoreApplication, QEvent, QTimer
    from PySide6.QtWidgets import QInputDialog

    seen: list[tuple[int, str]] = []

    def answer() -> None:  # the dialog shown, answered whatever it looks like (a test never hangs)
        dialog = next(
            w for w in QApplication.topLevelWidgets() if isinstance(w, QInputDialog) and w.isVisible()
        )
        seen.append((dialog.width(), dialog.labelText()))
        dialog.setTextValue("a name")
        dialog.accept()

    QTimer.singleShot(0, answer)
    assert window.ask_text("Rename session", "Name:", "") == "a name"
    assert seen and seen[0][0] >= 420
    # answered, the prompt is deleted: not one more child of the window per question
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not window.findChildren(QInputDialog)
    # the rename's prompt says where pi shows the name and what is written
    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(MainWindow, "ask_text", lambda self, *a: asked.append(a) and None)
    _open(qtbot, window, branching_session)
    window.a_rename.trigger()
    assert asked and "/resume" in asked[0][1] and "session_info" in asked[0][1]


def test_missing_key_message_names_the_dialog_field() -> None:
    anth = {"kind": "anthropic", "base_url": "https://api.anthropic.com", "model": "m", "key_env": ""}
    msg = custom_key_problem(anth, {})
    assert msg is not None and "“API key variable”" in msg and "ANTHROPIC_API_KEY" in msg
    unset = custom_key_problem({**anth, "key_env": "MY_KEY"}, {})
    assert unset is not None and "MY_KEY" in unset and "“API key variable”" in unset
    assert custom_key_problem({**anth, "key_env": "MY_KEY"}, {"MY_KEY": "k"}) is None
    local = {"kind": "openai", "base_url": "http://localhost:1/v1", "model": "m", "key_env": ""}
    assert custom_key_problem(local, {}) is None


def test_generate_with_custom_anthropic_and_no_key_says_what_to_fill(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    _open(qtbot, window, split_turn_session)
    window.set_custom_provider(
        {"kind": "anthropic", "base_url": "https://api.anthropic.com", "model": "claude-x", "key_env": ""}
    )
    window.tabs.setCurrentWidget(window.preview)
    window.preview.generate_button.click()
    qtbot.waitUntil(lambda: bool(_boxes()))
    box = _boxes()[0]
    text = box.informativeText()
    box.close()
    assert "API key variable" in text and "enter a key" not in text
    assert window.doc.outcome is None


def test_status_bar_counts_follow_writes(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50), ("user", 50)])
    _open(qtbot, window, path)
    assert "3 entries" in window.status_path.text() or "4 entries" in window.status_path.text()
    n = len(window.doc.session.records)
    window.doc.select(1)
    monkeypatch.setattr(MainWindow, "ask_text", lambda self, *a: "important")
    window.a_label.trigger()
    qtbot.waitUntil(lambda: len(window.doc.session.records) == n + 1)
    assert f"{n + 1:,} entries" in window.status_path.text()
    from session_studio.core.listing import fmt_size

    assert fmt_size(path.stat().st_size) in window.status_path.text()  # the browser's own wording
    assert json.loads(path.read_text().splitlines()[-1])["type"] == "label"


def test_the_label_prompt_names_the_entry_it_labels(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The label dialog said only "Label (empty clears it):": which entry it labels is in it (id,
    role and the start of its text), as the commit dialog says which entry is kept first."""
    path = write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50), ("user", 50)])
    _open(qtbot, window, path)
    s = window.doc.session
    target = next(i for i in range(len(s.records)) if s.records[i].role == "assistant")
    window.doc.select(target)
    asked: list[tuple[str, ...]] = []
    monkeypatch.setattr(MainWindow, "ask_text", lambda self, *a: asked.append(a) and None)
    window.a_label.trigger()
    (title, label, _default) = asked[0]
    assert title == "Label entry"
    assert label.startswith(
        f"<qt>Label of {s.records[target].id} (assistant: {window.tree_model.preview(target)[:20]}"
    )
    assert label.endswith("<br>(empty clears it):</qt>")
    # the entry's text is shown, never taken for HTML
    window.tree_model._preview[target] = "<b>bold</b> & <img src='x'>"
    window.a_label.trigger()
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;img src=" in asked[1][1] and "<b>" not in asked[1][1]


def test_the_load_issues_details_list_the_issues_at_once(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The banner's "Details…" opened a message box that showed only a heading and another
    "Show Details…" button; the issues are now listed in the first dialog, each with its line."""
    path = write_session(tmp_path / "d.jsonl", [("user", 20), ("assistant", 20)])
    with path.open("a") as fh:
        fh.write('{"type": "message", broken\n42\n')
    _open(qtbot, window, path)
    banner = window.banner
    qtbot.waitUntil(banner.isVisible)
    banner.details.click()
    dlg = banner.dialog
    assert dlg is not None and dlg.isVisible()
    listing = dlg.findChild(QPlainTextEdit)
    assert listing is not None and listing.isReadOnly()
    lines = listing.toPlainText().splitlines()
    issues = window.doc.session.issues
    assert len(lines) == len(issues) >= 1 and lines[0].startswith(f"line {issues[0].line}: ")
    label = dlg.findChild(QLabel).text()
    n, on = len(issues), len({i.line for i in issues})
    assert label.startswith(f"{n} issue{'s' if n != 1 else ''} on {on} line{'s' if on != 1 else ''}: ")
    dlg.close()


def test_escape_in_the_entry_search_clears_it_then_goes_back_to_the_tree(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """Escape in the search field did nothing; it clears the search (the whole tree is shown again),
    and a second Escape puts the keyboard back in the tree."""
    from PySide6.QtCore import Qt

    path = write_session(tmp_path / "s.jsonl", [("user", 20), ("assistant", 20), ("user", 20)])
    _open(qtbot, window, path)
    window.show()
    window.activateWindow()
    window.search.setFocus()
    qtbot.keyClicks(window.search, "zzz")
    qtbot.keyClick(window.search, Qt.Key.Key_Escape)
    assert window.search.text() == ""
    qtbot.keyClick(window.search, Qt.Key.Key_Escape)
    qtbot.waitUntil(window.tree.hasFocus, timeout=2000)


def test_down_or_return_in_the_entry_search_goes_to_the_rows_found(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt

    path = write_session(tmp_path / "s.jsonl", [("user", 20), ("assistant", 20), ("user", 20)])
    _open(qtbot, window, path)
    window.show()
    window.activateWindow()
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Return):
        window.search.setFocus()
        qtbot.waitUntil(window.search.hasFocus, timeout=2000)
        qtbot.keyClick(window.search, key)
        qtbot.waitUntil(window.tree.hasFocus, timeout=2000)
        assert window.tree.currentIndex().isValid()


def test_the_recent_menu_names_files_as_the_browser_does(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """File ▸ Open Recent listed whole paths (a timestamp and a UUID each, cut by the screen):
    it names them as the browser's Recent files do, numbered, with the path as the tooltip."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_session(tmp_path / "a" / "s.jsonl", [("user", 20), ("assistant", 20)])
    second = write_session(tmp_path / "b" / "s.jsonl", [("user", 20), ("assistant", 20)])
    for f in (first, second):
        _open(qtbot, window, f)
    window.recent_menu.aboutToShow.emit()
    actions = window.recent_menu.actions()
    assert [a.text() for a in actions] == ["&1 s.jsonl · b", "&2 s.jsonl · a"]
    assert [a.toolTip() for a in actions] == [str(second), str(first)]
    assert [e[1] for e in window.browser.recent_entries()] == ["s.jsonl · b", "s.jsonl · a"]
