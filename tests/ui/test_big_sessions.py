"""Long lists as row blocks, and the head of a big file shown while the rest loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.ui import document
from session_studio.ui.main_window import PAGE_SESSION, MainWindow
from session_studio.ui.outline import ROOT
from session_studio.ui.tree_model import SessionTreeModel

from .conftest import append_as_pi, write_session


def _chain(tmp_path: Path, n: int = 40) -> Path:
    spec: list[Any] = [("user", 30)]
    for _ in range(n // 2):
        spec += [("assistant", 30), ("toolResult", 30)]
    return write_session(tmp_path / "chain.jsonl", spec)


def _small_blocks(m: SessionTreeModel) -> None:
    m.chunk_threshold = 10
    m.chunk_rows = 4


def test_blocks_model_tester(qtmodeltester: Any, tmp_path: Path, branching_session: Path) -> None:
    for path in (_chain(tmp_path), branching_session):
        s = Session.open(path)
        m = SessionTreeModel()
        _small_blocks(m)
        m.set_session(s, s.path_indices(s.leaf_index()))
        root = m.outline.groups[ROOT]
        assert m.rowCount() == (len(root) + 3) // 4  # blocks at the top level
        assert m.is_chunk(m.index(0, 0)) and m.record_of(m.index(0, 0)) == -1
        assert m.data(m.index(0, 0)).startswith("Entries 1–4 of")
        qtmodeltester.check(m)
        for rec in list(m.outline.group_of):
            ix = m.index_of(rec)
            assert m.record_of(ix) == rec
            assert m.index(ix.row(), 0, m.parent(ix)) == ix
        # marks over rows in blocks: dataChanged with the block as parent
        m.set_marks({root[5]: "cut"})
        m.set_marks({root[6]: "cut", root[0]: "summarised"})
        m.set_filter("no-tools", "")
        qtmodeltester.check(m)


def test_branch_points_open_with_their_block(tmp_path: Path, branching_session: Path) -> None:
    s = Session.open(branching_session)
    m = SessionTreeModel()
    _small_blocks(m)
    m.set_session(s, s.path_indices(s.leaf_index()))
    under_blocks = [ix for c in range(m.rowCount()) for ix in m.branch_points(m.index(c, 0))]
    outside = m.branch_points()
    assert len(under_blocks) + len(outside) == len(m.outline.groups) - 1


@pytest.fixture
def block_window(window: MainWindow) -> MainWindow:
    _small_blocks(window.tree_model)
    return window


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


def test_window_navigates_across_blocks(qtbot: Any, block_window: MainWindow, tmp_path: Path) -> None:
    w = block_window
    _open(qtbot, w, _chain(tmp_path))
    m = w.tree_model
    leaf = w.doc.session.leaf_index()
    assert m.rowCount() > 3
    assert w.doc.selected == leaf and m.record_of(w.tree.currentIndex()) == leaf
    path = w.doc.loaded_state.path_indices
    # step back over several block boundaries and forward again
    for k in range(1, 12):
        w.a_prev.trigger()
        assert w.doc.selected == path[-1 - k]
    for k in range(10, -1, -1):
        w.a_next.trigger()
        assert w.doc.selected == path[-1 - k]
    # selecting an entry in a closed block opens it
    w.doc.select(path[1])
    assert m.record_of(w.tree.currentIndex()) == path[1]
    assert w.tree.isExpanded(m.parent(w.tree.currentIndex()))
    w.a_goto_cut.trigger()
    assert w.doc.selected == w.doc.state.first_kept_record
    w.filter_combo.setCurrentIndex(w.filter_combo.findData("user-only"))
    assert m.rowCount() == 1 and not m.is_chunk(m.index(0, 0))


def test_head_of_a_big_file_is_shown_first(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _chain(tmp_path, 60)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 3)
    seen: list[tuple[int, int, bool]] = []

    def on_partial(head: document.Partial) -> None:
        assert 0 < head.fraction < 1
        assert window.stack.currentIndex() == PAGE_SESSION
        assert window.load_banner.isVisible() and "Loading" in window.load_banner.label.text()
        assert window.doc.session is None  # nothing plans or writes on the head
        assert not window.a_cut_here.isEnabled()
        n = len(head.session.records)
        seen.append((n, window.tree_model.rowCount(), window.tree_model.session is head.session))
        window.doc.select(3)  # the user picks an entry while the rest loads

    window.doc.partial_loaded.connect(on_partial)
    _open(qtbot, window, path)
    assert seen and seen[0][1] > 0 and seen[0][2]
    full = window.doc.session
    assert seen[0][0] < len(full.records)
    assert not window.load_banner.isVisible()
    assert window.tree_model.session is full
    assert window.doc.selected == 3 != full.leaf_index()  # kept by id, not moved to the leaf
    assert window.tree_model.record_of(window.tree.currentIndex()) == 3


def test_a_long_head_is_shown_in_blocks_with_the_first_open(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: the head of a linear session was one flat list of ~3,000 rows, laid out in one step
    of the GUI thread (~0.1 s) in the middle of the load. It comes in blocks now, as the whole file
    does a moment later, with its first block open and its first entry current."""
    path = _chain(tmp_path, 60)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 2)
    m = window.tree_model
    m.chunk_rows, m.head_chunk_threshold = 4, 10  # the whole file (61 rows) stays a flat list
    seen: list[tuple[bool, bool, int]] = []

    def on_partial(head: document.Partial) -> None:
        first = m.index(0, 0)
        assert len(m.outline.groups[ROOT]) > 10
        seen.append(
            (m.is_chunk(first), window.tree.isExpanded(first), m.record_of(window.tree.currentIndex()))
        )

    window.doc.partial_loaded.connect(on_partial)
    _open(qtbot, window, path)
    assert seen == [(True, True, m.outline.groups[ROOT][0])]
    assert not m.is_chunk(m.index(0, 0))  # the whole file: below chunk_threshold, one list


