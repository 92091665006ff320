"""Session and server text is shown literally in every view, never as HTML (issue 12 #2), and one
bad file never empties the session browser (issue 12 #3).

Qt guesses the format of tooltips, QLabel and QMessageBox texts: one that looks like HTML is
rendered as HTML, and an ``<img>`` in it makes Qt read the named file. ``_as_shown`` does what Qt
does with such a string, in a document that records every resource it is asked for.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6 import QtGui
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QImage, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from session_studio.core import Session
from session_studio.core.listing import list_sessions
from session_studio.ui.browser import SessionBrowser
from session_studio.ui.errors import show_error
from session_studio.ui.inspector import EntryInspector
from session_studio.ui.main_window import MainWindow
from session_studio.ui.tree_model import SessionTreeModel

from .conftest import write_session

SENTINEL_COLOR = QColor("#13f527")  # a colour no theme uses: seeing it means the sentinel was loaded


class _SpyDocument(QTextDocument):
    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []

    def loadResource(self, type_: int, name: QUrl) -> Any:
        self.loads.append(name.toString())
        return None


def _as_shown(text: str, rich: bool | None = None) -> tuple[str, list[str]]:
    """What Qt shows for ``text`` in a format-guessing widget, and the resources it would load."""
    doc = _SpyDocument()
    if rich if rich is not None else QtGui.Qt.mightBeRichText(text):
        doc.setHtml(text)
        doc.documentLayout()  # layout asks for the images
        return doc.toPlainText(), doc.loads
    return text, []


def _label_shown(label: QLabel) -> tuple[str, list[str]]:
    fmt = label.textFormat()
    if fmt == Qt.TextFormat.PlainText:
        return label.text(), []
    return _as_shown(label.text(), True if fmt == Qt.TextFormat.RichText else None)


@pytest.fixture
def hostile(tmp_path: Path) -> dict[str, str]:
    sentinel = tmp_path / "sentinel.png"
    img = QImage(400, 300, QImage.Format.Format_RGB32)
    img.fill(SENTINEL_COLOR)
    img.save(str(sentinel))
    markup = f'<img src="{sentinel}"><b>B</b><a href="javascript:alert(1)">a</a><style>*{{color:red}}</style>'
    return {
        "markup": markup,
        "text": markup + "\x1b]52;c;Zm9v\x07 \u202eevil\u202c",
        "img": f'<img src="{sentinel}">',
        "sentinel": str(sentinel),
    }


def _hostile_session(tmp_path: Path, h: dict[str, str]) -> Path:
    t = h["text"]
    spec: list[Any] = [
        {"type": "message", "id": t, "message": {"role": "user", "content": t, "timestamp": 1}},
        {
            "type": "message",
            "timestamp": t,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": t},
                    {"type": "toolCall", "id": t, "name": t, "arguments": {t: t}},
                ],
                "provider": t,
                "model": t,
                "api": "anthropic-messages",
                "stopReason": "toolUse",
                "errorMessage": t,
                "timestamp": 2,
                "usage": {
                    "input": 1,
                    "output": 1,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 2,
                    "cost": {"total": 0},
                },
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": t,
                "toolName": t,
                "content": [{"type": "text", "text": t}],
                "isError": True,
                "timestamp": 3,
            },
        },
        {"type": "custom_message", "customType": t, "content": t, "display": True},
        {"type": "custom", "customType": t, "data": {t: t}},
        {"type": "session_info", "name": t},
        {"type": "model_change", "provider": t, "modelId": t},
        {"type": "message", "message": {"role": "user", "content": "last", "timestamp": 4}},
    ]
    path = write_session(tmp_path / "hostile.jsonl", spec, cwd=t)
    # a label on the first entry (its id is the hostile text)
    s = Session.open(path)
    with path.open("a", encoding="utf-8") as fh:
        import json

        leaf = s.records[-1].id
        fh.write(
            json.dumps(
                {
                    "type": "label",
                    "id": "lab1",
                    "parentId": leaf,
                    "timestamp": "2025-01-01T11:00:00.000Z",
                    "targetId": t,
                    "label": t,
                }
            )
            + "\n"
        )
    return path


def _assert_literal(shown: str, loads: list[str], h: dict[str, str]) -> None:
    assert not loads, f"Qt would load {loads}"
    assert "<b>" not in shown or h["img"] in shown, "markup was interpreted"


def test_tree_rows_and_tooltips_are_plain(qtbot: Any, tmp_path: Path, hostile: dict[str, str]) -> None:
    s = Session.open(_hostile_session(tmp_path, hostile))
    model = SessionTreeModel()
    model.set_session(s)
    seen_literal = False
    for i in range(len(s.records)):
        idx = model.index_of(i)
        if not idx.isValid():
            continue
        shown, loads = _as_shown(str(model.data(idx, Qt.ItemDataRole.ToolTipRole)))
        _assert_literal(shown, loads, hostile)
        seen_literal |= hostile["img"] in shown
        row = str(model.data(idx, Qt.ItemDataRole.DisplayRole))
        assert "\x1b" not in row and "\u202e" not in row  # control and bidi characters made visible
        assert len(row) < 400
    assert seen_literal  # the hostile id is in a tooltip, as text


def test_inspector_title_and_body_are_plain(qtbot: Any, tmp_path: Path, hostile: dict[str, str]) -> None:
    s = Session.open(_hostile_session(tmp_path, hostile))
    w = EntryInspector()
    qtbot.addWidget(w)
    w.resize(900, 700)
    w.show()
    w.set_session(s)
    for i in range(len(s.records)):
        w.show_entry(i)
        img = w.grab().toImage()
        shown, loads = _label_shown(w.title)
        _assert_literal(shown, loads, hostile)
        tip, loads = _as_shown(w.title.toolTip())
        _assert_literal(tip, loads, hostile)
        assert not w.browser.blocked
        assert not _has_colour(img, SENTINEL_COLOR)
        body = w.browser.toPlainText()
        # shown as marks, never obeyed: an override would make "evil" read "live" (Trojan Source)
        assert "\u202e" not in body and "\x1b" not in body and "\x07" not in body
    w.show_entry(0)
    assert "⟨U+202E⟩evil" in w.browser.toPlainText()
    assert 'id <img src="' in _label_shown(w.title)[0]  # literal (and elided)
    assert hostile["markup"] in w.browser.toPlainText()


def _has_colour(img: QImage, colour: QColor) -> bool:
    c = colour.rgb()
    return any(img.pixel(x, y) == c for y in range(0, img.height(), 3) for x in range(0, img.width(), 3))


def _all_texts(root: QWidget) -> list[tuple[str, str, list[str]]]:
    """(where, shown text, loads) for every tooltip and label text under ``root``."""
    out = []
    for wdg in [root, *root.findChildren(QWidget)]:
        name = f"{type(wdg).__name__}:{wdg.objectName()}"
        if wdg.toolTip():
            out.append((name + ".toolTip", *_as_shown(wdg.toolTip())))
        if isinstance(wdg, QLabel) and wdg.text():
            out.append((name + ".text", *_label_shown(wdg)))
    return out


def test_window_shows_hostile_session_literally(
    qtbot: Any, window: MainWindow, tmp_path: Path, hostile: dict[str, str]
) -> None:
    path = _hostile_session(tmp_path, hostile)
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None, timeout=10_000)
    s = window.doc.session
    for i in range(len(s.records)):
        window.doc.select(i)
        img = window.grab().toImage()
        assert not _has_colour(img, SENTINEL_COLOR), f"entry {i}: the sentinel image was loaded"
        for where, _shown, loads in _all_texts(window):
            assert not loads, f"{where} would load {loads}"
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        assert not _has_colour(window.grab().toImage(), SENTINEL_COLOR), f"tab {tab}"
    assert not window.why.blocked and not window.inspector.browser.blocked
    assert "\u202e" not in window.windowTitle() and "\x1b" not in window.windowTitle()
    title, loads = _label_shown(window.session_title)
    assert not loads and hostile["img"] in title


def test_error_dialog_shows_server_text_literally(qtbot: Any, hostile: dict[str, str]) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    show_error(
        parent, hostile["markup"], f"HTTP 500: {hostile['text']}\n\nmore {hostile['markup']}", "details"
    )
    (box,) = parent.findChildren(QMessageBox)
    for text in (box.text(), box.informativeText()):
        shown, loads = _as_shown(text, True if box.textFormat() == Qt.TextFormat.RichText else None)
        assert not loads
        assert hostile["img"] in shown
    box.close()


def test_browser_lists_hostile_and_broken_sessions(
    qtbot: Any, tmp_path: Path, hostile: dict[str, str]
) -> None:
    root = tmp_path / "sessions"
    proj = root / "--proj--"
    proj.mkdir(parents=True)
    write_session(
        proj / "a-good.jsonl",
        [{"type": "message", "message": {"role": "user", "content": "good one", "timestamp": 1}}],
    )
    write_session(
        proj / "b-far-future.jsonl",
        [
            {
                "type": "message",
                "timestamp": "x",
                "message": {"role": "user", "content": "future", "timestamp": 1e20},
            }
        ],
    )
    bad_header = proj / "c-bad-header.jsonl"
    write_session(
        bad_header,
        [{"type": "message", "message": {"role": "user", "content": "bad header", "timestamp": 1}}],
    )
    bad_header.write_text(bad_header.read_text().replace('"2025-01-01T10:00:00.000Z"', "1e400", 1))
    hostile_path = _hostile_session(tmp_path, hostile)
    (proj / "d-hostile.jsonl").write_bytes(hostile_path.read_bytes())
    os.mkfifo(proj / "e-fifo.jsonl")  # opening it for reading would block forever

    infos = list_sessions(root)
    by_file = {os.path.basename(i.path): i for i in infos}
    assert set(by_file) == {
        "a-good.jsonl",
        "b-far-future.jsonl",
        "c-bad-header.jsonl",
        "d-hostile.jsonl",
        "e-fifo.jsonl",
    }
    assert by_file["e-fifo.jsonl"].error == "not a regular file"
    assert by_file["b-far-future.jsonl"].first_message == "future"

    b = SessionBrowser()
    qtbot.addWidget(b)
    b.resize(1100, 700)
    b.show()
    b.set_sessions(infos, hostile["text"])
    b.set_recent([str(proj / "d-hostile.jsonl"), hostile["text"]])
    img = b.grab().toImage()
    assert not _has_colour(img, SENTINEL_COLOR)
    rows: list[str] = []
    m = b.model
    for g in range(m.rowCount()):
        grp = m.item(g)
        for r in range(grp.rowCount()):
            rows.append(grp.child(r, 0).text())
            assert not _as_shown(grp.child(r, 0).toolTip())[1]
    assert len(rows) == 5
    assert any("not a regular file" in r for r in rows)
    for where, _shown, loads in _all_texts(b):
        assert not loads, f"{where} would load {loads}"
    assert b.location.text() == hostile["text"]  # shown as given, as plain text


def test_one_failing_file_is_its_own_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from session_studio.core import listing

    for name in ("a.jsonl", "b.jsonl"):
        write_session(
            tmp_path / name,
            [{"type": "message", "message": {"role": "user", "content": name, "timestamp": 1}}],
        )
    real = listing.read_info

    def flaky(path: Any) -> Any:
        if str(path).endswith("b.jsonl"):
            raise RecursionError("maximum recursion depth exceeded")
        return real(path)

    monkeypatch.setattr(listing, "read_info", flaky)
    infos = {os.path.basename(i.path): i for i in list_sessions(tmp_path)}
    assert infos["a.jsonl"].error is None and infos["a.jsonl"].first_message == "a.jsonl"
    assert "RecursionError" in (infos["b.jsonl"].error or "")


def test_headless_errors_open_no_dialog(
    qtbot: Any, capsys: pytest.CaptureFixture[str], hostile: dict[str, str]
) -> None:
    import sys

    from session_studio.ui import errors

    parent = QWidget()
    qtbot.addWidget(parent)
    old_hooks = sys.excepthook, __import__("threading").excepthook
    try:
        errors.install_crash_handlers(parent, headless=True)
        show_error(parent, "Generate failed", hostile["text"])
        for _ in range(3):  # the same error again and again (a failing paintEvent): reported once
            try:
                raise ValueError("cannot convert float NaN to integer")
            except ValueError:
                sys.excepthook(*sys.exc_info())
        assert errors.crash_count() == 1
    finally:
        errors.install_crash_handlers(None, headless=False)
        sys.excepthook, __import__("threading").excepthook = old_hooks
    assert not parent.findChildren(QMessageBox) and not parent.findChildren(errors.CrashDialog)
    err = capsys.readouterr().err
    assert "Generate failed" in err and err.count("ValueError: cannot convert float NaN") == 1
    assert "\x1b" not in err and "\u202e" not in err  # server text cannot drive the terminal


def test_a_file_that_is_no_session_has_its_own_row(tmp_path: Path) -> None:
    """The list left such files out silently (314 rows for 315 files)."""
    proj = tmp_path / "--proj--"
    proj.mkdir()
    write_session(proj / "a.jsonl", [{"type": "message", "message": {"role": "user", "content": "hi"}}])
    (proj / "b-no-header.jsonl").write_text('{"type":"message","id":"x","parentId":null}\n')
    (proj / "c-empty.jsonl").write_bytes(b"")
    by_file = {os.path.basename(i.path): i for i in list_sessions(tmp_path)}
    assert set(by_file) == {"a.jsonl", "b-no-header.jsonl", "c-empty.jsonl"}
    assert by_file["a.jsonl"].error is None
    assert "no valid session header" in (by_file["b-no-header.jsonl"].error or "")
    assert by_file["c-empty.jsonl"].error == "is empty"
