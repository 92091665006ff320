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
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, BinaryIO, Literal, NamedTuple, overload

import orjson

from .fingerprint import open_regular
from .jsvalue import js_trim_is_empty

__all__ = [
    "CHUNK_SIZE",
    "MAX_LINE_BYTES",
    "RUN_BYTES",
    "LineRun",
    "LoadIssue",
    "RawValue",
    "expand_runs",
    "iter_values",
    "parse_line",
    "read_values",
    "snippet",
    "value_of_line",
    "values_of_run",
]

CHUNK_SIZE = 8 * 1024 * 1024
#: the most bytes of complete lines in one LineRun (the compiled loader holds the GIL over a run)
RUN_BYTES = 1024 * 1024
_SNIPPET = 80


class LoadIssue(NamedTuple):
    """One line pi drops, or that is suspicious. `line` is 1-based."""

    line: int
    offset: int
    kind: str
    message: str
    dropped: bool

    def describe(self) -> str:
        what = "dropped" if self.dropped else "kept"
        return f"line {self.line}: {self.message} ({what})"


class RawValue(NamedTuple):
    """A value pi keeps: the parsed JSON plus where it came from."""

    line: int
    offset: int
    length: int
    value: Any


class LineRun(NamedTuple):
    """Complete lines of a chunk, for a consumer that reads them itself (the compiled bulk loader,
    which indexes most lines without building their JSON values): ``chunk[start:end]``, each line
    ending with a newline, the first at file offset `offset` with number `line`. What it means,
    value by value, is :func:`values_of_run`; `issues` is the list its lines' issues go to."""

    chunk: bytes
    start: int
    end: int
    offset: int
    line: int
    issues: list[LoadIssue]


def snippet(b: bytes) -> str:
    """The first bytes of a line as quoted in load-issue messages."""
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
        msg = f"not valid JSON: {snippet(raw)!r}"
        if bad_utf8:
            msg = "invalid UTF-8 and " + msg
        return None, kind, msg
    if bad_utf8:
        return value, "invalid_utf8", "invalid UTF-8 bytes (read as U+FFFD, as pi does)"
    return value, None, None


#: The longest line read into memory. pi 0.80.2 accumulates a line in one JavaScript string
#: and fails past 2**29-24 characters; the longest lines pi writes in practice (a compaction
#: summary with its file lists) are a few MB, 31 MB in our stress tests. Longer lines are
#: reported with their size and line number and skipped in bounded memory.
MAX_LINE_BYTES = 128 * 1024 * 1024
#: A line longer than this whose first byte cannot start JSON is skipped without holding it
#: (JSON.parse would reject it whatever follows): a sparse file of zeros costs no memory.
HOPELESS_CHECK_BYTES = 1024 * 1024
_JSON_START = frozenset(b'{["-0123456789tfn')
_JSON_WS = frozenset(b" \t\r\n")


def _hopeless(first: bytes) -> bool:
    """True if a line starting with `first` is certainly not JSON (nor blank under trim)."""
    for byte in first:
        if byte in _JSON_WS:
            continue
        # 0x0B, 0x0C and bytes >= 0x80 may be JavaScript whitespace: leave those to the parser
        return byte not in _JSON_START and byte not in (0x0B, 0x0C) and byte < 0x80
    return False


def _skipped_issue(line_no: int, offset: int, size: int, head: bytes, too_long: bool) -> LoadIssue:
    if too_long:
        return LoadIssue(
            line_no,
            offset,
            "too_long",
            f"line is {size:,} bytes, more than Session Studio reads as one line "
            f"({MAX_LINE_BYTES:,} bytes; pi holds a line as one string and fails past 2^29-24 "
            "characters); skipped",
            True,
        )
    return LoadIssue(
        line_no,
        offset,
        "malformed",
        f"not valid JSON: a line of {size:,} bytes starting {snippet(head)!r}; skipped without reading it all",
        True,
    )


@overload
def iter_values(
    fh: BinaryIO,
    issues: list[LoadIssue],
    start_offset: int = 0,
    start_line: int = 1,
    end_offset: int | None = None,
    lines_read: list[int] | None = None,
    runs: Literal[False] = False,
) -> Iterator[RawValue]: ...


