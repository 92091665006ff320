"""The context timeline of one path: how the context the LLM saw grew and was compacted.

x is the path position (0 = the root entry, ``path_length - 1`` = the leaf); y is tokens.

* **Points**, one per assistant message on the path: the context size after that turn. Where pi
  treats the message's usage as valid (§4.3: not aborted or failed, usage > 0) it is the provider's
  count (``input + output + cacheRead + cacheWrite``, or ``totalTokens``) and the point is flagged
  *usage*; elsewhere it is pi's chars/4 estimate of the whole context at that point (the compaction
  summary in force, the kept entries and every context message up to and including this one) and
  flagged *estimate*.
* **Drops**, one per compaction entry: ``tokensBefore`` as the entry stores it (what pi measured
  before compacting) → *after*, the rebuilt context right after the compaction under the profile:
  the context pi builds for a leaf at the compaction entry itself (0.80.2: ``buildSessionContext``;
  1.6.0: the projection, with the system snapshot and without system messages in the kept range),
  i.e. the summary (+ snapshot) and the kept entries, each by pi's chars/4 estimate. The drop is
  labelled with its summary's size.
* **Markers**: branch summaries and model changes.
* **Limits** and the **planned drop** come from one :class:`~session_studio.core.plan.PlanState`
  (the same parameters the token bar uses), so a what-if slider only calls :meth:`Timeline.with_plan`.

The estimates are never computed here: every context size is a prefix sum of the per-item tokens a
:class:`~session_studio.core.plan.PathPlanner` computed (``item_cum`` over ``item_positions``).
The context grows append-only between two compactions, so one planner per segment (its leaf is the
last entry before the next compaction) answers every point of the segment by a binary search, and
the segment after the last compaction uses the window's own planner: the last point is the token
bar's total. (Under 1.6.0 a later context edit can hide an entry from the segment's final context;
the points before the edit then miss it — the projection is only built per segment end.)

Points are stored as columns (``array``), not objects; :func:`downsample` reduces them to one
min/max/last per pixel column with a binary search per column, so a 100k-entry path draws in a few
milliseconds.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .jsvalue import UNDEFINED
from .plan import PathPlanner, PlanParams, PlanState
from .session import Session

__all__ = [
    "Columns",
    "Drop",
    "Limits",
    "Marker",
    "PlannedDrop",
    "Timeline",
    "branch_leaf",
    "build_timeline",
    "downsample",
]


def _number(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return math.nan
    return float(v)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is UNDEFINED or v is None else str(v))


@dataclass(frozen=True, slots=True)
class Drop:
    """One compaction: the context fell from ``tokens_before`` to ``tokens_after`` at ``position``."""

    position: int
    record: int
    entry_id: str
    tokens_before: float  # the entry's tokensBefore (NaN if it has none)
    tokens_after: float  # summary (+ 1.6.0 snapshot) + kept entries, chars/4
    summary_tokens: float  # the summary alone, chars/4
    #: pi 1.6.0: the system message snapshot the compaction carries (part of tokens_after), else NaN
    snapshot_tokens: float = math.nan


@dataclass(frozen=True, slots=True)
class Marker:
    """A branch summary or a model change on the path."""

    position: int
    record: int
    entry_id: str
    kind: str  # "branch_summary" | "model_change"
    label: str  # the model ("provider/modelId") or "branch summary"
    tokens: float  # the branch summary's size in the context (NaN for a model change)


@dataclass(frozen=True, slots=True)
class Limits:
    """The lines of the chart: the plan's parameters (what-if values included)."""

    context_window: int
    reserve_tokens: int
    window_known: bool

    @property
    def threshold(self) -> int:
        """pi compacts when the context exceeds this (window − reserve)."""
        return self.context_window - self.reserve_tokens


@dataclass(frozen=True, slots=True)
class PlannedDrop:
    """The compaction the plan would make now, at the end of the path."""

    position: int  # the path's length: one step after the leaf
    tokens_before: float  # pi's context tokens now (the plan's tokensBefore)
    tokens_after: float  # the projected context after it (placeholder or real summary + kept)
    summary_tokens: float
    first_kept_record: int | None


