"""A human-readable overview of a session (the `info` command)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .context import SessionContext, build_session_context
from .explain import (
    AUTO_COMPACTION_OFF,
    RecoveryPlanner,
    explain_plan,
    overflow_text,
    planned_recovery,
    render_text,
    threshold_check_text,
    window_exceeded_text,
)
from .jsvalue import UNDEFINED, JsTypeError, js_key
from .plan import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    PathPlanner,
    PlanParams,
    PlanState,
)
from .profile import PROFILE_0_80_2, PiProfile, headerless_verdict
from .projection import Projection, build_session_projection
from .session import Session

__all__ = ["explain_cut", "explain_state", "render_overview"]


def _fmt(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def _count(n: int, one: str, many: str | None = None) -> str:
    """ "1 label", "1,325 labels"."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def explain_cut(
    session: Session, path: list[int], keep_recent: int, profile: PiProfile = PROFILE_0_80_2
) -> list[str]:
    """pi's cut in words under `profile` (the same explanation the window shows), and what it would
    summarise. Under 1.6.0 the walk is over the projection; positions are path positions."""
    planner = PathPlanner(session, path[-1] if path else None, profile=profile)
    return explain_state(planner.plan(PlanParams(keep_recent_tokens=keep_recent)))


def explain_state(st: PlanState) -> list[str]:
    """:func:`explain_cut` of a plan made already (its cut depends on keepRecentTokens alone)."""
    lines = render_text(explain_plan(st))
    prep = st.prepare() if not st.nothing_to_compact and st.error is None else None
    if prep is not None:
        lines.append(
            f"would summarise {len(prep.messages_to_summarize)} message(s)"
            + (f" + a turn prefix of {len(prep.turn_prefix_messages)}" if prep.is_split_turn else "")
            + f"; tokensBefore {_fmt(prep.tokens_before)}"
        )
    return lines


