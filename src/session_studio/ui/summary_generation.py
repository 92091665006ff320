"""Summary generation: the provider, Generate/Cancel with the streamed text, the before/after
contexts of the preview and the note on a summary made for another plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog

from session_studio.core.summary_sections import summary_tokens

from . import actions
from .document import PlanSignature
from .errors import explain_failure, report_failure, show_error
from .preview import (
    ContextPair,
    ProviderDialog,
    build_context_pair,
    custom_key_problem,
    provider_config,
)
from .window_parts import WindowParts

if TYPE_CHECKING:
    from session_studio.engine import CompactionOutcome
    from session_studio.llm import ProviderConfig

    from .summary_comparison import SummaryComparison

__all__ = ["SummaryGeneration"]


class SummaryGeneration(WindowParts):
    """Generating the summary of the current plan and showing what it changes."""

    comparison: SummaryComparison  # Preview ▸ Compare summaries (MainWindow makes it)

    def _may_drop_summary(self) -> bool:
        """Leaving this file drops the candidate summaries too: ask first when one was edited."""
        edited = self.comparison.edited_names()
        if edited and not self.ask_yes_no(
            "Discard the edited candidates?",
            f"Candidate {', '.join(edited)} of Compare summaries has text you typed or edited; "
            "leaving this file discards it.",
            yes="Discard and leave",
        ):
            return False
        return super()._may_drop_summary()

    def _go_preview(self) -> None:
        """The Preview tab, with the keys where the next step is: Generate while there is no
        generated summary of this plan (a typed one cannot be committed), else the summary to read
        or edit; with nothing to summarise, the tab bar."""
        self.tabs.setCurrentWidget(self.preview)
        p = self.preview
        if p.modes.currentIndex() != 0:  # Compare summaries: its own panes take the keys
            return
        generated = self.doc.outcome is not None and not self.doc.summary_is_stale
        if generated:
            p.summary.setFocus()
        elif p.generate_button.isEnabled():
            p.generate_button.setFocus()
        else:
            self.tabs.tabBar().setFocus()

    def _generate_from_menu(self) -> None:
        """Session ▸ Generate summary: what the Preview's Generate button does, from anywhere."""
        self._go_preview()
        self.preview.modes.setCurrentIndex(0)
        if self.preview.generate_button.isEnabled():
            self.preview.generate_button.click()

    def _refresh_contexts(self) -> None:
        st = self.doc.state
        if st is None or st.plan is None or st.cut is None or st.error:
            self.preview.set_contexts(None)
            return
        if self._ctx_op is not None:
            self._ctx_op.cancel()
        summary = self.doc.summary_text
        # a summary made for another plan: "after" is this plan's kept entries under that text
        outcome = None if self.doc.summary_is_stale else self.doc.outcome
        op = self.runner.op(build_context_pair, st, summary, outcome)
        op.on_success(self._on_contexts).on_failure(
            lambda e, tb: self.statusBar().showMessage(f"Context: {e}", 6000)
        )
        self._ctx_op = op
        op.start()

    def _on_contexts(self, pair: ContextPair) -> None:
        self._ctx_op = None
        self.preview.set_contexts(pair)

    def custom_provider_config(self) -> ProviderConfig | None:
        return provider_config(self.settings.custom_provider())

    def set_custom_provider(self, values: dict[str, str]) -> None:
        """Store the custom provider (as the dialog does) and select it in the preview pane."""
        self.settings.set_custom_provider(values)
        self.preview.provider.setCurrentIndex(self.preview.provider.findData("custom"))

    def edit_provider(self) -> None:
        dlg = ProviderDialog(self.settings.custom_provider(), self)
        self.last_dialog = dlg
        if dlg.exec() == QDialog.DialogCode.Accepted:
            self.set_custom_provider(dlg.values())
        dlg.deleteLater()  # answered: not left a child of the window, one per edit

    def _summarize_params(self, provider: str) -> actions.SummarizeParams | None:
        """The engine parameters of the current plan (what Generate and "Use it anyway" draft)."""
        d = self.doc
        st = d.state
        if st is None:
            return None
        loaded = d.loaded_state
        ctx = loaded.context if loaded else None
        return actions.SummarizeParams(
            leaf_id=self._entry_id(d.working_leaf),
            keep=d.keep,
            reserve=d.reserve,
            cut_entry_id=self._entry_id(st.path[d.manual_cut]) if d.manual_cut is not None else None,
            provider=provider,
            config=self.custom_provider_config() if provider == "custom" else None,
            model=ctx.model if ctx else None,
            thinking_level=ctx.thinking_level if ctx else None,
            custom_instructions=self.preview.custom_instructions(),
            plan_key=st.key,
            planner=loaded.planner if loaded else None,
        )

    def _generate(self, provider: str) -> None:
        d = self.doc
        st = d.state
        if d.session is None or st is None or d.preparation is None:
            self.statusBar().showMessage("Nothing to summarise with this cut", 6000)
            return
        if self._gen_op is not None:
            return
        self.preview.flush_summary()
        if self.preview.is_edited() and not self.ask_yes_no(
            "Replace your summary?",
            "The summary has text you typed or edited. Generating replaces it "
            "(Ctrl+Z in the summary brings it back).",
            yes="Generate and replace",
        ):
            return
        if provider == "custom" and self.custom_provider_config() is None:
            self.edit_provider()
            if self.custom_provider_config() is None:
                return
        if provider == "custom":
            problem = custom_key_problem(self.settings.custom_provider())
            if problem:
                show_error(self, "The summary could not be generated", problem)
                return
        from session_studio.llm import CancelToken

        params = self._summarize_params(provider)
        if params is None:
            return
        cancel = CancelToken()
        self._gen_cancel = cancel
        self.preview.set_running(True)
        self.settings.set_provider(provider)
        made_for = d.plan_signature()
        op = self.runner.op(
            actions.summarize_job,
            d.session,
            params,
            self.preview.stream.part.emit,
            cancel,
            self.preview.stream.note.emit,
            pool="network",
        )
        op.on_success(lambda out: self._on_generated(out, made_for)).on_failure(self._on_generate_failed)
        self._gen_op = op
        op.start()

    def _on_generated(self, outcome: CompactionOutcome, made_for: PlanSignature | None = None) -> None:
        self._gen_op = None
        self.preview.set_running(False)
        text = outcome.summary
        self.preview.finish_stream(text)
        # made for the plan it was generated for: if the plan moved meanwhile, the note says so
        self.doc.set_outcome(outcome, made_for)
        self._show_summary_size(text)
        self._update_stale_note()
        self._refresh_contexts()
        self._update_actions()

    def _show_summary_size(self, text: str) -> None:
        """The summary's size in the status line: as generated ("ready") or since edited."""
        o = self.doc.outcome
        if not text or o is None:
            return
        how = "ready" if text == o.summary else "edited"
        self.preview.status.setText(
            f"Summary {how} · {len(text):,} chars · ≈{summary_tokens(text):,} tokens (pi's estimate)"
        )

    def _on_generate_failed(self, exc: BaseException, tb: str) -> None:
        self._gen_op = None
        self.preview.set_running(False)
        self.preview.abandon_stream()  # nothing of a failed answer is the summary
        from session_studio.core.errors import StaleSessionError
        from session_studio.llm import LlmCancelledError

        if isinstance(exc, LlmCancelledError):
            self.preview.status.setText("Cancelled · the summary is as it was")
            return
        self.preview.status.setText("Failed · the summary is as it was")
        if isinstance(exc, StaleSessionError):
            self._stale(exc)
        else:
            report_failure(self, explain_failure(exc, tb, "The summary could not be generated"))

    def _cancel_generate(self) -> None:
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()

    def _update_stale_note(self) -> None:
        d = self.doc
        if not d.summary_is_stale:
            self.preview.stale_note.set_text(None)
            return
        self.preview.stale_note.set_text(d.stale_summary_text(), d.plan_signature() is not None)
