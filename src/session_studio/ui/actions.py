"""Session actions (commit, branch, fork, label, rename, upgrade) behind one small interface.

The functions named ``*_job`` run in the TaskRunner's pools (writes on the single
``write`` thread, so writes to a session file never overlap) and only call
``session_studio.engine``. :func:`disabled_reasons` says, for the current document,
which actions are not applicable and why (the tooltip of a disabled action).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_studio.core.migrate import version_name
from session_studio.core.profile import PROFILE_0_80_2, PiProfile
from session_studio.core.session import Session

if TYPE_CHECKING:
    from session_studio.core.plan import PathPlanner, PlanState
    from session_studio.engine import BranchOutcome, CompactionOutcome
    from session_studio.llm import CancelToken, ProviderConfig

    from .document import SessionDocument

__all__ = [
    "ACTIONS",
    "ENGINE_MISSING",
    "WIRED",
    "branch_job",
    "commit_current_job",
    "commit_job",
    "disabled_reasons",
    "export_job",
    "fork_job",
    "label_job",
    "legacy_reason",
    "make_summarizer_for",
    "rename_job",
    "repair_job",
    "summarize_job",
    "upgrade_job",
]

ENGINE_MISSING = "The compaction engine (session_studio.engine) is not available in this build."

#: the calls below are wired to session_studio.engine and covered by tests/ui/test_actions.py
WIRED = True

ACTIONS = ("commit", "branch", "branch_summary", "fork", "label", "rename", "upgrade", "omit_attempt")


def legacy_reason(session: Session | None) -> str | None:
    """Why entries cannot be appended to this file (None: they can)."""
    if session is None:
        return "Open a session first."
    if session.reset:
        return (
            "This file has no valid session header: pi 0.80.2 would replace it with a new empty session "
            "and pi 1.6.0 refuses to open it, so nothing can be appended to it. Fork the path to a new "
            "file instead."
        )
    if session.migrated:
        return (
            f"This is a {version_name(session.source_version)} session file: pi rewrites such files with new "
            "ids when it opens them, so nothing can be appended. Use Session ▸ Upgrade (keeps a backup) or "
            "Fork to a new version 3 file."
        )
    return None


def disabled_reasons(doc: SessionDocument, writing: bool = False) -> dict[str, str | None]:
    """Each action → None when it applies, else the reason shown as its tooltip."""
    s = doc.session
    out: dict[str, str | None] = dict.fromkeys(ACTIONS)
    if s is None:
        return dict.fromkeys(ACTIONS, "Open a session first.")
    legacy = legacy_reason(s)
    busy = "Another write to this file is in progress." if writing else None
    if doc.missing:  # a write to it would make a new file of the one entry written
        busy = "The session file is no longer on disk: it was deleted or moved away."
    sel = doc.selected
    torn = (
        "The file ends with a line torn by an interrupted write: cut it off first (the banner's "
        "“Cut the torn line off”), or it becomes a damaged line for good."
        if s.torn_tail is not None
        else None
    )
    for key in ("commit", "branch", "branch_summary", "label", "rename", "omit_attempt"):
        out[key] = legacy or torn or busy
    out["upgrade"] = (
        None if (s.migrated and not s.reset) else "Only version 1/2 session files need an upgrade."
    ) or busy
    out["fork"] = busy if sel >= 0 or doc.working_leaf_index() is not None else "Select an entry first."
    st = doc.state
    if out["commit"] is None:
        if st is None or st.plan is None:
            out["commit"] = st.error if st is not None and st.error else "There is no plan for this session."
        elif st.error:
            out["commit"] = st.error
        elif st.nothing_to_compact:
            out["commit"] = "Nothing to compact with this cut."
        elif doc.outcome is None:
            out["commit"] = "Generate a summary first (Preview tab); you can edit it before committing."
        elif not doc.summary_text.strip():
            out["commit"] = "The summary is empty."
    if out["omit_attempt"] is None:
        out["omit_attempt"] = omit_attempt_reason(st)
    if sel < 0:
        for key in ("branch", "branch_summary", "label"):
            out[key] = out[key] or "Select an entry first."
    elif out["branch"] is None and sel == doc.working_leaf_index():
        out["branch"] = "The selected entry is already the working leaf."
    if out["branch_summary"] is None and sel >= 0 and s.leaf_index() == sel:
        out["branch_summary"] = "The selected entry is the file's leaf: there is no branch to leave."
    return out


def omit_attempt_reason(st: PlanState | None) -> str | None:
    """Why there is no failed attempt to omit as pi 1.6.0's overflow recovery does (None: there
    is one; engine.context_edits.recovery_omission finds it)."""
    if st is None or st.error:
        return "There is no plan for this session."
    if not st.profile.projection:
        return (
            f"Context edits are pi 1.6.0's: this file is read as pi {st.profile.version}, which would not "
            "read them (the pi version box switches)."
        )
    if not st.omits_failed_attempt:
        return "The last answer is no context overflow or length stop that pi 1.6.0 recovers from."
    return None


def _id(session: Session, record: int | None) -> str | None:
    if record is None or record < 0:
        return None
    rid = session.records[record].id
    return rid if isinstance(rid, str) else None


# ---------------------------------------------------------------------- providers
def make_summarizer_for(provider: str, config: ProviderConfig | None, offline_delay: float = 0.03) -> Any:
    """The summarizer for a preview-pane provider key ("offline", "pi", "custom")."""
    from session_studio.llm import OfflineSummarizer, make_summarizer

    if provider == "offline":
        return OfflineSummarizer(chunk_delay_s=offline_delay)
    if provider == "custom":
        if config is None:
            from session_studio.llm import LlmConfigError

            raise LlmConfigError(
                "no custom provider", user_message="Configure the provider first (Custom provider…)."
            )
        return make_summarizer(config)
    return make_summarizer(None)


@contextlib.contextmanager
def _closing(summarizer: Any) -> Any:
    try:
        yield summarizer
    finally:
        close = getattr(summarizer, "close", None)
        if callable(close):
            close()


# ---------------------------------------------------------------------- jobs
@dataclasses.dataclass(frozen=True)
class SummarizeParams:
    leaf_id: str | None
    keep: int
    reserve: int
    cut_entry_id: str | None
    provider: str
    config: ProviderConfig | None
    model: Any = None
    thinking_level: Any = None
    #: pi's /compact <focus>: appended to the history request as "Additional focus"
    custom_instructions: str | None = None
    plan_key: Any = None  # the PlanKey of the plan shown: the engine refuses to draft another one
    #: the window's PathPlanner of the plan shown: the draft reuses it rather than build a second
    planner: Any = None

    @property
    def profile(self) -> Any:
        """The pi profile of the plan shown (its key names it), so the engine drafts under the same pi."""
        from session_studio.core.profile import PROFILE_0_80_2, profile_named

        return profile_named(self.plan_key.profile) if self.plan_key is not None else PROFILE_0_80_2


def summarize_job(
    session: Session,
    p: SummarizeParams,
    on_text: Callable[[int, str], None],
    cancel: CancelToken,
    on_note: Callable[[str], None] | None = None,
) -> CompactionOutcome:
    """draft_compaction + summarize_draft like pi's compact() (runs in the network pool)."""
    from session_studio.engine import draft_compaction, summarize_draft

    max_out, reasoning = 0, False
    model = p.model
    if isinstance(model, dict) and isinstance(model.get("modelId"), str):
        with contextlib.suppress(Exception):
            from session_studio.llm import model_info

            info = model_info(model.get("provider"), model["modelId"])
            if info is not None:
                max_out, reasoning = info.max_tokens, info.reasoning
    draft = draft_compaction(
        session,
        leaf_id=p.leaf_id,
        keep_recent_tokens=p.keep,
        reserve_tokens=p.reserve,
        cut_entry_id=p.cut_entry_id,
        custom_instructions=p.custom_instructions,
        plan_key=p.plan_key,
        model_max_tokens=max_out,
        model_reasoning=reasoning,
        thinking_level=p.thinking_level if isinstance(p.thinking_level, str) else None,
        profile=p.profile,
        planner=p.planner,
    )
    with _closing(make_summarizer_for(p.provider, p.config)) as summarizer:
        if on_note is not None and hasattr(summarizer, "retry_note"):
            summarizer.retry_note = on_note  # a retry said in the status line, from this thread
        return summarize_draft(draft, summarizer, on_text=on_text, cancel=cancel)


