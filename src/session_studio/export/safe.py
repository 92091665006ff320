"""Session content is untrusted: how it becomes inert text in a report.

Everything a session holds (message text, tool arguments, ids, labels, model names, file paths)
reaches the report only through :func:`visible`, then through the format's escaping (HTML:
``html.escape(quote=True)``; Markdown: backslash escapes inline, fences for blocks). Control and
bidi characters are shown as visible ``\\u202e``-style escapes so they cannot reorder or hide what
the reader sees. Images are embedded only as ``data:`` URIs of a session's own base64 image blocks
with a raster mime type; nothing is ever loaded from elsewhere.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SAFE_IMAGE_TYPES", "fence_for", "image_data_uri", "json_text", "md_inline", "visible"]

# C0 controls except tab and newline, DEL, C1, the bidi embeddings/overrides/isolates and marks,
# zero-width joiners and spaces that hide text, the BOM, line/paragraph separators, and lone
# surrogates (they cannot be encoded)
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"
    "\ud800-\udfff]"
)
_UNSAFE_ONE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\n\t]")

#: raster formats a browser shows without running anything (no SVG: it can carry scripts)
SAFE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
#: images above this size are named, not embedded (a report stays a document)
MAX_IMAGE_BASE64 = 8 * 1024 * 1024

# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that can start a
# link or image ("[", "]"), emphasis, a code span, HTML ("<"), an entity, a table cell, strikethrough,
# a heading or list at the start of a line, plus what makes GFM autolink a bare URL or address
# (scheme colons, "www.", "@"). Parentheses and "!" do nothing without an unescaped "[".
_MD_SPECIAL = re.compile(
    r"([\\`*_\[\]<>|~&]|^[#>+=-]|(?i:(?<=www))\.|@|(?<=[A-Za-z]):(?=//)"
    r"|(?i:(?<=javascript)|(?<=data)|(?<=mailto)|(?<=vbscript)):)"
)
_ORDERED_ITEM = re.compile(r"^(\d+)([.)])")
_BACKTICK_RUN = re.compile("`+")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(value: Any, *, one_line: bool = False) -> str:
    """``value`` as text with every control, bidi, invisible and surrogate character made visible.

    Non-strings are shown as JavaScript would print them in a template string (None → ``null``).
    Tabs and newlines stay unless ``one_line``.
    """
    text = value if isinstance(value, str) else _scalar_text(value)
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE).sub(_escape_char, text)


def _scalar_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json_text(value, indent=False)
    return "undefined"


def json_text(value: Any, *, indent: bool = True) -> str:
    """A JSON value as readable text (two-space indented when it nests shallowly enough)."""
    import orjson

    from ..core.jsvalue import js_stringify

    if indent:
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8", "surrogatepass")
        except (TypeError, orjson.JSONEncodeError):  # undefined values, > 255 levels, big ints
            pass
    return js_stringify(value) or "undefined"


def md_inline(value: Any) -> str:
    """Text safe inline in Markdown: one line, every ASCII punctuation escaped (no links, no HTML,
    no emphasis can come out of it)."""
    text = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), visible(value, one_line=True))
    return _ORDERED_ITEM.sub(r"\1\\\2", text)  # "1." at the start would begin a list


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text`` (so it cannot close early)."""
    longest = max((len(m.group()) for m in _BACKTICK_RUN.finditer(text)), default=0)
    return "`" * max(3, longest + 1)


def image_data_uri(block: Any) -> str | None:
    """``data:<mime>;base64,…`` for a session image block, or None when it is not safe to embed."""
    if type(block) is not dict:
        return None
    mime, data = block.get("mimeType"), block.get("data")
    if not isinstance(mime, str) or mime.lower() not in SAFE_IMAGE_TYPES or not isinstance(data, str):
        return None
    if not data or len(data) > MAX_IMAGE_BASE64 or _BASE64.fullmatch(data) is None or len(data) % 4:
        return None
    return f"data:{mime.lower()};base64,{data}"
