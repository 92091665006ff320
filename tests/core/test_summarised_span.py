"""The planner's "Summarise path …" names the entries the history summary covers: under pi 1.6.0
not the system messages (nor a compaction), which it never summarises (spec §10.6 rule 31)."""

from __future__ import annotations

import json
from pathlib import Path

from session_studio.core import Session
from session_studio.core.explain import summarised_span_text
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from tests.conftest import ORACLE16_DIR

CASES = ORACLE16_DIR / "cases"


def _span(name: str, keep: int, profile: object) -> str | None:
    st = PathPlanner(Session.open(CASES / name), profile=profile).plan(PlanParams(keep_recent_tokens=keep))
    return summarised_span_text(st)


def test_a_system_message_is_not_named_as_summarised_under_1_6_0() -> None:
    # m1: a system message first; at keep 100 the cut is at #3 (the second user message)
    assert _span("m1-system-first.jsonl", 100, PROFILE_1_6_0) == "#1…#2"
    assert _span("m1-system-first.jsonl", 100, PROFILE_0_80_2) == "#0…#2"  # 0.80.2 summarises it
    # at keep 300 only the system message lies before the cut: nothing for the history summary
    assert _span("m1-system-first.jsonl", 300, PROFILE_1_6_0) is None


def test_holes_are_named_and_every_named_position_is_before_the_cut(tmp_path: Path) -> None:
    keeps = json.loads((CASES / "cases.json").read_text())
    for name, keep in keeps.items():
        s = Session.open(CASES / name)
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            st = PathPlanner(s, profile=profile).plan(PlanParams(keep_recent_tokens=keep))
            text = summarised_span_text(st)
            if text is None or st.cut is None:
                continue
            for part in text.split(", "):
                a, _, b = part.partition("…")
                first, last = int(a[1:]), int((b or a)[1:])
                assert first <= last < st.cut.first_kept_index, (name, profile.version, text)
                for pos in range(first, last + 1):
                    r = st.plan.planner.path[pos]
                    assert not (profile.system_messages and r.type == "message" and r.role == "system")


def test_the_walk_counts_no_row_past_the_budget() -> None:
    """'Why this cut' shows a few older rows after the budget row (where the cut's turn lies); pi
    stopped counting there, so they carry no running total (an audit read them as counted)."""
    from session_studio.core.explain import explain_plan

    keeps = json.loads((CASES / "cases.json").read_text())
    seen_beyond = 0
    for name, keep in keeps.items():
        s = Session.open(CASES / name)
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            st = PathPlanner(s, profile=profile).plan(PlanParams(keep_recent_tokens=keep))
            rows = explain_plan(st).rows
            hit = [k for k, r in enumerate(rows) if r.budget_reached]
            if not hit:
                assert all(r.counted for r in rows)
                continue
            assert [r.counted for r in rows] == [k <= hit[0] for k in range(len(rows))], name
            seen_beyond += len(rows) - hit[0] - 1
    assert seen_beyond  # m6 and m4 have rows past the budget


def test_many_system_messages_are_counted_not_listed() -> None:
    from tests.core.util import A, U, session_of

    def system(n: int) -> dict[str, object]:
        return {"type": "message", "message": {"role": "system", "content": "s" * n, "timestamp": 1}}

    entries: list[object] = []
    for _ in range(6):
        entries += [system(40), U(400), A(400)]
    s = session_of(*entries)
    st = PathPlanner(s, profile=PROFILE_1_6_0).plan(PlanParams(keep_recent_tokens=150))
    assert st.history_span is not None
    first, last, left_out = st.history_span
    assert first == 1 and all(st.plan.planner.path is not None for _ in left_out)
    assert summarised_span_text(st) == f"#1…#{last} without its {len(left_out)} system messages"
    assert len(left_out) > 3
    st08 = PathPlanner(s, profile=PROFILE_0_80_2).plan(PlanParams(keep_recent_tokens=150))
    text = summarised_span_text(st08)
    assert text is not None and text.startswith("#0…") and "without" not in text
