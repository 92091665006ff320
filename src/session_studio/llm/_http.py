"""Shared machinery of the HTTP summarizers: streaming, cancellation, retries, error mapping."""

from __future__ import annotations

import email.utils
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import orjson

from session_studio.llm._sse import SseDecoder, SseEvent
from session_studio.llm.base import (
    DEFAULT_CONNECT_TIMEOUT_S,
    CancelToken,
    RequestLimits,
    SummaryRequest,
    SummaryResult,
)
from session_studio.llm.errors import (
    NO_MODEL_MESSAGE,
    LlmAuthError,
    LlmCancelledError,
    LlmConfigError,
    LlmConnectionError,
    LlmContextOverflowError,
    LlmError,
    LlmProtocolError,
    LlmRateLimitError,
    LlmRequestError,
    LlmResponseTooLargeError,
    LlmServerError,
    LlmTimeoutError,
    is_context_overflow_message,
    overflow_advice,
    redact,
    register_secret,
)
from session_studio.llm.limits import DEFAULT_IDLE_TIMEOUT_S

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpSummarizer",
    "StreamHandler",
    "error_for_message",
    "json_event",
    "parse_retry_after",
    "sanitize_surrogates",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=10.0)
_MAX_ERROR_BODY = 64 * 1024
_USER_AGENT = "session-studio-llm/0.1"
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates (pi-ai ``sanitizeSurrogates``); they cannot be sent as UTF-8."""
    return _LONE_SURROGATE.sub("", text)


_ERRNO_PREFIX = re.compile(r"^\[Errno -?\d+\]\s*")
_PLAIN_CAUSES: tuple[tuple[type[BaseException], str], ...] = (
    (httpx.RemoteProtocolError, "the server closed the connection"),
    (httpx.ConnectError, "the connection was refused or the host is unknown"),
    (httpx.ReadError, "the connection was reset"),
    (httpx.WriteError, "the connection was reset while sending"),
)


def transport_cause(exc: object) -> str:
    """A transport failure in words for a message: httpx's own text without its class name or
    errno ("Connection refused", "Server disconnected without sending a response"); the class
    name stays in the technical message (the log, the folded details)."""
    text = _ERRNO_PREFIX.sub("", str(exc)).strip().rstrip(".")
    if text:
        return text
    for kind, words in _PLAIN_CAUSES:
        if isinstance(exc, kind):
            return words
    return "the connection failed"


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait according to ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def names_a_credential(extra_headers: Mapping[str, str] | None, names: set[str]) -> bool:
    """Whether ``extra_headers`` carries one of the credential headers ``names`` (lower case) with a
    value: a key given that way stands in for the API key."""
    return any(k.lower() in names and v and v.strip() for k, v in (extra_headers or {}).items())


_TAG = re.compile(r"<[^>]*>")
_HEADING = re.compile(r"<(title|h1)[^>]*>(.*?)</\1>", re.IGNORECASE | re.DOTALL)


def _said(detail: str) -> str:
    """What an error body said, for a message: " (its text)", cut at 300 characters; an HTML
    page by its title or first heading (its markup was quoted whole); "" for an empty body."""
    if detail in ("status code (no body)", ""):
        return ""
    text = detail.strip()
    if text[:1] == "<" and re.search(r"<(html|body|head|title|h1)\b", text[:2000], re.IGNORECASE):
        found = _HEADING.search(text)
        heading = " ".join(_TAG.sub(" ", found.group(2)).split()) if found else ""
        return f" (an HTML page: {heading[:200]})" if heading else " (an HTML page)"
    return f" ({text if len(text) <= 300 else text[:300] + '…'})"


def error_for_message(
    message: str,
    *,
    provider: str,
    status: int | None = None,
    kind: str | None = None,
    retry_after: float | None = None,
    key_hint: str | None = None,
    url: str | None = None,
) -> LlmError:
    """Map an HTTP status and/or provider error text/type to the error tree."""
    safe = redact(message)
    detail = safe[len(f"{status} ") :] if status is not None and safe.startswith(f"{status} ") else safe
    said = _said(detail)  # " (what the server said)", or "" when it said nothing
    where = f" at {redact(url)}" if url else ""
    status_text = f"{status}" if status is not None else "an error"
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        hint = key_hint or "the provider settings"
        return LlmAuthError(
            f"{provider}: HTTP {status}: {safe}",
            user_message=f"The server said {status_text}{said}: check the API key in {hint}.",
            status=status,
            provider=provider,
        )
    if status == 429 or kind == "rate_limit_error":
        wait = f" It asked to wait {retry_after:g} s." if retry_after is not None else ""
        return LlmRateLimitError(
            f"{provider}: HTTP {status}: {safe}",
            retry_after=retry_after,
            user_message=(
                f"The server said {status_text}: too many requests or quota exhausted{said}.{wait} "
                "Try again later, or use another key or model."
            ),
            status=status,
            provider=provider,
        )
    if is_context_overflow_message(message) or kind == "request_too_large":
        return LlmContextOverflowError(
            f"{provider}: HTTP {status}: {safe}",
            user_message=(f"The conversation is too long for the model's context window{said}."),
            status=status,
            provider=provider,
        )
    if status == 404:
        return LlmConfigError(
            f"{provider}: HTTP 404{where}: {safe}",
            user_message=f"The server said 404{where}{said}: check the base URL and the model name.",
            status=status,
            provider=provider,
        )
    if status == 408:
        return LlmTimeoutError(
            f"{provider}: HTTP 408: {safe}",
            user_message="The server timed out while handling the request: try again, or use a faster model.",
            status=status,
            provider=provider,
        )
    if (status is not None and status >= 500) or kind in ("overloaded_error", "api_error"):
        return LlmServerError(
            f"{provider}: HTTP {status}: {safe}",
            user_message=(
                f"The server said {status_text}{said}: the provider has a problem or is overloaded. "
                "Try again in a moment."
            ),
            status=status,
            provider=provider,
        )
    return LlmRequestError(
        f"{provider}: HTTP {status}: {safe}",
        user_message=f"The server rejected the request with {status_text}{said}: check the model name and settings.",
        status=status,
        provider=provider,
    )


class StreamHandler(Protocol):
    """Per-attempt parser of one provider's event stream."""

    @property
    def done(self) -> bool:
        """True once the end-of-stream marker was seen (no need to read further)."""
        ...

    def handle(self, event: SseEvent) -> str | None:
        """Consume an event; return a text delta to forward, if any. Raise ``LlmError`` on failure."""
        ...

    def finish(self) -> SummaryResult:
        """Called at the end of the stream; validate completeness and build the result."""
        ...