def test_cancel_while_the_head_is_shown(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _chain(tmp_path, 60)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 3)
    window.doc.partial_loaded.connect(lambda _h: window.load_banner.cancel.click())
    window.open_path(str(path))
    assert window.doc.session is None and window.doc.partial is None
    assert window.tree_model.session is None
    assert not window.load_banner.isVisible()


def test_load_head_cuts_at_a_line_end(tmp_path: Path) -> None:
    path = _chain(tmp_path, 30)
    head = document.load_head(str(path), path.stat().st_size // 2)
    assert head is not None
    full = Session.open(path)
    assert 0 < len(head.session.records) < len(full.records)
    for r in head.session.records:
        assert full.records[r.index].id == r.id and full.records[r.index].offset == r.offset


def test_the_session_page_is_shown_before_the_heads_rows_are_put_in(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a big file from the browser: the session page comes up before the head's rows are
    put in the tree. Shown after them, the page's first show laid out every row of the first block
    and the first branch points inside the page switch (~40 ms of model calls in the step that
    shows the head); put in a shown tree, they are laid out by Qt's delayed layout, a turn later."""
    path = _chain(tmp_path, 60)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 3)
    window.show_browser()
    assert window.stack.currentIndex() != PAGE_SESSION
    pages: list[tuple[bool, int]] = []
    set_session = window.tree_model.set_session

    def recording(session: Any, *a: Any, head: bool = False, **k: Any) -> None:
        pages.append((head, window.stack.currentIndex()))
        set_session(session, *a, head=head, **k)

    monkeypatch.setattr(window.tree_model, "set_session", recording)
    _open(qtbot, window, path)
    assert (True, PAGE_SESSION) in pages  # the head went into a tree already shown


def test_a_reload_keeps_the_summary_usable_and_another_file_shows_none_of_it(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big file is shown by its head first. That dropped the generated summary on a reload (F5):
    its text stayed, counted in "after", while Commit said to generate one first. Opening another
    big file left the previous plan's panes and an enabled Generate on show while it loaded."""
    path = _chain(tmp_path, 60)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 3)
    _open(qtbot, window, path)
    window.doc.set_params(keep=100)
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    window.preview.provider.setCurrentIndex(window.preview.provider.findData("offline"))
    window.preview.generate_button.click()
    qtbot.waitUntil(lambda: window.doc.outcome is not None, timeout=20000)
    summary = window.doc.summary_text
    shown: list[tuple[bool, str]] = []
    window.doc.partial_loaded.connect(
        lambda _h: shown.append(
            (window.preview.generate_button.isEnabled(), window.preview.after.toPlainText())
        )
    )
    window._reload()
    qtbot.waitUntil(lambda: window.doc.state is not None and window.doc.partial is None, timeout=10000)
    assert shown == [(False, "")]  # while the head is shown: no plan on show, nothing to generate
    assert window.doc.outcome is not None and window.doc.summary_text == summary
    # the file is as it was: the summary is still this plan's, to commit without generating again
    assert not window.doc.summary_is_stale and window.a_commit.isEnabled()
    append_as_pi(path)  # pi appends: the summary is made for an earlier state of the file
    window._reload()
    qtbot.waitUntil(lambda: window.doc.state is not None and window.doc.partial is None, timeout=10000)
    assert window.doc.summary_is_stale and "pi appended 1 entry" in window.doc.stale_summary_text()
    assert (
        window.a_commit.toolTip()
        != "Generate a summary first (Preview tab); you can edit it before committing."
    )
    # another file: its summary is not this one's
    (tmp_path / "o").mkdir()
    other = _chain(tmp_path / "o", 60)
    window.open_path(str(other))
    qtbot.waitUntil(lambda: window.doc.path == str(other) and window.doc.state is not None, timeout=10000)
    assert window.doc.outcome is None and window.doc.summary_text == ""
