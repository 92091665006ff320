"""pi 1.6.0's `findProjectedCutPoint` and `prepareCompaction` (spec §10.5, §10.6; rules 25–32).

Everything works on the projection of the path (context edits applied), in
projected coordinates; :meth:`ProjectedCompactionPlan.path_index` maps a
projected index back to the path as the oracle reports it.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import history
from .cut_points import CutPoint, RunningSums
from .file_ops import FileOps
from .gc_pause import gc_paused
from .history import HistoryMessages
from .jsvalue import UNDEFINED, JsTypeError, js_key, js_truthy, prop
from .path_positions import PathPositions
from .preparation import Boundary, Preparation, compaction_boundary
from .priority import yield_to_foreground
from .profile import PROFILE_1_6_0
from .projection import Projection, build_session_projection, entry_messages_of, entry_projection
from .record_table import column_on_path, indexes_of, records_at
from .session import Session
from .tokens import ContextTokens

__all__ = [
    "PathCutPlanner",
    "ProjectedCompactionPlan",
    "ProjectedCutPlanner",
    "ProjectedPathPlan",
    "plan_projected_compaction",
]

CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})


def _has_role(roles: tuple[Any, ...], wanted: frozenset[str]) -> bool:
    return any(type(r) is str and r in wanted for r in roles)


def _with_role(roles: list[tuple[Any, ...]], wanted: frozenset[str]) -> list[bool]:
    """_has_role of each roles tuple: answered once per distinct tuple (a long path's plain messages
    share a few), mapped over the list in C."""
    try:
        answers = {r: _has_role(r, wanted) for r in set(roles)}
    except TypeError:  # a role that is an object or a list (damaged): not hashable, asked one by one
        return [_has_role(r, wanted) for r in roles]
    return list(map(answers.__getitem__, roles))


class ProjectedCutPlanner(RunningSums):
    """findProjectedCutPoint for every keepRecentTokens over one projected range, by lookup.

    Walking back from `end`, each entry adds the sum of its messages' estimates
    (entries totalling 0 are skipped, rule 26); the budget is reached at the first
    entry where the running total is ≥ keep, found by binary search over the sums.
    """

    def __init__(self, projection: Projection, start: int, end: int) -> None:
        self.projection = projection
        self.start = start
        self.end = end
        recs = projection.session.records
        compaction = recs.code("compaction")
        self._is_compaction = list(map(compaction.__eq__, projection.entries.types))
        with_cut_role = _with_role(projection.entries.roles(start, end), CUT_POINT_ROLES)
        not_compaction = map(operator.not_, self._is_compaction[start:end])
        self.cut_points = list(
            itertools.compress(range(start, end), map(operator.and_, with_cut_role, not_compaction))
        )
        positions, estimates, ints = self._entry_estimates()
        #: the counted entries' sums, newest first, where all are ints (else None: the projection's)
        self.estimates: list[int] | None = None
        if ints:
            self.estimates = estimates
            self._sum_back_ints(positions, estimates)
        else:
            self._sum_back(zip(positions, estimates, strict=True))

    def _entry_estimates(self) -> tuple[list[int], list[Any], bool]:
        """The counted entries newest first, each one's summed estimate, and whether all are ints.
        Entries totalling 0 are skipped (rule 26), and the lists end at an entry where pi throws
        (its JsTypeError). A raw message's sum is its int estimate in the index, read from the
        columns for the whole range at once (a long path before its first compaction); the others'
        sums are the projection's."""
        p = self.projection
        raw = p.raw_estimates(self.start, self.end)
        newest_first = range(self.end - 1, self.start - 1, -1)
        if None not in raw:  # every entry a raw message with an int estimate: no projection asked
            values: list[Any] = raw[::-1]
            if 0 not in values:
                return list(newest_first), values, True
            counted = [t != 0 for t in values]
            return (
                list(itertools.compress(newest_first, counted)),
                list(itertools.compress(values, counted)),
                True,
            )
        positions: list[int] = []
        values = []
        for i in newest_first:
            t: Any = raw[i - self.start]
            if t is None:
                try:
                    t = p.entry_token_sum(i)
                except JsTypeError as err:
                    positions.append(i)
                    values.append(err)
                    return positions, values, False
            if type(t) in (int, float) and t == 0:
                continue
            positions.append(i)
            values.append(t)
        return positions, values, all(type(t) is int for t in values)

    def candidate(self, keep: float) -> tuple[int, bool]:
        """The cut point chosen before the backward scan, and whether rule 30 advanced it.

        Only valid when there are cut points."""
        cps = self.cut_points
        i = self.budget_index(keep)
        if i is None:
            return cps[0], False
        j = bisect.bisect_left(cps, i)
        cut = cps[j] if j < len(cps) else cps[-1]  # rule 27: the last cut point
        if self._recovery_omission_suffix(cut):
            return cut + 1, True  # rule 30
        return cut, False

    def cut(self, keep: float) -> CutPoint:
        if not self.cut_points:
            return CutPoint(self.start, -1, False)
        return self.cut_at(self.candidate(keep)[0])

    def stops_scan(self, k: int) -> bool:
        """Rule 28: the backward scan stops at a compaction or an entry with context messages."""
        return self._is_compaction[k] or bool(self.projection.entries[k].roles)

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
        cut = candidate
        while cut > self.start:
            if self.stops_scan(cut - 1):
                break
            cut -= 1
        starts = self._starts_turn(cut)
        ts = -1 if starts else self._turn_start(cut)
        return CutPoint(cut, ts, (not starts) and ts != -1)

    def starts_turn(self, k: int) -> bool:
        """Rule 29: not a compaction, and a message with a turn-starting role."""
        return self._starts_turn(k)

    def _starts_turn(self, k: int) -> bool:
        return not self._is_compaction[k] and _has_role(self.projection.entries[k].roles, TURN_START_ROLES)

    def _turn_start(self, k: int) -> int:
        for i in range(k, self.start - 1, -1):
            if self._starts_turn(i):
                return i
        return -1


