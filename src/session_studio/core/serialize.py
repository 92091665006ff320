"""`serializeConversation` (spec §7.1): the text an LLM summarises."""

from __future__ import annotations

from typing import Any

from .jsvalue import UNDEFINED, JsTypeError, js_string, js_stringify, prop, u16len, u16slice_head
from .profile import PROFILE_0_80_2, PiProfile

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary"]

TOOL_RESULT_MAX_CHARS = 2000


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS, *, safe: bool = False) -> str:
    """Keep the first `max_chars` UTF-16 units; `safe` (1.6.0) never splits a surrogate pair."""
    n = u16len(text)
    if n <= max_chars:
        return text
    head = _slice_head_safe(text, max_chars) if safe else u16slice_head(text, max_chars)
    return head + f"\n\n[... {n - max_chars} more characters truncated]"


def _slice_head_safe(text: str, n: int) -> str:
    """1.6.0's sliceHead: one unit earlier when the cut would split a surrogate pair."""
    units = text.encode("utf-16-le", "surrogatepass")
    if n >= 1 and 2 * n + 2 <= len(units):
        before = int.from_bytes(units[2 * n - 2 : 2 * n], "little")
        after = int.from_bytes(units[2 * n : 2 * n + 2], "little")
        if 0xD800 <= before <= 0xDBFF and 0xDC00 <= after <= 0xDFFF:
            n -= 1
    return units[: 2 * n].decode("utf-16-le", "surrogatepass")


def _join_texts(content: Any, sep: str) -> str:
    if type(content) is not list:
        if content is None or content is UNDEFINED:
            raise JsTypeError("Cannot read properties of undefined (reading 'filter')")
        raise JsTypeError("content.filter is not a function")
    parts = []
    for c in content:
        if prop(c, "type") == "text":
            t = prop(c, "text")
            parts.append(_join_item(t))
    return sep.join(parts)


def _iter_blocks(content: Any) -> Any:
    if type(content) is list:
        return content
    if type(content) is str:
        return ()
    raise JsTypeError("msg.content is not iterable")


def _entries(args: Any) -> list[tuple[str, Any]]:
    if type(args) is dict:
        from .jsvalue import _ordered_items

        return _ordered_items(args)
    if args is None or args is UNDEFINED:
        raise JsTypeError("Cannot convert undefined or null to object")
    if type(args) is list:
        return [(str(i), v) for i, v in enumerate(args)]
    if type(args) is str:
        return [(str(i), ch) for i, ch in enumerate(args)]
    return []


def _content_text(content: Any, sep: str) -> str:
    """pi-ai's contentText: a string as is, else the text blocks joined."""
    return content if type(content) is str else _join_texts(content, sep)


def _assistant_16(msg: Any, parts: list[str]) -> None:
    """1.6.0: thinking omitted; `[Assistant]` only when a text block exists (rule 40)."""
    content = prop(msg, "content")
    calls: list[str] = []
    for block in _iter_blocks(content):
        if prop(block, "type") == "toolCall":
            args = ", ".join(
                f"{k}={_stringify_or_undefined(v)}" for k, v in _entries(prop(block, "arguments"))
            )
            calls.append(f"{js_string(prop(block, 'name'))}({args})")
    if type(content) is not list:
        raise JsTypeError("msg.content.some is not a function")
    if any(prop(b, "type") == "text" for b in content):
        parts.append("[Assistant]: " + _join_texts(content, "\n"))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))


def serialize_conversation(messages: list[Any], profile: PiProfile = PROFILE_0_80_2) -> str:
    if profile.serializer_without_thinking:
        return _serialize_16(messages)
    parts: list[str] = []
    for msg in messages:
        role = prop(msg, "role")
        if role == "user":
            content = prop(msg, "content")
            text = content if type(content) is str else _join_texts(content, "")
            if text:
                parts.append("[User]: " + text)
        elif role == "assistant":
            texts: list[str] = []
            thinkings: list[str] = []
            calls: list[str] = []
            for block in _iter_blocks(prop(msg, "content")):
                bt = prop(block, "type")
                if bt == "text":
                    texts.append(_join_item(prop(block, "text")))
                elif bt == "thinking":
                    thinkings.append(_join_item(prop(block, "thinking")))
                elif bt == "toolCall":
                    args = ", ".join(
                        f"{k}={_stringify_or_undefined(v)}" for k, v in _entries(prop(block, "arguments"))
                    )
                    calls.append(f"{js_string(prop(block, 'name'))}({args})")
            if thinkings:
                parts.append("[Assistant thinking]: " + "\n".join(thinkings))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            text = _join_texts(prop(msg, "content"), "")
            if text:
                parts.append("[Tool result]: " + truncate_for_summary(text))
    return "\n\n".join(parts)


def _serialize_16(messages: list[Any]) -> str:
    parts: list[str] = []
    for msg in messages:
        role = prop(msg, "role")
        if role == "user":
            text = _content_text(prop(msg, "content"), "")
            if text:
                parts.append("[User]: " + text)
        elif role == "assistant":
            _assistant_16(msg, parts)
        elif role == "toolResult":
            text = _content_text(prop(msg, "content"), "")
            if text:
                parts.append("[Tool result]: " + truncate_for_summary(text, safe=True))
    return "\n\n".join(parts)


def _stringify_or_undefined(v: Any) -> str:
    s = js_stringify(v)
    return "undefined" if s is None else s


def _join_item(v: Any) -> str:
    """How Array.prototype.join renders an element (null and undefined become "")."""
    return "" if v is None or v is UNDEFINED else js_string(v)
