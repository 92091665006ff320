"""The context as the LLM sees it: core's context builder for the profile, then convertToLlm.

Before: the planner's own context (buildSessionContext under 0.80.2, the projection under 1.6.0).
After: the same builder over the session with the planned compaction appended in memory (nothing
is written), so the report shows what pi would send once the compaction is in the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from ..core.context import SessionContext, build_session_context
from ..core.ids import now_iso
from ..core.jsvalue import UNDEFINED
from ..core.messages import convert_to_llm
from ..core.plan import PathPlanner, PlanState, planned_compaction_entry
from ..core.profile import PiProfile
from ..core.projection import Projection, build_session_projection
from .content import render_message
from .safe import visible
from .writer import ReportWriter

__all__ = ["PENDING_SUMMARY", "context_after", "write_context"]

#: the "after" context's summary before one is generated
PENDING_SUMMARY = (
    "(The compaction summary goes here. It is not generated yet: Session Studio exports the plan "
    "before any LLM call. Generate it in the window or with `session-studio compact --dry-run`.)"
)
_PREVIEW_ID = "export-preview-compaction"


def context_after(
    planner: PathPlanner, st: PlanState, summary: str | None = None
) -> SessionContext | Projection | None:
    """The context pi builds after the planned compaction is appended (None: nothing to compact)."""
    if st.error or st.nothing_to_compact or st.cut is None or planner.leaf_index is None:
        return None
    prep = st.prepare()
    if prep is None:
        return None
    session = planner.session
    try:
        entry = planned_compaction_entry(
            session,
            planner.leaf_index,
            prep,
            planner.profile,
            summary=summary if summary else PENDING_SUMMARY,
            entry_id=_PREVIEW_ID,
            timestamp=now_iso(),
        )
    except ValidationError:  # a tokensBefore or file name that is no number or string (hostile usage)
        return None
    pi16 = planner.profile.projection
    virtual = session.with_virtual_entries([entry.to_json_dict()])
    if pi16:
        return build_session_projection(virtual, _PREVIEW_ID)
    return build_session_context(virtual, _PREVIEW_ID)


def _llm_messages(
    ctx: SessionContext | Projection, profile: PiProfile
) -> Iterator[tuple[int, Any, list[Any]]]:
    """(context position, agent message, what convertToLlm makes of it: [] or [one message])."""
    for k, m in enumerate(ctx.messages()):
        yield k, m, convert_to_llm([m], profile)


def write_context(
    w: ReportWriter, ctx: SessionContext | Projection | None, profile: PiProfile, *, anchor: str
) -> None:
    """Every message of ``ctx`` as the LLM receives it, in order."""
    if ctx is None:
        w.para("No context: no active path, or pi cannot build one.", tone="muted")
        return
    sent = 0
    dropped = 0
    for k, m, llm in _llm_messages(ctx, profile):
        role = m.get("role", UNDEFINED) if type(m) is dict else UNDEFINED
        if not llm:
            dropped += 1
            w.para(
                f"context message {k + 1} ({visible(role, one_line=True)}) is not sent: convertToLlm drops it",
                tone="muted",
            )
            continue
        sent += 1
        out = llm[0]
        out_role = out.get("role", UNDEFINED) if type(out) is dict else UNDEFINED
        title = f"{sent}. {visible(out_role, one_line=True)}"
        note = f"from a {visible(role, one_line=True)} message" if out_role != role else ""
        w.open_entry(title, f"{anchor}-{k}", visible(out_role, one_line=True), note)
        render_message(w, out)
        w.close_entry()
    w.para(
        f"{sent:,} message(s) sent to the LLM"
        + (f"; {dropped:,} left out by convertToLlm" if dropped else ""),
        tone="muted",
    )
    model = ctx.model
    if type(model) is dict:
        w.para(
            f"model {visible(model.get('provider'), one_line=True)}/{visible(model.get('modelId'), one_line=True)}, "
            f"thinking level {visible(ctx.thinking_level, one_line=True)}",
            tone="muted",
        )
