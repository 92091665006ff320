"""Compaction as pi runs it (pi 0.80.2: spec §6, §7; pi 1.6.0: §10.6, §10.7), with a preview
before anything is written. The pi profile decides the plan, the requests and the entry written.

draft = draft_compaction(session, keep_recent_tokens=..., cut_entry_id=None)
outcome = summarize_draft(draft, summarizer, on_text=...)   # one or two LLM calls
outcome.summary = edited_text                              # optional, the user's edit
entry = commit_compaction(session, outcome)                # append + verify
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.context import SessionContext, build_session_context
from ..core.cut_points import CutPoint, cut_point_reason, is_valid_cut_point
from ..core.entries import CompactionEntry
from ..core.errors import EntryNotFoundError, SessionStudioError
from ..core.file_ops import format_file_operations
from ..core.ids import now_iso
from ..core.jsvalue import UNDEFINED
from ..core.messages import convert_to_llm
from ..core.plan import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    AnyPlan,
    PathPlanner,
    PlanKey,
    PlanParams,
    planned_compaction_entry,
)
from ..core.preparation import Preparation
from ..core.profile import PROFILE_0_80_2, PiProfile
from ..core.projection import Projection, build_session_projection
from ..core.serialize import serialize_conversation
from ..core.session import Session
from ..core.tokens import ContextTokens, estimator_for
from ..core.writer import FileFingerprint
from ..llm.base import CancelToken, Summarizer, SummaryRequest, SummaryResult
from ..llm.errors import LlmSummaryError
from ..llm.prompts import (
    HISTORY_HEADINGS,
    TURN_PREFIX_CONTINUATION_HEADINGS,
    TURN_PREFIX_HEADINGS,
    Prompts,
)
from ..llm.requests import answer_failure, history_request, merge_split_turn, turn_prefix_request
from .common import append_entry, ensure_appendable, fresh_id, loaded_fingerprint

__all__ = [
    "CompactionDraft",
    "CompactionOutcome",
    "NothingToCompactError",
    "PlanChangedError",
    "commit_compaction",
    "draft_compaction",
    "requested_headings",
    "summarize_draft",
]


class NothingToCompactError(SessionStudioError):
    """pi would refuse: `Already compacted` or `Nothing to compact (session too small)`."""


class PlanChangedError(SessionStudioError):
    """The plan the user saw is not the plan of the session now (the file changed, or the leaf,
    keepRecentTokens or the manual cut differ): nothing is drafted from a plan nobody saw."""


class InvalidCutError(SessionStudioError):
    """A manual cut at an entry that is not a valid cut point (the message says why)."""


@dataclass
class CompactionDraft:
    """Everything known before the LLM runs: the plan, the cut, what is summarised, the requests."""

    session: Session
    leaf_index: int
    path: list[int]
    plan: AnyPlan
    cut: CutPoint
    manual: bool
    preparation: Preparation
    requests: list[SummaryRequest]  # history (unless empty in a split turn), then turn prefix
    has_history_request: bool
    fingerprint: FileFingerprint
    keep_recent_tokens: int
    reserve_tokens: int
    profile: PiProfile = PROFILE_0_80_2
    #: the path's planner the draft was made with (other plans of the same path are a binary search)
    planner: PathPlanner | None = None

    @property
    def first_kept_entry_id(self) -> str:
        return str(self.preparation.first_kept_entry_id)

    @property
    def tokens_before(self) -> ContextTokens:
        return self.plan.tokens_before()

    def file_lists(self) -> tuple[list[Any], list[Any]]:
        return self.preparation.file_lists


@dataclass
class CompactionOutcome:
    """The summary text (editable) and what the new entry will be."""

    draft: CompactionDraft
    summary: str  # the merged summary *with* the file lists appended, as pi stores it
    responses: list[str] = field(default_factory=list)
    usage: list[dict[str, int] | None] = field(default_factory=list)
    #: id and timestamp are fixed when the summary exists, so the preview is exactly what is written
    entry_id: str = ""
    timestamp: str = field(default_factory=now_iso)

    def __post_init__(self) -> None:
        if not self.entry_id:
            self.entry_id = fresh_id(self.draft.session)

    def entry(self) -> CompactionEntry:
        d = self.draft
        return planned_compaction_entry(
            d.session,
            d.leaf_index,
            d.preparation,
            d.profile,
            summary=self.summary,
            entry_id=self.entry_id,
            timestamp=self.timestamp,
            usage=combined_usage(self.usage),
        )

    def context_after(self) -> SessionContext | Projection:
        """The context pi will build after this entry is appended (the preview)."""
        entry = self.entry().to_json_dict()
        d = self.draft
        # the entry hangs under the draft's leaf, whose path the draft holds: walked again only if
        # the session read more of the file since (the session's fingerprint moves on refresh)
        known = d.path if d.session.fingerprint == d.fingerprint else None
        virtual = d.session.with_virtual_entries([entry], known_path=known)
        if d.profile.projection:
            return build_session_projection(virtual)
        return build_session_context(virtual)

    def estimated_tokens_after(self) -> Any:
        """AgentSession's estimatedTokensAfter: Σ estimateTokens over the rebuilt context."""
        estimate = estimator_for(self.draft.profile.system_messages)
        total: Any = 0
        for m in self.context_after().messages():
            total += estimate(m)
        return total