@overload
def iter_values(
    fh: BinaryIO,
    issues: list[LoadIssue],
    start_offset: int = 0,
    start_line: int = 1,
    end_offset: int | None = None,
    lines_read: list[int] | None = None,
    *,
    runs: bool,
) -> Iterator[RawValue | LineRun]: ...


def iter_values(
    fh: BinaryIO,
    issues: list[LoadIssue],
    start_offset: int = 0,
    start_line: int = 1,
    end_offset: int | None = None,
    lines_read: list[int] | None = None,
    runs: bool = False,
) -> Iterator[RawValue | LineRun]:
    """Yield every value pi keeps, reading `fh` from `start_offset` (to `end_offset`) in chunks.

    `end_offset` must be just after a newline (or the end of the file). Memory stays
    bounded by MAX_LINE_BYTES plus a chunk whatever the file holds. `lines_read` gets the
    number of newlines read appended once the values are exhausted. `runs`: once a first value
    was yielded, the complete lines of each chunk come as :class:`LineRun` items (of at most
    RUN_BYTES) instead of their values (see expand_runs).
    """
    fh.seek(start_offset)
    line_no = start_line
    parts: list[bytes] = []  # the unfinished line, in pieces
    parts_len = 0
    line_offset = start_offset  # where the unfinished line starts
    skipping: tuple[bytes, bool] | None = None  # (its first bytes, too long?) while skipping a line
    remaining = -1 if end_offset is None else end_offset - start_offset
    yielded = False  # runs: the first value is yielded on its own
    while remaining != 0:
        if skipping is not None:
            hole = _hole_length(fh, line_offset + parts_len, remaining)
            parts_len += hole
            if remaining > 0:
                remaining -= hole
            if remaining == 0:
                break
        chunk = fh.read(CHUNK_SIZE if remaining < 0 else min(CHUNK_SIZE, remaining))
        if not chunk:
            break
        if remaining > 0:
            remaining -= len(chunk)
        chunk_offset = line_offset + parts_len
        pos = 0
        nl = chunk.find(b"\n")
        if skipping is not None:
            if nl < 0:
                parts_len += len(chunk)
                continue
            issues.append(_skipped_issue(line_no, line_offset, parts_len + nl, *skipping))
            skipping = None
            line_no += 1
            pos = nl + 1
            parts, parts_len, line_offset = [], 0, chunk_offset + pos
            nl = chunk.find(b"\n", pos)
        elif nl >= 0 and parts:
            raw = b"".join(parts) + chunk[:nl]
            rv = value_of_line(raw, line_no, line_offset, issues)
            if rv is not None:
                yielded = True
                yield rv
            line_no += 1
            pos = nl + 1
            parts, parts_len, line_offset = [], 0, chunk_offset + pos
            nl = chunk.find(b"\n", pos)
        if nl >= 0:  # the chunk's complete lines, a run of at most RUN_BYTES at a time
            last = chunk.rfind(b"\n") + 1
            while pos < last:
                if runs and not yielded:
                    # the first value alone (the header, to the caller), read line by line: the
                    # lines after it go to the run's reader (parsing the whole first run here
                    # parsed the first MB of a file, or all of a refresh's appended lines, ~20 ms)
                    end = chunk.find(b"\n", pos) + 1
                    for rv in values_of_run(LineRun(chunk, pos, end, chunk_offset + pos, line_no, issues)):
                        yielded = True
                        yield rv
                    line_no += 1
                    pos = end
                    continue
                end = last if last - pos <= RUN_BYTES else chunk.find(b"\n", pos + RUN_BYTES - 1) + 1
                run = LineRun(chunk, pos, end, chunk_offset + pos, line_no, issues)
                if not runs:
                    line_no = yield from values_of_run(run)
                else:
                    yield run
                    line_no += _count_newlines(chunk, pos, end)
                pos = end
        if not parts:
            line_offset = chunk_offset + pos
        if pos < len(chunk):
            parts.append(chunk[pos:] if pos else chunk)
            parts_len += len(chunk) - pos
            head = parts[0][:_SNIPPET]
            too_long = parts_len > MAX_LINE_BYTES
            if too_long or (parts_len > HOPELESS_CHECK_BYTES and _hopeless(parts[0][:4096])):
                skipping = (head, too_long)
                parts = []
    if lines_read is not None:
        lines_read.append(line_no - start_line)
    if skipping is not None:
        issues.append(_skipped_issue(line_no, line_offset, parts_len, *skipping))
        issues.append(_no_newline_issue(line_no, line_offset, True))
    elif parts:
        rv = value_of_line(b"".join(parts), line_no, line_offset, issues)
        issues.append(_no_newline_issue(line_no, line_offset, rv is None))
        if rv is not None:
            yield rv


