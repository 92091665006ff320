"""The one compaction plan: what the window shows, what the CLI prints and what the engine writes.

A :class:`PathPlanner` is built once per loaded session and leaf; it holds everything that does
not depend on the planning parameters (the context and its per-item tokens, the boundary, the cut
planner's running sums, the cut-point marks). :meth:`PathPlanner.plan` then answers for one set of
:class:`PlanParams` in about the time of a binary search: a keepRecentTokens slider step never
re-reads the path. Manual cuts go through the same ``CutPlanner.cut_at`` as the engine (pi's
backward metadata scan and split-turn rule), so every view of a plan agrees with what is written.

The pi semantics come from a :class:`~session_studio.core.profile.PiProfile` (0.80.2 by default).
Under 1.6.0 the planner works on pi's projection (context edits, system messages, rules 25–30) and
maps everything it exposes back to path positions, so every caller sees the same :class:`PlanState`.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import math
import operator
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .context import SessionContext, build_session_context
from .cut_points import CutPoint, cut_point_reason, is_valid_cut_point
from .defaults import DEFAULT_CONTEXT_WINDOW, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS
from .jsvalue import JsTypeError, js_truthy
from .overflow import Overflow, answer_overflow
from .path_positions import PathPositions
from .preparation import CompactionPlan, Preparation, plan_compaction
from .priority import STEP_ITEMS, yield_to_foreground
from .profile import PROFILE_0_80_2, PiProfile
from .projected_plan import PathCutPlanner, ProjectedPathPlan
from .projection import Projection, current_system_message, system_message_snapshot
from .record_table import column_on_path, last_on_path
from .session import EntryRecord, Session
from .threshold_check import ThresholdCheck, threshold_check
from .tokens import ContextTokens, estimate_tokens_16, should_compact

if TYPE_CHECKING:  # pydantic costs ~0.3 s to import: only the commit and export build entries
    from .entries import CompactionEntry

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "STAND_IN_NOTE",
    "SUMMARY_PLACEHOLDER_TOKENS",
    "AnyPlan",
    "ItemTokens",
    "PathPlanner",
    "PlanKey",
    "PlanMarks",
    "PlanParams",
    "PlanState",
    "Quirk",
    "item_kind",
    "planned_compaction_entry",
    "with_summary_tokens",
]

#: tokens assumed for a summary that was not generated yet (the projected context after compaction)
SUMMARY_PLACEHOLDER_TOKENS = 1500
#: what every screen adds to a size "after" that counts the placeholder (the one wording)
STAND_IN_NOTE = f"with a {SUMMARY_PLACEHOLDER_TOKENS:,}-token stand-in for the summary not generated yet"

#: (record index or -1 for the projected summary, kind, tokens) of one context message
ItemTokens = tuple[int, str, float]

_PRODUCES_MESSAGE = ("message", "custom_message", "branch_summary")
_ROLE_KINDS = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
        "system",
    }
)
#: one compaction plan, whichever pi's rules it follows (both in path coordinates)
AnyPlan = CompactionPlan | ProjectedPathPlan


@dataclass(frozen=True, slots=True)
class PlanParams:
    """What the user chooses: pi's settings (or what-if values) and an optional manual cut."""

    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    context_window: int = DEFAULT_CONTEXT_WINDOW
    manual_cut: int | None = None  # path position of the chosen cut point
    summary_tokens: float | None = None  # the generated/edited summary's size, if any
    #: pi's settings.json ``compaction.enabled`` (its /settings "auto-compact"): False, pi never
    #: compacts by itself (shouldCompact is false), /compact still does
    auto_compaction: bool = True
    #: the output limit (``maxTokens``) of the model pi runs, from its registry (models.json, pi-ai's
    #: catalogue); 0: unknown. pi 1.6.0's check compacts and retries for a length stop below it
    model_max_tokens: int = 0

    def automatic(self) -> PlanParams:
        """These settings with pi's own cut and summary: no cut chosen here, no summary drafted here
        (what pi's automatic compaction plans with: its overflow recovery, for one)."""
        return dataclasses.replace(self, manual_cut=None, summary_tokens=None)


@dataclass(frozen=True, slots=True)
class PlanKey:
    """Identifies the plan a user saw: the engine refuses to draft from anything else."""

    path: str
    indexed_bytes: int
    leaf_id: Any
    keep_recent_tokens: int
    manual_cut_id: Any  # entry id of the manual cut, None for pi's automatic cut
    profile: str


@dataclass(frozen=True)
class Quirk:
    code: str  # a spec section ("12.1.2") or an internal id ("leaf-compaction")
    title: str
    text: str

    @property
    def spec(self) -> str | None:
        """The spec section this quirk is documented in, if any (``"12.1.2"``)."""
        return self.code if self.code[:1].isdigit() else None


