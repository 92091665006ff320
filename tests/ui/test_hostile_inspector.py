"""Hostile session content in the entry inspector: painted, inert, bounded (issue 12 #1/#3, issue 9 #10).

Every test paints the widget (``grab()``): Qt asks for resources and lays text out only when
painting, so setting the text alone proves nothing.
"""

from __future__ import annotations

import base64
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QColor, QImage

from session_studio.core import Session
from session_studio.ui.inspector import EntryInspector

from .conftest import write_session


def _png(color: str, w: int = 64, h: int = 48) -> bytes:
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor(color))
    ba = QByteArray()
    buf = QBuffer(ba)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    img.save(buf, "PNG")
    return bytes(ba.data())


class _CountingServer:
    """An HTTP server on 127.0.0.1 that serves a red PNG and counts every request."""

    def __init__(self) -> None:
        self.hits = 0
        body = _png("red")
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_CountingServer]:
    s = _CountingServer()
    yield s
    s.close()


def _red_pixels(img: QImage) -> int:
    red = QColor("red").rgb()
    step = 2
    return sum(
        1 for y in range(0, img.height(), step) for x in range(0, img.width(), step) if img.pixel(x, y) == red
    )


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}


def _image_markdown(tmp_path: Path, server: _CountingServer) -> str:
    sentinel = tmp_path / "sentinel.png"
    sentinel.write_bytes(_png("red"))
    data_url = "data:image/png;base64," + base64.b64encode(_png("red")).decode()
    return (
        f"local ![local]({sentinel}) file ![file](file://{sentinel}) "
        f"remote ![remote]({server.url}/x.png) data ![data]({data_url}) "
        f"relative ![rel](sentinel.png) qrc ![qrc](qrc:/qt-project.org/styles/commonstyle/images/file-16.png)"
    )


def _inspector(qtbot: Any, session: Session) -> EntryInspector:
    w = EntryInspector()
    qtbot.addWidget(w)
    w.resize(900, 700)
    w.show()
    w.set_session(session)
    return w


def test_markdown_images_load_nothing_and_show_their_url(
    qtbot: Any, tmp_path: Path, server: _CountingServer
) -> None:
    md = _image_markdown(tmp_path, server)
    own = base64.b64encode(_png("blue")).decode()
    spec: list[Any] = [
        {
            "type": "message",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": md},
                    {"type": "image", "data": own, "mimeType": "image/png"},
                ],
                "timestamp": 1,
            },
        },
        {"type": "compaction", "summary": md, "firstKeptEntryId": "e0000", "tokensBefore": 10},
        {"type": "branch_summary", "summary": md, "fromId": "e0000"},
        {"type": "custom_message", "customType": "x", "content": md, "display": True},
    ]
    s = Session.open(write_session(tmp_path / "img.jsonl", spec))
    w = _inspector(qtbot, s)
    for i in range(len(s.records)):
        w.show_entry(i)
        img = w.grab().toImage()  # painting is what asked Qt for the images (and crashed)
        text = w.browser.toPlainText()
        assert "[image not loaded — remote: " + server.url + "/x.png]" in text
        assert f"[image not loaded — local: {tmp_path / 'sentinel.png'}]" in text
        assert "[image not loaded — data: data:image/png;base64," in text
        assert _red_pixels(img) == 0, "an image named by the content was loaded and painted"
    assert server.hits == 0
    # the entry's own base64 image is still shown
    w.show_entry(0)
    blue = QColor("blue").rgb()
    img = w.grab().toImage()
    assert any(img.pixel(x, y) == blue for y in range(0, img.height(), 2) for x in range(0, img.width(), 2))


