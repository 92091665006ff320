"""A session whose every field a report shows holds hostile text: HTML, remote images, javascript:
links, attribute break-outs, bidi and control characters, fences, and images of every kind."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tests.core.util import A, T, U, call, chain


def hostile_strings(port: int) -> list[str]:
    return [
        "<script>alert(1)</script>",
        f"<img src=http://127.0.0.1:{port}/x>",
        "[x](javascript:alert(1))",
        '"><svg onload=alert(1)>',
        "\u202eevil\u202c \x1b[31mred\x07 \u2066iso\u2069",
        f'<a href="http://127.0.0.1:{port}/a">click</a> <link rel=stylesheet href=//127.0.0.1:{port}/c>',
        f"<style>@import url(http://127.0.0.1:{port}/s.css)</style>",
        "```\n# not a heading\n````\n<b>still text</b>",
    ]


def tiny_png() -> str:
    """A valid 1×1 PNG as base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"\x00\xff\x00\x00"
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode()


def hostile_entries(port: int) -> list[dict[str, Any]]:
    bad = "\n".join(hostile_strings(port))
    one = " ".join(s.replace("\n", " ") for s in hostile_strings(port))
    images = [
        {"type": "text", "text": bad},
        {"type": "image", "mimeType": "image/png", "data": tiny_png()},
        {
            "type": "image",
            "mimeType": "image/svg+xml",
            "data": base64.b64encode(b"<svg onload=alert(1)/>").decode(),
        },
        {"type": "image", "mimeType": 'image/png"><script>', "data": tiny_png()},
        {"type": "image", "mimeType": "image/png", "data": f"http://127.0.0.1:{port}/i.png"},
    ]
    return [
        U(bad),
        A(
            blocks=[
                {"type": "thinking", "thinking": bad},
                {"type": "text", "text": bad},
                call("read", path=one),
            ]
        ),
        T(bad),
        {"type": "message", "message": {"role": "user", "content": images, "timestamp": 4}},
        {"type": "label", "targetId": "e0", "label": one},
        {"type": "session_info", "name": one},
        {"type": "model_change", "provider": one, "modelId": one},
        {"type": "custom_message", "customType": one, "content": bad, "display": True},
        {"type": "custom", "customType": one, "data": {"html": bad}},
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": one,
                "output": bad,
                "exitCode": 1,
                "cancelled": False,
                "truncated": False,
                "timestamp": 5,
            },
        },
        A(2000),
        U(4000),
        A(blocks=[{"type": "text", "text": bad}, call("edit", path="src/<b>x</b>.py", oldText=bad)]),
        T(3000),
        U(bad),
        A(bad),
        {"type": one, "payload": bad},
    ]


def write_hostile(path: Path, port: int = 9) -> Path:
    values = chain(*hostile_entries(port), header={**_header(port)})
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def _header(port: int) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": "sess-<script>alert(1)</script>",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": f"/p/<img src=http://127.0.0.1:{port}/cwd>",
    }


class Tags(HTMLParser):
    """Every element and attribute a browser would create from the page."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


#: what the report writers emit themselves; session text never adds an element
OWN_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "pre",
    "details",
    "summary",
    "article",
    "header",
    "span",
    "ul",
    "li",
    "figure",
    "figcaption",
    "img",
    "svg",
    "rect",
    "line",
    "text",
    # the context timeline (core.timeline_svg)
    "g",
    "path",
    "circle",
}


def assert_inert(page: str) -> Tags:
    parsed = Tags(page)
    assert {t for t, _ in parsed.tags} <= OWN_TAGS, {t for t, _ in parsed.tags} - OWN_TAGS
    for tag, attrs in parsed.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name in ("src", "href", "action", "xlink:href", "background", "poster"):
                assert tag == "img" and name == "src" and (value or "").startswith("data:image/png;base64,")
    assert "<script" not in page.lower()
    return parsed


def outside_fences(md: str) -> list[str]:
    """The Markdown lines a viewer interprets (outside code fences)."""
    out: list[str] = []
    fence: str | None = None
    for line in md.split("\n"):
        if fence is None:
            m = re.match(r"^(`{3,})", line)
            if m:
                fence = m.group(1)
                continue
            out.append(line)
        elif line == fence:
            fence = None
    assert fence is None, "a fence was left open"
    return out
