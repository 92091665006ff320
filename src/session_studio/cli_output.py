"""Human-readable CLI output that cannot drive the terminal.

Session files and LLM servers are untrusted: a summary, an entry id or a server's error text may
carry escape sequences (OSC window titles, OSC 52 clipboard writes, cursor reports), C1 controls
or bidi overrides that reorder what the reader sees. Every human-readable line the CLI prints goes
through :func:`terminal_safe`; JSON output is escaped by its serializer instead.
"""

from __future__ import annotations

import re
import sys

__all__ = ["err", "out", "terminal_safe"]

# C0 controls except tab and newline, DEL, C1, bidi embeddings/overrides/isolates and marks,
# and lone surrogates (they cannot be encoded and would abort the output). Patterns, compiled
# (and cached by `re`) when first used: compiling them took ~1.5 ms of every command's start.
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_UNSAFE_ONE_LINE = _UNSAFE[:-1] + "\n]"


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control, bidi and surrogate character shown as a visible ``\\xNN``/``\\uNNNN``.

    Tabs and newlines stay (summaries and overviews need them) unless ``one_line``.
    """
    return re.sub(_UNSAFE_ONE_LINE if one_line else _UNSAFE, _visible, text)


def out(text: str = "", *, end: str = "\n") -> None:
    """Print to stdout, made safe for the terminal."""
    sys.stdout.write(terminal_safe(text) + end)


def err(text: str = "", *, end: str = "\n") -> None:
    """Print to stderr, made safe for the terminal."""
    sys.stderr.write(terminal_safe(text) + end)
