"""SessionDocument: the one owner of the loaded session and the current plan.

Widgets listen to its signals (payloads are frozen dataclasses) and call its
methods; they never talk to each other. Slow work goes through the TaskRunner.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import math
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from session_studio.core import Session, SessionFileError, SessionLoadError, plan_compaction
from session_studio.core.context import SessionContext, build_session_context
from session_studio.core.cut_points import (
    CutPoint,
    cut_point_reason,
    find_turn_start_index,
    is_valid_cut_point,
)
from session_studio.core.fingerprint import open_regular
from session_studio.core.jsvalue import JsTypeError
from session_studio.core.preparation import CompactionPlan, Preparation
from session_studio.core.tokens import ContextTokens

from .pisettings import DEFAULT_WINDOW, context_window_for, pi_defaults
from .tasks import Operation, TaskRunner

__all__ = ["Loaded", "Partial", "PlanState", "Quirk", "SessionDocument", "load_head"]

log = logging.getLogger(__name__)

#: tokens assumed for a summary that was not generated yet (projected bar)
SUMMARY_PLACEHOLDER_TOKENS = 1500
#: files at least this big are shown from their head (HEAD_BYTES) while the whole file is indexed
PARTIAL_MIN_BYTES = 24 << 20
HEAD_BYTES = 4 << 20
HEAD_PAINT_GRACE_MS = 150
#: the GIL switch interval while a load runs: the GUI thread's model calls never wait long for the worker
LOAD_SWITCH_INTERVAL = 0.0001
_DEFAULT_SWITCH_INTERVAL = sys.getswitchinterval()
#: None: the core's default (reuse the index of big files). Reading the cache is one long C call
#: (orjson) that holds the GIL for ~200 ms on a 100 MB session, freezing the GUI thread meanwhile.
USE_INDEX_CACHE: bool | None = False


@dataclass(frozen=True)
class Quirk:
    code: str  # a spec section ("12.1.2") or an internal id ("leaf-compaction")
    title: str
    text: str

    @property
    def spec(self) -> str | None:
        """The spec section this quirk is documented in, if any (``"12.1.2"``)."""
        return self.code if self.code[:1].isdigit() else None


@dataclass(frozen=True)
class Loaded:
    """A session opened and planned in the background."""

    session: Session
    path_indices: list[int]
    plan: CompactionPlan | None
    context: SessionContext | None
    context_error: str | None
    window: int
    window_known: bool
    keep: int
    reserve: int
    settings_source: str
    outline: Any = None  # the default-filter tree outline, built in the worker


@dataclass(frozen=True)
class Partial:
    """The head of a big file, indexed on its own while the whole file loads (read-only preview).

    A separate Session over the first bytes of the file: the worker never touches it after
    handing it over, and it is dropped when the whole file is loaded.
    """

    session: Session
    path_indices: list[int]
    outline: Any
    head_bytes: int
    total_bytes: int
    #: set by the GUI thread once the head is on screen
    shown: threading.Event = field(default_factory=threading.Event, compare=False)

    @property
    def fraction(self) -> float:
        return self.head_bytes / self.total_bytes if self.total_bytes else 1.0


def load_head(path: str, limit: int = HEAD_BYTES) -> Partial | None:
    """Index the first ``limit`` bytes of ``path`` (up to a line end) as a Session, or None."""
    from .outline import build_outline

    try:
        total = os.path.getsize(path)
        with open_regular(path) as fh:  # never blocks on a FIFO
            data = fh.read(limit)
        end = data.rfind(b"\n")
        if end <= 0:
            return None
        data = data[: end + 1]
        head = Session.from_bytes(data, path=path)
        if head.reset or not head.records:
            return None
        leaf = head.leaf_index()
        path_i = head.path_indices(leaf) if leaf is not None else []
        outline = build_outline(head, "default", None, path_i)
    except Exception:  # the whole-file load reports real problems
        log.debug("head preview of %s failed", path, exc_info=True)
        return None
    return Partial(head, path_i, outline, len(data), total)


@dataclass(frozen=True)
class PlanState:
    keep: int
    reserve: int
    window: int
    window_known: bool
    path: list[int]
    plan: CompactionPlan | None
    cut: CutPoint | None
    manual: bool
    budget_pos: int | None  # path position where keepRecentTokens was reached
    tokens: ContextTokens | None
    item_tokens: list[tuple[int, str, float]]  # (record, kind, tokens) per context item
    after_tokens: list[tuple[int, str, float]]  # projected context after compaction
    nothing_to_compact: bool
    error: str | None
    quirks: list[Quirk] = field(default_factory=list)
    marks: dict[int, str] = field(default_factory=dict)  # record → cut mark

    @property
    def threshold(self) -> int:
        return self.window - self.reserve

    @property
    def context_tokens(self) -> float:
        t = self.tokens.tokens if self.tokens else 0
        return float(t) if isinstance(t, int | float) and not math.isnan(t) else 0.0

    @property
    def first_kept_record(self) -> int | None:
        if self.cut is None or self.cut.first_kept_index >= len(self.path):
            return None
        return self.path[self.cut.first_kept_index]

    @property
    def should_compact(self) -> bool:
        return self.context_tokens > self.threshold


def _num(t: Any) -> float:
    if isinstance(t, JsTypeError) or not isinstance(t, int | float) or isinstance(t, bool):
        return 0.0
    return 0.0 if math.isnan(t) else float(t)


def load_session(path: str, op: Operation | None = None) -> Loaded:
    """Open + index + plan (runs in the compute pool), reporting progress in ‰ of bytes."""
    if op is None:
        return prepare_loaded(Session.open(path))
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    if size >= PARTIAL_MIN_BYTES:
        head = load_head(path, HEAD_BYTES)
        if head is not None:
            op.report_interim(head)
            # the GUI thread lays the head out now: indexing the rest meanwhile would make every one
            # of its model calls wait for the GIL, so give it a moment (it sets the event when done)
            if not op.runner.synchronous:
                head.shown.wait(1.0)
    last = [-1]

    def progress(done: int, total: int) -> None:
        permille = done * 1000 // total if total > 0 else 0
        if permille != last[0]:
            last[0] = permille
            op.report(permille, 1000, "")

    session = Session.open(path, progress=progress, cancel=op.cancelled.is_set, use_cache=USE_INDEX_CACHE)
    op.report(1000, 1000, "Planning…")
    res = prepare_loaded(session)
    from .outline import build_outline

    return dataclasses.replace(res, outline=build_outline(session, "default", None, res.path_indices))


load_session.wants_op = True  # type: ignore[attr-defined]


def prepare_loaded(session: Session, leaf: int | None = None) -> Loaded:
    leaf_i = session.leaf_index() if leaf is None else leaf
    path = session.path_indices(leaf_i) if leaf_i is not None else []
    ctx: SessionContext | None = None
    err = None
    try:
        ctx = build_session_context(session, path=path) if path else None
    except JsTypeError as e:
        err = f"pi would throw building the context: {e}"
    plan = None
    if path:
        try:
            plan = plan_compaction(session, path)
        except JsTypeError as e:
            err = f"pi would throw planning: {e}"
    window, known = context_window_for(ctx.model if ctx else None)
    cwd = session.header.get("cwd") if session.header else None
    d = pi_defaults(cwd if isinstance(cwd, str) else None)
    return Loaded(
        session, path, plan, ctx, err, window, known, d.keep_recent_tokens, d.reserve_tokens, d.source
    )


class SessionDocument(QObject):
    loading = Signal(str)
    partial_loaded = Signal(object)  # Partial: the head of a big file, shown while the rest loads
    load_progress = Signal(int)  # ‰ of the file indexed
    loaded = Signal(object)  # Loaded
    load_failed = Signal(str, str)  # message, details
    closed = Signal()
    appended = Signal(object)  # tuple of new record indices
    plan_changed = Signal(object)  # PlanState
    selection_changed = Signal(int)  # record index (-1: none)
    preparation_ready = Signal(object)  # Preparation | None
    summary_changed = Signal(str)
    message = Signal(str)  # status-bar text

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.session: Session | None = None
        self.path: str | None = None
        self.loaded_state: Loaded | None = None
        self.state: PlanState | None = None
        self.selected = -1
        self.keep = 20000
        self.reserve = 16384
        self.window = DEFAULT_WINDOW
        self.window_known = False
        self.manual_cut: int | None = None  # path position
        self.summary_text = ""
        self.preparation: Preparation | None = None
        #: the summary generated for the current plan (engine CompactionOutcome), None until generated
        self.outcome: Any = None
        #: the app's working leaf (record) after "Branch here"; None follows the file's leaf
        self.working_leaf: int | None = None
        #: True while a write job runs: live refreshes wait (the engine re-indexes the session itself)
        self.writing = False
        self._keep_params = False
        #: the head of the file being loaded, shown read-only until the whole file is indexed
        self.partial: Partial | None = None
        self._partial_pick: Any = None  # entry id the user selected in the partial view
        self._load_op: Operation | None = None
        self._gc_was_enabled: bool | None = None
        self._prep_op: Operation | None = None
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_file_changed)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(150)
        self._refresh_timer.timeout.connect(self.refresh)
        self._prep_timer = QTimer(self)
        self._prep_timer.setSingleShot(True)
        self._prep_timer.setInterval(120)
        self._prep_timer.timeout.connect(self.request_preparation)

    # ------------------------------------------------------------------ loading
    def open(self, path: str, keep_params: bool = False) -> Operation:
        """Load ``path`` in the background; ``keep_params`` keeps keep/reserve/window (a reload)."""
        if self._load_op is not None:
            self._load_op.cancel()
        path = os.path.abspath(path)
        self._keep_params = keep_params
        self.loading.emit(path)
        parent = self.parent() if isinstance(self.parent(), QWidget) else None
        op = self.runner.op(load_session, path).with_progress(
            f"Opening {os.path.basename(path)}…",
            parent,  # type: ignore[arg-type]
        )
        op.on_success(lambda res, p=path: self._on_loaded(p, res)).on_failure(
            lambda e, tb, p=path: self._on_load_failed(p, e, tb)
        )
        op.interim.connect(lambda head, o=op: self._on_partial(o, head))
        op.progress.connect(lambda done, total, _t: self.load_progress.emit(done * 1000 // max(1, total)))
        self._load_op = op
        if not self.runner.synchronous:
            # The worker holds the GIL while it indexes: a short switch interval keeps the GUI thread's
            # waits short, and no cyclic GC while 100k records are created (a full collection over
            # them holds the GIL for hundreds of ms, whichever thread triggers it).
            sys.setswitchinterval(min(LOAD_SWITCH_INTERVAL, _DEFAULT_SWITCH_INTERVAL))
            if self._gc_was_enabled is None:
                self._gc_was_enabled = gc.isenabled()
                gc.disable()
        return op.start()

    def _load_ended(self) -> None:
        self._load_op = None
        sys.setswitchinterval(_DEFAULT_SWITCH_INTERVAL)
        if self._gc_was_enabled is not None:
            # the loaded index lives as long as the document: keep later collections from walking it
            gc.freeze()
            if self._gc_was_enabled:
                gc.enable()
            self._gc_was_enabled = None

    def _on_partial(self, op: Operation, head: Partial) -> None:
        if op is not self._load_op or op.cancelled.is_set():
            return
        op.hide_progress()  # the window shows a banner over the partial tree instead
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        # the previous session (if any) is gone: nothing may plan or write while the head is shown
        self.session = None
        self.loaded_state = None
        self.state = None
        self.outcome = None
        self.working_leaf = None
        self.manual_cut = None
        self.preparation = None
        self.partial = head
        self._partial_pick = None
        self.selected = -1
        self.partial_loaded.emit(head)
        # the worker goes on once the view has laid out and painted the head without competing for the GIL
        QTimer.singleShot(HEAD_PAINT_GRACE_MS, head.shown.set)

    def forget_partial_pick(self) -> None:
        """The current partial selection was not the user's: select the leaf when loaded."""
        self._partial_pick = None

    def cancel_load(self) -> None:
        """Stop loading; a partially shown file is closed."""
        op = self._load_op
        self._load_ended()
        if op is not None:
            op.cancel()
        if self.partial is not None:
            self._drop_partial()
            self.message.emit("Loading cancelled")

    def _drop_partial(self) -> None:
        self.partial = None
        self._partial_pick = None
        self.selected = -1
        self.close()

    def _on_load_failed(self, path: str, exc: BaseException, tb: str) -> None:
        self._load_ended()
        if self.partial is not None:
            self._drop_partial()
        if isinstance(exc, SessionFileError):
            self.load_failed.emit(
                f"Cannot open {path}", f"{exc}\n\nCheck that the file exists and is readable."
            )
        elif isinstance(exc, SessionLoadError):
            where = f" (line {exc.line})" if getattr(exc, "line", None) else ""
            self.load_failed.emit(
                f"pi cannot open this file{where}",
                f"{exc}\n\npi 0.80.2 would fail on this file too. Open a copy in an editor to repair it.",
            )
        else:
            self.load_failed.emit(f"Unexpected error opening {path}", tb)

    def _on_loaded(self, path: str, res: Loaded) -> None:
        self._load_ended()
        pick, self._partial_pick = self._partial_pick, None
        self.partial = None
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        self.path = path
        self.session = res.session
        self.loaded_state = res
        if not (self._keep_params and path == self.path):
            self.keep, self.reserve = res.keep, res.reserve
            self.window, self.window_known = res.window, res.window_known
        self._keep_params = False
        self.manual_cut = None
        self.summary_text = ""
        self.preparation = None
        self.outcome = None
        self.working_leaf = None
        self.selected = -1
        self._watcher.addPath(path)
        self.loaded.emit(res)
        self._replan()
        # a selection made in the partial view is kept (by entry id); else the leaf
        rec = res.session.get_index(pick) if pick is not None else None
        if rec is None:
            rec = res.session.leaf_index()
        self.select(rec if rec is not None else -1)

    def close(self) -> None:
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        self.session = None
        self.path = None
        self.loaded_state = None
        self.state = None
        self.outcome = None
        self.working_leaf = None
        self.closed.emit()

    # ------------------------------------------------------------------ live reload
    def _on_file_changed(self, _path: str) -> None:
        self._refresh_timer.start()

    def refresh(self) -> None:
        s = self.session
        if s is None:
            return
        if self.writing:
            self._refresh_timer.start()
            return
        if self.path and self.path not in self._watcher.files() and os.path.exists(self.path):
            self._watcher.addPath(self.path)
        try:
            new = s.refresh()
        except (SessionLoadError, SessionFileError) as e:
            # replaced, rewritten or shortened: never index it as if pi had appended
            self.message.emit(f"The file on disk is not the one shown ({e}); reloading it from scratch")
            keep_sel = self.selected
            op = self.open(self.path or s.path)
            _ = keep_sel, op
            return
        if not new:
            return
        was_leaf = (
            self.loaded_state.path_indices[-1]
            if self.loaded_state and self.loaded_state.path_indices
            else None
        )
        res = prepare_loaded(s, self.working_leaf)
        self.loaded_state = res
        self.outcome = None
        self.appended.emit(tuple(new))
        self._replan()
        self.message.emit(f"{len(new)} new entr{'y' if len(new) == 1 else 'ies'} appended by pi")
        if self.selected == was_leaf and res.path_indices:
            self.select(res.path_indices[-1])

    # ------------------------------------------------------------------ working leaf and writes
    def working_leaf_index(self) -> int | None:
        if self.working_leaf is not None:
            return self.working_leaf
        return self.session.leaf_index() if self.session is not None else None

    def set_working_leaf(self, record: int | None) -> None:
        """Plan from ``record`` (pi's /tree navigation in memory); None follows the file's leaf."""
        s = self.session
        if s is None:
            return
        self.working_leaf = None if record is None or record == s.leaf_index() else record
        self.loaded_state = prepare_loaded(s, self.working_leaf)
        self.manual_cut = None
        self.summary_text = ""
        self.summary_changed.emit("")
        self.appended.emit(())  # the tree re-derives the active path
        self._replan()

    def after_write(self, select_id: Any = None) -> None:
        """Entries were appended by a write job: index them here, on the GUI thread, and re-plan."""
        s = self.session
        self.writing = False
        if s is None:
            return
        try:
            s.refresh()  # the write job leaves indexing to us: the models read `s` on this thread
        except (SessionLoadError, SessionFileError) as e:
            self.message.emit(f"File rewritten on disk ({e}); reloading")
            self.reload()
            return
        notes, s.notes[:] = list(s.notes), []
        self.working_leaf = None
        self.manual_cut = None
        self.summary_text = ""
        self.outcome = None
        self.summary_changed.emit("")
        self.loaded_state = prepare_loaded(s)
        self.appended.emit(())
        self._replan()
        rec = s.get_index(select_id) if isinstance(select_id, str) else s.leaf_index()
        if rec is not None:
            self.select(rec)
        if notes:  # e.g. the entry landed after lines pi appended meanwhile: say where it is
            self.message.emit(" ".join(notes))
        self._refresh_timer.start()  # pick up anything pi appended meanwhile

    def reload(self) -> Operation | None:
        """Re-read the file from scratch keeping the planner parameters (e.g. after a stale write)."""
        self.writing = False
        return self.open(self.path, keep_params=True) if self.path else None

    # ------------------------------------------------------------------ planning
    def set_params(
        self, keep: int | None = None, reserve: int | None = None, window: int | None = None
    ) -> None:
        if keep is not None:
            self.keep = max(0, int(keep))
            self.manual_cut = None
        if reserve is not None:
            self.reserve = max(0, int(reserve))
        if window is not None:
            self.window = max(0, int(window))
        self._replan()

    def set_manual_cut(self, record: int) -> str | None:
        """Cut at ``record`` if it is a valid cut point of the plan; else return why not."""
        st = self.state
        if st is None or st.plan is None:
            return "no plan"
        try:
            pos = st.path.index(record)
        except ValueError:
            return "this entry is not on the active path"
        b = st.plan.boundary
        if pos < b.start:
            return "this entry is before the previous compaction's kept start: already summarised"
        rec = self.session.records[record] if self.session else None
        if rec is None or not _safe_valid(rec):
            return cut_point_reason(rec) if rec is not None else "unknown entry"
        self.manual_cut = pos
        self._replan()
        return None

    def clear_manual_cut(self) -> None:
        self.manual_cut = None
        self._replan()

    def set_outcome(self, outcome: Any) -> None:
        """The engine's summary for the current plan (the text box may still be edited)."""
        self.outcome = outcome
        self.set_summary(outcome.summary if outcome is not None else "")

    def set_summary(self, text: str) -> None:
        if text != self.summary_text:
            self.summary_text = text
            self.summary_changed.emit(text)
            self._replan(prepare=False)

    def _replan(self, prepare: bool = True) -> None:
        res = self.loaded_state
        if res is None:
            return
        self.state = compute_plan_state(
            res, self.keep, self.reserve, self.window, self.window_known, self.manual_cut, self.summary_text
        )
        self.plan_changed.emit(self.state)
        if prepare:
            self.preparation = None
            self.outcome = None
            self._prep_timer.start()

    def request_preparation(self) -> None:
        st = self.state
        if st is None or st.plan is None or st.cut is None:
            self.preparation_ready.emit(None)
            return
        if self._prep_op is not None:
            self._prep_op.cancel()
        plan, keep, cut = st.plan, st.keep, st.cut

        def work() -> Preparation | None:
            return plan.prepare(keep, cut)

        op = self.runner.op(work)
        op.on_success(self._on_prepared).on_failure(self._on_prepare_failed)
        self._prep_op = op
        op.start()

    def _on_prepare_failed(self, exc: BaseException, _tb: str) -> None:
        self._prep_op = None
        self.message.emit(f"Preparation failed: {exc}")
        self.preparation_ready.emit(None)

    @property
    def preparing(self) -> bool:
        """A preparation for the current plan is scheduled or running."""
        return self._prep_timer.isActive() or self._prep_op is not None

    def _on_prepared(self, prep: Preparation | None) -> None:
        self._prep_op = None
        self.preparation = prep
        self.preparation_ready.emit(prep)

    # ------------------------------------------------------------------ selection
    def select(self, record: int) -> None:
        if record != self.selected:
            self.selected = record
            p = self.partial
            if p is not None and self.session is None:
                self._partial_pick = (
                    p.session.records[record].id if 0 <= record < len(p.session.records) else None
                )
            self.selection_changed.emit(record)

    def cut_mark(self, record: int) -> str:
        return self.state.marks.get(record, "") if self.state else ""


