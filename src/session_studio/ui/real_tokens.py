"""Real token counts in the window: counted in the compute pool, cached, shown next to pi's estimate.

The core counts (:mod:`session_studio.core.real_tokens`); this controller decides *when*, off the
GUI thread: a plan's context items when a session is loaded or its path changes (progressively,
with progress and cancellation, filling the per-entry cache as it goes), one entry when the
inspector or a tooltip asks for one not counted yet. A plan change on the same path re-uses the
item counts and only recomputes the decisions. Counts are cached by record index for one loaded
index of a file (indices are stable while pi appends); opening or reloading a file, another
tokenizer or another pi profile clears the cache.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..core.count_worker import text_counter
from ..core.plan import PlanState
from ..core.profile import PROFILE_0_80_2, PiProfile
from ..core.real_tokens import (
    MessageCount,
    RealPathTokens,
    TokenizerChoice,
    TokenizerUnavailableError,
    count_edited_entry,
    count_entry,
    count_items,
    entry_estimate,
    real_path_tokens,
    tokenizer_for_model,
)
from .document import Loaded, SessionDocument
from .pi16 import NO_EDITS, EditFacts
from .tasks import AFTER_GUI_STEP_MS, Operation, TaskRunner

__all__ = ["PathTokensView", "RealTokenCounts", "entry_tokens_line"]

log = logging.getLogger(__name__)


def _fmt(n: float) -> str:
    return f"{n:,.0f}"


def entry_tokens_line(
    estimate: float | None, count: MessageCount | None, tokenizer: TokenizerChoice | None, note: str = ""
) -> str:
    """``pi estimate N · real M (tokenizer) · drift ±D``: the inspector's and the tooltip's line."""
    head = f"pi estimate {_fmt(estimate)}" if estimate is not None else "pi estimate —"
    if note:
        return f"{head} · {note}"
    if count is None or tokenizer is None:
        return f"{head} · real: counting…"
    line = f"{head} · real {_fmt(count.tokens)} ({tokenizer.label()})"
    if estimate:
        d = count.tokens - estimate
        line += f" · drift {d:+,.0f} ({d / estimate:+.0%})"
    if count.images_estimated:
        line += " · images estimated"
    if count.texts_extrapolated:
        line += " · extrapolated (a text over 4 Mi characters)"
    return line


@dataclass(frozen=True)
class PathTokensView:
    """What the token bar shows: the figures and the notes, or why there are none yet."""

    result: RealPathTokens | None
    status: str  # "counting 40 %", "unavailable: …", "" when the result is there
    provider: str = ""  # the provider's own count of this path, when the user asked for it

    def header(self) -> str:
        r = self.result
        if r is None:
            return f"real tokens: {self.status}" if self.status else ""
        return f"real {_fmt(r.real_total)} ({r.tokenizer.label()}) vs chars/4 {_fmt(r.estimate_total)}"

    def notes(self) -> list[str]:
        """The decisions real tokens change, briefly (the tooltip has them in full)."""
        r = self.result
        if r is None or r.decision is None:
            return []
        return r.decision.brief()

    def tooltip(self) -> str:
        r = self.result
        lines = [self.header()] if r is None else r.describe()
        if self.provider:
            lines.append(self.provider)
        return "\n".join(lines)


def _count_path_job(
    state: PlanState, encoding: str, known: dict[int, MessageCount], op: Operation
) -> tuple[list[MessageCount], dict[int, MessageCount]]:
    count = text_counter(encoding)
    learned: dict[int, MessageCount] = {}  # entry counts made since the last batch handed over

    def progress(done: int, total: int) -> None:
        op.report(done, total, "")
        if learned:
            op.report_interim(dict(learned))  # tooltips fill in while a huge path is counted
            learned.clear()

    items = count_items(state, count, known, op.cancelled.is_set, learned=learned, progress=progress)
    return items, learned  # what the interim batches did not carry


_count_path_job.wants_op = True  # type: ignore[attr-defined]


def _provider_job(state: PlanState, config: Any, cancel: Any) -> Any:
    """Resolve the provider (the key-host policy of the summarizer) and count with it."""
    from ..engine.token_count import count_with_provider
    from ..llm.config import resolve_provider

    return count_with_provider(state, resolve_provider(config), cancel=cancel)


def provider_count_text(got: Any) -> str:
    drift = got.tokens - got.estimate
    pct = f" ({drift / got.estimate:+.1%})" if got.estimate else ""
    return (
        f"{got.provider}'s count_tokens ({got.model}): {got.tokens:,} tokens vs pi estimate "
        f"{got.estimate:,.0f}{pct}"
    )


def _count_entry_job(session: Any, record: int, encoding: str, profile: PiProfile) -> MessageCount:
    rec = session.records[record]
    return count_entry(session.value(record), rec.type, text_counter(encoding), profile)


def _count_edited_job(session: Any, record: int, edit: int, encoding: str) -> MessageCount:
    return count_edited_entry(session, record, edit, text_counter(encoding))


class RealTokenCounts(QObject):
    """Owns the counts of the open session; the views ask it and listen to it."""

    #: PathTokensView for the current plan
    path_changed = Signal(object)
    #: frozenset of records whose entry count arrived
    entries_counted = Signal(object)
    #: the provider's count of the path, in words (after count_with_provider)
    provider_counted = Signal(str)
    #: (exception, traceback) of a failed provider count
    provider_failed = Signal(object, str)

    def __init__(self, document: SessionDocument, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.runner = runner
        self.tokenizer: TokenizerChoice | None = None
        self.unavailable: str | None = None
        self.view = PathTokensView(None, "")
        self._entries: dict[int, MessageCount] = {}
        #: (record, context edit) → count of the entry as the edit leaves it for the LLM
        self._edited: dict[tuple[int, int], MessageCount] = {}
        #: the context edits seen from the tree's active path (None: none are looked at)
        self.edit_facts: Callable[[], EditFacts] | None = None
        self._cache_key: tuple[Any, ...] | None = None
        self._items: list[MessageCount] | None = None
        self._items_key: list[Any] | None = None
        self._path_op: Operation | None = None
        #: the records on the path being counted (the running path job counts their messages too)
        self._path_records: Mapping[int, int] = {}
        #: entries asked for while the path job was going to count them: asked again when it ends
        self._deferred: set[int] = set()
        #: the decisions of the newest plan, being worked out in the pool (see _show)
        self._decide_op: Operation | None = None
        self._provider_text = ""  # the provider's count of the current path (kept across its plans)
        self._entry_ops: dict[int | tuple[int, int], Operation] = {}
        document.loaded.connect(self._on_loaded)
        document.plan_changed.connect(self._on_plan)
        document.closed.connect(self._on_closed)

    # ------------------------------------------------------------------ the views ask
    @property
    def profile(self) -> PiProfile:
        res = self.document.loaded_state
        return res.profile.profile if res is not None and res.profile is not None else PROFILE_0_80_2

    def entry_line(self, record: int) -> str:
        """The inspector's / tooltip's line for an entry ("" for entries the LLM gets nothing from);
        asks for a count in the background when there is none yet."""
        s = self.document.session
        if s is None or not 0 <= record < len(s.records):
            return ""
        rec = s.records[record]
        if rec.type not in ("message", "custom_message", "branch_summary", "compaction"):
            return ""
        edits = self.edit_facts() if self.edit_facts is not None else NO_EDITS
        edit = edits.applied.get(record)
        if edit is not None:
            return self._edited_line(record, edit, edits)
        estimate = self.estimate(record)
        if self.unavailable is not None:
            return entry_tokens_line(estimate, None, None, self.unavailable)
        got = self._entries.get(record)
        if got is None:
            self.request_entry(record)
            got = self._entries.get(record)  # a synchronous runner has it now
        return entry_tokens_line(estimate, got, self.tokenizer)

    def estimate(self, record: int) -> float | None:
        """pi's estimate of what the entry gives the LLM, under the file's profile (a summary's or a
        custom message's too: the messages pi builds from them); None: nothing, or pi would throw."""
        s = self.document.session
        if s is None or not 0 <= record < len(s.records):
            return None
        rec = s.records[record]
        if rec.type == "message" and rec.role != "system":
            t = rec.tokens
            return float(t) if isinstance(t, int | float) and t == t else None
        return entry_estimate(s.value(record), rec.type, self.profile)

    def _edited_line(self, record: int, edit: int, edits: EditFacts) -> str:
        """The line of an entry a pi 1.6.0 context edit hides or replaces: what pi sends (core's
        projection), said to be edited."""
        s = self.document.session
        assert s is not None
        edit_id = s.records[edit].id
        if record in edits.hidden:
            return f"0 in the context: hidden by context edit {edit_id}"
        t = edits.replaced_tokens.get(record)  # the 1.6.0 projection's estimate of the edited entry
        estimate = float(t) if isinstance(t, int | float) and t == t else None
        note = f"as edited by context edit {edit_id}"
        if self.unavailable is not None:
            return entry_tokens_line(estimate, None, None, f"{self.unavailable} · {note}")
        key = (record, edit)
        if key not in self._edited:
            self._request_edited(record, edit)
        return f"{entry_tokens_line(estimate, self._edited.get(key), self.tokenizer)} · {note}"

    def _request_edited(self, record: int, edit: int) -> None:
        s = self.document.session
        key = (record, edit)
        if s is None or self.tokenizer is None or key in self._entry_ops:
            return
        op = self.runner.op(_count_edited_job, s, record, edit, self.tokenizer.encoding)
        op.on_success(functools.partial(self._on_edited, key, self._cache_key))
        op.on_failure(functools.partial(self._on_entry_failed, key))
        self._entry_ops[key] = op
        op.start()

    def _on_edited(
        self, key: tuple[int, int], cache_key: tuple[Any, ...] | None, count: MessageCount
    ) -> None:
        self._entry_ops.pop(key, None)
        if cache_key != self._cache_key:
            return  # counted for another file or tokenizer
        self._edited[key] = count
        self.entries_counted.emit(frozenset({key[0]}))

    def request_entry(self, record: int) -> None:
        s = self.document.session
        if s is None or self.tokenizer is None or record in self._entries or record in self._entry_ops:
            return
        if self._path_op is not None and record in self._path_records:
            # the path job counts this message already: a second job would read and parse the same
            # entry at the same time (a 50 MB message twice over) and count it twice; its count
            # comes with the path job's next batch, or it is asked for when that job ends
            self._deferred.add(record)
            return
        key = self._cache_key
        op = self.runner.op(_count_entry_job, s, record, self.tokenizer.encoding, self.profile)
        op.on_success(functools.partial(self._on_entry, record, key))
        op.on_failure(functools.partial(self._on_entry_failed, record))
        self._entry_ops[record] = op
        op.start(after_ms=AFTER_GUI_STEP_MS)  # after the selection that asked is shown

    def count_with_provider(self, config: Any) -> Operation | None:
        """The user asked: send the current path's context to the provider's count endpoint
        (``config``: a ProviderConfig, or None for pi's configured provider). Never automatic."""
        state = self.document.state
        if state is None or state.error is not None:
            return None
        from ..llm import CancelToken

        op = self.runner.op(_provider_job, state, config, CancelToken(), pool="network")
        op.on_success(self._on_provider_count)
        op.on_failure(self.provider_failed.emit)
        op.start()
        return op

    def _on_provider_count(self, got: Any) -> None:
        text = self._provider_text = provider_count_text(got)
        self._set_view(dataclasses.replace(self.view, provider=text))
        self.provider_counted.emit(text)

    # ------------------------------------------------------------------ document events
    def _on_loaded(self, res: Loaded) -> None:
        # a fresh index (another file, a reload, a file rewritten on disk): nothing counted applies
        self._entries.clear()
        self._edited.clear()
        self._deferred.clear()
        self._cache_key = None
        self._items = None
        self._items_key = None
        self.unavailable = None
        self._sync(res)

    def _sync(self, res: Loaded) -> None:
        """The tokenizer for the leaf's model and the pi profile (what pi appends, "Branch here" or
        another profile may change them: then nothing counted applies). Appends keep the records'
        indices, and so what was counted."""
        s = res.session
        choice = tokenizer_for_model(res.planner.model)
        header_id = (s.header or {}).get("id") if isinstance(s.header, dict) else None
        key = (s.path, header_id, choice.encoding, res.profile.profile.version if res.profile else "")
        if key != self._cache_key or len(s.records) < self._known_records:
            self._entries.clear()
            self._edited.clear()
            self._items = None
        self._cache_key = key
        self._known_records = len(s.records)
        self.tokenizer = choice

    _known_records = 0

    def _on_closed(self) -> None:
        self._cancel_path()
        for op in self._entry_ops.values():
            op.cancel()
        self._entry_ops.clear()
        self._entries.clear()
        self._edited.clear()
        self._deferred.clear()
        self._cache_key = None
        self._items = None
        self.tokenizer = None
        self._set_view(PathTokensView(None, ""))

    def _on_plan(self, state: PlanState) -> None:
        res = self.document.loaded_state
        if res is not None:
            self._sync(res)
        if self.tokenizer is None or state.error is not None:
            self._set_view(
                PathTokensView(None, "" if state.error is None else "not counted (pi would throw)")
            )
            return
        if self.unavailable is not None:
            self._set_view(PathTokensView(None, self.unavailable))
            return
        # every plan of one path shares the planner's item list: the same list, the same counts
        key = state.item_tokens
        if self._items is not None and self._items_key is key:
            self._show(state, self._items)  # same path: only the decisions change
            return
        self._cancel_path()
        self._items = None
        self._provider_text = ""  # another path: the provider counted the old one
        self._set_view(PathTokensView(None, "counting…"))
        op = self.runner.op(_count_path_job, state, self.tokenizer.encoding, dict(self._entries))
        op.progress.connect(self._on_progress)
        op.interim.connect(self._on_learned)
        op.on_success(functools.partial(self._on_path, state, key))
        op.on_failure(self._on_path_failed)
        self._path_op = op
        self._path_records = state.positions
        # after the plan (a session loaded) and its preparation are shown: the count reads the same
        # messages the preparation does (Projection.prefetch) and takes the GIL in turns with it
        self.document.after_preparation(functools.partial(self._start_path, op))

    def _start_path(self, op: Operation) -> None:
        if op is self._path_op and not op.cancelled.is_set():
            op.start()

    # ------------------------------------------------------------------ results
    def _show(self, state: PlanState, items: list[MessageCount]) -> None:
        """The decisions real tokens change, for this plan: a sweep over the path (the cut walked
        again with real counts), so it runs in the compute pool; only the newest plan's result is
        shown (a slider drag supersedes the ones before)."""
        assert self.tokenizer is not None
        if self._decide_op is not None:
            self._decide_op.cancel()
        op = self.runner.op(real_path_tokens, state, items, self.tokenizer)
        op.on_success(functools.partial(self._on_decided, op))
        op.on_failure(functools.partial(self._on_decide_failed, op))
        self._decide_op = op
        op.start()

    def _on_decided(self, op: Operation, result: Any) -> None:
        if op is not self._decide_op:
            return  # decided for a plan that is no longer shown
        self._decide_op = None
        self._set_view(PathTokensView(result, "", self._provider_text))

    def _on_decide_failed(self, op: Operation, exc: BaseException, tb: str) -> None:
        if op is not self._decide_op:
            return
        self._decide_op = None
        if isinstance(exc, RuntimeError) and str(exc) == "cancelled":
            return
        log.error("deciding with real tokens failed:\n%s", tb)
        self._set_view(PathTokensView(None, f"failed ({type(exc).__name__}: {exc})"))

    def _on_progress(self, done: int, total: int, _text: str = "") -> None:
        text = f"counting {done * 100 // total} %" if total else ""
        if text and text != self.view.status:  # reported per 512 items: a new percentage only
            self._set_view(PathTokensView(None, text))

    def _on_learned(self, fresh: dict[int, MessageCount]) -> None:
        self._entries.update(fresh)
        self.entries_counted.emit(frozenset(fresh))

    def _on_path(
        self, state: PlanState, key: list[Any], got: tuple[list[MessageCount], dict[int, MessageCount]]
    ) -> None:
        self._path_op = None
        items, learned = got
        self._on_learned(learned)
        self._ask_deferred()
        self._items, self._items_key = items, key
        current = self.document.state
        self._show(
            current if current is not None and current.item_tokens is state.item_tokens else state, items
        )

    def _on_path_failed(self, exc: BaseException, tb: str) -> None:
        self._path_op = None
        if isinstance(exc, TokenizerUnavailableError):
            self.unavailable = str(exc)
            self._set_view(PathTokensView(None, self.unavailable))
            # the entries waiting for this job: their own jobs would fail the same way, so their
            # lines are shown again, saying why (as an entry job's failure does)
            deferred, self._deferred = self._deferred, set()
            if deferred:
                self.entries_counted.emit(frozenset(deferred))
            return
        self._ask_deferred()
        if isinstance(exc, InterruptedError):
            return
        log.error("counting real tokens failed:\n%s", tb)
        self._set_view(PathTokensView(None, f"failed ({type(exc).__name__}: {exc})"))

    def _on_entry(self, record: int, key: tuple[Any, ...] | None, count: MessageCount) -> None:
        self._entry_ops.pop(record, None)
        if key != self._cache_key:
            return  # counted for another file or tokenizer
        self._entries[record] = count
        self.entries_counted.emit(frozenset({record}))

    def _on_entry_failed(self, key: int | tuple[int, int], exc: BaseException, tb: str) -> None:
        self._entry_ops.pop(key, None)
        record = key if isinstance(key, int) else key[0]
        if isinstance(exc, TokenizerUnavailableError):
            self.unavailable = str(exc)
            self.entries_counted.emit(frozenset({record}))
            return
        log.error("counting the real tokens of record %d failed:\n%s", record, tb)

    def _ask_deferred(self) -> None:
        """Count on their own the entries the path job was to count and did not (an edited entry's
        message is not its own, a failed or superseded job)."""
        deferred, self._deferred = self._deferred, set()
        for record in sorted(deferred):
            self.request_entry(record)

    def _cancel_path(self) -> None:
        if self._path_op is not None:
            self._path_op.cancel()
            self._path_op = None  # the deferred entries wait for the job that replaces it
        if self._decide_op is not None:
            self._decide_op.cancel()
            self._decide_op = None

    def _set_view(self, view: PathTokensView) -> None:
        self.view = view
        self.path_changed.emit(view)
