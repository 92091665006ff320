"""pi's ``isContextOverflow`` (pi-ai's ``utils/overflow.js``): is an assistant answer a context
overflow? pi's compaction check asks it before the threshold: an overflow answer from the model pi
runs makes pi compact at once (and retry, unless the answer completed), whatever the context's size
(spec §9; ``AgentSession._checkCompaction`` in both versions).

An answer is an overflow when (1) it failed (``stopReason: "error"``) with an error message that
matches one of pi's provider patterns and none of its rate-limit patterns, (2) it completed
(``"stop"``) with ``usage.input + usage.cacheRead`` over the context window (providers that accept
an oversized prompt silently), or (3) it stopped for length with no output and an input filling
99 % of the window. pi 1.6.0 added patterns (z.ai, LiteLLM, DS4, DashScope, any HTTP 413) and takes
Cerebras' bodiless 400/413 from Cerebras only.

The patterns are pi's JavaScript regular expressions, translated so that Python matches exactly
what V8 does: ASCII ``\\d``/``\\w`` and case folding (a non-unicode ``/i`` never maps a non-ASCII
character to an ASCII one), JavaScript's whitespace for ``\\s``, ``.`` stopping at every line
terminator, ``$`` only at the very end.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .jsvalue import JsTypeError, js_string, js_truthy, prop
from .migrate import js_to_number
from .profile import PROFILE_0_80_2, PROFILE_1_6_0
from .tokens import js_plus

if TYPE_CHECKING:
    from .profile import PiProfile

__all__ = [
    "Overflow",
    "answer_overflow",
    "error_is_overflow",
    "is_context_overflow",
    "is_overflow_error_text",
    "js_pattern",
]

#: Cerebras' bodiless 400/413: an overflow from any provider to pi 0.80.2, from "cerebras" only to 1.6.0
_CEREBRAS_BODYLESS = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)"
#: pi 0.80.2's OVERFLOW_PATTERNS, in its order (JavaScript source, all with the i flag)
_PATTERNS_0_80_2 = (
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    _CEREBRAS_BODYLESS,
)
#: pi 1.6.0's: "prompt is too long" widened to z.ai's "prompt too long", five patterns added, and
#: Cerebras' bodiless 400/413 taken from Cerebras only (_CEREBRAS_BODYLESS; spec §10 rule 23)
_PATTERNS_1_6_0 = (
    *(
        r"prompt (?:is )?too long" if p == r"prompt is too long" else p
        for p in _PATTERNS_0_80_2
        if p != _CEREBRAS_BODYLESS
    ),
    r"prompt exceeds max length",
    r"context window exceeded",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"range of input length should be",
    r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
)
#: both versions' NON_OVERFLOW_PATTERNS: rate limits and throttling are never an overflow
_NOT_OVERFLOW = (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
#: JavaScript's \s: WhiteSpace and LineTerminator (ECMA-262), wider and narrower than Python's
_JS_SPACE = "[\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
#: JavaScript's `.` without the s flag: anything but a line terminator
_JS_DOT = "[^\\n\\r\\u2028\\u2029]"


def js_pattern(source: str) -> re.Pattern[str]:
    """A JavaScript ``/source/i`` (no u, m, s flags) as a Python pattern matching the same strings.

    Only what pi's patterns use is translated: ``\\s``, ``.`` and ``$`` outside classes (``\\d``,
    ``\\w`` and case folding are ASCII by the flags)."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            pair = source[i : i + 2]
            out.append(_JS_SPACE if pair == "\\s" and not in_class else pair)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == ".":
            out.append(_JS_DOT)
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    return re.compile("".join(out), re.IGNORECASE | re.ASCII)


_compiled: dict[str, tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]] = {}


def _patterns(profile: PiProfile) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """(overflow, not-overflow) patterns of ``profile``'s pi, compiled when first asked."""
    got = _compiled.get(profile.version)
    if got is None:
        sources = _PATTERNS_1_6_0 if profile.projection else _PATTERNS_0_80_2
        got = _compiled[profile.version] = (
            tuple(js_pattern(s) for s in sources),
            tuple(js_pattern(s) for s in _NOT_OVERFLOW),
        )
    return got


