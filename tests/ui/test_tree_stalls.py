"""What the GUI thread does at once when a session loads or a selection opens a part of a big tree
(issue 11: no stall over 100 ms). Counted in expansions and started workers, not in time (timing is
the benchmark's job: benchmarks/ui_open.py)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QTimer

from session_studio.core import Session, count_worker
from session_studio.ui import navigation, real_tokens, token_bar
from session_studio.ui.main_window import MainWindow
from session_studio.ui.outline import ROOT
from session_studio.ui.tasks import Operation, TaskRunner
from session_studio.ui.tree_model import SessionTreeModel, SessionTreeView

from .conftest import settle_window, write_session


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


def _settled_block(qtbot: Any, w: MainWindow, path: Path) -> tuple[QModelIndex, list[QModelIndex]]:
    """Open `path` and wait until no side branch is queued; then a block and its branch points."""
    _open(qtbot, w, path)
    qtbot.waitUntil(lambda: not w._pending_branches)
    return _block_with_branch_points(w)


def test_a_selection_opens_only_the_rows_above_it(
    qtbot: Any, small_blocks: MainWindow, branching_session: Path
) -> None:
    """Jumping into a closed block (the leaf when a session loads, the cut, a search hit) opens the block
    and the branch point the row is in, not the block's other side branches (thousands of rows to lay
    out on a big session)."""
    w = small_blocks
    _open(qtbot, w, branching_session)
    m = w.tree_model
    block, inside = _block_with_branch_points(w)
    into, other = inside[0], inside[1:]
    target = m.outline.groups[m.record_of(into)][0]  # the first row of a side branch in the block

    w.doc.select(target)
    cur = w.tree.currentIndex()
    assert m.record_of(cur) == target and w.tree.viewport().rect().intersects(w.tree.visualRect(cur))
    assert w.tree.isExpanded(block) and w.tree.isExpanded(into)
    qtbot.wait(50)
    assert not any(w.tree.isExpanded(b) for b in other)


def test_a_block_opened_by_hand_opens_its_side_branches_a_few_at_a_time(
    qtbot: Any, small_blocks: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = small_blocks
    block, inside = _settled_block(qtbot, w, branching_session)
    m = w.tree_model
    monkeypatch.setattr(navigation, "BRANCH_ROWS_PER_TURN", 1)  # one side branch per turn
    opened: list[int] = []
    expand = w.tree.expand
    w.tree.expand = lambda ix: (opened.append(m.record_of(ix)), expand(ix))  # type: ignore[method-assign]

    w.tree.expand(block)
    assert opened == [-1] and not any(w.tree.isExpanded(b) for b in inside)
    qtbot.waitUntil(lambda: all(w.tree.isExpanded(b) for b in inside))
    assert sorted(opened[1:]) == sorted(m.record_of(b) for b in inside)


def test_stepping_into_a_closed_block_opens_its_side_branches_at_once(
    qtbot: Any, small_blocks: MainWindow, branching_session: Path
) -> None:
    """Next/Previous walk the rows as shown: the side branches of a block stepped into are open."""
    w = small_blocks
    block, inside = _settled_block(qtbot, w, branching_session)
    m = w.tree_model
    before = m.index(block.row() - 1, 0)
    w.tree.expand(before)
    last = m.index(m.rowCount(before) - 1, 0, before)
    w.tree.setCurrentIndex(last)
    assert w.doc.selected == m.record_of(last)
    w.a_next.trigger()
    assert w.tree.isExpanded(block) and all(w.tree.isExpanded(b) for b in inside)
    assert m.parent(w.tree.currentIndex()) == block


def test_a_delayed_operation_starts_its_worker_from_the_event_loop(qtbot: Any) -> None:
    runner = TaskRunner()
    ran = threading.Event()
    op = runner.op(ran.set).start(after_ms=30)
    assert runner.busy  # counted as running meanwhile (busy indicators, benchmarks waiting for idle)
    time.sleep(0.1)  # no event loop: the worker has not been started
    assert not ran.is_set()
    qtbot.waitUntil(lambda: not runner.busy)
    assert ran.is_set() and op.done
    # cancelled before its worker started: it never runs, and the runner is idle again
    never = threading.Event()
    runner.op(never.set).start(after_ms=30).cancel()
    assert not runner.busy
    qtbot.wait(100)
    assert not never.is_set()
    runner.wait_idle()


def test_a_call_later_keeps_the_runner_busy_until_it_is_made(qtbot: Any) -> None:
    """Work set off later (the search text after a load) is work on its way: whoever waits for the
    runner to be idle (a test, the benchmark, a screenshot) waits for it too."""
    runner = TaskRunner()
    called: list[bool] = []
    runner.call_later(lambda: called.append(runner.busy), after_ms=30)
    assert runner.busy and called == []
    qtbot.waitUntil(lambda: not runner.busy)
    assert called == [False]  # on the GUI thread, once the wait is over
    runner.wait_idle()


@pytest.fixture
def threaded_window(qtbot: Any, tmp_path: Path) -> Iterator[MainWindow]:
    """The window with background workers, as the app runs it."""
    from session_studio.ui.settings import AppSettings

    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg" / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.resize(1280, 800)
    w.show()
    yield w


def test_the_tokenizer_is_loaded_in_the_counting_process_not_the_window(
    qtbot: Any, tmp_path: Path, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tokenizer (~67 MB; its load is one C call that holds the GIL) lives in the counting
    process: an empty window starts nothing, the first count of an opened session starts the
    process from a worker thread, and the path is counted there, never with a tokenizer of the
    window's own."""
    loaded_here: list[str] = []
    monkeypatch.setattr(count_worker, "load_counter", lambda enc: loaded_here.append(enc) or len)
    monkeypatch.setattr(real_tokens, "text_counter", count_worker.text_counter)
    worker = count_worker.CountWorker()
    monkeypatch.setattr(count_worker, "_shared", worker)
    gui = threading.get_ident()
    starts: list[bool] = []
    popen = count_worker.subprocess.Popen

    def starting(argv: list[str], **kw: Any) -> Any:
        if "session_studio.core.count_worker" in argv:
            starts.append(threading.get_ident() != gui)
        return popen(argv, **kw)

    monkeypatch.setattr(count_worker.subprocess, "Popen", starting)
    from session_studio.ui.settings import AppSettings

    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg" / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    try:
        qtbot.waitUntil(lambda: not runner.busy)
        runner.wait_idle()
        assert worker.started == 0 and starts == []
        w.open_path(str(branching_session))
        qtbot.waitUntil(lambda: w.bar.real is not None and w.bar.real.result is not None, timeout=20000)
        assert starts == [True]  # once, off the GUI thread
        assert worker.started == 1 and worker.pid is not None
        assert w.bar.real.result.real_total > 0
        assert loaded_here == []
    finally:
        runner.wait_idle()
        worker.close()