def commit_job(outcome: CompactionOutcome, summary: str) -> dict[str, Any]:
    from session_studio.engine import commit_compaction

    outcome.summary = summary
    return commit_compaction(outcome, refresh=False)  # indexed on the GUI thread (after_write)


def commit_current_job(
    session: Session, p: SummarizeParams, summary: str, usage: list[dict[str, int] | None]
) -> dict[str, Any]:
    """Commit ``summary`` (made for another plan) against the plan ``p`` describes now: no LLM call;
    ``usage``: that of the calls that wrote the summary (pi 1.6.0 writes it in the entry)."""
    from session_studio.engine import CompactionOutcome, commit_compaction, draft_compaction

    draft = draft_compaction(
        session,
        leaf_id=p.leaf_id,
        keep_recent_tokens=p.keep,
        reserve_tokens=p.reserve,
        cut_entry_id=p.cut_entry_id,
        profile=p.profile,
        planner=p.planner,
    )
    return commit_compaction(CompactionOutcome(draft, summary, usage=usage), refresh=False)


def branch_job(
    session: Session,
    target_id: str,
    summarize: bool,
    provider: str,
    config: ProviderConfig | None,
    context_window: int | None,
    on_text: Callable[[str], None] | None,
    cancel: CancelToken | None,
    from_leaf_id: str | None = None,
    profile: PiProfile = PROFILE_0_80_2,
    thinking_level: Any = None,
) -> BranchOutcome:
    """branch_to as the file's pi (`profile`: the profile the window reads the file as), budgeted
    as the CLI's `branch-to` does (engine.branch_budget: pi's settings.json and the session's
    model); `context_window` is the user's override of the model's window."""
    from session_studio.engine import branch_to
    from session_studio.engine.branch_budget import branch_summary_budget

    if not summarize:
        return branch_to(session, target_id, from_leaf_id=from_leaf_id, refresh=False)
    budget = branch_summary_budget(session, profile, context_window)
    with _closing(make_summarizer_for(provider, config)) as summarizer:
        return branch_to(
            session,
            target_id,
            summarize=True,
            summarizer=summarizer,
            context_window=budget.context_window,
            reserve_tokens=budget.reserve_tokens,
            on_text=on_text,
            cancel=cancel,
            from_leaf_id=from_leaf_id,
            refresh=False,
            profile=profile,
            thinking_level=thinking_level if isinstance(thinking_level, str) else None,
        )


