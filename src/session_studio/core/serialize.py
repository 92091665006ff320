"""`serializeConversation` (spec §7.1): the text an LLM summarises."""

from __future__ import annotations

from typing import Any

from .jsvalue import UNDEFINED, JsTypeError, js_string, js_stringify, prop, u16len, u16slice_head

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary"]

TOOL_RESULT_MAX_CHARS = 2000


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    n = u16len(text)
    if n <= max_chars:
        return text
    return u16slice_head(text, max_chars) + f"\n\n[... {n - max_chars} more characters truncated]"


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


def serialize_conversation(messages: list[Any]) -> str:
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


def _stringify_or_undefined(v: Any) -> str:
    s = js_stringify(v)
    return "undefined" if s is None else s


def _join_item(v: Any) -> str:
    """How Array.prototype.join renders an element (null and undefined become "")."""
    return "" if v is None or v is UNDEFINED else js_string(v)
