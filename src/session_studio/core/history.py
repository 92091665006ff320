"""A long history's messages to summarise, without holding them all (prepareCompaction's
`messagesToSummarize` of a path before its first compaction: 100k messages).

pi parsed every message when it opened the file; our index did not, and the preparation parsed
them all to count them and to collect their file operations: on a 100k-entry path 2 s and 200 MB,
more than pi's whole open + prepare. What a preparation needs of a long history is:

- how many messages it has: one per plain message entry (what the index's columns say of it: a
  message with an int estimate), counted without reading it;
- its file operations, in message order: only a message with a tool call of a file tool (or, under
  pi 1.6.0, nested calls) has any; the index marked those while it read the file and kept what
  it found in them (file_op_index), so only the lines it could not settle are parsed;
- the messages themselves, once, in order, when the summary's conversation is serialised:
  :class:`HistoryMessages` re-reads them from the file in chunks each time it is iterated.

Short histories keep their messages in a list, as before (``LAZY_MIN_ENTRIES``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

from .priority import yield_to_foreground
from .record_table import FILE_OP_CANDIDATE

if TYPE_CHECKING:
    from .file_ops import FileOps
    from .session import Session

__all__ = [
    "CHUNK_ENTRIES",
    "FILE_OP_STEP",
    "LAZY_MIN_ENTRIES",
    "NO_OPS",
    "HistoryMessages",
    "add_file_ops",
    "settled_ops",
]

#: a history of fewer entries keeps its messages in a list (the tests lower it to run the lazy path)
LAZY_MIN_ENTRIES = 4096
#: entries (or messages) read from the file per step, here and wherever a long path's context is read
#: once without being kept (one sequential read each; a few MB of messages at a time)
CHUNK_ENTRIES = 2048
#: lines a preparation parses again for file operations between two yields to the window's paints
#: (priority.yield_to_foreground: ~10 µs a line, a step of a few ms)
FILE_OP_STEP = 256


#: settled_ops' answer for a message with no file operation
NO_OPS = -1
#: a flag byte → 1 if it has FILE_OP_CANDIDATE, else 0 (bytes.translate's table)
_MARKED = bytes(1 if flag & FILE_OP_CANDIDATE else 0 for flag in range(256))
_ONE = re.compile(b"\x01")


def settled_ops(session: Session, records: Sequence[int], flags: Sequence[int]) -> list[int | None]:
    """For each of ``records`` (message entries; ``flags``: their flag column, as the caller gathered
    it): whether the index settles its message's file operations without reading its line again.
    NO_OPS for a message the index did not mark as maybe holding one (FILE_OP_CANDIDATE,
    file_ops.may_hold_file_op); the position of its kept operations for one it did
    (``session.records.file_ops.add_to``); None for one it could not settle, or whose value changed
    (a migration's patch, a value only in memory): its line is read again."""
    t = session.records
    out: list[int | None] = [NO_OPS] * len(records)
    # the marked ones found in C (a loop over a 100k-message history's flags was ~10 ms)
    marked = [m.start() for m in _ONE.finditer(bytes(flags).translate(_MARKED))]
    for k, at in zip(marked, t.file_ops.positions([records[k] for k in marked]), strict=True):
        out[k] = at
    changed = t.patches.keys() | t.virtual_values.keys()
    if changed:
        for k, r in enumerate(records):
            if r in changed:
                out[k] = None
    return out


def add_file_ops(
    session: Session,
    work: Sequence[tuple[int, int | None]],
    ops: FileOps,
    lines_of: Callable[[list[int]], list[int]],
    read: Callable[[int, Iterator[Any]], None],
) -> None:
    """Each (item, kept) of ``work`` in order (items: the caller's entries, settled_ops' answers):
    the kept operations (a position in the index's store) added to ``ops``, else ``read(item,
    values)``, ``values`` iterating the values of ``lines_of(the step's items not kept)``, read from
    the file FILE_OP_STEP items at a time with a yield to the window's paints between steps."""
    store = session.records.file_ops
    for a in range(0, len(work), FILE_OP_STEP):
        yield_to_foreground()
        part = work[a : a + FILE_OP_STEP]
        values = iter(session.values(lines_of([item for item, kept in part if kept is None])))
        run: list[int] = []  # kept operations not added yet: added in one call before the next read
        for item, kept in part:
            if kept is not None:
                run.append(kept)
                continue
            if run:
                store.add_to(run, ops)
                run = []
            read(item, values)
        store.add_to(run, ops)


class HistoryMessages(Sequence[Any]):
    """``count`` messages made by ``chunks()`` (lists, in order) each time they are iterated; a
    Sequence like the list it stands for (indexing walks to the index: the callers iterate)."""

    __slots__ = ("_chunks", "_count")

    def __init__(self, count: int, chunks: Callable[[], Iterator[list[Any]]]) -> None:
        self._count = count
        self._chunks = chunks

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        made = 0
        for chunk in self._chunks():
            made += len(chunk)
            yield from chunk
        if made != self._count:  # the file no longer says what the preparation counted
            raise RuntimeError(
                f"the history had {self._count} messages when prepared, {made} when read again"
            )

    @overload
    def __getitem__(self, k: int) -> Any: ...
    @overload
    def __getitem__(self, k: slice) -> list[Any]: ...
    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            return list(self)[k]
        if k < 0:
            k += self._count
        if not 0 <= k < self._count:
            raise IndexError("history message index out of range")
        return next(itertools.islice(iter(self), k, None))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list | HistoryMessages):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistoryMessages({self._count} messages, read when iterated)"
