"""The export's "context after" and the engine's preview append the same compaction entry (core's
planned_compaction_entry), so both rebuild the same context for the same summary, in both profiles."""

from __future__ import annotations

from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.engine.compaction import CompactionOutcome, draft_compaction
from session_studio.export.context_report import context_after
from tests.conftest import FIXTURES


def _without_times(m: Any) -> Any:
    if isinstance(m, dict):
        return {k: _without_times(v) for k, v in m.items() if k != "timestamp"}
    if isinstance(m, list):
        return [_without_times(v) for v in m]
    return m


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_export_after_context_is_the_engines(profile: PiProfile) -> None:
    session = Session.open(FIXTURES / "before-compaction.jsonl")
    planner = PathPlanner(session, profile=profile)
    st = planner.plan(PlanParams())
    exported = context_after(planner, st, "the summary ✓")
    assert exported is not None
    draft = draft_compaction(session, profile=profile)
    engine = CompactionOutcome(draft, "the summary ✓").context_after()
    ours, theirs = _without_times(exported.messages()), _without_times(engine.messages())
    assert ours == theirs
    assert any(m.get("role") == "compactionSummary" and m.get("summary") == "the summary ✓" for m in ours)
