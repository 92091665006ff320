"""One task runner for slow work (superqt worker shape, Anki's operation API).

``runner.op(fn, *args).on_success(cb).on_failure(cb).with_progress("Loading…").start()``
runs ``fn`` on one of three pools (compute, network, write: the write pool has a
single thread so writes to a session file never overlap). Callbacks run on the GUI
thread. Cancellation is cooperative: ``op.cancel()`` sets a token the worker may
check, and a cancelled operation never calls its callbacks.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot
from PySide6.QtWidgets import QProgressDialog, QWidget

from session_studio.core.gc_pause import gc_paused, hold_gc_pause, release_gc_pause

__all__ = ["AFTER_GUI_STEP_MS", "Operation", "TaskRunner", "hold_gc_pause", "paused_gc", "release_gc_pause"]

log = logging.getLogger(__name__)

POOLS = ("compute", "network", "write")

#: the GIL switch interval while background work runs: a worker running Python hands the GIL to the
#: GUI thread after this long, so each of the GUI thread's calls into Python (a model's data(), a
#: paint) waits at most this much instead of the default 5 ms (hundreds of such calls make a paint)
BUSY_SWITCH_INTERVAL = 0.0001

#: ``start(after_ms=AFTER_GUI_STEP_MS)``: long enough for the event loop to lay out and paint what the
#: GUI-thread step that set the work off changed (a session loaded: ~0.1 s of the GUI thread's Python on
#: 100k entries), which workers started at once made several times slower by taking the GIL in turns
AFTER_GUI_STEP_MS = 150
#: how long closing the window waits for cancelled workers to stop (TaskRunner.shutdown)
SHUTDOWN_WAIT_MS = 3000


class _Job(QRunnable):
    def __init__(self, op: Operation) -> None:
        super().__init__()
        self.op: Operation | None = op
        self.setAutoDelete(True)

    def run(self) -> None:
        # The worker must never hold the operation's last reference: an Operation is a QObject of
        # the GUI thread (its timer, its queued signals), and one freed here, once the GUI thread
        # had handled its result and let it go, was destroyed on this pool thread (a segfault in
        # libshiboken on a "Thread (pooled)"). The runner keeps it (TaskRunner._alive) until this
        # thread has dropped every reference and said so; the GUI thread lets it go then.
        op, self.op = self.op, None
        assert op is not None
        runner, key = op.runner, id(op)
        try:
            op._execute()
        finally:
            del op
            with contextlib.suppress(RuntimeError):  # the runner is gone (the process is ending)
                runner.worker_done.emit(key)


class Operation(QObject):
    """One unit of background work with GUI-thread callbacks (a QObject living on the GUI thread)."""

    succeeded = Signal(object)
    failed = Signal(object, str)
    progress = Signal(int, int, str)
    #: an intermediate result (e.g. the head of a big file), delivered on the GUI thread
    interim = Signal(object)

    def __init__(self, runner: TaskRunner, fn: Callable[..., Any], args: tuple[Any, ...], pool: str) -> None:
        super().__init__()
        self.runner = runner
        self.fn = fn
        self.args = args
        self.pool = pool
        self.cancelled = threading.Event()
        self.done = False
        self._started = False
        self._success: Callable[[Any], None] | None = None
        self._failure: Callable[[BaseException, str], None] | None = None
        self._progress_label: str | None = None
        self._progress_parent: QWidget | None = None
        self._dialog: QProgressDialog | None = None
        self._timer: QTimer | None = None
        self._last_progress: tuple[int, int, str] | None = None
        self._cancellable = True
        self.progress.connect(self._on_progress)
        self.succeeded.connect(self._on_succeeded)
        self.failed.connect(self._on_failed)

    def on_success(self, cb: Callable[[Any], None]) -> Operation:
        self._success = cb
        return self

    def on_failure(self, cb: Callable[[BaseException, str], None]) -> Operation:
        self._failure = cb
        return self

    def with_progress(
        self, label: str, parent: QWidget | None = None, *, cancellable: bool = True
    ) -> Operation:
        """A progress dialog after half a second. ``cancellable`` False: it has no Cancel, for work
        that cannot be abandoned halfway (a write: it completes, and what it did must be reported;
        dropping its callbacks left the window believing it was still writing)."""
        self._progress_label = label
        self._progress_parent = parent
        self._cancellable = cancellable
        return self

    def cancel(self) -> None:
        """Cooperative: the worker may still run, but callbacks are dropped and busy indicators end now."""
        self.cancelled.set()
        self._close_progress()
        self.runner._untrack(self)
        if self._started and not self.done:
            # held until its worker's last signal reaches the GUI thread: dropped at once, its Python
            # side could go while Qt still had a call queued for it (a segfault in PySide's
            # qt_metacall on a null object when a re-plan cancelled a running preparation)
            self.runner._finishing.add(self)

    def report(self, done: int, total: int, text: str = "") -> None:
        """Called by the worker (thread-safe)."""
        self.progress.emit(done, total, text)

    def report_interim(self, result: Any) -> None:
        """Called by the worker (thread-safe): hand a finished intermediate object to the GUI thread.

        The worker must not touch ``result`` afterwards (the GUI thread owns it).
        """
        if not self.cancelled.is_set():
            self.interim.emit(result)

    def hide_progress(self) -> None:
        """The caller shows progress itself from now on: no dialog (closes one already shown)."""
        self._progress_label = None
        self._close_progress()

    def start(self, after_ms: int = 0) -> Operation:
        """Run the work now, or (``after_ms``) in a worker that begins only after that long: the
        operation counts as running meanwhile, and a cancel before then means it never runs."""
        self._started = True
        self.runner._track(self)
        if self._progress_label is not None and not self.runner.synchronous:
            self._timer = QTimer()
            self._timer.setSingleShot(True)
            self._timer.timeout.connect(self._show_progress)
            self._timer.start(500)
        if self.runner.synchronous:
            self._execute()
        elif after_ms > 0:
            QTimer.singleShot(after_ms, self, self._launch)
        else:
            self._launch()
        return self

    def _launch(self) -> None:
        self.runner._alive[id(self)] = self  # until its worker is done with it (see _Job.run)
        self.runner.pool(self.pool).start(_Job(self))

    # ---------------------------------------------------------------- worker side
    def _execute(self) -> None:
        if self.cancelled.is_set():
            # still report back, so the GUI side untracks the operation (busy indicators always end)
            self.failed.emit(RuntimeError("cancelled"), "")
            return
        try:
            kwargs = {"op": self} if getattr(self.fn, "wants_op", False) else {}
            result = self.fn(*self.args, **kwargs)
        except BaseException as e:
            self.failed.emit(e, traceback.format_exc())
        else:
            self.succeeded.emit(result)

    # ---------------------------------------------------------------- GUI side
    def _show_progress(self) -> None:
        if self.done or self.cancelled.is_set() or self._progress_label is None:
            return
        d = QProgressDialog(self._progress_label or "", "Cancel", 0, 0, self._progress_parent)
        d.setWindowTitle("Session Studio")
        d.setMinimumDuration(0)
        d.setAutoClose(False)
        d.setAutoReset(False)
        if self._cancellable:
            d.canceled.connect(self.cancel)
        else:
            d.setCancelButton(None)  # (Escape only hides it: the work goes on and reports back)
        self._dialog = d
        if self._last_progress is not None:
            self._on_progress(*self._last_progress)
        d.show()

    def _on_progress(self, done: int, total: int, text: str) -> None:
        self._last_progress = (done, total, text)
        d = self._dialog
        if d is None:
            return
        try:
            d.setMaximum(total)
            d.setValue(done)
            if text:
                d.setLabelText(text)
        except RuntimeError:  # the parent window was destroyed with the dialog
            self._dialog = None

    def _close_progress(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self._dialog is not None:
            d, self._dialog = self._dialog, None
            try:
                d.reset()
                d.deleteLater()
            except RuntimeError:  # already deleted with its parent
                pass

    @Slot(object)
    def _on_succeeded(self, result: Any) -> None:
        self.done = True
        self._close_progress()
        self.runner._untrack(self)
        self.runner._finishing.discard(self)
        if not self.cancelled.is_set() and self._success is not None:
            self._success(result)

    @Slot(object, str)
    def _on_failed(self, exc: BaseException, tb: str) -> None:
        self.done = True
        self._close_progress()
        self.runner._untrack(self)
        self.runner._finishing.discard(self)
        if self.cancelled.is_set():
            return
        if self._failure is not None:
            self._failure(exc, tb)
        else:
            log.error("background task failed:\n%s", tb)
            self.runner.unhandled.emit(exc, tb)


class TaskRunner(QObject):
    """Owns the pools. ``synchronous=True`` runs everything inline (tests)."""

    unhandled = Signal(object, str)
    busy_changed = Signal(bool)
    #: a worker dropped its references to the operation (id): the GUI thread may let it go
    worker_done = Signal(object)

    def __init__(self, parent: QObject | None = None, *, synchronous: bool = False) -> None:
        super().__init__(parent)
        self.synchronous = synchronous
        self._pools: dict[str, QThreadPool] = {}
        self._running: set[Operation] = set()
        #: cancelled operations whose worker has not reported back yet (see Operation.cancel)
        self._finishing: set[Operation] = set()
        #: every launched operation until its worker thread holds no reference to it (_Job.run)
        self._alive: dict[int, Operation] = {}
        self.worker_done.connect(self._let_go)
        for name in POOLS:
            pool = QThreadPool(self)
            # network: each summary candidate (Compare summaries) streams in its own worker, mostly waiting
            pool.setMaxThreadCount(1 if name == "write" else (6 if name == "network" else 4))
            self._pools[name] = pool

    @Slot(object)
    def _let_go(self, key: int) -> None:
        self._alive.pop(key, None)  # the last reference may go here: on the GUI thread

    def pool(self, name: str) -> QThreadPool:
        return self._pools[name]

    def op(self, fn: Callable[..., Any], *args: Any, pool: str = "compute") -> Operation:
        if pool not in self._pools:
            raise ValueError(f"unknown pool {pool!r}")
        return Operation(self, fn, args, pool)

    def call_later(self, fn: Callable[[], None], after_ms: int = AFTER_GUI_STEP_MS) -> Operation:
        """Call ``fn`` on the GUI thread ``after_ms`` from now (at once when synchronous); the runner
        counts as busy until then (``fn`` starts background work: it is on its way)."""
        return self.op(_nothing).on_success(lambda _r: fn()).start(after_ms=after_ms)

    @property
    def busy(self) -> bool:
        return bool(self._running)

    def _track(self, op: Operation) -> None:
        was = self.busy
        self._running.add(op)
        if not was:
            if not self.synchronous:
                _hold_short_switch_interval()
            self.busy_changed.emit(True)

    def _untrack(self, op: Operation) -> None:
        if op not in self._running:
            return
        self._running.discard(op)
        if not self._running:
            if not self.synchronous:
                _release_short_switch_interval()
            self.busy_changed.emit(False)

    def shutdown(self, msecs: int = SHUTDOWN_WAIT_MS) -> bool:
        """The window is going away: cancel the running computations (a cooperative worker stops at
        its next step: a load, the search text's worker process) and wait up to ``msecs`` for every
        pool, so that no worker runs Python while the interpreter shuts down (Qt's pools wait for
        their threads when they are deleted: a search text still being built kept the process alive
        for 30 s after its window closed). A write is never cancelled (it finishes and is verified)
        and requests to an LLM end through their own cancel tokens, their callbacks kept. True if
        every pool is idle."""
        if self.synchronous:
            return True
        for op in list(self._running):
            if op.pool == "compute":
                op.cancel()
        return self.wait_idle(msecs)

    def wait_idle(self, msecs: int = 30000) -> bool:
        """Block until every pool is idle, ``msecs`` at most in all (screenshots, shutdown)."""
        deadline = time.monotonic() + msecs / 1000
        ok = True
        for pool in self._pools.values():
            left = max(0, int((deadline - time.monotonic()) * 1000))
            ok = pool.waitForDone(left) and ok
        return ok


def _nothing() -> None:
    """The worker side of :meth:`TaskRunner.call_later`."""


_switch_lock = threading.Lock()
_switch_holders = 0
_switch_default = sys.getswitchinterval()


def _hold_short_switch_interval() -> None:
    """Background work starts (any runner): short GIL time slices until the last runner is idle."""
    global _switch_holders, _switch_default
    with _switch_lock:
        if _switch_holders == 0:
            _switch_default = sys.getswitchinterval()
            sys.setswitchinterval(min(BUSY_SWITCH_INTERVAL, _switch_default))
        _switch_holders += 1


def _release_short_switch_interval() -> None:
    global _switch_holders
    with _switch_lock:
        _switch_holders = max(0, _switch_holders - 1)
        if _switch_holders == 0:
            sys.setswitchinterval(_switch_default)


#: the core's counted pause of the cyclic GC, under the names the window's code uses
paused_gc = gc_paused
