"""Errors raised by the summarizers, and a redaction helper for secrets.

Every failure of a summarizer is mapped onto this tree::

    LlmError                         base class; ``user_message`` is safe to show
    ├── LlmConfigError               no API key, unusable base URL, 404, unsupported credentials
    ├── LlmAuthError                 HTTP 401 / 403
    ├── LlmRateLimitError            HTTP 429 (``retry_after`` seconds, if the server said)
    ├── LlmServerError               HTTP 5xx, 529 "overloaded", provider "overloaded"/"api_error" events
    ├── LlmTimeoutError              connect/idle timeout or the overall deadline passed
    ├── LlmResponseTooLargeError     the answer exceeded the byte or summary-length limit
    ├── LlmConnectionError           refused, reset, DNS failure, disconnected before any response
    ├── LlmProtocolError             broken or garbage stream, invalid JSON, missing end-of-stream marker
    ├── LlmContextOverflowError      the prompt does not fit the model's context window
    ├── LlmRequestError              any other 4xx the server rejected (bad model name, bad parameter…)
    ├── LlmCancelledError            the caller cancelled (``CancelToken.cancel()``)
    └── LlmSummaryError              the model answered with stop reason "error" (content filter, refusal…)

Messages (``str(err)``) and ``user_message`` never contain API keys: every text that might
include headers, URLs or a server's reply goes through :func:`redact`, which removes the
secrets registered with :func:`register_secret` (the summarizers register their key) and
anything that looks like a credential.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable

from ..core.overflow import is_overflow_error_text

__all__ = [
    "LlmAuthError",
    "LlmCancelledError",
    "LlmConfigError",
    "LlmConnectionError",
    "LlmContextOverflowError",
    "LlmError",
    "LlmProtocolError",
    "LlmRateLimitError",
    "LlmRequestError",
    "LlmResponseTooLargeError",
    "LlmServerError",
    "LlmSummaryError",
    "LlmTimeoutError",
    "is_context_overflow_message",
    "overflow_advice",
    "redact",
    "register_secret",
    "summary_failure_message",
]

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Redaction

REDACTED = "[REDACTED]"
_MIN_SECRET_LEN = 6
_secrets: set[str] = set()
_secrets_lock = threading.Lock()

_REDACT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Authorization: Bearer xyz", "authorization=xyz", JSON '"authorization": "xyz"'
    (
        re.compile(
            r"""(?i)(["']?(?:proxy-)?authorization["']?\s*[:=]\s*["']?)(bearer\s+|basic\s+)?[^\s,;'"}()\[\]]+"""
        ),
        r"\1\2" + REDACTED,
    ),
    (
        re.compile(
            r"""(?i)(["']?(?:x-api-key|x-goog-api-key|api-key|api_key|apikey)["']?\s*[:=]\s*["']?)[^\s,;'"}&()\[\]]+"""
        ),
        r"\1" + REDACTED,
    ),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{6,}"), "Bearer " + REDACTED),
    # query parameters that carry credentials
    (re.compile(r"(?i)([?&](?:key|api[_-]?key|token|access_token|auth)=)[^&\s#\"']+"), r"\1" + REDACTED),
    # user:password@ in URLs
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s:@]+:[^/\s@]+@"), r"\1" + REDACTED + "@"),
    # well-known key shapes (OpenAI/Anthropic/OpenRouter "sk-…", Google "AIza…", HF "hf_…", GitHub)
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-" + REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
)


