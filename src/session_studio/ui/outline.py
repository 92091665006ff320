"""Session tree → display rows, the way pi's ``/tree`` shows it (no Qt here).

Single-child chains are flattened: a chain of entries is listed at one level and
only a branch point (an entry with several visible children) opens a nested group
whose rows are the chains of each child, one after another. The active path is
never indented: at a branch point it continues at the same level and only the
side branches open a nested group under the branch point. Each row knows its
group and its row number, so the Qt model's ``parent()`` and ``index()`` are O(1).

Filters hide entries; a hidden entry's children hang off its nearest visible
ancestor, so the branch structure stays readable with any filter.
"""

from __future__ import annotations

import itertools
import sys
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence, Set
from functools import cmp_to_key
from typing import Any

from session_studio.core import session as session_module
from session_studio.core.jsdate import js_date_ms
from session_studio.core.jsvalue import UNDEFINED, JsTypeError, js_key, js_stringify, js_truthy
from session_studio.core.priority import yield_to_foreground
from session_studio.core.record_table import ID_ITEM_BYTES, TIMESTAMP_OBJECT, column_on_path, find_code
from session_studio.core.session import Session

from .pi16 import is_retain_none

__all__ = [
    "FILTERS",
    "MAX_EXTENDED_RECORDS",
    "NOT_SHOWN",
    "PREVIEW_CHARS",
    "ROOT",
    "Outline",
    "build_outline",
    "entry_visible",
    "extended_outline",
]

#: The group key of the top level.
ROOT = -1
#: The group column's value for a record the outline does not show.
NOT_SHOWN = -2

#: pi's /tree filter modes (label → key).
FILTERS: dict[str, str] = {
    "default": "Default",
    "no-tools": "No tools",
    "user-only": "User only",
    "labeled-only": "Labeled only",
    "usage": "Default + usage entries",
    "all": "All entries",
}

#: pi 1.6.0 keeps `usage` entries out of its tree (spec §10.1 rule 1): only the "usage" filter shows them
_DEFAULT_HIDDEN = frozenset({"label", "custom", "session_info", "usage"})

#: bits of an outline's per-record flags
_ACTIVE = 1
_HEAD = 2
_LAST_CHAIN = 4
#: bytes.translate table keeping only the active bit (a new outline takes the old one's path)
_ONLY_ACTIVE = bytes(b & _ACTIVE for b in range(256))
#: extended_outline takes at most this many new records (each costs a scan of the id columns)
MAX_EXTENDED_RECORDS = 64
#: ... and renumbers at most this many rows after a chain it extends (a loop here per row)
MAX_SHIFTED_ROWS = 50_000


def entry_visible(session: Session, index: int, mode: str) -> bool:
    """Whether pi's /tree filter ``mode`` shows the entry."""
    rec = session.records[index]
    if mode == "all":
        return True
    if mode == "labeled-only":
        return session.label_of(rec.id) is not None
    if mode == "user-only":
        return rec.type == "message" and bool(rec.role == "user")
    if rec.type == "usage":
        return mode == "usage"
    if rec.type in _DEFAULT_HIDDEN:
        return False
    return not (mode == "no-tools" and rec.type == "message" and rec.role == "toolResult")


class RecordColumn(Mapping[int, int]):
    """record → number, read from an outline's column (``absent`` where a record is not shown).

    A dict per record cost ~100 bytes an entry (plus an int object per value); the column costs 4.
    """

    __slots__ = ("_absent", "_column", "_count")

    def __init__(self, column: array[int], absent: int, count: int) -> None:
        self._column = column
        self._absent = absent
        self._count = count

    def get(self, record: int, default: Any = None) -> Any:
        if 0 <= record < len(self._column):
            v = self._column[record]
            if v != self._absent:
                return v
        return default

    def __getitem__(self, record: int) -> int:
        v = self.get(record)
        if v is None:
            raise KeyError(record)
        return int(v)

    def __contains__(self, record: object) -> bool:
        return type(record) is int and self.get(record) is not None

    def last_present(self, records: Sequence[int]) -> int | None:
        """The last of ``records`` with a number here, None if none has (their numbers gathered in
        one C call: ``records`` is a path)."""
        column, absent = self._column, self._absent
        n = len(column)
        inside = [r for r in records if 0 <= r < n] if records and max(records) >= n else records
        for r, v in zip(reversed(inside), reversed(column_on_path(column, inside)), strict=True):
            if v != absent:
                return r
        return None

    def __iter__(self) -> Iterator[int]:
        absent = self._absent
        return (i for i, v in enumerate(self._column) if v != absent)

    def __len__(self) -> int:
        return self._count


