"""A cache of the index of big session files, so reopening one is cheap.

pi's files only grow, so a cached index stays valid for the bytes it covers: it
is used when the file's first 64 KiB and the 64 KiB before the cached size are
unchanged, and the lines appended since are indexed with `Session.refresh()`.
The cache holds the index only (offsets, ids, parent ids, types, roles,
timestamps, token estimates and the line numbers and kinds of damaged lines),
never message content: the header is re-read from the file through its byte
span, and the excerpts quoted in load-issue messages are re-read from the lines
they quote. Entries are keyed by the file's path and by a version of the code
that computes the index (a changed estimator never reuses an old index). It lives
in `$XDG_CACHE_HOME/session-studio/index/` (`SESSION_STUDIO_CACHE_DIR` overrides;
`SESSION_STUDIO_NO_INDEX_CACHE=1` disables it).

This module knows nothing of `Session`: it stores and returns plain index columns
(`EntryRecord.facts()` tuples) and the session builds itself from them.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .fingerprint import PROBE_BYTES, open_regular
from .jsvalue import UNDEFINED, JsTypeError
from .reader import LoadIssue, snippet

__all__ = [
    "FORMAT",
    "MIN_CACHED_BYTES",
    "CachedIndex",
    "cache_dir",
    "code_version",
    "load_cached",
    "save_index",
]

logger = logging.getLogger(__name__)

FORMAT = 2
MIN_CACHED_BYTES = 8 * 1024 * 1024
_UNDEF = 0  # stands for `undefined` in fields that otherwise hold only strings or null
_SNIPPET_MARK = "\x00snippet\x00"
#: the modules whose code decides what an index row holds
_INDEXING_MODULES = ("reader.py", "session.py", "tokens.py", "jsvalue.py", "jsparse.py", "migrate.py")


@functools.cache
def code_version() -> str:
    """A hash of the cache format and the code that computes the index."""
    h = hashlib.sha256(f"format {FORMAT}".encode())
    here = Path(__file__).resolve().parent
    for name in _INDEXING_MODULES:
        try:
            h.update((here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class CachedIndex:
    """The index of the first `size` bytes of a session file."""

    size: int
    header_span: tuple[int, int] | None
    header_line: int | None
    source_version: Any
    issues: list[LoadIssue]
    facts: list[tuple[Any, ...]]  # EntryRecord.facts() per record


def cache_dir() -> Path | None:
    if os.environ.get("SESSION_STUDIO_NO_INDEX_CACHE"):
        return None
    base = os.environ.get("SESSION_STUDIO_CACHE_DIR")
    if base:
        return Path(base) / "index"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "session-studio" / "index"


def _cache_file(path: str) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    key = hashlib.sha256(
        code_version().encode() + b"\0" + os.path.realpath(path).encode("utf-8", "surrogateescape")
    ).hexdigest()[:40]
    return d / f"{key}.json"


def _probe(path: str, size: int) -> tuple[str, str]:
    with open_regular(path) as fh:
        head = fh.read(min(PROBE_BYTES, size))
        start = max(0, size - PROBE_BYTES)
        fh.seek(start)
        tail = fh.read(size - start)
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()


def _line_excerpt(fh: Any, offset: int) -> str:
    """The excerpt reader messages quote for the line at `offset` (read from the file)."""
    fh.seek(offset)
    raw = fh.read(256)
    nl = raw.find(b"\n")
    return repr(snippet(raw if nl < 0 else raw[:nl]))


def _enc(v: Any) -> Any:
    if v is UNDEFINED:
        return _UNDEF
    if v is None or type(v) is str:
        return v
    raise ValueError("unusual value")


def _dec(v: Any) -> Any:
    return UNDEFINED if v == _UNDEF and type(v) is int else v


def _row(f: tuple[Any, ...]) -> list[Any]:
    line, offset, length, typ, rid, pid, ts, role, t, u, error = f
    if isinstance(t, JsTypeError):
        tok: Any = str(t)
    elif type(t) is float and math.isnan(t):
        tok = None
    elif type(t) in (int, float):
        tok = t
    else:
        raise ValueError("unusual token value")
    if u is not None and type(u) not in (int, float):
        raise ValueError("unusual usage value")
    err = None if error is None else str(error)
    return [line, offset, length, _enc(typ), _enc(rid), _enc(pid), _enc(ts), _enc(role), tok, u, err]


def _facts(row: list[Any]) -> tuple[Any, ...]:
    line, offset, length, typ, rid, pid, ts, role, tok, usage, err = row
    error = JsTypeError(err) if err is not None else None
    if type(tok) is str:
        tok = error if error is not None else JsTypeError(tok)
    elif tok is None:
        tok = math.nan
    return (line, offset, length, _dec(typ), _dec(rid), _dec(pid), _dec(ts), _dec(role), tok, usage, error)


def save_index(path: str, index: CachedIndex, *, cacheable: bool = True) -> None:
    """Write `index` of `path` to the cache (silently skipped for unusual files)."""
    f = _cache_file(path)
    if f is None or not cacheable or index.header_span is None:
        return
    try:
        rows = [_row(fact) for fact in index.facts]
        issues = []
        with open_regular(path) as fh:
            for i in index.issues:
                excerpt = _line_excerpt(fh, i.offset)
                message = i.message.replace(excerpt, _SNIPPET_MARK)
                issues.append([i.line, i.offset, i.kind, message, i.dropped])
        head, tail = _probe(path, index.size)
        doc = {
            "format": FORMAT,
            "code": code_version(),
            "path": os.path.realpath(path),
            "size": index.size,
            "head": head,
            "tail": tail,
            "headerSpan": list(index.header_span),
            "sourceVersion": index.source_version,
            "headerLine": index.header_line,
            "issues": issues,
            "records": rows,
        }
        data = orjson.dumps(doc)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, f)
    except (ValueError, OSError, TypeError, orjson.JSONEncodeError) as e:
        logger.debug("index cache not written for %s: %s", path, e)


def load_cached(path: str, size: int) -> CachedIndex | None:
    """The cached index of `path` if it still describes the file's first bytes."""
    f = _cache_file(path)
    if f is None:
        return None
    try:
        doc = orjson.loads(f.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    try:
        if doc.get("format") != FORMAT or doc.get("code") != code_version():
            return None
        if doc["path"] != os.path.realpath(path) or doc["size"] > size:
            return None
        if _probe(path, doc["size"]) != (doc["head"], doc["tail"]):
            return None
        issues = []
        with open_regular(path) as fh:
            for line, offset, kind, message, dropped in doc["issues"]:
                if _SNIPPET_MARK in message:
                    message = message.replace(_SNIPPET_MARK, _line_excerpt(fh, offset))
                issues.append(LoadIssue(line, offset, kind, message, dropped))
        off, length = doc["headerSpan"]
        return CachedIndex(
            doc["size"],
            (int(off), int(length)),
            doc["headerLine"],
            doc["sourceVersion"],
            issues,
            [_facts(row) for row in doc["records"]],
        )
    except (KeyError, TypeError, ValueError, OSError):
        return None