def _messages_for_compaction(p: Projection, k: int) -> list[Any]:
    """getMessagesFromProjectedEntryForCompaction: no compactions, no system messages."""
    if p.session.records[p.entries[k].record].type == "compaction":
        return []
    return [m for m in p.entry_messages(k) if prop(m, "role") != "system"]


def _long_history(p: Projection, lo: int, hi: int, ops: FileOps) -> HistoryMessages:
    """The messages of entries ``lo`` to ``hi - 1`` for compaction, as a HistoryMessages; their file
    operations added to ``ops`` in order, reading only the lines that may hold one (see history)."""
    s = p.session
    plain = p.entries.plain_flags(lo, hi)
    records = p.entries.records
    # a plain message is one message; its line is read again only if it may hold a file operation
    span = records[lo:hi]
    settled = history.settled_ops(s, span, column_on_path(s.records.flags, span))
    # (entry, its kept operations' position, or None: read it); a plain message with none adds nothing
    no_ops = history.NO_OPS
    work: list[tuple[int, int | None]] = [
        (k, known if pl else None)
        for k, pl, known in zip(range(lo, hi), plain, settled, strict=True)
        if not (pl and known == no_ops)
    ]
    count = sum(plain)

    def read(k: int, values: Iterator[Any]) -> None:
        nonlocal count
        if plain[k - lo]:  # its one message is its record's own (see Projection.plain_flags)
            ops.add_from_message(next(values)["message"], PROFILE_1_6_0)
            return
        msgs = _messages_for_compaction(p, k)
        count += len(msgs)
        for m in msgs:
            ops.add_from_message(m, PROFILE_1_6_0)

    # a plain message's value is read from its line; another entry's messages from the projection
    history.add_file_ops(s, work, ops, lambda unread: [records[k] for k in unread if plain[k - lo]], read)

    def chunks() -> Iterator[list[Any]]:
        for a in range(lo, hi, history.CHUNK_ENTRIES):
            z = min(hi, a + history.CHUNK_ENTRIES)
            with gc_paused():
                flags = plain[a - lo : z - lo]
                wanted = [records[k] for k, f in zip(range(a, z), flags, strict=True) if f]
                values = iter(s.values(wanted))
                part: list[Any] = []
                for k, f in zip(range(a, z), flags, strict=True):
                    part.extend(_plain_for_compaction(next(values)) if f else _messages_for_compaction(p, k))
            yield part

    return HistoryMessages(count, chunks)


