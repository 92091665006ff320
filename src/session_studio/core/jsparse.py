"""`JSON.parse` with V8's exact semantics, for the lines orjson refuses.

pi reads session lines with `JSON.parse`, which accepts things orjson rejects
(lone surrogate escapes, integers beyond 64 bits, nesting thousands of levels
deep) and reads every number as a double. This parser is iterative, so any depth
works, and it maps values to Python the way the rest of the core expects:

* a number written without fraction or exponent is an `int` when its double value
  is integral and within ±2**53 (`9007199254740993` reads as 9007199254740992),
  `-0` is the float `-0.0`, and every other number is the nearest `float`
  (`1e400` is `inf`, as JavaScript's Infinity);
* `\\ud800` escapes give lone surrogates; escaped or literal surrogate halves that
  form a pair are joined into one code point, as UTF-16 would;
* a repeated key keeps its first position and its last value (as a JavaScript
  object does, except that JavaScript lists array-index keys such as "1" first:
  the dict keeps text order, like orjson).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["js_json_parse"]

_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_STRING_RUN: Final = re.compile(r'[^"\\\x00-\x1f]*')
_HEX4: Final = re.compile(r"[0-9a-fA-F]{4}")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_MAX_SAFE: Final = 2**53
_SAFE_DIGITS: Final = 15  # an integer literal this short is exact as a double


def _skip_ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m is not None else pos


def _error(text: str, pos: int, what: str | None = None) -> ValueError:
    if pos >= len(text):
        return ValueError(f"Unexpected end of JSON input at position {pos}")
    return ValueError(f"{what or 'Unexpected token ' + repr(text[pos])} in JSON at position {pos}")


def _parse_string(text: str, pos: int) -> tuple[str, int]:
    """The string whose opening quote is at `pos`, and the position after its closing quote."""
    start = pos
    pos += 1
    parts: list[str] = []
    surrogates = False
    n = len(text)
    while True:
        m = _STRING_RUN.match(text, pos)
        end = m.end() if m is not None else pos
        if end > pos:
            parts.append(text[pos:end])
        pos = end
        if pos >= n:
            raise ValueError(f"Unterminated string in JSON at position {pos} (string starts at {start})")
        c = text[pos]
        if c == '"':
            pos += 1
            break
        if c != "\\":
            raise _error(text, pos, f"Bad control character in string literal {c!r}")
        esc = text[pos + 1 : pos + 2]
        simple = _ESCAPES.get(esc)
        if simple is not None:
            parts.append(simple)
            pos += 2
        elif esc == "u":
            if _HEX4.match(text, pos + 2) is None:
                raise _error(text, min(pos + 2, n), "Bad Unicode escape")
            code = int(text[pos + 2 : pos + 6], 16)
            if 0xD800 <= code <= 0xDFFF:
                surrogates = True
            parts.append(chr(code))
            pos += 6
        else:
            raise _error(text, pos + 1, "Bad escaped character")
    s = "".join(parts)
    if surrogates or (not s.isascii() and _SURROGATE.search(s) is not None):
        # Join adjacent halves into one code point, as they would be in UTF-16.
        s = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return s, pos


def _number(literal: str, integral: bool) -> int | float:
    if not integral:
        return float(literal)
    if len(literal) <= _SAFE_DIGITS:
        v = int(literal)
        if v == 0 and literal[0] == "-":
            return -0.0
        return v
    d = float(literal)  # JavaScript rounds every number literal to a double
    if abs(d) <= _MAX_SAFE:
        return int(d)
    return d


def js_json_parse(text: str) -> object:
    """`JSON.parse(text)`: the value, or ValueError (with a position) where V8 throws."""
    n = len(text)
    # Open containers, innermost last; for an object, `keys` holds its pending key.
    stack: list[list[object] | dict[str, object]] = []
    keys: list[str] = []
    pos = _skip_ws(text, 0)
    while True:
        # Parse one value starting at `pos` (white space already skipped).
        value: object
        c = text[pos] if pos < n else ""
        if c == '"':
            value, pos = _parse_string(text, pos)
        elif c == "{":
            pos = _skip_ws(text, pos + 1)
            if text.startswith("}", pos):
                value = {}
                pos += 1
            else:
                if not text.startswith('"', pos):
                    raise _error(text, pos)
                key, pos = _parse_string(text, pos)
                pos = _skip_ws(text, pos)
                if not text.startswith(":", pos):
                    raise _error(text, pos)
                pos = _skip_ws(text, pos + 1)
                stack.append({})
                keys.append(key)
                continue
        elif c == "[":
            pos = _skip_ws(text, pos + 1)
            if text.startswith("]", pos):
                value = []
                pos += 1
            else:
                stack.append([])
                keys.append("")
                continue
        elif c == "t" and text.startswith("true", pos):
            value = True
            pos += 4
        elif c == "f" and text.startswith("false", pos):
            value = False
            pos += 5
        elif c == "n" and text.startswith("null", pos):
            value = None
            pos += 4
        else:
            m = _NUMBER.match(text, pos)
            if m is None:
                raise _error(text, pos)
            value = _number(m.group(), m.group(1) is None and m.group(2) is None)
            pos = m.end()

        # Attach the finished value to its container; close containers as they end.
        while True:
            pos = _skip_ws(text, pos)
            if not stack:
                if pos != n:
                    raise _error(text, pos)
                return value
            container = stack[-1]
            c = text[pos] if pos < n else ""
            if isinstance(container, list):
                container.append(value)
                if c == ",":
                    pos = _skip_ws(text, pos + 1)
                    break
                if c != "]":
                    raise _error(text, pos)
            else:
                container[keys[-1]] = value
                if c == ",":
                    pos = _skip_ws(text, pos + 1)
                    if not text.startswith('"', pos):
                        raise _error(text, pos)
                    key, pos = _parse_string(text, pos)
                    pos = _skip_ws(text, pos)
                    if not text.startswith(":", pos):
                        raise _error(text, pos)
                    keys[-1] = key
                    pos = _skip_ws(text, pos + 1)
                    break
                if c != "}":
                    raise _error(text, pos)
            pos += 1
            value = stack.pop()
            keys.pop()
