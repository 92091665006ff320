"""Compare summaries, the behaviour: each candidate is generated in its own worker with its own
request and cancel token, so cancelling or failing one leaves the others running; what each kept
and the context after it come from core (analyze_summary) and the single preview's
build_context_pair; the chosen one is committed through the existing commit path (the engine,
with the plan it was drafted for). Nothing is written until the user commits."""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QDialog

from session_studio.core.summary_sections import SummaryKept, analyze_summary, summary_tokens

from . import actions
from .document import PlanSignature, PlanState
from .errors import Failure, explain_failure
from .preview import ContextPair, ProviderDialog, build_context_pair, custom_key_problem, provider_config
from .summary_candidates import CandidatePane, CompareView

if TYPE_CHECKING:
    from session_studio.engine import CompactionOutcome
    from session_studio.llm import CancelToken

    from .tasks import Operation
    from .write_commands import WriteCommands

__all__ = ["CandidateView", "SummaryComparison", "candidate_view"]


@dataclass(frozen=True)
class CandidateView:
    """What a candidate's pane shows besides its text (computed off the GUI thread)."""

    pair: ContextPair | None  # before/after contexts: the single preview's function
    kept: SummaryKept | None  # None before a generation: the requested headings come from the draft
    tokens: int | float  # pi's estimate of the summary


def candidate_view(st: PlanState, summary: str, outcome: CompactionOutcome | None) -> CandidateView:
    """The context after ``summary`` and what it kept. Worker-safe.

    With the engine's ``outcome`` the "after" side is what committing this text writes and pi
    rebuilds (as in the single preview); what it kept is read against the headings the draft's
    requests asked for and the plan's file lists.
    """
    pair = build_context_pair(st, summary, outcome) if st.plan is not None and st.cut is not None else None
    kept = None
    if outcome is not None:
        from session_studio.engine import requested_headings

        read, modified = outcome.draft.file_lists()
        kept = analyze_summary(summary, requested_headings(outcome.draft), read, modified)
    return CandidateView(pair, kept, summary_tokens(summary))


@dataclass
class _Run:
    """A candidate's generation and what it produced."""

    op: Operation | None = None
    cancel: CancelToken | None = None
    outcome: CompactionOutcome | None = None
    made_for: PlanSignature | None = None
    view_op: Operation | None = None
    view: CandidateView | None = None


