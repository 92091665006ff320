"""The main window: browser page and session workspace. All connects live in _connect_signals()."""

from __future__ import annotations

import html
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSize, Qt, QTimer, qVersion
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QIcon,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from session_studio import __version__
from session_studio.core.listing import SessionInfo, list_sessions

from . import actions
from .banners import IssueBanner, LegacyBanner, LoadingBanner
from .browser import SessionBrowser
from .document import Loaded, Partial, PlanSignature, PlanState, SessionDocument
from .errors import Failure, explain_failure, report_failure, report_unexpected, show_error
from .inspector import EntryInspector, SafeTextBrowser
from .outline import FILTERS
from .pisettings import sessions_dir
from .plain import rich_escaped, rich_plain, rich_tooltip, visible
from .planner import PlannerPanel
from .preview import (
    ContextPair,
    PreviewPane,
    ProviderDialog,
    StreamDialog,
    build_context_pair,
    custom_key_problem,
    provider_config,
)
from .settings import AppSettings
from .tasks import Operation, TaskRunner
from .theme import apply_theme, current_theme
from .token_bar import TokenBar
from .tree_model import BranchDelegate, SessionTreeModel
from .why import explain_cut

if TYPE_CHECKING:
    from session_studio.core.preparation import Preparation
    from session_studio.engine import CompactionOutcome
    from session_studio.llm import CancelToken, ProviderConfig

__all__ = ["MainWindow", "sample_sessions_dir"]

PAGE_BROWSER, PAGE_SESSION = 0, 1


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


def preload_summariser_modules() -> None:
    """Import the summariser stack (httpx, engine; ~1.5 s) off the GUI thread before the first Generate."""
    import session_studio.engine
    import session_studio.llm  # noqa: F401


def sample_sessions_dir() -> str:
    from importlib.resources import files

    return str(files("session_studio") / "resources" / "samples")


