"""The session index as compact columns, and the records as light views over them.

A 1 GB session holds ~900k entries; one Python object per entry with a dozen
attributes (plus its id, parent id and timestamp strings) costs ~900 bytes each.
Here every fact lives in an `array` column (~90 bytes an entry in all):

* line, offset, length of the entry's line;
* type and role as codes into a small table of the distinct values seen;
* id and parent id packed: pi's 8-hex-digit ids as their number, `undefined`,
  `null` and anything else (uuids, numbers, objects…) as negative codes into a list;
* the timestamp as its 24 ASCII bytes (pi's ISO form; other values aside);
* token estimate and usage tokens as doubles, with flags saying int/float/None/error.

`EntryRecord` is a view (table, index) made on demand with the attributes the
planner reads; `IdIndex` is pi's `byId` map over the id column: a sorted array
of (id << 32 | index) for the 8-hex ids, a dict for the rest and for the few
records appended after the bulk load. Values are exactly those of the former
per-entry objects (the oracle tests compare them with pi's).
"""

from __future__ import annotations

import bisect
import itertools
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import Any, overload

from .file_op_index import FileOpIndex, KnownOps
from .jsvalue import UNDEFINED, JsTypeError, js_key
from .tokens import assistant_usage_tokens, estimate_tokens

__all__ = [
    "COLUMNS",
    "ID_ITEM_BYTES",
    "ID_NULL",
    "ID_UNDEFINED",
    "EntryRecord",
    "IdIndex",
    "RecordTable",
    "RecordsAt",
    "column_on_path",
    "find_code",
    "indexes_of",
    "last_on_path",
    "message_facts",
    "pack_timestamp",
    "records_at",
    "unpack_timestamp",
]

#: the array columns of a table
COLUMNS = (
    "lines",
    "offsets",
    "lengths",
    "types",
    "roles",
    "ids",
    "parents",
    "tokens",
    "usage",
    "flags",
    "timestamps",
)
_HEX_DIGITS = "0123456789abcdef"
#: the id column's codes of a missing and a null id (other ids: see RecordTable.pack_id)
ID_UNDEFINED = -1
ID_NULL = -2
ID_ITEM_BYTES = 8  # an id column's item (array "q"), as find_code reads it
#: the timestamp column's value of a record whose timestamp is kept in `objects`
_TS_NONE = -1

#: flag bits of a record
TOKENS_INT = 1  # the token estimate is an int (else a float, e.g. NaN)
TOKENS_OBJECT = 2  # the token estimate is kept in `objects` (a JsTypeError, or an int too big for a double)
USAGE_SET = 4  # usage tokens is a number (else None)
USAGE_INT = 8
USAGE_OBJECT = 16  # usage kept in `objects` (an int too big for a double)
TIMESTAMP_OBJECT = 32  # the timestamp is not pi's ISO form: kept in `objects`
ERROR = 64  # reading message.role throws: the error is the token value (in `objects`)
#: a message that may hold a file operation (file_ops.may_hold_file_op): a long history parses only
#: these lines for its file lists
FILE_OP_CANDIDATE = 128
#: flags masked by these are TOKENS_INT exactly where the estimate is an int in `tokens` and reading
#: the message throws nothing (what pi writes: the planners' column paths take those records)
INT_ESTIMATE_FLAGS = ERROR | TOKENS_OBJECT | TOKENS_INT

_DOUBLE_EXACT = 2**53


def message_facts(value: Any) -> tuple[Any, Any, Any, JsTypeError | None]:
    """(role, tokens, usage tokens, error) of a message entry's value, as pi computes them."""
    msg = value.get("message", UNDEFINED)
    if msg is None or msg is UNDEFINED:
        what = "null" if msg is None else "undefined"
        error = JsTypeError(f"Cannot read properties of {what} (reading 'role')")
        return UNDEFINED, error, None, error
    role = msg.get("role", UNDEFINED) if type(msg) is dict else UNDEFINED
    tokens: Any
    try:
        tokens = estimate_tokens(msg)
    except JsTypeError as e:
        tokens = e
    try:
        usage = assistant_usage_tokens(msg)
    except JsTypeError:
        usage = None
    return role, tokens, usage, None


def _is_hex8(v: str) -> bool:
    """Whether a str is pi's id form, 8 lowercase hex digits (without a regex call: once per entry)."""
    return len(v) == 8 and not v.strip(_HEX_DIGITS)


