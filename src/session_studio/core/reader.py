"""Bytes → JSON values, with pi's exact line rules and a load report.

pi (`loadEntriesFromFile`) decodes the file as UTF-8 with replacement, splits on
`"\\n"` only, skips lines that are blank under JavaScript's `trim`, skips lines
`JSON.parse` rejects and values that are falsy, and keeps everything else, even
numbers or arrays. We do the same per line from the raw bytes (splitting bytes on
0x0A is equivalent: that byte never occurs inside a UTF-8 sequence), remember each
value's line number and byte span, and note in a :class:`LoadIssue` every line pi
drops silently or that looks damaged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from .jsvalue import js_trim_is_empty

__all__ = ["CHUNK_SIZE", "LoadIssue", "RawValue", "iter_values", "read_values"]

CHUNK_SIZE = 8 * 1024 * 1024
_SNIPPET = 80


@dataclass(frozen=True, slots=True)
class LoadIssue:
    """One line pi drops, or that is suspicious. `line` is 1-based."""

    line: int
    offset: int
    kind: str
    message: str
    dropped: bool

    def describe(self) -> str:
        what = "dropped" if self.dropped else "kept"
        return f"line {self.line}: {self.message} ({what})"


@dataclass(slots=True)
class RawValue:
    """A value pi keeps: the parsed JSON plus where it came from."""

    line: int
    offset: int
    length: int
    value: Any


def _snippet(b: bytes) -> str:
    text = b[:_SNIPPET].decode("utf-8", "replace")
    return text + ("…" if len(b) > _SNIPPET else "")


def _is_falsy(v: Any) -> bool:
    return v is None or v is False or v == "" or (type(v) in (int, float) and v == 0)


def parse_line(raw: bytes) -> tuple[Any, str | None, str | None]:
    """Parse one line as pi would. Returns (value or None, issue kind, issue message)."""
    try:
        return orjson.loads(raw), None, None
    except orjson.JSONDecodeError:
        pass
    try:
        text = raw.decode("utf-8")
        bad_utf8 = False
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
        bad_utf8 = True
    if js_trim_is_empty(text):
        return None, "blank", "blank line"
    from .jsparse import js_json_parse  # the slow exact parser, only for what orjson refuses

    try:
        value = js_json_parse(text)
    except (ValueError, RecursionError):
        if text.startswith("\ufeff"):
            return None, "bom", "line starts with a byte order mark; JSON.parse rejects it"
        kind = "malformed"
        msg = f"not valid JSON: {_snippet(raw)!r}"
        if bad_utf8:
            msg = "invalid UTF-8 and " + msg
        return None, kind, msg
    if bad_utf8:
        return value, "invalid_utf8", "invalid UTF-8 bytes (read as U+FFFD, as pi does)"
    return value, None, None


def iter_values(
    fh: BinaryIO,
    issues: list[LoadIssue],
    start_offset: int = 0,
    start_line: int = 1,
    end_offset: int | None = None,
) -> Iterator[RawValue]:
    """Yield every value pi keeps, reading `fh` from `start_offset` (to `end_offset`) in chunks.

    `end_offset` must be just after a newline (or the end of the file).
    """
    fh.seek(start_offset)
    offset = start_offset
    line_no = start_line
    pending = b""
    pending_offset = offset
    remaining = -1 if end_offset is None else end_offset - start_offset
    while True:
        if remaining == 0:
            break
        chunk = fh.read(CHUNK_SIZE if remaining < 0 else min(CHUNK_SIZE, remaining))
        if not chunk:
            break
        if remaining > 0:
            remaining -= len(chunk)
        buf = pending + chunk if pending else chunk
        base = pending_offset
        pos = 0
        find = buf.find
        while True:
            nl = find(b"\n", pos)
            if nl < 0:
                break
            raw = buf[pos:nl]
            rv = _one(raw, line_no, base + pos, issues)
            if rv is not None:
                yield rv
            line_no += 1
            pos = nl + 1
        pending = buf[pos:]
        pending_offset = base + pos
    if pending:
        rv = _one(pending, line_no, pending_offset, issues)
        issues.append(
            LoadIssue(
                line_no,
                pending_offset,
                "no_final_newline",
                "last line has no newline at the end (a crashed writer?); pi 0.80.2 would glue "
                "its next append onto it",
                dropped=rv is None,
            )
        )
        if rv is not None:
            yield rv


def _one(raw: bytes, line_no: int, offset: int, issues: list[LoadIssue]) -> RawValue | None:
    if raw.endswith(b"\r"):
        issues.append(LoadIssue(line_no, offset, "crlf", "line ends with \\r (CRLF); harmless to pi", False))
    if not raw:
        issues.append(LoadIssue(line_no, offset, "blank", "empty line", True))
        return None
    value, kind, msg = parse_line(raw)
    if kind is not None and value is None:
        issues.append(LoadIssue(line_no, offset, kind, msg or kind, True))
        return None
    if kind is not None:
        issues.append(LoadIssue(line_no, offset, kind, msg or kind, False))
    if _is_falsy(value):
        issues.append(
            LoadIssue(line_no, offset, "falsy", f"JSON value {_snippet(raw)!r} is falsy; pi skips it", True)
        )
        return None
    return RawValue(line_no, offset, len(raw), value)


def read_values(path: str | os.PathLike[str]) -> tuple[list[RawValue], list[LoadIssue], int]:
    """Read a whole file: the kept values, the issues, and the byte size read."""
    issues: list[LoadIssue] = []
    with open(path, "rb") as fh:
        values = list(iter_values(fh, issues))
        size = fh.tell()
    return values, issues, size
