"""Find the entries whose content holds a text: every string in the entry (a message's text, a tool
call's arguments, a tool's output, a summary), not only the first characters a tree row shows.

A big session's values are not in memory, so its file is read again, a few MB at a time. Most
lines cannot hold the text: a line is parsed only when its bytes hold the text's longest run of
plain ASCII (printable, not ``"`` or ``\\``: what JSON writes as itself), compared with ASCII
letters lowercased; the parsed entry then matches when one of its strings, lowercased, holds the
lowercased text (object keys are not content: "role" or "text" would match every message). A text
with no such run (Cyrillic, Greek, accented words) is looked for by its first three characters,
each in either case, as JSON writes them (pi writes non-ASCII characters as themselves, quotes
and control characters escaped), and one made only of quotes, backslashes or control characters
parses every line. (A character whose lowercase is in another script, like the Kelvin sign's "k",
is not found by that lowercase.)
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from .errors import LoadCancelled
from .file_search_memo import FileSearchMemo, file_identity
from .fingerprint import open_regular
from .priority import yield_to_foreground
from .reader import parse_line
from .session import Session

__all__ = [
    "READ_BYTES",
    "content_matches",
    "file_holds_text",
    "holds_text",
    "match_excerpt",
    "prefilter_needles",
]

#: bytes of the file read (and lowercased) at a time: twice this is held meanwhile (8 MB raised the
#: window's peak on the 1 GB session by ~11 MB, and was slower: 3.0 s against 2.6 s)
READ_BYTES = 2 * 1024 * 1024
#: a text without plain ASCII is looked for by this many of its first characters, in every case
PREFILTER_CHARS = 3


def prefilter_needles(query: str) -> list[bytes] | None:
    """Byte strings one of which every line holding ``query`` (lowercased) contains once its ASCII
    letters are lowercased; None when no such bytes are known (every line is parsed)."""
    runs: list[str] = []
    run: list[str] = []
    for ch in query + "\0":
        if " " <= ch <= "~" and ch not in '"\\':
            run.append(ch)
        elif run:
            runs.append("".join(run))
            run = []
    if runs:
        return [max(runs, key=len).lower().encode("ascii")]
    if any(ord(ch) > 0x7F for ch in query) and not any("\ud800" <= ch <= "\udfff" for ch in query):
        # the text's first characters in every case (each letter's lower and upper form: 8 forms
        # at most), as JSON.stringify writes them: quotes, backslashes and control characters escaped
        head = [sorted({ch, ch.lower(), ch.upper()}) for ch in query[:PREFILTER_CHARS]]
        forms = {"".join(chars) for chars in itertools.product(*head)}
        return sorted({json.dumps(f, ensure_ascii=False)[1:-1].encode("utf-8").lower() for f in forms})
    return None


def holds_text(value: Any, needle: str) -> bool:
    """Whether a string of ``value`` (an entry), lowercased, holds ``needle`` (lowercase)."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            if needle in v.lower():
                return True
        elif t is dict:
            stack.extend(v.values())
        elif t is list:
            stack.extend(v)
    return False


def match_excerpt(value: Any, needle: str, width: int = 80) -> str | None:
    """The first string of ``value`` (in the entry's own order) that holds ``needle`` (lowercase),
    as about ``width`` characters around the match, whitespace runs as one space, a cut end as
    "…"; None when no string holds it."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            at = v.lower().find(needle)
            if at >= 0:
                return _excerpt(v, at, len(needle), width)
        elif t is dict:
            stack.extend(reversed(v.values()))
        elif t is list:
            stack.extend(reversed(v))
    return None


def _excerpt(text: str, at: int, length: int, width: int) -> str:
    before = max(0, (width - length) // 3)
    start = max(0, at - before)
    end = min(len(text), start + max(width, length))
    part = " ".join(text[start:end].split())
    return ("…" if start else "") + part + ("…" if end < len(text) else "")


def content_matches(
    session: Session,
    query: str,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    start: int = 0,
) -> list[int]:
    """The records from ``start`` on (in file order) whose entry holds ``query`` in one of its
    strings, upper and lower case alike. ``progress(done, total)`` reports bytes read;
    ``cancelled()`` returning True stops with LoadCancelled."""
    needle = query.lower()
    if not needle:
        return []
    # the values as the index holds them: a migration's patches applied, previews' entries included
    kept = session.records.values
    if kept is not None:
        return [i for i in range(start, len(kept)) if holds_text(kept[i], needle)]
    hits = []
    for batch in _candidates(session, prefilter_needles(needle), cancelled, progress, start):
        for i, value in zip(batch, session.values(batch), strict=True):  # (one read for nearby lines)
            if holds_text(value, needle):
                hits.append(i)
    return hits


def _candidates(
    session: Session,
    needles: list[bytes] | None,
    cancelled: Callable[[], bool] | None,
    progress: Callable[[int, int], None] | None,
    start: int,
) -> Iterator[list[int]]:
    """The records from ``start`` on whose line may hold the text (all of them without needles), in
    file order, a read's worth at a time."""
    t = session.records
    in_memory = t.virtual_values
    # entries only in memory (a preview's) come after the file's, with no line of their own
    n = min(in_memory, default=len(t))
    if start < n:
        yield from _file_candidates(session, start, n, needles, cancelled, progress)
    yield sorted(k for k in in_memory if k >= max(n, start))