def pack_timestamp(stamp: str) -> int | None:
    """pi's ISO timestamp ("2025-10-19T22:39:25.412Z", what `new Date().toISOString()` writes)
    as the int of its 17 digits; None for any other string (kept as it is, in `objects`).

    Only the layout is checked, not the calendar: any such string comes back exactly
    (`unpack_timestamp`), and the ints sort as the strings do. `_bulkindex.c` packs the same way.
    """
    if (
        len(stamp) == 24
        and stamp[4] == "-"
        and stamp[7] == "-"
        and stamp[10] == "T"
        and stamp[13] == ":"
        and stamp[16] == ":"
        and stamp[19] == "."
        and stamp[23] == "Z"
    ):
        digits = (
            stamp[0:4] + stamp[5:7] + stamp[8:10] + stamp[11:13] + stamp[14:16] + stamp[17:19] + stamp[20:23]
        )
        # isascii + isdigit: 0-9 only (int() would also take other scripts' digits)
        if digits.isascii() and digits.isdigit():
            return int(digits)
    return None


def unpack_timestamp(packed: int) -> str:
    """The timestamp `pack_timestamp` packed."""
    d = f"{packed:017d}"
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:17]}Z"


class RecordTable(Sequence["EntryRecord"]):
    """The records of a session, column by column (see the module doc)."""

    def __init__(self, keep_values: bool = False) -> None:
        self.lines = array("q")
        self.offsets = array("q")
        self.lengths = array("q")
        self.types = array("I")
        self.roles = array("I")
        self.ids = array("q")
        self.parents = array("q")
        #: pi's ISO timestamps as their 17 digits, one int ("2025-10-19T22:39:25.412Z" →
        #: 20251019223925412): 8 bytes a record instead of the string's 24 (issue 11)
        self.timestamps = array("q")
        self.tokens = array("d")
        self.usage = array("d")
        self.flags = array("B")
        #: distinct type/role values; code 0 is `undefined`
        self.symbols: list[Any] = [UNDEFINED]
        self._symbol_codes: dict[Any, int] = {}
        #: ids that are not 8 hex digits (code -3 - k is ids_other[k])
        self.ids_other: list[Any] = []
        self._other_codes: dict[str, int] = {}
        #: per record, what the columns cannot hold (see the flag bits): index → (field → value)
        self.objects: dict[int, dict[str, Any]] = {}
        #: v1 migration patches and hookMessage renames: index → patch
        self.patches: dict[int, dict[str, Any]] = {}
        #: label records: index → (targetId, label, timestamp) as pi's label map reads them
        self.label_facts: dict[int, tuple[Any, Any, Any]] = {}
        #: the parsed values (small files only)
        self.values: list[Any] | None = [] if keep_values else None
        #: values of records that exist only in memory (previews of entries not written yet)
        self.virtual_values: dict[int, Any] = {}
        #: the file operations of the FILE_OP_CANDIDATE records the index could settle
        self.file_ops = FileOpIndex()

    # ------------------------------------------------------------ encoding
    def symbol(self, v: Any) -> int:
        if v is UNDEFINED:
            return 0
        try:
            key = (type(v), v)
            code = self._symbol_codes.get(key)
        except TypeError:  # an object or array as `type`: never equal to another one
            self.symbols.append(v)
            return len(self.symbols) - 1
        if code is None:
            code = self._symbol_codes[key] = len(self.symbols)
            self.symbols.append(v)
        return code

    def pack_id(self, v: Any) -> int:
        if type(v) is str:
            if _is_hex8(v):
                return int(v, 16)
            code = self._other_codes.get(v)
            if code is None:
                code = self._other_codes[v] = -3 - len(self.ids_other)
                self.ids_other.append(v)
            return code
        if v is UNDEFINED:
            return ID_UNDEFINED
        if v is None:
            return ID_NULL
        self.ids_other.append(v)
        return -2 - len(self.ids_other)

    def unpack_id(self, code: int) -> Any:
        if code >= 0:
            return f"{code:08x}"
        if code == ID_UNDEFINED:
            return UNDEFINED
        if code == ID_NULL:
            return None
        return self.ids_other[-3 - code]

    # ------------------------------------------------------------ building
    def append(
        self,
        line: int,
        offset: int,
        length: int,
        typ: Any,
        rid: Any,
        parent: Any,
        timestamp: Any,
        role: Any = UNDEFINED,
        tokens: Any = 0,
        usage: Any = None,
        error: JsTypeError | None = None,
        value: Any = None,
        file_op: bool = False,
        known_ops: KnownOps | None = None,
    ) -> int:
        """Add one record; returns its index (``file_op``: see FILE_OP_CANDIDATE; ``known_ops``:
        its message's operations, file_ops.message_file_ops, if they are settled)."""
        i = len(self.flags)
        self.lines.append(line)
        self.offsets.append(offset)
        self.lengths.append(length)
        self.types.append(self.symbol(typ))
        self.roles.append(self.symbol(role))
        self.ids.append(self.pack_id(rid))
        self.parents.append(self.pack_id(parent))
        flags = 0
        extra: dict[str, Any] | None = None
        packed = pack_timestamp(timestamp) if type(timestamp) is str else None
        if packed is not None:
            self.timestamps.append(packed)
        else:
            self.timestamps.append(_TS_NONE)
            flags |= TIMESTAMP_OBJECT
            extra = {"timestamp": timestamp}
        t = type(tokens)
        if t is int and -_DOUBLE_EXACT <= tokens <= _DOUBLE_EXACT:
            self.tokens.append(tokens)
            flags |= TOKENS_INT
        elif t is float:
            self.tokens.append(tokens)
        else:
            self.tokens.append(0.0)
            flags |= TOKENS_OBJECT
            extra = extra or {}
            extra["tokens"] = tokens
        u = type(usage)
        if usage is None:
            self.usage.append(0.0)
        elif u is int and -_DOUBLE_EXACT <= usage <= _DOUBLE_EXACT:
            self.usage.append(usage)
            flags |= USAGE_SET | USAGE_INT
        elif u is float:
            self.usage.append(usage)
            flags |= USAGE_SET
        else:
            self.usage.append(0.0)
            flags |= USAGE_SET | USAGE_OBJECT
            extra = extra or {}
            extra["usage"] = usage
        if error is not None:
            flags |= ERROR
            extra = extra or {}
            extra["error"] = error
        if file_op:
            flags |= FILE_OP_CANDIDATE
            if known_ops is not None:
                self.file_ops.add(i, known_ops)
        self.flags.append(flags)
        if extra is not None:
            self.objects[i] = extra
        if self.values is not None:
            self.values.append(value)
        return i

    def pop(self, index: int = -1) -> EntryRecord:
        """Remove the last record (the only one refresh ever drops)."""
        n = len(self.flags)
        if index not in (-1, n - 1) or n == 0:
            raise IndexError("only the last record can be removed")
        rec = self[n - 1]
        for name in COLUMNS:
            getattr(self, name).pop()
        for side in (self.objects, self.patches, self.label_facts, self.virtual_values):
            side.pop(n - 1, None)
        self.file_ops.pop_record(n - 1)
        if self.values is not None:
            self.values.pop()
        return rec

    def with_tail(self) -> RecordTable:
        """A table that reads this one's records and appends its own after them (previews of entries
        not written yet): its columns are TailedColumns over this table's, so nothing of the index
        is copied (a copy of the columns was 72 MB on a 900k-entry session). Its columns are sequences, not
        arrays: only for reads by index, slice and ``tobytes`` (no compiled walk takes them)."""
        c = RecordTable.__new__(RecordTable)
        c.__dict__.update(self.__dict__)
        for name in COLUMNS:
            setattr(c, name, TailedColumn(getattr(self, name)))
        c.symbols = list(self.symbols)
        c._symbol_codes = dict(self._symbol_codes)
        c.ids_other = list(self.ids_other)
        c._other_codes = dict(self._other_codes)
        c.objects = dict(self.objects)
        c.patches = dict(self.patches)
        c.label_facts = dict(self.label_facts)
        c.values = None if self.values is None else list(self.values)
        c.virtual_values = dict(self.virtual_values)
        c.file_ops = self.file_ops.copy()
        return c

    def without_columns(self) -> RecordTable:
        """This table's side tables with empty columns (the columns travel apart, see column_bytes)."""
        c = RecordTable.__new__(RecordTable)
        c.__dict__.update(self.__dict__)
        for name in COLUMNS:
            setattr(c, name, array(getattr(self, name).typecode))
        c.values = None
        return c

    def column_bytes(self) -> Iterator[bytes]:
        """Each column's bytes in COLUMNS order."""
        for name in COLUMNS:
            yield getattr(self, name).tobytes()

    def extend_from(
        self,
        other: RecordTable,
        line_shift: int,
        columns: Iterator[bytes] | None = None,
        helper: Any = None,
    ) -> None:
        """Append `other`'s records (indexed by another process from a later part of the file).

        `columns`: `other`'s column bytes (column_bytes() order) when `other` came without
        them, so that only one column at a time is held twice. `helper`: the compiled loader
        helper (session.BULK_HELPER) shifts the line numbers in C.
        """
        base = len(self.flags)
        sym = [self.symbol(v) for v in other.symbols]
        same_symbols = sym == list(range(len(sym)))
        source = columns if columns is not None else other.column_bytes()
        others = other.ids_other
        for name, data in zip(COLUMNS, source, strict=True):
            col = getattr(self, name)
            col.frombytes(data)
            del data
            if name == "lines" and line_shift:
                if helper is not None:
                    helper.add_to_tail(col, base, line_shift)
                else:
                    _map_tail(col, base, lambda x: x + line_shift)
            elif name in ("types", "roles") and not same_symbols:
                _map_tail(col, base, sym.__getitem__)
            elif name in ("ids", "parents") and others:
                # only the codes of ids that are not 8 hex digits change (a map of the whole half
                # through a lambda was ~0.75 s of merging the 1 GB session's halves)
                for i in _negative_positions(col, base):
                    code = col[i]
                    if code < -2:
                        col[i] = self.pack_id(others[-3 - code])
        for mine, other_side in (
            (self.objects, other.objects),
            (self.patches, other.patches),
            (self.label_facts, other.label_facts),
        ):
            for k, v in other_side.items():
                mine[k + base] = v  # type: ignore[assignment]
        self.file_ops.extend_from(other.file_ops, base)
        if self.values is not None:
            self.values.extend(other.values or [None] * len(other))

    # ------------------------------------------------------------ reading
    def __eq__(self, other: object) -> bool:
        if isinstance(other, RecordTable | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.flags)

    @overload
    def __getitem__(self, i: int) -> EntryRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[EntryRecord]: ...
    def __getitem__(self, i: int | slice) -> EntryRecord | list[EntryRecord]:
        n = len(self.flags)
        if type(i) is int and 0 <= i < n:  # the common case first: the planner's loops
            return EntryRecord(self, i)
        if isinstance(i, slice):
            return [EntryRecord(self, j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("record index out of range")
        return EntryRecord(self, i)

    def __iter__(self) -> Iterator[EntryRecord]:
        return map(EntryRecord, itertools.repeat(self), range(len(self.flags)))

    def __reversed__(self) -> Iterator[EntryRecord]:
        for i in range(len(self.flags) - 1, -1, -1):
            yield EntryRecord(self, i)

    # column lookups for the loops that visit every record (no view per record)
    def code(self, symbol: str) -> int:
        """The type/role code of a string value, -1 if no record has it."""
        return self._symbol_codes.get((str, symbol), -1)

    def id_code(self, v: str) -> int | None:
        """The id column's code of a string id, None if no record has it."""
        if _is_hex8(v):
            return int(v, 16)
        return self._other_codes.get(v)

    def records_with_id(self, code: int) -> list[int]:
        """Every record whose id column holds ``code``, in file order (searched in the column's
        bytes: a path's ids gathered to find one cost ~25 ms on the 1 GB session's path)."""
        out: list[int] = []
        for start, raw in _column_parts(self.ids):
            at, end = 0, len(raw) // ID_ITEM_BYTES
            while (k := find_code(raw, code, at, end)) >= 0:
                out.append(start + k)
                at = k + 1
        return out

    def first_of_type(self, symbol: str) -> int | None:
        return _first(self.types, self.code(symbol))

    def last_of_type(self, symbol: str) -> int | None:
        """The last record of this type: found from the end of the type column's bytes (a C-level
        search; array.index makes a Python int of every item it passes, ~30 ms on 900k records)."""
        code = self.code(symbol)
        if code < 0:
            return None
        data = self.types.tobytes()
        item = self.types.itemsize
        pattern = array(self.types.typecode, [code]).tobytes()
        end = len(data)
        while (k := data.rfind(pattern, 0, end)) >= 0:
            if k % item == 0:
                return k // item
            end = k + item - 1  # a match across two items: look before where it starts
        return None

    def first_with_role(self, role: str) -> int | None:
        """The first message record with this role (only messages have a role)."""
        return _first(self.roles, self.code(role))

    def indices_of_types(self, symbols: tuple[str, ...], end: int | None = None, start: int = 0) -> list[int]:
        types = self.types
        stop = len(types) if end is None else min(end, len(types))
        out: list[int] = []
        for code in {self.code(x) for x in symbols} - {-1}:  # found by array.index: C-level scans
            i = start - 1
            try:
                while True:
                    i = types.index(code, i + 1, stop)
                    out.append(i)
            except ValueError:
                pass
        out.sort()
        return out

    def type_of(self, i: int) -> Any:
        return self.symbols[self.types[i]]

    def id_of(self, i: int) -> Any:
        return self.unpack_id(self.ids[i])

    def timestamp_of(self, i: int) -> Any:
        if self.flags[i] & TIMESTAMP_OBJECT:
            return self.objects[i]["timestamp"]
        return unpack_timestamp(self.timestamps[i])

    def tokens_of(self, i: int) -> Any:
        f = self.flags[i]
        if f & TOKENS_INT:
            return int(self.tokens[i])
        if f & TOKENS_OBJECT:
            return self.objects[i]["tokens"]
        return self.tokens[i]

    def usage_of(self, i: int) -> Any:
        f = self.flags[i]
        if not f & USAGE_SET:
            return None
        if f & USAGE_INT:
            return int(self.usage[i])
        if f & USAGE_OBJECT:
            return self.objects[i]["usage"]
        return self.usage[i]


class TailedColumn(Sequence[Any]):
    """A column of RecordTable.with_tail: its base column's items up to the length the base had,
    then items of its own. The base is only read: its table's owner may append to it on another
    thread meanwhile, and the items it gains are not this column's."""

    __slots__ = ("_base", "_n", "_tail")

    def __init__(self, base: array[Any]) -> None:
        self._base = base
        self._n = len(base)
        self._tail: array[Any] = array(base.typecode)

    @property
    def typecode(self) -> str:
        return self._tail.typecode

    @property
    def itemsize(self) -> int:
        return self._tail.itemsize

    def __len__(self) -> int:
        return self._n + len(self._tail)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> array[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return array(self.typecode, [self[k] for k in range(*i.indices(len(self)))])
        if i < 0:
            i += len(self)
        if 0 <= i < self._n:
            return self._base[i]
        if i < 0:
            raise IndexError("column index out of range")
        return self._tail[i - self._n]

    def __iter__(self) -> Iterator[Any]:
        return itertools.chain(itertools.islice(self._base, self._n), self._tail)

    def append(self, value: Any) -> None:
        self._tail.append(value)

    def pop(self) -> Any:
        return self._tail.pop()

    def on_path(self, path: Sequence[int]) -> tuple[Any, ...]:
        """column_on_path of this column: the base's items gathered in one C call (a call of
        __getitem__ per item was ~4x slower on a long path), then this column's own put in place."""
        if len(path) < 2:
            return tuple(self[i] for i in path)
        n = self._n
        own = [k for k, i in enumerate(path) if i >= n]  # the few records of its own
        if len(own) == len(path):
            return tuple(self._tail[i - n] for i in path)
        if not own:
            return tuple(itemgetter(*path)(self._base))
        base_path = list(path)
        for k in own:
            base_path[k] = 0  # a stand-in the base has (n > 0 here), overwritten below
        values = list(itemgetter(*base_path)(self._base))
        for k in own:
            values[k] = self._tail[path[k] - n]
        return tuple(values)

    def parts(self) -> list[tuple[int, bytes]]:
        """(first index, bytes) of the base's items and of this column's own."""
        raw = self._base.tobytes()
        size = self._n * self.itemsize
        return [(0, raw if len(raw) == size else raw[:size]), (self._n, self._tail.tobytes())]

    def tobytes(self) -> bytes:
        return b"".join(raw for _start, raw in self.parts())


def _column_parts(column: array[int] | TailedColumn) -> list[tuple[int, bytes]]:
    """A column's bytes as (first index, bytes) parts: an array's whole, a TailedColumn's base and
    tail apart (joined, they were one more copy of the base)."""
    if isinstance(column, TailedColumn):
        return column.parts()
    return [(0, column.tobytes())]


class RecordsAt(Sequence["EntryRecord"]):
    """The records of ``table`` at ``indices`` (a path), each made when asked for: a list of them
    held one object per entry (12 MB on the 1 GB session's 209k-entry active path, next to the
    path's own list of indices)."""

    __slots__ = ("_indices", "_table")

    def __init__(self, table: RecordTable, indices: Sequence[int]) -> None:
        self._table = table
        self._indices = indices

    @property
    def table(self) -> RecordTable:
        return self._table

    @property
    def indices(self) -> Sequence[int]:
        """The records' indices in the table, in path order."""
        return self._indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, k: int) -> EntryRecord: ...
    @overload
    def __getitem__(self, k: slice) -> list[EntryRecord]: ...
    def __getitem__(self, k: int | slice) -> EntryRecord | list[EntryRecord]:
        if isinstance(k, slice):
            return [EntryRecord(self._table, i) for i in self._indices[k]]
        return EntryRecord(self._table, self._indices[k])

    def __iter__(self) -> Iterator[EntryRecord]:
        table = self._table
        return (EntryRecord(table, i) for i in self._indices)


def records_at(records: Sequence[EntryRecord], indices: Sequence[int]) -> Sequence[EntryRecord]:
    """``[records[i] for i in indices]``, made on access where ``records`` is a table."""
    if isinstance(records, RecordTable):
        return RecordsAt(records, indices)
    return [records[i] for i in indices]


class EntryRecord:
    """What the index knows about one entry (a kept, non-header value): a view of a table row."""

    __slots__ = ("_table", "index")

    def __init__(self, table: RecordTable, index: int) -> None:
        self._table = table
        self.index = index

    @property
    def line(self) -> int:
        return self._table.lines[self.index]

    @property
    def offset(self) -> int:
        return self._table.offsets[self.index]

    @property
    def length(self) -> int:
        return self._table.lengths[self.index]

    @property
    def type(self) -> Any:
        t = self._table
        return t.symbols[t.types[self.index]]

    @property
    def role(self) -> Any:
        t = self._table
        return t.symbols[t.roles[self.index]]

    @property
    def id(self) -> Any:
        return self._table.unpack_id(self._table.ids[self.index])

    @property
    def parent_id(self) -> Any:
        return self._table.unpack_id(self._table.parents[self.index])

    @property
    def timestamp(self) -> Any:
        return self._table.timestamp_of(self.index)

    @property
    def tokens(self) -> Any:
        """estimateTokens(message) for message entries (int, nan, or the JsTypeError pi would throw)."""
        return self._table.tokens_of(self.index)

    @property
    def usage_tokens(self) -> Any:
        """calculateContextTokens of valid assistant usage (§4.3), else None."""
        return self._table.usage_of(self.index)

    @property
    def error(self) -> JsTypeError | None:
        """The TypeError pi throws reading `entry.message.role` (message missing), else None."""
        t = self._table
        if t.flags[self.index] & ERROR:
            err: JsTypeError = t.objects[self.index]["error"]
            return err
        return None

    @property
    def value(self) -> Any:
        """The parsed value if kept in memory (small files), else None (re-read through the session)."""
        t = self._table
        if t.values is None:
            return t.virtual_values.get(self.index)
        return t.values[self.index]

    @property
    def patch(self) -> dict[str, Any] | None:
        return self._table.patches.get(self.index)

    @property
    def is_message(self) -> bool:
        return bool(self.type == "message")

    def token_value(self) -> int | float:
        """The token estimate, raising where pi would throw."""
        t = self.tokens
        if isinstance(t, JsTypeError):
            raise t
        return t  # type: ignore[no-any-return]

    def facts(self) -> tuple[Any, ...]:
        """The index fields, as one tuple (to compare two indexes of the same file)."""
        return (
            self.line,
            self.offset,
            self.length,
            self.type,
            self.id,
            self.parent_id,
            self.timestamp,
            self.role,
            self.tokens,
            self.usage_tokens,
            self.error,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EntryRecord) and other._table is self._table and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self._table), self.index))

    def __repr__(self) -> str:
        return f"<EntryRecord #{self.index} line {self.line} {self.type!r} {self.id!r}>"