@dataclass(slots=True)
class _Item:
    kind: str  # head | body | chunk | end | error | cancel
    payload: Any = None
    after_head: bool = False


class _ConnectionPhase:
    """Whether a request is still connecting (DNS, TCP, TLS), from httpcore's trace events.

    The idle watchdog can run out while the connection is still being made (an idle timeout
    shorter than the connect timeout, a host that drops the handshake): that is "could not
    connect", not "the server sent nothing". A transport without these events (a mock) never
    reads as connecting.
    """

    def __init__(self) -> None:
        self.connecting = False

    def trace(self, event: str, info: Mapping[str, object]) -> None:
        if event.endswith((".connect_tcp.started", ".start_tls.started")):
            self.connecting = True
        elif event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            self.connecting = False


class HttpSummarizer:
    """Base class: one synchronous ``httpx.Client``, streaming POST, retries, cancellation.

    The request runs in a short-lived daemon thread that pushes bytes into a queue; the calling
    thread parses them, calls ``on_text`` and watches the :class:`CancelToken`, so a cancellation
    returns at once even while the server is silent. An abandoned request thread ends on its own
    at the next chunk or at the timeout, closing its response.
    """

    provider_label = "LLM"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        max_retries: int = 2,
        extra_headers: Mapping[str, str] | None = None,
        max_retry_delay_s: float = 30.0,
        retry_backoff_s: float = 1.0,
        key_hint: str | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        if not model:
            raise LlmConfigError(
                f"{self.provider_label}: no model name given",
                user_message=NO_MODEL_MESSAGE,
            )
        self.base_url = self._check_base_url(base_url)
        self.model = model
        self._api_key = api_key or None
        register_secret(self._api_key)
        for value in (extra_headers or {}).values():
            register_secret(value)
        if limits is None:
            limits = RequestLimits(
                idle_timeout_s=timeout.read or DEFAULT_IDLE_TIMEOUT_S,
                connect_timeout_s=timeout.connect or DEFAULT_CONNECT_TIMEOUT_S,
            )
        self.limits = limits
        # httpx's own timeouts end the request thread when the server goes silent
        timeout = httpx.Timeout(limits.idle_timeout_s, connect=limits.connect_timeout_s)
        self._timeout = timeout
        self._max_retries = max(0, int(max_retries))
        self._extra_headers = dict(extra_headers or {})
        self._max_retry_delay_s = max(0.0, max_retry_delay_s)
        self._retry_backoff_s = max(0.0, retry_backoff_s)
        self._key_hint = key_hint
        self._client = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False)
        #: told, in a sentence, when an attempt failed and the next one waits (the window's status,
        #: the CLI's stderr): a 429's retries were seconds of "Generating…" with nothing said
        self.retry_note: Callable[[str], None] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP client (and its connection pool)."""
        self._client.close()

    def __enter__(self) -> HttpSummarizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return (
            f"{type(self).__name__}(base_url={redact(self.base_url)!r}, model={self.model!r}, api_key={key})"
        )

    # -- hooks for subclasses ----------------------------------------------------------------

    def _endpoint(self) -> str:
        raise NotImplementedError

    def _headers(self, request: SummaryRequest) -> dict[str, str]:
        raise NotImplementedError

    def _body(self, request: SummaryRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _stream_handler(self, request: SummaryRequest) -> StreamHandler:
        raise NotImplementedError

    def _error_from_body(self, status: int, body: bytes) -> tuple[str, str | None]:
        """Extract (message, error type) from an error response body."""
        text = body.decode("utf-8", "replace").strip()
        if not text:
            return f"{status} status code (no body)", None
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return f"{status} {text[:2000]}", None
        message: str | None = None
        kind: str | None = None
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict):
                if isinstance(err.get("message"), str):
                    message = err["message"]
                if isinstance(err.get("type"), str):
                    kind = err["type"]
                elif isinstance(err.get("code"), str):
                    kind = err["code"]
            elif isinstance(err, str):
                message = err
            if message is None and isinstance(data.get("message"), str):
                message = data["message"]
        return f"{status} {message if message is not None else text[:2000]}", kind

    # -- helpers ---------------------------------------------------------------------------

    def _check_base_url(self, base_url: str) -> str:
        raw = (base_url or "").strip()
        try:
            url = httpx.URL(raw)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise self._bad_url(raw) from exc
        if url.scheme not in ("http", "https") or not url.host:
            raise self._bad_url(raw)
        return raw.rstrip("/")

    def _bad_url(self, raw: str) -> LlmConfigError:
        shown = redact(raw) or "(empty)"
        return LlmConfigError(
            f"{self.provider_label}: unusable base URL {shown!r}",
            user_message=(
                f"The base URL {shown!r} is not a valid http(s) URL: enter e.g. "
                "https://api.openai.com/v1 or http://localhost:11434/v1."
            ),
        )

    def _common_headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "accept": "application/json", "user-agent": _USER_AGENT}

    def _retry_delay(self, err: LlmError, attempt: int) -> float | None:
        if isinstance(err, LlmRateLimitError) and err.retry_after is not None:
            if err.retry_after > self._max_retry_delay_s:
                return None  # the server wants us to wait longer than we are willing to: give up now
            return err.retry_after
        return min(self._retry_backoff_s * (2.0**attempt), self._max_retry_delay_s)

    # -- the main loop -----------------------------------------------------------------------

    def summarize(
        self,
        request: SummaryRequest,
        *,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> SummaryResult:
        """Send ``request`` and stream the answer; see :class:`~session_studio.llm.base.Summarizer`."""
        token = cancel if cancel is not None else CancelToken()
        deadline = time.monotonic() + self.limits.deadline_s
        attempt = 0
        while True:
            token.raise_if_cancelled()
            emitted = [False]
            try:
                return self._attempt(request, on_text, token, emitted, deadline)
            except LlmContextOverflowError as err:
                err.user_message = f"{err.user_message} {overflow_advice(request.kind)}"
                raise
            except LlmError as err:
                if isinstance(err, LlmCancelledError) or not err.retryable or emitted[0]:
                    # the log has every failure, also one after the answer began (a reset, a cut-off
                    # or garbled stream, a stall, a cancel): those were not in it
                    logger.info("%s: request ended: %s", self.provider_label, err)
                    raise
                if attempt >= self._max_retries:  # the caller reports the error itself: info, not a warning
                    logger.info(
                        "%s: giving up after %d attempt(s): %s", self.provider_label, attempt + 1, err
                    )
                    raise
                delay = self._retry_delay(err, attempt)
                if delay is not None and time.monotonic() + delay >= deadline:
                    delay = None  # the retry could not finish before the deadline
                if delay is None:
                    logger.info(
                        "%s: server asks to wait too long, not retrying: %s", self.provider_label, err
                    )
                    raise
                logger.info(
                    "%s: attempt %d failed (%s); retrying in %.2f s",
                    self.provider_label,
                    attempt + 1,
                    err,
                    delay,
                )
                if self.retry_note is not None:
                    why = f"the server said {err.status}" if err.status else "no answer"
                    self.retry_note(
                        f"Attempt {attempt + 1} of {self._max_retries + 1} failed ({why}); "
                        f"trying again in {delay:.0f} s…"
                    )
                if token.wait(delay):
                    raise LlmCancelledError("cancelled while waiting to retry") from err
                attempt += 1

    def _attempt(
        self,
        request: SummaryRequest,
        on_text: Callable[[str], None] | None,
        token: CancelToken,
        emitted: list[bool],
        deadline: float,
    ) -> SummaryResult:
        url = self._endpoint()
        body = orjson.dumps(self._body(request))
        headers = {**self._common_headers(), **self._headers(request), **self._extra_headers}
        logger.debug(
            "%s: POST %s model=%s kind=%s (%d bytes)",
            self.provider_label,
            redact(url),
            self.model,
            request.kind,
            len(body),
        )
        connection = _ConnectionPhase()
        http_request = self._client.build_request(
            "POST", url, content=body, headers=headers, extensions={"trace": connection.trace}
        )
        items: queue.Queue[_Item] = queue.Queue()
        stop = threading.Event()
        client = self._client

        def worker() -> None:
            try:
                response = client.send(http_request, stream=True)
            except Exception as exc:
                items.put(_Item("error", exc))
                return
            try:
                items.put(_Item("head", response))
                if response.status_code >= 400:
                    data = bytearray()
                    for chunk in response.iter_bytes():
                        data.extend(chunk)
                        if len(data) >= _MAX_ERROR_BODY or stop.is_set():
                            break
                    items.put(_Item("body", bytes(data[:_MAX_ERROR_BODY])))
                    return
                for chunk in response.iter_bytes():
                    if stop.is_set():
                        return
                    items.put(_Item("chunk", chunk))
                items.put(_Item("end"))
            except Exception as exc:
                items.put(_Item("error", exc, after_head=True))
            finally:
                try:
                    response.close()
                except Exception:  # pragma: no cover - best effort
                    logger.debug("closing the response failed", exc_info=True)

        remove_callback = token.add_callback(lambda: items.put(_Item("cancel")))
        thread = threading.Thread(target=worker, name="session-studio-llm-http", daemon=True)
        thread.start()
        handler = self._stream_handler(request)
        decoder = SseDecoder()
        response: httpx.Response | None = None
        limits = self.limits
        received = 0
        text_chars = 0
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    raise self._deadline_error(url)
                try:
                    item = items.get(timeout=min(deadline - now, limits.idle_timeout_s))
                except queue.Empty:
                    if time.monotonic() >= deadline:
                        raise self._deadline_error(url) from None
                    if connection.connecting:  # the idle timeout ran out before a connection was made
                        raise self._connect_error(
                            url, f"{limits.idle_timeout_s:g}", "raise the idle timeout (--idle-timeout)"
                        ) from None
                    raise self._idle_error(url, after_head=response is not None) from None
                if token.cancelled or item.kind == "cancel":
                    raise LlmCancelledError("cancelled by the caller")
                if item.kind == "error":
                    raise self._transport_error(item.payload, after_head=item.after_head, url=url)
                if item.kind == "head":
                    response = item.payload
                    if response is not None and response.status_code < 400:
                        logger.debug("%s: HTTP %d, streaming", self.provider_label, response.status_code)
                    continue
                if item.kind == "body":
                    assert response is not None
                    raise self._status_error(response, item.payload, url)
                if item.kind == "chunk":
                    received += len(item.payload)
                    if received > limits.max_response_bytes:
                        raise self._too_large(url, f"more than {limits.max_response_bytes:,} bytes")
                events = decoder.feed(item.payload) if item.kind == "chunk" else decoder.close()
                for event in events:
                    delta = handler.handle(event)
                    if delta:
                        text_chars += len(delta)
                        if text_chars > limits.max_summary_chars:
                            raise self._too_large(
                                url, f"a summary longer than {limits.max_summary_chars:,} characters"
                            )
                        emitted[0] = True
                        if on_text is not None:
                            on_text(delta)
                    if token.cancelled:
                        raise LlmCancelledError("cancelled by the caller")
                    if handler.done:
                        break
                if handler.done or item.kind == "end":
                    result = handler.finish()
                    logger.debug(
                        "%s: done, stop_reason=%s, %d chars, usage=%s",
                        self.provider_label,
                        result.stop_reason,
                        len(result.text),
                        result.usage,
                    )
                    return result
        finally:
            stop.set()
            remove_callback()

    def _deadline_error(self, url: str) -> LlmTimeoutError:
        safe_url = redact(url)
        seconds = f"{self.limits.deadline_s:g}"
        return LlmTimeoutError(
            f"{self.provider_label}: no complete answer from {safe_url} within the {seconds} s deadline",
            user_message=(
                f"No complete answer from {safe_url} within {seconds} s (the overall deadline): the "
                "server is too slow or never finishes. Raise the deadline (--timeout) or use another server."
            ),
            provider=self.provider_label,
        )

    def _idle_error(self, url: str, *, after_head: bool) -> LlmTimeoutError:
        safe_url = redact(url)
        seconds = f"{self.limits.idle_timeout_s:g}"
        phase = "the stream stalled" if after_head else "no answer"
        return LlmTimeoutError(
            f"{self.provider_label}: {phase} for {seconds} s at {safe_url}",
            user_message=(
                f"{safe_url} sent nothing for {seconds} s ({phase}). Check that the server is running, "
                "or raise the idle timeout (--idle-timeout)."
            ),
            provider=self.provider_label,
        )

    def _connect_error(
        self, url: str, seconds: str, advice: str | None = None, *, detail: str | None = None
    ) -> LlmTimeoutError:
        safe_url = redact(url)
        more = f", or {advice}" if advice else ""
        return LlmTimeoutError(
            f"{self.provider_label}: no connection to {safe_url} within {seconds} s"
            + (f": {detail}" if detail else ""),
            user_message=(
                f"Could not connect to {safe_url} within {seconds} s. Check that the server is running "
                f"and reachable{more}."
            ),
            provider=self.provider_label,
        )

    def _too_large(self, url: str, what: str) -> LlmResponseTooLargeError:
        safe_url = redact(url)
        return LlmResponseTooLargeError(
            f"{self.provider_label}: {safe_url} sent {what}",
            user_message=(
                f"The server at {safe_url} sent {what}, beyond the limit for a summary: it was stopped "
                "and nothing was used."
            ),
            provider=self.provider_label,
        )

    def _status_error(self, response: httpx.Response, body: bytes, url: str) -> LlmError:
        status = response.status_code
        message, kind = self._error_from_body(status, body)
        retry_after = parse_retry_after(response.headers)
        err = error_for_message(
            message,
            provider=self.provider_label,
            status=status,
            kind=kind,
            retry_after=retry_after,
            key_hint=self._key_hint,
            url=url,
        )
        logger.info("%s (from %s)", err, redact(url))  # err names the provider and status already
        return err

    def _transport_error(self, exc: object, *, after_head: bool, url: str) -> LlmError:
        safe_url = redact(url)
        detail = redact(f"{type(exc).__name__}: {exc}")  # for the log and the folded details
        said = transport_cause(exc)  # for the person reading the message
        if isinstance(exc, LlmError):
            return exc
        if isinstance(exc, httpx.ConnectTimeout):
            return self._connect_error(url, f"{self.limits.connect_timeout_s:g}", detail=detail)
        if isinstance(exc, httpx.TimeoutException):
            # httpx's read/write/pool timeouts are the idle timeout (see __init__): the same error as
            # our own idle watchdog, whichever of the two notices the silence first
            return self._idle_error(url, after_head=after_head)
        if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
            return LlmConfigError(
                f"{self.provider_label}: bad URL {safe_url}: {detail}",
                user_message=f"The base URL cannot be used ({said}): check it in the provider settings.",
                provider=self.provider_label,
            )
        if after_head:
            return LlmProtocolError(
                f"{self.provider_label}: the stream from {safe_url} broke off: {detail}",
                user_message=(
                    f"The server's answer broke off in the middle ({said}). Try again; if it keeps "
                    "happening, check the server or proxy."
                ),
                provider=self.provider_label,
            )
        if isinstance(exc, httpx.HTTPError):
            return LlmConnectionError(
                f"{self.provider_label}: cannot talk to {safe_url}: {detail}",
                user_message=(
                    f"Could not get an answer from {safe_url} ({said}). Check the base URL, that the "
                    "server is running, and your network."
                ),
                provider=self.provider_label,
            )
        return LlmConnectionError(
            f"{self.provider_label}: request to {safe_url} failed: {detail}",
            user_message=f"The request to {safe_url} failed ({said}).",
            provider=self.provider_label,
        )


def json_event(data: str, provider: str) -> Any:
    """Parse an event's JSON payload or raise :class:`LlmProtocolError`."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        snippet = redact(data[:120])
        raise LlmProtocolError(
            f"{provider}: invalid JSON in the event stream: {snippet!r}",
            user_message=(
                "The server sent something that is not a valid event stream: check that the base URL "
                "points to the right API (OpenAI-compatible /v1 or Anthropic)."
            ),
            provider=provider,
        ) from exc