def test_workers_set_off_by_a_load_start_after_the_load_is_shown(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search text and the real token count run in workers that start once the GUI thread has
    shown the loaded session, not while it does (they would take the GIL in turns with it and make
    its step several times longer)."""
    w = threaded_window
    qtbot.waitUntil(lambda: not w.runner.busy)
    in_step = [False]
    started: list[tuple[str, bool]] = []
    launch = Operation._launch

    def recording(op: Operation) -> None:
        started.append((getattr(op.fn, "__qualname__", repr(op.fn)), in_step[0]))
        launch(op)

    monkeypatch.setattr(Operation, "_launch", recording)
    on_loaded = w.doc._on_loaded

    def loaded(path: str, res: Any) -> None:
        in_step[0] = True
        try:
            on_loaded(path, res)
        finally:
            in_step[0] = False

    monkeypatch.setattr(w.doc, "_on_loaded", loaded)
    w.open_path(str(branching_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and w.tree_model._search_texts is not None)
    qtbot.waitUntil(lambda: not w.runner.busy, timeout=30000)
    names = [name for name, _ in started]
    assert any("_count_path_job" in n for n in names)
    assert any("prepare_search" in n for n in names)
    assert [name for name, during in started if during] == []


def test_the_token_bars_sums_over_a_loaded_path_are_made_in_the_load_worker(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bar's per-path sums (100k items of a long path: ~55 ms) are not made in the GUI step that
    shows the loaded session, but beside the plan in the load job."""
    w = threaded_window
    qtbot.waitUntil(lambda: not w.runner.busy)
    made_on: list[bool] = []
    real = token_bar._Items.__init__

    def recording(self: Any, state: Any) -> None:
        made_on.append(threading.current_thread() is threading.main_thread())
        real(self, state)

    monkeypatch.setattr(token_bar._Items, "__init__", recording)
    w.open_path(str(branching_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and w.bar.layout_.state is w.doc.state)
    qtbot.waitUntil(lambda: not w.runner.busy, timeout=30000)
    assert made_on and not any(made_on)  # made, and never on the GUI thread
    assert token_bar.BarLayout._cache is not None
    assert token_bar.BarLayout._cache.items is w.doc.state.item_tokens


def _nested_branches(path: Path) -> Path:
    """A main line of 30 entries; side branches off it every 5th entry, each with a nested branch."""

    def msg(k: int, parent: str | None) -> dict[str, Any]:
        role = "user" if k % 2 == 0 else "assistant"
        content = [{"type": "text", "text": f"{role} {k}"}]
        return {"type": "message", "parentId": parent, "message": {"role": role, "content": content}}

    spec: list[Any] = [msg(k, f"e{k - 1:04d}" if k else None) for k in range(30)]
    for at in range(2, 30, 5):
        side = len(spec)
        spec += [msg(side, f"e{at:04d}"), msg(side + 1, f"e{side:04d}"), msg(side + 2, f"e{side + 1:04d}")]
        spec += [msg(side + 3, f"e{side:04d}"), msg(side + 4, f"e{side + 3:04d}")]  # nested: off `side`
    spec.append(msg(len(spec), "e0029"))  # the leaf continues the main line
    return write_session(path, spec)


@pytest.mark.parametrize("blocks", [True, False])
def test_branch_points_are_sorted_into_their_blocks_looking_each_row_up_once(
    qtbot: Any, tmp_path: Path, blocks: bool
) -> None:
    """After each search the branch points are sorted by enclosing block again: nested ones share the
    walk up to the top, so each row that opens a group is looked up once (a search result of 100k
    entries has ~1,600 groups)."""
    s = Session.open(_nested_branches(tmp_path / "nested.jsonl"))
    m = SessionTreeModel()
    if blocks:
        m.chunk_threshold, m.chunk_rows = 10, 4
    m.set_session(s, s.path_indices(s.leaf_index()))
    o = m.outline
    looked: list[int] = []
    chunk_key = m._chunk_key
    m._chunk_key = lambda r: looked.append(r) or chunk_key(r)  # type: ignore[method-assign]

    def nearest_block(g: int) -> int:  # the definition, walked for each group
        x = g
        while x != ROOT:
            ck = chunk_key(x)
            if ck is not None:
                return ck
            x = o.group_of.get(x, ROOT)
        return -1

    assert any(o.group_of.get(g, ROOT) != ROOT for g in o.groups)  # the sample nests side branches
    blocks_ = [m.index(c, 0) for c in range(m.rowCount()) if m.is_chunk(m.index(c, 0))]
    assert bool(blocks_) == blocks
    tops = [(-1, None), *((int(b.internalId()), b) for b in blocks_)]
    found = {int(b.internalId()) - 1: key for key, under in tops for b in m.branch_points(under)}
    assert found == {g: nearest_block(g) for g in o.groups if g != ROOT}
    assert len(looked) == len(set(looked)) <= len(o.groups) - 1


def test_a_new_tree_opens_its_branch_points_a_turn_at_a_time(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded tree's side branches open FIRST_TURN_BRANCH_ROWS rows in the load's step, then
    BRANCH_ROWS_PER_TURN rows per turn of the event loop (a big file's tree opened in one step froze
    the window); a small tree still opens in the load's step."""
    path = _nested_branches(tmp_path / "nested.jsonl")
    w = window
    m = w.tree_model

    def closed() -> list[QModelIndex]:
        return [b for b in m.branch_points() if not w.tree.isExpanded(b)]

    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    assert m.branch_points() and closed() == []  # small: all at once

    monkeypatch.setattr(navigation, "FIRST_TURN_BRANCH_ROWS", 2)
    monkeypatch.setattr(navigation, "BRANCH_ROWS_PER_TURN", 2)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and m.session is w.doc.session)
    assert closed()  # big for this budget: some left for the next turns ...
    qtbot.waitUntil(lambda: closed() == [])  # ... which open them all


def _pi_appends(path: Path, entry_id: str, parent_id: str, text: str) -> None:
    """A user message appended to ``path`` the way pi writes one."""
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def test_entries_pi_appends_are_planned_and_laid_out_in_workers(
    qtbot: Any,
    threaded_window: MainWindow,
    branching_session: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 11: pi appending one entry to a 100k-entry session froze the window for ~0.45 s (the
    path planned again and the whole tree derived again on the GUI thread; seconds at 900k). Both
    run in workers now, and the tree shown is extended, not derived again; it then shows the new
    leaf, selected as the old leaf was."""
    from session_studio.ui import document, tree_model

    w = threaded_window
    path = tmp_path / "live.jsonl"
    path.write_bytes(branching_session.read_bytes())
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    s = w.doc.session
    assert s is not None
    old_leaf = s.leaf_index()
    w.doc.select(old_leaf)
    gui = threading.get_ident()
    where: list[tuple[str, bool]] = []
    for module, name in (
        (document, "prepare_loaded"),
        (tree_model, "filtered_outline"),
        (tree_model, "extended_outline"),
    ):
        real = getattr(module, name)

        def recording(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            where.append((_name, threading.get_ident() == gui))
            return _real(*a, **k)

        monkeypatch.setattr(module, name, recording)
    _pi_appends(path, "feed0001", s.records[old_leaf].id, "appended by pi")
    w.doc.refresh()
    new = len(s.records) - 1
    assert s.records[new].id == "feed0001"
    qtbot.waitUntil(lambda: w.tree_model.index_of(new).isValid() and w.doc.selected == new, timeout=30000)
    # the tree shown is extended by the new row (the whole tree is not derived again)
    assert ("prepare_loaded", False) in where and ("extended_outline", False) in where
    assert ("filtered_outline", False) not in where
    assert [name for name, on_gui in where if on_gui] == []
    # shown selected once the new rows are painted (the turn after their paint)
    qtbot.waitUntil(lambda: w.tree_model.record_of(w.tree.currentIndex()) == new, timeout=5000)
    assert new in w.tree_model.outline.active


def test_a_cleared_search_shows_the_tree_it_replaced_without_building_it_again(
    qtbot: Any,
    threaded_window: MainWindow,
    branching_session: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 11: clearing a search rebuilt the whole tree in a worker (~2.5 s holding the GIL on
    900k entries while the window painted). The tree shown before the search comes back as it was,
    unless pi appended meanwhile (then it is built again, with the new entries)."""
    from session_studio.ui import tree_model

    w = threaded_window
    path = tmp_path / "live.jsonl"
    path.write_bytes(branching_session.read_bytes())
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    m = w.tree_model
    before = m.outline
    builds: list[str] = []
    real = tree_model.filtered_outline

    def recording(s: Any, mode: str, query: str, *a: Any) -> Any:
        builds.append(query)
        return real(s, mode, query, *a)

    monkeypatch.setattr(tree_model, "filtered_outline", recording)
    w.search.setText("user")
    qtbot.waitUntil(lambda: m.query == "user" and not w.runner.busy, timeout=30000)
    assert m.outline is not before and builds == ["user"]
    w.search.setText("")
    qtbot.waitUntil(lambda: m.query == "" and not w.runner.busy, timeout=30000)
    assert m.outline is before and builds == ["user"]  # not built again

    w.search.setText("user")
    qtbot.waitUntil(lambda: m.query == "user" and not w.runner.busy, timeout=30000)
    s = w.doc.session
    assert s is not None
    _pi_appends(path, "feed0002", s.records[s.leaf_index()].id, "a user's note appended by pi")
    w.doc.refresh()
    new = len(s.records) - 1
    qtbot.waitUntil(lambda: m.index_of(new).isValid() and not w.runner.busy, timeout=30000)
    w.search.setText("")
    qtbot.waitUntil(lambda: m.query == "" and not w.runner.busy, timeout=30000)
    assert builds[-1] == "" and m.outline is not before and m.index_of(new).isValid()


def test_a_selection_that_shows_a_hidden_leaf_follows_what_pi_appends(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, tmp_path: Path
) -> None:
    """The leaf a label (hidden by /tree's default filter): the window selects the entry shown for
    it; pi then appends a turn ending in a usage entry (hidden too): the selection follows to the
    turn's reply, in the document and in the tree."""
    w = threaded_window
    path = tmp_path / "live.jsonl"
    data = branching_session.read_bytes()
    last = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    label = {
        "type": "label",
        "id": "1abe1001",
        "parentId": last["id"],
        "timestamp": "2026-12-01T10:00:00.000Z",
        "targetId": last["id"],
        "label": "checkpoint",
    }
    path.write_bytes(data + (json.dumps(label) + "\n").encode())
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    s = w.doc.session
    assert s is not None and s.records[s.leaf_index()].type == "label"
    qtbot.waitUntil(lambda: w.doc.selected >= 0, timeout=10000)
    assert s.records[w.doc.selected].id == last["id"]  # the entry shown for the hidden leaf
    _pi_appends(path, "feed0001", "1abe1001", "a question")
    reply = {
        "type": "message",
        "id": "feed0002",
        "parentId": "feed0001",
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "an answer"}], "timestamp": 2},
    }
    usage = {
        "type": "usage",
        "id": "feed0003",
        "parentId": "feed0002",
        "timestamp": "2026-12-01T10:00:02.000Z",
        "kind": "turn",
        "provider": "p",
        "model": "m",
        "usage": {"totalTokens": 5},
    }
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(reply) + "\n" + json.dumps(usage) + "\n")
    w.doc.refresh()
    answer = s.get_index("feed0002")
    assert answer is not None
    qtbot.waitUntil(lambda: w.tree_model.record_of(w.tree.currentIndex()) == answer, timeout=30000)
    assert w.doc.selected == answer


