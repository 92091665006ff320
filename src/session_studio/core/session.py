"""A loaded pi session: header, migration, the id index, labels, name and leaf.

`Session.open(path)` does what pi's `SessionManager.open` does to the data
(without ever rewriting the file): parse (§1.7), migrate (§1.8), index (§1.11),
labels (§1.12). Each kept value becomes an :class:`EntryRecord` that holds what
the planner needs (type, id, parent, role, token estimate, usage) so the tree,
token bar and cut points never touch the JSON again. The value itself is kept in
memory for small files and re-read from its byte span on demand for big ones.
New lines that pi appends are indexed by :meth:`Session.refresh` from the last
known offset, without re-reading the file.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from .errors import EntryNotFoundError, SessionFileError, SessionLoadError
from .file_ops import may_hold_file_op, message_file_ops
from .fingerprint import FileFingerprint, fingerprint_fd, open_regular, open_regular_fd, still_prefix
from .gc_pause import gc_paused
from .jsvalue import UNDEFINED, JsTypeError, js_key, js_string, js_truthy
from .migrate import js_compare, needs_migration, new_entry_id, version_of
from .priority import can_start_helpers, run_behind, yield_to_foreground
from .reader import LineRun, LoadIssue, RawValue, expand_runs, iter_values, parse_line, value_of_line
from .record_table import (
    _DOUBLE_EXACT,
    COLUMNS,
    FILE_OP_CANDIDATE,
    ID_NULL,
    TOKENS_INT,
    USAGE_INT,
    USAGE_SET,
    EntryRecord,
    IdIndex,
    RecordTable,
    _is_hex8,
    message_facts,
    pack_timestamp,
)
from .tokens import assistant_usage_tokens, estimate_tokens

__all__ = [
    "CURRENT_LEAF",
    "KEEP_VALUES_MAX_BYTES",
    "EntryRecord",
    "Session",
    "gc_paused",
    "indexed_in_children",
]

#: Marker for "the session's own leaf" where None would mean pi's explicit `null` leaf.
CURRENT_LEAF: Any = object()

#: Files up to this size keep every parsed value in memory; bigger ones re-read on demand (and are
#: indexed in bulk: a 30 MB file's values held ~4× its size, and its load took 2–8× as long)
KEEP_VALUES_MAX_BYTES = 8 * 1024 * 1024
#: Session.values re-reads lines at most this far apart in one read, of at most this many bytes
REREAD_GAP_BYTES = 64 * 1024
REREAD_CHUNK_BYTES = 1024 * 1024
#: an open from the index cache stores the index again once pi appended this much since (or a
#: sixteenth of what the cache held, if more): indexing 4 MB takes ~25 ms, storing a 100 MB file's
#: index ~15 ms
RESAVE_MIN_BYTES = 4 * 1024 * 1024


def _compiled_helper() -> Any:
    """core/_bulkindex.c when `pip install` built it (and SESSION_STUDIO_PURE_PYTHON is unset), else None.

    It runs `_load_common`'s common case in C; the Python loop is the reference, runs without
    it, and takes every entry the helper is not certain about.
    """
    from array import array

    if os.environ.get("SESSION_STUDIO_PURE_PYTHON") or array("I").itemsize != 4:
        return None  # (it writes type and role codes as 4-byte unsigned ints)
    import importlib

    try:
        return importlib.import_module("._bulkindex", __package__)
    except ImportError:
        return None


#: the compiled loader helper or None (tests set it to None to run the Python loop)
BULK_HELPER: Any = _compiled_helper()


def _no_header_reason(first: RawValue | None, issues: list[LoadIssue]) -> str:
    """Why there is no session header, as a user reads it (a binary file is not "empty")."""
    if first is not None:
        return f"line {first.line} is not a session header"
    bad = [i for i in issues if i.kind == "malformed"]
    if not bad:
        return "the file is empty"
    lines = f"{len(bad):,} line{'s' if len(bad) != 1 else ''}, none valid JSON"
    if any("invalid UTF-8" in i.message or "\\x00" in i.message for i in bad[:50]):
        return f"not a pi session: binary data ({lines})"
    return f"not a pi session ({lines})"


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class Session:
    """One session file as pi sees it after `SessionManager.open`."""

    path: str
    header: dict[str, Any] | None
    records: RecordTable
    issues: list[LoadIssue]
    source_version: Any
    migrated: bool
    reset: bool
    size: int
    keep_values: bool
    mtime_ns: int = 0
    by_id: IdIndex = None  # type: ignore[assignment]  # made in __post_init__
    leaf_id: Any = None
    labels: dict[Any, tuple[str, Any]] = field(default_factory=dict)
    partial_tail: bool = False
    header_line: int | None = None
    #: (offset, length) of the header line, so the index cache need not store its content
    header_span: tuple[int, int] | None = None
    #: the file as this view of it was read (None for sessions not read from a file)
    fingerprint: FileFingerprint | None = None
    #: an append of ours that was interrupted (kill -9, power loss) and left a torn last line
    torn_tail: Any = None
    #: what the user must be told about writes made through this view (e.g. pi appended meanwhile)
    notes: list[str] = field(default_factory=list)
    _children: dict[Any, list[int]] | None = None
    #: (n, marker): profile.pi16_marker's answer for the first n records (kept by the index cache)
    pi16_scan: tuple[int, str | None] | None = None
    #: a with_virtual_entries copy: the session it was made from and how many records it had
    _made_from: tuple[Session, int] | None = None
    #: a with_virtual_entries copy: a path of the session it was made from, walked already (known_path)
    _known_path: list[int] | None = None

    def __post_init__(self) -> None:
        if self.by_id is None:
            self.by_id = IdIndex(self.records)

    def __repr__(self) -> str:
        return f"<Session {self.path!r}: {len(self.records)} records, leaf {self.leaf_id!r}>"

    # ------------------------------------------------------------------ loading
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        keep_values: bool | None = None,
        parallel: bool | None = None,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        use_cache: bool | None = None,
        others_need_the_gil: bool = False,
        before_indexing: Callable[[], None] | None = None,
    ) -> Session:
        """Open a session file the way pi does (without ever writing to it).

        `parallel`: index the second half of a big file in another process (the default for
        files over PARALLEL_MIN_BYTES, over SPAWNED_PARALLEL_MIN_BYTES when other threads run).
        `others_need_the_gil`: other threads of this process must not wait for this one (a GUI
        thread; Qt's threads are not Python's, so this process cannot see them): a big file is
        indexed by two new interpreters while this thread only waits on their pipes.
        `progress(bytes_read, total)` is called every few thousand lines; `cancel()`
        returning True stops the load with LoadCancelled (both from the loading thread).
        `use_cache`: reuse/store the index of big files (see index_cache); default on
        for files of MIN_CACHED_BYTES and more that are not kept in memory.
        `before_indexing()` is called once, from the loading thread, just before its first long step:
        reading a cached index, indexing here, or (the two-interpreter way) waiting for the scan
        processes, right after they were started: what it does (the window reads and shows the
        head of the file) then overlaps with their start and scan.
        """
        announce = _Once(before_indexing)
        p = os.fspath(path)
        fd = open_regular_fd(p)  # never blocks on a FIFO; refuses devices and directories
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        keep = st.st_size <= KEEP_VALUES_MAX_BYTES if keep_values is None else keep_values
        from . import index_cache

        cached_ok = (not keep) and (
            st.st_size >= index_cache.MIN_CACHED_BYTES if use_cache is None else use_cache
        )
        if cached_ok:
            if index_cache.cache_file_exists(p):
                announce()
            cached = cls._from_cache(p, st.st_size, progress, cancel)
            if cached is not None:
                indexed = cached.size
                cached.refresh()  # lines appended since the index was cached
                if cached.size - indexed >= max(RESAVE_MIN_BYTES, indexed // 16) and cached._cacheable():
                    # pi appended much since: store the index again, or every later open re-indexes
                    # all of it (a file pi keeps growing for days would lose its cache's use)
                    cached._save_index()
                if progress is not None:
                    progress(st.st_size, st.st_size)
                return cached
        issues: list[LoadIssue] = []
        fh = open_regular(p)
        start_method = _scan_start_method(st.st_size, parallel, keep, others_need_the_gil)
        with fh, gc_paused():
            split = _split_point(fh, st.st_size) if start_method is not None else None
            if split is None:
                announce()
                values = iter_values(fh, issues, runs=_bulk_runs(keep))
                if progress is not None or cancel is not None:
                    values = _watched(values, st.st_size, progress, cancel)
                session = cls._from_values(p, values, issues, keep)
                session.size = fh.tell()
            else:
                assert start_method is not None
                session = cls._open_parallel(
                    p, fh, issues, split, st.st_size, progress, cancel, start_method, announce
                )
            session._took_fingerprint(fh.fileno())
        if cached_ok and session._cacheable():
            session._save_index()
        return session

    def _cacheable(self) -> bool:
        return not (self.reset or self.migrated or self.partial_tail)

    def _save_index(self) -> None:
        """Store this view's index in the index cache (see index_cache)."""
        from . import index_cache
        from .profile import pi16_marker

        # detect_profile asks it next (the window; the CLI unless --pi-version pins a profile): the
        # cache keeps the answer, so a reopen need not read the summaries again
        pi16_marker(self)
        index_cache.save_index(
            self.path,
            index_cache.CachedIndex(
                self.size,
                self.header_span,
                self.header_line,
                self.source_version,
                self.issues,
                self.records,
                self.by_id.sorted_ids(),
                self.by_id.unique,
                self.pi16_scan,
            ),
        )

    def _took_fingerprint(self, fd: int) -> None:
        """Remember what the file looked like for the bytes just indexed (writers compare with it)."""
        self.fingerprint = fingerprint_fd(fd, self.size)
        self.mtime_ns = self.fingerprint.mtime_ns
        self.torn_tail = None
        if self.partial_tail:
            from .journal import find_torn_tail

            self.torn_tail = find_torn_tail(self.path, fd)
            if self.torn_tail is not None:
                tail = next(i for i in reversed(self.issues) if i.kind == "no_final_newline")
                self.issues.append(
                    LoadIssue(tail.line, tail.offset, "own_torn_tail", self.torn_tail.describe(), True)
                )

    @classmethod
    def _from_cache(
        cls,
        p: str,
        size: int,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> Session | None:
        from . import index_cache

        scaled = None
        if progress is not None:
            report = progress

            def scaled(
                done: int, total: int
            ) -> None:  # cache bytes → the file's bytes, as a cold load reports
                report(size * done // max(total, 1), size)

        cached = index_cache.load_cached(p, size, scaled, cancel)
        if cached is None:
            return None
        with open_regular(p) as fh:
            header: Any = None
            if cached.header_span is not None:
                off, length = cached.header_span
                fh.seek(off)
                header, _, _ = parse_line(fh.read(length))
            if type(header) is not dict or header.get("type") != "session":
                return None
            session = cls(
                p,
                header,
                cached.table,
                list(cached.issues),
                cached.source_version,
                False,
                False,
                cached.size,
                False,
                header_line=cached.header_line,
                header_span=cached.header_span,
            )
            session.by_id.restore(cached.sorted_ids, cached.unique_ids)
            session.pi16_scan = cached.pi16_scan
            session._apply_labels(sorted(cached.table.label_facts))
            t = session.records
            session.leaf_id = t.id_of(len(t) - 1) if len(t) else None
            session._note_tail()
            session._took_fingerprint(fh.fileno())
        return session

    def _apply_labels(self, indices: Iterable[int]) -> None:
        """pi's label map after the label records `indices` (in file order)."""
        facts = self.records.label_facts
        for i in indices:
            target, label, timestamp = facts[i]
            key = js_key(target)
            if js_truthy(label):
                # JavaScript Map.set keeps an existing key's position, as a dict does
                self.labels[key] = (label, timestamp)
            else:
                self.labels.pop(key, None)

    @classmethod
    def _open_parallel(
        cls,
        p: str,
        fh: BinaryIO,
        issues: list[LoadIssue],
        split: int,
        size: int,
        progress: Callable[[int, int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        start_method: str = "fork",
        announce: Callable[[], None] = lambda: None,
    ) -> Session:
        """Index [0, split) here while another process indexes the rest (`start_method`: "fork",
        or "fresh" for a new interpreter, see _scan_start_method).

        "fresh" is what a process with other Python threads gets (the window): there both halves go
        to new interpreters and this thread only waits on their pipes, so the GIL stays with the
        other threads (see _open_in_children); the header is read here."""
        if start_method == "fresh":
            in_children = cls._open_in_children(p, fh, issues, split, size, progress, cancel, announce)
            if in_children is not None:
                return in_children
            fh.seek(0)  # not a plain file with its header on line 1: the half here after all
            issues.clear()
        recv, proc = _start_scan(start_method, p, split, None)
        try:
            announce()
            lines_read: list[int] = []
            values = iter_values(fh, issues, 0, 1, split, lines_read, runs=_bulk_runs(False))
            if progress is not None or cancel is not None:
                values = _watched(values, split, progress, cancel)
            session = cls._from_values(p, values, issues, False, finish=False)
            part, tail_issues, tail_size, _lines = _scan_result(recv)
            columns = (recv.recv_bytes() for _ in range(len(COLUMNS)))
            if session.migrated or session.reset:
                for _ in columns:  # not needed, but the worker waits until they are read
                    pass
            else:
                (line_shift,) = lines_read  # the worker numbered its lines from 1
                session._merge_scanned(part, tail_issues, line_shift, columns)
        except BaseException:
            proc.terminate()  # it may be blocked sending to us; we will not read it
            raise
        finally:
            proc.join()
            recv.close()
        if session.migrated or session.reset:
            # legacy files need the sequential migration pass: read the second half normally
            fh.seek(0)
            issues.clear()
            session = cls._from_values(p, iter_values(fh, issues), issues, False)
            session.size = fh.tell()
            return session
        session._finish_bulk()
        session.size = tail_size
        session._note_tail()
        return session

    @classmethod
    def _open_in_children(
        cls,
        p: str,
        fh: BinaryIO,
        issues: list[LoadIssue],
        split: int,
        size: int,
        progress: Callable[[int, int], None] | None,
        cancel: Callable[[], bool] | None,
        announce: Callable[[], None],
    ) -> Session | None:
        """Read line 1 (the header) here and index [line 2, split) and [split, end) in two new
        interpreters; None (and nothing kept) when line 1 is not a current header: a legacy file
        needs the sequential migration, a headerless one pi's own start-over. `announce()` is
        called once they run, before the wait for them."""
        head_end = _first_line_end(fh, split)
        if head_end is None:
            return None
        scans = [_start_scan("fresh", p, head_end, split), _start_scan("fresh", p, split, None)]
        try:
            lines_read: list[int] = []
            session = cls._from_values(
                p,
                iter_values(fh, issues, 0, 1, head_end, lines_read, runs=_bulk_runs(False)),
                issues,
                False,
                False,
            )
            if session.header is None or session.migrated or session.reset or len(session.records):
                return None
            announce()
            results = _scan_results(
                [conn for conn, _proc in scans], [head_end, split], size, progress, cancel
            )
            line_shift = lines_read[0]
            for (conn, _proc), (part, part_issues, part_size, part_lines) in zip(scans, results, strict=True):
                columns = (conn.recv_bytes() for _ in range(len(COLUMNS)))
                session._merge_scanned(part, part_issues, line_shift, columns)
                line_shift += part_lines
                session.size = part_size
        finally:
            for conn, proc in scans:
                proc.terminate()  # done, or blocked sending to us: nothing more is read
                proc.join()
                conn.close()
        session._finish_bulk()
        session._note_tail()
        return session

    def _merge_scanned(
        self, part: RecordTable, part_issues: list[LoadIssue], line_shift: int, columns: Iterator[bytes]
    ) -> None:
        """Append what a scan process indexed from a later part of the file: its records (the columns
        one at a time, so that the parts are never held twice), their labels, and its issues, its
        lines (numbered from 1) shifted by the newlines before its part."""
        base = len(self.records)
        self.records.extend_from(part, line_shift, columns, BULK_HELPER)
        self._apply_labels(sorted(i + base for i in part.label_facts))
        for i in part_issues:
            self.issues.append(LoadIssue(i.line + line_shift, i.offset, i.kind, i.message, i.dropped))

    @classmethod
    def from_bytes(cls, data: bytes, path: str = "<memory>") -> Session:
        import io

        issues: list[LoadIssue] = []
        fh = io.BytesIO(data)
        session = cls._from_values(path, iter_values(fh, issues), issues, True)
        session.size = len(data)
        return session

    @classmethod
    def _from_values(
        cls,
        path: str,
        values: Iterator[RawValue | LineRun],
        issues: list[LoadIssue],
        keep: bool,
        finish: bool = True,
    ) -> Session:
        """The session of `values` (iter_values's, with runs or not); `finish=False` leaves byId to be
        built after more records."""
        first = next(values, None)
        assert not isinstance(first, LineRun)  # a run comes after a first value only
        header_ok = (
            first is not None
            and type(first.value) is dict
            and first.value.get("type") == "session"
            and type(first.value.get("id")) is str
        )
        if not header_ok:
            for _ in expand_runs(values):  # drain, so issues of the remaining lines are reported too
                pass
            reason = _no_header_reason(first, issues)
            issues.insert(
                0,
                LoadIssue(
                    first.line if first else 1,
                    first.offset if first else 0,
                    "no_header",
                    f"{reason}: "
                    + (
                        "pi starts a new session in it"
                        if reason == "the file is empty"
                        else "pi 0.80.2 would start a new session over it, pi 1.6.0 refuses it"
                    ),
                    True,
                ),
            )
            s = cls(path, None, RecordTable(keep), issues, None, False, True, 0, keep)
            return s
        assert first is not None
        header: dict[str, Any] = first.value
        source_version = header.get("version")
        migrating = needs_migration(header)
        version = version_of(header)
        v1 = migrating and js_compare(version, "<", 2)
        v2 = migrating and js_compare(version, "<", 3)
        s = cls(
            path,
            header,
            RecordTable(keep),
            issues,
            source_version,
            migrating,
            False,
            0,
            keep,
            header_line=first.line,
            header_span=(first.offset, first.length),
        )
        if v1:
            header["version"] = 2
        if v2:
            header["version"] = 3
        if v1:
            s._load_v1(expand_runs(values), v2)
        else:
            s._load(values, v2)
        if finish:
            s._finish_bulk()
        return s

    def _note_extra_header(self, raw: RawValue) -> None:
        self.issues.append(
            LoadIssue(raw.line, raw.offset, "extra_header", "a second session header; pi ignores it", False)
        )

    def _add_record(
        self, raw: RawValue, rename_hook: bool, patch: dict[str, Any] | None = None
    ) -> EntryRecord | None:
        """Turn a kept value into a record (None for a later header); `patch` carries v1 ids."""
        v = raw.value
        if type(v) is dict:
            typ = v.get("type", UNDEFINED)
            if typ == "session":
                self._note_extra_header(raw)
                return None
            rid = v.get("id", UNDEFINED)
            parent = v.get("parentId", UNDEFINED)
            timestamp = v.get("timestamp", UNDEFINED)
        else:
            typ = rid = parent = timestamp = UNDEFINED
        if patch is not None:
            rid, parent = patch["id"], patch["parentId"]
        if rename_hook and typ == "message":
            msg = v.get("message")
            if type(msg) is dict and msg.get("role") == "hookMessage":
                msg["role"] = "custom"
                patch = {} if patch is None else patch
                patch["hook"] = True
        role: Any = UNDEFINED
        tokens: Any = 0
        usage: Any = None
        error = None
        file_op = False
        known_ops = None
        if typ == "message":
            role, tokens, usage, error = message_facts(v)
            file_op = may_hold_file_op(v.get("message"))
            if file_op:
                known_ops = message_file_ops(v.get("message"))
        t = self.records
        i = t.append(
            raw.line,
            raw.offset,
            raw.length,
            typ,
            rid,
            parent,
            timestamp,
            role,
            tokens,
            usage,
            error,
            v,
            file_op,
            known_ops,
        )
        if patch is not None:
            t.patches[i] = patch
        if typ == "label":
            t.label_facts[i] = (
                v.get("targetId", UNDEFINED),
                v.get("label", UNDEFINED),
                v.get("timestamp", UNDEFINED),
            )
        return EntryRecord(t, i)

    def _index_value(self, raw: RawValue, rename_hook: bool = False) -> None:
        """A value of a bulk load through the general path: its record, then byId and labels."""
        rec = self._add_record(raw, rename_hook)
        if rec is not None:
            self._index_record(rec, bulk=True)

    def _index_line(self, raw: bytes, line: int, offset: int, issues: list[LoadIssue]) -> None:
        """A line of a LineRun the compiled loader leaves to Python (blank, damaged, not an object)."""
        rv = value_of_line(raw, line, offset, issues)
        if rv is not None:
            self._index_value(rv)

    def _load(self, values: Iterable[RawValue | LineRun], rename_hook: bool) -> None:
        if rename_hook or self.records.values is not None:
            for raw in expand_runs(values):
                self._index_value(raw, rename_hook)
        else:
            self._load_common(values)
        self._note_tail()

    def _load_common(self, values: Iterable[RawValue | LineRun]) -> None:
        """`_add_record` + `_index_record(bulk=True)` for a big file, one loop for the common shape.

        Most entries pi writes are a dict with a string type, 8-hex id and parent (or a null
        parent), pi's 24-character timestamp and, for messages, an int estimate: those are
        appended to the columns right here (a third of the load's time otherwise goes into calls
        and checks per entry). Anything else (labels, headers, odd ids or values, estimate
        errors) goes through `_add_record`, which computes the same facts the general way.
        """
        if BULK_HELPER is not None:
            self._load_common_compiled(values)
            return
        values = expand_runs(values)
        t = self.records
        lines, offsets, lengths = t.lines.append, t.offsets.append, t.lengths.append
        types, roles, ids, parents = t.types.append, t.roles.append, t.ids.append, t.parents.append
        tokens_col, usage_col, flags_col = t.tokens.append, t.usage.append, t.flags.append
        stamps = t.timestamps.append
        codes: dict[str, int] = {}  # str type/role → its symbol code in t
        symbol = t.symbol
        is_hex8 = _is_hex8
        undefined = UNDEFINED
        null_id = ID_NULL
        tokens_int = TOKENS_INT
        usage_int = USAGE_SET | USAGE_INT
        usage_float = USAGE_SET
        file_op_candidate = FILE_OP_CANDIDATE
        may_hold = may_hold_file_op
        ops_of = message_file_ops
        add_ops = t.file_ops.add
        exact = _DOUBLE_EXACT
        index_value = self._index_value
        packed_stamp: int | None = None
        known_ops: tuple[Any, ...] | None = None
        for raw in values:
            v = raw.value
            common = type(v) is dict
            if common:
                typ = v.get("type", undefined)
                rid = v.get("id", undefined)
                parent = v.get("parentId", undefined)
                stamp = v.get("timestamp", undefined)
                common = (
                    type(typ) is str
                    and typ != "session"
                    and typ != "label"
                    and type(rid) is str
                    and is_hex8(rid)
                    and (parent is None or (type(parent) is str and is_hex8(parent)))
                    and type(stamp) is str
                    and (packed_stamp := pack_timestamp(stamp)) is not None
                )
            role: Any = undefined
            tokens: Any = 0
            usage: Any = None
            flags = tokens_int
            if common and typ == "message":
                msg = v.get("message")
                common = type(msg) is dict
                if common:
                    role = msg.get("role", undefined)
                    try:
                        tokens = estimate_tokens(msg)
                        usage = assistant_usage_tokens(msg) if role == "assistant" else None
                    except JsTypeError:
                        tokens = None  # the general path keeps the error as the value
                    if type(tokens) is not int or not -exact <= tokens <= exact:
                        common = False
                    elif usage is not None:
                        if type(usage) is int and -exact <= usage <= exact:
                            flags |= usage_int
                        elif type(usage) is float:
                            flags |= usage_float
                        else:
                            common = False
                    if common and may_hold(msg):
                        flags |= file_op_candidate
                        known_ops = ops_of(msg)
            if not common or packed_stamp is None:
                known_ops = None  # (the general path finds them again)
                index_value(raw)
                continue
            code = codes.get(typ)
            if code is None:
                code = codes[typ] = symbol(typ)
            if type(role) is str:
                known = codes.get(role)
                role_code = codes[role] = symbol(role) if known is None else known
            else:
                role_code = symbol(role)  # 0 for undefined
            lines(raw.line)
            offsets(raw.offset)
            lengths(raw.length)
            types(code)
            roles(role_code)
            ids(int(rid, 16))
            parents(null_id if parent is None else int(parent, 16))
            stamps(packed_stamp)
            tokens_col(tokens)
            usage_col(0.0 if usage is None else usage)
            if known_ops is not None:
                add_ops(len(t.flags), known_ops)
                known_ops = None
            flags_col(flags)
        self._children = None

    def _load_common_compiled(self, values: Iterable[RawValue | LineRun]) -> None:
        """`_load_common` with the common case in C: the same columns, the rest through `_add_record`
        (a LineRun's lines are parsed there, each as reader.values_of_run would)."""
        t = self.records
        columns = [getattr(t, name) for name in COLUMNS]

        def flush(data: tuple[bytes, ...], ops: tuple[bytes, bytes, bytes] | None) -> None:
            # COLUMNS' bytes; ops: file_op_index's columns of these rows (rows counted from the first)
            if ops is not None:
                t.file_ops.extend_scanned(len(t.flags), *ops, BULK_HELPER)
            for column, chunk in zip(columns, data, strict=True):
                column.frombytes(chunk)

        BULK_HELPER.index_common(
            values,
            self._index_value,
            flush,
            t.symbol,
            TOKENS_INT,
            USAGE_SET | USAGE_INT,
            FILE_OP_CANDIDATE,
            ID_NULL,
            LineRun,
            RawValue,
            orjson.loads,
            orjson.JSONDecodeError,
            self._index_line,
            *t.file_ops.intern_tables(),
        )
        self._children = None

    def _load_v1(self, values: Iterable[RawValue], rename_hook: bool) -> None:
        # v1 → v2: every value gets a fresh id and the previous value as parent;
        # compaction.firstKeptEntryIndex counts kept values *including* the header.
        all_vals: list[Any] = [self.header]  # position → record (or header dicts)
        raw_ids: list[Any] = [UNDEFINED]
        forward: list[tuple[EntryRecord, int]] = []
        prev: Any = None
        used: set[str] = set()
        for raw in values:
            v = raw.value
            if type(v) is dict and v.get("type") == "session":
                v["version"] = 3 if rename_hook else 2
                all_vals.append(v)
                raw_ids.append(v.get("id", UNDEFINED))
                self._note_extra_header(raw)
                continue
            if type(v) is not dict and type(v) is not list:
                kind = {str: "string", bool: "boolean"}.get(type(v), "number")
                raise SessionLoadError(f"Cannot create property 'id' on {kind} '{js_string(v)}'", raw.line)
            raw_ids.append(v.get("id", UNDEFINED) if type(v) is dict else UNDEFINED)
            new_id = new_entry_id(lambda c: c in used)
            used.add(new_id)
            patch: dict[str, Any] = {"id": new_id, "parentId": prev}
            if type(v) is dict:
                v["id"] = new_id
                v["parentId"] = prev
                if v.get("type") == "compaction" and "firstKeptEntryIndex" in v:
                    idx = v["firstKeptEntryIndex"]
                    if type(idx) in (int, float):
                        patch["fk"] = idx
                        del v["firstKeptEntryIndex"]
            prev = new_id
            rec = self._add_record(raw, rename_hook, patch)
            assert rec is not None
            if "fk" in patch:
                idx = patch["fk"]
                if type(idx) is int or (type(idx) is float and idx.is_integer()):
                    i = int(idx)
                    if i == len(all_vals):  # the compaction itself: its id is already assigned
                        patch["fkId"] = new_id
                        v["firstKeptEntryId"] = new_id
                    elif 0 <= i < len(all_vals):
                        target = all_vals[i]
                        if isinstance(target, EntryRecord):
                            patch["fkId"] = target.id
                            v["firstKeptEntryId"] = target.id
                    elif i > len(all_vals):
                        forward.append((rec, i))
            all_vals.append(rec)
            self._index_record(rec, bulk=True)
        for rec, i in forward:
            # a forward index points at a value that has no assigned id yet: its raw id, if any
            if i < len(all_vals) and isinstance(all_vals[i], EntryRecord) and raw_ids[i] is not UNDEFINED:
                assert rec.patch is not None
                rec.patch["fkId"] = raw_ids[i]
                if rec.value is not None:
                    rec.value["firstKeptEntryId"] = raw_ids[i]
        self._note_tail()

    def _note_tail(self) -> None:
        self.partial_tail = any(i.kind == "no_final_newline" for i in self.issues[-2:])

    def _index_record(self, rec: EntryRecord, bulk: bool = False) -> None:
        """Add a record to byId, the leaf and the labels (`bulk`: byId is rebuilt at the end)."""
        i = rec.index
        if bulk:
            self.by_id.add_other(i)
        else:
            self.by_id.add(i)
        self._children = None
        if i in self.records.label_facts:
            self._apply_labels((i,))
        if not bulk:
            self.leaf_id = rec.id

    def _finish_bulk(self) -> None:
        """After records were added with bulk=True: byId over all of them, and the leaf."""
        self.by_id.rebuild(BULK_HELPER)
        self.leaf_id = self.records.id_of(len(self.records) - 1) if len(self.records) else None

    # ------------------------------------------------------------------ values
    def value(self, index: int) -> Any:
        """The entry value as pi holds it after migration (re-read if not kept)."""
        rec = self.records[index]
        if rec.value is not None:
            return rec.value
        with self._reopen() as fh:
            return self._reread(fh, rec)

    def values(self, indices: Iterable[int]) -> list[Any]:
        """Many values at once, reading the file sequentially when they are not in memory."""
        idx = list(indices)
        out: list[Any] = [None] * len(idx)
        missing = []
        t = self.records
        kept, offsets = t.values, t.offsets
        in_memory = t.virtual_values  # EntryRecord.value's two places, without a record per index
        for j, i in enumerate(idx):
            v = kept[i] if kept is not None else in_memory.get(i)
            if v is None:
                missing.append((offsets[i], j, i))
            else:
                out[j] = v
        if missing:
            missing.sort()
            # values parsed and kept by the thousand make the cyclic GC walk them again and again
            # (2–3× the parse itself on a long path)
            with self._reopen() as fh, gc_paused():
                for j, value in zip(
                    (j for _offset, j, _i in missing),
                    self._reread_sorted(fh, [i for _offset, _j, i in missing]),
                    strict=True,
                ):
                    out[j] = value
        return out

    def _reread_sorted(self, fh: BinaryIO, indices: list[int]) -> Iterator[Any]:
        """The values of records ``indices`` (in file order) re-read from ``fh``, each line parsed and
        checked without a record object (a long path's values are most of the file: the window's
        preparation and token count read them)."""
        t = self.records
        patches, ids, unpack_id = t.patches, t.ids, t.unpack_id
        for i, raw in self._lines_sorted(fh, indices):
            value = _reread_value(raw, patches.get(i))
            if not _is_entry(value, unpack_id(ids[i])):
                raise self._changed_while_reading(
                    f"line {t.lines[i]} is no longer the entry that was indexed"
                )
            yield value

    def _lines_sorted(self, fh: BinaryIO, indices: list[int]) -> Iterator[tuple[int, bytes]]:
        """(record, its line's bytes) for records ``indices`` (in file order) read from ``fh``:
        neighbouring lines in one read of up to REREAD_CHUNK_BYTES; refused where the file no longer
        holds a line whole."""
        t = self.records
        offsets, lengths = t.offsets, t.lengths
        n = len(indices)
        a = 0
        while a < n:
            start = offsets[indices[a]]
            end = start + lengths[indices[a]]
            b = a + 1
            while b < n:
                off = offsets[indices[b]]
                stop = off + lengths[indices[b]]
                if off - end > REREAD_GAP_BYTES or stop - start > REREAD_CHUNK_BYTES:
                    break
                end = stop
                b += 1
            fh.seek(start)
            chunk = fh.read(end - start)
            for i in indices[a:b]:
                lo = offsets[i] - start
                if lo + lengths[i] > len(chunk):
                    raise self._changed_while_reading(f"line {t.lines[i]} is no longer there")
                yield i, chunk[lo : lo + lengths[i]]
            a = b

    def raw_lines(self, indices: Iterable[int]) -> list[bytes]:
        """The bytes of these records' lines in the file (one sequential read)."""
        idx = list(indices)
        out = [b""] * len(idx)
        offsets = self.records.offsets
        order = sorted(range(len(idx)), key=lambda j: offsets[idx[j]])
        if order:
            with self._reopen() as fh:
                for j, (_i, raw) in zip(order, self._lines_sorted(fh, [idx[j] for j in order]), strict=True):
                    out[j] = raw
        return out

    def _read_line(self, fh: BinaryIO, index: int) -> bytes:
        """Record `index`'s stored line (refused if the file no longer holds it whole)."""
        t = self.records
        fh.seek(t.offsets[index])
        raw = fh.read(t.lengths[index])
        if len(raw) != t.lengths[index]:
            raise self._changed_while_reading(f"line {t.lines[index]} is no longer there")
        return raw

    def _changed_while_reading(self, why: str) -> SessionFileError:
        return SessionFileError(f"{self.path}: the file changed while it was being read ({why}); reload it")

    def _reopen(self) -> BinaryIO:
        """The file again, for values not kept in memory; refused if it is no longer the one read."""
        fh = open_regular(self.path)
        fp = self.fingerprint
        if fp is not None:
            st = os.fstat(fh.fileno())
            if (st.st_dev, st.st_ino) != (fp.dev, fp.ino):
                fh.close()
                raise self._changed_while_reading("it was replaced by another file")
        return fh

    def _reread(self, fh: BinaryIO, rec: EntryRecord) -> Any:
        value = _reread_value(self._read_line(fh, rec.index), rec.patch)
        if not _is_entry(value, rec.id):
            raise self._changed_while_reading(f"line {rec.line} is no longer the entry that was indexed")
        return value

    def id_made_on_open(self, index: int) -> bool:
        """Whether record ``index``'s id was made when the file was opened (a version 1 file has no
        ids; the migration makes random ones, as pi's does, so another open, this tool's or pi's,
        gives other ones)."""
        patch = self.records.patches.get(index)
        return patch is not None and "id" in patch

    # ------------------------------------------------------------------ tree
    def get_index(self, entry_id: Any) -> int | None:
        return self.by_id.get(js_key(entry_id))

    def require(self, entry_id: Any) -> int:
        i = self.get_index(entry_id)
        if i is None:
            raise EntryNotFoundError(entry_id)
        return i

    def path_indices(self, start: int | None, *, note_cycle: bool = True) -> list[int]:
        """Indices of the path root → `start` (pi's getBranch), stopping at parent cycles (noted as a
        load issue unless ``note_cycle`` is False: an ancestor lookup, not the path pi builds)."""
        if start is None:
            return []
        if self._made_from is not None:
            return self._virtual_path_indices(start)
        if BULK_HELPER is not None:
            return self._path_indices_compiled(start, note_cycle)
        out = [start]
        seen = {start}
        by_id = self.by_id
        by_code = by_id.by_code
        only_holder = by_id.only_holder
        table = self.records
        parents = table.parents
        ids = table.ids
        cur = start
        while True:
            code = parents[cur]
            nxt: int | None
            if code >= 0:  # an 8-hex id (always truthy)
                if cur > 0 and ids[cur - 1] == code and only_holder(code, cur - 1):
                    nxt = cur - 1  # the parent is the previous line, and nothing else has its id
                else:
                    nxt = by_code(code)
            else:
                nxt = self._parent_by_key(cur)
            if nxt is None:
                break
            if nxt in seen:
                if note_cycle:
                    self._note_cycle(cur)
                break
            seen.add(nxt)
            out.append(nxt)
            cur = nxt
        out.reverse()
        return out

    def _path_indices_compiled(self, start: int, note_cycle: bool = True) -> list[int]:
        """`path_indices` with the walk over 8-hex parents in C; other parents' steps here."""
        table, by_id = self.records, self.by_id
        out = [start]
        seen = bytearray(len(table))
        seen[start] = 1
        cur = start
        while True:
            yield_to_foreground()
            cur, status = BULK_HELPER.walk_parents(
                table.parents, table.ids, by_id.sorted_ids(), by_id.recent, by_id.unique, seen, cur, out
            )
            if status == 0:
                break
            if status == 1:  # a parent that is not an 8-hex id: byId by its key
                nxt = self._parent_by_key(cur)
                if nxt is None:
                    break
                if not seen[nxt]:
                    seen[nxt] = 1
                    out.append(nxt)
                    cur = nxt
                    continue
            if note_cycle:
                self._note_cycle(cur)
            break
        out.reverse()
        return out

    def _parent_by_key(self, index: int) -> int | None:
        """byId's record for the parentId of record `index` when it is not an 8-hex id (None for a
        falsy parentId, a root, or one byId lacks)."""
        pid = self.records.unpack_id(self.records.parents[index])
        return self.by_id.get(js_key(pid)) if js_truthy(pid) else None

    def _note_cycle(self, index: int) -> None:
        rec = self.records[index]
        self.issues.append(
            LoadIssue(
                rec.line,
                rec.offset,
                "cycle",
                f"parentId cycle at entry {rec.id!r}: pi would loop forever here",
                False,
            )
        )

    def _virtual_path_indices(self, start: int) -> list[int]:
        """path_indices of a with_virtual_entries copy: up through its own entries here, then the
        rest by the session it was made from (whose records these are, in C where it is built)."""
        assert self._made_from is not None
        base, n = self._made_from
        chain: list[int] = []
        cur: int | None = start
        while cur is not None and cur >= n and cur not in chain:  # (a cycle ends the path, as there)
            chain.append(cur)
            cur = self._parent_by_key(cur)  # byId by the parentId, whatever kind of id it is
        if cur is None or cur >= n:
            head: list[int] = []
        elif self._known_path is not None and self._known_path[-1] == cur:
            head = self._known_path
        else:
            head = base.path_indices(cur, note_cycle=False)
        return [*head, *reversed(chain)]

    def leaf_index(self, leaf_id: Any = CURRENT_LEAF) -> int | None:
        """The record getBranch starts from (`leaf_id` as given, or the session's leaf)."""
        lid = self.leaf_id if leaf_id is CURRENT_LEAF else leaf_id
        if not js_truthy(lid):
            return None
        return self.by_id.get(js_key(lid))

    def children(self, entry_id: Any) -> list[int]:
        """pi's getChildren: entries whose parentId is `entry_id`, in file order."""
        if self._children is None:
            ch: dict[Any, list[int]] = {}
            for r in self.records:
                ch.setdefault(js_key(r.parent_id), []).append(r.index)
            self._children = ch
        return self._children.get(js_key(entry_id), [])

    def label_of(self, entry_id: Any) -> str | None:
        lab = self.labels.get(js_key(entry_id))
        return lab[0] if lab else None

    def session_name(self) -> str | None:
        """pi's getSessionName: the last session_info (any branch); blank clears."""
        # found in the type column (a C-level search from its end): most sessions have none, and a
        # walk back over 100k records for it was the window's longest step when a big session was shown
        last = self.records.last_of_type("session_info")
        if last is None:
            return None
        name = self.value(last).get("name")
        if isinstance(name, str) and name.strip():
            return name.strip()
        return None

    def entries(self) -> list[Any]:
        """pi's getEntries(): every kept non-header value after migration."""
        return self.values(range(len(self.records)))

    def with_virtual_entries(
        self, entries: list[dict[str, Any]], *, known_path: list[int] | None = None
    ) -> Session:
        """A copy of this session with `entries` appended in memory (for previews: the context or
        the plan pi makes once they are written). Nothing is written anywhere.

        The copy reads this session's index columns and keeps only its own entries
        (RecordTable.with_tail): copying the columns was 72 MB and ~50 ms on a 900k-entry session,
        at each preview of a summary. Its paths are walked through its own entries, then by this
        session (path_indices), as its columns are not arrays a compiled walk can take.
        `known_path`: this session's path_indices of the path's last record, walked already (a
        compaction preview's: the draft's path). A path of the copy that enters this session at that
        record starts with it rather than a second walk: its int objects were 5.6 MB of the preview
        of a 209k-entry path. Ignored on a copy of a copy.
        """
        import copy

        clone = copy.copy(self)
        clone.records = self.records.with_tail()
        clone._made_from = (self, len(self.records)) if self._made_from is None else self._made_from
        clone._known_path = known_path if self._made_from is None and known_path else self._known_path
        clone.by_id = self.by_id.for_table(clone.records)
        clone.labels = dict(self.labels)
        clone.issues = list(self.issues)
        clone._children = None
        for e in entries:
            rec = clone._add_record(RawValue(-1, -1, 0, e), False)
            if rec is not None:
                clone.records.virtual_values[rec.index] = e
                clone._index_record(rec)
        return clone

    # ------------------------------------------------------------------ live
    def refresh(self) -> list[int]:
        """Index lines appended since the last read; returns the new record indices.

        Raises SessionLoadError if the file is no longer the one read (replaced by
        another file, shorter, or its indexed bytes changed, e.g. migrated by pi):
        the caller must reopen it from scratch.
        """
        fd = open_regular_fd(self.path)
        with os.fdopen(fd, "rb") as fh:
            return self._refresh_from(fh)

    def _refresh_from(self, fh: BinaryIO) -> list[int]:
        st = os.fstat(fh.fileno())
        if self.fingerprint is not None:
            why = still_prefix(fh.fileno(), self.fingerprint)
            if why is not None:
                raise SessionLoadError(f"{why}: it is not the file that was read; reopen it")
        elif st.st_size < self.size:
            raise SessionLoadError("the file became shorter: it was rewritten; reopen it")
        if st.st_size == self.size:
            return []
        if self.reset or self.migrated:
            raise SessionLoadError("pi rewrote or will rewrite this file; reopen it")
        start = self.size
        if self.partial_tail:
            # the last line had no newline yet: pi may have been mid-write; read it again
            tail = next(i for i in reversed(self.issues) if i.kind == "no_final_newline")
            start = tail.offset
            self.issues = [i for i in self.issues if i.offset < start]
            if self.records and self.records[-1].offset >= start:
                self.records.pop()
                self._reindex_all()
        line = self._line_at(fh, start)
        new_issues: list[LoadIssue] = []
        first_new = len(self.records)
        bulk = self.records.values is None  # a big file: the bulk loader, then byId in file order
        values = iter_values(fh, new_issues, start, line, runs=_bulk_runs(not bulk))
        if bulk:
            self._load_common(values)
            table = self.records
            for i in range(first_new, len(table)):
                self.by_id.add(i)
            if len(table) > first_new:
                self.leaf_id = table.id_of(len(table) - 1)
        else:
            for raw in expand_runs(values):
                rec = self._add_record(raw, False)
                if rec is not None:
                    self._index_record(rec)
        self.size = fh.tell()
        self.issues = self.issues + new_issues
        self._note_tail()
        self._took_fingerprint(fh.fileno())
        return list(range(first_new, len(self.records)))

    def _line_at(self, fh: BinaryIO, offset: int) -> int:
        """The 1-based line number of the line starting at `offset`."""
        base_line, base_off = (self.records[-1].line, self.records[-1].offset) if self.records else (1, 0)
        fh.seek(base_off)
        gap = fh.read(offset - base_off)
        return base_line + gap.count(b"\n")

    def _reindex_all(self) -> None:
        self.labels.clear()
        for i in range(len(self.records)):
            self._index_record(EntryRecord(self.records, i), bulk=True)
        self._finish_bulk()


def _reread_value(raw: bytes, patch: dict[str, Any] | None) -> Any:
    """A re-read line's value as the index holds it: parsed, with its migration patch applied."""
    value, _, _ = parse_line(raw)
    if patch and type(value) is dict:
        if "id" in patch:
            value["id"] = patch["id"]
            value["parentId"] = patch["parentId"]
            if "fk" in patch:
                value.pop("firstKeptEntryIndex", None)
                if "fkId" in patch:
                    value["firstKeptEntryId"] = patch["fkId"]
        if patch.get("hook"):
            value["message"]["role"] = "custom"
    return value


def _is_entry(value: Any, entry_id: Any) -> bool:
    """Whether a re-read value is still the entry indexed with ``entry_id`` (the file not rewritten)."""
    if value is None:
        return False
    return entry_id is UNDEFINED or (type(value) is dict and value.get("id", UNDEFINED) == entry_id)


def _bulk_runs(keep: bool) -> bool:
    """Whether a load's values go to the compiled loader, which reads LineRuns (iter_values' `runs`)."""
    return BULK_HELPER is not None and not keep


def _watched(
    values: Iterator[RawValue | LineRun],
    total: int,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> Iterator[RawValue | LineRun]:
    for n, raw in enumerate(values):
        if n % 2048 == 0 or type(raw) is LineRun:  # a run: up to a MB of lines
            if cancel is not None and cancel():
                from .errors import LoadCancelled

                raise LoadCancelled("loading was cancelled")
            if progress is not None:
                progress(raw.offset, total)
        yield raw
    if progress is not None:
        progress(total, total)


#: Files from this size are indexed by two processes (see Session.open).
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: ... from this size also in a process where other Python threads run: the second process is then a
#: fresh interpreter (forking a multi-threaded process may deadlock the child on a lock another
#: thread held), which costs ~0.2 s of interpreter start and imports before it can help
SPAWNED_PARALLEL_MIN_BYTES = 64 * 1024 * 1024


def indexed_in_children(size: int) -> bool:
    """Whether ``Session.open(..., others_need_the_gil=True)`` indexes a current-format file of ``size``
    bytes (not cached) in new interpreters, this thread only waiting on their pipes: it does not
    compete with the other threads for the GIL until the parts are merged at the end."""
    return _scan_start_method(size, None, size <= KEEP_VALUES_MAX_BYTES, True) == "fresh"


def _scan_start_method(
    size: int, parallel: bool | None, keep: bool, others_need_the_gil: bool = False
) -> str | None:
    """How to start the process that indexes the second half of a file, or None for one process.

    `parallel`: True/False forces it on or off; None decides by the size. `others_need_the_gil`:
    "fresh" from PARALLEL_MIN_BYTES on (both halves in new interpreters, see _open_parallel)."""
    if keep or parallel is False:
        return None
    can_spawn = can_start_helpers()
    if others_need_the_gil and can_spawn and (parallel or size >= PARALLEL_MIN_BYTES):
        return "fresh"
    alone = threading.active_count() == 1
    if alone and hasattr(os, "fork") and (parallel or size >= PARALLEL_MIN_BYTES):
        return "fork"
    # a new interpreter runs the worker module (not multiprocessing's spawn, which runs the
    # parent's __main__ again); a frozen app has no interpreter to start
    if (parallel or size >= SPAWNED_PARALLEL_MIN_BYTES) and can_spawn:
        return "fresh"
    return None


def _start_scan(method: str, path: str, start: int, end: int | None) -> tuple[Any, Any]:
    """Start the process that indexes [start, end) of `path` (`end` None: to the end of the file):
    (the connection its table comes through, the process: terminate() and join())."""
    from multiprocessing.connection import Connection

    if method == "fork":
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_scan_worker, args=(path, start, end, send), daemon=True)
        proc.start()
        send.close()
        return recv, proc
    import subprocess

    rfd, wfd = os.pipe()
    bound = "" if end is None else str(end)
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "session_studio.core.scan_worker", path, str(start), bound, str(wfd)],
            pass_fds=(wfd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        run_behind(child.pid)
    except BaseException:
        os.close(rfd)
        raise
    finally:
        os.close(wfd)
    return Connection(rfd, writable=False), _Child(child)


class _Child:
    """A worker started with subprocess, with the two calls _open_parallel makes of a Process."""

    def __init__(self, popen: Any) -> None:
        self._popen = popen

    def terminate(self) -> None:
        self._popen.terminate()

    def join(self) -> None:
        self._popen.wait()


def _split_point(fh: BinaryIO, size: int) -> int | None:
    """Offset just after the first newline past the middle of the file."""
    if size < 2:
        return None
    fh.seek(size // 2)
    while True:
        chunk = fh.read(1 << 20)
        if not chunk:
            return None
        nl = chunk.find(b"\n")
        if nl >= 0:
            pos = fh.tell() - len(chunk) + nl + 1
            fh.seek(0)
            return pos if pos < size else None


#: a scan process reports how far it got about this often (seconds)
SCAN_PROGRESS_SECONDS = 0.05


def _scan_worker(path: str, start: int, end: int | None, conn: Any) -> None:
    """Index [start, end) of a file (in another process); send its record table back.

    Sends ("progress", bytes done) now and then, then ("done", table without columns, issues, the
    offset it stopped at, newlines read) and the columns (RecordTable.column_bytes)."""
    issues: list[LoadIssue] = []
    part = Session(path, None, RecordTable(False), issues, None, False, False, 0, False)
    lines_read: list[int] = []

    def reported(values: Iterator[RawValue | LineRun]) -> Iterator[RawValue | LineRun]:
        clock = time.monotonic
        due = clock() + SCAN_PROGRESS_SECONDS
        for n, raw in enumerate(values, 1):
            if (n % 256 == 0 or type(raw) is LineRun) and clock() >= due:
                conn.send(("progress", raw.offset - start))
                due = clock() + SCAN_PROGRESS_SECONDS
            yield raw

    with open(path, "rb") as fh:
        # a later header becomes an issue
        part._load(
            reported(iter_values(fh, issues, start, 1, end, lines_read, runs=_bulk_runs(False))), False
        )
        size = fh.tell()
    conn.send(("done", part.records.without_columns(), issues, size, lines_read[0] if lines_read else 0))
    for data in part.records.column_bytes():
        conn.send_bytes(data)
        del data
    conn.close()


def _scan_result(conn: Any) -> tuple[Any, ...]:
    """The ("done", …) message of a scan process (its progress reports passed over: the half read
    here reports the progress)."""
    while True:
        msg = conn.recv()
        if msg[0] == "done":
            return tuple(msg[1:])


def _scan_results(
    conns: list[Any],
    starts: list[int],
    size: int,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> list[tuple[Any, ...]]:
    """The ("done", …) messages of scan processes that index the file from ``starts`` on (each to the
    next one's start, the last to the end), waiting on all of them at once: progress is the bytes
    before the first start and the sum of their reports; `cancel` is asked between them."""
    from multiprocessing.connection import wait

    done_bytes = [0] * len(conns)
    results: list[tuple[Any, ...] | None] = [None] * len(conns)
    waiting = dict(enumerate(conns))
    while waiting:
        if cancel is not None and cancel():
            from .errors import LoadCancelled

            raise LoadCancelled("loading was cancelled")
        for ready in wait(list(waiting.values()), timeout=0.1):
            k = conns.index(ready)
            msg = conns[k].recv()
            if msg[0] == "done":
                results[k] = tuple(msg[1:])
                done_bytes[k] = msg[3] - starts[k]  # where it stopped
                del waiting[k]  # its columns stay in the pipe until they are merged in order
            else:
                done_bytes[k] = msg[1]
            if progress is not None:
                progress(starts[0] + sum(done_bytes), size)
    return [r for r in results if r is not None]


class _Once:
    """A callable that calls ``fn`` (if any) the first time it is called, and does nothing after."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], None] | None) -> None:
        self.fn = fn

    def __call__(self) -> None:
        fn, self.fn = self.fn, None
        if fn is not None:
            fn()


def _first_line_end(fh: BinaryIO, limit: int) -> int | None:
    """The offset just after the file's first newline, if it comes before `limit` (and within the
    first MiB: a header line is a few hundred bytes)."""
    fh.seek(0)
    first = fh.readline(min(limit, 1 << 20))
    fh.seek(0)
    return len(first) if first.endswith(b"\n") and len(first) < limit else None
