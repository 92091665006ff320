"""core/overflow.py against pi's own ``isContextOverflow`` (pi-ai's utils/overflow.js) of pi 0.80.2
and pi 1.6.0: tests/oracle/overflow-check.mjs runs both on the same messages.

The messages: every provider error pi's sources quote, the same texts bent where JavaScript and
Python regular expressions part (case, Unicode digits and spaces, line terminators, a trailing
newline, non-ASCII letters that fold to ASCII in Python), rate-limit texts, error messages that
are not strings, usages that are strings, missing or at the edges of the window, and random
texts made of the patterns' own words. Where pi's function throws (a completed answer without a
usage) ours says no overflow.
"""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest

from session_studio.core.overflow import is_context_overflow
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from tests.conftest import ORACLE_DIR, Oracle, Oracle16

pytestmark = pytest.mark.oracle

#: the error texts pi's overflow.js quotes, one per provider (both versions' comments)
QUOTED = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
    "Your input exceeds the context window of this model",
    "Requested token count exceeds the model's maximum context length of 131072 tokens",
    "Input length (265330) exceeds model's maximum context length (262144).",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
    "Please reduce the length of the messages or completion",
    "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens",
    "Input length 9000 exceeds the maximum allowed input length of 8,192 tokens.",
    "The input (9000 tokens) is longer than the model's context length (8192 tokens).",
    "the request exceeds the available context size, try increasing it",
    "tokens to keep from the initial prompt is greater than the context length",
    "prompt token count of 9000 exceeds the limit of 8192",
    "invalid params, context window exceeds limit",
    "Your request exceeded model token limit: 9000 (requested: 10000)",
    "400 status code (no body)",
    "413 (no body)",
    "Prompt contains 9000 tokens and is too large for model with 8192 maximum context length",
    "model_context_window_exceeded",
    "prompt too long; exceeded max context length by 12 tokens",
    "context_length_exceeded",
    "Too many tokens in the request",
    "token limit exceeded",
    "input is too long for requested model",
    "litellm.ContextWindowExceededError: Context Window exceeded for given call.",
    'github-copilot API error (413): {"message":"failed to parse request","code":""}',
    "Prompt has 9,000 tokens, but the configured context size is 8,192 tokens",
    '{"code":"1261","message":"Prompt too long"}',
    '{"code":"1261","message":"Prompt exceeds max length"}',
    "Range of input length should be [1, 129024]",
    "413: request entity too large",
    "413",
    "ThrottlingException: Too many tokens, please wait before trying again.",
    "Throttling error: Too many tokens, please wait before trying again.",
    "Service unavailable: prompt is too long",
    "rate limit: prompt is too long",
    "429 Too Many Requests: context_length_exceeded",
    "Internal server error",
    "",
    # `.*` between two words: JavaScript's dot stops at \r and \u2028 too, Python's only at \n
    "The input token count (5)\rexceeds the maximum",
    "The input token count (5)\u2028exceeds the maximum",
    "The input token count (5)\x85exceeds the maximum",
    "413\u00a0",
]


def _bent(text: str) -> list[str]:
    """The text where JavaScript's and Python's regular expressions would part."""
    return [
        text.upper(),
        text.replace(" ", "\u00a0"),
        text.replace(" ", "\ufeff"),  # JS whitespace, not Python's
        text.replace(" ", "\x1c"),  # Python whitespace, not JS's
        text.replace(" ", "\u2028"),
        text.replace(" ", "\n"),
        text + "\n",
        text.replace("1", "\u0661"),  # an Arabic-Indic digit: \d in Python's Unicode mode only
        text.replace("s", "\u017f"),  # the long s: folds to "s" in Python's Unicode mode only
        text.replace("k", "\u212a"),  # the Kelvin sign: folds to "k" likewise
        text.replace("i", "\u0131"),  # the dotless i
        "x " + text,
    ]


WORDS = [
    *[
        "prompt",
        "is",
        "too",
        "long",
        "exceeds",
        "the",
        "context",
        "window",
        "maximum",
        "context",
        "length",
        "of",
        "8,192",
        "tokens",
    ],
    *[
        "(",
        ")",
        "413",
        "400",
        "status",
        "code",
        "(no",
        "body)",
        "API",
        "error",
        ":",
        "input",
        "token",
        "count",
        "rate",
        "limit",
        "too",
        "many",
    ],
    *[
        "requests",
        "model's",
        "length",
        "12",
        "greater",
        "than",
        "range",
        "of",
        "input",
        "should",
        "be",
        "Throttling",
        "error",
    ],
    *["Service", "unavailable", ".", "\n"],
]


def _messages() -> list[tuple[dict[str, Any], int]]:
    rnd = random.Random(11)
    texts: list[Any] = []
    for t in QUOTED:
        texts += [t, *_bent(t)]
    texts += [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 12))) for _ in range(400)]
    texts += [413, 0, True, ["prompt is too long"], {"m": 1}, None]
    out: list[tuple[dict[str, Any], int]] = []
    for t in texts:
        for provider in ("anthropic", "cerebras"):
            out.append(
                ({"role": "assistant", "stopReason": "error", "errorMessage": t, "provider": provider}, 8192)
            )
    usages: list[Any] = [
        {"input": 8000, "cacheRead": 193, "output": 5},
        {"input": 8000, "cacheRead": 192, "output": 0},
        {"input": 8110, "cacheRead": 0, "output": 0},  # 99 % of 8192 is 8110.08
        {"input": 8111, "cacheRead": 0, "output": 0},
        {"input": "8000", "cacheRead": 193, "output": 0},  # JS: "8000193"
        {"input": 8000, "output": 0},
        {"input": None, "cacheRead": 9000, "output": "0"},
        {"input": True, "cacheRead": 8192, "output": -0.0},
        {},
        None,
    ]
    for usage in usages:
        for stop in ("stop", "length", "toolUse", "error"):
            for window in (8192, 0):
                message: dict[str, Any] = {"role": "assistant", "stopReason": stop}
                if usage is not None:
                    message["usage"] = usage
                out.append((message, window))
    return out


def test_ours_answers_as_pi_s_own_function(oracle: Oracle, oracle16: Oracle16) -> None:
    cases = _messages()
    lines = "\n".join(json.dumps({"message": m, "contextWindow": w}) for m, w in cases)
    run = subprocess.run(
        ["node", str(ORACLE_DIR / "overflow-check.mjs")],
        input=lines.encode(),
        capture_output=True,
        check=True,
        env={**oracle.env, **oracle16.env},
        timeout=120,
    )
    answers = [json.loads(line) for line in run.stdout.decode().splitlines()]
    assert len(answers) == len(cases)
    wrong = []
    overflows = {"0.80.2": 0, "1.6.0": 0}
    for (message, window), answer in zip(cases, answers, strict=True):
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            theirs = answer[profile.version]
            expected = theirs is True  # "throws": pi's check fails, it compacts for no overflow
            overflows[profile.version] += expected
            if is_context_overflow(message, window, profile) != expected:
                wrong.append(f"{profile.version}: {message!r} window {window}: pi says {theirs}")
    assert not wrong, "\n".join(wrong[:20])
    assert min(overflows.values()) > 100  # the set holds both answers, many times