def requested_headings(draft: CompactionDraft) -> tuple[str, ...]:
    """The headings the draft's requests ask the model for, in the order they appear in the merged
    summary: the history's (initial or update prompt), then the turn prefix's under the draft's
    pi (a continuation checkpoint under 1.6.0, rule 39)."""
    out: list[str] = []
    for request in draft.requests:
        if request.kind in ("history", "update"):
            out.extend(HISTORY_HEADINGS)
        elif request.kind == "turn_prefix":
            out.extend(
                TURN_PREFIX_CONTINUATION_HEADINGS if draft.profile.projection else TURN_PREFIX_HEADINGS
            )
    return tuple(out)


def call_usage(reported: dict[str, Any] | None) -> dict[str, Any]:
    """The usage pi 1.6.0 keeps for one summarisation call. pi-ai starts every answer with zero
    usage and overwrites it with what the provider reports, so a provider that reports nothing
    leaves zeros (and a cost without `totalFromProvider`); a reported usage gets a cost from the
    model's prices (calculateCost, which marks `totalFromProvider: false`). Session Studio knows
    no prices, so the cost is 0; pi's cost totals read `usage.cost.total` and need the object."""
    cost = _zero_cost()
    if not reported:
        out: dict[str, Any] = {name: 0 for name in _USAGE_BASE}
        out["totalTokens"] = 0
        out["cost"] = cost
        return out
    cost["totalFromProvider"] = False
    # the API's own fields in pi-ai's order (OpenAI: reasoning before totalTokens; Anthropic:
    # cacheWrite1h and reasoning added after the cost): the cost object follows totalTokens
    out = {name: int(reported.get(name) or 0) for name in _USAGE_BASE}
    if "totalTokens" not in reported:
        out["totalTokens"] = sum(out.values())
        out["cost"] = cost
    for name, value in reported.items():
        if name not in _USAGE_BASE:
            out[name] = int(value or 0)
            if name == "totalTokens":
                out["cost"] = cost
    return out


#: the fields every pi usage object starts with (then totalTokens and cost)
_USAGE_BASE = ("input", "output", "cacheRead", "cacheWrite")