def _safe_valid(rec: Any) -> bool:
    try:
        return is_valid_cut_point(rec)
    except JsTypeError:
        return False


def _item_tokens(session: Session, ctx: SessionContext | None) -> list[tuple[int, str, float]]:
    if ctx is None:
        return []
    from .theme import kind_of

    out = []
    for it, t in zip(ctx.items, ctx.message_tokens(), strict=True):
        rec = session.records[it.record]
        kind = "compactionSummary" if it.kind == "compactionSummary" else kind_of(rec.type, rec.role)
        out.append((it.record, kind, _num(t)))
    return out


def compute_plan_state(
    res: Loaded,
    keep: int,
    reserve: int,
    window: int,
    window_known: bool,
    manual: int | None,
    summary_text: str = "",
) -> PlanState:
    """The whole plan for the current parameters: instant (binary search + index facts)."""
    s, path, plan = res.session, res.path_indices, res.plan
    err = res.context_error
    tokens = None
    if res.context is not None:
        try:
            tokens = res.context.estimate_tokens()
        except JsTypeError as e:
            err = f"pi would throw estimating tokens: {e}"
    items = _item_tokens(s, res.context) if res.context is not None and err is None else []
    cut: CutPoint | None = None
    budget = None
    marks: dict[int, str] = {}
    quirks: list[Quirk] = []
    nothing = True
    after: list[tuple[int, str, float]] = []
    if plan is not None and err is None:
        pl = plan.planner
        b = plan.boundary
        recs = pl.path
        try:
            budget = pl.budget_index(keep)
            if manual is not None:
                r = recs[manual]
                is_user = r.type == "message" and r.role == "user"
                ts = -1 if is_user else find_turn_start_index(recs, manual, b.start)
                cut = CutPoint(manual, ts, (not is_user) and ts != -1)
            else:
                cut = pl.cut(keep)
        except JsTypeError as e:
            err = f"pi would throw finding the cut point: {e}"
        cps = set(pl.cut_points)
        for pos in range(b.start, b.end):
            marks[path[pos]] = "valid" if pos in cps else "invalid"
        for pos in range(0, b.start):
            marks[path[pos]] = "summarised"
        if cut is not None:
            fk = cut.first_kept_index
            if cut.is_split_turn and cut.turn_start_index >= 0:
                for pos in range(cut.turn_start_index, min(fk, len(path))):
                    marks[path[pos]] = "prefix"
                marks[path[cut.turn_start_index]] = "turn_start"
            if fk < len(path):
                marks[path[fk]] = "cut"
            nothing, quirks = _analyse(s, path, plan, cut, budget, keep, window)
            if not nothing and fk < len(path):
                summ = math.ceil(len(summary_text) / 4) if summary_text else SUMMARY_PLACEHOLDER_TOKENS
                after.append((-1, "compactionSummary", float(summ)))
                kept = set(path[fk:])
                after.extend(t for t in items if t[0] in kept and t[1] != "compactionSummary")
    if window <= 0:
        quirks.append(
            Quirk(
                "12.1.18",
                "Unknown context window (0)",
                "With contextWindow = 0, shouldCompact is true for any token count.",
            )
        )
    return PlanState(
        keep,
        reserve,
        window,
        window_known,
        path,
        plan,
        cut,
        manual is not None,
        budget,
        tokens,
        items,
        after,
        nothing,
        err,
        quirks,
        marks,
    )


