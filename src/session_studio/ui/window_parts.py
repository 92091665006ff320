"""What the main window is made of: its widgets, actions and menus, and the few operations every
part of it uses (enabling actions, asking the user, entry ids, opening a file, the title).

The behaviours (tree navigation, window state, summary generation, write commands) are mixins
over these parts; MainWindow composes them and makes every connection in _connect_signals().
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
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
    QMenu,
    QMessageBox,
    QSizePolicy,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from . import actions
from .banners import DiskBanner, IssueBanner, LegacyBanner, LoadingBanner
from .browser import SessionBrowser
from .document import SessionDocument
from .errors import show_error
from .inspector import EntryInspector, SafeTextBrowser
from .outline import FILTERS
from .pane_keys import KeySplitter
from .plain import rich_escaped, rich_tooltip, visible
from .planner import PlannerPanel
from .preview import PreviewPane
from .profile_compare import TAB_TITLE, ProfileCompareView
from .settings import AppSettings
from .shortcuts import shortcuts_action_keys
from .tasks import Operation, TaskRunner
from .theme import current_theme, plain_style
from .timeline import TimelinePanel
from .token_bar import TokenBar
from .tree_model import BranchDelegate, SessionTreeModel, SessionTreeView

if TYPE_CHECKING:
    from session_studio.llm import CancelToken

__all__ = ["PAGE_BROWSER", "PAGE_SESSION", "TIMELINE_HEIGHTS", "WindowParts"]

#: the pages of the window's stack
PAGE_BROWSER, PAGE_SESSION = 0, 1


#: the context timeline's height: least, most at first (a quarter of the panes' height between)
TIMELINE_HEIGHTS = (150, 240)


class WindowParts(QMainWindow):
    """The widgets, actions and shared operations the behaviour mixins work on."""

    # the state MainWindow.__init__ sets before building the parts
    settings: AppSettings
    runner: TaskRunner
    sessions_root: str
    doc: SessionDocument
    #: the dialog opened last (tests answer or inspect it)
    last_dialog: QDialog | None
    #: the tree's context menu, once opened
    tree_menu: QMenu | None
    _gen_op: Operation | None
    _gen_cancel: CancelToken | None
    _ctx_op: Operation | None
    #: Branch with summary's count of the entries left behind, while it runs
    _branch_count_op: Operation | None
    #: the window had its size when shown (restored, or fitted on the first show)
    _sized: bool

    def _build_widgets(self) -> None:
        self.stack = QStackedWidget()
        self.browser = SessionBrowser()
        self.stack.addWidget(self.browser)

        # tree panel
        self.session_title = QLabel()
        self.session_title.setProperty("heading", True)
        self.filter_combo = QComboBox()
        for key, label in FILTERS.items():
            self.filter_combo.addItem(label, key)
        self.filter_combo.setToolTip("pi's /tree filters")
        self.filter_combo.setAccessibleName("Entry filter")  # else its current item ("Default") names it
        self.filter_combo.setAccessibleDescription("Which entries the tree shows (pi's /tree filters)")
        # as narrow as a short name: the search field and its scope share the row with it
        self.filter_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.filter_combo.setMinimumContentsLength(8)
        self.search = QLineEdit()
        self.search.setAccessibleName("Search entries")  # its placeholder is no name to a screen reader
        self.search.setClearButtonEnabled(True)
        # what a search matches is said where it is typed (_show_search_scope)
        self.search_scope = QToolButton()
        self.search_scope.setObjectName("scopeToggle")  # its look: main_window.stylesheet
        self.tree_model = SessionTreeModel(self)
        self.tree = SessionTreeView()
        self.tree.setModel(self.tree_model)
        self.tree_model.repaint_requested.connect(lambda: self.tree.viewport().update())
        self.tree_model.pi16_ready.connect(lambda: self.inspector.show_entry(self.inspector.index))
        self.tree.setUniformRowHeights(True)
        self.tree.setItemDelegate(BranchDelegate(self.tree))
        self.tree.setStyle(plain_style(self.tree))
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
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
            # a narrow tree pane wraps them (the project's folder, "· 19 labels") instead of
            # cutting them off at its edge
            lab.setWordWrap(True)
        tree_panel = QWidget()
        tl = QVBoxLayout(tree_panel)
        tl.setContentsMargins(6, 6, 0, 6)
        tl.setSpacing(4)
        tl.addWidget(self.session_title)
        fr = QHBoxLayout()
        fr.addWidget(self.filter_combo)
        fr.addWidget(self.search, 1)
        fr.addWidget(self.search_scope)
        tl.addLayout(fr)
        tl.addWidget(self.tree, 1)
        tl.addWidget(self.tree_count)

        # centre tabs
        self.inspector: EntryInspector = EntryInspector()
        self.inspector.edit_facts = lambda: self.tree_model.edits  # the tree's active path decides
        self.inspector.usage_totals = lambda: self.tree_model.usage()
        self.why = SafeTextBrowser()
        self.why.setAccessibleName("Why this cut")
        self.preview = PreviewPane()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # in a narrow pane every tab stays in sight, the longest shortened ("pi 0.80.2 v…" sat
        # behind scroll arrows at 960 px, and scrolling to it hid "Entry")
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.tabs.addTab(self.inspector, "Entry")
        self.tabs.addTab(self.why, "Why this cut")
        self.tabs.addTab(self.preview, "Preview")
        self.compare = ProfileCompareView()
        self.tabs.addTab(self.compare, TAB_TITLE)
        self.tabs.setTabToolTip(
            self.tabs.indexOf(self.compare),
            "pi 0.80.2's and pi 1.6.0's plans of this session side by side, and the rules that make them differ",
        )

        self.planner = PlannerPanel()  # its minimumSizeHint keeps its settings whole

        self.splitter = KeySplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(tree_panel)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(self.planner)
        self.splitter.setStretchFactor(0, 4)
        self.splitter.setStretchFactor(1, 5)
        self.splitter.setStretchFactor(2, 0)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([560, 620, 340])

        self.banner = IssueBanner()
        self.disk_banner = DiskBanner()
        self.legacy_banner = LegacyBanner()
        self.load_banner = LoadingBanner()
        self.bar = TokenBar()
        self.timeline = TimelinePanel(
            self.runner, lambda: self.doc.loaded_state.planner if self.doc.loaded_state else None
        )
        self.timeline.setVisible(False)  # View → Context timeline
        # the timeline above the panes, its height the user's to drag: fixed at ~230 px it left the
        # Preview's summary 40 px of a 700 px window
        self.vsplit = KeySplitter(Qt.Orientation.Vertical)
        self.vsplit.addWidget(self.timeline)
        self.vsplit.addWidget(self.splitter)
        self.vsplit.setStretchFactor(0, 0)
        self.vsplit.setStretchFactor(1, 1)
        self.vsplit.setChildrenCollapsible(False)
        #: the timeline's height once the user dragged it (kept while the window is open), else None
        self.timeline_height: int | None = None
        self.vsplit.splitterMoved.connect(lambda *_: setattr(self, "timeline_height", self.vsplit.sizes()[0]))
        ws = QWidget()
        wl = QVBoxLayout(ws)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(0)
        wl.addWidget(self.load_banner)
        wl.addWidget(self.disk_banner)
        wl.addWidget(self.banner)
        wl.addWidget(self.legacy_banner)
        wl.addWidget(self.bar)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        wl.addWidget(line)
        wl.addWidget(self.vsplit, 1)
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
        self.a_export = act(
            "&Export…", "Ctrl+E", "Export the plan, the path or the context as HTML or Markdown"
        )
        self.a_quit = act("&Quit", S.Quit)
        self.a_find = act("&Find", S.Find, "Search entries in the tree")
        self.a_search_content = act(
            "Search the whole co&ntent",
            "Ctrl+Shift+F",
            "Find what you type anywhere in an entry (a tool's output, a call's arguments), not only in "
            "its row: reads the whole file, seconds on a big session",
        )
        self.a_search_content.setCheckable(True)
        self.a_search_content.setIconText("In content")  # the button beside the search field
        self.a_copy_id = act("Copy entry &id", "Ctrl+Shift+C", "Copy the selected entry's id")
        self.a_copy_id.setIconText("Copy id")  # the inspector's button
        self.a_next = act("&Next entry", "Alt+Down")
        self.a_prev = act("&Previous entry", "Alt+Up")
        self.a_leaf = act("Go to &leaf", "Ctrl+L")
        self.a_goto_cut = act("&Go to cut", "Ctrl+J")
        self.a_cut_here = act("&Cut here", "Ctrl+K", "Use the selected entry as the cut point")
        self.a_auto_cut = act("&Automatic cut", "Ctrl+Shift+K")
        self.a_preview = act("&Preview summary", "Ctrl+P", "Generate and preview the compaction summary")
        self.a_generate = act(
            "&Generate summary", "Ctrl+G", "Generate the compaction summary with the Preview's model"
        )
        self.a_commit = act("Co&mmit compaction", "Ctrl+Return", "Append the CompactionEntry")
        #: View ▸ Tab: each tab of the workspace by Alt+number, as tabbed programs do (the widgets
        #: are built first: the names are the tabs' own)
        self.tab_actions = [
            act(f"&{n + 1} {self.tabs.tabText(n)}", f"Alt+{n + 1}", f"Show the {self.tabs.tabText(n)} tab")
            for n in range(self.tabs.count())
        ]
        self.a_compare = act(
            "Compare pi &versions",
            "Ctrl+Shift+V",
            "Show pi 0.80.2's and pi 1.6.0's plans of this session side by side, and the rules that differ",
        )
        self.a_branch = act("&Branch here")
        self.a_branch_sum = act("Branch with &summary…")
        self.a_fork = act("&Fork to new file…")
        self.a_label = act("&Label entry…")
        self.a_rename = act("&Rename session…")
        self.a_omit_attempt = act("&Omit failed attempt…")
        self.a_upgrade = act("&Upgrade legacy file (keeps a backup)…")
        self.a_provider = act(
            "Custom provi&der…", tip="Base URL, model and key variable of a custom provider"
        )
        self.a_count_provider = act(
            "Count &tokens with the provider",
            tip="Send the active path's context to the configured Anthropic provider's count_tokens endpoint",
        )
        self.a_timeline = act("Context time&line", "Ctrl+T", "Show how the context grew and was compacted")
        self.a_timeline.setCheckable(True)
        self.a_divider = act(
            "Move pane &divider",
            "F8",
            "Put the keys on a pane divider (again: the next one): the arrow keys move it, Return keeps "
            "it, Escape puts it back",
        )
        self.a_about = act("&About Session Studio")
        self.a_help = act(
            "&How pi compacts",
            QKeySequence.StandardKey.HelpContents,
            "What compaction is, and where this window shows it",
        )
        self.a_shortcuts = act("&Keyboard shortcuts", tip="Every command's keys, and the views' own keys")
        self.a_shortcuts.setShortcuts(shortcuts_action_keys())
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
        self.recent_menu = m.addMenu("Open recen&t")
        m.addSeparator()
        m.addActions([self.a_reload, self.a_export, self.a_close])
        m.addSeparator()
        m.addAction(self.a_quit)
        m = mb.addMenu("&Edit")
        m.addActions([self.a_find, self.a_search_content, self.a_copy_id])
        m = mb.addMenu("&View")
        m.addAction(self.a_timeline)
        tm = m.addMenu("&Theme")
        tm.addActions(list(self.theme_actions.values()))
        m.addAction(self.a_compare)
        m.addMenu("T&ab").addActions(self.tab_actions)
        m.addAction(self.a_divider)
        m = mb.addMenu("&Go")
        m.addActions([self.a_next, self.a_prev, self.a_leaf, self.a_goto_cut])
        m = mb.addMenu("&Session")
        m.addActions(
            [self.a_cut_here, self.a_auto_cut, self.a_preview, self.a_generate, self.a_commit, self.a_compare]
        )
        m.addAction(self.a_omit_attempt)
        m.addSeparator()
        m.addActions([self.a_branch, self.a_branch_sum, self.a_fork, self.a_label, self.a_rename])
        m.addSeparator()
        m.addActions([self.a_upgrade, self.a_provider, self.a_count_provider])
        m.setToolTipsVisible(True)
        m = mb.addMenu("&Help")
        m.addActions([self.a_help, self.a_shortcuts])
        m.addSeparator()
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
            "omit_attempt": (
                self.a_omit_attempt,
                "Take the failed last answer and its tool results out of the context with context edits, "
                "as pi 1.6.0 does before it compacts for an overflow",
            ),
        }

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
            self.a_generate,
            self.a_export,
            self.a_compare,
            *self.tab_actions,
        ):
            a.setEnabled(has)
        self.a_auto_cut.setEnabled(bool(has and st and st.manual))
        copyable = has and self._copyable_id(self.doc.selected) is not None
        self.a_copy_id.setEnabled(copyable)
        s = self.doc.session
        made = s is not None and self.doc.selected >= 0 and s.id_made_on_open(self.doc.selected)
        self.a_copy_id.setToolTip(
            "This version 1 file has no entry ids: the one shown was made on opening, and the next "
            "open (pi's too) makes another"
            if made
            else "Copy the selected entry's id"
        )
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

    def ask_yes_no(
        self, title: str, text: str, details: str = "", yes: str = "Yes", *, default_yes: bool = True
    ) -> bool:
        """A modal question (tests accept it through ``QApplication.activeModalWidget()``);
        ``default_yes`` False: Return answers Cancel."""
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(title)
        box.setText(text)
        if details:
            box.setDetailedText(details)
        ok = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(ok if default_yes else cancel)
        self.last_dialog = box
        box.exec()
        answer = box.clickedButton() is ok
        box.deleteLater()  # answered: not left a child of the window, one per question
        return answer

    def ask_text(self, title: str, label: str, default: str) -> str | None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setTextValue(default)
        # room for a name or a label of a few words (the rename dialog opened 200 px wide)
        dialog.resize(max(420, dialog.sizeHint().width()), dialog.sizeHint().height())
        self.last_dialog = dialog
        ok = dialog.exec() == QInputDialog.DialogCode.Accepted
        text = dialog.textValue()
        dialog.deleteLater()  # answered: not left a child of the window, one per question
        return text if ok else None

    def ask_save_path(self, title: str, default: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self, title, default, "pi sessions (*.jsonl);;All files (*)")
        return path

    def _target_for(self, action: str, record: int | None) -> str | None:
        """The entry id `action` works on, or None after saying in the status bar why it cannot run."""
        d = self.doc
        why = actions.disabled_reasons(d, d.writing)[action]
        target = self._entry_id(record)
        if why or d.session is None or target is None:
            self.statusBar().showMessage(why or "This entry has no usable id", 8000)
            return None
        return target

    def _entry_words(self, record: int, limit: int) -> str:
        """An entry in a few words for a dialog: its role or type and the start of its row's text."""
        s = self.doc.session
        assert s is not None
        r = s.records[record]
        kind = r.role if r.type == "message" else r.type
        preview = self.tree_model.preview(record)
        if len(preview) > limit:  # cut at a word where there is one near, and say that it is cut
            cut = preview[: limit - 1]
            space = cut.rfind(" ")
            preview = (cut[:space] if space > limit // 2 else cut).rstrip() + "…"
        # a label's or a compaction's row names its kind already ("label 'x' on e1"): not twice; a
        # message's text is the user's, whatever word it starts with
        named = r.type != "message" and isinstance(kind, str) and preview.startswith(kind)
        return preview if named else f"{kind}: {preview}"

    def _entry_id(self, record: int | None) -> str | None:
        s = self.doc.session
        if s is None or record is None or record < 0:
            return None
        rid = s.records[record].id
        return rid if isinstance(rid, str) else None

    def _copyable_id(self, record: int | None) -> str | None:
        """The entry's id to copy: None also for one made on opening (a version 1 file's: of no use
        outside this window, the next open, the CLI's or pi's, makes other ones)."""
        s = self.doc.session
        if s is None or record is None or record < 0 or s.id_made_on_open(record):
            return None
        return self._entry_id(record)

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

    def open_path(self, path: str) -> Operation | None:
        if self.doc.path and os.path.abspath(path) != self.doc.path and not self._may_drop_summary():
            return None
        return self.doc.open(path)

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
