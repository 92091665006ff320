"""What the command-line modules share (`cli` and `cli_actions` both import this; it imports neither)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .core.plan import PlanParams

__all__ = ["PlanSettings", "branch_budget_for", "profile_for", "settings_for", "whole_number"]


def whole_number(minimum: int) -> Callable[[str], int]:
    """argparse's `type` for a count (tokens, matches): an integer of at least `minimum`, else a
    usage error; a negative keepRecentTokens or budget is no setting pi's users have."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more, not {value}")
        return value

    return parse


class PlanSettings(NamedTuple):
    keep_recent: int
    reserve: int
    window: int
    source: str  # where they come from, in words
    #: pi's settings' compaction.enabled: False, pi compacts only on /compact (core.plan.PlanParams)
    auto_compaction: bool
    #: the session model's output limit from pi's registry, 0 if unknown (core.plan.PlanParams)
    model_max_tokens: int

    def plan_params(self, manual_cut: int | None = None, summary_tokens: float | None = None) -> PlanParams:
        """The core's PlanParams for these settings (imported here: most commands never plan)."""
        from .core.plan import PlanParams

        return PlanParams(
            self.keep_recent,
            self.reserve,
            self.window,
            manual_cut,
            summary_tokens,
            self.auto_compaction,
            self.model_max_tokens,
        )


def profile_for(session: Any, a: argparse.Namespace) -> Any:
    """The pi profile for this file and `--pi-version` (a ProfileChoice); remembered on ``a`` so a
    failure reports the profile the command used (`cli._report_failure`)."""
    from .core.profile import detect_profile

    choice = detect_profile(session, getattr(a, "pi_version", "auto"))
    a.pi_profile_used = choice.profile
    return choice


def _planning_defaults(session: Any, profile: Any) -> Any:
    """pi's settings and the session model's limits for this file (llm.pi_settings.pi_planning_defaults)."""
    from .engine.branch_budget import session_planning_defaults

    return session_planning_defaults(session, profile)


def branch_budget_for(session: Any, a: argparse.Namespace, profile: Any) -> tuple[int, int, str]:
    """Context window and reserve of a branch summary (engine.branch_budget, which the window
    asks too); `--context-window` overrides the window."""
    from .engine.branch_budget import branch_summary_budget

    budget = branch_summary_budget(session, profile, a.context_window)
    return budget.context_window, budget.reserve_tokens, budget.source


def settings_for(session: Any, a: argparse.Namespace, profile: Any) -> PlanSettings:
    """keepRecentTokens, reserveTokens, context window: the options, else pi's settings and model
    (the same source the window uses), read as `profile`'s pi reads them; and whether pi's settings
    let it compact by itself."""
    pi = _planning_defaults(session, profile)
    keep = a.keep_recent if a.keep_recent is not None else pi.keep_recent_tokens
    reserve = a.reserve if a.reserve is not None else pi.reserve_tokens
    window = a.context_window if a.context_window is not None else pi.context_window
    notes = []
    if a.keep_recent is not None or a.reserve is not None:
        notes.append("keepRecentTokens/reserveTokens from the options")
    if a.context_window is not None:
        notes.append("context window from the options")
    source = pi.source if not notes else "; ".join(notes) + f" (pi: {pi.source})"
    return PlanSettings(keep, reserve, window, source, pi.enabled, pi.max_tokens)