class IdIndex:
    """pi's `byId` (id → the last record with it) over a table's id column.

    Keys are `js_key(id)`. The 8-hex ids of the bulk load live in one sorted array of
    (id << 32 | index); other ids, and records added after `rebuild`, in dicts.
    """

    def __init__(self, table: RecordTable) -> None:
        self._table = table
        self._sorted = array("Q")
        self._recent: dict[int, int] = {}  # packed 8-hex id → index, added since rebuild
        self._other: dict[Any, int] = {}  # js_key → index for every other id
        #: no 8-hex id occurs twice in the sorted array
        self._unique = True

    def rebuild(self, helper: Any = None) -> None:
        """Index every record of the table again (after a bulk load, or a removal); `helper`:
        the compiled loader helper (session.BULK_HELPER) sorts the ids in C (~1 s of Python at 1 GB)."""
        if helper is not None:
            ids = self._table.ids
            self._sorted = array("Q", [0]) * len(ids)
            count, self._unique = helper.sort_ids(ids, self._sorted)
            del self._sorted[count:]
        else:
            self._sorted = _sorted_ids(self._table.ids)
            self._unique = _no_repeats(self._sorted)
        self._index_others()

    def _index_others(self) -> None:
        """`_other` from the table's ids that are not 8 hex digits (negative codes); `_recent` empty."""
        ids = self._table.ids
        unpack = self._table.unpack_id
        self._recent = {}
        self._other = {}
        for i in _negative_positions(ids):
            self._other[js_key(unpack(ids[i]))] = i

    @property
    def recent(self) -> dict[int, int]:
        """Packed 8-hex id → record, for ids indexed since the sorted array was built."""
        return self._recent

    @property
    def unique(self) -> bool:
        """No 8-hex id occurs twice in the sorted array."""
        return self._unique

    def sorted_ids(self) -> array[int]:
        """The sorted (id << 32 | index) array of the ids indexed by the last rebuild (later ones are
        in `recent`): for the index cache and the compiled parent walks."""
        return self._sorted

    def restore(self, sorted_ids: array[int], unique: bool) -> None:
        """Take a cached sorted array (of this table's ids, `unique` as `rebuild` found it)."""
        self._sorted = sorted_ids
        self._unique = unique
        self._index_others()

    def add(self, index: int) -> None:
        c = self._table.ids[index]
        if c >= 0:
            self._recent[c] = index
        else:
            self._other[js_key(self._table.unpack_id(c))] = index

    def add_other(self, index: int) -> None:
        """During a bulk load: index a record now only if its id is not 8 hex digits."""
        c = self._table.ids[index]
        if c < 0:
            self._other[js_key(self._table.unpack_id(c))] = index

    def copy(self) -> IdIndex:
        c = IdIndex(self._table)
        c._sorted = self._sorted  # never changed in place: rebuild makes a new one
        c._unique = self._unique
        c._recent = dict(self._recent)
        c._other = dict(self._other)
        return c

    def for_table(self, table: RecordTable) -> IdIndex:
        """This index over a copy of its table (same records)."""
        c = self.copy()
        c._table = table
        return c

    def only_holder(self, code: int, index: int) -> bool:
        """True if record `index`, whose id is `code`, is certainly the one byId maps it to
        (no other record has that id): lets a path walk skip the lookup for a parent that
        is the previous line, as it nearly always is."""
        return self._unique and code not in self._recent

    def by_code(self, code: int) -> int | None:
        """The record of a packed 8-hex id."""
        i = self._recent.get(code)
        if i is not None:
            return i
        s = self._sorted
        k = bisect.bisect_right(s, (code << 32) | 0xFFFFFFFF) - 1
        if k >= 0 and s[k] >> 32 == code:
            return s[k] & 0xFFFFFFFF
        return None

    def get(self, key: Any, default: int | None = None) -> int | None:
        i = self.by_code(int(key, 16)) if type(key) is str and _is_hex8(key) else self._other.get(key)
        return default if i is None else i

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key: Any) -> int:
        i = self.get(key)
        if i is None:
            raise KeyError(key)
        return int(i)

    def _all(self) -> dict[Any, int]:
        out: dict[Any, int] = {}
        for packed in self._sorted:
            out[f"{packed >> 32:08x}"] = packed & 0xFFFFFFFF
        for c, i in self._recent.items():
            out[f"{c:08x}"] = i
        out.update(self._other)
        return out

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())

    def items(self) -> Any:
        return self._all().items()