class MainWindow(QMainWindow):
    def __init__(
        self,
        settings: AppSettings | None = None,
        runner: TaskRunner | None = None,
        sessions_root: str | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings or AppSettings()
        self.runner = runner or TaskRunner(self)
        self.sessions_root = sessions_root or str(sessions_dir())
        self.doc = SessionDocument(self.runner, self)
        self.doc.profile_plain = self.settings.pi_version()
        self._gen_op: Operation | None = None
        self._gen_cancel: CancelToken | None = None
        #: the dialog opened last (tests answer or inspect it)
        self.last_dialog: QDialog | None = None
        self._ctx_op: Operation | None = None
        self._preloaded = False
        self._opening: str | None = None  # the file being opened (Recent bookkeeping on failure)
        self.setWindowTitle("Session Studio")
        icon = app_icon()
        if not icon.isNull():
            self.setWindowIcon(icon)
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self._build_widgets()
        self._build_actions()
        self._connect_signals()
        self._sized = self._restore_state()
        self._show_recent()
        self._update_actions()

    # ------------------------------------------------------------------ widgets
    def _build_widgets(self) -> None:
        self.stack = QStackedWidget()
        self.browser = SessionBrowser()
        self.stack.addWidget(self.browser)

        # tree panel
        self.session_title = QLabel()
        self.session_title.setProperty("heading", True)
        self.session_title.setWordWrap(False)
        self.filter_combo = QComboBox()
        for key, label in FILTERS.items():
            self.filter_combo.addItem(label, key)
        self.filter_combo.setToolTip("pi's /tree filters")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search entries (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.tree_model = SessionTreeModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.tree_model)
        self.tree_model.repaint_requested.connect(lambda: self.tree.viewport().update())
        self.tree_model.pi16_ready.connect(lambda: self.inspector.show_entry(self.inspector.index))
        self.tree.setUniformRowHeights(True)
        self.tree.setItemDelegate(BranchDelegate(self.tree))
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setIndentation(16)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setIconSize(QSize(16, 16))
        self.tree.setAccessibleName("Session tree")
        h = self.tree.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        h.setSectionResizeMode(2, QHeaderView.ResizeMode.Fixed)
        h.resizeSection(1, 64)
        h.resizeSection(2, 70)
        self.tree_count = QLabel()
        self.tree_count.setProperty("muted", True)
        for lab in (self.tree_count, self.session_title):
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        tree_panel = QWidget()
        tl = QVBoxLayout(tree_panel)
        tl.setContentsMargins(6, 6, 0, 6)
        tl.setSpacing(4)
        tl.addWidget(self.session_title)
        fr = QHBoxLayout()
        fr.addWidget(self.filter_combo)
        fr.addWidget(self.search, 1)
        tl.addLayout(fr)
        tl.addWidget(self.tree, 1)
        tl.addWidget(self.tree_count)

        # centre tabs
        self.inspector: EntryInspector = EntryInspector()
        self.inspector.edit_facts = lambda: self.tree_model.edits  # the tree's active path decides
        self.inspector.usage_totals = lambda: self.tree_model.usage()
        self.why = SafeTextBrowser()
        self.preview = PreviewPane()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.inspector, "Entry")
        self.tabs.addTab(self.why, "Why this cut")
        self.tabs.addTab(self.preview, "Preview")

        self.planner = PlannerPanel()
        self.planner.setMinimumWidth(300)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(tree_panel)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(self.planner)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 5)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([560, 620, 340])

        self.banner = IssueBanner()
        self.legacy_banner = LegacyBanner()
        self.load_banner = LoadingBanner()
        self.bar = TokenBar()
        ws = QWidget()
        wl = QVBoxLayout(ws)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(0)
        wl.addWidget(self.load_banner)
        wl.addWidget(self.banner)
        wl.addWidget(self.legacy_banner)
        wl.addWidget(self.bar)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        wl.addWidget(line)
        wl.addWidget(self.splitter, 1)
        self.workspace = ws
        self.stack.addWidget(ws)
        self.setCentralWidget(self.stack)
        self.status_path = QLabel()
        self.status_path.setTextFormat(Qt.TextFormat.PlainText)  # a file path is not HTML
        self.status_busy = QLabel()
        self.statusBar().addWidget(self.status_path, 1)
        self.statusBar().addPermanentWidget(self.status_busy)

    def _build_actions(self) -> None:
        def act(
            text: str, shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None, tip: str = ""
        ) -> QAction:
            a = QAction(text, self)
            if shortcut is not None:
                a.setShortcut(QKeySequence(shortcut))
            if tip:
                a.setStatusTip(tip)
                a.setToolTip(tip)
            return a

        S = QKeySequence.StandardKey
        self.a_open = act("&Open…", S.Open, "Open a session file")
        self.a_browser = act("&Session browser", "Ctrl+B", "Show the list of pi sessions")
        self.a_reload = act("&Reload", S.Refresh, "Re-read the session file")
        self.a_close = act("&Close session", S.Close)
        self.a_quit = act("&Quit", S.Quit)
        self.a_find = act("&Find", S.Find, "Search entries in the tree")
        self.a_next = act("&Next entry", "Alt+Down")
        self.a_prev = act("&Previous entry", "Alt+Up")
        self.a_leaf = act("Go to &leaf", "Ctrl+L")
        self.a_goto_cut = act("Go to &cut", "Ctrl+J")
        self.a_cut_here = act("&Cut here", "Ctrl+K", "Use the selected entry as the cut point")
        self.a_auto_cut = act("&Automatic cut", "Ctrl+Shift+K")
        self.a_preview = act("&Preview summary", "Ctrl+P", "Generate and preview the compaction summary")
        self.a_commit = act("Co&mmit compaction", "Ctrl+Return", "Append the CompactionEntry")
        self.a_branch = act("&Branch here")
        self.a_branch_sum = act("Branch with &summary…")
        self.a_fork = act("&Fork to new file…")
        self.a_label = act("&Label entry…")
        self.a_rename = act("&Rename session…")
        self.a_upgrade = act("&Upgrade legacy file (keeps a backup)…")
        self.a_provider = act(
            "Pro&vider settings…", tip="Base URL, model and key variable of a custom provider"
        )
        self.a_about = act("&About Session Studio")
        self.a_recent_menu = None
        self.theme_group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for key, label in (("system", "Follow system"), ("light", "Light"), ("dark", "Dark")):
            a = act(label)
            a.setCheckable(True)
            a.setData(key)
            self.theme_group.addAction(a)
            self.theme_actions[key] = a
        self.theme_actions.get(self.settings.theme(), self.theme_actions["system"]).setChecked(True)

        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addActions([self.a_open, self.a_browser])
        self.recent_menu = m.addMenu("Open &recent")
        m.addSeparator()
        m.addActions([self.a_reload, self.a_close])
        m.addSeparator()
        m.addAction(self.a_quit)
        m = mb.addMenu("&Edit")
        m.addAction(self.a_find)
        m = mb.addMenu("&View")
        tm = m.addMenu("&Theme")
        tm.addActions(list(self.theme_actions.values()))
        m = mb.addMenu("&Go")
        m.addActions([self.a_next, self.a_prev, self.a_leaf, self.a_goto_cut])
        m = mb.addMenu("&Session")
        m.addActions([self.a_cut_here, self.a_auto_cut, self.a_preview, self.a_commit])
        m.addSeparator()
        m.addActions([self.a_branch, self.a_branch_sum, self.a_fork, self.a_label, self.a_rename])
        m.addSeparator()
        m.addActions([self.a_upgrade, self.a_provider])
        m.setToolTipsVisible(True)
        m = mb.addMenu("&Help")
        m.addAction(self.a_about)

        tb = self.addToolBar("Main")
        tb.setObjectName("main-toolbar")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        tb.addActions([self.a_browser, self.a_open, self.a_reload])
        tb.addSeparator()
        tb.addActions([self.a_leaf, self.a_cut_here, self.a_auto_cut])
        tb.addSeparator()
        tb.addActions([self.a_preview, self.a_commit])
        self.write_actions = {
            "commit": (self.a_commit, "Append the CompactionEntry to the session file"),
            "branch": (self.a_branch, "Continue from the selected entry (pi's /tree navigation)"),
            "branch_summary": (
                self.a_branch_sum,
                "Leave the current branch for the selected entry and append a summary of what is left",
            ),
            "fork": (self.a_fork, "Write the path to the selected entry as a new session file"),
            "label": (self.a_label, "Add, change or clear the label of the selected entry"),
            "rename": (self.a_rename, "Set the session's display name"),
            "upgrade": (self.a_upgrade, "Rewrite this v1/v2 file as version 3, keeping a backup"),
        }

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
        d.after_changed.connect(self._on_after_changed)
        d.selection_changed.connect(self._on_selection)
        d.preparation_ready.connect(self._on_preparation)
        d.message.connect(lambda t: self.statusBar().showMessage(t, 6000))
        d.closed.connect(self._on_closed)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)
        self.runner.busy_changed.connect(lambda b: self.status_busy.setText("Working…" if b else ""))
        # a background task that fails with no failure handler is a crash, never silence
        self.runner.unhandled.connect(report_unexpected)

        self.browser.open_requested.connect(self.open_path)
        self.browser.open_file_dialog.connect(self.open_dialog)
        self.browser.refresh_requested.connect(self.show_browser)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current)
        self.tree.doubleClicked.connect(lambda ix: self._cut_at(self.tree_model.record_of(ix)))
        self.tree.expanded.connect(self._on_tree_expanded)
        self.filter_combo.currentIndexChanged.connect(self._apply_filter)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self._search_timer.timeout.connect(self._apply_filter)
        self.bar.entry_clicked.connect(d.select)
        self.planner.params_changed.connect(lambda k, r, w: d.set_params(k, r, w))
        self.planner.auto_cut_requested.connect(d.clear_manual_cut)
        self.planner.preview_requested.connect(self._go_preview)
        self.planner.commit_requested.connect(self.commit)
        self.planner.profile_requested.connect(lambda v: d.set_profile(pin=v))

        def show_profile(res: Loaded) -> None:
            self.planner.set_profile(res.profile, d.profile_pin)
            self.planner.set_source(res.settings_source)

        d.profile_changed.connect(show_profile)
        self.preview.generate_requested.connect(self._generate)
        self.preview.cancel_requested.connect(self._cancel_generate)
        self.preview.summary_edited.connect(d.set_summary)
        d.summary_changed.connect(self.preview.load_summary)
        self.preview.use_anyway_requested.connect(self.commit)
        self.preview.regenerate_requested.connect(self._generate)
        self.legacy_banner.upgrade_button.clicked.connect(self.upgrade)
        self.legacy_banner.fork_button.clicked.connect(self.fork)
        self.tabs.currentChanged.connect(self._on_tab)
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_fit_pending", False))

        self.a_open.triggered.connect(self.open_dialog)
        self.a_browser.triggered.connect(self.show_browser)
        self.a_reload.triggered.connect(self._reload)
        self.a_close.triggered.connect(self.close_session)
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
        self.a_commit.triggered.connect(self.commit)
        self.a_branch.triggered.connect(self.branch_here)
        self.a_branch_sum.triggered.connect(self.branch_with_summary)
        self.a_fork.triggered.connect(self.fork)
        self.a_label.triggered.connect(self.label_entry)
        self.a_rename.triggered.connect(self.rename_session)
        self.a_upgrade.triggered.connect(self.upgrade)
        self.a_provider.triggered.connect(self.edit_provider)
        self.preview.provider_settings_requested.connect(self.edit_provider)
        self.a_about.triggered.connect(self.about)
        self.theme_group.triggered.connect(self._set_theme)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)

    # ------------------------------------------------------------------ browser
    def show_browser(self) -> None:
        self.stack.setCurrentIndex(PAGE_BROWSER)
        root = self.sessions_root

        def work() -> tuple[list[SessionInfo], bool]:
            infos = list_sessions(root)
            if infos:
                return infos, False
            return list_sessions(sample_sessions_dir()), True

        self.runner.op(work).on_success(lambda r: self.browser.set_sessions(r[0], root, r[1])).start()
        self._show_recent()
        self._update_actions()

    def _show_recent(self) -> None:
        self.browser.set_recent(self.settings.recent_files(), self.settings.recent_problems())

    def open_dialog(self) -> None:
        start = os.path.dirname(self.doc.path) if self.doc.path else self.sessions_root
        path, _ = QFileDialog.getOpenFileName(
            self, "Open session", start, "pi sessions (*.jsonl);;All files (*)"
        )
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> Operation | None:
        if self.doc.path and os.path.abspath(path) != self.doc.path and not self._may_drop_summary():
            return None
        return self.doc.open(path)

    def close_session(self) -> None:
        if self._may_drop_summary():
            self.doc.close()

    def _may_drop_summary(self) -> bool:
        """Leaving this file drops its summary: ask first when the user typed in it."""
        self.preview.flush_summary()
        if not self.preview.is_edited() or self.doc.session is None:
            return True
        return self.ask_yes_no(
            "Discard your summary?",
            "The summary of this session has text you typed or edited and it was not committed. "
            "Opening another file or closing this one discards it.",
            yes="Discard",
        )

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for p in self.settings.recent_files():
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _c=False, p=p: self.open_path(p))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none)").setEnabled(False)

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
        self.statusBar().showMessage(f"Opening {path}…")

    def _on_partial(self, head: Partial) -> None:
        """The head of a big file: browse it (read-only) while the worker indexes the rest."""
        s = head.session
        self.tree_model.set_session(s, head.path_indices, head.outline)
        self._expand()
        first = self.tree_model.index(0, 0)
        if first.isValid():  # a current row, so focusing the tree does not pick one for the user
            self.tree.setCurrentIndex(first)
        self.doc.forget_partial_pick()
        self.inspector.set_session(s)
        self.bar.set_state(None)
        self.planner.set_state(None)
        self.banner.hide()
        self.load_banner.start(head)
        self.session_title.setText(f"<b>{html.escape(os.path.basename(s.path))}</b>")
        self.session_title.setToolTip(rich_tooltip(s.path))
        self.status_path.setText(f"{s.path} · loading…")
        self.tree_count.setText(
            f"{len(self.tree_model.outline):,} entries of the first {head.head_bytes / 1e6:,.0f} MB shown"
        )
        self.stack.setCurrentIndex(PAGE_SESSION)
        if self._fit_pending:
            self._fit_splitter()
        self._update_actions()

    def _on_load_progress(self, permille: int) -> None:
        if self.load_banner.isVisible():
            self.load_banner.set_value(permille)

    def _on_load_failed(self, failure: Failure) -> None:
        self.load_banner.hide()
        self.statusBar().clearMessage()
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

    def _on_loaded(self, res: Loaded) -> None:
        s = res.session
        self.load_banner.hide()
        self.settings.add_recent(s.path)
        self._show_recent()
        self.tree_model.set_session(s, res.path_indices, res.outline)
        self.tree_model.prepare_search(self.runner)  # so that the first search is quick
        self.tree_model.prepare_pi16(self.runner)  # pi 1.6.0 facts too slow for this thread
        self._expand()
        self.inspector.set_session(s)
        self.banner.set_issues(s.issues, s.reset)
        self.legacy_banner.set_session(s)
        self.banner.repair.setVisible(s.torn_tail is not None)
        self.banner.repair.setToolTip(s.torn_tail.describe() if s.torn_tail is not None else "")
        self._on_loaded_title()
        self._update_status_path()
        self.planner.set_source(res.settings_source)
        self.stack.setCurrentIndex(PAGE_SESSION)
        if self._fit_pending:
            self._fit_splitter()
        self._update_count()
        self.statusBar().showMessage("Loaded", 3000)
        self._update_actions()
        if not self._preloaded:
            self._preloaded = True
            self.runner.op(preload_summariser_modules, pool="network").start()

    def _update_status_path(self) -> None:
        """Path, entry count and size of the file as indexed now (after loads, appends and writes)."""
        s = self.doc.session
        if s is None:
            self.status_path.clear()
            return
        self.status_path.setText(
            f"{s.path} · {len(s.records):,} entries · {s.size / 1e6:.1f} MB"
            + (f" · read as {actions.version_name(s.source_version)}, shown migrated" if s.migrated else "")
        )

    def _on_loaded_title(self) -> None:
        s = self.doc.session
        if s is None:
            return
        name = s.session_name()
        cwd = s.header.get("cwd", "") if s.header else ""
        self.session_title.setText(
            f"<b>{rich_escaped(name or os.path.basename(s.path), 200)}</b>"
            f"<span style='color:{current_theme().muted.name()}'>  {rich_escaped(str(cwd), 200)}</span>"
        )
        self.session_title.setToolTip(rich_tooltip(s.path))
        self.setWindowTitle(
            f"{visible(name or os.path.basename(s.path), 100, keep_newlines=False)} — Session Studio"
        )

    def _on_closed(self) -> None:
        self.load_banner.hide()
        self.tree_model.set_session(None)
        self.inspector.set_session(None)
        self.bar.set_state(None)
        self.planner.set_state(None)
        self.show_browser()

    def _on_appended(self, new: tuple[int, ...]) -> None:
        sel = self.doc.selected
        res = self.doc.loaded_state
        self.tree_model.rebuild(res.path_indices if res else None)
        self._expand()
        self._reselect(sel)
        self._update_count()
        self._update_status_path()

    def _on_plan(self, st: PlanState) -> None:
        if self.doc.preparation is None and self.doc.preparing:
            self.preview.set_pending()
        self.tree_model.set_marks(st.marks)
        self.bar.set_state(st)
        self.planner.set_state(st)
        self._update_stale_note()
        if self.tabs.currentWidget() is self.why:
            self._render_why()
        self._update_actions()
        if self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _on_after_changed(self, st: PlanState) -> None:
        """The summary's text changed (once typing pauses): the projected bar and "after" context."""
        self.bar.set_state(st)
        self._update_actions()
        if self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _update_stale_note(self) -> None:
        d = self.doc
        if not d.summary_is_stale:
            self.preview.stale_note.set_plans(None, None)
            return
        made = d.outcome_plan.describe() if d.outcome_plan is not None else "an earlier state of the file"
        if d.outcome is not None and d.outcome.draft.session is not d.session and d.outcome_plan is not None:
            made += " in the file as it was then"
        now = d.plan_signature()
        self.preview.stale_note.set_plans(made, now.describe() if now is not None else None)

    def _on_selection(self, record: int) -> None:
        self.inspector.show_entry(record)
        self.bar.set_selected(record)
        self._reselect(record)
        self._update_actions()

    def _on_preparation(self, prep: Preparation | None) -> None:
        self.preview.set_preparation(prep)
        self._update_actions()

    def _on_tab(self, _i: int) -> None:
        if self.tabs.currentWidget() is self.why:
            self._render_why()
        elif self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _render_why(self) -> None:
        st = self.doc.state
        th = current_theme()
        self.why.setHtml(explain_cut(st, th.muted.name(), th.cut.name()) if st else "<p>No session.</p>")

    # ------------------------------------------------------------------ tree
    def _reselect(self, record: int) -> None:
        if record < 0:
            return
        shown = self.tree_model.outline.nearest_shown(self.doc.session, record) if self.doc.session else None
        if shown is None:
            return
        ix = self.tree_model.index_of(shown)
        if ix.isValid() and self.tree.currentIndex().internalId() != ix.internalId():
            self.tree.selectionModel().setCurrentIndex(
                ix, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            )
            self.tree.scrollTo(ix)

    def _on_tree_current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        rec = self.tree_model.record_of(cur)
        if rec >= 0:
            self.doc.select(rec)

    def _expand(self) -> None:
        """Open every branch point outside row blocks (blocks open theirs when they are expanded)."""
        for ix in self.tree_model.branch_points():
            if ix.isValid():
                self.tree.expand(ix)

    def _on_tree_expanded(self, ix: QModelIndex) -> None:
        if self.tree_model.is_chunk(ix):
            for b in self.tree_model.branch_points(ix):
                if b.isValid():
                    self.tree.expand(b)

    def _apply_filter(self) -> None:
        def shown() -> None:
            self._expand()
            self._reselect(self.doc.selected)
            self._update_count()

        # built in a worker and swapped in: typing never freezes the window on a big session
        self.tree_model.filter_async(self.runner, self.filter_combo.currentData(), self.search.text(), shown)

    def _update_count(self) -> None:
        s = self.doc.session
        if s is None:
            self.tree_count.clear()
            return
        n = len(self.tree_model.outline)
        path_n = len(self.doc.loaded_state.path_indices) if self.doc.loaded_state else 0
        self.tree_count.setText(
            f"{n:,} of {len(s.records):,} entries shown · active path {path_n:,} · "
            f"{len(s.labels)} label{'s' if len(s.labels) != 1 else ''}"
        )

    def _focus_search(self) -> None:
        if self.stack.currentIndex() == PAGE_BROWSER:
            self.browser.search.setFocus()
            self.browser.search.selectAll()
        else:
            self.search.setFocus()
            self.search.selectAll()

    def _step(self, delta: int) -> None:
        """The next/previous entry row as shown, stepping over (and opening) row blocks."""
        t, m = self.tree, self.tree_model
        cur = t.currentIndex()
        ancestors = set()
        p = cur.parent()
        while p.isValid():
            ancestors.add(int(p.internalId()))
            p = p.parent()
        nxt = t.indexBelow(cur) if delta > 0 else t.indexAbove(cur)
        while nxt.isValid() and m.is_chunk(nxt):
            if delta > 0:
                t.expand(nxt)
                nxt = t.indexBelow(nxt)
            elif int(nxt.internalId()) in ancestors:
                nxt = t.indexAbove(nxt)  # the header of the block we are leaving
            else:
                # a closed block above: open it and take its last row
                t.expand(nxt)
                while t.isExpanded(nxt) and m.rowCount(nxt) > 0:
                    nxt = m.index(m.rowCount(nxt) - 1, 0, nxt)
        if nxt.isValid():
            self.tree.setCurrentIndex(nxt)

    def _goto_leaf(self) -> None:
        res = self.doc.loaded_state
        if res and res.path_indices:
            self.doc.select(res.path_indices[-1])

    def _goto_cut(self) -> None:
        st = self.doc.state
        if st and st.first_kept_record is not None:
            self.doc.select(st.first_kept_record)

    def _cut_at(self, record: int) -> None:
        if record < 0:
            return
        why = self.doc.set_manual_cut(record)
        if why:
            self.statusBar().showMessage(f"Not a cut point: {why}", 8000)

    # ------------------------------------------------------------------ preview
    def _go_preview(self) -> None:
        self.tabs.setCurrentWidget(self.preview)

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

    def _target_for(self, action: str, record: int | None) -> str | None:
        """The entry id `action` works on, or None after saying in the status bar why it cannot run."""
        d = self.doc
        why = actions.disabled_reasons(d, d.writing)[action]
        target = self._entry_id(record)
        if why or d.session is None or target is None:
            self.statusBar().showMessage(why or "This entry has no usable id", 8000)
            return None
        return target

    def _entry_id(self, record: int | None) -> str | None:
        s = self.doc.session
        if s is None or record is None or record < 0:
            return None
        rid = s.records[record].id
        return rid if isinstance(rid, str) else None

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

    def _summarize_params(self, provider: str) -> actions.SummarizeParams | None:
        """The engine parameters of the current plan (what Generate and "Use it anyway" draft)."""
        d = self.doc
        st = d.state
        if st is None:
            return None
        ctx = d.loaded_state.context if d.loaded_state else None
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
            actions.summarize_job, d.session, params, self.preview.stream.part.emit, cancel, pool="network"
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
        self.preview.status.setText(f"Summary ready · {len(text):,} chars · ≈{(len(text) + 3) // 4:,} tokens")
        self._update_stale_note()
        self._refresh_contexts()
        self._update_actions()

    def _on_generate_failed(self, exc: BaseException, tb: str) -> None:
        self._gen_op = None
        self.preview.set_running(False)
        from session_studio.core.errors import StaleSessionError
        from session_studio.llm import LlmCancelledError

        if isinstance(exc, LlmCancelledError):
            self.preview.status.setText("Cancelled")
            return
        self.preview.status.setText("Failed")
        if isinstance(exc, StaleSessionError):
            self._stale(exc)
        else:
            report_failure(self, explain_failure(exc, tb, "The summary could not be generated"))

    def _cancel_generate(self) -> None:
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()

    # ------------------------------------------------------------------ writes
    def ask_yes_no(self, title: str, text: str, details: str = "", yes: str = "Yes") -> bool:
        """A modal question (tests accept it through ``QApplication.activeModalWidget()``)."""
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(title)
        box.setText(text)
        if details:
            box.setDetailedText(details)
        ok = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(ok)
        self.last_dialog = box
        box.exec()
        return box.clickedButton() is ok

    def ask_text(self, title: str, label: str, default: str) -> str | None:
        text, ok = QInputDialog.getText(self, title, label, QLineEdit.EchoMode.Normal, default)
        return text if ok else None

    def ask_save_path(self, title: str, default: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, title, default, "pi sessions (*.jsonl);;All files (*)")
        return path

    def _write(
        self, what: str, fn: Callable[..., Any], *args: object, on_ok: Callable[[Any], None]
    ) -> Operation:
        """Run a write job on the single write thread; failures become actionable messages."""
        self.doc.writing = True
        self._update_actions()
        op = self.runner.op(fn, *args, pool="write").with_progress(what, self)

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

    def _stale(self, exc: BaseException) -> None:
        """pi appended meanwhile: reload, re-plan (same parameters) and say so."""
        self.doc.reload()
        show_error(
            self,
            "pi changed the file while you were planning",
            "Nothing was written. The session was reloaded and the compaction planned again with the same "
            "settings; check the new plan and generate the summary again before committing."
            f"\n\n{exc}",
        )

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
        made = d.outcome_plan.describe() if d.outcome_plan is not None else "another plan"
        summary = d.summary_text
        if not self.ask_yes_no(
            "Use this summary anyway?",
            f"<p>This summary was made for {html.escape(made)}; the plan is now "
            f"<b>{html.escape(now.describe())}</b>.</p>"
            f"<p>Append a compaction entry to <b>{html.escape(os.path.basename(d.session.path))}</b> "
            f"with this text ({len(summary):,} characters) for the current plan? Its file lists are "
            "the ones written in the text.</p>",
            yes="Use it anyway",
        ):
            return
        self._write(
            "Committing the compaction",
            actions.commit_current_job,
            d.session,
            params,
            summary,
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
        who = ""
        if fk_i is not None:
            r = s.records[fk_i]
            who = f" ({r.role if r.type == 'message' else r.type}: {self.tree_model.preview(fk_i)[:80]})"
        before = d.preparation.tokens_before
        try:
            after = final.estimated_tokens_after()
        except JsTypeError:
            after = "?"

        def n(x: object) -> str:
            return f"{x:,.0f}" if isinstance(x, int | float) else str(x)

        read, modified = d.file_lists()
        text = (
            f"<p>Append a compaction entry to <b>{html.escape(os.path.basename(s.path))}</b>?</p>"
            f"<p>First kept entry: <code>{html.escape(str(fk))}</code>{html.escape(who)}<br>"
            f"Context tokens: {n(before)} → ≈{n(after)}<br>"
            f"Summary: {len(summary):,} characters · {len(read)} files read · {len(modified)} modified<br>"
            + ("Split turn: the turn prefix is summarised separately<br>" if d.cut.is_split_turn else "")
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

    def branch_here(self) -> None:
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
        box.open()

    def branch_with_summary(self) -> None:
        from session_studio.llm import CancelToken

        d = self.doc
        s = d.session
        target = self._target_for("branch_summary", d.selected)
        if s is None or target is None:
            return
        provider = str(self.preview.provider.currentData())
        label = self.preview.provider.currentText()
        if not self.ask_yes_no(
            "Branch with summary",
            f"Leave the current branch and continue from the selected entry?<br>"
            f"The entries left behind are summarised with <b>{html.escape(label)}</b> and a "
            "<code>branch_summary</code> entry is appended: it becomes the new leaf.",
            yes="Summarise and branch",
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
            dlg.finish(getattr(out, "note", ""))
            self.doc.after_write(entry.get("id") if isinstance(entry, dict) else None)
            self.statusBar().showMessage(getattr(out, "note", "Branched"), 10000)

        op = self._write(
            "Branch with summary",
            actions.branch_job,
            s,
            target,
            True,
            provider,
            config,
            d.window or None,
            dlg.stream.text.emit,
            cancel,
            self._entry_id(d.working_leaf_index()),
            on_ok=done,
        )
        op.failed.connect(lambda *_: dlg.finish("Failed or cancelled: nothing was written."))

    def fork(self) -> None:
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

        def done(new: object) -> None:
            self.statusBar().showMessage(f"Forked to {new}", 10000)
            if self.ask_yes_no("Fork written", f"Wrote {html.escape(str(new))}.<br>Open it now?", yes="Open"):
                self.open_path(str(new))

        self._write("Forking", actions.fork_job, s, leaf, path, *ident, on_ok=done)

    def label_entry(self) -> None:
        d = self.doc
        s = d.session
        target = self._target_for("label", d.selected)
        if s is None or target is None:
            return
        cur = s.label_of(target) or ""
        text = self.ask_text("Label entry", "Label (empty clears it):", cur)
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

    def rename_session(self) -> None:
        d = self.doc
        s = d.session
        why = actions.disabled_reasons(d, d.writing)["rename"]
        if why or s is None:
            self.statusBar().showMessage(why or "", 8000)
            return
        cur = s.session_name() or ""
        text = self.ask_text("Rename session", "Session name:", cur)
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
            f"Rewrite this {actions.version_name(s.source_version)} file as version 3, the way pi would on "
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

    def _update_actions(self) -> None:
        has = self.doc.session is not None and self.stack.currentIndex() == PAGE_SESSION
        st = self.doc.state
        for a in (
            self.a_reload,
            self.a_close,
            self.a_next,
            self.a_prev,
            self.a_leaf,
            self.a_goto_cut,
            self.a_cut_here,
            self.a_preview,
        ):
            a.setEnabled(has)
        self.a_auto_cut.setEnabled(bool(has and st and st.manual))
        reasons = actions.disabled_reasons(self.doc, self.doc.writing)
        if not has:
            reasons = dict.fromkeys(reasons, "Open a session first.")
        for key, (a, tip) in self.write_actions.items():
            why = reasons.get(key)
            a.setEnabled(why is None)
            a.setToolTip(why or tip)
            a.setStatusTip(why or tip)
        why = reasons["commit"]
        self.planner.commit_button.setEnabled(why is None)
        tip = "Append the CompactionEntry (Ctrl+Return)"
        if why is None and self.doc.summary_is_stale:
            tip = "The summary was made for another plan: committing asks before using it for this one"
        self.planner.commit_button.setToolTip(why or tip)

    def _reload(self) -> None:
        if self.doc.path:
            self.doc.open(self.doc.path, keep_params=True)

    # ------------------------------------------------------------------ misc
    def _set_theme(self, a: QAction) -> None:
        key = a.data()
        self.settings.set_theme(key)
        self.apply_theme_key(key)

    def _on_color_scheme_changed(self, *_args: object) -> None:
        """The desktop switched light/dark: follow it when the theme is "Follow system"."""
        if self.settings.theme() == "system":
            self.apply_theme_key("system")

    def apply_theme_key(self, key: str) -> None:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return  # no widgets application (a core-only test): nothing to restyle
        apply_theme(app, key)
        app.setStyleSheet(stylesheet())
        if self.doc.state is not None:
            self._on_plan(self.doc.state)
        self.inspector.show_entry(self.inspector.index)
        self.update()

    def about(self) -> None:
        QMessageBox.about(
            self,
            "About Session Studio",
            f"<h3>Session Studio {__version__}</h3>"
            "<p>See, plan and commit compactions of pi coding-agent sessions.</p>"
            f"<table><tr><td>Python</td><td>{platform.python_version()}</td></tr>"
            f"<tr><td>Qt</td><td>{qVersion()}</td></tr>"
            f"<tr><td>PySide6</td><td>{pyside_version}</td></tr>"
            "<tr><td>pi session format</td><td>version 3 (pi 0.80.2)</td></tr>"
            f"<tr><td>Platform</td><td>{html.escape(sys.platform)}</td></tr></table>",
        )

    def showEvent(self, e: QShowEvent) -> None:
        super().showEvent(e)
        if not self._sized:
            self._sized = True
            self._fit_splitter()

    def resizeEvent(self, e: QResizeEvent) -> None:
        super().resizeEvent(e)
        if not self._sized or self._fit_pending:
            self._fit_splitter()

    _fit_pending = True

    #: the tree's share of the splitter width until the user moves the splitter
    TREE_SHARE = 0.4

    def _fit_splitter(self) -> None:
        """Give the tree TREE_SHARE of the width (now and once the layout has settled)."""
        self._fit_now()
        QTimer.singleShot(0, self._fit_later)

    def _fit_later(self) -> None:
        if self._fit_pending:
            self._fit_now()

    def _fit_now(self) -> None:
        sw = self.splitter.width() if self.splitter.isVisible() else 0
        w = max(800, sw if sw > 400 else self.width())
        side = 320 if w < 1500 else 380
        tree = int(w * self.TREE_SHARE)
        self.splitter.setSizes([tree, max(200, w - side - tree), side])

    def _restore_state(self) -> bool:
        g = self.settings.state("geometry")
        if g is not None:
            self.restoreGeometry(g)
        for key, sp in (
            ("splitter", self.splitter),
            ("preview-splitter-v2", self.preview.splitter),
            ("browser-splitter", self.browser.splitter),
        ):
            v = self.settings.state(key)
            if v is not None:
                sp.restoreState(v)
        ws = self.settings.state("window")
        if ws is not None:
            self.restoreState(ws)
        self._fit_pending = self.settings.state("splitter") is None
        return not self._fit_pending

    def save_state(self) -> None:
        self._fit_pending = False
        self.settings.set_state("geometry", self.saveGeometry())
        self.settings.set_state("window", self.saveState())
        self.settings.set_state("splitter", self.splitter.saveState())
        self.settings.set_state("preview-splitter-v2", self.preview.splitter.saveState())
        self.settings.set_state("browser-splitter", self.browser.splitter.saveState())
        self.settings.sync()

    def closeEvent(self, e: QCloseEvent) -> None:
        self.save_state()
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()
        super().closeEvent(e)


def _menu_path(action: QAction) -> str:
    """ "Session ▸ Branch with summary…" for an action, as the user finds it in the menu bar."""
    name = action.text().replace("&", "")
    menus = [w for w in action.associatedObjects() if hasattr(w, "title") and w.title()]
    return f"{menus[0].title().replace('&', '')} ▸ {name}" if menus else name


def stylesheet() -> str:
    th = current_theme()
    return (
        f"QLabel[muted='true'] {{ color: {th.muted.name()}; }}"
        "QLabel[heading='true'] { font-size: 11pt; }"
        f"QTreeView {{ border: 1px solid {th.grid.name()}; }}"
        f"QTabWidget::pane {{ border-top: 1px solid {th.grid.name()}; }}"
        "QGroupBox { margin-top: 14px; }"
        "QGroupBox::title { subcontrol-origin: margin; left: 6px; padding: 0 3px; }"
        f"QToolBar {{ border-bottom: 1px solid {th.grid.name()}; spacing: 2px; }}"
    )
