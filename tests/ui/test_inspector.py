from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

from session_studio.core import Session
from session_studio.ui.inspector import EntryInspector

from .conftest import write_session


def _png() -> str:
    img = QImage(8, 6, QImage.Format.Format_RGB32)
    img.fill(QColor("red"))
    ba = QByteArray()
    buf = QBuffer(ba)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return base64.b64encode(bytes(ba.data())).decode()


def _session(tmp_path: Path) -> Session:
    evil = (
        "# Title\n\nSome **bold** text.\n\n![remote](http://example.com/x.png) <img src='http://example.com/y.png'>"
        " <script>alert(1)</script> [link](http://example.com)"
    )
    spec = [
        {
            "type": "message",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": evil},
                    {"type": "image", "data": _png(), "mimeType": "image/png"},
                ],
                "timestamp": 1,
            },
        },
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "stopReason": "toolUse",
                "timestamp": 2,
                "usage": {
                    "input": 10,
                    "output": 5,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 15,
                    "cost": {"total": 0.0012},
                },
                "content": [
                    {"type": "thinking", "thinking": "secret plan"},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
                ],
            },
        },
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "\n".join(f"line {i}" for i in range(100))}],
                "isError": False,
                "timestamp": 3,
            },
        },
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "ls -la",
                "output": "total 0",
                "exitCode": 0,
                "timestamp": 4,
            },
        },
    ]
    return Session.open(write_session(tmp_path / "i.jsonl", spec))


def _inspector(qtbot: Any, s: Session) -> EntryInspector:
    """An inspector showing ``s`` (closed with the test)."""
    w = EntryInspector()
    qtbot.addWidget(w)
    w.set_session(s)
    return w


def test_untrusted_content_is_inert(qtbot: Any, tmp_path: Path) -> None:
    s = _session(tmp_path)
    w = _inspector(qtbot, s)
    w.show_entry(0)
    doc = w.browser.document()
    text = w.browser.toPlainText()
    assert "<script>alert(1)</script>" in text  # shown as text, not executed or parsed
    assert "Title" in text
    assert all("example.com" not in u for u in _loaded_urls(w))
    assert doc.resource(2, __import__("PySide6.QtCore").QtCore.QUrl("entryimg:img1")) is not None


def _loaded_urls(w: EntryInspector) -> list[str]:
    # every non-entry resource request is refused and recorded; nothing else was loaded
    return [u for u in w.browser.blocked if u.startswith("entryimg:")]


def test_assistant_thinking_collapsed_and_usage(qtbot: Any, tmp_path: Path) -> None:
    s = _session(tmp_path)
    w = _inspector(qtbot, s)
    w.show_entry(1)
    text = w.browser.toPlainText()
    assert "Thinking" in text and "secret plan" not in text
    assert "→ read" in text and '"path": "a.py"' in text
    assert "0.0012" in text and "totalTokens" in text
    w._toggle("c.0")
    assert "secret plan" in w.browser.toPlainText()


def test_long_tool_result_folded(qtbot: Any, tmp_path: Path) -> None:
    s = _session(tmp_path)
    w = _inspector(qtbot, s)
    w.show_entry(2)
    assert "line 99" not in w.browser.toPlainText() and "show all 100 lines" in w.browser.toPlainText()
    w._toggle("r.0")
    assert "line 99" in w.browser.toPlainText()


def test_raw_json(qtbot: Any, tmp_path: Path) -> None:
    s = _session(tmp_path)
    w = _inspector(qtbot, s)
    w.show_entry(3)
    assert "ls -la" in w.browser.toPlainText()
    w.raw_button.setChecked(True)
    assert '"command": "ls -la"' in w.raw.toPlainText()


def test_a_bash_execution_without_exit_code_says_so(qtbot: Any, tmp_path: Path) -> None:
    """pi stores exitCode null for a command it killed or never saw finish; the heading said
    "exit None" (Python's word). It says "no exit code"; a real code shows as before."""
    spec: list[Any] = [
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": c,
                "output": "",
                "exitCode": code,
                "timestamp": 1,
            },
        }
        for c, code in (("cargo check", None), ("false", 1))
    ]
    s = Session.open(write_session(tmp_path / "b.jsonl", spec))
    w = _inspector(qtbot, s)
    w.show_entry(0)
    text = w.browser.toPlainText()
    assert "no exit code" in text and "None" not in text
    w.show_entry(1)
    assert "exit 1" in w.browser.toPlainText()


