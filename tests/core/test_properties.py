"""Invariants (hypothesis): the lookup planner equals pi's walk; appends index like a reload."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session, plan_compaction
from session_studio.core.cut_points import find_cut_point
from tests.core.util import A, T, U, chain, to_bytes

entry = st.one_of(
    st.integers(0, 3000).map(U),
    st.integers(0, 3000).map(A),
    st.integers(0, 3000).map(T),
    st.just({"type": "thinking_level_change", "thinkingLevel": "high"}),
    st.just({"type": "label", "targetId": "e0", "label": "x"}),
    st.integers(0, 500).map(
        lambda n: {"type": "custom_message", "customType": "c", "content": "y" * n, "display": True}
    ),
    st.integers(0, 500).map(lambda n: {"type": "branch_summary", "fromId": "e0", "summary": "s" * n}),
    st.integers(0, 500).map(
        lambda n: {"type": "message", "message": {"role": "bashExecution", "command": "c", "output": "o" * n}}
    ),
)


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
@settings(max_examples=150, deadline=None)
@given(st.lists(entry, min_size=1, max_size=40), st.lists(st.integers(0, 40000), min_size=1, max_size=8))
def test_planner_lookup_equals_walk(entries, keeps) -> None:
    s = Session.from_bytes(to_bytes(chain(*entries)))
    path = s.path_indices(s.leaf_index())
    plan = plan_compaction(s, path)
    recs = [s.records[i] for i in path]
    for k in keeps:
        assert plan.cut(k) == find_cut_point(recs, plan.boundary.start, plan.boundary.end, k)
    # the sweep's rows reproduce the answer for any K (largest threshold <= K)
    rows = plan.planner.sweep()
    for k in keeps:
        row = max((r for r in rows if r[0] <= k), key=lambda r: r[0])
        assert row[1] == plan.cut(k)


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
@settings(max_examples=100, deadline=None)
@given(st.lists(entry, min_size=1, max_size=30), st.lists(st.integers(0, 40000), min_size=2, max_size=2))
def test_cut_moves_earlier_as_keep_grows(entries, keeps) -> None:
    s = Session.from_bytes(to_bytes(chain(*entries)))
    plan = plan_compaction(s, s.path_indices(s.leaf_index()))
    lo, hi = sorted(keeps)
    cps = plan.planner.cut_points

    def regular(k: int) -> bool:  # the budget was reached with a cut point at/after it (no fallback)
        i = plan.planner.budget_index(k)
        return i is not None and any(c >= i for c in cps)

    if regular(lo) and regular(hi):
        assert plan.cut(hi).first_kept_index <= plan.cut(lo).first_kept_index


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
@settings(max_examples=60, deadline=None)
@given(st.lists(entry, min_size=2, max_size=30), st.integers(1, 29))
def test_append_then_refresh_equals_reload(tmp_path_factory, entries, split) -> None:
    values = chain(*entries)
    split = min(split, len(values) - 1)
    p = tmp_path_factory.mktemp("s") / "s.jsonl"
    p.write_bytes(to_bytes(values[: split + 1]))
    s = Session.open(p)
    with open(p, "ab") as fh:
        fh.write(to_bytes(values[split + 1 :]))
    s.refresh()
    fresh = Session.open(p)
    assert [r.facts() for r in s.records] == [r.facts() for r in fresh.records]
    assert s.leaf_id == fresh.leaf_id and s.labels == fresh.labels
