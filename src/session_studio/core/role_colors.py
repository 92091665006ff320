"""The colour of each entry kind (a message's role, a summary, a context edit…), light and dark: one
table for the window (ui.theme) and the exported reports (export.html_writer), so that an
assistant message is the same colour on screen and in a shared report. Hex strings, no Qt."""

from __future__ import annotations

from typing import Final

__all__ = ["ROLE_COLORS", "role_hex"]

#: entry kind → (light, dark) colours
ROLE_COLORS: Final[dict[str, tuple[str, str]]] = {
    "user": ("#2f6fde", "#5b9cff"),
    "assistant": ("#1f9d6a", "#3ccf91"),
    "toolResult": ("#c98a0b", "#e5a93a"),
    "bashExecution": ("#7b5cd6", "#a68cff"),
    "custom": ("#b4479a", "#e07ac8"),
    "branchSummary": ("#0f8f9c", "#35c3cf"),
    "compactionSummary": ("#d0452f", "#ff7a63"),
    "compaction": ("#d0452f", "#ff7a63"),
    "system": ("#4b5b78", "#9fb1d1"),
    "contextEdit": ("#8a6d1f", "#d8b75a"),
    "usage": ("#5f7a5a", "#94b48d"),
    "meta": ("#8a8f98", "#8d939d"),
    "damaged": ("#e02424", "#ff5a5a"),
}


def role_hex(kind: str, dark: bool) -> str:
    """``kind``'s colour (an unknown kind: meta's)."""
    light, dark_hex = ROLE_COLORS.get(kind, ROLE_COLORS["meta"])
    return dark_hex if dark else light
