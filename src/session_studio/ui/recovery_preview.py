"""pi 1.6.0's overflow recovery beside the window's plan, planned without writing anything.

Where pi's check would retry for an overflow, pi 1.6.0 first omits the failed attempt with context
edits and then compacts (engine.context_edits.recovery_plan). Its planner walks the whole path, so it
is built in a worker, once per state of the session (the session read, its leaf, the failed answer);
each re-plan of the window (keepRecentTokens, reserve, window) then plans from it on the GUI thread,
as quickly as the window's own plan.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from session_studio.core.plan import PlanState

from .tasks import Operation, TaskRunner

if TYPE_CHECKING:
    from session_studio.core.plan import PathPlanner

log = logging.getLogger(__name__)

__all__ = ["RecoveryPreview"]

RecoveryKey = tuple[Any, ...]


class RecoveryPreview(QObject):
    #: PlanState | None: the recovery's plan, once planned in the worker
    changed = Signal(object)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        #: the recovery's plan for the last plan given to :meth:`update` (None: none, or not yet)
        self.plan: PlanState | None = None
        self._built: tuple[RecoveryKey, PathPlanner | None] | None = None
        self._building: tuple[RecoveryKey, Operation] | None = None
        self._state: PlanState | None = None

    def update(self, st: PlanState | None) -> None:
        """The recovery for the plan ``st``: planned at once from a planner built for this state of
        the session, else (None meanwhile) in a worker, and ``changed`` says it when done."""
        self._state = st
        key = _key(st)
        if key is None or st is None:
            self.plan = None
            return
        if self._built is not None and self._built[0] == key:
            self.plan = _plan_from(self._built[1], st)
            return
        self.plan = None
        if self._building is not None:
            if self._building[0] == key:
                return  # on its way
            self._building[1].cancel()
            self._building = None
        if "session_studio.engine" not in sys.modules:
            # its first import (pydantic, the engine: ~0.4 s of Python) held the GIL from a worker
            # for 130-190 ms at a time just as a session was shown; the window imports it in the
            # background a moment later (main_window.preload_summariser_modules) and then calls
            # engine_imported
            return

        def build() -> PathPlanner | None:
            from session_studio.core.errors import WriteError
            from session_studio.engine.context_edits import recovery_planner

            try:
                return recovery_planner(st)
            except WriteError:  # pi's own recovery throws on this answer: the overflow line says so
                return None

        op = self.runner.op(build)
        op.on_success(lambda planner: self._built_for(key, planner))
        op.on_failure(lambda exc, _tb: self._failed(key, exc))
        self._building = (key, op)
        op.start()

    def engine_imported(self, st: PlanState | None) -> None:
        """The engine is imported: plan the recovery that :meth:`update` left waiting for it."""
        if self.plan is None and _key(st) is not None:
            self.update(st)
            if self.plan is not None:
                self.changed.emit(self.plan)

    def forget(self) -> None:
        """The session is gone (closed, or read again): nothing of it is kept."""
        if self._building is not None:
            self._building[1].cancel()
        self._building = None
        self._built = None
        self._state = None
        self.plan = None

    def _built_for(self, key: RecoveryKey, planner: PathPlanner | None) -> None:
        if self._building is not None and self._building[0] == key:
            self._building = None
        self._built = (key, planner)
        st = self._state
        if st is None or _key(st) != key:
            return  # built for a state of the session that is gone
        self.plan = _plan_from(planner, st)
        self.changed.emit(self.plan)

    def _failed(self, key: RecoveryKey, exc: BaseException) -> None:
        if self._building is not None and self._building[0] == key:
            self._building = None
        log.warning("planning pi's overflow recovery failed: %s", exc)


def _plan_from(planner: PathPlanner | None, st: PlanState) -> PlanState | None:
    """The recovery's plan from its planner for the plan's settings (pi's own cut: no manual one)."""
    if planner is None:
        return None
    from session_studio.engine.context_edits import recovery_params  # imported: it built the planner

    return planner.plan(recovery_params(st.params))


def _key(st: PlanState | None) -> RecoveryKey | None:
    """What the recovery of the plan depends on (None: pi omits nothing, so there is none): the
    session read (a reload is another object; pi's appends add records), the leaf and the failed
    answer."""
    if st is None or not st.omits_failed_attempt or st.session is None or not st.path:
        return None
    answer = st.threshold_check.answer if st.threshold_check is not None else None
    return (id(st.session), len(st.session.records), st.path[-1], answer)
