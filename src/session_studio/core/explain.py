"""'Why this cut': pi's findCutPoint walked step by step on one plan, as a model.

It speaks the plan's profile: pi 0.80.2's findCutPoint over path entries, or pi 1.6.0's
findProjectedCutPoint over the projection (rule numbers from spec §10.5), shown in path positions.

One explanation for every view: the CLI renders it as text (:func:`render_text`), the window as
HTML (``ui/why.py``). Everything here is plain text taken from the plan; renderers escape it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import WriteError
from .jsvalue import UNDEFINED, js_string
from .plan import PlanState, Quirk
from .profile import PiProfile
from .projected_plan import PathCutPlanner
from .record_table import last_on_path
from .session import EntryRecord

__all__ = [
    "AUTO_COMPACTION_OFF",
    "AccumulationRow",
    "CutExplanation",
    "RecoveryCut",
    "RecoveryPlanner",
    "Step",
    "explain_plan",
    "keep_zone_text",
    "planned_recovery",
    "recovery_text",
    "render_text",
    "tokens_unknown_text",
    "window_exceeded_text",
]

#: why pi does not compact by itself, where its settings.json has ``compaction.enabled`` false (the
#: planner, the comparison, the token bar, `info` and the exported reports all say it so)
AUTO_COMPACTION_OFF = "automatic compaction is off in pi's settings (compaction.enabled)"

#: rows of the accumulation table shown at most (the walk stops a few rows past the budget)
MAX_ROWS = 400

StepKind = Literal["range", "accumulate", "candidate", "scan", "turn", "result", "outcome", "failure"]


@dataclass(frozen=True, slots=True)
class AccumulationRow:
    position: int  # path position of the message
    entry: str  # its role or entry type
    tokens: Any
    total: float
    budget_reached: bool
    #: False for the few older rows shown after the budget row (where the cut's turn lies): pi
    #: stopped counting at the budget, so they have no running total
    counted: bool = True


@dataclass(frozen=True, slots=True)
class Step:
    kind: StepKind
    title: str  # short heading ("Candidate"); may be empty
    text: str
    warning: bool = False


@dataclass
class CutExplanation:
    steps: list[Step] = field(default_factory=list)
    rows: list[AccumulationRow] = field(default_factory=list)
    rows_left_out: int = 0
    quirks: list[Quirk] = field(default_factory=list)


def _who(rec: EntryRecord) -> str:
    if rec.type == "message":
        return str(rec.role) if rec.role is not UNDEFINED else "message"
    return str(rec.type) if isinstance(rec.type, str) else "unknown"


def _a(word: str) -> str:
    """``word`` with its article: "an assistant", "a user"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def fmt_count(n: Any) -> str:
    """A count as the explanation prints it (12,433); anything else (a string from damaged usage,
    a boolean) as it is. JS NaN and Infinity print as nan and inf."""
    return f"{n:,.0f}" if isinstance(n, int | float) and not isinstance(n, bool) else str(n)


