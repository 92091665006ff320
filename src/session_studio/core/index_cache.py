"""A cache of the index of big session files, so reopening one is cheap.

pi's files only grow, so a cached index stays valid for the bytes it covers: it
is used when the file's first 64 KiB and the 64 KiB before the cached size are
unchanged, and the lines appended since are indexed with `Session.refresh()`.
The cache holds the index only (offsets, ids, types, token estimates), never
message content. It lives in `$XDG_CACHE_HOME/session-studio/index/`
(`SESSION_STUDIO_CACHE_DIR` overrides; `SESSION_STUDIO_NO_INDEX_CACHE=1` disables it).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .jsvalue import UNDEFINED, JsTypeError
from .reader import LoadIssue

if TYPE_CHECKING:
    from .session import Session

__all__ = ["MIN_CACHED_BYTES", "cache_dir", "load_cached", "save_index"]

logger = logging.getLogger(__name__)

FORMAT = 1
MIN_CACHED_BYTES = 8 * 1024 * 1024
_PROBE = 64 * 1024
_UNDEF = 0  # stands for `undefined` in fields that otherwise hold only strings or null


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
    key = hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return d / f"{key}.json"


def _probe(path: str, size: int) -> tuple[str, str]:
    with open(path, "rb") as fh:
        head = fh.read(min(_PROBE, size))
        start = max(0, size - _PROBE)
        fh.seek(start)
        tail = fh.read(size - start)
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()


def _enc(v: Any) -> Any:
    if v is UNDEFINED:
        return _UNDEF
    if v is None or type(v) is str:
        return v
    raise ValueError("unusual value")


def _dec(v: Any) -> Any:
    return UNDEFINED if v == _UNDEF and type(v) is int else v


def save_index(session: Session) -> None:
    """Write the index of `session` to the cache (silently skipped for unusual files)."""
    f = _cache_file(session.path)
    if f is None or session.reset or session.migrated or session.partial_tail or session.header is None:
        return
    rows = []
    try:
        for r in session.records:
            t = r.tokens
            if isinstance(t, JsTypeError):
                tok: Any = str(t)
            elif type(t) is float and math.isnan(t):
                tok = None
            elif type(t) in (int, float):
                tok = t
            else:
                return
            u = r.usage_tokens
            if u is not None and type(u) not in (int, float):
                return
            rows.append(
                [
                    r.line,
                    r.offset,
                    r.length,
                    _enc(r.type),
                    _enc(r.id),
                    _enc(r.parent_id),
                    _enc(r.timestamp),
                    _enc(r.role),
                    tok,
                    u,
                    None if r.error is None else str(r.error),
                ]
            )
        head, tail = _probe(session.path, session.size)
        doc = {
            "format": FORMAT,
            "path": os.path.realpath(session.path),
            "size": session.size,
            "head": head,
            "tail": tail,
            "header": session.header,
            "sourceVersion": session.source_version,
            "headerLine": session.header_line,
            "issues": [[i.line, i.offset, i.kind, i.message, i.dropped] for i in session.issues],
            "records": rows,
        }
        data = orjson.dumps(doc)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, f)
    except (ValueError, OSError, TypeError, orjson.JSONEncodeError) as e:
        logger.debug("index cache not written for %s: %s", session.path, e)


def load_cached(cls: type[Session], path: str, size: int) -> Session | None:
    """The cached index of `path` if it still describes the file's first bytes."""
    from .session import EntryRecord

    f = _cache_file(path)
    if f is None:
        return None
    try:
        doc = orjson.loads(f.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    try:
        if doc.get("format") != FORMAT or doc["path"] != os.path.realpath(path) or doc["size"] > size:
            return None
        if _probe(path, doc["size"]) != (doc["head"], doc["tail"]):
            return None
        session = cls(
            path,
            doc["header"],
            [],
            [LoadIssue(*i) for i in doc["issues"]],
            doc["sourceVersion"],
            False,
            False,
            doc["size"],
            False,
            header_line=doc["headerLine"],
        )
        recs = session.records
        for n, row in enumerate(doc["records"]):
            line, offset, length, typ, rid, pid, ts, role, tok, usage, err = row
            error = JsTypeError(err) if err is not None else None
            if type(tok) is str:
                tok = error if error is not None else JsTypeError(tok)
            elif tok is None:
                tok = math.nan
            rec = EntryRecord.from_facts(
                n,
                (
                    line,
                    offset,
                    length,
                    _dec(typ),
                    _dec(rid),
                    _dec(pid),
                    _dec(ts),
                    _dec(role),
                    tok,
                    usage,
                    error,
                ),
            )
            recs.append(rec)
            session._index_record(rec)
        session._note_tail()
        return session
    except (KeyError, TypeError, ValueError):
        return None
