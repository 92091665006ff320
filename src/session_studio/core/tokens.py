"""Token accounting exactly as pi 0.80.2 does it (spec §4).

`estimate_tokens` is the chars/4 heuristic with JavaScript semantics: UTF-16
lengths, `JSON.stringify` for tool arguments, 4800 chars per image, and the same
TypeErrors pi would throw on damaged messages (raised as :class:`JsTypeError`).
Results can be `nan` where JavaScript arithmetic gives `NaN`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import orjson

from .jsvalue import (
    UNDEFINED,
    JsTypeError,
    js_number_to_string,
    js_string,
    js_stringify,
    js_truthy,
    prop,
    u16len,
)

__all__ = [
    "ESTIMATED_IMAGE_CHARS",
    "ContextTokens",
    "assistant_usage_tokens",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_system_tokens",
    "estimate_tokens",
    "estimate_tokens_16",
    "estimator_for",
    "js_plus",
    "should_compact",
]

ESTIMATED_IMAGE_CHARS = 4800

Number = int | float


def _to_num(v: Any) -> float | int:
    if type(v) is int or type(v) is float:
        return v
    if v is None or v is False:
        return 0
    if v is True:
        return 1
    return math.nan


def js_plus(a: Any, b: Any) -> Any:
    """JavaScript binary `+` on JSON values (string concatenation wins)."""
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a + b
    if ta is str or tb is str or ta in (list, dict) or tb in (list, dict):
        return js_string(a) + js_string(b)
    return _to_num(a) + _to_num(b)


def _ceil_div4(chars: Any) -> int | float:
    if type(chars) is int:
        return -((-chars) // 4)
    if type(chars) is str:
        from .migrate import js_to_number

        x = js_to_number(chars)
    else:
        x = float(chars) if type(chars) in (int, float) else math.nan
    if math.isnan(x) or math.isinf(x):
        return x
    return math.ceil(x / 4)


def _js_iter(v: Any, what: str) -> Any:
    if type(v) is list:
        return v
    if type(v) is str:
        return ()  # iterating a string yields characters, none of which has a `type`
    raise JsTypeError(f"{what} is not iterable")


def _content_chars(content: Any) -> Any:
    if type(content) is str:
        return u16len(content)
    chars: Any = 0
    for block in _js_iter(content, "content"):
        btype = prop(block, "type")
        if btype == "text":
            text = prop(block, "text")
            if js_truthy(text):
                chars = js_plus(chars, prop(text, "length"))
        elif btype == "image":
            chars = js_plus(chars, ESTIMATED_IMAGE_CHARS)
    return chars


def _stringify_len(v: Any) -> Any:
    s = js_stringify(v)
    if s is None:
        raise JsTypeError("Cannot read properties of undefined (reading 'length')")
    return u16len(s)


class _Slow(Exception):
    """The fast path met something unusual: redo it with exact JavaScript semantics."""


_MAX_SAFE = 9007199254740992


def _number_length_correction(args: dict[str, Any]) -> int:
    """How much longer JSON.stringify prints the numbers inside than orjson does.

    Key order does not change the length, strings are escaped alike, so only
    numbers differ: floats (2.0 → "2", 1e16 → "10000000000000000", -0.0 → "0")
    and integers beyond 2**53 (printed as the nearest double).
    """
    delta = 0
    stack: list[Any] = [args]
    while stack:
        x = stack.pop()
        for v in x.values() if type(x) is dict else x:
            t = type(v)
            if t is dict or t is list:
                stack.append(v)
            elif t is float or (t is int and not -_MAX_SAFE <= v <= _MAX_SAFE):
                delta += len(js_number_to_string(v)) - len(orjson.dumps(v))
    return delta


#: what any float (a '.' or an exponent after a digit) or an integer past 2**53 (16+ digits)
#: looks like in orjson's output; strings may match too, which only costs the exact walk
_MAYBE_ODD_NUMBER = re.compile(rb"[0-9](?:[.eE]|[0-9]{15})")  # factored: 3x faster than an alternation


def _args_len_fast(args: dict[str, Any]) -> int:
    """len(JSON.stringify(args)) from orjson's output, corrected for numbers."""
    try:
        b = orjson.dumps(args)
    except (orjson.JSONEncodeError, TypeError):
        raise _Slow from None  # lone surrogates, huge integers, deep nesting
    n = len(b) if b.isascii() else u16len(b.decode("utf-8"))
    if _MAYBE_ODD_NUMBER.search(b) is None:
        return n  # only integers of at most 15 digits: JSON.stringify prints them as orjson does
    return n + _number_length_correction(args)