def explain_plan(st: PlanState) -> CutExplanation:
    """The walk from the budget to the final cut, for the plan ``st`` (automatic or manual)."""
    ex = CutExplanation(quirks=list(st.quirks))
    add = ex.steps.append
    if st.error:
        add(Step("failure", "pi would fail here", st.error, warning=True))
        return ex
    if st.plan is None or st.cut is None:
        add(Step("failure", "", "No active path to plan."))
        return ex
    pl = st.plan.planner
    pi16 = pl if isinstance(pl, PathCutPlanner) else None
    b = st.plan.boundary
    recs = pl.path
    keep = st.keep
    if b.prev_compaction < 0:
        where = "no previous compaction"
    elif pi16 is None:
        where = (
            f"from the kept start #{b.start} of the previous compaction, which is at #{b.prev_compaction} "
            "inside the range and is no cut point"
        )
    elif b.start > b.prev_compaction:  # rule 5: its firstKeptEntryId is its own id
        where = f"after the previous compaction at #{b.prev_compaction}, which kept nothing"
    else:
        where = (
            f"from #{b.start}, the first entry the previous compaction at #{b.prev_compaction} kept; pi 1.6.0 "
            "puts that compaction before what it kept, outside the range: rule 17"
        )
    add(
        Step(
            "range",
            "Range",
            f"path #{b.start} … #{b.end - 1} ({where}); keepRecentTokens = {fmt_count(keep)}",
        )
    )
    add(
        Step(
            "accumulate",
            "Accumulate",
            "estimated tokens of every entry in pi 1.6.0's context from the newest back (custom messages, "
            "branch summaries and system messages count; entries of 0 tokens are skipped; rule 26) "
            "until the total reaches keepRecentTokens"
            if pi16 is not None
            else "estimated tokens of message entries from the newest back (other entries add nothing) "
            "until the total reaches keepRecentTokens",
        )
    )
    reached = st.budget_pos
    k_budget = len(pl.positions) - 1
    if reached is not None:  # positions run newest → oldest (decreasing)
        k_budget = bisect.bisect_left(pl.positions, -reached, key=lambda p: -p)
    shown = min(len(pl.positions), k_budget + 4, MAX_ROWS)
    for k in range(shown):
        pos = pl.positions[k]
        counted = reached is None or k <= k_budget
        ex.rows.append(
            AccumulationRow(pos, _who(recs[pos]), pl.tokens.get(pos, 0), pl.sums[k], pos == reached, counted)
        )
    ex.rows_left_out = len(pl.positions) - shown
    cps = pl.cut_points
    first_cp = cps[0] if cps else b.start
    if st.manual:
        add(
            Step(
                "candidate",
                "Manual cut",
                f"you picked #{st.params.manual_cut} ({_reason(st, st.params.manual_cut or 0)}); "
                "it replaces pi's automatic candidate, and pi's backward scan and turn rule apply to it",
            )
        )
        cand = st.params.manual_cut if st.params.manual_cut is not None else first_cp
    else:
        if pl.stop_nan:
            add(
                Step(
                    "accumulate",
                    "",
                    "The running total became NaN (a damaged token count): it never reaches the budget.",
                    warning=True,
                )
            )
        if reached is None:
            total = pl.sums[-1] if pl.sums else 0
            add(
                Step(
                    "candidate",
                    "Budget never reached",
                    f"the {fmt_count(total)} tokens after the boundary never reach keepRecentTokens = {fmt_count(keep)}: "
                    f"the cut stays at the first valid cut point #{first_cp}",
                )
            )
            cand = first_cp
        else:
            j = bisect.bisect_left(cps, reached)
            if j < len(cps):
                add(
                    Step(
                        "candidate",
                        "Candidate",
                        f"{fmt_count(pl.sums[k_budget])} tokens ≥ {fmt_count(keep)} at #{reached} ({_who(recs[reached])}); "
                        f"the first valid cut point at or after it is #{cps[j]} ({_reason(st, cps[j])})",
                    )
                )
                cand = cps[j]
            elif pi16 is not None:
                add(
                    Step(
                        "candidate",
                        "No valid cut point at or after the budget",
                        f"the budget is reached at #{reached}, after the last cut point: pi 1.6.0 takes the "
                        f"last cut point #{cps[-1]} (rule 27: the tool call before the trailing tool results "
                        "stays; pi 0.80.2 fell back to the first cut point)",
                    )
                )
                cand = cps[-1]
            else:
                add(
                    Step(
                        "candidate",
                        "No valid cut point at or after the budget",
                        f"the budget is reached at #{reached}, after the last cut point: pi keeps its initial "
                        f"candidate, the first cut point #{first_cp} (quirk §12.1.2: an oversized trailing "
                        "entry disables compaction)",
                        warning=True,
                    )
                )
                cand = first_cp
    if pi16 is not None and not st.manual and cps:
        advanced, moved = pi16.candidate(keep)
        if moved:
            add(
                Step(
                    "candidate",
                    "Recovery omission",
                    f"after #{cand} there are only metadata and entries hidden by context edits, one an "
                    f"omitted assistant attempt: pi 1.6.0 advances the cut to #{advanced} (rule 30)",
                )
            )
            cand = advanced
    if pi16 is not None:
        add(Step("scan", "Backward scan", _scan_projected(pi16, cand, st.cut.first_kept_index, st.positions)))
    else:
        add(Step("scan", "Backward scan", _scan(recs, b.start, cand, st.cut.first_kept_index)))
    c = st.cut
    fk = c.first_kept_index
    if fk < len(recs):
        first = recs[fk]
        if pi16 is not None and pi16.starts_turn(fk):
            add(
                Step(
                    "turn",
                    "Turn",
                    f"#{fk} is {_who(first)}, which starts a turn (rule 29), so there is no split",
                )
            )
        elif pi16 is None and first.type == "message" and first.role == "user":
            add(Step("turn", "Turn", f"#{fk} is a user message, so the cut is at a turn boundary (no split)"))
        elif c.turn_start_index >= fk:
            # Example G: the turn starts at the cut itself; isSplitTurn holds, the prefix is empty
            add(
                Step(
                    "turn",
                    "Split turn, empty prefix",
                    f"#{fk} is {_who(first)}, which starts a turn itself: isSplitTurn is true but the "
                    "turn prefix is empty, so pi sends one history request and no turn-prefix prompt, "
                    "as for a cut that splits no turn",
                )
            )
        elif c.turn_start_index >= 0:
            add(
                Step(
                    "turn",
                    "Split turn",
                    f"#{fk} is {_who(first)}, "
                    + ("which does not start a turn (rule 29)" if pi16 is not None else "not a user message")
                    + ". Searching back for the turn start finds "
                    f"#{c.turn_start_index} ({_who(recs[c.turn_start_index])}); entries #{c.turn_start_index}…"
                    f"#{fk - 1} are the turn prefix, summarised with the turn-prefix prompt; older entries go "
                    "to the history summary",
                )
            )
        else:
            add(Step("turn", "Turn", f"#{fk} is {_who(first)}; no turn start before it, so no split"))
        rec = recs[fk]
        add(
            Step(
                "result",
                "Result",
                f"first kept = #{fk} (id {rec.id}, {_who(rec)}, line {rec.line}), turn start = "
                + (f"#{c.turn_start_index}" if c.turn_start_index >= 0 else "none (-1)")
                + f", isSplitTurn = {str(c.is_split_turn).lower()}",
            )
        )
    if st.nothing_to_compact:
        last_is_compaction = bool(recs) and recs[-1].type == "compaction"
        add(
            Step(
                "outcome",
                "Nothing to compact",
                "pi would say: "
                + ("Already compacted" if last_is_compaction else "Nothing to compact (session too small)")
                + _only_system_messages_before(st),
                warning=True,
            )
        )
    return ex