class RecordFlags(Set[int]):
    """The records with one bit set in an outline's flag column (a set of records, 1 byte each)."""

    __slots__ = ("_bit", "_count", "_flags")

    def __init__(self, flags: bytearray, bit: int, count: int) -> None:
        self._flags = flags
        self._bit = bit
        self._count = count

    def __contains__(self, record: object) -> bool:
        return (
            type(record) is int and 0 <= record < len(self._flags) and bool(self._flags[record] & self._bit)
        )

    def __iter__(self) -> Iterator[int]:
        bit = self._bit
        return (i for i, f in enumerate(self._flags) if f & bit)

    def __len__(self) -> int:
        return self._count

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        return set(it)


#: nearest_shown walks this many parents record by record before it takes the whole path in C (the
#: path of the 1 GB session's leaf is 209k entries: ~18 ms to walk and gather)
NEAR_STEPS = 32


class Outline:
    """Display rows of a session tree (record indices), grouped by branch point.

    Columnar (issue 11: the window's memory): the rows of each group are an ``array``, and per
    record a group column, a row column and a byte of flags (active path, chain head, last chain);
    ``group_of``, ``row_of``, ``heads``, ``last_chain`` and ``active`` read them like the dicts and
    sets they replace.
    """

    def __init__(self, size: int = 0) -> None:
        self.groups: dict[int, array[int]] = {}  # group key → records in row order
        self._group = array("i", [NOT_SHOWN]) * size
        self._row = array("i", [-1]) * size
        self._flags = bytearray(size)
        self._expose(0)

    def _expose(self, shown: int) -> None:
        flags = self._flags
        self.group_of = RecordColumn(self._group, NOT_SHOWN, shown)  # record → group key
        self.row_of = RecordColumn(self._row, -1, shown)  # record → row in its group
        counts = [0, 0, 0]
        if flags:
            for n_bit, bit in enumerate((_ACTIVE, _HEAD, _LAST_CHAIN)):
                counts[n_bit] = len(flags) - flags.translate(bytes(b & bit for b in range(256))).count(0)
        self.active = RecordFlags(flags, _ACTIVE, counts[0])  # records on the active path
        self.heads = RecordFlags(flags, _HEAD, counts[1])  # first row of a child chain
        self.last_chain = RecordFlags(flags, _LAST_CHAIN, counts[2])  # rows in the last chain of their group
        #: how deep the deepest group is nested (0: every row at the top level); the view indents
        #: less where it is deep
        self.max_depth = self._deepest()

    def _deepest(self) -> int:
        """The nesting of the deepest group: a group's rows sit one level below the group its
        branch point is a row of."""
        group = self._group
        depth: dict[int, int] = {ROOT: 0}
        deepest = 0
        for g in self.groups:
            chain: list[int] = []
            cur = g
            while cur not in depth and len(chain) <= len(self.groups):
                chain.append(cur)
                up = group[cur] if 0 <= cur < len(group) else ROOT
                cur = ROOT if up == NOT_SHOWN else up
            d = depth.get(cur, 0)
            for key in reversed(chain):
                d += 1
                depth[key] = d
            deepest = max(deepest, depth[g])
        return deepest

    def __len__(self) -> int:
        return len(self.group_of)

    def rows(self, group: int) -> array[int]:
        return self.groups.get(group, array("i"))

    def contains(self, record: int) -> bool:
        return record in self.group_of

    def nearest_shown(self, session: Session, record: int) -> int | None:
        """``record`` if shown, else its nearest shown ancestor (for keeping a selection): the last
        shown entry of the path to it, walked and looked up in C (after a search that leaves out the
        selected entry of a long path and its ancestors, a walk record by record froze the window
        ~1 s on 100k of them)."""
        group_of = self.group_of
        seen: set[int] = set()
        cur: int | None = record
        for _ in range(NEAR_STEPS):  # a selection is mostly shown, or a step or two below a shown entry
            if cur is None or cur in seen:
                return None
            if cur in group_of:
                return cur
            seen.add(cur)
            pid = session.records[cur].parent_id
            cur = session.get_index(pid) if js_truthy(pid) else None
        return group_of.last_present(session.path_indices(record, note_cycle=False))


def _date_ms(value: Any) -> float | None:
    try:
        return js_date_ms(value)
    except JsTypeError:
        return None


def _ms_cmp(x: float | None, y: float | None) -> int:
    """pi's comparator ``getTime(a) - getTime(b)``: a NaN difference counts as equal."""
    if x is None or y is None or x == y:
        return 0
    return -1 if x < y else 1


#: records linked to their parents per call of the compiled helper (~3 ms)
LINK_SLICE = 1 << 16
#: records read per slice where a whole column's copy would be megabytes (_code_mask, _branch_points)
MASK_SLICE = 1 << 16


