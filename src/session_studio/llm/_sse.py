"""An incremental Server-Sent Events decoder (WHATWG event-stream rules, UTF-8)."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from session_studio.llm.errors import LlmProtocolError

__all__ = ["SseDecoder", "SseEvent"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: ``event`` is the ``event:`` field (``None`` if absent), ``data`` the joined data."""

    event: str | None
    data: str


class SseDecoder:
    """Feed raw bytes as they arrive; get complete events back.

    Lines end with CRLF, LF or CR; a blank line dispatches the pending event; ``:`` starts a
    comment; unknown fields are ignored. Invalid UTF-8 raises :class:`LlmProtocolError`.
    """

    __slots__ = ("_buffer", "_data", "_decoder", "_event", "_has_fields", "_parts")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buffer = ""
        # pieces of a long unterminated line, joined only when its end arrives (linear time
        # for a server that sends megabytes without a line break)
        self._parts: list[str] = []
        self._event: str | None = None
        self._data: list[str] = []
        self._has_fields = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Consume ``chunk`` and return the events it completed."""
        try:
            text = self._decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise LlmProtocolError(f"the event stream is not valid UTF-8 ({exc.reason})") from exc
        if "\n" not in text and "\r" not in text and not self._buffer.endswith("\r"):
            if text:
                self._parts.append(text)
            return []
        return self._consume(self._pending() + text, final=False)

    def _pending(self) -> str:
        if self._parts:
            self._buffer += "".join(self._parts)
            self._parts.clear()
        return self._buffer

    def close(self) -> list[SseEvent]:
        """Flush at end of stream (an unterminated last event is dispatched, as pi-ai does)."""
        try:
            text = self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise LlmProtocolError(f"the event stream is not valid UTF-8 ({exc.reason})") from exc
        events = self._consume(self._pending() + text, final=True)
        if self._buffer:
            event = self._line(self._buffer)
            self._buffer = ""
            if event is not None:
                events.append(event)
        event = self._dispatch()
        if event is not None:
            events.append(event)
        return events

    def _consume(self, text: str, *, final: bool) -> list[SseEvent]:
        events: list[SseEvent] = []
        start = 0
        length = len(text)
        while start < length:
            cr = text.find("\r", start)
            lf = text.find("\n", start)
            if cr < 0 and lf < 0:
                break
            if cr >= 0 and (lf < 0 or cr < lf):
                if cr + 1 == length and not final:
                    break  # a CR at the end of the chunk may be the first half of CRLF
                end, nxt = cr, (cr + 2 if cr + 1 < length and text[cr + 1] == "\n" else cr + 1)
            else:
                end, nxt = lf, lf + 1
            event = self._line(text[start:end])
            if event is not None:
                events.append(event)
            start = nxt
        self._buffer = text[start:]
        return events

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
            self._has_fields = True
        elif name == "data":
            self._data.append(value)
            self._has_fields = True
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._has_fields:
            return None
        event = SseEvent(self._event, "\n".join(self._data))
        self._event = None
        self._data = []
        self._has_fields = False
        return event
