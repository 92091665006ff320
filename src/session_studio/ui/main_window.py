"""The main window: browser page and session workspace. All connects live in _connect_signals()."""

from __future__ import annotations

import functools
import html
import os
import platform
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QPersistentModelIndex, QPoint, QSize, QStandardPaths, Qt, QTimer, qVersion
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QIcon,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import QApplication, QFileDialog, QLayout, QMessageBox

from session_studio import __version__
from session_studio.core.allocator import release_free_memory
from session_studio.core.listing import SessionInfo, default_sessions_dir, fmt_size, list_sessions
from session_studio.core.migrate import CURRENT_SESSION_VERSION, version_name
from session_studio.core.profile import PROFILES, headerless_verdict

from . import actions
from .announce import announce
from .document import Loaded, Partial, PlanState, SessionDocument
from .errors import Failure, explain_failure, report_failure, report_unexpected
from .export_dialog import ExportChoice, ExportDialog
from .key_cursor import KeyCursorView
from .navigation import TreeNavigation
from .pane_keys import cycle_divider_focus
from .plain import rich_tooltip
from .profile_compare import ProfileCompareController
from .real_tokens import RealTokenCounts
from .settings import AppSettings
from .shortcuts import PopupKeysFirst, return_clicks_buttons
from .summary_comparison import SummaryComparison
from .tasks import TaskRunner
from .theme import apply_theme, current_theme
from .why import explain_cut
from .window_parts import PAGE_BROWSER, PAGE_SESSION, TIMELINE_HEIGHTS
from .window_state import WindowState
from .write_commands import WriteCommands

if TYPE_CHECKING:
    from session_studio.core.explain import RecoveryCut
    from session_studio.core.preparation import Preparation

    from .help_page import HelpDialog

__all__ = ["MainWindow", "sample_sessions_dir"]


APP_ID = "io.github.session_studio.SessionStudio"


def icon_dirs() -> list[Path]:
    """Where the app icon may be: a PyInstaller bundle, a source checkout, the installed package."""
    out = []
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        out.append(Path(meipass) / "resources" / "icons")
    out.append(Path(__file__).resolve().parents[3] / "resources" / "icons")
    out.append(Path(__file__).resolve().parents[1] / "resources" / "icons")
    return out


def app_icon() -> QIcon:
    icon = QIcon()
    for d in icon_dirs():
        for f in (
            d / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png",
            d / "hicolor" / "256x256" / f"{APP_ID}.png",
            d / f"{APP_ID}.png",
            d / "session-studio.svg",
        ):
            if f.is_file():
                icon.addFile(str(f))
        if not icon.isNull():
            return icon
    return icon


#: a session that ends in a failed attempt has its recovery planned with the engine, imported this
#: long after the session is shown: the import (~0.2-0.4 s of Python) run while the new tree's
#: first paints and branch turns ran made those wait for the GIL (a 4 MB session's longest loading
#: stall 97-110 ms wall instead of 61-72). Other sessions import it only when the user turns to a
#: summary or a write (WriteCommands.ensure_engine)
PRELOAD_AFTER_MS = 1500
#: the heap's free pages go back to the system this long after the window's background work ends:
#: a load, a search's outline or a re-plan leave megabytes of them between live blocks (after
#: loading the 1 GB session, 16 MB; core.allocator.release_free_memory, ~3 ms)
TRIM_AFTER_IDLE_MS = 300


def _release_free_memory_in_background() -> None:
    """core.allocator.release_free_memory on a thread of its own (a few ms on a big session's heap,
    none of them the GUI thread's; not a TaskRunner job, whose end would start the next trim)."""
    threading.Thread(target=release_free_memory, name="release-free-memory", daemon=True).start()


def sample_sessions_dir() -> str:
    from importlib.resources import files

    return str(files("session_studio") / "resources" / "samples")


