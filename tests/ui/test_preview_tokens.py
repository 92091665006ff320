"""The preview's "Before · ≈N tokens" and "After · ≈N tokens" count with the file's pi.

Under pi 1.6.0 system messages are part of the context and of estimateTokens: the preview used
0.80.2's estimate, which knows no system message, and said ≈4,905 → ≈2,752 where the token bar
said 7,718 and the commit dialog (the engine's estimatedTokensAfter) 5,565.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams, with_summary_tokens
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.summary_sections import summary_tokens
from session_studio.engine.compaction import CompactionOutcome, draft_compaction
from session_studio.ui.preview import build_context_pair
from tests.conftest import FIXTURES, ORACLE16_DIR

SUMMARY = "## Goal\nthe summary ✓ 🧪\n" * 20


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
@pytest.mark.parametrize(
    "path",
    [ORACLE16_DIR / "cases" / "m1-system-first.jsonl", FIXTURES / "before-compaction.jsonl"],
    ids=lambda p: p.name,
)
def test_preview_counts_are_the_bar_s_and_the_commit_s(path: Path, profile: PiProfile) -> None:
    session = Session.open(path)
    st = PathPlanner(session, profile=profile).plan(PlanParams(keep_recent_tokens=100))
    assert not st.nothing_to_compact
    after = with_summary_tokens(st.after_tokens, summary_tokens(SUMMARY))
    # before: the chars/4 estimate of the context the bar shows ("chars/4 estimate N")
    drafted = build_context_pair(st, SUMMARY)
    assert drafted.before_tokens == st.item_cum[-1]
    # after, before the engine made an outcome: the plan's projected context with this summary
    assert drafted.after_tokens == sum(t for _, _, t in after)
    # after, with the engine's outcome: what the commit dialog states and pi rebuilds
    outcome = CompactionOutcome(draft_compaction(session, keep_recent_tokens=100, profile=profile), SUMMARY)
    engine = build_context_pair(dataclasses.replace(st, after_tokens=after), SUMMARY, outcome)
    assert engine.after_tokens == outcome.estimated_tokens_after() == drafted.after_tokens


def test_after_heading_says_the_summary_is_not_counted_yet() -> None:
    """Before a summary exists the After pane counts everything but it, while the bar counts a
    placeholder: the heading says "+ the summary" instead of a saving that would change."""
    from session_studio.ui.preview import after_title

    session = Session.open(FIXTURES / "before-compaction.jsonl")
    st = PathPlanner(session).plan(PlanParams(keep_recent_tokens=100))
    pending = build_context_pair(st, "")
    assert pending.summary_pending
    assert after_title(pending).endswith("tokens (chars/4) + the summary")
    written = build_context_pair(st, SUMMARY)
    assert not written.summary_pending
    assert "saves" in after_title(written)