def _plain_for_compaction(value: Any) -> list[Any]:
    """_messages_for_compaction of a plain message's entry, from its record's value."""
    return [m for m in entry_messages_of(value, "message") if prop(m, "role") != "system"]


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
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

    def _path_positions(self) -> PathPositions:
        pos = getattr(self, "_positions", None)
        if pos is None:
            yield_to_foreground()
            pos = self._positions = PathPositions(self.path)
            yield_to_foreground()
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

    def raw_cut(self, keep_recent_tokens: float) -> tuple[CutPoint, Boundary]:
        """pi 1.6.0's exported raw-entry `findCutPoint` over the 0.80.2 boundary, in path indices
        (rules 25–29 on each entry's own messages; no context edits, so rule 30 never applies).

        Not what prepareCompaction uses; the oracle reports it as `rawCut` beside the cut."""
        b = compaction_boundary(self.session, self.path)
        planner = ProjectedCutPlanner(entry_projection(self.session, self.path), b.start, b.end)
        return planner.cut(keep_recent_tokens), b

    def prepare(self, keep_recent_tokens: float, cut: CutPoint | None = None) -> Preparation | None:
        """prepareCompaction(pathEntries, settings) of pi 1.6.0 (rule 31)."""
        s = self.session
        recs = s.records
        path = self.path
        if path and recs[path[-1]].type == "compaction":
            return None
        p = self.projection
        b = self.boundary
        prev = s.value(p.entries[b.prev_compaction].record) if b.prev_compaction >= 0 else None
        previous_summary: Any = UNDEFINED if prev is None else prev.get("summary", UNDEFINED)
        tokens_before = self.tokens_before().tokens
        c = cut if cut is not None else self.cut(keep_recent_tokens)
        if not 0 <= c.first_kept_index < len(p.entries):
            return None
        first_kept = recs[p.entries[c.first_kept_index].record]
        if not js_truthy(first_kept.id):
            return None
        history_end = c.turn_start_index if c.is_split_turn else c.first_kept_index
        with gc_paused():  # a long path's messages by the 100k (see gc_pause)
            ops = FileOps()
            if prev is not None:
                ops.seed_from_entry(prev)
            long = history_end - b.start >= history.LAZY_MIN_ENTRIES and s.records.values is None
            if long:  # counted, and its file operations collected, without holding its messages
                messages: Sequence[Any] = _long_history(p, b.start, history_end, ops)
                p.prefetch(range(c.turn_start_index, c.first_kept_index) if c.is_split_turn else ())
            else:
                p.prefetch(range(b.start, c.first_kept_index))  # the values of both ranges below, in one pass
                messages = [m for k in range(b.start, history_end) for m in _messages_for_compaction(p, k)]
            prefix = (
                [
                    m
                    for k in range(c.turn_start_index, c.first_kept_index)
                    for m in _messages_for_compaction(p, k)
                ]
                if c.is_split_turn
                else []
            )
            if not messages and not prefix:
                return None
            if not long:
                for m in messages:
                    ops.add_from_message(m, PROFILE_1_6_0)
            if c.is_split_turn:
                for m in prefix:
                    ops.add_from_message(m, PROFILE_1_6_0)
        return Preparation(
            first_kept.id,
            self.path_index(c.first_kept_index),  # a path position, as under 0.80.2
            messages,
            prefix,
            c.is_split_turn,
            tokens_before,
            previous_summary,
            ops,
            PROFILE_1_6_0,
        )


def plan_projected_compaction(
    session: Session, path: list[int], projection: Projection | None = None
) -> ProjectedCompactionPlan:
    """pi 1.6.0's compaction plan of `path`; `projection`: its projection if already built
    (``build_session_projection(session, path=path)``, ~10 ms on a 100k-entry session)."""
    if projection is None:
        projection = build_session_projection(session, path=path)
    recs = session.records
    entries = projection.entries
    compaction = recs.code("compaction")
    # the first compaction with context messages (the types searched in C)
    prev = next((k for k in indexes_of(entries.types, compaction) if entries[k].roles), -1)
    b = Boundary(prev + 1 if prev >= 0 else 0, len(entries), prev)
    return ProjectedCompactionPlan(
        session, path, projection, b, ProjectedCutPlanner(projection, b.start, b.end)
    )


