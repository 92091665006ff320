"""The main window: browser page and session workspace. All connects live in _connect_signals()."""

from __future__ import annotations

import html
import os
import platform
import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSize, Qt, QTimer, qVersion
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from session_studio import __version__

from . import actions
from .browser import SessionBrowser
from .document import Loaded, PlanState, SessionDocument
from .errors import show_error
from .inspector import EntryInspector, SafeTextBrowser
from .listing import SessionInfo, list_sessions
from .outline import FILTERS
from .pisettings import sessions_dir
from .planner import PlannerPanel
from .preview import ContextPair, PreviewPane, build_context_pair, generate_summary
from .settings import AppSettings
from .tasks import Operation, TaskRunner
from .theme import apply_theme, current_theme
from .token_bar import TokenBar
from .tree_model import BranchDelegate, SessionTreeModel
from .why import explain_cut

__all__ = ["MainWindow", "sample_sessions_dir"]

PAGE_BROWSER, PAGE_SESSION = 0, 1


def sample_sessions_dir() -> str:
    from importlib.resources import files

    return str(files("session_studio") / "resources" / "samples")


class IssueBanner(QFrame):
    """Non-modal banner for damaged lines, with details on demand."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.details = QPushButton("Details…")
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(self.details)
        lay.addWidget(self.close_button)
        self.text = ""
        self.close_button.clicked.connect(self.hide)
        self.details.clicked.connect(self._show)
        self.hide()

    def set_issues(self, issues: list, reset: bool) -> None:  # type: ignore[type-arg]
        th = current_theme()
        self.setStyleSheet(
            f"#banner {{ background: {th.warn_bg.name()}; border-bottom: 1px solid {th.grid.name()}; }}"
            f"#banner QLabel {{ color: {th.warn_fg.name()}; }}"
        )
        if not issues:
            self.hide()
            return
        dropped = sum(1 for i in issues if i.dropped)
        msg = (
            f"<b>pi would reset this file</b>: {html.escape(issues[0].message)}"
            if reset
            else f"<b>{len(issues)} issue{'s' if len(issues) != 1 else ''} in this file</b> · {dropped} damaged "
            f"line{'s' if dropped != 1 else ''} that pi skips. The rest of the session is shown as pi sees it."
        )
        self.label.setText(msg)
        self.text = "\n".join(i.describe() for i in issues[:2000])
        self.show()

    def _show(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("Load issues")
        box.setText("Lines pi drops or that look suspicious:")
        box.setDetailedText(self.text)
        box.open()


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
        self._gen_op: Operation | None = None
        self._gen_cancel = None
        self._ctx_op: Operation | None = None
        self.setWindowTitle("Session Studio")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self._build_widgets()
        self._build_actions()
        self._connect_signals()
        self._sized = self._restore_state()
        self.browser.set_recent(self.settings.recent_files())
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
        self.inspector = EntryInspector()
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
        self.bar = TokenBar()
        ws = QWidget()
        wl = QVBoxLayout(ws)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(0)
        wl.addWidget(self.banner)
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
        self.status_busy = QLabel()
        self.statusBar().addWidget(self.status_path, 1)
        self.statusBar().addPermanentWidget(self.status_busy)

    def _build_actions(self) -> None:
        def act(text: str, shortcut: QKeySequence | str | None = None, tip: str = "") -> QAction:
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
        for a in (self.a_commit, self.a_branch, self.a_branch_sum, self.a_fork, self.a_label, self.a_rename):
            a.setToolTip(actions.ENGINE_MISSING)
            a.setStatusTip(actions.ENGINE_MISSING)

    # ------------------------------------------------------------------ signals
    def _connect_signals(self) -> None:
        d = self.doc
        d.loading.connect(self._on_loading)
        d.loaded.connect(self._on_loaded)
        d.load_failed.connect(self._on_load_failed)
        d.appended.connect(self._on_appended)
        d.plan_changed.connect(self._on_plan)
        d.selection_changed.connect(self._on_selection)
        d.preparation_ready.connect(self._on_preparation)
        d.message.connect(lambda t: self.statusBar().showMessage(t, 6000))
        d.closed.connect(self._on_closed)
        self.runner.busy_changed.connect(lambda b: self.status_busy.setText("Working…" if b else ""))

        self.browser.open_requested.connect(self.open_path)
        self.browser.open_file_dialog.connect(self.open_dialog)
        self.browser.refresh_requested.connect(self.show_browser)
        self.tree.selectionModel().currentChanged.connect(self._on_tree_current)
        self.tree.doubleClicked.connect(lambda ix: self._cut_at(self.tree_model.record_of(ix)))
        self.filter_combo.currentIndexChanged.connect(self._apply_filter)
        self.search.textChanged.connect(lambda _t: self._search_timer.start())
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(200)
        self._search_timer.timeout.connect(self._apply_filter)
        self.bar.entry_clicked.connect(d.select)
        self.planner.params_changed.connect(lambda k, r, w: d.set_params(k, r, w))
        self.planner.auto_cut_requested.connect(d.clear_manual_cut)
        self.planner.preview_requested.connect(self._go_preview)
        self.planner.commit_requested.connect(self.commit)
        self.preview.generate_requested.connect(self._generate)
        self.preview.cancel_requested.connect(self._cancel_generate)
        self.preview.summary_edited.connect(d.set_summary)
        self.tabs.currentChanged.connect(self._on_tab)
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_fit_pending", False))

        self.a_open.triggered.connect(self.open_dialog)
        self.a_browser.triggered.connect(self.show_browser)
        self.a_reload.triggered.connect(self._reload)
        self.a_close.triggered.connect(d.close)
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
        self.browser.set_recent(self.settings.recent_files())
        self._update_actions()

    def open_dialog(self) -> None:
        start = os.path.dirname(self.doc.path) if self.doc.path else self.sessions_root
        path, _ = QFileDialog.getOpenFileName(
            self, "Open session", start, "pi sessions (*.jsonl);;All files (*)"
        )
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> Operation:
        return self.doc.open(path)

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
        self.statusBar().showMessage(f"Opening {path}…")

    def _on_load_failed(self, title: str, details: str) -> None:
        self.statusBar().clearMessage()
        show_error(self, title, details)

    def _on_loaded(self, res: Loaded) -> None:
        s = res.session
        self.browser.set_recent(self.settings.add_recent(s.path))
        self.tree_model.set_session(s, res.path_indices)
        self.tree.expandAll()
        self.inspector.set_session(s)
        self.banner.set_issues(s.issues, s.reset)
        name = s.session_name()
        cwd = s.header.get("cwd", "") if s.header else ""
        self.session_title.setText(
            f"<b>{html.escape(name or os.path.basename(s.path))}</b>"
            f"<span style='color:{current_theme().muted.name()}'>  {html.escape(str(cwd))}</span>"
        )
        self.session_title.setToolTip(s.path)
        self.setWindowTitle(f"{name or os.path.basename(s.path)} — Session Studio")
        self.status_path.setText(
            f"{s.path} · {len(s.records):,} entries · {s.size / 1e6:.1f} MB"
            + (" · migrated from v" + str(s.source_version) if s.migrated else "")
        )
        self.planner.set_source(res.settings_source)
        self.stack.setCurrentIndex(PAGE_SESSION)
        if self._fit_pending:
            self._fit_splitter()
        self._update_count()
        self.statusBar().showMessage("Loaded", 3000)
        self._update_actions()

    def _on_closed(self) -> None:
        self.tree_model.set_session(None)
        self.inspector.set_session(None)
        self.bar.set_state(None)
        self.planner.set_state(None)
        self.show_browser()

    def _on_appended(self, new: tuple[int, ...]) -> None:
        sel = self.doc.selected
        res = self.doc.loaded_state
        self.tree_model.rebuild(res.path_indices if res else None)
        self.tree.expandAll()
        self._reselect(sel)
        self._update_count()

    def _on_plan(self, st: PlanState) -> None:
        self.tree_model.set_marks(st.marks)
        self.bar.set_state(st)
        self.planner.set_state(st)
        if self.tabs.currentWidget() is self.why:
            self._render_why()
        self._update_actions()
        if self.tabs.currentWidget() is self.preview:
            self._refresh_contexts()

    def _on_selection(self, record: int) -> None:
        self.inspector.show_entry(record)
        self.bar.set_selected(record)
        self._reselect(record)
        self._update_actions()

    def _on_preparation(self, prep: object) -> None:
        self.preview.set_preparation(prep)  # type: ignore[arg-type]
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

    def _apply_filter(self) -> None:
        sel = self.doc.selected
        self.tree_model.set_filter(self.filter_combo.currentData(), self.search.text())
        self.tree.expandAll()
        self._reselect(sel)
        self._update_count()

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
        cur = self.tree.currentIndex()
        nxt = self.tree.indexBelow(cur) if delta > 0 else self.tree.indexAbove(cur)
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
        op = self.runner.op(build_context_pair, st, summary)
        op.on_success(self._on_contexts).on_failure(
            lambda e, tb: self.statusBar().showMessage(f"Context: {e}", 6000)
        )
        self._ctx_op = op
        op.start()

    def _on_contexts(self, pair: ContextPair) -> None:
        self._ctx_op = None
        self.preview.set_contexts(pair)

    def _generate(self, provider: str) -> None:
        prep = self.doc.preparation
        if prep is None:
            self.statusBar().showMessage("Nothing to summarise with this cut", 6000)
            return
        from session_studio.llm import CancelToken

        cancel = CancelToken()
        self._gen_cancel = cancel
        ctx = self.doc.loaded_state.context if self.doc.loaded_state else None
        model = ctx.model if ctx else None
        level = ctx.thinking_level if ctx else None
        emit = self.preview.stream.text.emit
        self.preview.set_running(True)
        self.settings.set_provider(provider)
        op = self.runner.op(
            generate_summary, prep, self.doc.reserve, provider, emit, cancel, model, level, pool="network"
        )
        op.on_success(self._on_generated).on_failure(self._on_generate_failed)
        self._gen_op = op
        op.start()

    def _on_generated(self, text: str) -> None:
        self._gen_op = None
        self.preview.set_running(False)
        if self.preview.summary.toPlainText() != text:
            self.preview.summary.setPlainText(text)
        self.preview.status.setText(f"Summary ready · {len(text):,} chars · ≈{(len(text) + 3) // 4:,} tokens")
        self.doc.set_summary(text)
        self._refresh_contexts()

    def _on_generate_failed(self, exc: BaseException, tb: str) -> None:
        self._gen_op = None
        self.preview.set_running(False)
        from session_studio.llm import LlmCancelledError, LlmError

        if isinstance(exc, LlmCancelledError):
            self.preview.status.setText("Cancelled")
            return
        self.preview.status.setText("Failed")
        if isinstance(exc, LlmError):
            msg = getattr(exc, "user_message", None) or str(exc)
            show_error(self, "The summary could not be generated", str(msg), tb)
        else:
            show_error(self, "The summary could not be generated", str(exc), tb)

    def _cancel_generate(self) -> None:
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()

    # ------------------------------------------------------------------ commit
    def commit(self) -> None:
        if not actions.engine_available():
            QMessageBox.information(self, "Commit compaction", actions.ENGINE_MISSING)
            return
        QMessageBox.information(
            self, "Commit compaction", "The engine is present but not wired yet in this build."
        )

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
        engine = actions.engine_available()
        can_commit = bool(
            has and engine and st and not st.nothing_to_compact and self.doc.preparation is not None
        )
        self.a_commit.setEnabled(can_commit)
        self.planner.commit_button.setEnabled(can_commit)
        self.planner.commit_button.setToolTip(
            actions.ENGINE_MISSING if not engine else "Append the CompactionEntry"
        )
        for a in (self.a_branch, self.a_branch_sum, self.a_fork, self.a_label, self.a_rename):
            a.setEnabled(bool(has and engine))

    def _reload(self) -> None:
        if self.doc.path:
            self.doc.open(self.doc.path)

    # ------------------------------------------------------------------ misc
    def _set_theme(self, a: QAction) -> None:
        from PySide6.QtWidgets import QApplication

        key = a.data()
        self.settings.set_theme(key)
        app = QApplication.instance()
        apply_theme(app, key)  # type: ignore[arg-type]
        app.setStyleSheet(stylesheet())  # type: ignore[union-attr]
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

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if not self._sized:
            self._sized = True
            self._fit_splitter()

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if not self._sized or self._fit_pending:
            self._fit_splitter()

    _fit_pending = True

    def _fit_splitter(self) -> None:
        w = max(800, self.width())
        side = 330 if w < 1500 else 380
        tree = int((w - side) * 0.46)
        self.splitter.setSizes([tree, w - side - tree, side])

    def _restore_state(self) -> bool:
        g = self.settings.state("geometry")
        if g is not None:
            self.restoreGeometry(g)
        for key, sp in (
            ("splitter", self.splitter),
            ("preview-splitter", self.preview.splitter),
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
        self.settings.set_state("preview-splitter", self.preview.splitter.saveState())
        self.settings.set_state("browser-splitter", self.browser.splitter.saveState())
        self.settings.sync()

    def closeEvent(self, e: QCloseEvent) -> None:
        self.save_state()
        if self._gen_cancel is not None:
            self._gen_cancel.cancel()
        super().closeEvent(e)


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