def error_is_overflow(text: str, profile: PiProfile, provider: Any = None) -> bool:
    """Case 1 of that pi's ``isContextOverflow``: does a provider's error text mean a context
    overflow (one of its patterns, none of its rate-limit ones; pi 1.6.0 takes Cerebras' bodiless
    400/413 from ``provider`` "cerebras" only)?"""
    overflow, not_overflow = _patterns(profile)
    if any(p.search(text) for p in not_overflow):
        return False
    if any(p.search(text) for p in overflow):
        return True
    return bool(profile.projection and provider == "cerebras" and _cerebras_bodiless().search(text))


def is_overflow_error_text(text: str) -> bool:
    """An error of Session Studio's own requests (the summariser's) that either pi takes for a
    context overflow: what the LLM layer calls a context-overflow failure."""
    return any(error_is_overflow(text, profile, "cerebras") for profile in (PROFILE_0_80_2, PROFILE_1_6_0))


_cerebras: list[re.Pattern[str]] = []


def _cerebras_bodiless() -> re.Pattern[str]:
    if not _cerebras:
        _cerebras.append(js_pattern(_CEREBRAS_BODYLESS))
    return _cerebras[0]


def _number(v: Any) -> float:
    if type(v) is int or type(v) is float:
        return float(v)
    if v is True or v is False:
        return float(v)
    if v is None:
        return 0.0
    if type(v) is str:
        return js_to_number(v)
    return math.nan  # undefined, an object, an array with more than one element (close enough)


def is_context_overflow(message: Any, context_window: float, profile: PiProfile) -> bool:
    """``isContextOverflow(message, contextWindow)`` of ``profile``'s pi for a stored assistant
    message. Where pi's function would throw (a completed answer without ``usage``), False: pi's
    check fails there, and compacts for no overflow."""
    if type(message) is not dict:
        return False
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    if (
        stop == "error"
        and js_truthy(error)
        and error_is_overflow(js_string(error), profile, message.get("provider"))
    ):
        return True
    if not js_truthy(context_window) or stop not in ("stop", "length"):
        return False
    try:
        usage = prop(message, "usage")
        if stop == "length" and not _strictly_zero(prop(usage, "output")):
            return False
        used = _number(js_plus(prop(usage, "input"), prop(usage, "cacheRead")))
    except JsTypeError:
        return False
    return used > context_window if stop == "stop" else used >= context_window * 0.99


def _strictly_zero(v: Any) -> bool:
    """``v === 0`` (0 and -0; not "0", not false)."""
    return (type(v) is int or type(v) is float) and v == 0


@dataclass(frozen=True, slots=True)
class Overflow:
    """Why pi's check takes an answer for a context overflow: ``kind`` "error" (its error matches
    pi's patterns), "input" (it completed with an input over the window) or "length" (it stopped
    for length with no output, the input filling the window); ``used``: the answer's input and
    cache reads (None for an error); ``retries``: pi retries after compacting (it does not when the
    answer completed)."""

    kind: str
    used: float | None
    retries: bool


def answer_overflow(
    message: Any, window: float, profile: PiProfile, edited_after: bool = False
) -> Overflow | None:
    """The overflow pi's ``_checkCompaction`` finds in the answer it checks, before any threshold,
    or None. pi compacts for it only when the answer came from the model it runs (0.80.2: the
    session's model, by provider and id; 1.6.0: a model of its registry), which this cannot see.

    pi 1.6.0 takes an error's overflow from the patterns alone and an overflow by usage only when
    no context edit follows the answer (``edited_after``); a length stop below the model's output
    limit (1.6.0's recoverable length) is not modelled: it needs the model's maxTokens."""
    if type(message) is not dict:
        return None
    stop = message.get("stopReason")
    if stop == "error":
        return Overflow("error", None, True) if is_context_overflow(message, 0, profile) else None
    if (profile.projection and edited_after) or not is_context_overflow(message, window, profile):
        return None
    usage = message.get("usage")
    used = _number(js_plus(prop(usage, "input"), prop(usage, "cacheRead")))
    return Overflow("input" if stop == "stop" else "length", used, stop != "stop")