def label_job(session: Session, target_id: str, label: str | None) -> dict[str, Any]:
    from session_studio.engine import append_label

    return append_label(session, target_id, label or None, refresh=False)


def omit_attempt_job(session: Session, target_ids: list[str]) -> list[dict[str, Any]]:
    from session_studio.engine.context_edits import append_omissions

    return append_omissions(session, target_ids, refresh=False)


def rename_job(session: Session, name: str) -> dict[str, Any]:
    from session_studio.engine import append_session_name

    return append_session_name(session, name, refresh=False)


def fork_job(
    session: Session,
    leaf_id: str,
    out: str | None,
    session_id: str | None = None,
    timestamp: str | None = None,
    profile: PiProfile = PROFILE_0_80_2,
) -> tuple[Path, str]:
    """The fork written, and what it did to compactions that kept from a label (engine.fork_warning;
    a walk over the path, done here in the worker)."""
    from session_studio.engine import fork_to_file
    from session_studio.engine.edits import fork_loses_kept_entries, fork_warning

    written = fork_to_file(session, leaf_id, out, session_id=session_id, timestamp=timestamp, profile=profile)
    return written, fork_warning(fork_loses_kept_entries(session, leaf_id), profile)


def upgrade_job(session: Session) -> tuple[Path, Path]:
    from session_studio.engine import upgrade_legacy_file

    return upgrade_legacy_file(session)


def repair_job(session: Session) -> str:
    """Cut off a line of ours torn by a crash (the banner's action); says what was done."""
    from session_studio.engine import repair_torn_tail

    return repair_torn_tail(session)


def export_job(
    planner: PathPlanner, state: PlanState, what: str, fmt: str, target: str, summary: str | None
) -> Path:
    """Write a report of the window's plan (runs in the compute pool; nothing touches the session)."""
    from session_studio.engine.context_edits import recovery_plan
    from session_studio.export import ExportOptions, export_report

    options = ExportOptions(what, fmt, summary, recovery=recovery_plan)
    return export_report(target, planner, state.params, options, state=state)


def default_fork_target(session: Session) -> tuple[str, str, str]:
    """pi's file name for a new session next to this one, with the id and time it names."""
    from session_studio.engine.edits import default_fork_target as target

    path, session_id, timestamp = target(session)
    return str(path), session_id, timestamp
