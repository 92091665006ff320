"""What keeps the GUI thread responsive while background work runs on a big session (issue 11)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from session_studio.core import Session
from session_studio.ui import tasks
from session_studio.ui.outline import preview_text
from session_studio.ui.tasks import TaskRunner
from session_studio.ui.tree_model import SEARCH_TEXT_BATCH, extend_search_texts

from .conftest import settle_window, side_branch_assistant, write_session


def _short(interval: float, default: float) -> bool:
    return math.isclose(interval, min(tasks.BUSY_SWITCH_INTERVAL, default), rel_tol=1e-3)


def test_background_work_runs_with_short_gil_slices(qtbot: Any) -> None:
    """A worker running Python hands the GIL back after BUSY_SWITCH_INTERVAL, not after the default
    5 ms, while any background work runs (search text, preparation, not just the load); the
    interval is restored when the runner is idle."""
    default = sys.getswitchinterval()
    runner = TaskRunner()
    seen: list[float] = []
    op = runner.op(lambda: seen.append(sys.getswitchinterval()))
    with qtbot.waitSignal(op.succeeded, timeout=5000):
        op.start()
    assert len(seen) == 1 and _short(seen[0], default)
    qtbot.waitUntil(lambda: not runner.busy)
    assert sys.getswitchinterval() == default


def test_two_runners_keep_short_slices_until_both_are_idle(qtbot: Any) -> None:
    default = sys.getswitchinterval()
    a, b = TaskRunner(), TaskRunner()
    a_op, b_op = a.op(lambda: None), b.op(lambda: None)
    a._track(a_op)
    b._track(b_op)
    a._untrack(a_op)
    assert _short(sys.getswitchinterval(), default)
    b._untrack(b_op)
    assert sys.getswitchinterval() == default


def _big_enough(tmp_path: Path, n: int) -> Session:
    spec: list[Any] = []
    for k in range(n):
        spec.append(("user" if k % 2 == 0 else "assistant", 20))
    path = write_session(tmp_path / "s.jsonl", spec)
    return Session.open(path, keep_values=False)  # values re-read from the file, as for a big file


def test_search_text_reads_values_in_batches(tmp_path: Path, monkeypatch: Any) -> None:
    """The search text of a big session is read with one file handle per batch of records, not one
    open per record (that made the first search of a 100k-entry session take tens of seconds)."""
    s = _big_enough(tmp_path, 2 * SEARCH_TEXT_BATCH + 5)
    opened = [0]
    real = Session._reopen

    def counting(self: Session) -> Any:
        opened[0] += 1
        return real(self)

    monkeypatch.setattr(Session, "_reopen", counting)
    texts = extend_search_texts(s, None)
    assert opened[0] == 3  # three batches
    assert list(texts) == [preview_text(s.value(i)).lower() for i in range(len(s.records))]
    opened[0] = 0
    more = extend_search_texts(s, texts.truncated(len(texts) - 5))  # only the missing records are read
    assert list(more) == list(texts) and opened[0] == 1


def test_search_text_of_an_unreadable_batch_still_finds_the_others(tmp_path: Path, monkeypatch: Any) -> None:
    s = _big_enough(tmp_path, 10)

    def broken_batch(self: Session, indices: Any) -> list[Any]:
        raise OSError("disk gone")

    monkeypatch.setattr(Session, "values", broken_batch)
    real_value = Session.value

    def one(self: Session, i: int) -> Any:
        if i == 3:
            raise OSError("bad sector")
        return real_value(self, i)

    monkeypatch.setattr(Session, "value", one)
    texts = extend_search_texts(s, None)
    assert texts[3] == "(unreadable: bad sector)"
    assert texts[4] == preview_text(real_value(s, 4)).lower()


def test_context_edit_scan_is_the_workers_and_appends_scan_only_new_records(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Whether a session holds pi 1.6.0 context edits is found in the load's worker (a scan of every
    record: ~0.3 s on the GUI thread for 900k entries); an append looks at the new records only."""
    from session_studio.ui import tree_model

    s = _big_enough(tmp_path, 30)
    scans: list[int] = []
    real = tree_model.has_context_edits

    def recording(session: Session, start: int = 0) -> bool:
        scans.append(start)
        return real(session, start)

    monkeypatch.setattr(tree_model, "has_context_edits", recording)
    model = tree_model.SessionTreeModel()
    path = s.path_indices(s.leaf_index())
    model.set_session(s, path, None, context_edits=False)
    assert scans == []
    with open(s.path, "ab") as fh:
        fh.write(
            b'{"type":"message","id":"x1","parentId":"e0029","timestamp":"2025-01-01T11:00:00.000Z",'
            b'"message":{"role":"user","content":"more","timestamp":1}}\n'
        )
    assert s.refresh() == [30]
    model.rebuild(s.path_indices(s.leaf_index()))
    assert scans == [30]


