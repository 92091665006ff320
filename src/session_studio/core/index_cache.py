"""A cache of the index of big session files, so reopening one is cheap.

pi's files only grow, so a cached index stays valid for the bytes it covers: it
is used when the file's first 64 KiB and the 64 KiB before the cached size are
unchanged, and the lines appended since are indexed with `Session.refresh()`.
The cache holds the index only (the columns of a :class:`RecordTable`: offsets,
ids, parent ids, types, roles, timestamps, token estimates, and the line numbers
and kinds of damaged lines), never message content: the header and the labels
are re-read from the file through their byte spans, and the excerpts quoted in
load-issue messages are re-read from the lines they quote. Entries are keyed by
the file's path and by a version of the code that computes the index (a changed
estimator never reuses an old index). It lives in
`$XDG_CACHE_HOME/session-studio/index/` (`SESSION_STUDIO_CACHE_DIR` overrides;
`SESSION_STUDIO_NO_INDEX_CACHE=1` disables it).

The file is binary: a magic line, the length of a JSON head (what the columns
cannot hold: issues, distinct type/role values, unusual ids and per-record
oddities), the head, then each column's raw bytes. It is read in chunks of
CHUNK_BYTES with `progress(done, total)` between them, so a thread reading it
never holds the GIL for long and the reader can show progress or cancel.

This module knows nothing of `Session`: it stores and returns plain columns and
the session builds itself from them.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
import time
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from .digest import new_hash
from .errors import LoadCancelled
from .file_op_index import FileOpIndex
from .fingerprint import PROBE_BYTES, open_regular
from .jsvalue import UNDEFINED, JsTypeError
from .reader import LoadIssue, snippet
from .record_table import COLUMNS, RecordTable

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "FORMAT",
    "MIN_CACHED_BYTES",
    "CachedIndex",
    "cache_dir",
    "cache_file_exists",
    "cache_root",
    "code_version",
    "load_cached",
    "prune_cache",
    "save_index",
]


#: 6: BLAKE2b probes (digest.py); 7: the 1.6.0-marker scan no longer misses a first system message;
#: 8: the messages' file operations (file_op_index)
FORMAT = 8
MIN_CACHED_BYTES = 8 * 1024 * 1024
#: the cache folder is kept under this many bytes, the least recently used indexes removed first
#: (each upgrade of the indexing code leaves a whole set of indexes no one reads again; a 1 GB
#: session's index is ~80 MB, a 10 MB one's ~0.8 MB)
MAX_CACHE_BYTES = 512 * 1024 * 1024
#: a temporary file of an interrupted write older than this is removed with the pruning
STALE_TEMP_SECONDS = 24 * 3600
#: how much of a column is read between two progress calls
CHUNK_BYTES = 4 * 1024 * 1024
_MAGIC = b"session-studio index\n"
_SNIPPET_MARK = "\x00snippet\x00"
#: the modules whose code decides what an index row holds
_INDEXING_MODULES = (
    "reader.py",
    "session.py",
    "record_table.py",
    "tokens.py",
    "jsvalue.py",
    "jsparse.py",
    "migrate.py",
    "file_ops.py",  # may_hold_file_op, message_file_ops: the FILE_OP_CANDIDATE flag, known operations
    "file_op_index.py",
    "_bulkindex.c",  # the compiled loader helper's source (absent from wheels: its name counts then)
)
#: the table's columns, in file order
_COLUMNS = COLUMNS


@functools.cache
def code_version() -> str:
    """A hash of the cache format and the code that computes the index."""
    h = new_hash(f"format {FORMAT}".encode())
    here = os.path.dirname(os.path.realpath(__file__))
    for name in _INDEXING_MODULES:
        try:
            with open(os.path.join(here, name), "rb") as source:
                h.update(source.read())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:24]


class CachedIndex(NamedTuple):
    """The index of the first `size` bytes of a session file."""

    size: int
    header_span: tuple[int, int] | None
    header_line: int | None
    source_version: Any
    issues: list[LoadIssue]
    table: RecordTable
    #: the table's sorted 8-hex id index (IdIndex's), so a reopen need not sort again
    sorted_ids: array[int]
    #: no 8-hex id occurs twice in sorted_ids (IdIndex.unique), so a reopen need not scan it
    unique_ids: bool
    #: Session.pi16_scan: the 1.6.0 marker of the first n records, if it was looked for
    pi16_scan: tuple[int, str | None] | None


def _cache_root_str() -> str:
    # strings, not pathlib (whose import is ~5 ms of a cached `plan`'s start)
    base = os.environ.get("SESSION_STUDIO_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "session-studio")


def cache_root() -> Path:
    """Session Studio's own cache folder (``SESSION_STUDIO_CACHE_DIR``, else the XDG one)."""
    from pathlib import Path

    return Path(_cache_root_str())