def _zero_cost() -> dict[str, Any]:
    """pi-ai's cost object with every price unknown (Session Studio knows none)."""
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def combined_usage(usages: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The `usage` pi 1.6.0 stores on a compaction or branch summary: each summarisation call's
    (`call_usage`), summed for a split turn (combineUsage, whose cost is provider-reported only
    when both parts are: never here). None only when no call was made."""
    if not usages:
        return None
    calls = [call_usage(u) for u in usages]
    if len(calls) == 1:
        return calls[0]
    out: dict[str, Any] = {name: sum(int(c[name]) for c in calls) for name in _USAGE_BASE}
    for extra in ("cacheWrite1h", "reasoning"):  # combineUsage: when either call has it
        if any(extra in c for c in calls):
            out[extra] = sum(int(c.get(extra, 0)) for c in calls)
    out["totalTokens"] = sum(int(c["totalTokens"]) for c in calls)
    out["cost"] = {**_zero_cost(), "totalFromProvider": False}
    return out


def _resolve_leaf(session: Session, leaf_id: str | None) -> int:
    if leaf_id is None:
        i = session.leaf_index()
        if i is None:
            raise NothingToCompactError("the session has no entries")
        return i
    return session.require(leaf_id)


def draft_compaction(
    session: Session,
    *,
    leaf_id: str | None = None,
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    cut_entry_id: str | None = None,
    plan_key: PlanKey | None = None,
    custom_instructions: str | None = None,
    model_max_tokens: int = 0,
    model_reasoning: bool = False,
    thinking_level: str | None = None,
    prompts: Prompts | None = None,
    profile: PiProfile = PROFILE_0_80_2,
    planner: PathPlanner | None = None,
) -> CompactionDraft:
    """Plan a compaction of the path ending at `leaf_id` (the session's leaf by default).

    `cut_entry_id` makes a manual cut: it must be a valid cut point inside the
    range pi would consider (after the previous compaction's kept start).
    `plan_key` is the key of the plan the user saw (``PlanState.key``): if the file, the leaf,
    keepRecentTokens or the manual cut differ from it, PlanChangedError is raised instead of
    drafting a possibly different cut. The cut comes from the same core plan as every view.
    `planner`: the caller's PathPlanner of this session, leaf and pi (the window's), used instead of
    a second one where it is that (a 900k-entry session's path planner holds ~14 MB); otherwise
    ignored. It is only read here, as the window reads it from its own threads.
    """
    if session.reset:
        ensure_appendable(session)  # no valid header: explains that pi would replace the file
    fp = loaded_fingerprint(session)
    leaf = _resolve_leaf(session, leaf_id)
    if planner is None or not planner.plans(session, leaf, profile):
        planner = PathPlanner(session, leaf, profile=profile)
    path = planner.path
    plan = planner.plan_
    recs = session.records
    if path and recs[path[-1]].type == "compaction":
        raise NothingToCompactError("Already compacted")
    manual = cut_entry_id is not None
    if manual:
        try:
            target = session.require(cut_entry_id)
        except EntryNotFoundError:
            raise InvalidCutError(f"entry {cut_entry_id} does not exist") from None
        try:
            k = path.index(target)
        except ValueError:
            raise InvalidCutError(f"entry {cut_entry_id} is not on the path to the leaf") from None
        if plan is not None and k < plan.boundary.start:
            raise InvalidCutError(
                f"entry {cut_entry_id} lies before the previous compaction's kept region "
                f"(path #{plan.boundary.start}); it is already summarised"
            )
        if profile.projection:
            why_not = planner.manual_cut_error(k)
            if why_not is not None:
                raise InvalidCutError(f"entry {cut_entry_id} is not a valid cut point: {why_not}")
        elif not is_valid_cut_point(recs[target]):
            raise InvalidCutError(
                f"entry {cut_entry_id} is not a valid cut point: {cut_point_reason(recs[target])}"
            )
        manual_pos: int | None = k
    else:
        manual_pos = None
    state = planner.plan(PlanParams(keep_recent_tokens, reserve_tokens, manual_cut=manual_pos))
    if plan_key is not None and state.key != plan_key:
        raise PlanChangedError(
            "the session or the plan changed since the plan shown was made "
            f"(shown: {_describe_key(plan_key)}; now: {_describe_key(state.key)}); review the new plan"
        )
    if state.error is not None:
        if planner.failure is not None:
            raise planner.failure  # pi throws on this session (the CLI says so)
        raise SessionStudioError(state.error)
    cut = state.cut
    assert cut is not None and plan is not None
    prep = plan.prepare(keep_recent_tokens, cut)
    if prep is None:
        raise NothingToCompactError("Nothing to compact (session too small)")
    prompts = prompts or Prompts()
    requests: list[SummaryRequest] = []
    split = prep.is_split_turn and bool(prep.turn_prefix_messages)
    has_history = (not split) or bool(prep.messages_to_summarize)
    prev = None if prep.previous_summary is UNDEFINED else prep.previous_summary
    if has_history:
        conv = serialize_conversation(convert_to_llm(prep.messages_to_summarize, profile), profile)
        requests.append(
            history_request(
                conv,
                prev or None,
                custom_instructions,
                reserve_tokens,
                model_max_tokens,
                model_reasoning,
                thinking_level,
                prompts,
                profile,
            )
        )
    if split:
        conv = serialize_conversation(convert_to_llm(prep.turn_prefix_messages, profile), profile)
        requests.append(
            turn_prefix_request(
                conv,
                reserve_tokens,
                model_max_tokens,
                model_reasoning,
                thinking_level,
                prompts,
                profile,
                custom_instructions,
            )
        )
    return CompactionDraft(
        session,
        leaf,
        path,
        plan,
        cut,
        manual,
        prep,
        requests,
        has_history,
        fp,
        keep_recent_tokens,
        reserve_tokens,
        profile,
        planner,
    )


def _describe_key(key: PlanKey | None) -> str:
    if key is None:
        return "no plan"
    cut = f"manual cut at {key.manual_cut_id}" if key.manual_cut_id is not None else "automatic cut"
    return (
        f"{key.indexed_bytes:,} bytes, leaf {key.leaf_id}, keepRecentTokens {key.keep_recent_tokens:,}, {cut}"
    )


def summarize_draft(
    draft: CompactionDraft,
    summarizer: Summarizer,
    *,
    on_text: Callable[[int, str], None] | None = None,
    cancel: CancelToken | None = None,
) -> CompactionOutcome:
    """Run the LLM request(s) and merge: the two of a split turn concurrently as pi 0.80.2 does,
    one after the other as pi 1.6.0 does (rule 37), which also rejects an answer that hit the
    token cap or called a tool (rule 35)."""
    reqs = draft.requests
    pi16 = draft.profile.projection

    def run(i: int) -> Any:
        cb = (lambda text: on_text(i, text)) if on_text else None
        result: SummaryResult = summarizer.summarize(reqs[i], on_text=cb, cancel=cancel)
        failure = answer_failure(reqs[i], result, pi16)
        if failure is not None:
            raise LlmSummaryError(failure[0], user_message=failure[1])
        return result

    if pi16:
        results = [run(i) for i in range(len(reqs))]
    elif len(reqs) == 2:
        if cancel is None:
            cancel = CancelToken()  # so that one request failing stops the other at once
        with concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="summary") as pool:
            futures = [pool.submit(run, 0), pool.submit(run, 1)]
            try:
                results = [f.result() for f in futures]
            except BaseException:
                if cancel is not None:
                    cancel.cancel()
                raise
    else:
        results = [run(0)]
    prep = draft.preparation
    split = prep.is_split_turn and bool(prep.turn_prefix_messages)
    if split:
        history_text = results[0].text if draft.has_history_request else None
        previous = prep.previous_summary if pi16 and isinstance(prep.previous_summary, str) else None
        summary = merge_split_turn(history_text, results[-1].text, previous)
    else:
        summary = results[0].text
    read, modified = prep.file_lists
    summary += format_file_operations(read, modified)
    return CompactionOutcome(draft, summary, [r.text for r in results], [r.usage for r in results])


def commit_compaction(outcome: CompactionOutcome, *, refresh: bool = True) -> dict[str, Any]:
    """Append the CompactionEntry (with the possibly edited summary); returns the entry written.

    Raises StaleSessionError if the file changed since the draft was made.
    """
    d = outcome.draft
    entry = outcome.entry().to_json_dict()
    if d.session.get_index(entry["id"]) is not None:  # pi appended an entry with this id meanwhile
        raise SessionStudioError("the entry id was taken meanwhile; summarise again")
    append_entry(d.session, entry, d.fingerprint, refresh=refresh)
    return entry
