"""Core types shared by all summarizers: request/result records, cancellation, the protocol."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from session_studio.llm.errors import LlmCancelledError
from session_studio.llm.limits import DEFAULT_DEADLINE_S, DEFAULT_IDLE_TIMEOUT_S

__all__ = [
    "SUMMARY_KINDS",
    "CancelToken",
    "RequestLimits",
    "Summarizer",
    "SummaryKind",
    "SummaryRequest",
    "SummaryResult",
    "TextCallback",
]

logger = logging.getLogger(__name__)

SummaryKind = Literal["history", "update", "turn_prefix", "branch"]
SUMMARY_KINDS: tuple[SummaryKind, ...] = ("history", "update", "turn_prefix", "branch")

TextCallback = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One summarization call, framed exactly as pi frames it (see :mod:`session_studio.llm.requests`).

    ``kind`` selects the prompt family: ``history`` (initial), ``update`` (with a previous summary),
    ``turn_prefix`` (first part of a split turn) or ``branch`` (abandoned ``/tree`` branch).
    ``max_tokens`` is the output cap pi would send (``None`` = let the provider decide);
    ``reasoning`` the thinking level to request (``None`` = no reasoning option).
    """

    kind: SummaryKind
    system_prompt: str
    prompt_text: str
    max_tokens: int | None
    reasoning: str | None


DEFAULT_CONNECT_TIMEOUT_S: Final[float] = 10.0
#: streamed events carry ~200 bytes of framing per token; 64 MiB is far above any model's output
DEFAULT_MAX_RESPONSE_BYTES: Final[int] = 64 * 1024 * 1024
#: ~250k tokens of summary, more than any model writes in one answer
DEFAULT_MAX_SUMMARY_CHARS: Final[int] = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """How long and how much one summary call may take; a server can never keep a call running.

    ``deadline_s`` bounds the whole call (connection, retries and the full stream);
    ``idle_timeout_s`` the silence between two pieces of the answer (and waiting for the first);
    ``max_response_bytes`` the bytes read from the server, ``max_summary_chars`` the summary text.
    Crossing a limit ends the call with :class:`~session_studio.llm.errors.LlmTimeoutError` or
    :class:`~session_studio.llm.errors.LlmResponseTooLargeError`.
    """

    deadline_s: float = DEFAULT_DEADLINE_S
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS

    def __post_init__(self) -> None:
        for name in (
            "deadline_s",
            "idle_timeout_s",
            "connect_timeout_s",
            "max_response_bytes",
            "max_summary_chars",
        ):
            value = getattr(self, name)
            if not value > 0:  # also rejects NaN
                raise ValueError(f"{name} must be positive, not {value!r}")


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What a summarizer produced.

    ``text`` is the summary (text blocks joined with ``"\\n"``, thinking ignored, as pi does);
    ``stop_reason`` is pi's normalized reason (``stop``, ``length``, ``toolUse``; ``error`` never
    reaches here, it raises :class:`~session_studio.llm.errors.LlmSummaryError`).
    ``usage`` uses pi's field names: ``input``, ``output``, ``cacheRead``, ``cacheWrite``,
    ``totalTokens`` (``None`` if the provider reported nothing). ``model`` is the model that
    answered, as reported by the server when it said so.
    """

    text: str
    stop_reason: str
    usage: dict[str, int] | None
    model: str | None


class CancelToken:
    """A thread-safe cancellation flag.

    ``cancel()`` may be called from any thread (e.g. the UI thread); the worker running the
    summary observes it between stream chunks and while waiting (retries, connection setup).
    Callbacks registered with :meth:`add_callback` run once, in the cancelling thread.
    """

    __slots__ = ("_callbacks", "_event", "_lock")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        """Request cancellation (idempotent)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
            self._callbacks.clear()
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("cancel callback failed")

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        """Raise :class:`LlmCancelledError` if cancellation was requested."""
        if self._event.is_set():
            raise LlmCancelledError("cancelled by the caller")

    def wait(self, timeout: float | None) -> bool:
        """Sleep up to ``timeout`` seconds, waking early on cancellation; return :attr:`cancelled`."""
        return self._event.wait(timeout)

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` on cancellation (immediately if already cancelled); return a remover."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None


@runtime_checkable
class Summarizer(Protocol):
    """Anything that turns a :class:`SummaryRequest` into a :class:`SummaryResult`.

    Implementations are synchronous and meant to run in a worker thread. ``on_text`` receives
    the text deltas as they stream (they concatenate to ``result.text``), called in the thread
    that called ``summarize``. Failures raise :class:`~session_studio.llm.errors.LlmError`
    subclasses; cancellation raises :class:`~session_studio.llm.errors.LlmCancelledError`.
    """

    def summarize(
        self,
        request: SummaryRequest,
        *,
        on_text: Callable[[str], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> SummaryResult: ...