def _parents(session: Session) -> array[int]:
    """Each record's parent record as pi's getTree links it (-1: a root), from the id columns."""
    records = session.records
    by_id = session.by_id
    helper = session_module.BULK_HELPER
    if helper is None:
        return _parents_python(session)
    # the 8-hex parents in C (the same byId rules), a slice at a time: each call holds the GIL (the
    # columns are the session's, which pi's appends may extend meanwhile) and 900k records took
    # ~50 ms, a stall of the window's GUI thread while a worker built the outline; the few others here
    n = len(records)
    out = array("i", [-1]) * n
    columns = (records.parents, records.ids, by_id.sorted_ids(), by_id.recent, by_id.unique, out)
    for start in range(0, n, LINK_SLICE):
        helper.link_parents(*columns, start, min(n, start + LINK_SLICE))
    i = -1
    try:
        while True:
            i = out.index(-2, i + 1)
            out[i] = _odd_parent(session, i)
    except ValueError:
        return out


def _odd_parent(session: Session, i: int) -> int:
    """The parent record of record `i`, whose parentId is not an 8-hex id (-1: a root)."""
    records = session.records
    pid = records.unpack_id(records.parents[i])
    if pid is None or not js_truthy(pid) or js_key(pid) == js_key(records.id_of(i)):
        return -1
    p = session.by_id.get(js_key(pid))
    return -1 if p is None or p == i else p


def _parents_python(session: Session) -> array[int]:
    """`_parents` without the compiled helper (the reference it is tested against)."""
    n = len(session.records)
    out = array("i", [-1]) * n
    for i in range(n):
        out[i] = _parent_record(session, i)
    return out


def _parent_record(session: Session, i: int) -> int:
    """Record ``i``'s parent record as pi's getTree links it (-1: a root)."""
    records = session.records
    ids, by_id = records.ids, session.by_id
    code = records.parents[i]
    if code < 0:
        return _odd_parent(session, i)
    if code == ids[i]:
        return -1  # its own id: a root
    # mostly the previous line, when nothing else has its id
    p = i - 1 if i > 0 and ids[i - 1] == code and by_id.only_holder(code, i - 1) else by_id.by_code(code)
    return p if p is not None and p != i else -1


def _children(parent: array[int], n: int) -> tuple[array[int], array[int]]:
    """(first, kids): the children of record p are ``kids[first[p]:first[p + 1]]``, in file order."""
    return _buckets(parent, None, 0, n)


def _buckets(
    keys: array[int], values: array[int] | None, shift: int, buckets: int
) -> tuple[array[int], array[int]]:
    """A counting sort: (first, items), where bucket k holds ``items[first[k]:first[k + 1]]``, in the
    order of ``keys``; item j (``values[j]``, or j without values) goes to bucket ``keys[j] + shift``,
    none if that is negative. In C where the helper is built (two loops over 100k entries in Python
    were ~0.15 s of every outline build)."""
    first = array("i", [0]) * (buckets + 1)
    helper = session_module.BULK_HELPER
    if helper is not None:
        items = array("i", [0]) * len(keys)
        del items[helper.bucket_items(keys, values, shift, first, items) :]
        return first, items
    return _buckets_python(keys, values, shift, first)


def _buckets_python(
    keys: array[int], values: array[int] | None, shift: int, first: array[int]
) -> tuple[array[int], array[int]]:
    """`_buckets` without the compiled helper (the reference it is tested against)."""
    count = first
    for k in keys:
        if k + shift >= 0:
            count[k + shift + 1] += 1
    first = array("i", itertools.accumulate(count))
    fill = array("i", first)
    items = array("i", [0]) * first[-1]
    for j, k in enumerate(keys):
        b = k + shift
        if b >= 0:
            items[fill[b]] = values[j] if values is not None else j
            fill[b] += 1
    return first, items


def _by_time(ms: dict[int, float | None]) -> Callable[[int, int], int]:
    return lambda a, b: _ms_cmp(ms[a], ms[b])


def _sort_siblings_by_time(session: Session, first: array[int], kids: array[int]) -> None:
    """pi's getTree: children sorted by ``new Date(timestamp).getTime()`` ascending (stable; a NaN
    difference compares equal). Only records with several children have anything to sort, and only
    their children's timestamps are read: pi's packed ones by their 17 digits where those are
    certainly a date (the same order), the others parsed as JavaScript does."""
    records = session.records
    stamps, flags = records.timestamps, records.flags
    for p in _branch_points(first):
        lo, hi = first[p], first[p + 1]
        siblings = kids[lo:hi].tolist()
        keys = [_plain_date(stamps[c]) if not flags[c] & TIMESTAMP_OBJECT else None for c in siblings]
        dates = [k for k in keys if k is not None]
        if len(dates) < len(siblings):
            ms = {c: _date_ms(records.timestamp_of(c)) for c in siblings}
            siblings.sort(key=cmp_to_key(_by_time(ms)))
        else:  # every one a valid date: its 17 digits order the siblings as their times do
            order = sorted(range(len(siblings)), key=dates.__getitem__)
            siblings = [siblings[k] for k in order]
        kids[lo:hi] = array("i", siblings)


