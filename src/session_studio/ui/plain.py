"""Untrusted text (session content, server replies) made safe to show in Qt widgets.

Qt guesses: a tooltip, QLabel or QMessageBox text whose first line looks like a tag is parsed as
HTML, and ``<img src="/dev/zero">`` in an entry id then makes Qt read that file. Every string
from a session or a server goes through one of these before reaching such a widget:

- ``visible`` for plain-text places (item text, status bar): control and bidi-override
  characters become visible marks, long strings are elided;
- ``rich_escaped`` to embed it in rich text we build ourselves (always escaped);
- ``rich_tooltip`` / ``rich_plain`` for widgets that guess the format: the text is escaped and
  wrapped so Qt can only read it as (escaped) rich text.
"""

from __future__ import annotations

import html
import re

__all__ = [
    "DISPLAY_LINE_CHARS",
    "break_long_lines",
    "elide",
    "rich_escaped",
    "rich_plain",
    "rich_tooltip",
    "visible",
]

# bidi embeddings/overrides/isolates and marks: they reorder what the reader sees
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_INVISIBLE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
TOOLTIP_CHARS = 2_000
DISPLAY_LINE_CHARS = 2_000  # Qt lays out (wraps) one long line in quadratic time: break it first


def _mark(m: re.Match[str]) -> str:
    c = m.group(0)
    n = ord(c)
    if n < 0x20:
        return chr(0x2400 + n)  # ␀ … ␟ (Control Pictures)
    if n == 0x7F:
        return "\u2421"  # ␡
    return f"⟨U+{n:04X}⟩"


def elide(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, saying how many were left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… (+{len(text) - limit:,} chars)"


def visible(text: object, limit: int | None = 500, keep_newlines: bool = True) -> str:
    """``text`` as a plain string whose control and bidi characters show as marks, elided."""
    s = text if isinstance(text, str) else str(text)
    if limit is not None:
        s = elide(s, limit)
    s = _INVISIBLE.sub(_mark, s)
    if not keep_newlines:
        s = s.replace("\n", "\u2424")  # ␤
    return s


def rich_escaped(text: object, limit: int | None = 500) -> str:
    """``visible(text)`` escaped for embedding in rich text we build (newlines become <br>)."""
    return html.escape(visible(text, limit)).replace("\n", "<br>")


def rich_plain(text: object, limit: int | None = 2_000) -> str:
    """For a QLabel/QMessageBox text: always rich text, so Qt cannot guess, and all of it escaped."""
    return "<qt>" + rich_escaped(text, limit) + "</qt>"


def rich_tooltip(text: object, limit: int | None = TOOLTIP_CHARS) -> str:
    """A tooltip showing ``text`` literally (Qt treats tooltips that look like HTML as HTML)."""
    if not text:
        return ""
    return "<qt><p style='white-space:pre-wrap'>" + rich_escaped(text, limit) + "</p></qt>"


def break_long_lines(text: str, width: int = DISPLAY_LINE_CHARS) -> str:
    """``text`` with lines longer than ``width`` broken, for display in a text view.

    A 1 MB unbroken string (base64, minified code) in one line freezes QPlainTextEdit and
    QTextBrowser for minutes; broken into 2,000-character lines it lays out in milliseconds.
    """
    if len(text) <= width or all(len(ln) <= width for ln in text.split("\n")):
        return text
    out: list[str] = []
    for ln in text.split("\n"):
        out += [ln[i : i + width] for i in range(0, len(ln), width)] or [""]
    return "\n".join(out)