def _only_system_messages_before(st: PlanState) -> str:
    """Why there is nothing although entries stand before the cut, when they are system messages:
    pi 1.6.0 never summarises those (rule 31), and a student sees #0 before the cut and no reason."""
    if st.session is None or st.first_kept_item is None or not st.profile.system_messages:
        return ""
    recs = st.session.records
    before = [k for r, k, _ in st.item_tokens[: st.first_kept_item] if recs[r].type != "compaction"]
    if not before or any(k != "system" for k in before):
        return ""
    return (
        ": what stands before the cut are system messages, which pi 1.6.0 never summarises (rule 31), "
        "so there is no message to summarise"
    )


def summarised_span_text(st: PlanState) -> str | None:
    """The path positions whose entries the history summary covers ("#1…#6", "#18, #20…#31"), or
    None when it covers none: from the first to the last entry before the cut (the split turn's
    start) that gives it messages, less the system messages under pi 1.6.0, which it never
    summarises (spec §10.6 rule 31); more than a few of those are counted, not listed."""
    span = st.history_span
    if span is None:
        return None
    first, last, left_out = span
    if not left_out:
        return f"#{first}" if first == last else f"#{first}…#{last}"
    if len(left_out) > 3:
        return f"#{first}…#{last} without its {len(left_out):,} system messages"
    parts, a = [], first
    for hole in (*left_out, last + 1):
        if a <= hole - 1:
            parts.append(f"#{a}" if a == hole - 1 else f"#{a}…#{hole - 1}")
        a = hole + 1
    return ", ".join(parts)


def tokens_unknown_text(st: PlanState) -> str | None:
    """Why pi shows this path's context size as unknown (``PlanState.tokens_unknown``), or None.

    The one sentence for every view (planner, token bar, profile comparison): pi's footer
    (getContextUsage, §4.7) has no figure after a compaction until an assistant answer after it
    reports usage; the plan still weighs its own count against the threshold."""
    if not st.tokens_unknown:
        return None
    where = ""
    if st.session is not None:
        last = last_on_path(st.session.records, st.path, "compaction")
        if last >= 0:
            where = f" at path #{last}"
    return (
        f"pi {st.profile.version} shows the context size as unknown: no assistant answer with usage came "
        f"after the compaction{where} yet, so it has no figure until the next answer (§4.7)"
    )


