"""pi 1.6.0's overflow recovery beside the window's plan, planned without writing anything.

Where pi's check would retry for an overflow, pi 1.6.0 first omits the failed attempt with context
edits and then compacts (engine.context_edits.recovery_plan). That plan walks the whole path of the
session with the edits appended in memory (Session.with_virtual_entries), so it is made in a worker,
and the window keeps only what is said of it (core.explain.RecoveryCut), not the planner and its
virtual session. The last answer is kept per state of the session and settings: a re-plan that
changes neither (a summary typed, a selection) asks for nothing.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from PySide6.QtCore import QObject, Signal

from session_studio.core.explain import RecoveryCut, planned_recovery
from session_studio.core.plan import PlanState

from .tasks import Operation, TaskRunner

log = logging.getLogger(__name__)

__all__ = ["RecoveryPreview"]

RecoveryKey = tuple[Any, ...]


class RecoveryPreview(QObject):
    #: RecoveryCut | None: what the recovery does, once planned in the worker
    changed = Signal(object)
    #: a recovery waits for the engine to be imported (then engine_imported)
    engine_wanted = Signal()

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        #: what the recovery for the last plan given to :meth:`update` does (None: none, or not yet)
        self.cut: RecoveryCut | None = None
        self._done: tuple[RecoveryKey, RecoveryCut | None] | None = None
        self._planning: tuple[RecoveryKey, Operation] | None = None
        self._state: PlanState | None = None

    def update(self, st: PlanState | None) -> None:
        """The recovery for the plan ``st``: at once where it was planned for this state of the
        session and these settings, else (None meanwhile) in a worker, and ``changed`` says it."""
        self._state = st
        key = _key(st)
        if key is None or st is None:
            self.cut = None
            return
        if self._done is not None and self._done[0] == key:
            self.cut = self._done[1]
            return
        self.cut = None
        if self._planning is not None:
            if self._planning[0] == key:
                return  # on its way
            self._planning[1].cancel()
            self._planning = None
        if "session_studio.engine" not in sys.modules:
            # its first import (pydantic, the engine: ~0.4 s of Python) held the GIL from a worker
            # for 130-190 ms at a time just as a session was shown; the window imports it in the
            # background a moment later (main_window.PRELOAD_AFTER_MS) and then calls
            # engine_imported
            self.engine_wanted.emit()
            return

        def plan() -> RecoveryCut | None:
            from session_studio.engine.context_edits import recovery_plan

            return planned_recovery(st, recovery_plan)

        op = self.runner.op(plan)
        op.on_success(lambda cut: self._planned(key, cut))
        op.on_failure(lambda exc, _tb: self._failed(key, exc))
        self._planning = (key, op)
        op.start()

    def engine_imported(self, st: PlanState | None) -> None:
        """The engine is imported: plan the recovery that :meth:`update` left waiting for it."""
        if self.cut is None and _key(st) is not None:
            self.update(st)
            if self.cut is not None:
                self.changed.emit(self.cut)

    def forget(self) -> None:
        """The session is gone (closed, or read again): nothing of it is kept."""
        if self._planning is not None:
            self._planning[1].cancel()
        self._planning = None
        self._done = None
        self._state = None
        self.cut = None

    def _planned(self, key: RecoveryKey, cut: RecoveryCut | None) -> None:
        if self._planning is None or self._planning[0] != key:
            return  # forgotten (the session is gone) or overtaken by other settings
        self._planning = None
        self._done = (key, cut)
        if _key(self._state) != key:
            return  # planned for a state of the session, or settings, that are gone
        self.cut = cut
        self.changed.emit(cut)

    def _failed(self, key: RecoveryKey, exc: BaseException) -> None:
        if self._planning is not None and self._planning[0] == key:
            self._planning = None
        log.warning("planning pi's overflow recovery failed: %s", exc)


def _key(st: PlanState | None) -> RecoveryKey | None:
    """What the recovery of the plan depends on (None: pi omits nothing, so there is none): the
    session read (a reload is another object; pi's appends add records), the leaf, the failed
    answer and the settings pi plans with (not a cut chosen here: ``PlanParams.automatic``)."""
    if st is None or not st.omits_failed_attempt or st.session is None or not st.path:
        return None
    answer = st.threshold_check.answer if st.threshold_check is not None else None
    return (id(st.session), len(st.session.records), st.path[-1], answer, st.params.automatic())