@dataclass(frozen=True)
class Timeline:
    """The chart's data for one path under one profile and one plan."""

    profile: str
    path_length: int
    leaf_record: int | None
    #: per point, in path order: path position, record, tokens, 1 = provider usage / 0 = estimate
    positions: array[int]
    records: array[int]
    tokens: array[float]
    from_usage: array[int]
    drops: tuple[Drop, ...]
    markers: tuple[Marker, ...]
    limits: Limits
    planned: PlannedDrop | None
    #: what kept part of the data from being computed (pi would throw on a segment, …)
    problems: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.positions)

    def with_plan(self, state: PlanState | None) -> Timeline:
        """The same history under another plan (a slider moved, a summary was generated)."""
        limits, planned = _plan_parts(state)
        return dataclasses.replace(self, limits=limits, planned=planned)

    @property
    def x_end(self) -> int:
        """One past the last x the chart shows (the planned drop stands at the path's length)."""
        return max(self.path_length, 1)

    @property
    def peak(self) -> float:
        """The highest token value of anything drawn (points, drops, lines, planned drop)."""
        top = max(self.tokens, default=0.0)  # never NaN: a point without a number is not stored
        for d in self.drops:
            top = max(top, *(v for v in (d.tokens_before, d.tokens_after) if not math.isnan(v)), 0.0)
        if self.planned is not None:
            top = max(top, self.planned.tokens_before)
        if self.limits.window_known and self.limits.context_window > 0:
            top = max(top, float(self.limits.context_window))
        return top

    def nearest_point(self, position: float) -> int | None:
        """Index of the point whose path position is nearest ``position``, or None if there is none."""
        pos = self.positions
        if not pos:
            return None
        k = bisect.bisect_left(pos, position)
        if k == 0:
            return 0
        if k >= len(pos):
            return len(pos) - 1
        return k if pos[k] - position < position - pos[k - 1] else k - 1

    def usage_count(self) -> int:
        return sum(self.from_usage)


@dataclass(frozen=True)
class Columns:
    """One entry per non-empty pixel column: the column, the points' min, max and last value, the
    index of that last point, and how many of the column's points are estimates."""

    column: array[int]
    low: array[float]
    high: array[float]
    last: array[float]
    last_point: array[int]
    estimates: array[int]

    def __len__(self) -> int:
        return len(self.column)


def downsample(timeline: Timeline, x0: float, x1: float, columns: int) -> Columns:
    """The points between path positions ``x0`` and ``x1`` reduced to ``columns`` pixel columns.

    Column c holds the points with ``x0 + c·w ≤ position < x0 + (c+1)·w`` (``w = (x1 − x0)/columns``;
    the last column also takes ``x1``). Work is a binary search and a C-level min/max per column.
    """
    out = Columns(array("q"), array("d"), array("d"), array("d"), array("q"), array("q"))
    pos, tok, usage = timeline.positions, timeline.tokens, timeline.from_usage
    if columns <= 0 or not pos or x1 <= x0:
        return out
    width = (x1 - x0) / columns
    lo = bisect.bisect_left(pos, x0)
    for c in range(columns):
        if lo >= len(pos):
            break
        edge = x0 + (c + 1) * width
        hi = bisect.bisect_right(pos, x1) if c == columns - 1 else bisect.bisect_left(pos, edge, lo)
        if hi > lo:
            vals = tok[lo:hi]
            out.column.append(c)
            out.low.append(min(vals))
            out.high.append(max(vals))
            out.last.append(vals[-1])
            out.last_point.append(hi - 1)
            out.estimates.append((hi - lo) - sum(usage[lo:hi]))
        lo = hi
    return out


def branch_leaf(session: Session, record: int) -> int:
    """The leaf of ``record``'s branch: from it, the newest child (file order: the last appended)
    down to an entry without children. A timeline of "the selected entry's branch" ends there, so
    the selected entry is on it."""
    seen = {record}
    cur = record
    while True:
        children = session.children(session.records[cur].id)
        if not children or children[-1] in seen:
            return cur
        cur = children[-1]
        seen.add(cur)


def _plan_parts(state: PlanState | None) -> tuple[Limits, PlannedDrop | None]:
    params = state.params if state is not None else PlanParams()
    limits = Limits(params.context_window, params.reserve_tokens, state.window_known if state else False)
    if state is None or state.error is not None or state.nothing_to_compact or not state.after_tokens:
        return limits, None
    summary = sum(t for _, kind, t in state.after_tokens if kind == "compactionSummary")
    planned = PlannedDrop(
        len(state.path),
        state.context_tokens,
        sum(t for _, _, t in state.after_tokens),
        summary,
        state.first_kept_record,
    )
    return limits, planned