def keep_zone_text(profile: PiProfile) -> str:
    """What the keep-recent zone is and how pi cuts in it, for the token bar's mark and legend and
    the report's bar (one sentence for all). Under pi 1.6.0 rule 27 can keep much more, and a
    hidden tool result can be the cut (the backward scan takes it in)."""
    if profile.projection:
        return (
            "the newest context entries that reach keepRecentTokens, walking back (custom messages, branch "
            "summaries and system messages count); pi 1.6.0 cuts at the first valid cut point at or after "
            "where they reach it, or at the last one before it when none follows (rule 27), so it keeps "
            "about this much, often less, and more when a big tool result comes last"
        )
    return (
        "the newest messages that reach keepRecentTokens, walking back; pi cuts at the first valid cut "
        "point at or after where they reach it (never a tool result), so it keeps about this much, often less"
    )


def threshold_check_text(st: PlanState) -> str:
    """What pi's own check compares with the threshold (:mod:`.threshold_check`), in words: "context
    180,820 > threshold 178,616", "its last answer's usage 168,018 ≤ threshold 178,616 (…)", or why
    it does not check."""
    check = st.threshold_check
    checked = check.tokens if check is not None else None
    if check is None or checked is None:
        why = _NO_CHECK.get(check.basis if check is not None else "", "there is no context to check")
        return f"{why}, so pi's check has nothing to weigh until the next answer"
    sign = ">" if st.over_threshold else "≤"
    compared = f"{fmt_count(checked)} {sign} threshold {fmt_count(st.threshold)}"
    if check.basis == "projected":
        said = f"the context edits make pi weigh its projected estimate: context {compared} (rule 22)"
    elif check.basis in _ESTIMATED:
        said = f"{_ESTIMATED[check.basis]}: context {compared}"
    elif checked != st.context_tokens:
        later = st.context_tokens - checked
        said = (
            f"its last answer's usage {compared}, which is what pi checks; the ≈{fmt_count(later)} "
            "tokens counted after that answer count from the next one on"
        )
    else:
        said = f"context {compared}"
    if st.over_threshold and st.nothing_to_compact and not st.manual:
        said += ", but pi's cut leaves nothing to compact, so it does nothing"
    return said


def overflow_text(st: PlanState, recovery: RecoveryCut | None = None) -> str | None:
    """pi's overflow case, which its check weighs before the threshold (:attr:`PlanState.overflow`),
    in words; None when the answer it checks is no overflow. ``recovery``: where pi 1.6.0 omits the
    failed attempt first, what its compaction without it does (:func:`recovery_text`)."""
    found = st.overflow
    if found is None:
        return None
    if found.kind == "error":
        facts = st.threshold_check.answer_facts if st.threshold_check is not None else None
        error = " ".join(js_string((facts or {}).get("errorMessage", "")).split())
        error = error if len(error) <= 80 else error[:79] + "…"
        why = f"its last answer failed with a context overflow (“{error}” is one of pi's overflow errors)"
    elif found.kind == "input":
        why = (
            f"its last answer's input, {fmt_count(found.used or 0)} tokens with cache reads, is over the "
            f"context window {fmt_count(st.window)}, which pi takes for a context overflow"
        )
    elif found.kind == "length":
        why = (
            f"its last answer stopped for length with no output and an input of {fmt_count(found.used or 0)} "
            f"tokens, 99 % of the context window {fmt_count(st.window)} or more, which pi takes for a context overflow"
        )
    else:
        why = (
            f"its last answer stopped for length after {fmt_count(found.used or 0)} output tokens, below "
            f"the model's output limit {fmt_count(st.params.model_max_tokens)}, which pi 1.6.0 takes for a "
            "truncation it can recover from"
        )
    if not st.params.auto_compaction:
        return f"{why}; pi would compact for it, but {AUTO_COMPACTION_OFF}"
    # _runAutoCompaction prepares with pi's cut first: nothing to compact, nothing written
    nothing = st.nothing_to_compact and not st.manual
    if not st.omits_failed_attempt:
        then = (
            "compacts and retries the request"
            if found.retries
            else "compacts (the answer completed: no retry)"
        )
        said = (
            f"{why}: pi {then} at once, whatever the threshold, when that answer came from the model it runs"
        )
        return said + (", but pi's cut leaves nothing to compact, so it does nothing" if nothing else "")
    # pi 1.6.0 persists the failed attempt's omission before it compacts (_omitRecoveryAttempt),
    # and cuts the context without it. Without the omitted answer the kept tail only reaches
    # further back, so a cut that keeps everything here keeps everything there too
    said = (
        f"{why}: when that answer came from the model it runs, pi first omits it and its tool results "
        "from the context (it appends context edits), whatever the threshold, then "
    )
    # with the recovery planned, its own cut says it; else this plan's does, as said above
    nothing_left = nothing if recovery is None else recovery.first_kept is None and recovery.error is None
    if nothing_left:
        return said + "finds nothing to compact and stops there, without a retry"
    if recovery is not None:
        planned = recovery_text(st, recovery)
        return said + f"compacts and retries the request. {planned[:1].upper()}{planned[1:]}"
    return (
        said + "compacts and retries the request; its cut without the failed answer can lie further back "
        "than this plan's"
    )


