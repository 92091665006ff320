"""SessionDocument: the one owner of the loaded session and the current plan.

Widgets listen to its signals (payloads are frozen dataclasses) and call its
methods; they never talk to each other. Slow work goes through the TaskRunner.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from session_studio.core import Session, SessionFileError, SessionLoadError
from session_studio.core.context import SessionContext
from session_studio.core.explain import RecoveryCut
from session_studio.core.fingerprint import open_regular
from session_studio.core.plan import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    SUMMARY_PLACEHOLDER_TOKENS,
    AnyPlan,
    PathPlanner,
    PlanParams,
    PlanState,
    Quirk,
    with_summary_tokens,
)
from session_studio.core.preparation import Preparation
from session_studio.core.profile import PIN_SETTINGS, ProfileChoice, detect_profile
from session_studio.core.projection import Projection
from session_studio.core.session import indexed_in_children
from session_studio.core.summary_sections import summary_tokens

from .errors import explain_failure
from .outline import entry_visible
from .recovery_preview import RecoveryPreview
from .tasks import Operation, TaskRunner, paused_gc
from .token_bar import BarLayout

if TYPE_CHECKING:  # the engine (and the LLM modules it names) loads after the window is shown
    from session_studio.engine.compaction import CompactionDraft

__all__ = [
    "Loaded",
    "Partial",
    "PlanSignature",
    "PlanState",
    "Quirk",
    "SessionDocument",
    "compute_plan_state",
    "load_head",
]

log = logging.getLogger(__name__)

#: files at least this big are shown from their head (HEAD_BYTES) while the whole file is indexed
PARTIAL_MIN_BYTES = 24 << 20
HEAD_BYTES = 4 << 20
HEAD_PAINT_GRACE_MS = 150
#: a re-plan's preparation waits this long for the next parameter change (a slider being dragged)
PREP_DEBOUNCE_MS = 120
#: how often a deleted or moved session file is looked for again
MISSING_POLL_MS = 2000
#: None: the core's default (reuse the index of big files). The cache is binary columns read in
#: 4 MB chunks (a ~1 ms call each, progress and cancel between them), so the GUI thread keeps the GIL
#: while a reopen reads it; False would index every big file from scratch.
USE_INDEX_CACHE: bool | None = None


@dataclass(frozen=True)
class Loaded:
    """A session opened and planned in the background."""

    session: Session
    planner: PathPlanner  # the parameter-independent part of every plan of this path
    window: int
    window_known: bool
    keep: int
    reserve: int
    settings_source: str
    outline: Any = None  # the default-filter tree outline, built in the worker
    #: the pi profile the file is read as, and why (detect_profile, as the CLI does)
    profile: ProfileChoice | None = None
    #: whether a record is a pi 1.6.0 context edit (None: not looked at; a scan of every record)
    context_edits: bool | None = None
    #: ``provider/model`` pi's settings (the session's project's included) name as the default model
    pi_default_model: str | None = None
    #: pi's settings' ``compaction.enabled``: False, pi compacts only on /compact (PlanParams)
    auto_compaction: bool = True
    #: the session model's output limit from pi's registry, 0 if unknown (PlanParams)
    model_max_tokens: int = 0

    @property
    def path_indices(self) -> list[int]:
        return self.planner.path

    @property
    def plan(self) -> AnyPlan | None:
        return self.planner.plan_

    @property
    def context(self) -> SessionContext | Projection | None:
        return self.planner.context

    @property
    def context_error(self) -> str | None:
        return self.planner.error


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
class PlanSignature:
    """What a generated summary was made for: the leaf, the first kept entry and the file's entries.

    keepRecentTokens is shown but not compared: moving it without moving the cut keeps the same plan.
    """

    leaf_id: Any
    first_kept_id: Any
    first_kept_pos: int
    entries: int  # records in the file when planned: pi appending makes another plan
    keep: int = field(compare=False)

    def describe(self) -> str:
        return f"cut at path #{self.first_kept_pos} ({self.first_kept_id}) / keep {self.keep:,}"

    def changes_since(self, made: PlanSignature) -> list[str]:
        """What differs from the plan ``made`` (a summary's), in words: the file's entries, the leaf,
        the cut; empty when only the keepRecentTokens setting differs."""
        changes = []
        grown = self.entries - made.entries
        if grown > 0:
            changes.append(f"pi appended {grown:,} entr{'y' if grown == 1 else 'ies'}")
        elif grown < 0:
            changes.append(f"the file has {-grown:,} entr{'y' if grown == -1 else 'ies'} fewer")
        if self.leaf_id != made.leaf_id:
            changes.append(f"the leaf moved to {self.leaf_id}")
        if (self.first_kept_id, self.first_kept_pos) != (made.first_kept_id, made.first_kept_pos):
            changes.append(f"the cut moved to path #{self.first_kept_pos} ({self.first_kept_id})")
        return changes


def stale_summary_text(made: PlanSignature | None, now: PlanSignature | None, reloaded: bool) -> str:
    """Why a summary made for ``made`` does not fit the plan ``now`` (None: nothing to compact),
    one sentence for the preview's note and the commit question alike. ``reloaded``: the file was
    read again since (the summary's entries are those of the file as it was then)."""
    if made is None:
        return "This summary was made for an earlier state of the file."
    head = f"This summary was made for {made.describe()}"
    if now is None:
        return f"{head}; now there is nothing to compact."
    changes = now.changes_since(made) or ["the file was read again" if reloaded else "the plan changed"]
    said = changes[0] if len(changes) == 1 else ", ".join(changes[:-1]) + " and " + changes[-1]
    return f"{head}; since then {said}."


def load_session(path: str, pin: str = "auto", plain: str = "auto", op: Operation | None = None) -> Loaded:
    """Open + index + plan (runs in the compute pool), reporting progress in ‰ of bytes.

    `pin` / `plain`: the profile setting (see :func:`choose_profile`)."""
    if op is None:
        return prepare_loaded(Session.open(path), pin=pin, plain=plain)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0

    def show_head() -> None:
        """Read the file's head and show it while the rest is indexed (Session.open calls this once,
        right after it started the scan processes: reading the head overlaps with their start)."""
        head = load_head(path, HEAD_BYTES)
        if head is not None:
            op.report_interim(head)
            # the GUI thread lays the head out now: indexing the rest in this process meanwhile would
            # make every one of its model calls wait for the GIL, so give it a moment (it sets the
            # event when done). Scan processes do not take the GIL: they go on at once (they run
            # behind the GUI thread: priority.run_behind); waiting cost 150-360 ms of the open.
            if not op.runner.synchronous and not indexed_in_children(size):
                head.shown.wait(1.0)

    last = [-1]

    def progress(done: int, total: int) -> None:
        permille = done * 1000 // total if total > 0 else 0
        if permille != last[0]:
            last[0] = permille
            op.report(permille, 1000, "")

    # No cyclic GC while 100k records are created (a full collection over them holds the GIL for
    # hundreds of ms, whichever thread triggers it); held by the worker, so a load that is cancelled
    # or whose window goes away never leaves the GC off. The runner keeps the GIL's time slices
    # short meanwhile (tasks.BUSY_SWITCH_INTERVAL).
    with paused_gc():
        session = Session.open(
            path,
            progress=progress,
            cancel=op.cancelled.is_set,
            use_cache=USE_INDEX_CACHE,
            others_need_the_gil=not op.runner.synchronous,  # the GUI thread's paints
            before_indexing=show_head if size >= PARTIAL_MIN_BYTES else None,
        )
        op.report(1000, 1000, "Planning…")
        res = prepare_loaded(session, pin=pin, plain=plain)
        from .outline import build_outline
        from .pi16 import has_context_edits

        return dataclasses.replace(
            res,
            outline=build_outline(session, "default", None, res.path_indices),
            context_edits=has_context_edits(session),
        )


load_session.wants_op = True  # type: ignore[attr-defined]  # a marker the TaskRunner reads off the function


def choose_profile(session: Session, pin: str = "auto", plain: str = "auto") -> ProfileChoice:
    """The profile for a file, as the CLI chooses it: `pin` (the planner's switch for this file)
    pins a version; under `auto` a 1.6.0 marker decides, else `plain` (the user's setting)."""
    return detect_profile(
        session,
        pin if pin in PIN_SETTINGS else "auto",
        plain if plain != "auto" else None,
        pinned_by="chosen for this file in the pi version box",
    )


def prepare_loaded(
    session: Session, leaf: int | None = None, *, pin: str = "auto", plain: str = "auto"
) -> Loaded:
    """The parameter-independent plan of the path to ``leaf`` under the file's pi profile, and pi's
    settings for it as that pi reads them (off the GUI thread)."""
    from session_studio.llm.pi_settings import pi_planning_defaults

    choice = choose_profile(session, pin, plain)
    planner = PathPlanner(session, leaf, profile=choice.profile)
    cwd = session.header.get("cwd") if session.header else None
    d = pi_planning_defaults(cwd if isinstance(cwd, str) else None, planner.model, profile=choice.profile)
    loaded = Loaded(
        session,
        planner,
        d.context_window,
        d.window_known,
        d.keep_recent_tokens,
        d.reserve_tokens,
        d.source,
        profile=choice,
        pi_default_model=d.default_model,
        auto_compaction=d.enabled,
        model_max_tokens=d.max_tokens,
    )
    # the token bar's sums over the path, here rather than in the GUI step that shows it
    BarLayout.prime(
        compute_plan_state(
            loaded, d.keep_recent_tokens, d.reserve_tokens, d.context_window, d.window_known, None
        )
    )
    return loaded


class SessionDocument(QObject):
    loading = Signal(str)
    partial_loaded = Signal(object)  # Partial: the head of a big file, shown while the rest loads
    load_progress = Signal(int)  # ‰ of the file indexed
    loaded = Signal(object)  # Loaded
    load_failed = Signal(object)  # errors.Failure
    closed = Signal()
    appended = Signal(object)  # tuple of new record indices
    plan_changed = Signal(object)  # PlanState
    #: RecoveryCut | None: what pi 1.6.0's overflow recovery does for the plan (``recovery``), once known
    recovery_changed = Signal(object)
    #: the recovery's plan waits for the engine, which nothing has imported yet (engine_imported)
    engine_wanted = Signal()
    selection_changed = Signal(int)  # record index (-1: none)
    preparation_ready = Signal(object)  # Preparation | None
    summary_changed = Signal(str)
    #: PlanState: only the projected "after" side changed (the summary's length); the cut is the same
    after_changed = Signal(object)
    message = Signal(str)  # status-bar text
    #: what happened to the file on disk other than pi appending (rewritten, deleted); "": nothing to say
    disk_changed = Signal(str)
    #: Loaded: the pi profile the open file is read as (``Loaded.profile``: which and why)
    profile_changed = Signal(object)

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.session: Session | None = None
        self.path: str | None = None
        self.loaded_state: Loaded | None = None
        self.state: PlanState | None = None
        self.selected = -1
        self.keep = DEFAULT_KEEP_RECENT_TOKENS
        self.reserve = DEFAULT_RESERVE_TOKENS
        self.window = DEFAULT_CONTEXT_WINDOW
        self.window_known = False
        self.manual_cut: int | None = None  # path position
        self.summary_text = ""
        self.preparation: Preparation | None = None
        #: the last generated summary (engine CompactionOutcome), None until generated; it may have been
        #: made for another plan (outcome_plan, summary_is_stale): edits survive re-plans
        self.outcome: Any = None
        self.outcome_plan: PlanSignature | None = None
        #: the app's working leaf (record) after "Branch here"; None follows the file's leaf
        self.working_leaf: int | None = None
        #: the pi profile: `profile_plain` is the user's setting for plain v3 files (auto / a version),
        #: `profile_pin` the planner's switch for the open file (auto: detect, as the CLI does)
        self.profile_plain = "auto"
        self.profile_pin = "auto"
        #: True while a write job runs: live refreshes wait (the engine re-indexes the session itself)
        self.writing = False
        self._keep_params = False
        #: the head of the file being loaded, shown read-only until the whole file is indexed
        self.partial: Partial | None = None
        self._partial_pick: Any = None  # entry id the user selected in the partial view
        self._load_op: Operation | None = None
        self._prep_op: Operation | None = None
        #: pi 1.6.0's overflow recovery for the current plan (``recovery``), planned in a worker
        self._recovery = RecoveryPreview(self.runner, self)
        self._recovery.changed.connect(self.recovery_changed)
        self._recovery.engine_wanted.connect(self.engine_wanted)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_file_changed)
        #: the re-plan of entries pi appended, running in a worker (see refresh)
        self._refresh_op: Operation | None = None
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(150)
        self._refresh_timer.timeout.connect(self.refresh)
        #: the file was deleted or moved away: the tree stays, nothing is written, and this timer
        #: looks for it to come back (the watcher forgets a deleted file)
        self.missing = False
        self._missing_timer = QTimer(self)
        self._missing_timer.setInterval(MISSING_POLL_MS)
        self._missing_timer.timeout.connect(self._look_for_missing_file)
        #: started at each re-plan: PREP_DEBOUNCE_MS while parameters change (a slider being dragged),
        #: 0 for a file just loaded or read under another profile (_replan's `soon`)
        self._prep_timer = QTimer(self)
        self._prep_timer.setSingleShot(True)
        self._prep_timer.timeout.connect(self.request_preparation)
        #: background work that waits for the plan's preparation (see after_preparation), and whether
        #: one is about to be scheduled (while a load's or a re-plan's signals are handled)
        self._after_prepared: list[Callable[[], None]] = []
        self._preparation_coming = False
        self.preparation_ready.connect(self._run_after_preparation)

    # ------------------------------------------------------------------ loading
    def open(self, path: str, keep_params: bool = False) -> Operation:
        """Load ``path`` in the background; ``keep_params`` keeps keep/reserve/window (a reload)."""
        if self._load_op is not None:
            self._load_op.cancel()
        path = os.path.abspath(path)
        self._keep_params = keep_params
        if not keep_params or path != self.path:  # another file: nothing said of this one applies
            self._forget_disk_changes()
        self.loading.emit(path)
        owner = self.parent()
        parent = owner if isinstance(owner, QWidget) else None
        if not keep_params or path != self.path:
            self.profile_pin = "auto"  # another file: detect its profile afresh
        op = self.runner.op(load_session, path, self.profile_pin, self.profile_plain).with_progress(
            f"Opening {os.path.basename(path)}…",
            parent,
        )
        op.on_success(lambda res: self._on_loaded(path, res)).on_failure(
            lambda e, tb: self._on_load_failed(path, e, tb)
        )
        op.interim.connect(lambda head: self._on_partial(op, head))
        op.progress.connect(lambda done, total, _t: self.load_progress.emit(done * 1000 // max(1, total)))
        self._load_op = op
        return op.start()

    def _load_ended(self) -> None:
        self._load_op = None
        if not self.runner.synchronous:
            # the loaded index lives as long as the document: keep later collections from walking it
            gc.freeze()

    def _on_partial(self, op: Operation, head: Partial) -> None:
        if op is not self._load_op or op.cancelled.is_set():
            return
        op.hide_progress()  # the window shows a banner over the partial tree instead
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        # the previous session (if any) is gone: nothing may plan or write while the head is shown
        same_file = self._keep_params and os.path.abspath(head.session.path) == self.path
        self.session = None
        self.loaded_state = None
        self.state = None
        self._recovery.forget()
        if not same_file:  # another file's summary is not this one's
            self.outcome = None
            self.outcome_plan = None
            self.summary_text = ""
            self.summary_changed.emit("")
        # a reload keeps the generated summary (its text, usage and plan), marked as made for
        # another state of the file once loaded: dropping it here left its text counted in "after"
        # while Commit said to generate one first
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
        self.load_failed.emit(explain_failure(exc, tb, f"Cannot open {path}"))

    def _on_loaded(self, path: str, res: Loaded) -> None:
        self._load_ended()
        self._refresh_op = None  # a re-plan of the previous session's appends is for nothing now
        pick, self._partial_pick = self._partial_pick, None
        self.partial = None
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        same_file = self._keep_params and path == self.path
        cut_id = self._manual_cut_id() if same_file else None
        self.path = path
        self.session = res.session
        self.loaded_state = res
        if not same_file:
            self.keep, self.reserve = res.keep, res.reserve
            self.window, self.window_known = res.window, res.window_known
        self._keep_params = False
        self.manual_cut = None
        if cut_id is not None:  # a reload (e.g. after Upgrade) keeps the user's manual cut by entry id
            rec = res.session.get_index(cut_id)
            if rec is not None and rec in res.path_indices:
                self.manual_cut = res.path_indices.index(rec)
        self.preparation = None
        self.working_leaf = None
        self.selected = -1
        if not same_file:
            # another file: its summary is not this one's (a reload keeps the text, marked as made for
            # another plan)
            self.outcome = None
            self.outcome_plan = None
            self.summary_text = ""
            self.summary_changed.emit("")
        self._watcher.addPath(path)
        # the plan's preparation is on its way from here (_replan below schedules it): what the
        # handlers of `loaded` and `plan_changed` start through after_preparation waits for it
        self._preparation_coming = True
        try:
            self.loaded.emit(res)
            self.profile_changed.emit(res)
            self._replan(soon=True)
        finally:
            self._preparation_coming = False
        # a selection made in the partial view is kept (by entry id); else the leaf
        rec = res.session.get_index(pick) if pick is not None else None
        if rec is None:
            rec = res.session.leaf_index()
        self.select(rec if rec is not None else -1)

    def close(self) -> None:
        self._forget_disk_changes()
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        self._refresh_op = None
        self.session = None
        self.path = None
        self.loaded_state = None
        self.state = None
        self._recovery.forget()
        self.outcome = None
        self.outcome_plan = None
        self.summary_text = ""
        self.summary_changed.emit("")
        self.working_leaf = None
        self.closed.emit()

    # ------------------------------------------------------------------ live reload
    def _on_file_changed(self, _path: str) -> None:
        self._refresh_timer.start()

    def refresh(self) -> None:
        s = self.session
        if s is None:
            return
        if self.writing or self._refresh_op is not None:  # look again once that is done
            self._refresh_timer.start()
            return
        if self.missing:
            return  # _look_for_missing_file reads it again when it is back
        if self.path and not os.path.exists(self.path):
            self._file_went_missing()
            return
        if self.path and self.path not in self._watcher.files():
            self._watcher.addPath(self.path)
        try:
            new = s.refresh()
        except (SessionLoadError, SessionFileError) as e:
            # replaced, rewritten or shortened: never index it as if pi had appended
            self._read_again_from_scratch(e)
            return
        if not new:
            return
        # the selection stands for the leaf: the leaf itself, or the entry the tree shows for it (the
        # leaf a label, a usage entry or other entries /tree hides): then it follows pi's new leaf
        follows = self._shows_leaf(self.selected)
        count, leaf = len(s.records), self.working_leaf
        pin, plain = self.profile_pin, self.profile_plain

        def work() -> Loaded:  # the whole path planned again: ~0.1 s on 100k entries, ~1 s on 900k
            return prepare_loaded(s, leaf, pin=pin, plain=plain)

        def done(res: Loaded) -> None:
            self._refresh_op = None
            if s is not self.session or len(s.records) != count or leaf != self.working_leaf:
                self._refresh_timer.start()  # a write, a reload or a branch switch came first
                return
            old = self.loaded_state
            self.loaded_state = res
            self.appended.emit(tuple(new))
            self._say_profile(old, res)
            self._replan()
            self.message.emit(f"{len(new)} new entr{'y' if len(new) == 1 else 'ies'} appended by pi")
            if follows and res.path_indices:
                self.select(res.path_indices[-1])

        def failed(exc: BaseException, _tb: str) -> None:
            self._refresh_op = None
            self.message.emit(f"Planning the entries pi appended failed: {exc}")

        op = self.runner.op(work).on_success(done).on_failure(failed)
        self._refresh_op = op
        op.start()

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
        self.loaded_state = self._prepare(s, self.working_leaf)
        self.manual_cut = None  # the summary text stays, marked as made for another plan
        self.appended.emit(())  # the tree re-derives the active path
        self._replan()

    def after_write(self, select_id: Any = None, clear_summary: bool = False) -> None:
        """Entries were appended by a write job: index them here, on the GUI thread, and re-plan.

        ``clear_summary``: the summary was used (a commit); other writes keep it (made for another plan).
        """
        s = self.session
        self.writing = False
        if s is None:
            return
        try:
            s.refresh()  # the write job leaves indexing to us: the models read `s` on this thread
        except (SessionLoadError, SessionFileError) as e:
            self._read_again_from_scratch(e)
            return
        notes, s.notes[:] = list(s.notes), []
        self.working_leaf = None
        self.manual_cut = None
        if clear_summary:
            self.summary_text = ""
            self.outcome = None
            self.outcome_plan = None
            self.summary_changed.emit("")
        old = self.loaded_state
        self.loaded_state = self._prepare(s, None)
        self.appended.emit(())
        self._say_profile(old, self.loaded_state)
        self._replan()
        rec = s.get_index(select_id) if isinstance(select_id, str) else s.leaf_index()
        if rec is not None:
            self.select(rec)
        if notes:  # e.g. the entry landed after lines pi appended meanwhile: say where it is
            self.message.emit(" ".join(notes))
        self._refresh_timer.start()  # pick up anything pi appended meanwhile

    def _read_again_from_scratch(self, why: Exception) -> None:
        """The file was changed other than by appending (rewritten, shortened, replaced): read it
        again as a new file, keeping the planner's settings, cut and summary, and say so until the
        user closes the note: what was shown before may be gone from the file."""
        # the core's advice to the caller ("; reopen it") is what is being done here
        said = f"{why}".removeprefix(f"{self.path}: ").removesuffix("; reopen it").removesuffix("; reload it")
        self.disk_changed.emit(
            "The file was changed on disk other than by appending, so it was read again from "
            f"scratch ({said}). The planner's settings, cut and summary were kept; a summary made "
            "before is marked as made for another plan."
        )
        self.message.emit("The file on disk is not the one shown; reading it again from scratch")
        self.reload()

    def _file_went_missing(self) -> None:
        self.missing = True
        if self.path and self.path in self._watcher.files():
            self._watcher.removePath(self.path)
        self.disk_changed.emit(
            "The file was deleted or moved away. The tree shows it as it was last read, but entries' "
            "contents and every write need the file: nothing can be written to it. It is read again "
            "if it comes back."
        )
        self.message.emit("The session file is no longer on disk")
        self._missing_timer.start()

    def _look_for_missing_file(self) -> None:
        if not self.missing or self.path is None:
            self._missing_timer.stop()
            return
        if os.path.exists(self.path):
            self._missing_timer.stop()
            self.missing = False
            self.disk_changed.emit("")
            self.message.emit("The session file is back on disk; reading it again")
            self.reload()

    def _forget_disk_changes(self) -> None:
        self.missing = False
        self._missing_timer.stop()
        self.disk_changed.emit("")

    def reload(self) -> Operation | None:
        """Re-read the file from scratch keeping the planner parameters (e.g. after a stale write)."""
        self.writing = False
        return self.open(self.path, keep_params=True) if self.path else None

    def _say_profile(self, old: Loaded | None, res: Loaded) -> None:
        """New entries can decide the file's pi (a 1.6.0 compaction, pi 1.6.0 appending to a plain
        file): the plan already follows it; the views that say which pi and why follow it too."""
        if old is None or old.profile != res.profile:
            self.profile_changed.emit(res)

    # ------------------------------------------------------------------ planning
    def _prepare(self, session: Session, leaf: int | None) -> Loaded:
        return prepare_loaded(session, leaf, pin=self.profile_pin, plain=self.profile_plain)

    def set_profile(self, pin: str | None = None, plain: str | None = None) -> None:
        """Switch the pi profile (`pin`: for this file; `plain`: the user's setting) and re-plan."""
        if pin is not None:
            self.profile_pin = pin if pin in PIN_SETTINGS else "auto"
        if plain is not None:
            self.profile_plain = plain if plain in PIN_SETTINGS else "auto"
        s = self.session
        if s is None or self.writing:
            return
        old = self.loaded_state
        res = self._prepare(s, self.working_leaf)
        self.loaded_state = res
        if (
            old is None
            or old.profile is None
            or res.profile is None
            or old.profile.profile != res.profile.profile
        ):
            self.manual_cut = None  # a cut point under one pi may not be one under the other
        if old is not None and (self.keep, self.reserve) == (old.keep, old.reserve):
            # still pi's settings (not the user's what-if): as the other pi reads them
            self.keep, self.reserve = res.keep, res.reserve
        self.profile_changed.emit(res)
        self._replan(soon=True)

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
        res = self.loaded_state
        if res is None or res.planner.plan_ is None:
            return "no plan"
        try:
            pos = res.planner.path.index(record)
        except ValueError:
            return "this entry is not on the active path"
        why_not = res.planner.manual_cut_error(pos)
        if why_not is not None:
            return why_not
        self.manual_cut = pos
        self._replan()
        return None

    def clear_manual_cut(self) -> None:
        self.manual_cut = None
        self._replan()

    def set_outcome(self, outcome: Any, made_for: PlanSignature | None = None) -> None:
        """The engine's summary, made for ``made_for`` (default: the current plan); the text may be edited."""
        self.outcome = outcome
        self.outcome_plan = made_for if made_for is not None else self.plan_signature()
        self.set_summary(outcome.summary if outcome is not None else "")

    def plan_signature(self) -> PlanSignature | None:
        """The current plan as a summary would be made for it (None: nothing to compact)."""
        st, s = self.state, self.session
        if st is None or s is None or st.cut is None or not st.path:
            return None
        fk = st.cut.first_kept_index
        if fk >= len(st.path):
            return None
        return PlanSignature(
            s.records[st.path[-1]].id, s.records[st.path[fk]].id, fk, len(s.records), st.keep
        )

    @property
    def summary_is_stale(self) -> bool:
        """A summary exists but was made for another plan (or an earlier state of the file)."""
        o = self.outcome
        if o is None:
            return False
        return not self.drafted_from_this_file(o.draft) or self.outcome_plan != self.plan_signature()

    def drafted_from_this_file(self, draft: CompactionDraft) -> bool:
        """Whether ``draft`` was made from the file as it is shown now: from this reading of it, or
        from an earlier one of the same bytes (its fingerprint: identity, size, mtime, head and
        tail) under the same pi. A Reload with nothing changed made a generated summary one "for
        an earlier state of the file", which could not be committed without generating it again."""
        s = self.session
        if s is None:
            return False
        if draft.session is s:
            return True
        choice = self.loaded_state.profile if self.loaded_state is not None else None
        return (
            draft.session.path == s.path
            and s.fingerprint is not None
            and draft.fingerprint == s.fingerprint
            and choice is not None
            and draft.profile == choice.profile
        )

    def stale_summary_text(self) -> str:
        """Why the summary does not fit the plan now (see summary_is_stale), in one sentence."""
        reloaded = self.outcome is not None and not self.drafted_from_this_file(self.outcome.draft)
        return stale_summary_text(self.outcome_plan, self.plan_signature(), reloaded)

    def _manual_cut_id(self) -> Any:
        st, s = self.state, self.session
        if self.manual_cut is None or st is None or s is None or self.manual_cut >= len(st.path):
            return None
        return s.records[st.path[self.manual_cut]].id

    def set_summary(self, text: str) -> None:
        if text != self.summary_text:
            self.summary_text = text
            self.summary_changed.emit(text)
            st = self.state
            if st is None:
                return
            # the text changes only the summary's size in the projected context: no re-plan
            self.state = dataclasses.replace(
                st,
                after_tokens=_with_summary_tokens(st.after_tokens, text),
                params=dataclasses.replace(st.params, summary_tokens=_summary_tokens(text) if text else None),
            )
            self.after_changed.emit(self.state)

    def _replan(self, prepare: bool = True, soon: bool = False) -> None:
        res = self.loaded_state
        if res is None:
            return
        self.state = compute_plan_state(
            res, self.keep, self.reserve, self.window, self.window_known, self.manual_cut, self.summary_text
        )
        self._recovery.update(self.state)
        coming, self._preparation_coming = self._preparation_coming, self._preparation_coming or prepare
        try:
            self.plan_changed.emit(self.state)  # its handlers' after_preparation waits for the one below
        finally:
            self._preparation_coming = coming
        if prepare:
            self.preparation = None
            # `soon`: on the next turn of the event loop, before the search index, token counts and
            # other background work that starts AFTER_GUI_STEP_MS later (the plan is what the user waits
            # for; sharing the GIL with those made its 20 ms of work take 0.5 s)
            self._prep_timer.start(0 if soon else PREP_DEBOUNCE_MS)

    @property
    def recovery(self) -> RecoveryCut | None:
        """What pi 1.6.0's overflow recovery does for the current plan: its compaction once it has
        omitted the failed attempt (engine.context_edits.recovery_plan); None where it omits nothing
        or while it is planned (``recovery_changed`` then says it)."""
        return self._recovery.cut

    def engine_imported(self) -> None:
        """The engine is imported (the window's, in a worker): the recovery can be planned."""
        self._recovery.engine_imported(self.state)

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

    def after_preparation(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` on the GUI thread once the current plan's preparation is done and shown (a
        moment after, as :meth:`TaskRunner.call_later`): for background work the user does not wait
        for (the search index, the real-token count). Started beside the preparation, they took the
        GIL in turns with it: on a 100k-entry path before its first compaction its 2 s took 5."""
        if self.preparing or self._preparation_coming:
            self._after_prepared.append(fn)
        else:
            self.runner.call_later(fn)

    def _run_after_preparation(self, _prep: object) -> None:
        if self.preparing:  # another preparation is on its way (a re-plan): wait for that one
            return
        waiting, self._after_prepared = self._after_prepared, []
        for fn in waiting:
            self.runner.call_later(fn)

    @property
    def preparing(self) -> bool:
        """A preparation for the current plan is scheduled or running."""
        return self._prep_timer.isActive() or self._prep_op is not None

    def _on_prepared(self, prep: Preparation | None) -> None:
        self._prep_op = None
        self.preparation = prep
        self.preparation_ready.emit(prep)

    # ------------------------------------------------------------------ selection
    def _shows_leaf(self, record: int, limit: int = 64) -> bool:
        """Whether ``record`` is on the planned path and every entry after it there is one pi's
        /tree hides by default (looked at up to ``limit`` of them): true of the leaf itself."""
        res, s = self.loaded_state, self.session
        if res is None or s is None or record < 0:
            return False
        path = res.path_indices
        pos = res.planner.positions.get(record)
        if pos is None or len(path) - 1 - pos > limit:
            return False
        return not any(entry_visible(s, i, "default") for i in path[pos + 1 :])

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


def _summary_tokens(summary_text: str) -> float:
    """The summary's size in the projected context (chars/4, or a placeholder before it exists)."""
    return float(summary_tokens(summary_text) if summary_text else SUMMARY_PLACEHOLDER_TOKENS)


def _with_summary_tokens(
    after: list[tuple[int, str, float]], summary_text: str
) -> list[tuple[int, str, float]]:
    return with_summary_tokens(after, _summary_tokens(summary_text))


def compute_plan_state(
    res: Loaded,
    keep: int,
    reserve: int,
    window: int,
    window_known: bool,
    manual: int | None,
    summary_text: str = "",
) -> PlanState:
    """The core's plan for the current parameters (a binary search over precomputed sums)."""
    summary_tokens = _summary_tokens(summary_text) if summary_text else None
    params = PlanParams(
        keep, reserve, window, manual, summary_tokens, res.auto_compaction, res.model_max_tokens
    )
    return res.planner.plan(params, window_known=window_known)