def register_secret(value: str | None) -> None:
    """Remember a secret (e.g. an API key) so that :func:`redact` removes it everywhere.

    Values shorter than 6 characters are ignored (they would mangle ordinary text).
    Secrets are held only in this process's memory.
    """
    if value and len(value) >= _MIN_SECRET_LEN:
        with _secrets_lock:
            _secrets.add(value)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` with registered secrets, ``secrets`` and credential-looking parts removed."""
    if not text:
        return text
    with _secrets_lock:
        known = set(_secrets)
    known.update(s for s in secrets if s and len(s) >= _MIN_SECRET_LEN)
    for secret in sorted(known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _REDACT_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# ---------------------------------------------------------------------------------------------
# Context-overflow classification (pi-ai's isContextOverflow, case 1; spec §4.6)


def is_context_overflow_message(message: str) -> bool:
    """True if an error text means "context too long" to either pi (spec §4.6 case 1): the patterns
    live in core.overflow, where pi's compaction check uses them too."""
    return bool(message) and is_overflow_error_text(message)


def summary_failure_message(kind: str, error_message: str | None) -> str:
    """The error text pi uses when a summary request ends with stop reason "error" (spec §7.2, §7.4, §8.4)."""
    if kind == "turn_prefix":
        return "Turn prefix summarization failed: " + (error_message or "Unknown error")
    if kind == "branch":
        return error_message or "Summarization failed"
    return "Summarization failed: " + (error_message or "Unknown error")


#: the one sentence for a summariser without a model, in the window and on the command line
NO_MODEL_MESSAGE = "No model is selected: choose one in the provider settings (on the command line: --model)."


def overflow_advice(kind: str) -> str:
    """What to do when a summary request of this kind did not fit the model's context window:
    a compaction summarizes less when it keeps more; a branch summary fits pi's budget, which
    comes from the context window it is given."""
    if kind == "branch":
        return (
            "Use a model with a larger context window, or give the branch summary this model's "
            "context window, so that its budget leaves out the oldest messages."
        )
    return "Use a model with a larger context window, or keep more recent tokens so that less is summarized."


# ---------------------------------------------------------------------------------------------
# The error tree


class LlmError(Exception):
    """Base class of every summarizer failure.

    ``str(err)`` is a technical description (for logs); ``user_message`` is a sentence a
    person can act on. Both are redacted. ``status`` is the HTTP status when there was one,
    ``provider`` a short provider label, ``retryable`` whether a later retry may succeed.
    """

    default_user_message = "The summary could not be generated."
    retryable_default = False

    def __init__(
        self,
        message: str,
        *,
        user_message: str | None = None,
        status: int | None = None,
        provider: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        safe = redact(message)
        super().__init__(safe)
        self.message = safe
        self.user_message = redact(user_message) if user_message else self.default_user_message
        self.status = status
        self.provider = provider
        self.retryable = self.retryable_default if retryable is None else retryable


class LlmConfigError(LlmError):
    """Missing API key, unusable base URL, unknown endpoint or model (404), unsupported credentials."""

    default_user_message = "The LLM provider is not configured correctly: check the provider settings."


class LlmAuthError(LlmError):
    """The server refused the credentials (HTTP 401 or 403)."""

    default_user_message = "The server rejected the API key: check the key in the provider settings."


class LlmRateLimitError(LlmError):
    """HTTP 429. ``retry_after`` is the delay in seconds the server asked for, if any."""

    default_user_message = "The provider is rate limiting requests: wait a little and try again."
    retryable_default = True

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        user_message: str | None = None,
        status: int | None = 429,
        provider: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(
            message, user_message=user_message, status=status, provider=provider, retryable=retryable
        )
        self.retry_after = retry_after


class LlmServerError(LlmError):
    """The provider failed (HTTP 5xx, 529 overloaded, or an "overloaded"/"api_error" stream event)."""

    default_user_message = "The provider had an internal problem or is overloaded: try again later."
    retryable_default = True


class LlmTimeoutError(LlmError):
    """No answer within the configured timeout (connect, first byte, or a stalled stream)."""

    default_user_message = "The provider did not answer in time: check the server or raise the timeout."


class LlmResponseTooLargeError(LlmError):
    """The server sent more than the configured limit (bytes read, or summary characters)."""

    default_user_message = "The server's answer was larger than the limit; nothing was used."


class LlmConnectionError(LlmError):
    """Could not reach the server, or it dropped the connection before answering."""

    default_user_message = "Could not connect to the provider: check the base URL and your network."


class LlmProtocolError(LlmError):
    """The reply was not a well-formed stream (cut off, garbage, invalid JSON, no end marker)."""

    default_user_message = (
        "The server's reply could not be understood: check that the base URL points to the right API."
    )


class LlmContextOverflowError(LlmError):
    """The request does not fit the model's context window."""

    default_user_message = (
        "The conversation is too long for this model's context window: use a model with a larger "
        "context or summarize a smaller part."
    )


class LlmRequestError(LlmError):
    """The server rejected the request (a 4xx other than 401/403/404/429 and not an overflow)."""

    default_user_message = "The server rejected the request: check the model name and provider settings."


class LlmCancelledError(LlmError):
    """The caller cancelled the summary."""

    default_user_message = "Summarization was cancelled."


class LlmSummaryError(LlmError):
    """The model finished with stop reason "error" (e.g. content filter or refusal)."""

    default_user_message = "The model reported an error instead of a summary."