def test_a_line_without_type_id_or_time_is_titled_without_undefined(qtbot: Any, tmp_path: Path) -> None:
    """A damaged file's line of `42` or `{}` is an entry to pi, with no type, id or timestamp; the
    inspector's title read "undefined · id undefined · line 3 · undefined"."""
    path = write_session(tmp_path / "d.jsonl", [("user", 10)])
    with path.open("a") as fh:
        fh.write("42\n{}\n")
    s = Session.open(path)
    w = _inspector(qtbot, s)
    for i in (len(s.records) - 2, len(s.records) - 1):
        w.show_entry(i)
        title = w.title.text()
        assert "undefined" not in title and "no type" in title and "no id" in title, title
        assert f"line {s.records[i].line}" in title
    w.show_entry(0)  # an ordinary entry keeps its type, id and time
    assert s.records[0].id in w.title.text() and "no id" not in w.title.text()


def test_a_calls_text_of_several_lines_reads_as_its_lines(qtbot: Any, tmp_path: Path) -> None:
    """A write's content, an edit's old and new text: their lines under their names (not one JSON
    string of "\\n"s); the other arguments stay JSON, in the call's order."""
    body = "def main():\n    print('hi')\n    return 0\n"
    s = Session.open(
        str(
            write_session(
                tmp_path / "w.jsonl",
                [
                    {
                        "type": "message",
                        "message": {
                            "role": "assistant",
                            "stopReason": "toolUse",
                            "timestamp": 2,
                            "content": [
                                {
                                    "type": "toolCall",
                                    "id": "c1",
                                    "name": "write",
                                    "arguments": {"path": "app.py", "content": body, "mode": 420},
                                }
                            ],
                        },
                    }
                ],
            )
        )
    )
    w = _inspector(qtbot, s)
    w.show_entry(0)
    text = w.browser.toPlainText()
    assert "\\n" not in text
    assert "content · 4 lines · 41 chars" in text and "    print('hi')" in text
    assert text.index('"path": "app.py"') < text.index("content ·") < text.index('"mode": 420')
    w.raw_button.setChecked(True)
    assert json.loads(w.raw.toPlainText())["message"]["content"][0]["arguments"]["content"] == body


def test_a_summarys_file_lists_keep_one_path_a_line(qtbot: Any, tmp_path: Path) -> None:
    summary = (
        "## Goal\nShip it.\n\n<read-files>\nsrc/a.py\nsrc/b.py\n</read-files>\n\n"
        "<modified-files>\nsrc/c.py\n</modified-files>"
    )
    s = Session.open(
        str(
            write_session(
                tmp_path / "c.jsonl",
                [
                    ("user", 50),
                    {
                        "type": "compaction",
                        "summary": summary,
                        "firstKeptEntryId": "e0000",
                        "tokensBefore": 9,
                    },
                ],
            )
        )
    )
    w = _inspector(qtbot, s)
    w.show_entry(1)
    lines = w.browser.toPlainText().splitlines()
    for line in ("<read-files>", "src/a.py", "src/b.py", "</read-files>", "<modified-files>", "src/c.py"):
        assert line in lines
    assert "Ship it." in lines and "## Goal" not in lines  # the rest is still Markdown


def test_no_scroll_bar_for_a_pixel_of_overflow(qtbot: Any) -> None:
    """A table of width 100% is laid out a pixel wider than the text: "Why this cut" had a
    horizontal scroll bar that moved nothing. One wider than that still scrolls."""
    from session_studio.ui.inspector import SafeTextBrowser

    view = SafeTextBrowser()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    view.setHtml("<table width='100%' cellspacing='0' cellpadding='2'><tr><td>a</td><td>b</td></tr></table>")
    qtbot.wait(10)
    assert view.horizontalScrollBar().maximum() <= SafeTextBrowser.OVERFLOW_SLACK_PX
    assert not view.horizontalScrollBar().isVisible()
    view.setHtml("<p style='white-space:pre'>" + "x" * 400 + "</p>")
    qtbot.waitUntil(lambda: view.horizontalScrollBar().isVisible())
