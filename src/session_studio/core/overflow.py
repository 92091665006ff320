"""pi's ``isContextOverflow`` (pi-ai's ``utils/overflow.js``): is an assistant answer a context
overflow? pi's compaction check asks it before the threshold: an overflow answer from the model pi
runs makes pi compact at once (and retry, unless the answer completed), whatever the context's size
(spec §9; ``AgentSession._checkCompaction`` in both versions).

An answer is an overflow when (1) it failed (``stopReason: "error"``) with an error message that
matches one of pi's provider patterns and none of its rate-limit patterns, (2) it completed
(``"stop"``) with ``usage.input + usage.cacheRead`` over the context window (providers that accept
an oversized prompt silently), or (3) it stopped for length with no output and an input filling
99 % of the window. pi 1.6.0 added patterns (z.ai, LiteLLM, DS4, DashScope, any HTTP 413) and takes
Cerebras' bodiless 400/413 from Cerebras only; its check also compacts and retries for a *recoverable
length* stop (pi-ai's ``isRecoverableLength``): a length stop whose output ended below the model's
output limit (its ``maxTokens``), which may be the context's pressure or the provider's truncation.

The patterns are pi's JavaScript regular expressions, translated so that Python matches exactly
what V8 does: ASCII ``\\d``/``\\w`` and case folding (a non-unicode ``/i`` never maps a non-ASCII
character to an ASCII one), JavaScript's whitespace for ``\\s``, ``.`` stopping at every line
terminator, ``$`` only at the very end.
"""

from __future__ import annotations

import functools
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
    "recoverable_length",
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


@functools.cache
def _compiled(sources: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """pi's patterns compiled when first asked (an error or an answer to check, not every start)."""
    return tuple(js_pattern(s) for s in sources)


def error_is_overflow(text: str, profile: PiProfile, provider: Any = None) -> bool:
    """Case 1 of that pi's ``isContextOverflow``: does a provider's error text mean a context
    overflow (one of its patterns, none of its rate-limit ones; pi 1.6.0 takes Cerebras' bodiless
    400/413 from ``provider`` "cerebras" only)?"""
    if any(p.search(text) for p in _compiled(_NOT_OVERFLOW)):
        return False
    if any(p.search(text) for p in _compiled(_PATTERNS_1_6_0 if profile.projection else _PATTERNS_0_80_2)):
        return True
    return bool(
        profile.projection and provider == "cerebras" and _compiled((_CEREBRAS_BODYLESS,))[0].search(text)
    )


def is_overflow_error_text(text: str) -> bool:
    """An error of Session Studio's own requests (the summariser's) that either pi takes for a
    context overflow: what the LLM layer calls a context-overflow failure."""
    return any(error_is_overflow(text, profile, "cerebras") for profile in (PROFILE_0_80_2, PROFILE_1_6_0))


@dataclass(frozen=True, slots=True)
class Overflow:
    """Why pi's check takes an answer for a context overflow: ``kind`` "error" (its error matches
    pi's patterns), "input" (it completed with an input over the window), "length" (it stopped
    for length with no output, the input filling the window) or "truncated" (pi 1.6.0: it stopped
    for length with its output below the model's output limit); ``used``: the answer's input and
    cache reads (None for an error; the output for "truncated"); ``retries``: pi retries after
    compacting (it does not when the answer completed)."""

    kind: str
    used: float | None
    retries: bool


def _overflow(message: Any, context_window: float, profile: PiProfile) -> Overflow | None:
    """``isContextOverflow(message, contextWindow)`` of ``profile``'s pi, with which of its cases
    holds. Where pi's function would throw (a completed answer without ``usage``), None: pi's check
    fails there, and compacts for no overflow."""
    if type(message) is not dict:
        return None
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    if (
        stop == "error"
        and js_truthy(error)
        and error_is_overflow(js_string(error), profile, message.get("provider"))
    ):
        return Overflow("error", None, True)
    if not js_truthy(context_window) or stop not in ("stop", "length"):
        return None
    try:
        usage = prop(message, "usage")
        if stop == "length" and not _strictly_zero(prop(usage, "output")):
            return None
        used = js_to_number(js_plus(prop(usage, "input"), prop(usage, "cacheRead")))
    except JsTypeError:
        return None
    if stop == "stop":
        return Overflow("input", used, False) if used > context_window else None
    return Overflow("length", used, True) if used >= context_window * 0.99 else None


def is_context_overflow(message: Any, context_window: float, profile: PiProfile) -> bool:
    """``isContextOverflow(message, contextWindow)`` of ``profile``'s pi for a stored assistant
    message (False where pi's function would throw: see :func:`answer_overflow`)."""
    return _overflow(message, context_window, profile) is not None


def _strictly_zero(v: Any) -> bool:
    """``v === 0`` (0 and -0; not "0", not false)."""
    return (type(v) is int or type(v) is float) and v == 0


def recoverable_length(message: Any, max_tokens: float) -> Overflow | None:
    """pi 1.6.0's ``isRecoverableLength(message, model.maxTokens)``: a length stop whose output
    ended below the model's output limit (``max_tokens``; 0: unknown, never). Raises
    :class:`.jsvalue.JsTypeError` where pi's would throw (a length stop without ``usage``)."""
    if prop(message, "stopReason") != "length" or not max_tokens > 0:
        return None
    output = js_to_number(prop(prop(message, "usage"), "output"))  # `<` on a JSON value: ToNumber
    return Overflow("truncated", output, True) if output < max_tokens else None


def answer_overflow(
    message: Any,
    window: float,
    profile: PiProfile,
    edited_after: bool = False,
    max_tokens: float = 0,
    retained: bool = True,
) -> Overflow | None:
    """The overflow pi's ``_checkCompaction`` finds in the answer it checks, before any threshold,
    or None. pi compacts for it only when the answer came from the model it runs (0.80.2: the
    session's model, by provider and id; 1.6.0: a model of its registry), which this cannot see:
    ``window`` and ``max_tokens`` (its output limit, 0 if unknown) are taken for that model's.
    Where pi's check would throw (an answer without ``usage`` that it reads), None: pi's check
    fails there, and compacts for no overflow.

    pi 1.6.0 (its ``_checkCompaction``) takes an overflow by usage only when no context edit
    follows the answer on the path (``edited_after``), an overflow error by its patterns alone
    unless it is also not ``retained`` (a compaction follows the answer on the path, or its last
    context edit omits it) with an edit after it, and adds the recoverable length stop."""
    if type(message) is not dict:
        return None
    found = _overflow(message, window, profile)
    if profile.projection and found is not None and edited_after and (found.kind != "error" or not retained):
        found = None
    if not profile.projection:
        return found
    try:  # evaluated whatever the overflow case found, so its throw fails the whole check
        truncated = recoverable_length(message, max_tokens)
    except JsTypeError:
        return None
    return found or truncated