def test_gc_pauses_are_counted() -> None:
    """A load and a search build overlap: the GC is back on only when both are done."""
    import gc

    from session_studio.ui.tasks import hold_gc_pause, paused_gc, release_gc_pause

    assert gc.isenabled()
    hold_gc_pause()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()
    release_gc_pause()
    assert gc.isenabled()
    release_gc_pause()  # an extra release changes nothing
    assert gc.isenabled()


def test_search_builds_run_without_cyclic_gc(qtbot: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """The outline of a search allocates a container per entry in a worker: a collection over them
    held the GIL for ~0.3 s on 900k entries (the watchdog of benchmarks/ui_open.py saw it)."""
    import gc

    from session_studio.ui import tree_model

    s = _big_enough(tmp_path, 30)
    seen: list[bool] = []
    real = tree_model.filtered_outline

    def recording(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(tree_model, "filtered_outline", recording)
    model = tree_model.SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    seen.clear()  # that outline was built here, on the GUI thread
    runner = TaskRunner()
    done: list[bool] = []
    model.filter_async(runner, "default", "message 3", lambda: done.append(True))
    qtbot.waitUntil(lambda: bool(done) and not runner.busy, timeout=10000)
    assert seen == [False]
    assert gc.isenabled()
    assert 0 < len(model.outline) < 30


def test_previews_of_a_big_file_are_read_a_screenful_at_a_time(tmp_path: Path, monkeypatch: Any) -> None:
    """Painting the tree of a big session asks for one row's preview after another; each used to
    re-open the file (a third of a scroll step's time on the 110 MB session)."""
    from session_studio.ui import tree_model

    s = _big_enough(tmp_path, 200)
    model = tree_model.SessionTreeModel()
    model.chunk_threshold = 10_000  # one flat list
    model.set_session(s, s.path_indices(s.leaf_index()))
    opened = [0]
    real = Session._reopen

    def counting(self: Session) -> Any:
        opened[0] += 1
        return real(self)

    monkeypatch.setattr(Session, "_reopen", counting)
    rows = model.outline.groups[-1]
    shown = [model.preview(i) for i in rows[50:90]]  # a screenful
    assert opened[0] == 1
    assert shown == [preview_text(s.value(i)) for i in rows[50:90]]


def test_a_search_hands_the_active_path_to_its_worker_without_copying_it(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """filter_async sorted the active-path set on the GUI thread for every search (~0.2 s on 900k
    entries); the outline only asks whether a record is on the path, so the set goes as it is."""
    from session_studio.ui import tree_model

    s = _big_enough(tmp_path, 30)
    model = tree_model.SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()))
    handed: list[Any] = []
    real = tree_model.filtered_outline

    def recording(
        session: Session, mode: str, query: str, active: Any, texts: Any, content: Any = None
    ) -> Any:
        handed.append(active)
        return real(session, mode, query, active, texts, content)

    monkeypatch.setattr(tree_model, "filtered_outline", recording)
    before = model.outline.active
    runner = TaskRunner()
    done: list[bool] = []
    model.filter_async(runner, "user-only", "", lambda: done.append(True))
    qtbot.waitUntil(lambda: bool(done) and not runner.busy, timeout=10000)
    assert handed == [before] and handed[0] is before
    assert model.outline.active == before  # still the whole path


def test_the_load_pauses_gc_only_while_its_worker_runs(qtbot: Any, tmp_path: Path) -> None:
    """The GC pause of a load belongs to its worker: when the worker is done the GC is back on, even
    if the window never takes the result (closed meanwhile: the whole test run had the GC off)."""
    import gc

    from session_studio.ui.document import SessionDocument

    path = write_session(tmp_path / "s.jsonl", [("user", 20), ("assistant", 20)] * 20)
    runner = TaskRunner()
    doc = SessionDocument(runner)
    assert gc.isenabled()
    doc.open(str(path))
    assert runner.pool("compute").waitForDone(20000)
    assert gc.isenabled()  # before the GUI thread has seen the result
    qtbot.waitUntil(lambda: doc.session is not None and not runner.busy, timeout=20000)
    assert gc.isenabled()


def _window_without_the_engine(
    qtbot: Any, tmp_path: Path, monkeypatch: Any, session: Path, stand_in: str
) -> tuple[Any, TaskRunner]:
    """A threaded window showing ``session`` whose engine module is ``stand_in``, which nothing has
    imported yet: it notes the thread that imports it (IMPORTED_ON) and takes 0.2 s."""
    from session_studio.ui.main_window import MainWindow
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.write_commands import WriteCommands

    (tmp_path / f"{stand_in}.py").write_text(
        "import threading, time\nIMPORTED_ON = threading.current_thread()\ntime.sleep(0.2)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(WriteCommands, "ENGINE_MODULE", stand_in)
    monkeypatch.delitem(sys.modules, stand_in, raising=False)
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))  # no late result after it
    w.open_path(str(session))
    qtbot.waitUntil(lambda: w.doc.state is not None and not runner.busy, timeout=10000)
    return w, runner