@dataclass(slots=True)
class _Segment:
    """Path positions [start, end] and the planner whose leaf is the entry at ``end``."""

    start: int
    end: int
    planner: PathPlanner

    def size_through(self, position: int) -> float:
        """The context's chars/4 size with every item up to path position ``position``."""
        k = bisect.bisect_right(self.planner.item_positions, position)
        return self.planner.item_cum[k] if self.planner.item_cum else math.nan

    def size_before(self, position: int) -> float:
        """The context's size with the items before ``position`` (a compaction's summary and kept)."""
        k = bisect.bisect_left(self.planner.item_positions, position)
        return self.planner.item_cum[k] if self.planner.item_cum else math.nan

    def item_tokens_of(self, record: int, kind: str) -> float:
        found = [t for r, k, t in self.planner.item_tokens if r == record and k == kind]
        return sum(found) if found else math.nan


def _segments(
    planner: PathPlanner, compactions: Sequence[int], make: Callable[[int], PathPlanner]
) -> list[_Segment]:
    """[0, c1), [c1, c2), …, [ck, leaf]: one planner per segment, the given one for the last."""
    starts = [0, *compactions] if not compactions or compactions[0] != 0 else list(compactions)
    out: list[_Segment] = []
    last = len(planner.path) - 1
    for j, start in enumerate(starts):
        end = starts[j + 1] - 1 if j + 1 < len(starts) else last
        out.append(_Segment(start, end, planner if end == last else make(end)))
    return out


def build_timeline(
    planner: PathPlanner,
    state: PlanState | None = None,
    *,
    segment_planner: Callable[[Session, int], PathPlanner] | None = None,
) -> Timeline:
    """The timeline of ``planner``'s path (any leaf) under its profile, with ``state``'s lines and
    planned drop (``planner.plan(PlanParams())`` when None: pi's defaults).

    ``segment_planner(session, leaf_record)`` builds the planner of an earlier segment (a leaf at the
    entry before a compaction); the default is ``PathPlanner`` under the same profile. Building costs
    one planner per compaction (each reads its segment once); keep the result and call
    :meth:`Timeline.with_plan` when only the parameters change.
    """
    session = planner.session
    path = planner.path
    recs = session.records
    if state is None:
        state = planner.plan(PlanParams(), window_known=False)
    make_for: Callable[[Session, int], PathPlanner] = segment_planner or (
        lambda s, leaf: PathPlanner(s, leaf, profile=planner.profile)
    )
    compactions = [k for k, r in enumerate(path) if recs[r].type == "compaction"]
    segments = _segments(planner, compactions, lambda end: make_for(session, path[end]))
    positions: array[int] = array("q")
    records: array[int] = array("q")
    tokens: array[float] = array("d")
    from_usage: array[int] = array("b")
    drops: list[Drop] = []
    markers: list[Marker] = []
    problems: list[str] = []
    for seg in segments:
        if seg.planner.error is not None:
            problems.append(f"path #{seg.start}–#{seg.end}: {seg.planner.error}")
        for k in range(seg.start, seg.end + 1):
            r = path[k]
            rec = recs[r]
            t = rec.type
            if t == "message" and rec.role == "assistant":
                usage = _number(rec.usage_tokens)
                if not math.isnan(usage) and usage > 0:
                    value, measured = usage, 1
                else:
                    value, measured = seg.size_through(k), 0
                if math.isnan(value):
                    continue
                positions.append(k)
                records.append(r)
                tokens.append(value)
                from_usage.append(measured)
            elif t == "compaction":
                v = session.value(r)
                before = _number(v.get("tokensBefore")) if isinstance(v, dict) else math.nan
                drops.append(
                    Drop(
                        k,
                        r,
                        _text(rec.id),
                        before,
                        seg.size_before(k),
                        seg.item_tokens_of(r, "compactionSummary"),
                        seg.item_tokens_of(r, "system"),
                    )
                )
            elif t == "branch_summary":
                markers.append(
                    Marker(
                        k,
                        r,
                        _text(rec.id),
                        "branch_summary",
                        "branch summary",
                        seg.item_tokens_of(r, "branchSummary"),
                    )
                )
            elif t == "model_change":
                v = session.value(r)
                model = (
                    f"{_text(v.get('provider', UNDEFINED))}/{_text(v.get('modelId', UNDEFINED))}"
                    if isinstance(v, dict)
                    else "?"
                )
                markers.append(Marker(k, r, _text(rec.id), "model_change", model, math.nan))
    limits, planned = _plan_parts(state)
    return Timeline(
        planner.profile.version,
        len(path),
        planner.leaf_index,
        positions,
        records,
        tokens,
        from_usage,
        tuple(drops),
        tuple(markers),
        limits,
        planned,
        tuple(problems),
    )
