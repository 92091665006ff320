"""The token bar's 'after' row is the context pi builds after the commit.

Its total is what the commit dialog states (the engine's estimatedTokensAfter of the rebuilt
context) under both pis; under pi 1.6.0 the row starts with the new compaction's system snapshot,
then the summary, and leaves out the kept range's system messages (the snapshot replays them).
The row used to take the snapshot for the summary and count those system messages: on a 1.6.0
session the bar said "after ≈ 4,906" where the dialog said 5,140 and pi would count 5,565.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from session_studio.core import Session
from session_studio.core.bar_geometry import after_items, cumulative, plan_bar, token_x
from session_studio.core.plan import PathPlanner, PlanParams, with_summary_tokens
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.summary_sections import summary_tokens
from session_studio.engine.compaction import CompactionOutcome, draft_compaction
from tests.conftest import FIXTURES, ORACLE16_DIR

SESSIONS = [*sorted((ORACLE16_DIR / "cases").glob("*.jsonl")), FIXTURES / "before-compaction.jsonl"]
KEEPS = (1, 20, 100, 400, 2000, 20000)
SUMMARY = "## Goal\nthe summary ✓ with ünïcode and 🧪\n" * 12
WIDTH = 997


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_after_row_totals_what_the_commit_states(path: Path, profile: PiProfile) -> None:
    session = Session.open(path)
    planner = PathPlanner(session, profile=profile)
    checked = 0
    for keep in KEEPS:
        st = planner.plan(PlanParams(keep_recent_tokens=keep))
        if st.error is not None or st.nothing_to_compact:
            continue
        st = dataclasses.replace(
            st, after_tokens=with_summary_tokens(st.after_tokens, summary_tokens(SUMMARY))
        )
        draft = draft_compaction(session, keep_recent_tokens=keep, profile=profile)
        stated = CompactionOutcome(draft, SUMMARY).estimated_tokens_after()
        bar = plan_bar(st, WIDTH)
        assert bar.after_total == stated, f"{path.name} keep={keep}"

        projected = after_items(st)
        assert projected is not None
        # the kept total from the bar's cumulated estimates (the window's, per slider move) is the sum
        assert after_items(st, cumulative([t for _, _, t in st.item_tokens])) == projected
        heads = [kind for _, kind, _ in projected.head]
        assert heads[-1] == "compactionSummary" and set(heads) <= {"system", "compactionSummary"}
        # the row: the head's spans, then kept items only, tiling up to the projected total
        assert [s.kind for s in bar.after[: len(heads)]] == heads
        kept = bar.after[len(heads) :]
        allowed = set(projected.kept) if projected.kept is not None else None
        for s in kept:
            assert s.item >= projected.first
            assert allowed is None or s.item in allowed
            if profile is PROFILE_1_6_0:
                assert st.item_tokens[s.item][1] != "system"
        xs = [(s.x, s.w) for s in bar.after]
        assert all(a[0] + a[1] == b[0] for a, b in itertools.pairwise(xs))
        assert bar.after[0].x == 0
        assert bar.after[-1].x + bar.after[-1].w == token_x(stated, bar.scale, WIDTH)
        checked += 1
    # example D is the case pi 0.80.2 never compacts (quirk §12.1.2; 1.6.0's rule 27 does)
    never = path.name == "m4-example-d.jsonl" and profile is PROFILE_0_80_2
    assert bool(checked) != never, f"{path.name}: compactions planned at {checked} of {KEEPS}"


def test_a_1_6_0_row_starts_with_the_snapshot_and_drops_kept_system_messages() -> None:
    """m1 has a system message first: the projected row carries its snapshot, not the message."""
    session = Session.open(ORACLE16_DIR / "cases" / "m1-system-first.jsonl")
    st = PathPlanner(session, profile=PROFILE_1_6_0).plan(PlanParams(keep_recent_tokens=100))
    assert not st.nothing_to_compact
    projected = after_items(st)
    assert projected is not None
    assert [kind for _, kind, _ in projected.head] == ["system", "compactionSummary"]
    snapshot = projected.head[0][2]
    summary = projected.head[1][2]
    assert snapshot > 0
    assert projected.total == sum(t for _, _, t in st.after_tokens)
    assert projected.total != summary + st.item_cum[-1] - st.item_cum[projected.first] or (
        projected.kept is None and snapshot == 0
    )
