"""Record index → position on a path, without a dict entry per path entry.

A plan asks "where on the path is record r?" for every row it marks. On a 900k-entry session the
active path holds ~200k entries, and a dict of them costs ~20 MB per plan object that keeps one.
Paths run in file order (a parent is written before its child) in every file pi writes, so the
answer is a bisection of the path itself; a path that does not (hand-edited files) gets the dict.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Iterator, Mapping, Sequence
from typing import overload

__all__ = ["PathPositions"]


class PathPositions(Mapping[int, int]):
    """The positions of a path's records (a read-only mapping over the path, which it does not copy)."""

    __slots__ = ("_dict", "_path")

    def __init__(self, path: Sequence[int]) -> None:
        self._path = path
        # every step forward in the file, checked in C (a generator over the pairs took ~0.1 s of
        # each re-plan on the 1 GB session's 209k-entry path)
        in_file_order = len(path) < 2 or min(map(operator.sub, path[1:], path)) > 0
        # a path out of file order: the first position of each record (paths hold each record once)
        self._dict: dict[int, int] | None = None
        if not in_file_order:
            d: dict[int, int] = {}
            for k, r in enumerate(path):
                d.setdefault(r, k)
            self._dict = d

    @overload  # type: ignore[override]
    def get(self, record: int) -> int | None: ...
    @overload
    def get(self, record: int, default: int) -> int: ...

    def get(self, record: int, default: int | None = None) -> int | None:
        if self._dict is not None:
            return self._dict.get(record, default)
        path = self._path
        k = bisect.bisect_left(path, record)
        return k if k < len(path) and path[k] == record else default

    def positions_of(self, records: Sequence[int], default: int = -1) -> list[int]:
        """``get(r, default)`` of each of ``records``; at once where they are, from their first or
        their second one on, a run of the path (a path before its first compaction projects all its
        entries, after one the compaction and then a run of it): compared in C, not one bisection
        each."""
        n = len(records)
        path = self._path
        for head in (0, 1):
            if n <= head:
                break
            k = self.get(records[head])
            if k is not None and list(records[head:]) == list(path[k : k + n - head]):
                first = [self.get(r, default) for r in records[:head]]
                return [*first, *range(k, k + n - head)]
        return [self.get(r, default) for r in records]

    def __getitem__(self, record: int) -> int:
        k = self.get(record)
        if k is None:
            raise KeyError(record)
        return k

    def __contains__(self, record: object) -> bool:
        return type(record) is int and self.get(record) is not None

    def __len__(self) -> int:
        return len(self._path)

    def __iter__(self) -> Iterator[int]:
        return iter(self._path) if self._dict is None else iter(self._dict)
