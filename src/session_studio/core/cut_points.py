"""Cut points (spec §5): where a compaction may start keeping entries verbatim.

All functions take the path as a list of :class:`EntryRecord` and a half-open
range, exactly like pi's functions take `entries, startIndex, endIndex`.
:class:`CutPlanner` precomputes the running token sums of a range once, so the
cut for any `keepRecentTokens` (a slider move) is a binary search, and the whole
sweep (every threshold where the answer changes) is linear.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, Self

from .jsvalue import JsTypeError
from .record_table import INT_ESTIMATE_FLAGS, TOKENS_INT, RecordsAt, column_on_path
from .session import EntryRecord
from .tokens import js_plus

__all__ = [
    "CUT_POINT_ROLES",
    "CutPlanner",
    "CutPoint",
    "cut_point_reason",
    "find_cut_point",
    "find_turn_start_index",
    "find_valid_cut_points",
    "is_valid_cut_point",
]

CUT_POINT_ROLES = frozenset(
    {"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"}
)


class CutPoint(NamedTuple):
    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def is_valid_cut_point(r: EntryRecord) -> bool:
    t = r.type
    if t == "message":
        if r.error is not None:
            raise r.error
        return bool(isinstance(r.role, str) and r.role in CUT_POINT_ROLES)
    return bool(t == "branch_summary" or t == "custom_message")


def cut_point_reason(r: EntryRecord) -> str:
    """Why an entry is (not) a valid cut point, in words for the UI."""
    t = r.type
    if t == "message":
        if r.error is not None:
            return "damaged message entry (no message)"
        if r.role == "toolResult":
            return "tool result: must stay after its tool call"
        if type(r.role) is str and r.role in CUT_POINT_ROLES:
            return f"{r.role} message: valid cut point"
        return f"message with role {r.role!r}: not a cut point"
    if t in ("branch_summary", "custom_message"):
        return f"{t} entry: valid cut point"
    if t == "compaction":
        return "compaction entry: never a cut point"
    return f"{t if isinstance(t, str) else 'unknown'} entry: metadata, not a cut point"


def find_valid_cut_points(path: Sequence[EntryRecord], start: int, end: int) -> list[int]:
    return [i for i in range(start, end) if is_valid_cut_point(path[i])]


def _plain_range(
    path: Sequence[EntryRecord], start: int, end: int
) -> tuple[list[int], list[int], list[int]] | None:
    """For a path over a record table (``RecordsAt``) whose messages in ``[start, end)`` all have an
    int token estimate and a role (what pi writes): the valid cut points, and the messages' path
    positions and estimates newest first, read from the table's columns instead of one record
    object per entry (a 100k-entry path before its first compaction: ~1 s of Python, most of a
    cached plan). None otherwise: the record-by-record reference says what pi does with a damaged
    message (it throws) or a NaN estimate."""
    if not isinstance(path, RecordsAt) or end <= start:
        return None
    table = path.table
    message = table.code("message")  # -1 where no record has the type (no record's code is -1)
    indices = path.indices[start:end]
    types = column_on_path(table.types, indices)
    at = [k for k, t in enumerate(types) if t == message]  # the messages, oldest first
    records = [indices[k] for k in at]
    if any(f & INT_ESTIMATE_FLAGS != TOKENS_INT for f in column_on_path(table.flags, records)):
        return None
    cut_types = {table.code("branch_summary"), table.code("custom_message")}
    cut_roles = set(map(table.code, CUT_POINT_ROLES))
    role_of = dict(zip(at, column_on_path(table.roles, records), strict=True))
    cut_points = [
        start + k for k, t in enumerate(types) if t in cut_types or (t == message and role_of[k] in cut_roles)
    ]
    estimates = list(map(int, reversed(column_on_path(table.tokens, records))))
    return cut_points, [start + k for k in reversed(at)], estimates


def _is_turn_start(r: EntryRecord) -> bool:
    t = r.type
    if t == "branch_summary" or t == "custom_message":
        return True
    if t == "message":
        if r.error is not None:
            raise r.error
        return bool(r.role == "user" or r.role == "bashExecution")
    return False


def find_turn_start_index(path: Sequence[EntryRecord], entry_index: int, start: int) -> int:
    for i in range(entry_index, start - 1, -1):
        if _is_turn_start(path[i]):
            return i
    return -1


def _finish(path: Sequence[EntryRecord], start: int, cut: int) -> CutPoint:
    while cut > start:
        prev = path[cut - 1].type
        if prev == "compaction" or prev == "message":
            break
        cut -= 1
    e = path[cut]
    if e.type == "message" and e.error is not None:
        raise e.error
    is_user = e.type == "message" and e.role == "user"
    ts = -1 if is_user else find_turn_start_index(path, cut, start)
    return CutPoint(cut, ts, (not is_user) and ts != -1)


def _ge(acc: Any, keep: float) -> bool:
    if type(acc) in (int, float):
        return bool(acc >= keep)
    return False  # NaN / strings compare false in practice


def find_cut_point(path: Sequence[EntryRecord], start: int, end: int, keep_recent_tokens: float) -> CutPoint:
    """pi's findCutPoint, step by step (used for checks and the teaching walk)."""
    cps = find_valid_cut_points(path, start, end)
    if not cps:
        return CutPoint(start, -1, False)
    cut = cps[0]
    acc: Any = 0
    for i in range(end - 1, start - 1, -1):
        r = path[i]
        if r.type != "message":
            continue
        acc = js_plus(acc, r.token_value())
        if _ge(acc, keep_recent_tokens):
            j = bisect.bisect_left(cps, i)
            if j < len(cps):
                cut = cps[j]
            break
    return _finish(path, start, cut)