#: what plans pi 1.6.0's overflow recovery compaction for a plan (engine.context_edits.recovery_plan
#: with the plan's own settings), passed in by the command line and the window: core stays free of
#: the engine. It may raise WriteError where pi's own recovery throws.
RecoveryPlanner = Callable[[PlanState], "PlanState | None"]


@dataclass(frozen=True)
class RecoveryCut:
    """What is said of pi 1.6.0's overflow recovery compaction: the facts of its plan, not the plan,
    which holds a copy of the session's index with the omission's edits appended (a window keeps
    these while it shows them; on a 900k-entry session the copy is 72 MB)."""

    #: path position of the first kept entry; None: pi's cut leaves nothing to compact
    first_kept: int | None
    #: where the split turn starts, when the cut splits one (its prefix is summarised apart)
    split_turn_start: int | None
    kept_tokens: float
    #: the positions the history summary covers (:func:`summarised_span_text`), None: none
    summarised: str | None
    #: pi throws planning it (the plan's error)
    error: str | None = None

    @classmethod
    def of(cls, recovery: PlanState) -> RecoveryCut:
        cut = recovery.cut
        if recovery.error is not None:
            return cls(None, None, 0.0, None, recovery.error)
        if cut is None or recovery.nothing_to_compact:
            return cls(None, None, 0.0, None)
        first, start = cut.first_kept_index, cut.turn_start_index
        split = start if cut.is_split_turn and 0 <= start < first else None
        return cls(first, split, float(recovery.kept_tokens), summarised_span_text(recovery))


def planned_recovery(st: PlanState, recovery: RecoveryPlanner | None) -> RecoveryCut | None:
    """What pi 1.6.0's recovery compaction for ``st`` does (None: none to say, or not asked for)."""
    if recovery is None or not st.omits_failed_attempt:
        return None
    try:
        planned = recovery(st)
    except WriteError:  # pi's own recovery throws on this answer: the overflow line says what pi does
        return None
    return RecoveryCut.of(planned) if planned is not None else None


def recovery_text(st: PlanState, recovery: RecoveryCut) -> str:
    """What pi 1.6.0's overflow recovery compacts once it has omitted the failed attempt, beside
    this plan (``st``). The recovery's path is this one and then the edits, so a position names the
    same entry in both."""
    if recovery.error is not None:
        return f"without the failed attempt, pi's recovery cannot plan its compaction: {recovery.error}"
    first = recovery.first_kept
    if first is None:
        return (
            "without the failed attempt, pi's cut leaves nothing to compact: pi appends the context edits "
            "and stops there, without a retry"
        )
    summarised = [] if recovery.summarised is None else [recovery.summarised]
    start = recovery.split_turn_start
    if start is not None:  # the split turn's prefix, summarised apart
        summarised.append(f"the turn prefix #{start}" + (f"…#{first - 1}" if first - 1 > start else ""))
    said = (
        f"without the failed attempt, pi's recovery keeps from path #{first}"
        + f", ≈{fmt_count(round(recovery.kept_tokens))} tokens"
        + (f", and summarises {' and '.join(summarised)}" if summarised else "")
    )
    if st.cut is None:
        return said
    if st.cut.first_kept_index == first:
        return said + ("; so does this cut" if st.manual else "; so does this plan")
    return said + f"; this {'cut' if st.manual else 'plan'} keeps from #{st.cut.first_kept_index}"