def _newline_counter() -> Callable[[bytes, int, int], int]:
    """The compiled newline count where `pip install` built it (memchr), else bytes.count."""
    try:
        from ._bulkindex import count_newlines
    except ImportError:
        return lambda data, start, end: data.count(b"\n", start, end)
    counter: Callable[[bytes, int, int], int] = count_newlines
    return counter


_count_newlines = _newline_counter()


def values_of_run(run: LineRun) -> Generator[RawValue, None, int]:
    """The values pi keeps of a run's lines, in order (their issues noted in ``run.issues``);
    returns the number of the line after the run."""
    chunk, pos, end, line_no, issues = run.chunk, run.start, run.end, run.line, run.issues
    base = run.offset - run.start  # the file offset of chunk[0]
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    while pos < end:
        nl = chunk.find(b"\n", pos, end)
        raw = chunk[pos:nl]
        # the common case inline: an object on a line of its own (no issue to note; anything else
        # goes through value_of_line)
        value = None
        if nl > pos and chunk[nl - 1] != 13:
            try:
                value = loads(raw)
            except decode_error:
                value = None
        if type(value) is dict:
            yield RawValue(line_no, base + pos, nl - pos, value)
        else:
            rv = value_of_line(raw, line_no, base + pos, issues)
            if rv is not None:
                yield rv
        line_no += 1
        pos = nl + 1
    return line_no


def expand_runs(values: Iterable[RawValue | LineRun]) -> Iterator[RawValue]:
    """``iter_values(..., runs=True)``'s items as values only (for the consumers that read values)."""
    for item in values:
        if type(item) is LineRun:
            yield from values_of_run(item)
        else:
            assert type(item) is RawValue
            yield item


def _hole_length(fh: BinaryIO, pos: int, remaining: int) -> int:
    """Bytes of a sparse file's hole at `pos` (all zeros, so no newline): skipped without reading."""
    seek_data = getattr(os, "SEEK_DATA", None)
    try:
        fd = fh.fileno()
    except (AttributeError, OSError, ValueError):
        return 0
    if seek_data is None:
        return 0
    try:
        data = os.lseek(fd, pos, seek_data)
    except OSError:  # ENXIO: no data after pos (a hole up to the end), or not supported
        try:
            data = os.fstat(fd).st_size
        except OSError:
            return 0
    hole = max(0, data - pos)
    if remaining >= 0:
        hole = min(hole, remaining)
    if hole:
        fh.seek(pos + hole)
    return hole


def _no_newline_issue(line_no: int, offset: int, dropped: bool) -> LoadIssue:
    return LoadIssue(
        line_no,
        offset,
        "no_final_newline",
        "last line has no newline at the end (a crashed writer?); pi 0.80.2 would glue "
        "its next append onto it, pi 1.6.0 adds the newline when it opens the file",
        dropped=dropped,
    )


def value_of_line(raw: bytes, line_no: int, offset: int, issues: list[LoadIssue]) -> RawValue | None:
    """The value pi keeps of one line (without its newline), None if it drops it: its issues noted."""
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
            LoadIssue(line_no, offset, "falsy", f"JSON value {snippet(raw)!r} is falsy; pi skips it", True)
        )
        return None
    return RawValue(line_no, offset, len(raw), value)


def read_values(path: str | os.PathLike[str]) -> tuple[list[RawValue], list[LoadIssue], int]:
    """Read a whole file: the kept values, the issues, and the byte size read."""
    issues: list[LoadIssue] = []
    with open_regular(os.fspath(path)) as fh:
        values = list(iter_values(fh, issues))
        size = fh.tell()
    return values, issues, size