def item_kind(rec: EntryRecord) -> str:
    """The colour/legend kind of an entry (a message role, or the entry type's family)."""
    if rec.type == "message":
        return rec.role if isinstance(rec.role, str) and rec.role in _ROLE_KINDS else "damaged"
    if rec.type == "compaction":
        return "compaction"
    if rec.type == "branch_summary":
        return "branchSummary"
    if rec.type == "custom_message":
        return "custom"
    return "meta"


def _num(t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, int | float):
        return 0.0
    return 0.0 if math.isnan(t) else float(t)


def _running_sums(items: list[ItemTokens]) -> array[float]:
    """[0, t0, t0+t1, …] over the items' tokens, as doubles in an array (100k sums as float objects
    were 3.2 MB of a long path's window)."""
    return array("d", itertools.accumulate((t for _, _, t in items), operator.add, initial=0.0))


class PlanMarks(Mapping[int, str]):
    """record → mark: 'summarised', 'valid', 'invalid' (per loaded path, shared between plans)
    overlaid with the cut marks of one plan ('cut', 'turn_start', 'prefix')."""

    __slots__ = ("base", "overlay")

    def __init__(self, base: Mapping[int, str], overlay: Mapping[int, str]) -> None:
        self.base = base
        self.overlay = overlay

    def __getitem__(self, record: int) -> str:
        m = self.overlay.get(record)
        return m if m is not None else self.base[record]

    def get(self, record: int, default: str | None = None) -> str | None:  # type: ignore[override]
        # direct lookups: Mapping.get would go through __getitem__ and raise/catch a KeyError
        # for every unmarked record (most of the rows a tree paint asks about)
        m = self.overlay.get(record)
        return m if m is not None else self.base.get(record, default)

    def __contains__(self, record: object) -> bool:
        return record in self.overlay or record in self.base

    def __iter__(self) -> Iterator[int]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)

    def changed_since(self, old: Mapping[int, str]) -> Iterable[int] | None:
        """Records whose mark may differ from ``old`` cheaply, or None if everything may have changed."""
        if isinstance(old, PlanMarks) and old.base is self.base:
            return old.overlay.keys() | self.overlay.keys()
        return None


#: a path position's mark in PathMarks (0: none)
_MARK_NAMES: tuple[str | None, ...] = (None, "summarised", "valid", "invalid")
_SUMMARISED, _VALID, _INVALID = b"\x01", b"\x02", b"\x03"


class PathMarks(Mapping[int, str]):
    """record → 'summarised', 'valid' or 'invalid' on a path (every plan of it shares them): one byte
    per path position, found through the path's positions (a dict of them held ~50 bytes an entry,
    10 MB on the 1 GB session's 209k-entry path)."""

    __slots__ = ("_codes", "_count", "_path", "_positions")

    def __init__(self, path: list[int], positions: Mapping[int, int], codes: bytearray) -> None:
        self._path = path
        self._positions = positions
        self._codes = codes
        self._count = len(codes) - codes.count(0)

    def get(self, record: int, default: str | None = None) -> str | None:  # type: ignore[override]
        pos = self._positions.get(record)
        if pos is None:
            return default
        name = _MARK_NAMES[self._codes[pos]]
        return default if name is None else name

    def __getitem__(self, record: int) -> str:
        m = self.get(record)
        if m is None:
            raise KeyError(record)
        return m

    def __contains__(self, record: object) -> bool:
        return type(record) is int and self.get(record) is not None

    def __iter__(self) -> Iterator[int]:
        path, codes = self._path, self._codes
        return (path[pos] for pos in range(len(codes)) if codes[pos])

    def __len__(self) -> int:
        return self._count