def render_overview(
    session: Session,
    *,
    keep_recent: int = DEFAULT_KEEP_RECENT_TOKENS,
    reserve: int = DEFAULT_RESERVE_TOKENS,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    leaf: str | None = None,
    profile: PiProfile = PROFILE_0_80_2,
    auto_compaction: bool = True,
    model_max_tokens: int = 0,
    recovery: RecoveryPlanner | None = None,
) -> str:
    """``auto_compaction``: pi's settings' compaction.enabled (False: pi compacts only on /compact);
    ``model_max_tokens``: the session model's output limit (0: unknown; :class:`.plan.PlanParams`);
    ``recovery``: the plan of pi 1.6.0's overflow recovery for a plan (engine.context_edits
    .recovery_plan; None: not said).
    A ``leaf`` that is no entry raises EntryNotFoundError (`info` says so before any output)."""
    out: list[str] = []
    w = out.append
    w(f"file:        {session.path}")
    w(f"size:        {_fmt(session.size)} bytes")
    if session.header is None:
        w("header:      MISSING or invalid — " + headerless_verdict(profile, session.size))
    else:
        h = session.header
        w(f"session id:  {h.get('id')}")
        w(f"created:     {h.get('timestamp')}")
        w(f"cwd:         {h.get('cwd', '')}")
        if "parentSession" in h:
            w(f"parent:      {h.get('parentSession')}")
        sv = session.source_version
        shown = "1 (no version field)" if sv is None else (str(sv) if isinstance(sv, int) else repr(sv))
        w(
            f"version:     {shown}"
            + (" — pi migrates it to 3 when it opens it (rewriting the file)" if session.migrated else "")
        )
    name = session.session_name()
    if name:
        w(f"name:        {name}")
    recs = session.records
    types = Counter(r.type if isinstance(r.type, str) else "(no type)" for r in recs)
    roles = Counter(r.role for r in recs if r.type == "message" and isinstance(r.role, str))
    w(f"entries:     {_fmt(len(recs))}  " + ", ".join(f"{t} {n:,}" for t, n in types.most_common()))
    if roles:
        w("messages:    " + ", ".join(f"{t} {n:,}" for t, n in roles.most_common()))
    children: Counter[Any] = Counter(js_key(r.parent_id) for r in recs)
    branch_points = sum(1 for r in recs if children[js_key(r.id)] > 1)
    leaves = sum(1 for r in recs if children[js_key(r.id)] == 0)
    w(
        f"tree:        {_count(leaves, 'leaf', 'leaves')}, {_count(branch_points, 'branch point')}, "
        f"{_count(len(session.labels), 'label')}"
    )
    leaf_id = session.leaf_id if leaf is None else (session.require(leaf), leaf)[1]
    # a version 1/2 file's ids are made by the migration on every open: not for another command
    made = (
        " (made on opening: another run gives other ids)"
        if session.migrated and leaf_id is not UNDEFINED
        else ""
    )
    w(f"leaf:        {leaf_id if leaf_id is not UNDEFINED else '(none)'}{made}")
    if session.issues:
        w(f"load report: {len(session.issues)} issue(s)")
        for issue in session.issues[:20]:
            w("  " + issue.describe())
        if len(session.issues) > 20:
            w(f"  … and {len(session.issues) - 20} more")
    try:
        path = session.path_indices(session.leaf_index(leaf_id))
        ctx: SessionContext | Projection
        if profile.projection:
            ctx = build_session_projection(session, leaf_id)
            ct = ctx.estimate_projected_context_tokens(path)
            n_messages = sum(len(e.roles) for e in ctx.entries)
        else:
            ctx = build_session_context(session, leaf_id)
            ct = ctx.estimate_tokens()
            n_messages = len(ctx.items)
        w(f"active path: {_count(len(path), 'entry', 'entries')}, {_count(n_messages, 'context message')}")
        threshold = context_window - reserve
        pct = (
            (ct.tokens / context_window * 100)
            if context_window and isinstance(ct.tokens, (int, float))
            else 0
        )
        # rule 22: an answer's usage before the last compaction or context edit is not counted
        untrusted = (
            isinstance(ctx, Projection)
            and ct.last_usage_index is None
            and ctx.estimate_context_tokens().last_usage_index is not None
        )
        w(
            f"context:     {_fmt(ct.tokens)} tokens of {_fmt(context_window)} ({pct:.1f}%); "
            f"usage {_fmt(ct.usage_tokens)} + estimated {_fmt(ct.trailing_tokens)}"
            + (
                " (pi 1.6.0 does not count the last reported usage: it is older than the last "
                "compaction or context edit, rule 22)"
                if untrusted
                else ""
            )
        )
        # pi's own check (§9) weighs its last answer's usage, and nothing right after a compaction
        st = PathPlanner(session, path[-1] if path else None, profile=profile).plan(
            PlanParams(
                keep_recent_tokens=keep_recent,
                reserve_tokens=reserve,
                context_window=context_window,
                auto_compaction=auto_compaction,
                model_max_tokens=model_max_tokens,
            )
        )
        w(
            f"threshold:   {_fmt(threshold)} (window − reserve {_fmt(reserve)}): "
            + (
                "pi WOULD compact now"
                if st.should_compact
                else f"over it, but {AUTO_COMPACTION_OFF}"
                if st.over_threshold and not auto_compaction
                else "pi would not compact now"
                + (" by the threshold alone" if st.overflow is not None else "")
            )
            + f": {threshold_check_text(st)}"
        )
        overflow = overflow_text(st, planned_recovery(st, recovery))
        if overflow is not None:
            w(f"overflow:    {overflow}")
        if st.omits_failed_attempt:  # the step pi takes first, as a command
            w("             (`session-studio omit-attempt` appends the context edits pi appends first)")
        over = window_exceeded_text(ct.tokens, ct.usage_tokens, context_window, auto_compaction)
        if over is not None:
            w(f"window:      {over}")
        if ctx.model:
            w(
                f"model:       {ctx.model.get('provider')}/{ctx.model.get('modelId')}, thinking {ctx.thinking_level}"
            )
        w(f"cut (keepRecentTokens {_fmt(keep_recent)}):")
        for line in explain_state(st):  # the plan made above: planned once, not twice
            w("  " + line)
    except JsTypeError as e:
        w(f"pi throws on this path: {e}")
    return "\n".join(out) + "\n"
