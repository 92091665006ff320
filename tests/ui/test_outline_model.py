from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.ui.outline import ROOT, build_outline
from session_studio.ui.tree_model import SessionTreeModel

from .conftest import write_session


def _tree_session(tmp_path: Path, parents: list[int]) -> Session:
    """Entry k has parent parents[k] (-1 = root); all user messages."""
    spec = []
    for k, p in enumerate(parents):
        spec.append(
            {
                "type": "message",
                "parentId": None if p < 0 else f"e{p:04d}",
                "message": {"role": "user", "content": f"m{k}", "timestamp": k},
            }
        )
    return Session.open(write_session(tmp_path / "t.jsonl", spec))


def test_chain_is_flat(tmp_path: Path) -> None:
    s = _tree_session(tmp_path, [-1, 0, 1, 2])
    o = build_outline(s, "all")
    assert {k: list(v) for k, v in o.groups.items()} == {ROOT: [0, 1, 2, 3]}


def test_branch_point_opens_group(tmp_path: Path) -> None:
    # 0 → 1 → {2 → 3, 4}
    s = _tree_session(tmp_path, [-1, 0, 1, 2, 1])
    o = build_outline(s, "all")
    assert list(o.groups[ROOT]) == [0, 1]
    assert list(o.groups[1]) == [2, 3, 4]
    assert o.heads == {2, 4}
    assert 4 in o.last_chain and not {2, 3} & o.last_chain
    assert o.row_of[4] == 2 and o.group_of[4] == 1


def test_active_path_stays_flat(tmp_path: Path) -> None:
    # 0 → 1 → {2 → 3, 4}; active path 0,1,4
    s = _tree_session(tmp_path, [-1, 0, 1, 2, 1])
    o = build_outline(s, "all", active_path=[0, 1, 4])
    assert list(o.groups[ROOT]) == [0, 1, 4]
    assert list(o.groups[1]) == [2, 3]
    assert o.heads == {2}


def test_filter_hides_and_reparents(tmp_path: Path) -> None:
    spec = [
        ("user", 10),
        ("assistant", 10),
        ("toolResult", 10),
        ("assistant", 10),
        {"type": "label", "targetId": "e0000", "label": "start"},
    ]
    s = Session.open(write_session(tmp_path / "f.jsonl", spec))
    assert len(build_outline(s, "all")) == 5
    assert len(build_outline(s, "default")) == 4  # label hidden
    assert list(build_outline(s, "no-tools").groups[ROOT]) == [0, 1, 3]
    assert list(build_outline(s, "user-only").groups[ROOT]) == [0]
    assert list(build_outline(s, "labeled-only").groups[ROOT]) == [0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=-1, max_value=40), min_size=1, max_size=40))
def test_outline_is_a_bijection(tmp_path_factory: pytest.TempPathFactory, raw: list[int]) -> None:
    parents = [p if p < k else k - 1 for k, p in enumerate(raw)]  # parents come first
    s = _tree_session(tmp_path_factory.mktemp("h"), parents)
    o = build_outline(s, "all")
    shown = [r for rows in o.groups.values() for r in rows]
    assert sorted(shown) == list(range(len(parents)))
    for key, rows in o.groups.items():
        for n, r in enumerate(rows):
            assert o.row_of[r] == n and o.group_of[r] == key


def test_model_tester_on_sample(qtmodeltester, branching_session: Path) -> None:
    s = Session.open(branching_session)
    m = SessionTreeModel()
    m.set_session(s, s.path_indices(s.leaf_index()))
    assert m.rowCount() > 0
    qtmodeltester.check(m)
    m.set_filter("no-tools", "")
    qtmodeltester.check(m)
    m.set_filter("all", "compaction")
    qtmodeltester.check(m)


def test_model_index_roundtrip(branching_session: Path) -> None:
    s = Session.open(branching_session)
    m = SessionTreeModel()
    m.set_session(s, s.path_indices(s.leaf_index()))
    for rec in list(m.outline.group_of)[:200]:
        ix = m.index_of(rec)
        assert m.record_of(ix) == rec
        assert m.index(ix.row(), 0, m.parent(ix)) == ix