@dataclass(frozen=True)
class PlanState:
    """One plan, as every view shows it."""

    params: PlanParams
    window_known: bool
    path: list[int]
    plan: AnyPlan | None
    cut: CutPoint | None
    budget_pos: int | None  # path position where keepRecentTokens was reached
    tokens: ContextTokens | None
    item_tokens: list[ItemTokens]  # chars/4 per context item, in context order
    after_tokens: list[ItemTokens]  # projected context after compaction (summary first)
    nothing_to_compact: bool
    error: str | None
    quirks: list[Quirk] = field(default_factory=list)
    marks: Mapping[int, str] = field(default_factory=dict)
    key: PlanKey | None = None
    session: Session | None = None
    #: index into item_tokens of the first kept context item / of the split turn's start (None: none)
    first_kept_item: int | None = None
    turn_start_item: int | None = None
    budget_item: int | None = None  # index into item_tokens where keepRecentTokens was reached
    #: record → path position (shared by every plan of the path)
    positions: Mapping[int, int] = field(default_factory=dict)
    #: [0, t0, t0+t1, …] over item_tokens (shared by every plan of the path)
    item_cum: Sequence[float] = field(default_factory=list)
    profile: PiProfile = PROFILE_0_80_2
    #: pi's footer shows the context size as unknown: a compaction and no usable usage after it (§4.7)
    tokens_unknown: bool = False
    #: the history summary's path positions: (first, last) of the entries that give it messages, and
    #: the system messages between them pi 1.6.0 leaves out (rule 31); None: it covers nothing
    history_span: tuple[int, int, tuple[int, ...]] | None = None
    #: what pi's own check weighs against the threshold, or why it weighs nothing (None: no path)
    threshold_check: ThresholdCheck | None = None

    @property
    def keep(self) -> int:
        return self.params.keep_recent_tokens

    @property
    def reserve(self) -> int:
        return self.params.reserve_tokens

    @property
    def window(self) -> int:
        return self.params.context_window

    @property
    def manual(self) -> bool:
        return self.params.manual_cut is not None

    @property
    def threshold(self) -> int:
        return self.window - self.reserve

    @property
    def context_tokens(self) -> float:
        return _num(self.tokens.tokens) if self.tokens else 0.0

    @property
    def first_kept_record(self) -> int | None:
        if self.cut is None or self.cut.first_kept_index >= len(self.path):
            return None
        return self.path[self.cut.first_kept_index]

    @property
    def checked_tokens(self) -> float | None:
        """The tokens pi's own check weighs (:mod:`.threshold_check`); None: it does not check."""
        return self.threshold_check.tokens if self.threshold_check is not None else None

    @functools.cached_property
    def overflow(self) -> Overflow | None:
        """The context overflow pi's check finds in the answer it checks, before the threshold
        (:func:`.overflow.answer_overflow`): pi compacts for it at once when the answer came from
        the model it runs."""
        check = self.threshold_check
        if check is None or check.answer_facts is None:
            return None
        return answer_overflow(
            dict(check.answer_facts),
            self.window,
            self.profile,
            check.edited_after,
            self.params.model_max_tokens,
            check.retained,
        )

    @property
    def omits_failed_attempt(self) -> bool:
        """pi 1.6.0's recovery from the overflow its check finds (:attr:`overflow`) takes the failed
        answer and its tool results out of the context before it compacts (``_omitRecoveryAttempt``):
        an overflow it retries for. pi 0.80.2 drops the answer from its memory only."""
        found = self.overflow
        return found is not None and found.retries and self.profile.projection

    @property
    def should_compact(self) -> bool:
        """pi's own check (§9): enabled, and what it weighs (:attr:`checked_tokens`) over window −
        reserve. The context's size alone said "pi would compact" where pi would not: right after
        a compaction, or with estimated messages after the last answer."""
        checked = self.checked_tokens
        if checked is None or (self.nothing_to_compact and not self.manual):
            return False  # with pi's cut prepareCompaction finds nothing: pi does nothing
        return should_compact(checked, self.window, self.reserve, self.params.auto_compaction)

    @property
    def over_threshold(self) -> bool:
        """What pi's check weighs is over window − reserve (pi's settings may still keep it from
        compacting by itself: :attr:`should_compact`)."""
        checked = self.checked_tokens
        return checked is not None and should_compact(checked, self.window, self.reserve)

    @property
    def kept_tokens(self) -> float:
        """Estimated tokens of the context items kept verbatim (from the first kept entry on)."""
        if self.first_kept_item is None or not self.item_cum:
            return 0.0
        return self.item_cum[-1] - self.item_cum[min(self.first_kept_item, len(self.item_cum) - 1)]

    def mark_reason(self, record: int) -> str:
        """Why an entry is (not) a cut point under this plan's pi, for the hover text."""
        if self.session is None:
            return ""
        if isinstance(self.plan, ProjectedPathPlan):
            return self.plan.planner.reason(self.positions.get(record, -1))
        return cut_point_reason(self.session.records[record])

    def prepare(self) -> Preparation | None:
        """prepareCompaction for this plan's cut (the engine's preparation, same function)."""
        if self.plan is None or self.cut is None:
            return None
        return self.plan.prepare(self.keep, self.cut)


def _safe_valid(rec: EntryRecord) -> bool:
    try:
        return is_valid_cut_point(rec)
    except JsTypeError:
        return False


