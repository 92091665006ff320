"""How Qt lays out lines of text: a line's height with its glyphs' fallback fonts, and command-line
options kept whole where a label wraps."""

from __future__ import annotations

import re

from PySide6.QtGui import QFont, QTextLayout

__all__ = ["line_height", "unbroken_options"]

#: a command-line option as notes name it (--context-window, --pi-version)
_OPTION = re.compile(r"--[A-Za-z][\w-]*")
#: U+2060 WORD JOINER: no line break here, and nothing drawn
_JOIN = "\u2060"


def line_height(text: str, font: QFont) -> float:
    """The height of ``text`` laid out on one line in ``font``: taller than the font's own line
    where a glyph comes from a fallback font (CJK, emoji)."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(1e6)
    layout.endLayout()
    return line.height()


def unbroken_options(text: str) -> str:
    """``text`` with every ``--option`` kept on one line when a label wraps: Qt breaks after a
    hyphen, and a narrow planner showed "or with --" above "context-window". A word joiner after
    each hyphen forbids those breaks and draws nothing; the hyphens stay ASCII."""
    return _OPTION.sub(lambda m: m.group(0).replace("-", "-" + _JOIN), text)