class MainWindow(WriteCommands, TreeNavigation, WindowState):
    """Builds the window from its parts, makes every connection (``_connect_signals``) and answers
    the document's events; the behaviours live in their mixins (see window_parts)."""

    def __init__(
        self,
        settings: AppSettings | None = None,
        runner: TaskRunner | None = None,
        sessions_root: str | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        #: the theme of this run only (--theme), else None: the saved setting
        self._theme_override: str | None = None
        self.runner = runner or TaskRunner(self)
        #: gives the heap's free pages back once the background work has been over a moment
        self._trim_timer = QTimer(self)
        self._trim_timer.setSingleShot(True)
        self._trim_timer.setInterval(TRIM_AFTER_IDLE_MS)
        self._trim_timer.timeout.connect(lambda: _release_free_memory_in_background())
        self.sessions_root = sessions_root or str(default_sessions_dir())
        self.doc = SessionDocument(self.runner, self)
        self.doc.profile_plain = self.settings.pi_version()
        self.real_tokens = RealTokenCounts(self.doc, self.runner, self)
        self._gen_op = None
        self._gen_cancel = None
        self.last_dialog = None
        #: Help ▸ How pi compacts, made on its first F1
        self.help_dialog: HelpDialog | None = None
        self.tree_menu = None
        self._ctx_op = None
        self._branch_count_op = None
        self._opening: str | None = None  # the file being opened (Recent bookkeeping on failure)
        self.setWindowTitle("Session Studio")
        icon = app_icon()
        if not icon.isNull():
            self.setWindowIcon(icon)
        self.setAcceptDrops(True)
        # the default size, within the screen (a 1440x900 window on a 1366x768 laptop cut off the
        # planner on the right)
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() if screen is not None else QSize(1440, 900)
        self.resize(min(1440, room.width()), min(900, room.height()))
        self._build_widgets()
        self._init_navigation()
        self._build_actions()
        self._connect_signals()
        self._sized = self._restore_state()
        self._show_recent()
        self._update_actions()
        return_clicks_buttons(self)
        self._popup_keys = PopupKeysFirst(self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self._popup_keys)

    # ------------------------------------------------------------------ signals
    def _connect_signals(self) -> None:
        d = self.doc
        d.loading.connect(self._on_loading)
        d.loaded.connect(self._on_loaded)
        d.partial_loaded.connect(self._on_partial)
        d.load_progress.connect(self._on_load_progress)
        self.load_banner.cancel.clicked.connect(d.cancel_load)
        d.load_failed.connect(self._on_load_failed)
        d.appended.connect(self._on_appended)
        d.plan_changed.connect(self._on_plan)
        d.recovery_changed.connect(self._on_recovery)
        d.engine_wanted.connect(self._engine_for_recovery)
        d.after_changed.connect(self._on_after_changed)
        d.selection_changed.connect(self._on_selection)
        d.preparation_ready.connect(self._on_preparation)
        d.message.connect(lambda t: self.statusBar().showMessage(t, 6000))
        self.statusBar().messageChanged.connect(self._announce)
        d.disk_changed.connect(self._on_disk_changed)
        d.closed.connect(self._on_closed)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
        self.runner.busy_changed.connect(self._on_busy_changed)
        # a background task that fails with no failure handler is a crash, never silence
        self.runner.unhandled.connect(report_unexpected)
        # real token counts next to pi's estimate: the bar, the inspector's line, the tree's tooltips
        self.real_tokens.path_changed.connect(self.bar.set_real)
        self.real_tokens.entries_counted.connect(self.inspector.refresh_tokens)
        self.inspector.token_line = self.real_tokens.entry_line
        self.tree_model.token_line = self.real_tokens.entry_line
        self.tree_model.estimate_of = self.real_tokens.estimate
        self.real_tokens.edit_facts = lambda: self.tree_model.edits  # an edited entry: what pi sends
        self.a_count_provider.triggered.connect(
            lambda: self.real_tokens.count_with_provider(
                self.custom_provider_config() if self.preview.provider.currentData() == "custom" else None
            )
        )
        self.real_tokens.provider_counted.connect(lambda t: self.statusBar().showMessage(t, 15000))
        self.real_tokens.provider_failed.connect(
            lambda e, tb: report_failure(
                self, explain_failure(e, tb, "The provider could not count the tokens")
            )
        )

        self.browser.open_requested.connect(self.open_path)
        self.browser.open_file_dialog.connect(self.open_dialog)
        self.browser.refresh_requested.connect(self.show_browser)
        self.browser.back_requested.connect(self._back_to_session)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current)
        self.tree.doubleClicked.connect(lambda ix: self._cut_at(self.tree_model.record_of(ix)))
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._tree_context_menu)
        # Shift+F10 opens it too, as in GTK and Windows programs (keyboards without a Menu key)
        menu_key = QShortcut(QKeySequence("Shift+F10"), self.tree)
        menu_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        menu_key.activated.connect(lambda: self._tree_context_menu(QPoint(-1, -1)))
        self.a_copy_id.triggered.connect(self._copy_entry_id)
        self.inspector.copy_button.setDefaultAction(self.a_copy_id)
        self.tree.expanded.connect(self._on_tree_expanded)
        self.filter_combo.currentIndexChanged.connect(self._apply_filter)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        # Escape in the search clears it (the whole tree again); a second one goes back to the tree
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.search)
        escape.setContext(Qt.ShortcutContext.WidgetShortcut)
        escape.activated.connect(lambda: self.search.clear() if self.search.text() else self.tree.setFocus())
        # Down (as in the session browser's search) and Return go to the rows found
        down = QShortcut(QKeySequence(Qt.Key.Key_Down), self.search)
        down.setContext(Qt.ShortcutContext.WidgetShortcut)
        down.activated.connect(self._search_to_tree)
        self.search.returnPressed.connect(self._search_to_tree)
        self._search_timer.timeout.connect(self._apply_filter)
        self.tree_model.search_text_progress.connect(self._on_search_text_progress)
        self.tree_model.content_search_progress.connect(self._on_search_text_progress)
        self.search_scope.setDefaultAction(self.a_search_content)
        self.browser.runner = self.runner
        self.browser.use_content_action(self.a_search_content)
        self.a_search_content.setChecked(self.settings.search_content())
        self.a_search_content.toggled.connect(self._on_search_scope)
        self._show_search_scope()
        self.bar.entry_clicked.connect(d.select)
        self.a_timeline.toggled.connect(self._show_timeline)
        d.plan_changed.connect(self.timeline.follow_plan)
        d.after_changed.connect(self.timeline.follow_plan)
        d.closed.connect(lambda: self.timeline.follow_plan(None))
        d.selection_changed.connect(self.timeline.set_selected)
        self.timeline.chart.entry_clicked.connect(d.select)
        self.planner.params_changed.connect(lambda k, r, w: d.set_params(k, r, w))
        self.planner.auto_cut_requested.connect(d.clear_manual_cut)
        self.planner.preview_requested.connect(self._go_preview)
        self.planner.commit_requested.connect(self.commit)
        self.planner.profile_requested.connect(lambda v: d.set_profile(pin=v))
        self.planner.plain_default_requested.connect(self._set_plain_default)
        self.compare_controller = ProfileCompareController(d, self.runner, self.compare)
        self.compare.entry_clicked.connect(d.select)
        self.planner.compare_requested.connect(lambda: self.tabs.setCurrentWidget(self.compare))
        self.a_compare.triggered.connect(lambda: self.tabs.setCurrentWidget(self.compare))

        def show_profile(res: Loaded) -> None:
            self.tree_model.forget_estimates()
            self.planner.set_profile(res.profile, d.profile_pin, d.profile_plain)
            self.planner.set_source(res.settings_source)
            self._show_issues(res)  # what pi does with a header-less file depends on which pi

        d.profile_changed.connect(show_profile)
        self.preview.generate_requested.connect(self._generate)
        self.preview.cancel_requested.connect(self._cancel_generate)
        self.preview.summary_edited.connect(d.set_summary)
        d.summary_changed.connect(self.preview.load_summary)
        d.summary_changed.connect(self._show_summary_size)
        self.preview.use_anyway_requested.connect(self.commit)
        self.preview.regenerate_requested.connect(self._generate)
        # the summariser chosen last time; never chosen: pi's default model once a session shows
        # whether pi's settings name one (see _offer_summariser)
        saved = self.settings.provider()
        chosen = self.preview.provider.findData(saved) if saved is not None else -1
        if chosen >= 0:
            self.preview.provider.setCurrentIndex(chosen)
        self.preview.provider.activated.connect(
            lambda i: self.settings.set_provider(str(self.preview.provider.itemData(i)))
        )
        self.comparison = SummaryComparison(self)  # Preview ▸ Compare summaries (its own connections)
        self.legacy_banner.upgrade_button.clicked.connect(self.upgrade)
        self.legacy_banner.fork_button.clicked.connect(self.fork)
        self.tabs.currentChanged.connect(self._on_tab)
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_fit_pending", False))

        self.a_open.triggered.connect(self.open_dialog)
        self.a_browser.triggered.connect(self.show_browser)
        self.a_reload.triggered.connect(self._reload)
        self.a_close.triggered.connect(self.close_session)
        self.a_export.triggered.connect(self.export_report)
        self.banner.repair.clicked.connect(self.repair_torn_tail)
        self.a_quit.triggered.connect(self.close)
        self.a_find.triggered.connect(self._focus_search)
        self.a_next.triggered.connect(lambda: self._step(1))
        self.a_prev.triggered.connect(lambda: self._step(-1))
        self.a_leaf.triggered.connect(self._goto_leaf)
        self.a_goto_cut.triggered.connect(self._goto_cut)
        self.a_cut_here.triggered.connect(lambda: self._cut_at(d.selected))
        self.a_auto_cut.triggered.connect(d.clear_manual_cut)
        self.a_preview.triggered.connect(self._go_preview)
        self.a_generate.triggered.connect(self._generate_from_menu)
        for n, a in enumerate(self.tab_actions):
            a.triggered.connect(lambda _c=False, n=n: self.tabs.setCurrentIndex(n))
        self.a_commit.triggered.connect(self.commit)
        self.a_branch.triggered.connect(self.branch_here)
        self.a_branch_sum.triggered.connect(self.branch_with_summary)
        self.a_fork.triggered.connect(self.fork)
        self.a_label.triggered.connect(self.label_entry)
        self.a_rename.triggered.connect(self.rename_session)
        self.a_omit_attempt.triggered.connect(self.omit_failed_attempt)
        self.a_divider.triggered.connect(
            lambda: cycle_divider_focus(self.stack.currentWidget() or self, QApplication.focusWidget())
        )
        self.a_upgrade.triggered.connect(self.upgrade)
        self.a_provider.triggered.connect(self.edit_provider)
        self.preview.provider_settings_requested.connect(self.edit_provider)
        self.a_about.triggered.connect(self.about)
        self.a_shortcuts.triggered.connect(self.show_shortcuts)
        self.a_help.triggered.connect(self.show_help)
        self.theme_group.triggered.connect(self._set_theme)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)

    # ------------------------------------------------------------------ browser
    def _search_to_tree(self) -> None:
        """From the entry search to its rows: the search typed is applied now (not after its
        pause), and the tree takes the focus on its current row, else its first one."""
        if self._search_timer.isActive():
            self._search_timer.stop()
            self._apply_filter()
        if not self.tree.currentIndex().isValid() and self.tree_model.rowCount():
            self.tree.setCurrentIndex(self.tree_model.index(0, 0))
        self.tree.setFocus()

    def show_browser(self) -> None:
        self.stack.setCurrentIndex(PAGE_BROWSER)
        # the keys where the README says they are: typing searches, Down goes to the first session
        # (after Ctrl+B they were on the list, with no current row, and typing went nowhere)
        self.browser.search.setFocus()
        self.browser.set_listing()
        root = self.sessions_root

        def work() -> tuple[list[SessionInfo], bool]:
            infos = list_sessions(root)
            if infos:
                return infos, False
            return list_sessions(sample_sessions_dir()), True

        self.runner.op(work).on_success(lambda r: self.browser.set_sessions(r[0], root, r[1])).start()
        self._show_recent()
        self._update_actions()

    def _announce(self, text: str) -> None:
        """Say a status message to a screen reader, if one listens: "Not a cut point: …" after Ctrl+K
        and "Compaction appended" reached only the eyes."""
        announce(self.statusBar(), text)

    def _back_to_session(self) -> None:
        """Escape in the session browser: back to the open session (nothing open: stay)."""
        if self.doc.session is not None:
            self.stack.setCurrentIndex(PAGE_SESSION)
            self._update_actions()
            self._focus_tree_unless_busy_elsewhere()

    def open_dialog(self) -> None:
        start = os.path.dirname(self.doc.path) if self.doc.path else self.sessions_root
        path, _ = QFileDialog.getOpenFileName(
            self, "Open session", start, "pi sessions (*.jsonl);;All files (*)"
        )
        if path:
            self.open_path(path)

    def ask_export(self, directory: str, stem: str, has_summary: bool) -> ExportChoice | None:
        """The export dialog (tests replace this method)."""
        dialog = ExportDialog(self, directory, stem, has_summary)
        try:
            return dialog.choice() if dialog.exec() and dialog.choice().path else None
        finally:
            dialog.deleteLater()  # answered: not left a child of the window, one per export

    def export_report(self) -> None:
        """File ▸ Export…: a report of the window's current plan (leaf, settings, manual cut, profile)."""
        d = self.doc
        res, st = d.loaded_state, d.state
        if d.session is None or res is None or st is None:
            self.statusBar().showMessage("Open a session first.", 6000)
            return
        stem = Path(d.session.path).stem
        choice = self.ask_export(self._export_folder(d.session.path), stem, bool(d.summary_text.strip()))
        if choice is None:
            return
        summary = d.summary_text if choice.include_summary else None

        def done(path: object) -> None:
            self.settings.set_export_dir(os.path.dirname(os.path.abspath(choice.path)))
            self.statusBar().showMessage(f"Exported {path}", 10000)

        def failed(exc: BaseException, tb: str) -> None:
            report_failure(self, explain_failure(exc, tb, "Export failed"))

        op = self.runner.op(
            actions.export_job, res.planner, st, choice.what, choice.fmt, choice.path, summary
        )
        # the job cannot be stopped halfway: a Cancel would only have hidden that the file was written
        op.with_progress("Exporting", self, cancellable=False).on_success(done).on_failure(failed).start()

    def _export_folder(self, session_path: str) -> str:
        """Where the export dialog proposes to write: the folder of the last export; else beside the
        session file, unless that lies in pi's sessions folder (pi's own data: a report there was
        hard to find again, among pi's files), then the user's Documents folder (home without one)."""
        last = self.settings.export_dir()
        if last and os.path.isdir(last):
            return last
        folder = os.path.dirname(os.path.abspath(session_path))
        root = os.path.realpath(self.sessions_root)
        try:
            inside = os.path.commonpath([os.path.realpath(folder), root]) == root
        except ValueError:  # another drive (Windows)
            inside = False
        if not inside:
            return folder
        docs = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
        return docs if docs and os.path.isdir(docs) else os.path.expanduser("~")

    def close_session(self) -> None:
        if self._may_drop_summary():
            self.doc.close()

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e: QDropEvent) -> None:
        for u in e.mimeData().urls():
            if u.isLocalFile():
                self.open_path(u.toLocalFile())
                return

    # ------------------------------------------------------------------ document events
    def _on_loading(self, path: str) -> None:
        self._opening = path
        # in the status bar's own label, not as a passing message: seen under X, Qt showed that label
        # again over such a message while the file loaded (both texts drawn on each other)
        self.statusBar().clearMessage()
        self.status_path.setText(f"Opening {path}…")

    def _on_partial(self, head: Partial) -> None:
        """The head of a big file: browse it (read-only) while the worker indexes the rest."""
        s = head.session
        self.preview.set_loading()  # the previous plan's panes and Generate are not this file's
        painted: Callable[[], None] | None = None
        # the session page is shown before the head's rows are put in: shown after, its tree laid
        # out every row the first block and the first branch points open (~40 ms of model calls)
        # inside the page switch, in this step; put in a shown tree, the rows are laid out in a
        # turn of their own (Qt's delayed layout) and painted in the one after
        self.stack.setCurrentIndex(PAGE_SESSION)
        self.tree_model.set_session(s, head.path_indices, head.outline, head=True)
        self._expand_in_steps()
        first = self.tree_model.index(0, 0)
        if self.tree_model.is_chunk(first):  # the head in blocks: its first entries are open
            self.tree.expand(first)
            first = self.tree_model.index(0, 0, first)
        if first.isValid():  # a current row, so focusing the tree does not pick one for the user
            # after the paint: making it current shows the row in the inspector (~10 ms), which
            # made one stall of this handler, the paint and that
            row = QPersistentModelIndex(first)
            if self.runner.synchronous:  # no later turn before the whole file replaces the head
                self._pick_first_row(row)
            else:
                painted = functools.partial(self._pick_first_row, row)
        self.doc.forget_partial_pick()
        self._paint_tree_next_turn(painted)
        self.inspector.set_session(s)
        self.bar.set_state(None)
        self.planner.set_state(None, waiting="Planned when the whole file is read")
        self.banner.hide()
        self.load_banner.start(head)
        self.session_title.setText(f"<b>{html.escape(os.path.basename(s.path))}</b>")
        self.session_title.setToolTip(rich_tooltip(s.path))
        self.status_path.setText(f"{s.path} · loading…")
        self.tree_count.setText(
            f"{len(self.tree_model.outline):,} entries of the first {head.head_bytes / 1e6:,.0f} MB shown"
        )
        if self._fit_pending:
            self._fit_splitter()
        self._update_actions()

    def _on_load_progress(self, permille: int) -> None:
        if self.load_banner.isVisible():
            self.load_banner.set_value(permille)

    def _on_disk_changed(self, text: str) -> None:
        self.disk_banner.say(text)
        self._update_actions()  # a file gone from disk takes no writes

    def _on_load_failed(self, failure: Failure) -> None:
        self.load_banner.hide()
        self.statusBar().clearMessage()
        self._update_status_path()  # not "Opening …" on: the session shown, if any, is still the last one
        path = self._opening
        if path:
            # a deleted file leaves Recent; a file pi cannot open stays, marked with why
            if not os.path.exists(path):
                self.settings.remove_recent(path)
            elif path in self.settings.recent_files():
                self.settings.set_recent_problem(path, failure.title)
            self._show_recent()
        if self.doc.session is None and self.stack.currentIndex() == PAGE_BROWSER:
            self.show_browser()  # e.g. a failed command-line open: the browser is not left blank
        report_failure(self, failure)

    def _show_issues(self, res: Loaded) -> None:
        s = res.session
        verdict = headerless_verdict(res.profile.profile, s.size) if res.profile is not None else ""
        self.banner.set_issues(s.issues, s.reset, verdict)

    def _on_loaded(self, res: Loaded) -> None:
        s = res.session
        self.load_banner.hide()
        self.settings.add_recent(s.path)
        self._show_recent()
        self._paint_tree_next_turn()
        self.tree_model.set_session(s, res.path_indices, res.outline, res.context_edits)

        def prepare_search() -> None:  # so that the first search is quick
            if self.tree_model.session is s:
                self.tree_model.prepare_search(self.runner)

        # once the plan's preparation and the paint after it are done: a worker started now takes the
        # GIL in turns with them (see tasks.AFTER_GUI_STEP_MS, SessionDocument.after_preparation)
        self.doc.after_preparation(prepare_search)
        self.tree_model.prepare_pi16(self.runner)  # pi 1.6.0 facts too slow for this thread
        self._expand_in_steps()
        self.inspector.set_session(s)
        self._show_issues(res)
        self.legacy_banner.set_session(s)
        self.banner.repair.setVisible(s.torn_tail is not None)
        self.banner.repair.setToolTip(s.torn_tail.describe() if s.torn_tail is not None else "")
        self._on_loaded_title()
        self._update_status_path()
        self.planner.set_source(res.settings_source)
        self._offer_summariser(res.pi_default_model)
        self.stack.setCurrentIndex(PAGE_SESSION)
        # next turn: the document selects the leaf after this handler; a tree focused before had
        # no current row, and Qt made the root current (its inspector sums the whole session's usage)
        QTimer.singleShot(0, self, self._focus_tree_unless_busy_elsewhere)
        if self._fit_pending:
            self._fit_splitter()
        self._update_count()
        self.statusBar().showMessage("Loaded", 3000)
        self._update_actions()

    def _focus_tree_unless_busy_elsewhere(self) -> None:
        """A session just shown starts with the keys on its tree (the page's first widget, the
        filter list, took them), unless the user is at work in the session page already (typing a
        search, editing a summary while the file is read again)."""
        focused = self.focusWidget()  # the window's, even while another window is active
        page = self.stack.widget(PAGE_SESSION)
        # the page's first widgets that take the keys, given them by the window, not by the user
        handed_out = focused is self.filter_combo or (
            isinstance(focused, KeyCursorView) and not focused.focused_by_user
        )
        if focused is None or page is None or not page.isAncestorOf(focused) or handed_out:
            self.tree.setFocus()

    def _offer_summariser(self, pi_model: str | None) -> None:
        """Name pi's default model in the Preview and, until the user picks a summariser, offer it
        where pi's settings name one, else the offline draft: what ``session-studio compact`` and
        pi itself summarise with when nothing else is chosen."""
        self.preview.show_pi_default(pi_model)
        key = ("pi" if pi_model else "offline") if self.settings.provider() is None else None
        if key is not None and self._gen_op is None:
            self.preview.provider.setCurrentIndex(self.preview.provider.findData(key))
        self.comparison.offer_summariser(pi_model, key)

    def _pick_first_row(self, row: QPersistentModelIndex) -> None:
        """The head's first row made current (not the user's pick: the leaf is selected when loaded)."""
        if row.isValid() and self.doc.partial is not None and not self.tree.currentIndex().isValid():
            self.tree.setCurrentIndex(self.tree_model.index(row.row(), row.column(), row.parent()))
            self.doc.forget_partial_pick()

    def _update_status_path(self) -> None:
        """Path, entry count and size of the file as indexed now (after loads, appends and writes)."""
        s = self.doc.session
        if s is None:
            self.status_path.clear()
            return
        self.status_path.setText(
            f"{s.path} · {len(s.records):,} entries · {fmt_size(s.size)}"
            + (f" · read as {version_name(s.source_version)}, shown migrated" if s.migrated else "")
        )

    def _on_closed(self) -> None:
        self.load_banner.hide()
        self.tree_model.set_session(None)
        self.inspector.set_session(None)
        self.bar.set_state(None)
        self.planner.set_state(None)
        self.show_browser()

    def _on_appended(self, new: tuple[int, ...]) -> None:
        res = self.doc.loaded_state
        # built in a worker: pi appending to a big session never freezes the window
        self.tree_model.rebuild_async(self.runner, res.path_indices if res else [], self._show_new_rows)
        self._update_status_path()
        s = self.doc.session
        if s is not None and (not new or any(s.records[i].type == "label" for i in new)):
            # a label written here (the write does not say what it appended) or by pi: the entry shown
            # may be the one labelled, and the inspector says its label
            self.inspector.show_entry(self.inspector.index)

    def _on_plan(self, st: PlanState) -> None:
        if self.doc.preparation is None and self.doc.preparing:
            self.preview.set_pending()
        self.tree_model.set_marks(st.marks)
        self.bar.set_state(st, self.doc.recovery)
        self.planner.set_state(st, recovery=self.doc.recovery)
        self._update_stale_note()
        if self.tabs.currentWidget() is self.why:
            self._render_why()
        self._update_actions()
        if self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _on_recovery(self, recovery: RecoveryCut | None) -> None:
        """pi 1.6.0's recovery for the plan shown, planned in a worker: the planner says where it cuts."""
        if self.doc.state is not None:
            self.planner.set_state(self.doc.state, recovery=recovery)
            self.bar.set_recovery(recovery)

    def _on_after_changed(self, st: PlanState) -> None:
        """The summary's text changed (once typing pauses): the projected bar and "after" context."""
        self.bar.set_state(st, self.doc.recovery)
        self._update_actions()
        if self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _on_selection(self, record: int) -> None:
        self.inspector.show_entry(record)
        self.bar.set_selected(record)
        self._reselect(record)
        self._update_actions()

    def _on_preparation(self, prep: Preparation | None) -> None:
        self.preview.set_preparation(prep)
        self._update_actions()

    def _on_busy_changed(self, busy: bool) -> None:
        self.status_busy.setText("Working…" if busy else "")
        if busy:
            self._trim_timer.stop()
        else:
            self._trim_timer.start()

    def _on_tab(self, _i: int) -> None:
        self.compare_controller.set_active(self.tabs.currentWidget() is self.compare)
        if self.tabs.currentWidget() is self.why:
            self._render_why()
        elif self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()
            self.ensure_engine()  # a summary is coming: its modules, while the user reads the tab

    def _engine_for_recovery(self) -> None:
        """The recovery's plan needs the engine: imported PRELOAD_AFTER_MS after the preparation."""

        def load() -> None:
            self.ensure_engine()

        def later() -> None:
            self.runner.call_later(load, PRELOAD_AFTER_MS)

        self.doc.after_preparation(later)

    def _render_why(self) -> None:
        st = self.doc.state
        th = current_theme()
        self.why.setHtml(explain_cut(st, th.muted.name(), th.cut.name()) if st else "<p>No session.</p>")

    def _set_plain_default(self, setting: str) -> None:
        """The pi for every file without pi 1.6.0 entries, saved; this file follows it (auto)."""
        self.settings.set_pi_version(setting)
        self.doc.set_profile(pin="auto", plain=setting)

    def _show_timeline(self, on: bool) -> None:
        """Show or hide the context timeline above the panes: as high as the user dragged it, else a
        quarter of the height they share (within TIMELINE_HEIGHTS)."""
        if not on:
            self.timeline.setVisible(False)
            return
        total = sum(self.vsplit.sizes()) or self.vsplit.height()
        least, most = TIMELINE_HEIGHTS
        height = self.timeline_height or max(least, min(most, total // 4))
        self.timeline.setVisible(True)
        self.vsplit.setSizes([height, max(1, total - height)])

    # ------------------------------------------------------------------ reload, theme, about, close
    def _reload(self) -> None:
        if self.doc.path:
            self.doc.open(self.doc.path, keep_params=True)

    def _set_theme(self, a: QAction) -> None:
        key = a.data()
        self._theme_override = None  # chosen in the menu: the setting from now on
        self.settings.set_theme(key)
        self.apply_theme_key(key)

    def override_theme(self, key: str) -> None:
        """The theme for this run only (``--theme``): shown as checked under View ▸ Theme (it showed
        the saved "Follow system"), not saved, and kept when the desktop switches light/dark."""
        self._theme_override = key
        self.theme_actions[key].setChecked(True)
        self.apply_theme_key(key)

    def _on_color_scheme_changed(self, *_args: object) -> None:
        """The desktop switched light/dark: follow it when the theme is "Follow system"."""
        if (self._theme_override or self.settings.theme()) == "system":
            self.apply_theme_key("system")

    def apply_theme_key(self, key: str) -> None:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return  # no widgets application (a core-only test): nothing to restyle
        apply_theme(app, key)
        app.setStyleSheet(stylesheet())
        # once the widgets are polished in the new style: see _measure_layouts_again
        QTimer.singleShot(0, self._measure_layouts_again)
        if self.doc.state is not None:
            self._on_plan(self.doc.state)
        self.inspector.show_entry(self.inspector.index)
        self.update()

    def _measure_layouts_again(self) -> None:
        """Have every layout of the window measure its widgets again. After a switch of theme (the
        style sheet set again) a layout kept, at times, the sizes its widgets had before: the
        planner's "Defaults: …" note got four of its five lines, cut off mid-line, until the window
        was laid out for another width."""
        for layout in self.findChildren(QLayout):
            layout.invalidate()

    def show_shortcuts(self) -> None:
        """Help ▸ Keyboard shortcuts (made each time: it reads the menus as they are now)."""
        from .shortcuts import ShortcutsDialog

        dialog = ShortcutsDialog(self.menuBar(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.last_dialog = dialog
        dialog.open()

    def show_help(self) -> None:
        """Help ▸ How pi compacts (F1): one page, kept while the window lives (read beside it)."""
        from .help_page import HelpDialog

        if self.help_dialog is None:
            self.help_dialog = HelpDialog(self)
        self.help_dialog.show()
        self.help_dialog.raise_()
        self.help_dialog.activateWindow()
        self.last_dialog = self.help_dialog

    def about(self) -> None:
        QMessageBox.about(
            self,
            "About Session Studio",
            f"<h3>Session Studio {__version__}</h3>"
            "<p>See, plan and commit compactions of pi coding-agent sessions.</p>"
            "<table cellspacing='0' cellpadding='1'>"
            + "".join(
                f"<tr><td style='padding-right:12px'>{name}</td><td>{value}</td></tr>"
                for name, value in (
                    ("Python", platform.python_version()),
                    ("Qt", qVersion()),
                    ("PySide6", pyside_version),
                    ("pi session format", f"version {CURRENT_SESSION_VERSION}"),
                    ("pi versions it follows", html.escape(", ".join(PROFILES))),
                    ("Platform", html.escape(sys.platform)),
                )
            )
            + "</table>",
        )

    def closeEvent(self, e: QCloseEvent) -> None:
        self.save_state()
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()
        super().closeEvent(e)
        if e.isAccepted():
            self.runner.shutdown()  # workers stop now, not after the window is gone


def stylesheet() -> str:
    th = current_theme()
    warn_bg, warn_fg, grid = th.warn_bg.name(), th.warn_fg.name(), th.grid.name()
    return (
        f"QLabel[muted='true'] {{ color: {th.muted.name()}; }}"
        "QLabel[heading='true'] { font-size: 11pt; }"
        f"QTreeView {{ border: 1px solid {th.grid.name()}; }}"
        f"QTabWidget::pane {{ border-top: 1px solid {th.grid.name()}; }}"
        "QGroupBox { margin-top: 14px; }"
        "QGroupBox::title { subcontrol-origin: margin; left: 6px; padding: 0 3px; }"
        f"QToolBar {{ border-bottom: 1px solid {th.grid.name()}; spacing: 2px; }}"
        # an on/off option beside a search field (In content): a framed button when off, filled
        # with the selection colour when on (Fusion's sunken look read as a plain button)
        f"QToolButton#scopeToggle {{ border: 1px solid {th.grid.name()}; border-radius: 3px;"
        " padding: 2px 6px; }"
        f"QToolButton#scopeToggle:checked {{ background: {th.highlight.name()};"
        f" border-color: {th.highlight.darker(130).name()}; }}"
        # its own border replaces the style's focus outline: the theme's focus colour, as elsewhere
        f"QToolButton#scopeToggle:focus {{ border-color: {th.focus.name()}; }}"
        # the warnings (banners, notes, a failed candidate): here, not on each widget, so that a
        # switch of theme restyles those already shown (they kept the old theme's colours)
        f"#banner, #legacy, #disk {{ background: {warn_bg}; border-bottom: 1px solid {grid}; }}"
        f"#banner QLabel, #legacy QLabel, #disk QLabel, #banner QToolButton, #legacy QToolButton,"
        f" #disk QToolButton {{ color: {warn_fg}; }}"
        f"#staleSummary {{ background: {warn_bg}; border: 1px solid {grid}; border-radius: 3px; }}"
        f"#staleSummary QLabel {{ color: {warn_fg}; }}"
        f"QLabel#quirk {{ background: {warn_bg}; color: {warn_fg}; border: 1px solid {grid};"
        " border-radius: 4px; padding: 6px 8px; }"
        f"#candidateFailure {{ background: {warn_bg}; color: {warn_fg}; border: 1px solid {grid};"
        " border-radius: 3px; padding: 4px; }"
    )