def indexes_of(values: Sequence[Any], value: Any) -> Iterator[int]:
    """Each index of ``value`` in ``values``, in order, each found by ``.index`` (a C-level scan:
    a gathered column of a long path is mostly other values)."""
    k = -1
    while True:
        try:
            k = values.index(value, k + 1)
        except ValueError:
            return
        yield k


def column_on_path(column: Sequence[Any], path: Sequence[int]) -> tuple[Any, ...]:
    """A column's values of the path's records, gathered in one C call (paths are long: a scan
    of the tuple with .index is several times faster than a Python loop over the path)."""
    if len(path) < 2:
        return tuple(column[i] for i in path)
    if isinstance(column, TailedColumn):
        return column.on_path(path)
    values: tuple[Any, ...] = itemgetter(*path)(column)
    return values


def last_on_path(records: RecordTable, path: Sequence[int], type_name: str) -> int:
    """The position on ``path`` of its last entry of type ``type_name``, or -1 (pi's
    getLatestCompactionEntry, by position): the path's types gathered and searched from the end
    in C, not walked in Python (a path of 900k entries without a compaction)."""
    code = records.code(type_name)
    if code < 0 or not path:
        return -1
    types = column_on_path(records.types, path)
    try:
        return len(types) - 1 - types[::-1].index(code)
    except ValueError:
        return -1