def test_branch_here_imports_the_engine_in_a_worker_the_first_time(
    qtbot: Any, tmp_path: Path, monkeypatch: Any, branching_session: Path
) -> None:
    """Within 1.5 s of a first load the summariser's stack is not preloaded yet, and "Branch here"
    imported the engine in its click's GUI step (~0.3 s). It now imports it in a worker and moves
    the working leaf once it is there; a second click meanwhile starts no second import."""
    import threading

    w, runner = _window_without_the_engine(
        qtbot, tmp_path, monkeypatch, branching_session, "slow_engine_stand_in"
    )
    side = side_branch_assistant(w)
    w.doc.select(side)
    started: list[Any] = []
    real_op = runner.op

    def counting_op(fn: Any, *args: Any, **kw: Any) -> Any:
        if args == ("slow_engine_stand_in",):
            started.append(fn)
        return real_op(fn, *args, **kw)

    monkeypatch.setattr(runner, "op", counting_op)
    w.a_branch.trigger()
    w.a_branch.trigger()
    assert w.doc.working_leaf is None  # not in the click: once the import is done
    qtbot.waitUntil(lambda: w.doc.working_leaf == side, timeout=10000)
    assert len(started) == 1
    assert sys.modules["slow_engine_stand_in"].IMPORTED_ON is not threading.main_thread()
    assert w.last_dialog is not None
    w.last_dialog.close()
    # the window's own background work (the re-plan, the summariser's preload) ends with the test
    qtbot.waitUntil(lambda: not runner.busy, timeout=15000)