def test_empty_model(qtmodeltester) -> None:
    m = SessionTreeModel()
    qtmodeltester.check(m)


def test_children_sorted_by_timestamp_like_pi_get_tree(tmp_path: Path) -> None:
    """Siblings are ordered by Date.parse(timestamp) (stable), not file order; invalid dates compare equal."""

    def msg(k: int, parent: int | None, ts: str) -> dict:
        return {
            "type": "message",
            "parentId": None if parent is None else f"e{parent:04d}",
            "timestamp": ts,
            "message": {"role": "user", "content": f"m{k}", "timestamp": k},
        }

    spec = [
        msg(0, None, "2025-01-01T10:00:00.000Z"),
        msg(1, 0, "2025-01-01T10:05:00.000Z"),  # a: latest timestamp, first in the file
        msg(2, 0, "2025-01-01T10:03:00.000Z"),  # b
        msg(3, 0, "2025-01-01T10:01:00.000Z"),  # c: earliest
        msg(4, 1, "2025-01-01T10:06:00.000Z"),  # the leaf continues a
    ]
    s = Session.open(write_session(tmp_path / "ts.jsonl", spec))
    o = build_outline(s, "all", active_path=s.path_indices(s.leaf_index()))
    assert list(o.groups[0]) == [3, 2]  # side branches under e0000: c before b
    assert list(o.groups[ROOT]) == [0, 1, 4]


def test_search_runs_off_the_gui_thread_and_swaps_in(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 7: search rebuilt the outline on the GUI thread. The outline is now built in a worker;
    the model keeps showing the old rows until the new ones are swapped in, the latest query wins,
    and the result equals the synchronous search."""
    import threading

    from session_studio.ui import tree_model as tm
    from session_studio.ui.tasks import TaskRunner

    spec = [("user", 10), ("assistant", 10)] * 200 + [
        {"type": "label", "targetId": "e0003", "label": "Needle"}
    ]
    s = Session.open(write_session(tmp_path / "big.jsonl", spec))
    m = SessionTreeModel()
    m.set_session(s, s.path_indices(s.leaf_index()))
    before = len(m.outline)
    gui = threading.get_ident()
    threads: list[int] = []
    real = tm.filtered_outline

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        threads.append(threading.get_ident())
        return real(*a, **k)

    tm.filtered_outline = spy  # type: ignore[assignment]
    try:
        runner = TaskRunner()
        done: list[int] = []
        m.filter_async(runner, "all", "zzz-no-match", lambda: done.append(1))
        m.filter_async(runner, "all", "needle", lambda: done.append(2))
        assert len(m.outline) == before  # nothing swapped in yet: the GUI thread did not wait
        qtbot.waitUntil(lambda: 2 in done, timeout=10000)
        qtbot.wait(50)
    finally:
        tm.filtered_outline = real  # type: ignore[assignment]
    assert done == [2]  # the superseded search was dropped
    assert threads and gui not in threads
    assert m.query == "needle"
    async_rows = [r for rows in m.outline.groups.values() for r in rows]
    m.set_filter("all", "needle")
    assert [r for rows in m.outline.groups.values() for r in rows] == async_rows
    assert s.get_index("e0003") in async_rows


def test_search_matches_text_labels_and_exact_ids(tmp_path: Path) -> None:
    spec = [("user", 10), ("assistant", 10)] * 5 + [{"type": "label", "targetId": "e0003", "label": "Needle"}]
    s = Session.open(write_session(tmp_path / "s.jsonl", spec))
    m = SessionTreeModel()
    m.set_session(s, s.path_indices(s.leaf_index()))

    def shown() -> set[int]:
        return {r for rows in m.outline.groups.values() for r in rows}

    m.set_filter("all", "E0005")  # an exact id, any case
    assert s.get_index("e0005") in shown() and s.get_index("e0004") not in shown()
    m.set_filter("all", "needl")  # a label
    assert s.get_index("e0003") in shown()
    m.set_filter("all", "no such text anywhere")
    assert shown() == set()