def _fast_estimate(message: Any) -> int:
    role = message["role"]
    if role == "assistant":
        content = message["content"]
        if type(content) is not list:
            raise _Slow  # a string iterates as characters, anything else throws in JS
        chars = 0
        for block in content:
            t = block["type"]
            if t == "text":
                chars += u16len(block["text"])
            elif t == "thinking":
                chars += u16len(block["thinking"])
            elif t == "toolCall":
                args = block["arguments"]
                if type(args) is not dict:
                    raise _Slow
                chars += u16len(block["name"]) + _args_len_fast(args)
        return -(-chars // 4)
    if role == "user" or role == "toolResult" or role == "custom":
        content = message["content"]
        if type(content) is str:
            return -(-u16len(content) // 4)
        if type(content) is not list:
            raise _Slow
        chars = 0
        for block in content:
            t = block["type"]
            if t == "text":
                text = block["text"]
                if type(text) is not str:
                    raise _Slow  # pi adds `text.length` when text is truthy: {} adds NaN
                chars += u16len(text)
            elif t == "image":
                chars += ESTIMATED_IMAGE_CHARS
        return -(-chars // 4)
    raise _Slow


def estimate_tokens(message: Any) -> int | float:
    """pi's `estimateTokens(message)`: ceil(chars / 4) by role."""
    if type(message) is dict:
        try:
            return _fast_estimate(message)
        except (_Slow, KeyError, TypeError, AttributeError):
            pass
    return _estimate_tokens_exact(message)


def _estimate_tokens_exact(message: Any) -> int | float:
    role = prop(message, "role")
    if role == "user" or role == "custom" or role == "toolResult":
        return _ceil_div4(_content_chars(prop(message, "content")))
    if role == "assistant":
        chars: Any = 0
        for block in _js_iter(prop(message, "content"), "assistant.content"):
            btype = prop(block, "type")
            if btype == "text":
                chars = js_plus(chars, prop(prop(block, "text"), "length"))
            elif btype == "thinking":
                chars = js_plus(chars, prop(prop(block, "thinking"), "length"))
            elif btype == "toolCall":
                name_len = prop(prop(block, "name"), "length")
                chars = js_plus(chars, js_plus(name_len, _stringify_len(prop(block, "arguments"))))
        return _ceil_div4(chars)
    if role == "bashExecution":
        return _ceil_div4(
            js_plus(prop(prop(message, "command"), "length"), prop(prop(message, "output"), "length"))
        )
    if role == "branchSummary" or role == "compactionSummary":
        return _ceil_div4(prop(prop(message, "summary"), "length"))
    return 0


def estimate_system_tokens(message: Any) -> int | float:
    """1.6.0's estimate of a `role: "system"` message (rule 21): content chars, the
    truthy `sections` values' lengths and `JSON.stringify(toolsAdded)`, over 4, rounded up."""
    chars: Any = _content_chars(prop(message, "content"))
    sections = prop(message, "sections")
    if js_truthy(sections):
        for section in _object_values(sections):
            if js_truthy(section):
                chars = js_plus(chars, prop(section, "length"))
    tools = prop(message, "toolsAdded")
    if js_truthy(tools):
        chars = js_plus(chars, _stringify_len(tools))
    return _ceil_div4(chars)


def _object_values(v: Any) -> list[Any]:
    """`Object.values(v)` for JSON values (own enumerable properties in key order)."""
    if type(v) is dict:
        from .jsvalue import _ordered_items

        return [x for _, x in _ordered_items(v)]
    if type(v) is list:
        return list(v)
    if type(v) is str:
        return list(v)
    return []


def estimate_tokens_16(message: Any) -> int | float:
    """pi 1.6.0's `estimateTokens`: 0.80.2's plus system messages."""
    if type(message) is dict and message.get("role") == "system":
        return estimate_system_tokens(message)
    return estimate_tokens(message)


def estimator_for(system_messages: bool) -> Callable[[Any], int | float]:
    """The `estimateTokens` of a pi: 1.6.0's (``PiProfile.system_messages``) counts system
    messages, 0.80.2's does not know them."""
    return estimate_tokens_16 if system_messages else estimate_tokens


def calculate_context_tokens(usage: Any) -> Any:
    """`usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite`."""
    total = prop(usage, "totalTokens")
    if js_truthy(total):
        return total
    s = js_plus(prop(usage, "input"), prop(usage, "output"))
    s = js_plus(s, prop(usage, "cacheRead"))
    return js_plus(s, prop(usage, "cacheWrite"))


def _gt0(v: Any) -> bool:
    if type(v) is int or type(v) is float:
        return v > 0
    if type(v) is str:
        from .migrate import js_to_number

        return js_to_number(v) > 0
    return _to_num(v) > 0


def assistant_usage_tokens(message: Any) -> Any:
    """The context tokens of an assistant message with *valid* usage (§4.3), else None."""
    if type(message) is not dict:
        if message is None or message is UNDEFINED:
            raise JsTypeError("Cannot read properties of undefined (reading 'role')")
        return None
    if message.get("role") != "assistant" or "usage" not in message:
        return None
    stop = message.get("stopReason", UNDEFINED)
    if stop == "aborted" or stop == "error":
        return None
    usage = message["usage"]
    if type(usage) is dict:  # the usual shape: a positive integer totalTokens is the answer
        total = usage.get("totalTokens")
        if type(total) is int and total > 0:
            return total
    if not js_truthy(usage):
        return None
    tokens = calculate_context_tokens(usage)
    if not _gt0(tokens):
        return None
    return tokens


class ContextTokens(NamedTuple):
    tokens: Any
    usage_tokens: Any
    trailing_tokens: Any
    last_usage_index: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
        }


def estimate_context_tokens(messages: Sequence[Any]) -> ContextTokens:
    """pi's `estimateContextTokens` over AgentMessages."""
    last = None
    usage_tokens: Any = 0
    for i in range(len(messages) - 1, -1, -1):
        u = assistant_usage_tokens(messages[i])
        if u is not None:
            last, usage_tokens = i, u
            break
    trailing: Any = 0
    for m in messages[(last + 1) if last is not None else 0 :]:
        trailing = js_plus(trailing, estimate_tokens(m))
    if last is None:
        return ContextTokens(trailing, 0, trailing, None)
    return ContextTokens(js_plus(usage_tokens, trailing), usage_tokens, trailing, last)


def should_compact(
    context_tokens: Any, context_window: int, reserve_tokens: int, enabled: bool = True
) -> bool:
    if not enabled:
        return False
    x = context_tokens if type(context_tokens) in (int, float) else _to_num(context_tokens)
    return bool(x > context_window - reserve_tokens)