#: why pi's check weighs an estimate (ThresholdCheck.basis)
_ESTIMATED = {
    "failed answer": "its last answer failed, so pi weighs the estimate from the last usage on",
    "answer without usage": "its last answer reported no usage, so pi weighs the estimate from the last usage on",
    "plain estimate": "no answer reported usage, so pi 1.6.0 weighs the chars/4 estimate of the whole context",
}
#: why pi's check weighs nothing (ThresholdCheck.basis)
_NO_CHECK = {
    "no answer": "no assistant answer in the context yet",
    "stale answer": "the last answer is not newer than the last compaction",
    "no usage": "no answer in the context reported usage (pi 0.80.2 gives up without one)",
    "stale usage": "the last answer reported no usage and the last one that did is older than the last compaction",
}


def window_exceeded_text(
    context_tokens: Any, usage_tokens: Any, window: int, auto_compaction: bool
) -> str | None:
    """What a context bigger than the context window means, or None (the one sentence for the
    planner and `info`). A provider's usage over the window says the window is wrong: the model
    took that context (an unknown model planned with pi's default window, or a what-if value).
    An estimate over it is pi's next request overflowing when automatic compaction is off (on, pi
    compacts first: the context is over the threshold too)."""
    numbers = (int, float)
    if window <= 0 or not isinstance(context_tokens, numbers) or context_tokens <= window:
        return None
    if isinstance(usage_tokens, numbers) and usage_tokens > window:
        return (
            f"The last answer's usage, {usage_tokens:,.0f} tokens, is more than the context window "
            f"{window:,}: the model took a bigger context, so its window is bigger than the one planned "
            "with. Set the context window to the model's."
        )
    if auto_compaction:
        return None
    return (
        f"The context, {context_tokens:,.0f} tokens, is more than the context window {window:,}, and "
        f"{AUTO_COMPACTION_OFF}: pi's next request overflows it unless you compact first."
    )


def _reason(st: PlanState, pos: int) -> str:
    return st.mark_reason(st.path[pos]) if 0 <= pos < len(st.path) else ""


def _scan_projected(pl: PathCutPlanner, cand: int, final: int, positions: Mapping[int, int]) -> str:
    """pi 1.6.0's backward scan (rule 28) over the projection, in path positions (``positions``:
    record → path position, to name the context edit that hid an entry)."""
    steps: list[str] = []
    j = pl.projected_index(cand)
    pp = pl.projected
    recs = pl.path
    while j is not None and j > pp.start:
        prev = pl.path_position(j - 1)
        if pp.stops_scan(j - 1):
            steps.append(f"#{prev} is {_who(recs[prev])} with context messages → stop")
            break
        edit = pp.projection.entries[j - 1].edit
        at = positions.get(edit) if edit is not None else None
        hidden = f"hidden by the context edit at #{at}, rule 18" if at is not None else "no context message"
        steps.append(f"#{prev} is {_who(recs[prev])} ({hidden}) → move the cut back to #{prev}")
        j -= 1
    if not steps:
        steps.append("at the start of the range → stop")
    return f"from the candidate #{cand}: " + "; ".join(steps) + f". Cut = #{final}"


def _scan(recs: Sequence[EntryRecord], start: int, cand: int, final: int) -> str:
    """pi's backward scan over non-message entries right before the candidate, in words."""
    steps: list[str] = []
    c = cand
    while c > start:
        prev = recs[c - 1]
        if prev.type in ("compaction", "message"):
            steps.append(f"#{c - 1} is {_a(_who(prev))} → stop")
            break
        steps.append(f"#{c - 1} is {_who(prev)} (not a message) → move the cut back to #{c - 1}")
        c -= 1
    if not steps:
        steps.append("at the start of the range → stop")
    return f"from the candidate #{cand}: " + "; ".join(steps) + f". Cut = #{final}"


def render_text(ex: CutExplanation) -> list[str]:
    """The explanation as lines for the terminal (the accumulation table is summarised)."""
    out: list[str] = []
    for s in ex.steps:
        if s.kind == "accumulate" and s.title == "Accumulate":
            hit = next((r for r in ex.rows if r.budget_reached), None)
            if hit is not None:
                out.append(
                    f"accumulate: walking back from the newest entry, {fmt_count(hit.total)} tokens at path "
                    f"#{hit.position} ({hit.entry})"
                )
            continue
        out.append(f"{s.title.lower()}: {s.text}" if s.title else s.text)
    for q in ex.quirks:
        ref = f" (spec §{q.spec})" if q.spec else ""
        out.append(f"quirk: {q.title}{ref}. {q.text}")
    return out