class PathCutPlanner:
    """A :class:`ProjectedCutPlanner` seen in path coordinates, the coordinates every view uses.

    The projection's range [boundary start, end) is the path's range in the same order, with
    the entries pi leaves out of the projection (system messages in a kept range, the previous
    compaction itself) skipped; so projected ↔ path is a monotonic mapping over the range.
    """

    def __init__(self, plan: ProjectedCompactionPlan) -> None:
        pp = plan.planner
        positions = plan._path_positions()
        # each projected entry's path position, looked up once (plan.path_index's answer; a path
        # before its first compaction projects every one of its entries)
        on_path = positions.positions_of(plan.projection.records())
        n, beyond = len(on_path), len(plan.path)

        def at(j: int) -> int:
            return -1 if j < 0 else beyond if j >= n else on_path[j]

        self.projected = pp
        self.path = records_at(plan.session.records, plan.path)
        self.start = at(pp.start)
        self.end = beyond
        self.cut_points = [on_path[j] for j in pp.cut_points]
        self.sums = pp.sums
        self.positions = [on_path[j] for j in pp.positions]
        # the sums were computed from these, so none of them throws
        estimates = (
            pp.estimates if pp.estimates is not None else map(plan.projection.entry_token_sum, pp.positions)
        )
        self.tokens: dict[int, Any] = dict(zip(self.positions, estimates, strict=True))
        self.stop_error = pp.stop_error
        self.stop_nan = pp.stop_nan
        self._at = at
        self._n_projected = n
        # path position → projected index (-1: left out), an array (a dict of 100k ints was 8 MB)
        self._projected_of = array("q", [-1]) * len(self.path)
        for j, k in enumerate(on_path):
            if k >= 0:
                self._projected_of[k] = j

    def path_position(self, j: int) -> int:
        return self._at(j)

    def projected_index(self, pos: int) -> int | None:
        """The projected index of path position `pos` (None: pi leaves that entry out)."""
        if pos >= len(self.path):
            return self._n_projected
        j = self._projected_of[pos] if pos >= 0 else -1
        return None if j < 0 else j

    def to_path(self, c: CutPoint) -> CutPoint:
        at = self._at
        return CutPoint(at(c.first_kept_index), at(c.turn_start_index), c.is_split_turn)

    def to_projected(self, c: CutPoint) -> CutPoint:
        fk = self.projected_index(c.first_kept_index)
        ts = self.projected_index(c.turn_start_index) if c.turn_start_index >= 0 else -1
        if fk is None or ts is None:
            raise ValueError("the cut is not in pi 1.6.0's projection of this path")
        return CutPoint(fk, ts, c.is_split_turn)

    def budget_index(self, keep: float) -> int | None:
        j = self.projected.budget_index(keep)
        return None if j is None else self._at(j)

    def candidate(self, keep: float) -> tuple[int, bool]:
        j, advanced = self.projected.candidate(keep)
        return self._at(j), advanced

    def cut(self, keep: float) -> CutPoint:
        return self.to_path(self.projected.cut(keep))

    def cut_at(self, candidate: int) -> CutPoint:
        j = self.projected_index(candidate)
        if j is None:
            raise ValueError(f"path #{candidate} is not in pi 1.6.0's projection of this path")
        return self.to_path(self.projected.cut_at(j))

    def reason(self, pos: int) -> str:
        """Why path position `pos` is (not) a cut point under pi 1.6.0 (rule 25), in words."""
        if not 0 <= pos < len(self.path):
            return "not on the active path"
        r = self.path[pos]
        j = self.projected_index(pos)
        if r.type == "compaction":
            return "compaction entry: never a cut point"
        if j is None:
            if r.type == "message" and r.role == "system":
                return (
                    "system message in the kept range: replaced by the compaction's snapshot, not a cut point"
                )
            return "not in pi 1.6.0's context: not a cut point"
        e = self.projected.projection.entries[j]
        if e.edit is not None and not e.roles:
            return "hidden by a context edit: not a cut point (rule 25)"
        roles = [x for x in e.roles if type(x) is str]
        if any(x in CUT_POINT_ROLES for x in roles):
            role = next(x for x in roles if x in CUT_POINT_ROLES)
            return f"{role} message: valid cut point (rule 25)"
        if "toolResult" in roles:
            return "tool result: must stay after its tool call"
        if "system" in roles:
            return "system message: not a cut point (rule 25)"
        if r.type == "branch_summary":
            return "branch summary without a summary: no message, not a cut point (rule 25)"
        return (
            f"{r.type if isinstance(r.type, str) else 'unknown'} entry: no context message, not a cut point"
        )

    def stops_scan(self, pos: int) -> bool:
        j = self.projected_index(pos)
        return j is not None and self.projected.stops_scan(j)

    def starts_turn(self, pos: int) -> bool:
        j = self.projected_index(pos)
        return j is not None and j < self._n_projected and self.projected.starts_turn(j)


@dataclass(eq=False, repr=False)  # identity, not contents: too big to compare or print
class ProjectedPathPlan:
    """pi 1.6.0's compaction plan of a path in path coordinates: the interface of
    :class:`~session_studio.core.preparation.CompactionPlan`, so one plan serves both profiles."""

    projected: ProjectedCompactionPlan
    planner: PathCutPlanner
    boundary: Boundary

    @classmethod
    def of(cls, session: Session, path: list[int]) -> ProjectedPathPlan:
        p = plan_projected_compaction(session, path)
        cuts = PathCutPlanner(p)
        b = p.boundary
        return cls(p, cuts, Boundary(cuts.start, len(path), p.path_index(b.prev_compaction)))

    @property
    def session(self) -> Session:
        return self.projected.session

    @property
    def path(self) -> list[int]:
        return self.projected.path

    @property
    def context(self) -> Projection:
        return self.projected.projection

    def tokens_before(self) -> ContextTokens:
        return self.projected.tokens_before()

    def cut(self, keep_recent_tokens: float) -> CutPoint:
        return self.planner.cut(keep_recent_tokens)

    def prepare(self, keep_recent_tokens: float, cut: CutPoint | None = None) -> Preparation | None:
        """prepareCompaction of pi 1.6.0 for a cut in path coordinates."""
        return self.projected.prepare(
            keep_recent_tokens, self.planner.to_projected(cut) if cut is not None else None
        )