def find_code(column_bytes: bytes, code: int, start: int, end: int) -> int:
    """The first item in ``start:end`` of an id column (``array("q")``, given as its bytes) that is
    ``code``, or -1. An 8-hex id is searched by its four low bytes: the whole item's four zero bytes
    would make ``find`` crawl (~15 ms per search in 7 MB)."""
    item = ID_ITEM_BYTES
    whole = code.to_bytes(item, sys.byteorder, signed=True)
    if 0 <= code < 1 << 32:
        part_at = 0 if sys.byteorder == "little" else item - 4
        part = code.to_bytes(4, sys.byteorder)
    else:
        part_at, part = 0, whole
    end_byte = end * item
    pos = column_bytes.find(part, start * item + part_at, end_byte)
    while pos >= 0:
        at = pos - part_at
        if at % item == 0 and column_bytes[at : at + item] == whole:
            return at // item
        pos = column_bytes.find(part, pos + 1, end_byte)
    return -1


def _negative_positions(ids: array[int], start: int = 0) -> Iterator[int]:
    """The positions from `start` on of negative codes in an id column, in order, found by C-level
    byte searches.

    Codes are 8-hex ids (0 ≤ c < 2**32) or small negatives (null, undefined, -3 - k): the most
    significant byte of each 8-byte item is 0x00 for the first and 0xFF for the others. Read a
    slice at a time (copies, not a memoryview, which would keep another thread from growing the
    session's column meanwhile), without a min() over the column first (45 ms on 900k ids).
    """
    top_at = 7 if sys.byteorder == "little" else 0
    for lo in range(start, len(ids), _MAP_CHUNK):
        top = ids[lo : lo + _MAP_CHUNK].tobytes()[top_at::8]
        i = top.find(0xFF)
        while i >= 0:
            yield lo + i
            i = top.find(0xFF, i + 1)