def cache_dir() -> str | None:
    """Where the indexes are cached (None: ``SESSION_STUDIO_NO_INDEX_CACHE`` is set)."""
    if os.environ.get("SESSION_STUDIO_NO_INDEX_CACHE"):
        return None
    return os.path.join(_cache_root_str(), "index")


def _cache_file(path: str) -> str | None:
    d = cache_dir()
    if d is None:
        return None
    key = new_hash(
        code_version().encode() + b"\0" + os.path.realpath(path).encode("utf-8", "surrogateescape")
    ).hexdigest()[:40]
    return os.path.join(d, f"{key}.idx")


def cache_file_exists(path: str) -> bool:
    """Whether an index of ``path`` is cached (still to be checked against the file: load_cached)."""
    f = _cache_file(path)
    return f is not None and os.path.isfile(f)


def _probe(path: str, size: int) -> tuple[str, str]:
    with open_regular(path) as fh:
        head = fh.read(min(PROBE_BYTES, size))
        start = max(0, size - PROBE_BYTES)
        fh.seek(start)
        tail = fh.read(size - start)
    return new_hash(head).hexdigest(), new_hash(tail).hexdigest()


def _line_excerpt(fh: Any, offset: int) -> str:
    """The excerpt reader messages quote for the line at `offset` (read from the file)."""
    fh.seek(offset)
    raw = fh.read(256)
    nl = raw.find(b"\n")
    return repr(snippet(raw if nl < 0 else raw[:nl]))


def _enc(v: Any) -> Any:
    """A JSON value or `undefined`, as JSON (`undefined` has no JSON form: ["u"])."""
    return ["u"] if v is UNDEFINED else ["v", v]


def _dec(v: list[Any]) -> Any:
    return UNDEFINED if v[0] == "u" else v[1]


