"""How high Qt lays out a line of text: the line of its glyphs' fonts, fallback fonts included."""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextLayout

__all__ = ["line_height"]


def line_height(text: str, font: QFont) -> float:
    """The height of ``text`` laid out on one line in ``font``: taller than the font's own line
    where a glyph comes from a fallback font (CJK, emoji)."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(1e6)
    layout.endLayout()
    return line.height()
