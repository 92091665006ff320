"""What the GUI thread does at once when a selection opens a part of a big tree (issue 11: no stall
over 100 ms). Counted in expansions and model calls, not in time (timing is the benchmark's job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex

from session_studio.ui import navigation
from session_studio.ui.main_window import MainWindow
from session_studio.ui.outline import ROOT


@pytest.fixture
def small_blocks(window: MainWindow) -> MainWindow:
    """Blocks of 4 rows from 11 rows on: the 66 top-level rows of the branching sample make 17 blocks,
    some of them holding branch points."""
    window.tree_model.chunk_threshold = 10
    window.tree_model.chunk_rows = 4
    return window


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


def _block_with_branch_points(w: MainWindow) -> tuple[QModelIndex, list[QModelIndex]]:
    """A closed block holding at least two branch points, and those."""
    m = w.tree_model
    for c in range(m.rowCount()):
        block = m.index(c, 0)
        inside = m.branch_points(block)
        if len(inside) >= 2 and not w.tree.isExpanded(block):
            return block, inside
    raise AssertionError("the sample has no closed block with two branch points")


def test_a_selection_opens_the_side_branches_of_its_block_a_few_at_a_time(
    qtbot: Any, small_blocks: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = small_blocks
    _open(qtbot, w, branching_session)
    m = w.tree_model
    qtbot.waitUntil(lambda: not w._pending_branches)
    block, inside = _block_with_branch_points(w)
    monkeypatch.setattr(navigation, "BRANCH_ROWS_PER_TURN", 1)  # one side branch per turn
    target = m.outline.groups[ROOT][m.chunk_range(block)[0]]
    opened: list[int] = []
    expand = w.tree.expand
    w.tree.expand = lambda ix: (opened.append(m.record_of(ix)), expand(ix))  # type: ignore[method-assign]

    w.doc.select(target)
    # the selection opened its block and shows its row; the block's side branches wait for the event loop
    assert m.record_of(w.tree.currentIndex()) == target and w.tree.isExpanded(block)
    assert opened == [] and not any(w.tree.isExpanded(b) for b in inside)
    qtbot.waitUntil(lambda: all(w.tree.isExpanded(b) for b in inside))
    assert sorted(opened) == sorted(m.record_of(b) for b in inside)
    cur = w.tree.currentIndex()
    assert m.record_of(cur) == target
    assert w.tree.viewport().rect().intersects(w.tree.visualRect(cur))


def test_stepping_into_a_closed_block_opens_its_side_branches_at_once(
    qtbot: Any, small_blocks: MainWindow, branching_session: Path
) -> None:
    """Next/Previous walk the rows as shown: the side branches of a block stepped into are open."""
    w = small_blocks
    _open(qtbot, w, branching_session)
    m = w.tree_model
    qtbot.waitUntil(lambda: not w._pending_branches)
    block, inside = _block_with_branch_points(w)
    before = m.index(block.row() - 1, 0)
    w.tree.expand(before)
    last = m.index(m.rowCount(before) - 1, 0, before)
    w.tree.setCurrentIndex(last)
    assert w.doc.selected == m.record_of(last)
    w.a_next.trigger()
    assert w.tree.isExpanded(block) and all(w.tree.isExpanded(b) for b in inside)
    assert m.parent(w.tree.currentIndex()) == block