def _object_row(o: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in o.items():
        if k == "error" or isinstance(v, JsTypeError):
            out[k] = {"error": str(v)}
        elif k == "timestamp":
            out[k] = _enc(v)
        elif type(v) is int:
            out[k] = {"int": str(v)}  # beyond a double's exact range
        else:
            raise ValueError("unusual index value")
    return out


def _object_value(o: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    error = JsTypeError(o["error"]["error"]) if "error" in o else None
    for k, v in o.items():
        if k == "error":
            out[k] = error
        elif k == "timestamp":
            out[k] = _dec(v)
        elif "error" in v:
            out[k] = error if error is not None and str(error) == v["error"] else JsTypeError(v["error"])
        else:
            out[k] = int(v["int"])
    return out


def save_index(path: str, index: CachedIndex) -> None:
    """Write `index` of `path` to the cache (silently skipped for unusual files)."""
    f = _cache_file(path)
    t = index.table
    if f is None or index.header_span is None or t.patches or t.values:
        return
    try:
        issues = []
        with open_regular(path) as fh:
            for i in index.issues:
                excerpt = _line_excerpt(fh, i.offset)
                message = i.message.replace(excerpt, _SNIPPET_MARK)
                issues.append([i.line, i.offset, i.kind, message, i.dropped])
        head, tail = _probe(path, index.size)
        columns = [getattr(t, name) for name in _COLUMNS]
        meta = {
            "format": FORMAT,
            "code": code_version(),
            "path": os.path.realpath(path),
            "size": index.size,
            "head": head,
            "tail": tail,
            "byteorder": sys.byteorder,
            "headerSpan": list(index.header_span),
            "sourceVersion": index.source_version,
            "headerLine": index.header_line,
            "issues": issues,
            "records": len(t),
            "symbols": [_enc(v) for v in t.symbols[1:]],
            "idsOther": t.ids_other,
            "objects": [[i, _object_row(o)] for i, o in t.objects.items()],
            # (targetId, label, timestamp) of each label record: a reopen reads no label line
            "labels": [[i, *(_enc(v) for v in t.label_facts[i])] for i in sorted(t.label_facts)],
            "columns": [[c.typecode, c.itemsize, len(c)] for c in columns],
            "sortedIds": len(index.sorted_ids),
            "uniqueIds": index.unique_ids,
            "pi16Scan": index.pi16_scan,
            "fileOpPaths": t.file_ops.paths,
            "fileOpColumns": [[c.typecode, c.itemsize, len(c)] for c in t.file_ops.columns()],
        }
        head_bytes = orjson.dumps(meta)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        tmp = f"{f[: -len('.idx')]}.tmp{os.getpid()}"
        with open(tmp, "wb") as out:
            out.write(_MAGIC + len(head_bytes).to_bytes(8, "little") + head_bytes)
            for c in columns:
                c.tofile(out)
            index.sorted_ids.tofile(out)
            for c in t.file_ops.columns():
                c.tofile(out)
        os.replace(tmp, f)
        prune_cache(os.path.dirname(f), keep=f)
    except (ValueError, OSError, TypeError, orjson.JSONEncodeError) as e:
        import logging  # only here: a cached `plan` starts without it

        logging.getLogger(__name__).debug("index cache not written for %s: %s", path, e)


def prune_cache(folder: str, keep: str | None = None, budget: int | None = None) -> list[str]:
    """Remove the least recently used indexes of ``folder`` (a reopen marks its index used) until
    the rest fit in ``budget`` bytes (MAX_CACHE_BYTES), never ``keep`` (the one just written), and
    the temporary files of interrupted writes older than STALE_TEMP_SECONDS. Returns the removed
    paths. Only this cache's own files are touched: ``*.idx`` and ``*.tmp<pid>`` directly in it."""
    limit = MAX_CACHE_BYTES if budget is None else budget
    indexes: list[tuple[float, int, str]] = []
    removed: list[str] = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        try:
            if not e.is_file(follow_symlinks=False):
                continue
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if e.name.endswith(".idx"):
            indexes.append((st.st_mtime, st.st_size, e.path))
        elif (
            ".tmp" in e.name and e.name.split(".tmp")[-1].isdigit() and now - st.st_mtime > STALE_TEMP_SECONDS
        ):
            with contextlib.suppress(OSError):
                os.remove(e.path)
                removed.append(e.path)
    total = sum(size for _, size, _ in indexes)
    for _mtime, size, f in sorted(indexes):  # the least recently used first
        if total <= limit:
            break
        if keep is not None and f == keep:
            continue
        with contextlib.suppress(OSError):
            os.remove(f)
            removed.append(f)
            total -= size
    return removed


def _read_column(fh: io.BufferedReader, col: array[Any], nbytes: int, step: Callable[[int], None]) -> None:
    """Append `nbytes` from `fh` to `col`, CHUNK_BYTES at a time, calling `step(bytes)` after each.

    The column is grown to its final size first and the file read straight into it (readinto):
    reading a chunk and copying it over touched twice the memory, each page of it new to the process
    (a page fault each): ~3 ms, 5%, of a cached reopen of the 117 MB session (9 MB of columns)."""
    if nbytes <= 0:
        return
    if nbytes % col.itemsize:
        raise ValueError("the cache file is damaged")
    start = len(col) * col.itemsize
    col.extend(array(col.typecode, bytes(col.itemsize)) * (nbytes // col.itemsize))
    with memoryview(col).cast("B") as view:
        done, end = start, start + nbytes
        while done < end:
            k = fh.readinto(view[done : min(done + CHUNK_BYTES, end)])
            if not k:
                raise ValueError("the cache file is truncated")
            done += k
            step(k)


def load_cached(
    path: str,
    size: int,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> CachedIndex | None:
    """The cached index of `path` if it still describes the file's first bytes.

    Read in chunks; between two chunks `progress(bytes_read, cache_bytes)` is called
    and `cancel()` returning True stops with LoadCancelled.
    """
    f = _cache_file(path)
    if f is None:
        return None
    try:
        fh = open(f, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with fh:
        try:
            total = os.fstat(fh.fileno()).st_size
            if fh.read(len(_MAGIC)) != _MAGIC:
                return None
            n = int.from_bytes(fh.read(8), "little")
            meta = orjson.loads(fh.read(n))
            if meta.get("format") != FORMAT or meta.get("code") != code_version():
                return None
            if meta["path"] != os.path.realpath(path) or meta["size"] > size:
                return None
            if meta["byteorder"] != sys.byteorder:
                return None
            if _probe(path, meta["size"]) != (meta["head"], meta["tail"]):
                return None
            table = RecordTable(False)
            done = len(_MAGIC) + 8 + n

            def step(k: int) -> None:
                nonlocal done
                done += k
                if cancel is not None and cancel():
                    raise LoadCancelled("loading was cancelled")
                if progress is not None:
                    progress(done, total)

            for name, (typecode, itemsize, count) in zip(_COLUMNS, meta["columns"], strict=True):
                col = getattr(table, name)
                if col.typecode != typecode or col.itemsize != itemsize:
                    return None
                _read_column(fh, col, count * itemsize, step)
            sorted_ids = array("Q")
            _read_column(fh, sorted_ids, meta["sortedIds"] * sorted_ids.itemsize, step)
            op_columns = []
            for (typecode, itemsize, count), empty in zip(
                meta["fileOpColumns"], FileOpIndex().columns(), strict=True
            ):
                if empty.typecode != typecode or empty.itemsize != itemsize:
                    return None
                _read_column(fh, empty, count * itemsize, step)
                op_columns.append(empty)
            table.file_ops = FileOpIndex.restore(meta["fileOpPaths"], *op_columns)
            if table.file_ops.records and table.file_ops.records[-1] >= meta["records"]:
                return None
            if any(len(getattr(table, name)) != meta["records"] for name in _COLUMNS):
                return None
            for v in meta["symbols"]:
                table.symbol(_dec(v))
            for v in meta["idsOther"]:
                table.pack_id(v)
            table.objects = {int(i): _object_value(o) for i, o in meta["objects"]}
            issues = []
            with open_regular(path) as src:
                for line, offset, kind, message, dropped in meta["issues"]:
                    if _SNIPPET_MARK in message:
                        message = message.replace(_SNIPPET_MARK, _line_excerpt(src, offset))
                    issues.append(LoadIssue(line, offset, kind, message, dropped))
            for i, target, label, stamp in meta["labels"]:
                if table.type_of(i) != "label":
                    return None
                table.label_facts[i] = (_dec(target), _dec(label), _dec(stamp))
            off, length = meta["headerSpan"]
            with contextlib.suppress(OSError):
                os.utime(f)  # used now: the last the pruning removes (prune_cache)
            return CachedIndex(
                meta["size"],
                (int(off), int(length)),
                meta["headerLine"],
                meta["sourceVersion"],
                issues,
                table,
                sorted_ids,
                bool(meta["uniqueIds"]),
                _pi16_scan(meta["pi16Scan"]),
            )
        except (KeyError, TypeError, ValueError, OSError, IndexError, orjson.JSONDecodeError):
            return None


def _pi16_scan(v: Any) -> tuple[int, str | None] | None:
    if v is None:
        return None
    n, marker = v
    if type(n) is not int or not (marker is None or type(marker) is str):
        raise ValueError("an odd pi16Scan")
    return n, marker
