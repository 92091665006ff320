"""The settings a branch summary is made with, for the CLI's `branch-to` and the window alike.

pi's generateBranchSummary budgets ``(model.contextWindow || 128000) -
settings.branchSummary.reserveTokens`` (§8.4; 0.80.2 and 1.6.0 alike; the model is the
session's). Both front ends ask this module, so a `settings.json` with its own
``branchSummary.reserveTokens`` budgets the same summary wherever it is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.context import build_session_context
from ..core.profile import PiProfile
from ..core.session import Session
from ..llm.pi_settings import PiPlanningDefaults, pi_planning_defaults
from .edits import DEFAULT_BRANCH_CONTEXT_WINDOW

__all__ = ["BranchBudget", "branch_summary_budget", "session_planning_defaults"]


def session_planning_defaults(session: Session, profile: PiProfile) -> PiPlanningDefaults:
    """pi's settings and the session model's limits for this file (llm.pi_settings.pi_planning_defaults)."""
    try:
        model: Any = build_session_context(session).model
    except Exception:  # a damaged path: the overview reports it
        model = None
    cwd = session.header.get("cwd") if session.header else None
    return pi_planning_defaults(cwd if isinstance(cwd, str) else None, model, profile=profile)


@dataclass(frozen=True)
class BranchBudget:
    context_window: int
    reserve_tokens: int  # settings.json branchSummary.reserveTokens
    source: str  # where the numbers come from, in words

    @property
    def tokens(self) -> int:
        return self.context_window - self.reserve_tokens


def branch_summary_budget(
    session: Session, profile: PiProfile, context_window: int | None = None
) -> BranchBudget:
    """The window and reserve of a branch summary of `session` read as `profile`'s pi;
    `context_window` (the user's override) replaces the model's."""
    pi = session_planning_defaults(session, profile)
    if context_window is not None:
        window, where = context_window, "context window from the options"
    elif pi.window_known:
        window, where = pi.context_window, "the session model's context window"
    else:
        window = DEFAULT_BRANCH_CONTEXT_WINDOW
        where = f"context window {DEFAULT_BRANCH_CONTEXT_WINDOW:,} (model unknown)"
    return BranchBudget(
        window, pi.branch_reserve_tokens, f"{where}; branchSummary.reserveTokens from pi's settings"
    )