def _branch_points(first: array[int]) -> Iterable[int]:
    """The records with two children or more (``first``: `_children`'s), in C where it is built
    (a Python loop over every record was ~0.4 s of each outline of the 1 GB session)."""
    helper = session_module.BULK_HELPER
    n = len(first) - 1
    if helper is None:
        return (p for p in range(n) if first[p + 1] - first[p] >= 2)
    # a slice of records at a time: room for every record at once was 3.6 MB at 900k entries, at the
    # window's memory peak while a search is built
    found = array("i")
    room = array("i", [0]) * min(n, MASK_SLICE)
    for start in range(0, n, MASK_SLICE):
        count = helper.branch_points(first[start : start + MASK_SLICE + 1], room)
        found.extend(p + start for p in room[:count])
    return found


def _plain_date(packed: int) -> int | None:
    """A packed timestamp (``YYYYMMDDhhmmssmmm``) whose fields are a date whatever the month
    (day ≤ 28, hour ≤ 23, minutes and seconds ≤ 59): then Date.parse gives a time, and the packed
    ints of two of them compare as their times do. None for any other (parsed the general way)."""
    day_month = packed // 10**9
    if not (1 <= day_month % 100 <= 28 and 1 <= day_month // 100 % 100 <= 12):
        return None
    hms = packed // 1000 % 10**6
    if hms // 10**4 > 23 or hms // 100 % 100 > 59 or hms % 100 > 59:
        return None
    return packed


def _mode_column(session: Session, mode: str) -> bytearray:
    """1 for each record pi's /tree filter ``mode`` shows (what entry_visible says), from the type
    and role columns."""
    records = session.records
    n = len(records)
    if mode == "all":
        return bytearray(b"\x01") * n
    if mode == "labeled-only":
        label_of, id_of = session.label_of, records.id_of
        return bytearray(label_of(id_of(i)) is not None for i in range(n))
    symbols = len(records.symbols)
    message = records.code("message")
    if mode == "user-only":
        user = records.code("user")
        return _both(
            _code_mask(records.types, {message}, symbols), _code_mask(records.roles, {user}, symbols)
        )
    hidden_types = set(_DEFAULT_HIDDEN) - ({"usage"} if mode == "usage" else set())
    hidden = {records.code(t) for t in hidden_types} - {-1}
    show = _code_mask(records.types, {c for c in range(symbols) if c not in hidden}, symbols)
    tool_result = records.code("toolResult")
    if mode == "no-tools" and message >= 0 and tool_result >= 0:
        tool_results = _both(
            _code_mask(records.types, {message}, symbols), _code_mask(records.roles, {tool_result}, symbols)
        )
        return _both(show, _flipped(tool_results))
    return show


def mark_hits(mask: bytearray, records: Iterable[int]) -> None:
    """Set ``mask[i]`` to 1 for each record ``i`` of ``records`` (those outside the mask are ignored):
    a search's matches as a column, n bytes however many match (a set of 58k matches was ~4 MB on the
    1 GB session, of 500k tens of MB)."""
    n = len(mask)
    for i in records:
        if 0 <= i < n:
            mask[i] = 1


def _code_mask(column: array[int], codes: Set[int], symbols: int) -> bytearray:
    """1 for each item of a type or role column (of a table with `symbols` codes) whose code is in
    ``codes``, in bulk: the codes' low bytes through ``bytes.translate`` (a map over 900k codes held
    the GIL ~85 ms: the window's GUI thread stalled while a worker built the outline); a map still
    where a code needs a second byte (over 256 types and roles)."""
    if symbols > 256:
        by_code = bytes(c in codes for c in range(symbols))
        return bytearray(map(by_code.__getitem__, column))
    width = column.itemsize
    table = bytes(c in codes for c in range(256))
    n = len(column)
    out = bytearray(n)
    # copies of a slice at a time, not a memoryview: the column is the session's, which pi's appends
    # may extend on the GUI thread while this runs in a worker (an array exporting its buffer cannot
    # grow); a whole copy and its low bytes were 4.5 MB at 900k entries, at the window's memory peak
    # while a search is built
    for start in range(0, n, MASK_SLICE):
        raw = column[start : start + MASK_SLICE].tobytes()
        low_bytes = raw[::width] if sys.byteorder == "little" else raw[width - 1 :: width]
        out[start : start + len(low_bytes)] = low_bytes.translate(table)
    return out


def _both(a: bytes | bytearray, b: bytes | bytearray) -> bytearray:
    """Byte-wise ``a & b`` of two 0/1 columns, as big-integer operations a slice at a time (whole
    columns were three transient copies); ``len(a)`` items, 0 where ``b`` is shorter."""
    n = len(a)
    out = bytearray(n)
    for start in range(0, n, MASK_SLICE):
        end = min(n, start + MASK_SLICE)
        both = int.from_bytes(a[start:end], "little") & int.from_bytes(b[start:end], "little")
        out[start:end] = both.to_bytes(end - start, "little")
    return out


def _flipped(a: bytes | bytearray) -> bytearray:
    """``1 - a`` for each byte of a 0/1 column."""
    return bytearray(bytes(a).translate(_FLIP))


_FLIP = bytes([1, 0]) + bytes(254)


def _tree_order(
    parent: array[int],
    first: array[int],
    kids: array[int],
    shows: bytearray,
    match: Callable[[int], bool] | None,
    most_shown: int | None = None,
) -> tuple[array[int], array[int]]:
    """The shown records in tree order (pre-order, children in their sorted order), each with its
    nearest shown ancestor (ROOT at the top): a hidden record's children hang off that ancestor.
    `most_shown`: at most this many records can be shown (a search's hits), the room made for them."""
    n = len(parent)
    helper = session_module.BULK_HELPER
    if helper is not None:  # the same walk in C
        room = n if most_shown is None else max(0, min(n, most_shown))
        order, under = array("i", [0]) * room, array("i", [0]) * room
        shown = helper.tree_order(parent, first, kids, shows, match, order, under)
        del order[shown:], under[shown:]
        return order, under
    below = array("i", [ROOT]) * n  # the record if shown, else its nearest shown ancestor
    shown_order = array("i")
    shown_under = array("i")
    seen = bytearray(n)
    stack = [i for i in range(n - 1, -1, -1) if parent[i] < 0]  # roots, file order when popped
    while stack:
        i = stack.pop()
        if seen[i]:
            continue
        seen[i] = 1
        p = parent[i]
        anc = ROOT if p < 0 else below[p]
        if shows[i] and (match is None or match(i)):
            shown_order.append(i)
            shown_under.append(anc)
            anc = i
        below[i] = anc
        lo, hi = first[i], first[i + 1]
        if hi - lo == 1:
            stack.append(kids[lo])
        elif hi > lo:
            stack.extend(reversed(kids[lo:hi]))
    return shown_order, shown_under


def build_outline(
    session: Session,
    mode: str = "default",
    match: Callable[[int], bool] | None = None,
    active_path: Collection[int] | None = None,
    most_matched: int | None = None,
    hits: bytes | bytearray | None = None,
) -> Outline:
    """Flattened display rows of every branch. Iterative: paths can be 100k deep.

    A record is shown if the filter `mode` shows it, `match(i)` is true (when given) and `hits`
    holds 1 at it (when given: a search's matches as a column, see mark_hits; records past its end
    are no matches; in bulk, so the walk runs without the GIL).

    Columnar throughout: the parent, children and visible-children links are ``array`` columns
    (a list or dict per entry cost tens of MB at 100k entries while it was built). `most_matched`:
    at most this many records match (with `hits`, at most those it holds and the mode shows): the
    walk makes room for that many rows, not for every record (7 MB on the 1 GB session, while the
    unsearched outline is kept)."""
    n = len(session.records)
    parent = _parents(session)
    yield_to_foreground()
    first, kids = _children(parent, n)
    yield_to_foreground()
    _sort_siblings_by_time(session, first, kids)
    yield_to_foreground()
    mode_shows = _mode_column(session, mode)
    if hits is not None:
        mode_shows = _both(mode_shows, hits)
        # a search's rows are these at most: the walk makes room for them, not for every record
        matched = mode_shows.count(1)
        most_matched = matched if most_matched is None else min(most_matched, matched)
    yield_to_foreground()

    shown_order, shown_under = _tree_order(parent, first, kids, mode_shows, match, most_matched)
    del parent, first, kids, mode_shows
    yield_to_foreground()

    # visible children of each shown record (slot 0: the roots), in tree order
    vfirst, vkids = _buckets(shown_under, shown_order, 1, n + 1)
    # each column is freed as soon as it is used: a search's outline is built while the shown one
    # is kept, the window's memory peak on big sessions
    shown = len(shown_order)
    del shown_under, shown_order
    yield_to_foreground()

    out = Outline(n)
    flags = out._flags
    if active_path:
        if isinstance(active_path, RecordFlags) and active_path._bit == _ACTIVE:
            old = active_path._flags.translate(_ONLY_ACTIVE)
            flags[: min(n, len(old))] = old[:n]
        else:
            for i in active_path:
                if 0 <= i < n:
                    flags[i] |= _ACTIVE
    _chain_rows(out, vfirst, vkids)
    out._expose(shown)
    return out


def _chain_rows(out: Outline, vfirst: array[int], vkids: array[int]) -> None:
    """The rows of each group of ``out`` (the top level and every shown record with ≥ 2 shown
    children): chains of single children; where a chain forks, the active path continues at its
    level and the other children make a group. In C where the helper is built (~0.1 s of Python
    per 100k entries in every outline build)."""
    helper = session_module.BULK_HELPER
    if helper is None:
        _chain_rows_python(out, vfirst, vkids)
        return
    rows = array("i", [0]) * len(vkids)
    spans: list[tuple[int, int, int]] = []
    helper.chain_rows(
        vfirst, vkids, out._flags, _ACTIVE, _HEAD, _LAST_CHAIN, out._group, out._row, rows, spans
    )
    for key, start, end in spans:
        out.groups[key] = rows[start:end]


def _chain_rows_python(out: Outline, vfirst: array[int], vkids: array[int]) -> None:
    """`_chain_rows` without the compiled helper (the reference it is tested against)."""
    flags = out._flags
    group_col, row_col = out._group, out._row
    # groups: the top level and every visible node with ≥ 2 visible children
    pending: list[tuple[int, list[int]]] = [(ROOT, vkids[vfirst[0] : vfirst[1]].tolist())]
    while pending:
        key, heads = pending.pop()
        rows = array("i")
        multi = len(heads) > 1 or key != ROOT
        last_head = len(heads) - 1
        for h_no, head in enumerate(heads):
            yield_to_foreground()
            last = _LAST_CHAIN if h_no == last_head else 0
            cur = head
            bits = last | (_HEAD if multi else 0)
            while cur >= 0:
                group_col[cur] = key
                row_col[cur] = len(rows)
                rows.append(cur)
                if bits:
                    flags[cur] |= bits
                bits = last
                lo, hi = vfirst[cur + 1], vfirst[cur + 2]
                if hi - lo == 1:
                    cur = vkids[lo]
                elif hi > lo:
                    ch = vkids[lo:hi].tolist()
                    # the active path continues at this level; only side branches are indented
                    act = next((c for c in ch if flags[c] & _ACTIVE), None)
                    if act is not None:
                        pending.append((cur, [c for c in ch if c != act]))
                        cur = act
                    else:
                        pending.append((cur, ch))
                        cur = -1
                else:
                    cur = -1
        out.groups[key] = rows


def extended_outline(
    session: Session, old: Outline, mode: str, active_path: Collection[int]
) -> Outline | None:
    """``build_outline(session, mode, None, active_path)`` from ``old``, the outline of the session's
    first ``len(old)`` records, when the records added since only continue chains at their ends
    (what pi does while it runs: each entry the child of the leaf): a few row appends instead of the
    whole tree again (~0.3 s of a worker holding the GIL per append on 100k entries, 3 s on 900k,
    while the window paints). A new entry /tree hides (a label, a usage entry) adds no row; the
    ones after it hang off its nearest shown ancestor. None where that is not certain, and the
    caller builds it all again: too many new records, a filter whose old rows a new record changes
    (labels) or a search, an odd or duplicate id, a new id an old entry's missing parent was, a new
    root or cycle, an ancestor that has a shown child already (a new branch), an active path that
    is not the old one followed by new records. ``active_path`` as a list (root first) is checked
    in C; any other collection record by record.
    """
    records = session.records
    n_old, n = len(old._group), len(records)
    if not 0 < n - n_old <= MAX_EXTENDED_RECORDS or mode == "labeled-only" or mode not in FILTERS:
        return None
    old_flags = old._flags
    new_active = _new_on_active_path(old, n_old, active_path)
    if new_active is None:
        return None
    yield_to_foreground()
    ids, parents = records.ids, records.parents
    if ids.itemsize != ID_ITEM_BYTES or parents.itemsize != ID_ITEM_BYTES:
        return None
    # the id columns' bytes, searched for one id in C (array's count and index compare objects)
    id_bytes, parent_bytes = ids.tobytes(), parents.tobytes()
    group = old._group[:] + array("i", [NOT_SHOWN]) * (n - n_old)
    row = old._row[:] + array("i", [-1]) * (n - n_old)
    flags = old_flags + bytearray(n - n_old)
    groups = dict(old.groups)
    copied: set[int] = set()  # groups whose rows are this outline's own (not shared with old)
    shown = len(old)
    for i in range(n_old, n):
        yield_to_foreground()
        own = ids[i]
        if (
            not 0 <= own < 1 << 32
            or find_code(id_bytes, own, 0, n) != i
            or find_code(id_bytes, own, i + 1, n) >= 0
            or find_code(parent_bytes, own, 0, n_old) >= 0
        ):
            # an id byId maps elsewhere, or the parent of an old entry that had none until now
            return None
        p = _parent_record(session, i)
        if not 0 <= p < i:
            return None  # a new root (or a parent written later)
        anc = _nearest_shown(session, group, p)
        if anc is None:
            return None  # no shown ancestor (a new top-level row), or a cycle
        if i in new_active:
            flags[i] |= _ACTIVE
        if not entry_visible(session, i, mode):
            continue  # no row (the column says NOT_SHOWN already)
        # the ancestor has no shown child exactly when it ends a chain (the last row of its group, or
        # the next row heads another chain) and has no group of its own: the new entry is then its
        # only one and goes on that chain, after it
        g, at = group[anc], row[anc] + 1
        rows = groups.get(g)
        if rows is None or anc in groups or (at < len(rows) and not flags[rows[at]] & _HEAD):
            return None  # it has shown children already: a new branch
        if len(rows) - at > MAX_SHIFTED_ROWS:
            return None
        if g not in copied:
            rows = groups[g] = rows[:]
            copied.add(g)
        rows.insert(at, i)
        for k in range(at + 1, len(rows)):  # the chains after it move down a row
            row[rows[k]] = k
        group[i], row[i] = g, at
        flags[i] |= flags[anc] & _LAST_CHAIN
        shown += 1
    out = Outline()
    out.groups, out._group, out._row, out._flags = groups, group, row, flags
    out._expose(shown)
    return out


def _nearest_shown(session: Session, group: array[int], record: int, limit: int = 256) -> int | None:
    """``record`` or its nearest ancestor with a row (None: none within ``limit`` steps, a root
    reached, or a cycle)."""
    cur = record
    for _ in range(limit):
        if group[cur] != NOT_SHOWN:
            return cur
        cur = _parent_record(session, cur)
        if cur < 0 or cur == record:
            return None
    return None


def _new_on_active_path(old: Outline, n_old: int, active_path: Collection[int]) -> set[int] | None:
    """The new records on ``active_path`` if it is the old outline's active path followed by new
    records only, else None."""
    m = len(old.active)
    if isinstance(active_path, Sequence):  # a path, root first: its first m records are the old path
        if len(active_path) < m or any(r < n_old for r in active_path[m:]):
            return None
        head = active_path[:m]
        if m and (
            not 0 <= min(head) <= max(head) < n_old
            or bytes(column_on_path(old._flags, head)).translate(_ONLY_ACTIVE).count(0)
        ):
            return None
        return set(active_path[m:])
    old_active = sum(1 for r in active_path if r < n_old and old._flags[r] & _ACTIVE)
    new = {r for r in active_path if r >= n_old}
    return new if old_active == m and len(active_path) == m + len(new) else None


#: a row's preview: the start of its entry's text, what the tree shows and the entry search matches
PREVIEW_CHARS = 160


def preview_text(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A one-line preview of an entry value (first text of the message, or what it is)."""
    if type(value) is not dict:  # a line pi keeps that is no entry object: its JSON, as in the file
        text = js_stringify(value)
        return one_line(text if text is not None else "undefined", limit)
    t = value.get("type")
    text = ""
    if t == "message":
        m = value.get("message")
        if type(m) is not dict:
            return "(damaged message)"
        role = m.get("role")
        if role == "bashExecution":
            text = "$ " + str(m.get("command", ""))
        elif role == "system":
            text = system_preview(m)
        else:
            c = m.get("content")
            if type(c) is str:
                text = c
            elif type(c) is list:
                parts = []
                for b in c:
                    if type(b) is not dict:
                        continue
                    bt = b.get("type")
                    if bt == "text" and isinstance(b.get("text"), str):
                        parts.append(b["text"])
                    elif bt == "toolCall":
                        args = b.get("arguments")
                        arg = ""
                        if type(args) is dict and args:
                            k, v = next(iter(args.items()))
                            # a string as itself, anything else as JSON (as in the file), never
                            # Python's repr ("['a', 'b']", "None", "True")
                            shown = v if type(v) is str else js_stringify(v)
                            arg = f" {k}={(shown if shown is not None else 'undefined')[:60]}"
                        parts.append(f"→ {b.get('name', '?')}{arg}")
                    elif bt == "image":
                        parts.append("[image]")
                    elif bt == "thinking" and not parts:
                        continue
                text = "  ".join(parts)
                if _blank(text) and any(type(b) is dict and b.get("type") == "thinking" for b in c):
                    text = "(thinking only)"
            if role == "toolResult":
                text = f"{m.get('toolName', 'tool')}: {text}"
            elif _blank(text):  # a row with nothing on it looks like a drawing fault
                text = "(no text)"
    elif t == "compaction":
        before = value.get("tokensBefore", "?")
        # a whole number as the inspector writes it (34,182); anything else as stored
        shown = (
            f"{before:,}"
            if type(before) is int
            else f"{before:,.0f}"
            if type(before) is float and before.is_integer()
            else before
        )
        text = f"compaction · {shown} tokens before · "
        if is_retain_none(value):
            text += "retain-none (keeps no entry) · "
        if value.get("systemMessage"):
            text += "system snapshot · "
        text += str(value.get("summary", ""))
    elif t == "usage":
        text = usage_preview(value)
    elif t == "context_edit":
        text = context_edit_preview(value)
    elif t == "branch_summary":
        text = "branch summary · " + str(value.get("summary", ""))
    elif t == "model_change":
        text = f"model → {value.get('provider', '?')}/{value.get('modelId', '?')}"
    elif t == "thinking_level_change":
        text = f"thinking level → {value.get('thinkingLevel', '?')}"
    elif t == "label":
        text = f"label {value.get('label')!r} on {value.get('targetId')}"
    elif t == "session_info":
        text = f"session name → {value.get('name', '')!r}"
    elif t == "custom_message":
        c = value.get("content")
        text = f"[{value.get('customType', 'custom')}] " + (
            c
            if isinstance(c, str)
            else " ".join(b.get("text", "") for b in c if type(b) is dict)
            if isinstance(c, list)
            else ""
        )
    elif t == "custom":
        text = f"custom state [{value.get('customType', '?')}]"
    elif isinstance(t, str):  # a type this pi does not know: its name
        text = t
    else:  # no type (a line of "{}"): its JSON, as in the file
        text = js_stringify(value) or ""
    return one_line(text, limit)


def _blank(text: str) -> bool:
    """Whether ``text`` shows nothing on one line (whitespace only: a model's text block of "   ")."""
    return not text or text.isspace()


#: one_line collapses the whitespace of this many characters per ``limit`` first (and all of the
#: text only when that gives no more than ``limit``)
_HEAD_PER_CHAR = 4


def one_line(text: str, limit: int) -> str:
    """``text`` with each run of whitespace made one space (and none at either end), cut to ``limit``
    characters with "…" when it was longer.

    A tool result's text can be megabytes; splitting all of it took 40% of a big session's search
    text build. The collapsed text of a head of ``text`` is always a head of the collapsed whole (a
    cut inside a word leaves part of that word, a cut inside whitespace drops only it), so when the
    head already gives more than ``limit`` characters the rest cannot change the result."""
    window = _HEAD_PER_CHAR * limit + 64
    if len(text) > window:
        head = " ".join(text[:window].split())
        if len(head) > limit:
            return head[:limit] + "…"
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def _names(items: Any, limit: int = 4) -> str:
    names = [str(t.get("name", "?")) if type(t) is dict else "?" for t in items]
    more = f", +{len(names) - limit}" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def system_preview(m: dict[str, Any]) -> str:
    """A pi 1.6.0 system message in one line: its prompt sections and tool changes."""
    parts = ["system"]
    c = m.get("content")
    text = (
        c
        if type(c) is str
        else " ".join(b["text"] for b in c if type(b) is dict and isinstance(b.get("text"), str))
        if type(c) is list
        else ""
    )
    secs = m.get("sections")
    if type(secs) is dict and secs:
        set_ = [str(k) for k, v in secs.items() if v is not None]
        removed = [str(k) for k, v in secs.items() if v is None]
        if set_:
            parts.append(f"sections {', '.join(set_)}")
        if removed:
            parts.append(f"removes section {', '.join(removed)}")
    added, removed_tools = m.get("toolsAdded"), m.get("toolsRemoved")
    if type(added) is list and added:
        parts.append(f"+{len(added)} tool{'s' * (len(added) != 1)} ({_names(added)})")
    if type(removed_tools) is list and removed_tools:
        parts.append(f"−{len(removed_tools)} tool{'s' * (len(removed_tools) != 1)} ({_names(removed_tools)})")
    if text.strip():
        parts.append(text)
    return " · ".join(parts)


def usage_preview(value: dict[str, Any]) -> str:
    """A pi 1.6.0 `usage` entry in one line: what, which model, how much."""
    u = value.get("usage")
    total = u.get("totalTokens", "?") if type(u) is dict else "?"
    cost = u.get("cost") if type(u) is dict else None
    money = cost.get("total") if type(cost) is dict else None
    text = f"usage · {value.get('kind', '?')} · {value.get('provider', '?')}/{value.get('model', '?')}"
    text += f" · {total:,} tokens" if type(total) is int else f" · {total} tokens"
    if type(money) in (int, float):
        text += f" · ${money:g}"
    return text


def context_edit_preview(value: dict[str, Any]) -> str:
    """A pi 1.6.0 `context_edit` entry in one line: what it does to which entry."""
    target = value.get("targetId", "?")
    rep = value.get("replacement", UNDEFINED)
    if rep is UNDEFINED:
        return f"context edit · on {target}, without a replacement"
    if rep is None:
        return f"context edit · hides {target} from the LLM"
    c = rep.get("content") if type(rep) is dict else None
    text = (
        c
        if type(c) is str
        else " ".join(b["text"] for b in c if type(b) is dict and isinstance(b.get("text"), str))
        if type(c) is list
        else ""
    )
    return f"context edit · replaces the content of {target}: {text}"