class RunningSums:
    """Running token totals walking back over one range, and the budget found by lookup.

    Only growing totals of non-negative estimates occur in real data, so the entry where the total
    first reaches keepRecentTokens is a binary search over the sums. A NaN or a throwing estimate
    stops the sums: beyond it the total never reaches any budget (or pi throws), as in pi.
    Shared by pi 0.80.2's `CutPlanner` and pi 1.6.0's projected planner; each says which entries
    count (`_sum_back`) and how a budget becomes a cut (`cut`).
    """

    sums: Sequence[float]  # running totals, newest → oldest
    positions: list[int]  # index of the entry that produced each sum
    stop_error: JsTypeError | None
    stop_nan: bool

    def _sum_back(self, estimates: Iterable[tuple[int, Any]]) -> None:
        """Fill the sums from ``(index, estimate or the JsTypeError it throws)``, newest first."""
        self.sums = []
        self.positions = []
        self.stop_error = None
        self.stop_nan = False
        acc: Any = 0
        for i, t in estimates:
            if isinstance(t, JsTypeError):
                self.stop_error = t
                break
            acc = js_plus(acc, t)
            if type(acc) not in (int, float) or (isinstance(acc, float) and math.isnan(acc)):
                self.stop_nan = True
                break
            self.sums.append(acc)
            self.positions.append(i)
        self._monotonic = all(self.sums[k] <= self.sums[k + 1] for k in range(len(self.sums) - 1))

    def _sum_back_ints(self, positions: list[int], estimates: list[int]) -> None:
        """``_sum_back`` of int estimates (newest first): JavaScript's + of ints is theirs, no NaN,
        nothing thrown; the running totals are one C-level accumulate, kept as an array of int64 (a
        long path's 100k totals as int objects were 3.6 MB) unless one does not fit."""
        try:
            self.sums = array("q", itertools.accumulate(estimates))
        except OverflowError:  # estimates up to 2**53 each: a total past 2**63 is possible, not real
            self.sums = list(itertools.accumulate(estimates))
        self.positions = positions
        self.stop_error = None
        self.stop_nan = False
        self._monotonic = (
            not estimates
            or min(estimates) >= 0
            or all(self.sums[k] <= self.sums[k + 1] for k in range(len(self.sums) - 1))
        )

    def reweighed(self, size: Callable[[int, float], float]) -> Self:
        """A copy weighing the same entries with other sizes (real tokens instead of chars/4):
        ``size(index, estimate)`` is each counted entry's new size."""
        sizes: list[tuple[int, Any]] = []
        prev: Any = 0
        for i, total in zip(self.positions, self.sums, strict=True):
            sizes.append((i, size(i, total - prev)))
            prev = total
        new = copy.copy(self)
        new._sum_back(sizes)
        new.stop_error, new.stop_nan = self.stop_error, self.stop_nan
        return new

    def budget_index(self, keep: float) -> int | None:
        """Index where the running total first reaches `keep`, or None."""
        if self._monotonic:
            k = bisect.bisect_left(self.sums, keep)
        else:  # negative estimates cannot happen from real data; stay exact anyway
            k = next((j for j, s in enumerate(self.sums) if s >= keep), len(self.sums))
        if k < len(self.sums):
            return self.positions[k]
        if self.stop_error is not None:
            raise self.stop_error
        return None

    def cut(self, keep: float) -> CutPoint:
        raise NotImplementedError

    def thresholds(self) -> list[int]:
        """Candidate keepRecentTokens where the answer may change: 0, 1 and S_k + 1."""
        cands = {0, 1}
        for s in self.sums:
            cands.add(int(s) + 1 if float(s).is_integer() else s + 1)  # type: ignore[arg-type]
        return sorted(cands)

    def sweep(self) -> list[tuple[int, CutPoint]]:
        """(keepRecentTokens, cut) at every threshold where the cut changes."""
        if self.stop_error is not None:
            raise self.stop_error
        rows: list[tuple[int, CutPoint]] = []
        prev = None
        for k in self.thresholds():
            c = self.cut(k)
            if c != prev:
                rows.append((k, c))
                prev = c
        return rows


class CutPlanner(RunningSums):
    """pi 0.80.2's findCutPoint for every keepRecentTokens over one range, by lookup.

    Walking back from `end`, only message entries add to the running total; the
    budget is reached at the first message where the total is ≥ keep.
    """

    def __init__(self, path: Sequence[EntryRecord], start: int, end: int) -> None:
        self.path = path
        self.start = start
        self.end = end
        columns = _plain_range(path, start, end)
        if columns is not None:  # the same facts from the table's columns (see _plain_range)
            self.cut_points, positions, estimates = columns
            self.tokens = dict(zip(positions, estimates, strict=True))
            self._sum_back_ints(positions, estimates)
            return
        self.cut_points = find_valid_cut_points(path, start, end)
        self.tokens = {}
        self._sum_back(self._message_estimates())

    def _message_estimates(self) -> Iterator[tuple[int, Any]]:
        for i in range(self.end - 1, self.start - 1, -1):
            r = self.path[i]
            if r.type != "message":
                continue
            t = r.tokens
            if not isinstance(t, JsTypeError):
                self.tokens[i] = t
            yield i, t

    def cut(self, keep: float) -> CutPoint:
        cps = self.cut_points
        if not cps:
            return CutPoint(self.start, -1, False)
        cut = cps[0]
        i = self.budget_index(keep)
        if i is not None:
            j = bisect.bisect_left(cps, i)
            if j < len(cps):
                cut = cps[j]
        return self.cut_at(cut)

    def cut_at(self, candidate: int) -> CutPoint:
        """The cut when `candidate` is the chosen cut point (the rest of findCutPoint:
        the backward metadata scan and the split-turn rule). A manual cut is this."""
        return _finish(self.path, self.start, candidate)