def _no_repeats(sorted_ids: array[int]) -> bool:
    """True if no id occurs twice among sorted (id << 32 | index) values."""
    previous = -1
    for packed in sorted_ids:
        hi = packed >> 32
        if hi == previous:
            return False
        previous = hi
    return True


#: how many items of a column `_map_tail` maps at a time
_MAP_CHUNK = 65536


def _map_tail(column: array[int], start: int, f: Callable[[int], int]) -> None:
    """column[start:] = map(f, column[start:]), a chunk at a time: the whole tail as a list of
    ints cost ~36 bytes an item at once (16 MB for half the 1 GB session's lines), most of it
    left to the allocator's free lists afterwards."""
    for lo in range(start, len(column), _MAP_CHUNK):
        hi = min(lo + _MAP_CHUNK, len(column))
        column[lo:hi] = array(column.typecode, map(f, column[lo:hi]))


def _first(column: array[int], code: int) -> int | None:
    if code < 0:
        return None
    try:
        return column.index(code)
    except ValueError:
        return None


def _sorted_ids(ids: array[int]) -> array[int]:
    """(id << 32 | index) of the 8-hex ids, sorted: bucketed by the id's top byte first, so
    at most 1/256 of them are Python ints at a time (a list of all would cost ~40 MB at 1 GB)."""
    buckets = [array("Q") for _ in range(256)]
    for i, c in enumerate(ids):
        if c >= 0:
            buckets[c >> 24].append((c << 32) | i)
    out = array("Q")
    for b in buckets:
        out.extend(array("Q", sorted(b)))
    return out
