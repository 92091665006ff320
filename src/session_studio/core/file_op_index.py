"""The file operations of the messages the index read, kept with it so that a long history's
preparation need not parse those lines again.

A compaction's file lists come from every read/write/edit tool call of the messages it
summarises (spec §6.3). On a long path with no compaction (automatic compaction off) that is one
message in six of 100k: re-reading and parsing their lines was most of a cached ``plan``'s time.
The index sees each such message once, while it reads the file; it keeps here what
``FileOps.add_from_message`` would add for it, in call order, as a flat tuple
``(kind, path, kind, path, ...)`` (``kind``: an index into file_ops.FILE_OP_TOOLS). A record the
index could not settle (a pi 1.6.0 tool result's nested calls, whose reading depends on the pi
profile; a value the compiled scanner was unsure of) has no entry and is read again as before.

The store is columnar, like the record table (a few bytes a record, not a tuple each): the
records with known operations in ascending order, the end of each one's operations in
``codes``, and each operation as ``path code << 2 | kind``.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .file_ops import FileOps

__all__ = ["FileOpIndex", "KnownOps"]

#: a record's operations: (kind, path, kind, path, ...), kind an index into FILE_OP_TOOLS
KnownOps = tuple[Any, ...]

_KIND_BITS = 2
_KIND_MASK = 3


class FileOpIndex:
    """Record index → its messages' file operations (see the module doc)."""

    __slots__ = ("_path_codes", "codes", "ends", "paths", "records")

    def __init__(self) -> None:
        self.records = array("q")
        self.ends = array("q")
        self.codes = array("Q")
        self.paths: list[str] = []
        self._path_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.records)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FileOpIndex):
            return NotImplemented
        return len(self) == len(other) and all(
            r == o and self.get(r) == other.get(o) for r, o in zip(self.records, other.records, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def add(self, record: int, ops: KnownOps) -> None:
        """Record ``record``'s operations (records are added in ascending order)."""
        if self.records and record <= self.records[-1]:
            raise ValueError("file operations are added in record order")
        codes = self.codes
        path_codes = self._path_codes
        for k in range(0, len(ops), 2):
            path = ops[k + 1]
            code = path_codes.get(path)
            if code is None:
                code = path_codes[path] = len(self.paths)
                self.paths.append(path)
            codes.append(code << _KIND_BITS | ops[k])
        self.records.append(record)
        self.ends.append(len(codes))

    def get(self, record: int) -> KnownOps | None:
        """``record``'s operations, or None when the index does not know them."""
        k = self.positions([record])[0]
        if k is None:
            return None
        out: list[Any] = []
        for code in self._codes_at(k):
            out.append(code & _KIND_MASK)
            out.append(self.paths[code >> _KIND_BITS])
        return tuple(out)

    def positions(self, records: Sequence[int]) -> list[int | None]:
        """Where each of ``records`` is in the store (for add_to), None where it is not; fastest in
        ascending order (a path's records mostly are: each search starts at the one before)."""
        mine = self.records
        n = len(mine)
        out: list[int | None] = []
        lo = 0
        for r in records:
            if lo and mine[lo - 1] >= r:
                lo = 0
            k = bisect_left(mine, r, lo)
            if k < n and mine[k] == r:
                out.append(k)
                lo = k + 1
            else:
                out.append(None)
                lo = k
        return out

    def add_to(self, positions: Sequence[int], ops: FileOps) -> None:
        """Add the operations of the records at ``positions`` (in that order) to ``ops``, as
        add_from_message would."""
        sets = (ops.read, ops.written, ops.edited)  # FILE_OP_TOOLS' order
        paths, codes, ends = self.paths, self.codes, self.ends
        for k in positions:
            for code in codes[ends[k - 1] if k else 0 : ends[k]]:
                sets[code & _KIND_MASK][paths[code >> _KIND_BITS]] = None

    def _codes_at(self, k: int) -> array[int]:
        return self.codes[self.ends[k - 1] if k else 0 : self.ends[k]]

    def pop_record(self, record: int) -> None:
        """Forget ``record`` (the table dropped its last record)."""
        if self.records and self.records[-1] == record:
            self.records.pop()
            self.ends.pop()
            end = self.ends[-1] if self.ends else 0
            del self.codes[end:]

    def copy(self) -> FileOpIndex:
        c = FileOpIndex()
        c.records = array("q", self.records)
        c.ends = array("q", self.ends)
        c.codes = array("Q", self.codes)
        c.paths = list(self.paths)
        c._path_codes = dict(self._path_codes)
        return c

    def extend_from(self, other: FileOpIndex, base: int) -> None:
        """Append ``other``'s records (of a table appended at record ``base``)."""
        if not other.records:
            return
        remap = []
        for p in other.paths:
            code = self._path_codes.get(p)
            if code is None:
                code = self._path_codes[p] = len(self.paths)
                self.paths.append(p)
            remap.append(code)
        shift = len(self.codes)
        if self.records and other.records[0] + base <= self.records[-1]:
            raise ValueError("file operations are added in record order")
        self.records.extend(r + base for r in other.records)
        self.ends.extend(e + shift for e in other.ends)
        self.codes.extend(remap[c >> _KIND_BITS] << _KIND_BITS | c & _KIND_MASK for c in other.codes)

    # ------------------------------------------------------------ the compiled scanner's form
    def intern_tables(self) -> tuple[list[str], dict[str, int]]:
        """The paths and their codes, which the compiled loader (session.BULK_HELPER) extends."""
        return self.paths, self._path_codes

    def extend_scanned(self, base: int, rows: bytes, ends: bytes, codes: bytes, helper: Any) -> None:
        """The compiled loader's columns of a flushed chunk: rows counted from record ``base``, ends
        counted from the chunk's first operation, codes from intern_tables."""
        n, shift = len(self.records), len(self.codes)
        self.records.frombytes(rows)
        self.ends.frombytes(ends)
        self.codes.frombytes(codes)
        helper.add_to_tail(self.records, n, base)
        helper.add_to_tail(self.ends, n, shift)

    # ------------------------------------------------------------ the index cache's form
    def columns(self) -> tuple[array[int], array[int], array[int]]:
        return self.records, self.ends, self.codes

    @classmethod
    def restore(
        cls, paths: list[str], records: array[int], ends: array[int], codes: array[int]
    ) -> FileOpIndex:
        """A store from its cached columns (ValueError if they do not fit together; like the table's
        columns, their order is the cache's own, written whole and checked by its key)."""
        c = cls()
        if len(records) != len(ends) or (ends and ends[-1] != len(codes)):
            raise ValueError("the cached file operations do not fit together")
        if any(type(p) is not str for p in paths) or (codes and max(codes) >> _KIND_BITS >= len(paths)):
            raise ValueError("a cached file operation names no path")
        c.records, c.ends, c.codes = records, ends, codes
        c.paths = paths
        c._path_codes = {p: k for k, p in enumerate(paths)}
        return c