class SummaryComparison(QObject):
    """Runs the candidates of the Compare summaries mode for a window (composition, not a mixin)."""

    def __init__(self, window: WriteCommands) -> None:
        super().__init__(window)
        self.w = window
        self.view = CompareView()
        window.preview.add_compare_view(self.view)
        self.runs: dict[CandidatePane, _Run] = {}
        self.view.add_requested.connect(self.add_candidate)
        window.doc.plan_changed.connect(self._on_plan)
        window.doc.loaded.connect(self._on_loaded)
        window.doc.closed.connect(self.reset)
        window.preview.modes.currentChanged.connect(lambda _i: self._refresh_visible())
        window.tabs.currentChanged.connect(lambda _i: self._refresh_visible())
        window.installEventFilter(self)  # closing the window cancels the candidates' requests
        self.add_candidate()
        self.add_candidate()

    # ---------------------------------------------------------------- panes
    def pane(self, name: str) -> CandidatePane:
        return self.view.pane(name)

    def add_candidate(self) -> CandidatePane:
        pane = self.view.add_pane()
        pane.set_provider(str(self.w.preview.provider.currentData()))
        pane.show_pi_default(self.w.preview.pi_model)
        pane.custom_values = self.w.settings.custom_provider()
        self.runs[pane] = _Run()
        pane.generate_requested.connect(lambda: self.generate(pane))
        pane.cancel_requested.connect(lambda: self.cancel(pane))
        pane.commit_requested.connect(lambda: self.commit(pane))
        pane.remove_requested.connect(lambda: self.remove(pane))
        pane.settings_requested.connect(lambda: self.edit_provider(pane))
        pane.edited.connect(lambda: self._on_edited(pane))
        self._update_commit(pane)
        return pane

    def remove(self, pane: CandidatePane) -> None:
        if pane.is_edited() and not self.w.ask_yes_no(
            f"Remove candidate {pane.name}?",
            "Its text was edited; removing it discards the text.",
            yes="Remove",
        ):
            return
        self._drop(pane)

    def _drop(self, pane: CandidatePane) -> None:
        run = self.runs.pop(pane, None)
        if run is not None:
            if run.cancel is not None:
                run.cancel.cancel()
            if run.view_op is not None:
                run.view_op.cancel()
        self.view.remove_pane(pane)

    def edit_provider(self, pane: CandidatePane) -> None:
        dlg = ProviderDialog(pane.custom_values or {}, self.w)
        self.w.last_dialog = dlg
        if dlg.exec() == QDialog.DialogCode.Accepted:
            pane.custom_values = dlg.values()
        dlg.deleteLater()  # answered: not left a child of the window, one per edit

    def edited_names(self) -> list[str]:
        """The candidates holding text the user typed or edited."""
        for pane in self.runs:
            pane.flush()
        return [p.name for p in self.runs if p.is_edited()]

    def reset(self) -> None:
        """Discard every candidate (another file, a commit) and start again with two empty ones."""
        for pane in list(self.runs):
            self._drop(pane)
        self.add_candidate()
        self.add_candidate()

    def _on_loaded(self, res: Any) -> None:
        # candidates of another file are of no use here (a reload of this one keeps them, stale)
        path = res.session.path
        if any(r.outcome is not None and r.outcome.draft.session.path != path for r in self.runs.values()):
            self.reset()
        else:
            self._on_plan()

    def offer_summariser(self, pi_model: str | None, key: str | None) -> None:
        """Name pi's default model in every candidate's list and offer ``key`` (None: leave each
        candidate's choice) to the candidates not generated or generating."""
        for pane, run in self.runs.items():
            pane.show_pi_default(pi_model)
            if key is not None and not pane.running and run.outcome is None:
                pane.set_provider(key)

    def cancel_all(self) -> None:
        for run in self.runs.values():
            if run.cancel is not None:
                run.cancel.cancel()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.w and event.type() == QEvent.Type.Close:
            self.cancel_all()
        return False

    # ---------------------------------------------------------------- generation
    def generate(self, pane: CandidatePane) -> None:
        d = self.w.doc
        run = self.runs.get(pane)
        if run is None or run.op is not None:
            return
        if d.session is None or d.state is None or d.preparation is None:
            pane.status.setText("Nothing to summarise with this cut")
            return
        pane.flush()
        if pane.is_edited() and not self.w.ask_yes_no(
            f"Replace candidate {pane.name}?",
            "Its text was typed or edited. Generating replaces it (Ctrl+Z in the text brings it back).",
            yes="Generate and replace",
        ):
            return
        provider = pane.provider_key()
        config = None
        if provider == "custom":
            if provider_config(pane.custom_values) is None:
                self.edit_provider(pane)
            config = provider_config(pane.custom_values)
            if config is None:
                return
            problem = custom_key_problem(pane.custom_values)
            if problem:
                pane.show_failure(Failure(f"Candidate {pane.name} could not be generated", problem))
                return
        params = self.w._summarize_params(provider)
        if params is None:
            return
        # this candidate's provider and prompt variant; the plan (and its key) is the window's
        params = dataclasses.replace(params, config=config, custom_instructions=pane.custom_instructions())
        from session_studio.llm import CancelToken

        run.cancel = CancelToken()
        run.outcome = None
        run.made_for = d.plan_signature()
        pane.set_running(True)
        self._update_commit(pane)
        op = self.w.runner.op(
            actions.summarize_job, d.session, params, pane.stream.part.emit, run.cancel, pool="network"
        )
        op.on_success(lambda out: self._generated(pane, out)).on_failure(
            lambda e, tb: self._failed(pane, e, tb)
        )
        run.op = op
        op.start()

    def cancel(self, pane: CandidatePane) -> None:
        run = self.runs.get(pane)
        if run is not None and run.cancel is not None:
            run.cancel.cancel()
            pane.status.setText("Cancelling…")

    def _live_run(self, pane: CandidatePane) -> _Run | None:
        """The pane's run, None once the pane was removed or the window closed (a late result)."""
        run = self.runs.get(pane)
        return run if run is not None and shiboken6.isValid(pane) else None

    def _generated(self, pane: CandidatePane, outcome: CompactionOutcome) -> None:
        run = self._live_run(pane)
        if run is None:
            return
        run.op = run.cancel = None
        pane.set_running(False)
        pane.finish(outcome.summary)
        run.outcome = outcome
        self._update_commit(pane)
        self.refresh_view(pane)

    def _failed(self, pane: CandidatePane, exc: BaseException, tb: str) -> None:
        run = self._live_run(pane)
        if run is None:
            return
        run.op = run.cancel = None
        pane.set_running(False)
        from session_studio.llm import LlmCancelledError

        if isinstance(exc, LlmCancelledError):
            pane.status.setText(
                "Cancelled: nothing was written" + (" (partial text kept)" if pane.text() else "")
            )
        else:
            pane.show_failure(explain_failure(exc, tb, f"Candidate {pane.name} could not be generated"))
        self._update_commit(pane)
        self.refresh_view(pane)  # the "after" of the text left, if any

    # ---------------------------------------------------------------- what each shows
    def is_stale(self, pane: CandidatePane) -> bool:
        """The candidate was made for another plan (or another state of the file)."""
        run = self.runs[pane]
        d = self.w.doc
        o = run.outcome
        return o is not None and (not d.drafted_from_this_file(o.draft) or run.made_for != d.plan_signature())

    def _update_commit(self, pane: CandidatePane) -> None:
        run = self.runs[pane]
        d = self.w.doc
        why: str | None
        if run.outcome is None:
            why = "Generate this candidate first"
        elif self.is_stale(pane):
            why = "Made for another plan: generate it again for the current plan"
        elif not pane.text().strip():
            why = "The summary is empty"
        else:
            why = actions.legacy_reason(d.session) or (
                "Another write to this file is in progress." if d.writing else None
            )
        pane.set_commit_allowed(why)

    def _on_plan(self, *_args: Any) -> None:
        for pane in self.runs:
            self._update_commit(pane)
            self._show_status(pane)
        self._refresh_visible()

    def _show_status(self, pane: CandidatePane) -> None:
        """The line under a generated candidate's buttons: its size, or the plan it was made for."""
        run = self.runs[pane]
        if pane.running or run.outcome is None:
            return
        if self.is_stale(pane):
            made = run.made_for
            pane.status.setText(
                f"Made for {made.describe() if made else 'another plan'}; the plan has changed since: "
                "generate it again to commit it"
            )
        elif run.view is not None:
            pane.status.setText(f"{len(pane.text()):,} chars · ≈{run.view.tokens:,} tokens (pi's estimate)")

    def _refresh_visible(self) -> None:
        if self.w.tabs.currentWidget() is self.w.preview and self.w.preview.comparing():
            for pane in self.runs:
                self.refresh_view(pane)

    def _on_edited(self, pane: CandidatePane) -> None:
        if pane in self.runs:
            self._update_commit(pane)
            self.refresh_view(pane)

    def refresh_view(self, pane: CandidatePane) -> None:
        """Recompute the pane's "after" context and what it kept, for its current text."""
        run = self.runs[pane]
        st = self.w.doc.state
        if run.view_op is not None:
            run.view_op.cancel()
            run.view_op = None
        if st is None or st.plan is None or st.cut is None or st.error or pane.running:
            # while generating, the text is a part of the summary: no "after" size of it (the one
            # of the finished text follows in _generated)
            run.view = None
            pane.show_view(None, None)
            return
        outcome = None if self.is_stale(pane) else run.outcome
        op = self.w.runner.op(candidate_view, st, pane.text(), outcome)
        op.on_success(lambda v: self._on_view(pane, op, v)).on_failure(
            lambda e, tb: self._on_view_failed(pane, op, e)
        )
        run.view_op = op
        op.start()

    def _on_view_failed(self, pane: CandidatePane, op: Operation, exc: BaseException) -> None:
        run = self._live_run(pane)
        if run is not None and run.view_op is op:
            run.view_op = None
            pane.status.setText(f"Context: {exc}")

    def _on_view(self, pane: CandidatePane, op: Operation, view: CandidateView) -> None:
        run = self._live_run(pane)
        if run is None or run.view_op is not op:
            return
        run.view_op = None
        run.view = view
        pane.show_view(view.pair, view.kept)
        self._show_status(pane)

    # ---------------------------------------------------------------- commit
    def commit(self, pane: CandidatePane) -> None:
        run = self.runs.get(pane)
        if run is None:
            return
        pane.flush()
        self._update_commit(pane)
        outcome = run.outcome
        if outcome is None or not pane.commit_button.isEnabled():
            self.w.statusBar().showMessage(f"Cannot commit: {pane.commit_button.toolTip()}", 8000)
            return
        summary = pane.text()
        text, details = self.w._commit_summary(outcome, summary)
        edited = [p.name for p in self.runs if p is not pane and p.is_edited()]
        others = [p.name for p in self.runs if p is not pane]
        if others:
            text += (
                f"<p>The other candidates ({html.escape(', '.join(others))}) are discarded"
                + (f"; <b>{html.escape(', '.join(edited))}</b> has text you edited" if edited else "")
                + ".</p>"
            )
        if not self.w.ask_yes_no(f"Commit candidate {pane.name}", text, details, "Append compaction"):
            return
        for other, r in self.runs.items():
            if other is not pane and r.cancel is not None:
                r.cancel.cancel()
        self.w._write(
            "Committing the compaction",
            actions.commit_job,
            outcome,
            summary,
            on_ok=lambda entry: self._committed(pane, entry),
        )

    def _committed(self, pane: CandidatePane, entry: dict[str, Any]) -> None:
        name = pane.name
        # the single preview's summary (if any) stays, now made for another plan: nothing typed is lost
        self.w.doc.after_write(entry.get("id"), clear_summary=False)
        self.reset()
        self.view.panes[0].status.setText(f"Candidate {name} was committed (entry {entry.get('id')})")
        self.w.statusBar().showMessage(
            f"Candidate {name} appended as compaction entry {entry.get('id')}; the other candidates were discarded",
            10000,
        )