class PathPlanner:
    """Everything about compacting one path that does not depend on the parameters.

    Build it off the GUI thread (it reads the whole path once); :meth:`plan` is then cheap.
    """

    def __init__(
        self, session: Session, leaf_index: int | None = None, *, profile: PiProfile = PROFILE_0_80_2
    ) -> None:
        self.session = session
        self.profile = profile
        leaf = session.leaf_index() if leaf_index is None else leaf_index
        self.leaf_index = leaf
        self.path: list[int] = session.path_indices(leaf) if leaf is not None else []
        self.error: str | None = None
        #: what pi would throw (the error above), for callers that report it as pi's failure
        self.failure: JsTypeError | None = None
        self.context: SessionContext | Projection | None = None
        self.plan_: AnyPlan | None = None
        self.tokens: ContextTokens | None = None
        self.item_tokens: list[ItemTokens] = []
        self._item_positions: Sequence[int] = []  # path position of each context item
        self._item_cum: Sequence[float] = [0.0]
        self.tokens_unknown = False
        self._snapshot_tokens: float | None = None  # 1.6.0: the system snapshot a compaction stores
        #: 1.6.0: path positions of system messages, sorted (left out of what it summarises)
        self._system_positions: list[int] = []
        path = self.path
        yield_to_foreground()
        self.positions = PathPositions(path)
        yield_to_foreground()
        # per path position: messages it gives to summarise, and (0.80.2) sent but not weighed
        summarised = array("q", bytes(8 * len(path)))
        unweighed = array("q", bytes(8 * len(path)))
        if profile.projection:
            self._plan_projected(summarised)
            self._system_positions.sort()  # the projection lists a compaction's own first
        else:
            self._plan_path(summarised, unweighed)
        self._check = (
            threshold_check(
                session,
                path,
                self.item_tokens,
                self.tokens,
                profile,
                self.context if isinstance(self.context, Projection) else None,
            )
            if self.error is None and path
            else None
        )
        # running counts over the path, so a plan's "how many before the cut" is a subtraction
        yield_to_foreground()
        self._producing = array("q", itertools.accumulate(summarised, initial=0))
        yield_to_foreground()
        self._unweighed = array("q", itertools.accumulate(unweighed, initial=0))
        yield_to_foreground()
        del summarised, unweighed
        codes = bytearray(len(path))
        pl = self.plan_
        if pl is not None:
            b = pl.boundary
            summarised_end = min(b.start, len(path))
            codes[:summarised_end] = _SUMMARISED * summarised_end
            codes[b.start : b.end] = _INVALID * (b.end - b.start)
            for pos in pl.planner.cut_points:
                if b.start <= pos < b.end:
                    codes[pos] = _VALID[0]
        self.base_marks = PathMarks(path, self.positions, codes)

    def _plan_path(self, summarised: MutableSequence[int], unweighed: MutableSequence[int]) -> None:
        """pi 0.80.2: buildSessionContext, findCutPoint over path entries."""
        session, path = self.session, self.path
        try:
            self.context = build_session_context(session, path=path) if path else None
        except JsTypeError as e:
            self.error = f"pi would throw building the context: {e}"
            self.failure = e
        if path:
            built = self.context if isinstance(self.context, SessionContext) else None
            try:
                # its preparation's buildSessionContext(pathEntries) is this one: built once
                self.plan_ = plan_compaction(session, path, None if built is None else lambda: built)
            except JsTypeError as e:
                self.error = f"pi would throw planning: {e}"
                self.failure = e
        ctx = self.context
        if isinstance(ctx, SessionContext) and self.error is None:
            try:
                self.tokens = ctx.estimate_tokens()
                self._build_items(ctx)
            except JsTypeError as e:
                self.error = f"pi would throw estimating tokens: {e}"
                self.failure = e
        recs = session.records
        produce = {recs.code(t) for t in _PRODUCES_MESSAGE}
        unweighed_types = {recs.code("custom_message"), recs.code("branch_summary")}
        for k, t in enumerate(column_on_path(recs.types, path)):  # type codes: paths are long
            summarised[k] = int(t in produce)
            unweighed[k] = int(t in unweighed_types)
        self.tokens_unknown = self._usage_unknown(set(path))

    def _plan_projected(self, summarised: MutableSequence[int]) -> None:
        """pi 1.6.0: buildSessionProjection, findProjectedCutPoint; items and counts in path positions."""
        session, path = self.session, self.path
        if not path:
            return
        try:
            pl = ProjectedPathPlan.of(session, path)
        except JsTypeError as err:
            self.error = f"pi would throw building the context: {err}"
            self.failure = err
            return
        self.plan_ = pl
        proj = pl.context
        self.context = proj
        recs = session.records
        position = self.positions
        items: list[ItemTokens] = []
        item_positions: list[int] = []
        symbols, roles_of = recs.symbols, recs.roles
        entries = proj.entries
        # the entries' records and roles as columns: a plain message's entry is never made as an
        # object (on a 100k-entry path they were 7 MB the window kept)
        records = proj.records()
        entry_roles = entries.roles()
        raw_estimates = proj.raw_estimates(0, len(entries))
        path_positions = position.positions_of(records)
        for j, (r, roles, raw) in enumerate(zip(records, entry_roles, raw_estimates, strict=True)):
            if not j % STEP_ITEMS:
                yield_to_foreground()
            if raw is not None:
                # a message whose own raw message is its one context message: what the general
                # steps below give it, from the columns
                pos = path_positions[j]
                if pos >= 0:
                    summarised[pos] = int(roles[0] != "system")
                    if roles[0] == "system":
                        self._system_positions.append(pos)
                role = symbols[roles_of[r]]
                kind = role if isinstance(role, str) and role in _ROLE_KINDS else "damaged"
                items.append((r, kind, float(raw)))
                item_positions.append(pos)
                continue
            rec = recs[r]
            is_compaction = rec.type == "compaction"
            pos = path_positions[j]
            if not is_compaction and pos >= 0:
                # getMessagesFromProjectedEntryForCompaction: no system messages
                summarised[pos] = sum(role != "system" for role in roles)
                if "system" in roles:
                    self._system_positions.append(pos)
            if not roles:
                continue
            try:
                toks = proj.entry_tokens(j)
            except JsTypeError as err:
                self.error = f"pi would throw estimating tokens: {err}"
                self.failure = err
                return
            for role, t in zip(roles, toks, strict=True):
                if isinstance(t, JsTypeError):
                    self.error = f"pi would throw estimating tokens: {t}"
                    self.failure = t
                    return
                kind = role if is_compaction and role in ("system", "compactionSummary") else item_kind(rec)
                items.append((r, kind, _num(t)))
                # the compaction's snapshot and summary stand before everything kept: position -1
                item_positions.append(-1 if is_compaction else pos)
        self.item_tokens = items
        self._item_positions = array("q", item_positions)  # not 100k int objects kept
        self._item_cum = _running_sums(items)
        try:
            self.tokens = pl.tokens_before()
        except JsTypeError as err:
            self.error = f"pi would throw estimating tokens: {err}"
            self.failure = err
        system = [
            m for j, roles in enumerate(entry_roles) if "system" in roles for m in proj.entry_messages(j)
        ]
        try:
            current = current_system_message(system)
            self._snapshot_tokens = None if current is None else _num(estimate_tokens_16(current))
        except JsTypeError as err:
            self.error = f"pi would throw replaying the system message: {err}"
            self.failure = err
        visible = {r for r, roles in zip(records, entry_roles, strict=True) if roles}
        self.tokens_unknown = self._usage_unknown(visible)

    def _usage_unknown(self, visible: set[int]) -> bool:
        """getContextUsage: after a compaction, only an assistant answer after it (in context,
        not aborted or failed, usage > 0) makes the size known again (§4.7)."""
        recs = self.session.records
        path = self.path
        last = last_on_path(recs, path, "compaction")
        if last < 0:
            return False
        for i in path[last + 1 :]:
            r = recs[i]
            u = r.usage_tokens
            if r.type == "message" and r.role == "assistant" and i in visible and _num(u) > 0:
                return False
        return True

    @property
    def model(self) -> Any:
        return self.context.model if self.context is not None else None

    @property
    def item_positions(self) -> Sequence[int]:
        """The path position of each context item (-1: a compaction's summary or snapshot), sorted."""
        return self._item_positions

    @property
    def item_cum(self) -> Sequence[float]:
        """[0, t0, t0+t1, …] over ``item_tokens``: the context's size up to each item."""
        return self._item_cum

    def _build_items(self, ctx: SessionContext) -> None:
        recs = self.session.records
        position = self.positions
        items: list[ItemTokens] = []
        positions: list[int] = []
        on_path = position.positions_of([it.record for it in ctx.items])
        for it, t, pos in zip(ctx.items, ctx.message_tokens(), on_path, strict=True):
            rec = recs[it.record]
            kind = "compactionSummary" if it.kind == "compactionSummary" else item_kind(rec)
            items.append((it.record, kind, _num(t)))
            # the compaction summary stands before everything kept: position -1 sorts it first
            positions.append(-1 if it.kind == "compactionSummary" else pos)
        self.item_tokens = items
        self._item_positions = array("q", positions)  # not 100k int objects kept
        self._item_cum = _running_sums(items)

    def key(self, params: PlanParams) -> PlanKey:
        s = self.session
        manual_id = (
            self.session.records[self.path[params.manual_cut]].id if params.manual_cut is not None else None
        )
        leaf_id = s.records[self.leaf_index].id if self.leaf_index is not None else None
        return PlanKey(s.path, s.size, leaf_id, params.keep_recent_tokens, manual_id, self.profile.version)

    def manual_cut_error(self, pos: int) -> str | None:
        """Why path position ``pos`` cannot be a manual cut, or None if it can."""
        pl = self.plan_
        if pl is None:
            return "no plan"
        if not 0 <= pos < len(self.path):
            return "this entry is not on the active path"
        if pos < pl.boundary.start:
            return "this entry is before the previous compaction's kept start: already summarised"
        if isinstance(pl, ProjectedPathPlan):
            return None if self.base_marks.get(self.path[pos]) == "valid" else pl.planner.reason(pos)
        rec = self.session.records[self.path[pos]]
        if not _safe_valid(rec):
            return cut_point_reason(rec)
        return None

    def plans(self, session: Session, leaf_index: int | None, profile: PiProfile) -> bool:
        """Whether this is the planner of that session object's path to `leaf_index` under `profile`."""
        return self.session is session and self.leaf_index == leaf_index and self.profile == profile

    def plan(self, params: PlanParams, *, window_known: bool = True) -> PlanState:
        """The plan for ``params``: a binary search plus work proportional to what the cut changes."""
        path = self.path
        err = self.error
        cut: CutPoint | None = None
        budget: int | None = None
        overlay: dict[int, str] = {}
        quirks: list[Quirk] = []
        nothing = True
        after: list[ItemTokens] = []
        first_item: int | None = None
        turn_item: int | None = None
        pl = self.plan_
        if pl is not None and err is None:
            planner = pl.planner
            try:
                budget = planner.budget_index(params.keep_recent_tokens)
                if params.manual_cut is not None:
                    cut = planner.cut_at(params.manual_cut)
                else:
                    cut = planner.cut(params.keep_recent_tokens)
            except JsTypeError as e:
                err = f"pi would throw finding the cut point: {e}"
            except ValueError as e:  # a manual cut on an entry pi 1.6.0 leaves out of its context
                err = f"cannot cut there: {e}"
            if cut is not None:
                fk = cut.first_kept_index
                first_item = bisect.bisect_left(self._item_positions, fk)
                if cut.is_split_turn and cut.turn_start_index >= 0:
                    turn_item = bisect.bisect_left(self._item_positions, cut.turn_start_index)
                if cut.is_split_turn and cut.turn_start_index >= 0:
                    for pos in range(cut.turn_start_index, min(fk, len(path))):
                        overlay[path[pos]] = "prefix"
                    overlay[path[cut.turn_start_index]] = "turn_start"
                if fk < len(path):
                    overlay[path[fk]] = "cut"
                nothing, quirks = self._analyse(cut, budget, params)
                if not nothing and fk < len(path):
                    summ = (
                        params.summary_tokens
                        if params.summary_tokens is not None
                        else float(SUMMARY_PLACEHOLDER_TOKENS)
                    )
                    after = self._after(float(summ), first_item)
        if params.context_window <= 0:
            quirks.append(
                Quirk(
                    "12.1.18",
                    "Unknown context window (0)",
                    "With contextWindow = 0, shouldCompact is true for any token count.",
                )
            )
        return PlanState(
            params,
            window_known,
            path,
            pl,
            cut,
            budget,
            self.tokens if err is None or self.tokens is not None else None,
            self.item_tokens if err is None else [],
            after,
            nothing,
            err,
            quirks,
            PlanMarks(self.base_marks, overlay),
            self.key(params) if path else None,
            self.session,
            first_item,
            turn_item,
            bisect.bisect_left(self._item_positions, budget) if budget is not None else None,
            self.positions,
            self._item_cum,
            self.profile,
            self.tokens_unknown,
            self._history_span(cut) if cut is not None and pl is not None and err is None else None,
            self._check if err is None else None,
        )

    def _history_span(self, cut: CutPoint) -> tuple[int, int, tuple[int, ...]] | None:
        """The history part's first and last positions that give the summary messages, and the system
        messages between them (never summarised by 1.6.0): two bisections of the running counts,
        not a walk over the range (a re-plan of a 900k-entry path runs on every slider step)."""
        pl = self.plan_
        assert pl is not None
        produced = self._producing
        start = max(0, min(pl.boundary.start, len(self.path)))
        end = max(
            start, min(cut.turn_start_index if cut.is_split_turn else cut.first_kept_index, len(self.path))
        )
        if produced[end] <= produced[start]:
            return None
        first = bisect.bisect_right(produced, produced[start], start, end + 1) - 1
        last = bisect.bisect_left(produced, produced[end], start, end + 1) - 1
        system = self._system_positions
        left_out = system[bisect.bisect_left(system, first) : bisect.bisect_right(system, last)]
        return first, last, tuple(left_out)

    def _after(self, summary_tokens: float, first_item: int) -> list[ItemTokens]:
        """The context after compacting: the summary, then the kept items.

        A previous compaction's items have position -1, so they are never in the kept slice.
        Under 1.6.0 the new compaction also carries the system snapshot, and system messages in
        the kept range are left out (rule 17)."""
        kept = self.item_tokens[first_item:]
        if not self.profile.projection:
            return [(-1, "compactionSummary", summary_tokens), *kept]
        head: list[ItemTokens] = []
        if self._snapshot_tokens is not None:
            head.append((-1, "system", self._snapshot_tokens))
        head.append((-1, "compactionSummary", summary_tokens))
        return head + [it for it in kept if it[1] != "system"]

    def _analyse(self, cut: CutPoint, budget: int | None, params: PlanParams) -> tuple[bool, list[Quirk]]:
        """'Nothing to compact' by prepareCompaction's rules, and the quirks and rules this cut meets
        (pi 0.80.2's quirks §12.1, or the 1.6.0 rules of §10.5 where 1.6.0 behaves otherwise)."""
        pl = self.plan_
        assert pl is not None
        recs = self.session.records
        path = self.path
        b = pl.boundary
        q: list[Quirk] = []
        fk = cut.first_kept_index
        if path and recs[path[-1]].type == "compaction":
            return True, [
                Quirk(
                    "leaf-compaction",
                    "The leaf is a compaction",
                    "pi does not compact right after a compaction.",
                )
            ]
        if fk >= len(path):
            return True, q
        first = recs[path[fk]]
        if not js_truthy(first.id):
            return True, q
        produced = self._producing
        hist_end = cut.turn_start_index if cut.is_split_turn else fk
        n_hist = produced[max(hist_end, b.start)] - produced[b.start]
        n_pre = produced[fk] - produced[cut.turn_start_index] if cut.is_split_turn else 0
        nothing = n_hist == 0 and n_pre == 0
        # a split turn whose history part is empty, after a compaction: 0.80.2 loses the previous
        # summary (§12.1.4), 1.6.0 sends it as the history (rule 38)
        previous_as_history = cut.is_split_turn and n_hist == 0 and n_pre > 0 and b.prev_compaction >= 0
        if isinstance(pl, ProjectedPathPlan):
            rules = self._rules_1_6_0(pl.planner, cut, budget, params)
            if previous_as_history:
                rules.append(
                    Quirk(
                        "10.7",
                        "Rule 38: the previous summary is the history",
                        f"Nothing before the split turn's start #{cut.turn_start_index} is left to summarise, "
                        "so pi 1.6.0 makes no history request: the previous compaction's summary "
                        f"(#{b.prev_compaction}) is kept word for word as the history part, and the turn "
                        "prefix's summary follows it (pi 0.80.2 put 'No prior history.' there and lost the "
                        "previous summary, §12.1.4).",
                    )
                )
            return nothing, rules
        planner = pl.planner
        if (
            nothing
            and planner.cut_points
            and fk == planner.cut_points[0]
            and budget is not None
            and budget > planner.cut_points[-1]
        ):
            big = recs[path[budget]]
            what = "tool result" if big.role == "toolResult" else "entries"
            q.append(
                Quirk(
                    "12.1.2",
                    "Nothing to compact: oversized trailing entry (Example D)",
                    f"The newest {what} alone {'reaches' if what == 'tool result' else 'reach'} keepRecentTokens ({_num(big.tokens):,.0f} tokens at "
                    f"path #{budget}), after the last valid cut point. pi then falls back to the first cut "
                    "point, so there is nothing before it to summarise and compaction does nothing.",
                )
            )
        if (
            cut.is_split_turn
            and first.type != "message"
            and first.type not in ("branch_summary", "custom_message")
            and _scan_began_at_a_user_message(recs, path, fk)
        ):
            q.append(
                Quirk(
                    "12.1.1",
                    "Metadata-before-user split (Example C)",
                    f"The cut moved back onto a {first.type} entry before a user message, so pi treats it as "
                    "a split turn: the whole previous turn becomes the 'turn prefix' and is summarised with "
                    "the turn-prefix prompt.",
                )
            )
        if cut.is_split_turn and cut.turn_start_index == fk:
            q.append(
                Quirk(
                    "12.1.5",
                    "Split turn with an empty prefix (Example G)",
                    "isSplitTurn is true although the turn prefix is empty (cut at a bash execution, branch "
                    "summary or custom message). The summary is unaffected; extensions see isSplitTurn = true.",
                )
            )
        if previous_as_history:
            q.append(
                Quirk(
                    "12.1.4",
                    "Previous summary lost",
                    "The history part of this split turn is empty, so pi sends 'No prior history.' instead "
                    "of the previous compaction summary.",
                )
            )
        ignored = self._unweighed[len(path)] - self._unweighed[fk]
        if ignored:
            q.append(
                Quirk(
                    "12.1.3",
                    "Sizes ignored in the kept tail",
                    f"{ignored} custom_message/branch_summary entr{'y is' if ignored == 1 else 'ies are'} "
                    "kept but not counted toward keepRecentTokens, although the LLM receives them.",
                )
            )
        return nothing, q

    def _rules_1_6_0(
        self, planner: PathCutPlanner, cut: CutPoint, budget: int | None, params: PlanParams
    ) -> list[Quirk]:
        """The pi 1.6.0 rules (spec §10.5) that make this cut differ from what 0.80.2 would do."""
        q: list[Quirk] = []
        recs = self.session.records
        path = self.path
        fk = cut.first_kept_index
        cps = planner.cut_points
        if params.manual_cut is None and cps and budget is not None and budget > cps[-1]:
            produced = self._producing
            alone = produced[len(path)] - produced[budget + 1] == 0  # no message after the budget's entry
            big = recs[path[budget]]
            if alone:
                what = "tool result" if big.role == "toolResult" else "entry"
                reached = (
                    f"The newest {what} alone reaches keepRecentTokens (at path #{budget}), after the "
                    f"last valid cut point #{cps[-1]}"
                )
                stays = f"the tool call before that {what} stays"
            else:
                reached = (
                    f"The entries after the last valid cut point #{cps[-1]} reach keepRecentTokens only "
                    f"together (at path #{budget}, walking back from the newest)"
                )
                stays = "the tool call before them stays"
            q.append(
                Quirk(
                    "10.5",
                    "Rule 27: keepRecentTokens reached after the last cut point, which is kept",
                    f"{reached}. pi 1.6.0 cuts at that last cut point, so {stays} (pi 0.80.2 fell back to "
                    "the first cut point and compacted nothing, quirk §12.1.2).",
                )
            )
        if params.manual_cut is None and cps and planner.candidate(params.keep_recent_tokens)[1]:
            q.append(
                Quirk(
                    "10.5",
                    "Rule 30: recovery omission, cut advanced",
                    "After the cut point there are only metadata and entries hidden by context edits, "
                    "including an omitted assistant attempt: pi 1.6.0 advances the cut by one entry "
                    "before the backward scan.",
                )
            )
        if (
            cut.is_split_turn
            and fk < len(path)
            and not planner.stops_scan(fk)
            and _began_at_a_turn_start(planner, fk, len(path))
        ):
            q.append(
                Quirk(
                    "12.1.1",
                    "Metadata-before-user split (Example C, still in 1.6.0)",
                    f"The cut moved back onto a {recs[path[fk]].type} entry before a user message, so pi "
                    "treats it as a split turn: the whole previous turn becomes the 'turn prefix' and is "
                    "summarised with the turn-prefix prompt.",
                )
            )
        return q


