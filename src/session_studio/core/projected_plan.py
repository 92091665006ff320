"""pi 1.6.0's `findProjectedCutPoint` and `prepareCompaction` (spec §10.5, §10.6; rules 25–32).

Everything works on the projection of the path (context edits applied), in
projected coordinates; :meth:`ProjectedCompactionPlan.path_index` maps a
projected index back to the path as the oracle reports it.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any

from .cut_points import CutPoint
from .file_ops import FileOps
from .jsvalue import UNDEFINED, JsTypeError, js_key, js_truthy, prop
from .preparation import Boundary, Preparation
from .profile import PROFILE_1_6_0
from .projection import Projection, build_session_projection
from .session import Session
from .tokens import ContextTokens, js_plus

__all__ = [
    "ProjectedCompactionPlan",
    "ProjectedCutPlanner",
    "plan_projected_compaction",
]

CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


def _has_role(roles: tuple[Any, ...], wanted: frozenset[str]) -> bool:
    return any(type(r) is str and r in wanted for r in roles)


class ProjectedCutPlanner:
    """findProjectedCutPoint for every keepRecentTokens over one projected range, by lookup.

    Walking back from `end`, each entry adds the sum of its messages' estimates
    (entries totalling 0 are skipped, rule 26); the budget is reached at the first
    entry where the running total is ≥ keep, found by binary search over the sums.
    """

    def __init__(self, projection: Projection, start: int, end: int) -> None:
        self.projection = projection
        self.start = start
        self.end = end
        entries = projection.entries
        recs = projection.session.records
        self._is_compaction = [recs[e.record].type == "compaction" for e in entries]
        self.cut_points = [
            i
            for i in range(start, end)
            if not self._is_compaction[i] and _has_role(entries[i].roles, CUT_POINT_ROLES)
        ]
        self.sums: list[float] = []
        self.positions: list[int] = []
        self.stop_error: JsTypeError | None = None
        self.stop_nan = False
        acc: Any = 0
        for i in range(end - 1, start - 1, -1):
            try:
                t = projection.entry_token_sum(i)
            except JsTypeError as e:
                self.stop_error = e
                break
            if type(t) in (int, float) and t == 0:
                continue
            acc = js_plus(acc, t)
            if type(acc) not in (int, float) or (isinstance(acc, float) and math.isnan(acc)):
                self.stop_nan = True
                break
            self.sums.append(acc)
            self.positions.append(i)
        self._monotonic = all(self.sums[k] <= self.sums[k + 1] for k in range(len(self.sums) - 1))

    def budget_index(self, keep: float) -> int | None:
        if self._monotonic:
            k = bisect.bisect_left(self.sums, keep)
        else:
            k = next((j for j, s in enumerate(self.sums) if s >= keep), len(self.sums))
        if k < len(self.sums):
            return self.positions[k]
        if self.stop_error is not None:
            raise self.stop_error
        return None

    def cut(self, keep: float) -> CutPoint:
        cps = self.cut_points
        if not cps:
            return CutPoint(self.start, -1, False)
        i = self.budget_index(keep)
        if i is None:
            return self.cut_at(cps[0])
        j = bisect.bisect_left(cps, i)
        cut = cps[j] if j < len(cps) else cps[-1]  # rule 27: the last cut point
        if self._recovery_omission_suffix(cut):
            cut += 1  # rule 30
        return self.cut_at(cut)

    def _recovery_omission_suffix(self, cut: int) -> bool:
        """Rule 30: after the cut only invisible metadata and omitted entries, one an assistant attempt."""
        p = self.projection
        recs = p.session.records
        omitted_ids: set[Any] = set()
        has_omitted_assistant = False
        edits: list[int] = []
        for k in range(cut + 1, self.end):
            e = p.entries[k]
            r = recs[e.record]
            if self._is_compaction[k]:
                return False
            visible = r.type != "context_edit" and e.intrinsic_count > 0
            omitted = visible and not e.roles
            if visible and not omitted:
                return False
            if omitted:
                omitted_ids.add(js_key(r.id))
                if r.type == "message" and r.role == "assistant":
                    has_omitted_assistant = True
            if r.type == "context_edit":
                edits.append(e.record)
        if not has_omitted_assistant:
            return False
        s = p.session
        for i in edits:
            v = s.value(i)
            if (
                v.get("replacement", UNDEFINED) is not None
                and js_key(v.get("targetId", UNDEFINED)) not in omitted_ids
            ):
                return False  # an external content replacement
        return True

    def cut_at(self, candidate: int) -> CutPoint:
        """The backward scan (rule 28) and the split-turn rule (rule 29) from a chosen cut point."""
        entries = self.projection.entries
        cut = candidate
        while cut > self.start:
            prev = cut - 1
            if self._is_compaction[prev] or entries[prev].roles:
                break
            cut -= 1
        starts = self._starts_turn(cut)
        ts = -1 if starts else self._turn_start(cut)
        return CutPoint(cut, ts, (not starts) and ts != -1)

    def _starts_turn(self, k: int) -> bool:
        return not self._is_compaction[k] and _has_role(self.projection.entries[k].roles, TURN_START_ROLES)

    def _turn_start(self, k: int) -> int:
        for i in range(k, self.start - 1, -1):
            if self._starts_turn(i):
                return i
        return -1

    def thresholds(self) -> list[int]:
        cands = {0, 1}
        for s in self.sums:
            cands.add(int(s) + 1 if float(s).is_integer() else s + 1)  # type: ignore[arg-type]
        return sorted(cands)

    def sweep(self) -> list[tuple[int, CutPoint]]:
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


def _messages_for_compaction(p: Projection, k: int) -> list[Any]:
    """getMessagesFromProjectedEntryForCompaction: no compactions, no system messages."""
    if p.session.records[p.entries[k].record].type == "compaction":
        return []
    return [m for m in p.entry_messages(k) if prop(m, "role") != "system"]


@dataclass
class ProjectedCompactionPlan:
    """prepareCompaction's view of one path under pi 1.6.0."""

    session: Session
    path: list[int]
    projection: Projection
    boundary: Boundary  # projected coordinates; prev_compaction is the projected index
    planner: ProjectedCutPlanner

    def path_index(self, j: int) -> int:
        """The oracle's mapping of a projected index to the path (`p.indexOf(sourceEntry)`)."""
        if j < 0:
            return -1
        if j >= len(self.projection.entries):
            return len(self.path)
        rec = self.projection.entries[j].record
        return self._path_positions().get(rec, -1)

    def _path_positions(self) -> dict[int, int]:
        pos = getattr(self, "_positions", None)
        if pos is None:
            pos = {}
            for k, i in enumerate(self.path):
                pos.setdefault(i, k)
            self._positions = pos
        return pos

    def source_id(self, j: int) -> Any:
        entries = self.projection.entries
        if 0 <= j < len(entries):
            v = self.session.records[entries[j].record].id
            return None if v is UNDEFINED else v
        return None

    def tokens_before(self) -> ContextTokens:
        return self.projection.estimate_projected_context_tokens(self.path)

    def cut(self, keep_recent_tokens: float) -> CutPoint:
        return self.planner.cut(keep_recent_tokens)

    def prepare(self, keep_recent_tokens: float, cut: CutPoint | None = None) -> Preparation | None:
        """prepareCompaction(pathEntries, settings) of pi 1.6.0 (rule 31)."""
        s = self.session
        recs = s.records
        path = self.path
        if path and recs[path[-1]].type == "compaction":
            return None
        p = self.projection
        b = self.boundary
        previous_summary: Any = UNDEFINED
        if b.prev_compaction >= 0:
            previous_summary = s.value(p.entries[b.prev_compaction].record).get("summary", UNDEFINED)
        tokens_before = self.tokens_before().tokens
        c = cut if cut is not None else self.cut(keep_recent_tokens)
        if not 0 <= c.first_kept_index < len(p.entries):
            return None
        first_kept = recs[p.entries[c.first_kept_index].record]
        if not js_truthy(first_kept.id):
            return None
        history_end = c.turn_start_index if c.is_split_turn else c.first_kept_index
        history = [m for k in range(b.start, history_end) for m in _messages_for_compaction(p, k)]
        prefix = (
            [m for k in range(c.turn_start_index, c.first_kept_index) for m in _messages_for_compaction(p, k)]
            if c.is_split_turn
            else []
        )
        if not history and not prefix:
            return None
        ops = FileOps()
        if b.prev_compaction >= 0:
            prev = s.value(p.entries[b.prev_compaction].record)
            if not js_truthy(prev.get("fromHook", UNDEFINED)) and js_truthy(prev.get("details", UNDEFINED)):
                ops.seed_from_details(prev["details"])
        for m in history:
            ops.add_from_message(m, PROFILE_1_6_0)
        if c.is_split_turn:
            for m in prefix:
                ops.add_from_message(m, PROFILE_1_6_0)
        return Preparation(
            first_kept.id,
            self.path_index(c.first_kept_index),  # a path position, as under 0.80.2
            history,
            prefix,
            c.is_split_turn,
            tokens_before,
            previous_summary,
            ops,
            PROFILE_1_6_0,
        )


def plan_projected_compaction(session: Session, path: list[int]) -> ProjectedCompactionPlan:
    projection = build_session_projection(session, path=path)
    recs = session.records
    prev = next(
        (k for k, e in enumerate(projection.entries) if recs[e.record].type == "compaction" and e.roles), -1
    )
    b = Boundary(prev + 1 if prev >= 0 else 0, len(projection.entries), prev)
    return ProjectedCompactionPlan(
        session, path, projection, b, ProjectedCutPlanner(projection, b.start, b.end)
    )