def test_document_refuses_any_resource_it_is_asked_for(qtbot: Any, tmp_path: Path) -> None:
    """Even an image that got past the markdown filter is answered from nowhere: no file read."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    sentinel = tmp_path / "sentinel.png"
    sentinel.write_bytes(_png("red"))
    s = Session.open(write_session(tmp_path / "x.jsonl", [_user("hello")]))
    w = _inspector(qtbot, s)
    w.show_entry(0)
    doc = w.browser.document()
    res = doc.resource(QTextDocument.ResourceType.ImageResource, QUrl.fromLocalFile(str(sentinel)))
    assert isinstance(res, QImage) and res.size().width() < 64  # the placeholder, not the red 64×48 file
    assert str(sentinel) in " ".join(w.browser.blocked)


def test_deep_nesting_renders_what_it_can(qtbot: Any, tmp_path: Path) -> None:
    """gen_sessions' "deep-nesting" shape: 2,500 levels, too deep for json.dumps (RecursionError)."""
    spec: list[Any] = [
        {"type": "custom", "customType": "deep", "data": "DEEP_LIST"},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c1", "name": "write", "arguments": "DEEP_OBJECT"}],
                "provider": "p",
                "model": "m",
                "stopReason": "toolUse",
                "timestamp": 2,
            },
        },
    ]
    path = write_session(tmp_path / "deep.jsonl", spec)
    deep_list = "[" * 2500 + '"bottom"' + "]" * 2500
    deep_object = '{"a":' * 2500 + '{"leaf": 1}' + "}" * 2500
    text = path.read_text().replace('"DEEP_LIST"', deep_list).replace('"DEEP_OBJECT"', deep_object)
    path.write_text(text)
    s = Session.open(path)
    w = _inspector(qtbot, s)
    for i in (0, 1):
        t0 = time.monotonic()
        w.show_entry(i)
        w.grab()
        text = w.browser.toPlainText()
        assert "too deep to show" in text
        assert time.monotonic() - t0 < 2
        w.raw_button.setChecked(True)
        w.grab()
        assert "too deep to show" in w.raw.toPlainText()
        w.raw_button.setChecked(False)
    assert "→ write" in w.browser.toPlainText()


def test_huge_single_line_is_shown_folded_quickly(qtbot: Any, tmp_path: Path) -> None:
    big = "QUJD" * (5_000_000 // 4)  # 5 MB of base64-like text with no break
    s = Session.open(write_session(tmp_path / "big.jsonl", [_user(big)]))
    w = _inspector(qtbot, s)
    t0 = time.monotonic()
    w.show_entry(0)
    w.grab()
    assert time.monotonic() - t0 < 1.0
    text = w.browser.toPlainText()
    assert 1_000 < len(text) < 50_000  # a folded head of the text, not 5 MB
    assert "as plain text" in text  # the "show all (5.0 MB) as plain text" link
    assert "5.0 MB" in text
    # show all: the whole text, in the plain-text view
    (key,) = w.full_texts
    t0 = time.monotonic()
    w.show_full_text(key)
    w.grab()
    assert time.monotonic() - t0 < 5.0
    assert w.full_text.toPlainText().replace("\n", "") == big
    w.full_back.click()
    assert w.stack.currentWidget() is w.browser
    # the raw JSON view is bounded too
    t0 = time.monotonic()
    w.raw_button.setChecked(True)
    w.grab()
    assert time.monotonic() - t0 < 1.0
    assert "more than" in w.raw.toPlainText() or "chars)" in w.raw.toPlainText()


def test_many_lines_fold_and_unfold_inline(qtbot: Any, tmp_path: Path) -> None:
    lines = "\n".join(f"line {i} " + "x" * 50 for i in range(3000))  # ~170 KB: unfolds inline
    spec: list[Any] = [
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [{"type": "text", "text": lines}],
                "isError": False,
                "timestamp": 1,
            },
        }
    ]
    s = Session.open(write_session(tmp_path / "lines.jsonl", spec))
    w = _inspector(qtbot, s)
    w.show_entry(0)
    w.grab()
    assert "line 23 " in w.browser.toPlainText() and "line 24 " not in w.browser.toPlainText()
    assert "show all 3,000 lines" in w.browser.toPlainText()
    t0 = time.monotonic()
    w._toggle("r.0")
    w.grab()
    assert time.monotonic() - t0 < 2.0
    assert "line 2999 " in w.browser.toPlainText()