def _analyse(
    s: Session,
    path: list[int],
    plan: CompactionPlan,
    cut: CutPoint,
    budget: int | None,
    keep: int,
    window: int,
) -> tuple[bool, list[Quirk]]:
    """Cheap 'nothing to compact' check (same rules as prepare) and pi 0.80.2 quirk flags."""
    recs = s.records
    b = plan.boundary
    q: list[Quirk] = []
    produces = ("message", "custom_message", "branch_summary")
    fk = cut.first_kept_index
    if path and recs[path[-1]].type == "compaction":
        return True, [
            Quirk(
                "leaf-compaction", "The leaf is a compaction", "pi does not compact right after a compaction."
            )
        ]
    if fk >= len(path):
        return True, q
    hist_end = cut.turn_start_index if cut.is_split_turn else fk
    n_hist = sum(1 for k in range(b.start, hist_end) if recs[path[k]].type in produces)
    n_pre = (
        sum(1 for k in range(cut.turn_start_index, fk) if recs[path[k]].type in produces)
        if cut.is_split_turn
        else 0
    )
    nothing = n_hist == 0 and n_pre == 0
    pl = plan.planner
    if (
        nothing
        and pl.cut_points
        and fk == pl.cut_points[0]
        and budget is not None
        and budget > pl.cut_points[-1]
    ):
        big = recs[path[budget]]
        q.append(
            Quirk(
                "12.1.2",
                "Nothing to compact: oversized trailing entry (Example D)",
                f"The newest {'tool result' if big.role == 'toolResult' else 'entries'} alone reach keepRecentTokens "
                f"({_num(big.tokens):,.0f} tokens at path #{budget}), after the last valid cut point. pi then falls back "
                "to the first cut point, so there is nothing before it to summarise and compaction does nothing.",
            )
        )
    first = recs[path[fk]]
    if (
        cut.is_split_turn
        and first.type != "message"
        and first.type not in ("branch_summary", "custom_message")
    ):
        q.append(
            Quirk(
                "12.1.1",
                "Metadata-before-user split (Example C)",
                f"The cut moved back onto a {first.type} entry before a user message, so pi treats it as a split turn: "
                "the whole previous turn becomes the 'turn prefix' and is summarised with the turn-prefix prompt.",
            )
        )
    if cut.is_split_turn and cut.turn_start_index == fk:
        q.append(
            Quirk(
                "12.1.5",
                "Split turn with an empty prefix (Example G)",
                "isSplitTurn is true although the turn prefix is empty (cut at a bash execution, branch summary or "
                "custom message). The summary is unaffected; extensions see isSplitTurn = true.",
            )
        )
    if cut.is_split_turn and n_hist == 0 and n_pre > 0 and b.prev_compaction >= 0:
        q.append(
            Quirk(
                "12.1.4",
                "Previous summary lost",
                "The history part of this split turn is empty, so pi sends 'No prior history.' instead of the previous "
                "compaction summary.",
            )
        )
    ignored = [
        path[k] for k in range(fk, len(path)) if recs[path[k]].type in ("custom_message", "branch_summary")
    ]
    if ignored:
        q.append(
            Quirk(
                "12.1.3",
                "Sizes ignored in the kept tail",
                f"{len(ignored)} custom_message/branch_summary entr{'y is' if len(ignored) == 1 else 'ies are'} kept "
                "but not counted toward keepRecentTokens, although the LLM receives them.",
            )
        )
    return nothing, q