def test_fork_imports_the_engine_in_a_worker_the_first_time(
    qtbot: Any, tmp_path: Path, monkeypatch: Any, branching_session: Path
) -> None:
    """The fork's suggested file name comes from the engine, which a window that only showed
    sessions has not imported: "Fork to new file" imports it in a worker (not in its click's GUI
    step, ~0.3 s), then asks where to write; a second click meanwhile starts no second import."""
    import threading

    from session_studio.ui.main_window import MainWindow

    asked: list[str] = []
    monkeypatch.setattr(MainWindow, "ask_save_path", lambda self, title, default: asked.append(default) or "")
    w, runner = _window_without_the_engine(
        qtbot, tmp_path, monkeypatch, branching_session, "slow_engine_stand_in2"
    )
    w.a_fork.trigger()
    w.a_fork.trigger()
    assert asked == []  # not in the click: once the import is done
    qtbot.waitUntil(lambda: len(asked) >= 1, timeout=10000)
    qtbot.wait(50)
    assert len(asked) == 1 and asked[0].endswith(".jsonl")  # the second click added nothing
    assert sys.modules["slow_engine_stand_in2"].IMPORTED_ON is not threading.main_thread()
    qtbot.waitUntil(lambda: not runner.busy, timeout=15000)


def test_background_work_waits_for_the_plans_preparation(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The search index, the real-token count and the module preloads start once the plan's
    preparation is done: started beside it, they took the GIL in turns with it (a 100k-entry path's
    2 s preparation took 5). Asked for from the handlers of a load (`loaded`, `plan_changed`: the
    preparation is not scheduled yet when they run) or during a re-plan, they wait for it."""
    import time

    from session_studio.core.preparation import CompactionPlan
    from session_studio.core.projected_plan import ProjectedCompactionPlan
    from session_studio.ui.document import SessionDocument

    for plan_type in (CompactionPlan, ProjectedCompactionPlan):  # either profile's preparation

        def slow(self: Any, *args: Any, real: Any = plan_type.prepare) -> Any:
            time.sleep(0.4)  # a long path's preparation
            return real(self, *args)

        monkeypatch.setattr(plan_type, "prepare", slow)
    path = write_session(tmp_path / "s.jsonl", [("user", 8000), ("assistant", 8000)] * 20)
    runner = TaskRunner()
    doc = SessionDocument(runner)
    seen: list[tuple[str, bool, bool]] = []

    def record(when: str) -> None:
        doc.after_preparation(lambda: seen.append((when, doc.preparing, doc.preparation is not None)))

    def first_plan(_st: Any) -> None:
        doc.plan_changed.disconnect(first_plan)
        record("plan")

    doc.loaded.connect(lambda _res: record("loaded"))
    doc.plan_changed.connect(first_plan)
    doc.open(str(path))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=20000)
    assert sorted(seen) == [("loaded", False, True), ("plan", False, True)]
    seen.clear()
    doc.set_params(keep=2000)
    record("re-plan")
    qtbot.wait(300)
    doc.set_params(keep=3000)  # a re-plan before the first preparation is done
    qtbot.waitUntil(lambda: bool(seen), timeout=20000)
    assert seen == [("re-plan", False, True)]
    assert doc.state.keep == 3000 and doc.preparation is not None
    idle: list[bool] = []
    doc.after_preparation(lambda: idle.append(doc.preparing))  # nothing being prepared: soon
    qtbot.waitUntil(lambda: bool(idle), timeout=5000)
    assert idle == [False]


def test_an_engine_a_job_imported_is_the_windows_too(window: Any, monkeypatch: Any) -> None:
    """A Generate or a write imports the engine in its own worker: the window then takes it as
    imported (no import of its own) and tells the document, whose recovery may wait for it."""
    import session_studio.engine  # noqa: F401  (a job's worker imported it)

    told: list[bool] = []
    monkeypatch.setattr(window.doc, "engine_imported", lambda: told.append(True))
    assert not window._engine_ready
    assert window.ensure_engine() is True
    assert window.ensure_engine() is True
    assert told == [True] and window._engine_import is None