def test_the_heads_rows_are_painted_a_turn_after_the_head_is_shown_and_then_its_first_row_picked(
    qtbot: Any, threaded_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11 (the loading stall): the step that shows a file's head (or its whole index), the
    first paint of the new rows and making the first row current (the inspector shows it) were one
    stall of the GUI thread. Now the paint comes in a later turn of the event loop (input and timers
    are handled between), and the first row is made current after that paint; the head is not the
    user's pick."""
    from session_studio.ui import document

    from .conftest import write_session

    w = threaded_window
    path = write_session(tmp_path / "long.jsonl", [("user", 40), ("assistant", 40)] * 400)
    monkeypatch.setattr(document, "PARTIAL_MIN_BYTES", 0)
    monkeypatch.setattr(document, "HEAD_BYTES", path.stat().st_size // 2)
    seen: list[tuple[str, int]] = []
    paint = SessionTreeView.paintEvent

    def counted(view: SessionTreeView, event: Any) -> None:
        if w.doc.partial is not None:
            seen.append(("paint", -1))
        paint(view, event)

    monkeypatch.setattr(SessionTreeView, "paintEvent", counted)

    def on_partial(_head: Any) -> None:
        seen.append(("head shown", w.tree_model.record_of(w.tree.currentIndex())))
        QTimer.singleShot(1, lambda: seen.append(("a timer", -1)))  # the next turn's timers

    def on_current(cur: Any, _prev: Any) -> None:
        if w.doc.partial is not None:
            seen.append(("current", w.tree_model.record_of(cur)))

    w.doc.partial_loaded.connect(on_partial)
    w.tree.selectionModel().currentChanged.connect(on_current)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    steps = [name for name, _ in seen]
    assert seen[0] == ("head shown", -1)
    assert steps.index("a timer") < steps.index("paint") < steps.index("current")
    assert ("current", 0) in seen  # the head's first entry, while the head is shown
    assert w.doc.selected == w.doc.session.leaf_index()  # the leaf once loaded: the head was no pick


def test_the_whole_files_rows_are_painted_a_turn_after_they_are_shown(
    qtbot: Any, threaded_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for the step that swaps in the whole file's index: its rows are painted in a later
    turn than the step (which does 25–30 ms of work on a 100k-entry file besides)."""
    from .conftest import write_session

    w = threaded_window
    path = write_session(tmp_path / "s.jsonl", [("user", 40), ("assistant", 40)] * 50)
    seen: list[str] = []
    paint = SessionTreeView.paintEvent

    def counted(view: SessionTreeView, event: Any) -> None:
        if seen:
            seen.append("paint")
        paint(view, event)

    monkeypatch.setattr(SessionTreeView, "paintEvent", counted)

    def on_loaded(_res: Any) -> None:
        seen.append("loaded")
        QTimer.singleShot(1, lambda: seen.append("a timer"))  # the next turn's timers

    w.doc.loaded.connect(on_loaded)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: "paint" in seen and not w.runner.busy, timeout=30000)
    assert seen.index("a timer") < seen.index("paint")
    assert w.tree.updatesEnabled()


def test_the_whole_files_tree_is_painted_two_turns_after_it_is_shown(
    qtbot: Any, threaded_window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: in the turn after the step that swaps the whole file's index in, Qt lays out and
    paints what the step changed in the panel, the bar and the labels, and a second wave of layouts
    follows that paint. On the 1 GB session the tree's first paint (~70 ms) came in with that wave
    (~20 ms): a stall of ~120 ms. Now it comes two turns of the event loop (here: ticks of a 0 ms
    timer) after the step, and the rest of the window is painted before it."""
    w = threaded_window
    path = write_session(tmp_path / "s.jsonl", [("user", 40), ("assistant", 40)] * 50)
    events: list[str] = []
    recording = [False]
    tree_paint, bar_paint = SessionTreeView.paintEvent, token_bar.TokenBar.paintEvent

    def tree_painted(view: SessionTreeView, event: Any) -> None:
        if recording[0]:
            events.append("tree paint")
        tree_paint(view, event)

    def bar_painted(bar: token_bar.TokenBar, event: Any) -> None:
        if recording[0]:
            events.append("bar paint")
        bar_paint(bar, event)

    # before the views' first paint: PySide looks a Python override up once per object
    monkeypatch.setattr(SessionTreeView, "paintEvent", tree_painted)
    monkeypatch.setattr(token_bar.TokenBar, "paintEvent", bar_painted)
    heartbeat = QTimer()
    heartbeat.setInterval(0)
    heartbeat.timeout.connect(lambda: recording[0] and events.append("tick"))

    def on_loaded(_res: Any) -> None:
        recording[0] = True
        heartbeat.start()
        time.sleep(0.005)  # a step as long as a big file's: the next turn's timers are due when it ends

    w.doc.loaded.connect(on_loaded)
    try:
        w.open_path(str(path))
        qtbot.waitUntil(lambda: "tree paint" in events and not w.runner.busy, timeout=30000)
    finally:
        heartbeat.stop()
    before = events[: events.index("tree paint")]
    assert before.count("tick") >= 2
    assert "bar paint" in before
    assert w.tree.updatesEnabled()


def test_what_waits_for_the_trees_paint_runs_in_a_turn_after_it(qtbot: Any) -> None:
    """SessionTreeView.call_after_paint: not before the next paint, not inside it, and without a
    paint (a hidden view) after AFTER_PAINT_FALLBACK_MS."""
    from session_studio.ui import tree_model

    view = SessionTreeView()
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.show()
    qtbot.waitExposed(view)
    qtbot.wait(20)  # the first paints are done
    events: list[str] = []
    view.setUpdatesEnabled(False)
    view.call_after_paint(lambda: events.append("then"))
    qtbot.wait(20)
    assert events == []  # no paint yet
    paint = view.viewport().repaint
    view.setUpdatesEnabled(True)
    paint()
    events.append("painted")
    assert events == ["painted"]  # not inside the paint's step
    qtbot.waitUntil(lambda: "then" in events, timeout=1000)
    assert events == ["painted", "then"]

    view.hide()
    started = time.perf_counter()
    view.call_after_paint(lambda: events.append("then, unpainted"))
    qtbot.waitUntil(lambda: "then, unpainted" in events, timeout=5000)
    assert time.perf_counter() - started >= tree_model.AFTER_PAINT_FALLBACK_MS / 1000 * 0.9


def test_opening_a_file_is_said_in_the_status_bars_label_not_over_it(threaded_window: MainWindow) -> None:
    """Seen under X while the 1 GB file loaded: Qt showed the status bar's path label again over a
    passing "Opening …" message, both texts drawn on each other. The label says it instead."""
    w = threaded_window
    w.statusBar().showMessage("an older message")
    w._on_loading("/sessions/big.jsonl")
    assert w.statusBar().currentMessage() == ""
    assert w.status_path.text() == "Opening /sessions/big.jsonl…"


def _many_small_branches(path: Path, count: int) -> Path:
    """A main line with a one-entry side branch off each of its first ``count`` entries (what a
    search's result looks like: hundreds of branch points of a row or two each)."""

    def msg(k: int, parent: str | None) -> dict[str, Any]:
        role = "user" if k % 2 == 0 else "assistant"
        return {"type": "message", "parentId": parent, "message": {"role": role, "content": f"{role} {k}"}}

    main = count + 1
    spec: list[Any] = [msg(k, f"e{k - 1:04d}" if k else None) for k in range(main)]
    spec += [msg(main + k, f"e{k:04d}") for k in range(count)]
    spec.append(msg(len(spec), f"e{main - 1:04d}"))  # the leaf continues the main line
    return write_session(path, spec)


def test_each_branch_point_opened_counts_against_a_turns_budget(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a branch point costs about EXPAND_ROWS rows of layout besides its own rows: a turn
    whose budget is its rows alone opened every one of hundreds of one-row branch points at once."""
    w, m = window, window.tree_model
    path = _many_small_branches(tmp_path / "small-branches.jsonl", 12)
    budget = 3 * (navigation.EXPAND_ROWS + 2)
    monkeypatch.setattr(navigation, "FIRST_TURN_BRANCH_ROWS", budget)
    monkeypatch.setattr(navigation, "BRANCH_ROWS_PER_TURN", budget)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None and m.session is w.doc.session)
    points = m.branch_points()
    opened = [b for b in points if w.tree.isExpanded(b)]
    assert len(points) == 12 and max(m.rowCount(b) for b in points) <= 2
    assert 3 <= len(opened) <= 4  # the rows alone (≤ 24) would have let all 12 open at once
    qtbot.waitUntil(lambda: all(w.tree.isExpanded(b) for b in m.branch_points()))


def test_a_search_result_is_painted_before_the_selection_is_shown_again(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swapping a search's rows in, painting them and showing the selection again (its block laid
    out) were one step of the GUI thread (~145 ms on the 1 GB session): now the selection is shown
    in a turn after the rows' paint, so no step holds more than one of them."""
    w = threaded_window
    events: list[str] = []
    in_swap = [False]
    paint = SessionTreeView.paintEvent

    def painted(view: SessionTreeView, event: Any) -> None:
        if events and events[-1] != "paint":
            events.append("paint")
        paint(view, event)

    # before the view's first paint: PySide looks a Python override up once per object
    monkeypatch.setattr(SessionTreeView, "paintEvent", painted)
    w.open_path(str(branching_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    leaf = w.doc.session.leaf_index()
    w.doc.select(leaf)
    show_new_rows, reselect = w._show_new_rows, w._reselect

    def swapped() -> None:
        in_swap[0] = True
        events.append("swap")
        try:
            show_new_rows()
        finally:
            in_swap[0] = False

    def reselected(record: int) -> None:
        events.append("reselect during the swap" if in_swap[0] else "reselect")
        reselect(record)

    monkeypatch.setattr(w, "_show_new_rows", swapped)
    monkeypatch.setattr(w, "_reselect", reselected)
    w.search.setText(w.doc.session.records[leaf].role or "a")
    qtbot.waitUntil(lambda: "reselect" in events, timeout=10000)
    assert events[:3] == ["swap", "paint", "reselect"]
    qtbot.waitUntil(lambda: w.tree_model.record_of(w.tree.currentIndex()) == leaf, timeout=5000)


def test_the_engine_is_imported_when_the_user_turns_to_a_summary(
    qtbot: Any,
    threaded_window: MainWindow,
    branching_session: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine (pydantic, the writers: ~19 MB and ~0.2-0.4 s of Python) was imported 1.5 s after
    every first load. A window that only shows sessions never imports it now; the Preview tab
    imports it at once, in a worker, once per window."""
    import sys

    from session_studio.ui.write_commands import WriteCommands

    (tmp_path / "engine_stand_in.py").write_text(
        "import threading\nIMPORTED_ON = threading.current_thread()\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(WriteCommands, "ENGINE_MODULE", "engine_stand_in")
    monkeypatch.delitem(sys.modules, "engine_stand_in", raising=False)
    w = threaded_window
    imports: list[Any] = []
    real_op = w.runner.op

    def counting_op(fn: Any, *args: Any, **kw: Any) -> Any:
        if args == ("engine_stand_in",):
            imports.append(fn)
        return real_op(fn, *args, **kw)

    monkeypatch.setattr(w.runner, "op", counting_op)
    for _ in range(2):
        w.open_path(str(branching_session))
        qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    w.tabs.setCurrentWidget(w.why)
    qtbot.wait(50)
    assert imports == [] and "engine_stand_in" not in sys.modules
    w.tabs.setCurrentWidget(w.preview)
    qtbot.waitUntil(lambda: w._engine_ready, timeout=10000)
    assert sys.modules["engine_stand_in"].IMPORTED_ON is not threading.main_thread()
    w.tabs.setCurrentWidget(w.why)
    w.tabs.setCurrentWidget(w.preview)  # imported: nothing more starts
    assert len(imports) == 1
    qtbot.waitUntil(lambda: not w.runner.busy, timeout=15000)


def test_branch_with_summary_counts_the_entries_left_behind_in_a_worker(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question before a branch summary says how many entries are left behind: pi's walk over
    both paths took 85-130 ms of the GUI thread on the 1 GB session. It runs in a worker now; a
    selection moved meanwhile asks nothing."""
    from session_studio.ui import write_commands

    from .conftest import side_branch_assistant

    w = threaded_window
    w.open_path(str(branching_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    threads: list[threading.Thread] = []
    collect = write_commands.collect_entries_for_branch_summary

    def counted_where(*args: Any) -> Any:
        threads.append(threading.current_thread())
        return collect(*args)

    monkeypatch.setattr(write_commands, "collect_entries_for_branch_summary", counted_where)
    asked: list[str] = []
    monkeypatch.setattr(w, "ask_yes_no", lambda _title, text, **_kw: asked.append(text) or False)
    side = side_branch_assistant(w)
    w.doc.select(side)
    w.branch_with_summary()
    assert asked == []  # not in this step
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    assert threads and threads[0] is not threading.main_thread()
    assert "left behind" in asked[0]
    w.doc.select(side)
    w.branch_with_summary()
    w.doc.select(w.doc.session.leaf_index())  # the user moves on before the count comes
    qtbot.waitUntil(lambda: w._branch_count_op is None, timeout=10000)
    qtbot.wait(20)
    assert len(asked) == 1


def test_the_heap_is_trimmed_once_the_background_work_has_ended(
    qtbot: Any, threaded_window: MainWindow, branching_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load, a search's outline or a re-plan leave free blocks between live ones (16 MB after the
    1 GB session's load): their pages go back to the system TRIM_AFTER_IDLE_MS after the window's
    background work ends, not while it runs."""
    from session_studio.ui import main_window

    w = threaded_window
    trims: list[bool] = []
    monkeypatch.setattr(
        main_window, "_release_free_memory_in_background", lambda: trims.append(w.runner.busy)
    )
    w.open_path(str(branching_session))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.runner.busy, timeout=30000)
    qtbot.waitUntil(lambda: bool(trims), timeout=5000)
    after_load = len(trims)
    w.doc.set_params(keep=1000)  # a re-plan: once more, after it
    qtbot.waitUntil(lambda: len(trims) > after_load, timeout=10000)
    assert not any(trims)  # never while the window worked
