"""Write commands with their dialogs: commit, branch, branch with summary, fork, label, rename,
upgrade, repair. Each runs on the single write thread (_write); failures are explained by
errors.explain_failure. Built on SummaryGeneration: a commit or a branch summary uses its
provider and plan parameters."""

from __future__ import annotations

import html
import importlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from session_studio.core.branch_summary import collect_entries_for_branch_summary
from session_studio.core.migrate import version_name

from . import actions
from .errors import explain_failure, report_failure, show_error
from .plain import rich_escaped, rich_plain
from .preview import StreamDialog
from .summary_generation import SummaryGeneration
from .tasks import Operation

if TYPE_CHECKING:
    from session_studio.engine import CompactionOutcome

__all__ = ["WriteCommands"]

log = logging.getLogger(__name__)


def _fully_imported(name: str) -> bool:
    """Whether module ``name`` is imported and done (not one another thread is still running)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


class WriteCommands(SummaryGeneration):
    """The commands that write the session file, each behind its dialog."""

    def _write(
        self, what: str, fn: Callable[..., Any], *args: object, on_ok: Callable[[Any], None]
    ) -> Operation:
        """Run a write job on the single write thread; failures become actionable messages. Its
        progress dialog has no Cancel: a write is never abandoned unreported (a job that can stop
        before it writes, a branch summary's LLM call, is cancelled through its own token)."""
        self.doc.writing = True
        self._update_actions()
        op = self.runner.op(fn, *args, pool="write").with_progress(what, self, cancellable=False)

        def ok(result: object) -> None:
            self.doc.writing = False
            on_ok(result)
            self._update_actions()

        op.on_success(ok).on_failure(lambda e, tb: self._on_write_failed(what, e, tb))
        return op.start()

    def _on_write_failed(self, what: str, exc: BaseException, tb: str) -> None:
        from session_studio.core.errors import StaleSessionError
        from session_studio.llm import LlmCancelledError

        self.doc.writing = False
        self._update_actions()
        if isinstance(exc, StaleSessionError):
            self._stale(exc)
        elif isinstance(exc, LlmCancelledError):
            self.statusBar().showMessage("Cancelled: nothing was written", 6000)
        else:
            report_failure(self, explain_failure(exc, tb, f"{what} failed"))
        self.doc.refresh()

    def commit(self) -> None:
        self.preview.flush_summary()
        why = actions.disabled_reasons(self.doc, self.doc.writing)["commit"]
        if why:
            self.statusBar().showMessage(f"Cannot commit: {why}", 8000)
            return
        if self.doc.summary_is_stale:
            self._commit_stale_summary()
            return
        outcome = self.doc.outcome
        summary = self.doc.summary_text
        text, details = self._commit_summary(outcome, summary)
        if not self.ask_yes_no("Commit compaction", text, details, "Append compaction"):
            return
        self._write(
            "Committing the compaction", actions.commit_job, outcome, summary, on_ok=self._on_committed
        )

    def _commit_stale_summary(self) -> None:
        """ "Use it anyway": commit the summary made for another plan against the current plan."""
        d = self.doc
        params = self._summarize_params("offline")
        now = d.plan_signature()
        if d.session is None or params is None or now is None:
            return
        summary = d.summary_text
        # the call that wrote the text is what it cost, whatever plan it is committed for
        usage = list(d.outcome.usage) if d.outcome is not None else []
        if not self.ask_yes_no(
            "Use this summary anyway?",
            f"<p>{html.escape(d.stale_summary_text())}</p>"
            f"<p>Append a compaction entry to <b>{html.escape(os.path.basename(d.session.path))}</b> "
            f"with this text ({len(summary):,} characters) for the current plan, "
            f"<b>{html.escape(now.describe())}</b>? Its file lists are the ones written in the text.</p>",
            yes="Use it anyway",
            default_yes=False,  # a surprise on Commit: Return must not write it
        ):
            return
        self._write(
            "Committing the compaction",
            actions.commit_current_job,
            d.session,
            params,
            summary,
            usage,
            on_ok=self._on_committed,
        )

    def _commit_summary(self, outcome: CompactionOutcome, summary: str) -> tuple[str, str]:
        import dataclasses

        from session_studio.core.jsvalue import JsTypeError

        final = dataclasses.replace(outcome, summary=summary)
        d = final.draft
        s = d.session
        fk = d.first_kept_entry_id
        fk_i = s.get_index(fk)
        who = f" ({self._entry_words(fk_i, 80)})" if fk_i is not None else ""
        before = d.preparation.tokens_before
        try:
            after = final.estimated_tokens_after()
        except JsTypeError:
            after = "?"

        def n(x: object) -> str:
            return f"{x:,.0f}" if isinstance(x, int | float) else str(x)

        from session_studio.llm.offline import is_offline_draft

        read, modified = d.file_lists()
        # the offline draft is the default summariser: say so before it becomes, for pi's model,
        # the whole history before the cut
        draft_note = (
            "<p><b>This summary is the offline draft</b>, made from the conversation without a model. "
            "pi will give it to the model in place of everything before the cut. To have a model "
            "write it, pick a provider in Preview and generate it again.</p>"
            if is_offline_draft(summary)
            else ""
        )
        text = (
            f"<p>Append a compaction entry to <b>{html.escape(os.path.basename(s.path))}</b>?</p>"
            + draft_note
            + "<p>"
            + "<br>".join(
                [
                    f"First kept entry: <code>{rich_escaped(fk, 80)}</code>{rich_escaped(who, 200)}",
                    f"Context tokens: {n(before)} → ≈{n(after)}",
                    f"Summary: {len(summary):,} characters · {len(read)} files read · {len(modified)} modified",
                    *(
                        ["Split turn: the turn prefix is summarised separately"]
                        if d.cut.is_split_turn
                        else []
                    ),
                ]
            )
            + "</p><p>pi picks the new entry up the next time it loads the session.</p>"
        )
        details = (
            "Read files:\n"
            + "\n".join(f"  {f}" for f in read)
            + "\n\nModified files:\n"
            + "\n".join(f"  {f}" for f in modified)
        )
        return text, details

    def _on_committed(self, entry: dict[str, Any]) -> None:
        self.doc.after_write(entry.get("id"), clear_summary=True)
        self.statusBar().showMessage(
            f"Compaction appended (entry {entry.get('id')}, {entry.get('tokensBefore'):,} tokens before)",
            10000,
        )

    #: the engine's module (pydantic, the writers, the summariser's steps: ~0.2-0.4 s of Python and
    #: ~19 MB the first time), imported in a worker when the user is about to need it (ensure_engine)
    ENGINE_MODULE = "session_studio.engine"
    _engine_ready = False
    _engine_import: Operation | None = None
    #: what waits for the import: a command to run once it is there, and its failure's title
    _after_engine: list[tuple[Callable[[], None], str]] | None = None

    def ensure_engine(self, then: Callable[[], None] | None = None, failure: str = "") -> bool:
        """Whether the engine is imported. Where not, it is imported in a worker, once (a window
        that only shows sessions never holds it), and ``then`` (a command) runs once it is there:
        its first import is never made in a click's GUI step (where another worker is importing it,
        that worker, not the GUI thread, waits for it); a second click meanwhile starts nothing
        more. ``failure``: the title that reports a failed import to ``then``'s user."""
        if self._engine_ready:
            return True
        if _fully_imported(self.ENGINE_MODULE):  # by a job's own worker (a Generate, a write)
            self._engine_ready = True
            self.doc.engine_imported()  # a recovery may be waiting for it
            return True
        if then is not None:
            if self._after_engine is None:
                self._after_engine = []
            if all(waiting != then for waiting, _ in self._after_engine):  # a second click: once
                self._after_engine.append((then, failure))
        if self._engine_import is None:
            self._engine_import = (
                self.runner.op(importlib.import_module, self.ENGINE_MODULE, pool="network")
                .on_success(self._engine_imported)
                .on_failure(self._engine_failed)
            )
            self._engine_import.start()
        return False

    def _engine_imported(self, _module: object) -> None:
        self._engine_import = None
        self._engine_ready = True
        self.doc.engine_imported()
        waiting, self._after_engine = self._after_engine or [], None
        for then, _failure in waiting:
            then()

    def _engine_failed(self, e: BaseException, tb: str) -> None:
        self._engine_import = None
        waiting, self._after_engine = self._after_engine or [], None
        if waiting:  # a command waited for it: say why it does not run (once)
            report_failure(
                self, explain_failure(e, tb, waiting[0][1] or "Cannot load Session Studio's engine")
            )
        else:
            log.warning("importing the engine in the background failed: %s", e)

    def branch_here(self) -> None:
        if not self.ensure_engine(self.branch_here, "Cannot branch here"):
            return
        from session_studio.core.errors import SessionStudioError
        from session_studio.engine import branch_to

        d = self.doc
        s = d.session
        target = self._target_for("branch", d.selected)
        if s is None or target is None:
            return
        try:
            out = branch_to(s, target, from_leaf_id=self._entry_id(d.working_leaf_index()))
        except SessionStudioError as e:
            report_failure(self, explain_failure(e, "", "Cannot branch here"))
            return
        nav = out.navigation
        new_leaf = s.get_index(nav.new_leaf_id) if nav.new_leaf_id is not None else None
        if nav.new_leaf_id is None or new_leaf is None:
            show_error(
                self,
                "Branching before the first entry",
                "pi would start a new root here; Session Studio cannot plan an empty path. Nothing was written.",
            )
            return
        d.set_working_leaf(new_leaf)
        d.select(new_leaf)
        extra = ""
        if nav.editor_text:
            extra = f"\n\npi would put this text back in its editor:\n{nav.editor_text[:500]}"
        self.statusBar().showMessage("Working leaf moved: planning and preview now start there", 10000)
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Information)
        box.setWindowTitle("Branch here")
        box.setText("The working leaf moved to the selected entry.")
        # the engine's note speaks CLI (--summarize, --label): say it with this window's commands
        box.setInformativeText(
            rich_plain(
                "Planning and the preview now start from this entry; nothing was written, so pi still "
                "continues from the file's leaf. To record the move in the file, use "
                f"{_menu_path(self.a_branch_sum)} (leaves a summary of the branch you leave) or "
                f"{_menu_path(self.a_label)} (bookmarks this entry)." + extra  # extra: session text
            )
        )
        self.last_dialog = box
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # read: not left a child of the window
        box.open()

    def branch_with_summary(self) -> None:
        """Ask, then leave the current branch for the selected entry with a summary of what is left.
        The question counts the entries left behind: found in a worker (pi's walk over both paths
        took 85-130 ms of the GUI thread on the 1 GB session)."""
        d = self.doc
        s = d.session
        record = d.selected
        target = self._target_for("branch_summary", record)
        if s is None or target is None:
            return
        from_leaf = self._entry_id(d.working_leaf_index())
        if self._branch_count_op is not None:
            self._branch_count_op.cancel()
        self.statusBar().showMessage("Counting the entries the branch leaves behind…")

        def count() -> int:
            return len(collect_entries_for_branch_summary(s, from_leaf, target).indices)

        def counted(left: int) -> None:
            self._branch_count_op = None
            self.statusBar().clearMessage()
            if d.session is s and d.selected == record:  # else the user has moved on meanwhile
                self._ask_branch_with_summary(target, record, left)

        def failed(exc: BaseException, tb: str) -> None:
            self._branch_count_op = None
            self.statusBar().clearMessage()
            report_failure(self, explain_failure(exc, tb, "The branch could not be planned"))

        op = self.runner.op(count).on_success(counted).on_failure(failed)
        self._branch_count_op = op
        op.start()

    def _ask_branch_with_summary(self, target: str, record: int, left: int) -> None:
        from session_studio.llm import CancelToken

        d = self.doc
        s = d.session
        assert s is not None
        provider = str(self.preview.provider.currentData())
        label = self.preview.provider.currentText()
        if left:
            what = (
                f"The {left:,} entr{'ies' if left != 1 else 'y'} left behind (newest first, as many as "
                f"the summary's token budget takes) are summarised with <b>{html.escape(label)}</b> and a "
                "<code>branch_summary</code> entry is appended: it becomes the new leaf."
            )
        else:  # pi moves the leaf without a summary then, and writes nothing
            what = (
                "No entry is left behind (the selected entry follows the working leaf): pi writes no "
                "summary and nothing is appended; the working leaf just moves there."
            )
        if not self.ask_yes_no(
            "Branch with summary",
            f"Leave the current branch and continue from {rich_escaped(target, 80)}"
            f" ({rich_escaped(self._entry_words(record, 60), 200)})?<br>{what}",
            yes="Summarise and branch" if left else "Move the leaf",
        ):
            return
        cancel = CancelToken()
        dlg = StreamDialog("Branch summary", self)
        dlg.cancel_requested.connect(cancel.cancel)
        self.last_dialog = dlg
        dlg.show()
        config = self.custom_provider_config() if provider == "custom" else None

        def done(out: object) -> None:
            entry = getattr(out, "entry", None)
            note = str(getattr(out, "note", "") or "Branched")
            note = note[:1].upper() + note[1:]  # the engine's note is the CLI's line, lower case
            dlg.finish(note)
            self.doc.after_write(entry.get("id") if isinstance(entry, dict) else None)
            self.statusBar().showMessage(note, 10000)

        def failed(exc: BaseException, _tb: str) -> None:
            from session_studio.llm import LlmCancelledError

            # which of the two: the reason of a failure is the message that follows
            cancelled = isinstance(exc, LlmCancelledError) or cancel.cancelled
            dlg.finish(f"{'Cancelled' if cancelled else 'Failed'}: nothing was written.")

        op = self._write(
            "Branch with summary",
            actions.branch_job,
            s,
            target,
            True,
            provider,
            config,
            _window_override(d),
            dlg.stream.text.emit,
            cancel,
            self._entry_id(d.working_leaf_index()),
            *_branch_profile(d),
            on_ok=done,
        )
        op.hide_progress()  # the stream dialog shows it, with the Cancel that stops the request
        op.failed.connect(failed)

    def fork(self) -> None:
        if not self.ensure_engine(self.fork, "Cannot fork"):
            return  # (the suggested file name comes from the engine)
        d = self.doc
        s = d.session
        leaf = self._target_for("fork", d.selected if d.selected >= 0 else d.working_leaf_index())
        if s is None or leaf is None:
            return
        default, new_id, stamp = actions.default_fork_target(s)
        path = self.ask_save_path("Fork to a new session file", default)
        if not path:
            return
        # keep the header id in step with pi's file name when the suggested name is used
        ident = (new_id, stamp) if os.path.abspath(path) == os.path.abspath(default) else (None, None)

        profile = _branch_profile(d)[0]  # the pi the window reads the file as

        def done(result: object) -> None:
            new, warning = result if isinstance(result, tuple) else (result, "")
            self.statusBar().showMessage(f"Forked to {new}", 10000)
            note = f"<br><br>Note: {html.escape(warning)}." if warning else ""
            if self.ask_yes_no(
                "Fork written", f"Wrote {html.escape(str(new))}.{note}<br>Open it now?", yes="Open"
            ):
                self.open_path(str(new))

        self._write("Forking", actions.fork_job, s, leaf, path, *ident, profile, on_ok=done)

    def label_entry(self) -> None:
        d = self.doc
        s = d.session
        target = self._target_for("label", d.selected)
        if s is None or target is None:
            return
        cur = s.label_of(target) or ""
        index = s.get_index(target)
        what = f" ({self._entry_words(index, 60)})" if index is not None else ""
        # the entry's text is session content: escaped, never taken for HTML by Qt's label
        label = f"<qt>Label of {rich_escaped(target + what, 200)}<br>(empty clears it):</qt>"
        text = self.ask_text("Label entry", label, cur)
        if text is None or text.strip() == cur:
            return

        def labelled(_entry: object) -> None:
            self.doc.after_write(target)
            self.statusBar().showMessage("Label cleared" if not text.strip() else "Label set", 6000)

        self._write(
            "Labelling",
            actions.label_job,
            s,
            target,
            text.strip() or None,
            on_ok=labelled,
        )

    def omit_failed_attempt(self) -> None:
        """pi 1.6.0's overflow recovery, its first step: the failed answer and its tool results
        leave the context through context edits (the plan after them is the one pi compacts)."""
        if not self.ensure_engine(self.omit_failed_attempt, "Omitting the failed attempt failed"):
            return
        from session_studio.core.errors import WriteError
        from session_studio.core.explain import recovery_text
        from session_studio.engine.context_edits import recovery_omission

        d = self.doc
        s, st = d.session, d.state
        why = actions.disabled_reasons(d, d.writing)["omit_attempt"]
        if why or s is None or st is None:
            self.statusBar().showMessage(why or "", 8000)
            return
        try:
            targets = recovery_omission(st)
        except WriteError as e:
            report_failure(self, explain_failure(e, "", "Omitting the failed attempt failed"))
            return
        if not targets:
            return
        ids = [str(s.records[r].id) for r in targets]
        answer = f"the failed answer #{st.positions.get(targets[0], 0)} ({html.escape(ids[0])})"
        results = len(targets) - 1
        also = f" and its {results} tool result{'s' if results != 1 else ''}" if results else ""
        then = ""
        if d.recovery is not None:  # where pi's compaction then cuts (planned in a worker by now)
            said = recovery_text(st, d.recovery)
            then = f"<br><br>{html.escape(said[:1].upper() + said[1:])}."
        if not self.ask_yes_no(
            "Omit failed attempt",
            f"Take {answer}{also} out of the context?<br><br>pi 1.6.0 does this before it compacts for "
            f"an overflow: it appends a <code>context_edit</code> entry (replacement null) for each. The "
            "entries stay in the file; the plan then shows the compaction pi's recovery makes." + then,
            yes="Omit",
            default_yes=False,
        ):
            return
        sel = self._entry_id(d.selected)

        def done(written: object) -> None:
            self.doc.after_write(sel)
            count = len(written) if isinstance(written, list) else 0
            self.statusBar().showMessage(f"Omitted from the context: {count} context edit(s) appended", 8000)

        self._write("Omitting the failed attempt", actions.omit_attempt_job, s, ids, on_ok=done)

    def rename_session(self) -> None:
        d = self.doc
        s = d.session
        why = actions.disabled_reasons(d, d.writing)["rename"]
        if why or s is None:
            self.statusBar().showMessage(why or "", 8000)
            return
        cur = s.session_name() or ""
        text = self.ask_text(
            "Rename session",
            "Name of this session, as pi's /resume lists it (appended as a session_info entry):",
            cur,
        )
        if text is None or not text.strip() or text.strip() == cur:
            return
        sel = self._entry_id(d.selected)

        def done(_e: object) -> None:
            self.doc.after_write(sel)
            self._on_loaded_title()
            self.statusBar().showMessage("Session renamed", 6000)

        self._write("Renaming", actions.rename_job, s, text, on_ok=done)

    def repair_torn_tail(self) -> None:
        """Cut off a line Session Studio was appending when it was interrupted, then reload."""
        s = self.doc.session
        if s is None or s.torn_tail is None or self.doc.writing:
            return

        def done(message: object) -> None:
            self.doc.reload()
            self.statusBar().showMessage(str(message), 12000)

        self._write("Repairing", actions.repair_job, s, on_ok=done)

    def upgrade(self) -> None:
        d = self.doc
        s = d.session
        why = actions.disabled_reasons(d, d.writing)["upgrade"]
        if why or s is None:
            self.statusBar().showMessage(why or "", 8000)
            return
        if not self.ask_yes_no(
            "Upgrade legacy file",
            f"Rewrite this {version_name(s.source_version)} file as version 3, the way pi would on "
            "open?<br>A backup copy of the original is kept next to it. Your settings, cut and summary "
            "stay as they are.",
            yes="Upgrade",
        ):
            return

        def done(res: tuple[Path, Path]) -> None:
            _path, backup = res
            self.doc.reload()
            self.statusBar().showMessage(f"Upgraded; backup at {backup}", 12000)

        self._write("Upgrading", actions.upgrade_job, s, on_ok=done)


def _menu_path(action: QAction) -> str:
    """ "Session ▸ Branch with summary…" for an action, as the user finds it in the menu bar."""
    name = action.text().replace("&", "")
    menus = [w for w in action.associatedObjects() if hasattr(w, "title") and w.title()]
    return f"{menus[0].title().replace('&', '')} ▸ {name}" if menus else name


def _window_override(doc: Any) -> int | None:
    """The planner's context window when the user changed it from the one pi's settings and the
    session's model give (the window's `--context-window`); else None: the budget's own choice."""
    loaded = doc.loaded_state
    if loaded is None or not doc.window or doc.window == loaded.window:
        return None
    return int(doc.window)


def _branch_profile(doc: Any) -> tuple[Any, Any]:
    """(profile, thinking level) a branch summary is written with: the pi the window reads the
    file as (the planner's profile, its reason shown there), and the session's thinking level."""
    from session_studio.core.profile import PROFILE_0_80_2

    loaded = doc.loaded_state
    choice = loaded.profile if loaded is not None else None
    ctx = loaded.context if loaded is not None else None
    return (choice.profile if choice is not None else PROFILE_0_80_2), (ctx.thinking_level if ctx else None)