def _scan_began_at_a_user_message(recs: Any, path: Sequence[int], fk: int) -> bool:
    """Example C (pi 0.80.2): the backward scan began at a user message and moved the cut back onto
    the metadata before it. Not when the entry after that metadata is an assistant's: that cut
    was inside a turn anyway, an ordinary split."""
    j = fk
    while j < len(path) and recs[path[j]].type not in ("message", "compaction"):
        j += 1
    return j < len(path) and recs[path[j]].type == "message" and recs[path[j]].role == "user"


def _began_at_a_turn_start(planner: Any, fk: int, n: int) -> bool:
    """Example C under pi 1.6.0: the entry the backward scan began at (the first of the ``n`` path
    entries after the metadata the cut moved onto) starts a turn."""
    j = fk
    while j < n and not planner.stops_scan(j):
        j += 1
    return j < n and planner.starts_turn(j)


def planned_compaction_entry(
    session: Session,
    leaf_index: int,
    preparation: Preparation,
    profile: PiProfile,
    *,
    summary: str,
    entry_id: str,
    timestamp: str,
    usage: dict[str, Any] | None = None,
) -> CompactionEntry:
    """The compaction entry pi appends after the leaf for this preparation, with ``summary``.

    The one construction for the entry written (engine) and the previews (export): pi 1.6.0 adds
    the summarisation ``usage`` and the replayed system message at the boundary (§10.7); 0.80.2
    has neither. ``tokensBefore`` and the file lists are the preparation's, as pi stores them."""
    from .entries import CompactionEntry, FileDetails

    read, modified = preparation.file_lists
    leaf_id = session.records[leaf_index].id
    pi16 = profile.projection
    return CompactionEntry(
        id=entry_id,
        timestamp=timestamp,
        parent_id=leaf_id,
        summary=summary,
        first_kept_entry_id=str(preparation.first_kept_entry_id),
        tokens_before=preparation.tokens_before,
        details=FileDetails(read_files=read, modified_files=modified),
        usage=usage if pi16 else None,
        from_hook=False,
        system_message=system_message_snapshot(session, leaf_id, timestamp) if pi16 else None,
    )


def with_summary_tokens(after: list[ItemTokens], summary_tokens: float) -> list[ItemTokens]:
    """``after`` (a PlanState's projected context) with the new summary counted as
    ``summary_tokens``: the edited summary changes only its own item (under 1.6.0 the system
    snapshot comes first and keeps its size)."""
    return [
        (-1, kind, summary_tokens) if pos == -1 and kind == "compactionSummary" else (pos, kind, t)
        for pos, kind, t in after
    ]