def _file_candidates(
    session: Session,
    first: int,
    n: int,
    needles: list[bytes] | None,
    cancelled: Callable[[], bool] | None,
    progress: Callable[[int, int], None] | None,
) -> Iterator[list[int]]:
    """_candidates of the records ``first`` to ``n - 1``, each a line of the file."""
    offsets, lengths = session.records.offsets, session.records.lengths
    start, end = offsets[first], offsets[n - 1] + lengths[n - 1]
    total = end - start
    with open_regular(session.path) as fh:
        a = first
        while a < n:
            if cancelled is not None and cancelled():
                raise LoadCancelled("the search was cancelled")
            yield_to_foreground()
            # records a..b-1: about READ_BYTES of lines (one record at least, however long)
            b = bisect.bisect_left(offsets, offsets[a] + READ_BYTES, a + 1, n)
            if needles is None:
                yield list(range(a, b))
            else:
                base = offsets[a]
                chunk = os.pread(fh.fileno(), offsets[b - 1] + lengths[b - 1] - base, base)
                found = []
                for line in _line_starts_holding(chunk, needles):
                    k = bisect.bisect_left(offsets, base + line, a, b)
                    if k < b and offsets[k] == base + line:  # a record's line (not a damaged one)
                        found.append(k)
                yield found
            if progress is not None:
                progress(offsets[b - 1] + lengths[b - 1] - start, total)
            a = b


def file_holds_text(
    path: str,
    query: str,
    cancelled: Callable[[], bool] | None = None,
    memo: FileSearchMemo | None = None,
) -> bool:
    """Whether a line of the session file at ``path`` (its header included) holds ``query`` in one of
    its strings, upper and lower case alike, as content_matches finds it; the file is read until
    the first such line, without indexing it (the session browser asks it of every session).
    ``cancelled()`` returning True stops with LoadCancelled. With a ``memo``, a file that did not
    change since an earlier answer proves this one is not read, and each answer read is kept."""
    needle = query.lower()
    if not needle:
        return False
    with open_regular(path) as fh:
        before = file_identity(os.fstat(fh.fileno()))
        known = None if memo is None else memo.known(path, before, needle)
        if known is not None:
            return known
        holds = _reader_holds_text(fh, needle, cancelled)
        # kept only for bytes that did not change while they were read (pi appends meanwhile)
        if memo is not None and file_identity(os.fstat(fh.fileno())) == before:
            memo.remember(path, before, needle, holds)
        return holds


def _reader_holds_text(fh: BinaryIO, needle: str, cancelled: Callable[[], bool] | None) -> bool:
    """file_holds_text of the file ``fh`` reads from its start (``needle``: lowercased)."""
    needles = prefilter_needles(needle)
    carry = b""
    while True:
        if cancelled is not None and cancelled():
            raise LoadCancelled("the search was cancelled")
        yield_to_foreground()
        chunk = fh.read(READ_BYTES)
        data = carry + chunk
        if chunk:
            cut = data.rfind(b"\n") + 1
            data, carry = data[:cut], data[cut:]  # whole lines; the rest comes with the next read
        elif not data:
            return False
        lines = data.split(b"\n") if needles is None else _lines_at(data, _line_starts_holding(data, needles))
        for line in lines:
            value = parse_line(line)[0] if line else None
            if value is not None and holds_text(value, needle):
                return True
        if not chunk:
            return False


def _line_starts_holding(data: bytes, needles: list[bytes]) -> list[int]:
    """Where the lines of ``data`` start whose bytes, ASCII letters lowercased, hold one of
    ``needles`` (a needle never holds a newline: JSON writes it escaped), each once, in order."""
    lowered = data.lower()
    starts: set[int] = set()
    for needle in needles:
        pos = lowered.find(needle)
        while pos >= 0:
            starts.add(data.rfind(b"\n", 0, pos) + 1)
            end = data.find(b"\n", pos)
            pos = -1 if end < 0 else lowered.find(needle, end + 1)  # the next line's match
    return sorted(starts)


def _lines_at(data: bytes, starts: list[int]) -> Iterator[bytes]:
    for start in starts:
        end = data.find(b"\n", start)
        yield data[start : len(data) if end < 0 else end]
