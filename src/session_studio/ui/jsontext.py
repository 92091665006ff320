"""JSON text for display, bounded in depth and size.

Session values are untrusted: a damaged line can nest thousands of levels deep (``json.dumps``
then raises ``RecursionError``) or hold tens of megabytes. This formatter walks the value with
an explicit stack, writes a marker instead of anything deeper than ``max_depth``, and stops once
``max_chars`` characters are written, so the cost is bounded by what is shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["TOO_DEEP", "JsonText", "format_json", "format_json_text"]

TOO_DEEP = "… nested too deep to show"


def _scalar(v: Any, max_string: int) -> str:
    if isinstance(v, str):
        if len(v) > max_string:
            cut = json.dumps(v[:max_string], ensure_ascii=False)[:-1]
            return cut + f'…" (+{len(v) - max_string:,} chars)'
        return json.dumps(v, ensure_ascii=False)
    if v is None or isinstance(v, bool | int | float):
        return json.dumps(v)
    return json.dumps(str(v), ensure_ascii=False)


@dataclass(frozen=True)
class JsonText:
    text: str
    too_deep: bool  # some container was replaced by the TOO_DEEP marker
    cut: bool  # output stopped at max_chars


def format_json(
    value: Any,
    *,
    indent: int | None = 2,
    max_depth: int = 64,
    max_chars: int = 1_000_000,
    max_string: int | None = None,
) -> str:
    """The text of ``format_json_text``."""
    return format_json_text(
        value, indent=indent, max_depth=max_depth, max_chars=max_chars, max_string=max_string
    ).text


def format_json_text(
    value: Any,
    *,
    indent: int | None = 2,
    max_depth: int = 64,
    max_chars: int = 1_000_000,
    max_string: int | None = None,
) -> JsonText:
    """``json.dumps(value, indent=indent, ensure_ascii=False)`` for display, bounded.

    Containers deeper than ``max_depth`` are replaced by a ``TOO_DEEP`` marker naming the depth;
    output stops after about ``max_chars`` characters with a note saying so; strings longer than
    ``max_string`` (when given) are cut with the number of characters left out.
    """
    out: list[str] = []
    size = 0
    pretty = indent is not None
    step = " " * (indent or 0)
    # a frame: [closing bracket, iterator over (key or None, child), depth, children written]
    stack: list[list[Any]] = []
    too_deep = False

    def emit(s: str) -> bool:
        nonlocal size
        out.append(s)
        size += len(s)
        return size <= max_chars

    def open_value(v: Any, depth: int) -> bool:
        if isinstance(v, dict | list):
            if depth >= max_depth:
                nonlocal too_deep
                too_deep = True
                return emit(json.dumps(f"{TOO_DEEP} (more than {max_depth} levels)"))
            opener, closer = ("{", "}") if isinstance(v, dict) else ("[", "]")
            if not v:
                return emit(opener + closer)
            pairs = ((str(k), x) for k, x in v.items()) if isinstance(v, dict) else ((None, x) for x in v)
            stack.append([closer, pairs, depth, 0])
            return emit(opener)
        # never encode more of a huge string than can still be shown
        room = max(0, max_chars - size) + 1
        return emit(_scalar(v, room if max_string is None else min(max_string, room)))

    going = open_value(value, 0)
    while stack and going:
        frame = stack[-1]
        closer, pairs, depth, written = frame
        nxt = next(pairs, None)
        if nxt is None:
            stack.pop()
            going = emit(("\n" + step * depth if pretty else "") + closer)
            continue
        frame[3] = written + 1
        key, child = nxt
        prefix = ("," if pretty else ", ") if written else ""
        if pretty:
            prefix += "\n" + step * (depth + 1)
        if key is not None:
            prefix += json.dumps(key, ensure_ascii=False) + ": "
        going = emit(prefix) and open_value(child, depth + 1)
    text = "".join(out)
    if not going:
        text = text[:max_chars] + f"\n… (cut here: more than {max_chars:,} characters)"
    return JsonText(text, too_deep, not going)
