"""The session browser: sessions grouped by project, search, recent files, drag and drop."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QDragEnterEvent,
    QDropEvent,
    QFont,
    QKeyEvent,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from session_studio.core.content_search import file_holds_text
from session_studio.core.file_search_memo import FileSearchMemo
from session_studio.core.listing import SessionInfo, fmt_date, fmt_size

from .pane_keys import KeySplitter
from .plain import rich_tooltip, visible
from .roles import Roles
from .tasks import Operation, TaskRunner
from .text_lines import line_height

#: how long the browser waits after the last key before it reads the sessions' content
CONTENT_SEARCH_DELAY_MS = 300

__all__ = ["SessionBrowser", "SessionFilterProxy", "build_browser_model"]

HEADERS = ("Session", "Last message", "Entries", "Size")
#: why the second column is not the file's modification time
LAST_MESSAGE_TIP = (
    "When the session's last user or assistant message was written, as pi's session list "
    "sorts sessions (not the file's modification time)"
)


def build_browser_model(
    infos: list[SessionInfo], model: QStandardItemModel | None = None
) -> QStandardItemModel:
    """Projects (cwd) → sessions, newest project first; a fork is listed under the session it was
    forked from (its header's parentSession), as pi's session selector threads them.

    A .jsonl that is no session (no valid header, empty, unreadable) is listed after the sessions
    of the project whose folder holds it, or, in a folder without a session, in a last group of
    its own: it neither counts as a session nor puts its project first by its modification time."""
    m = model or QStandardItemModel()
    m.clear()
    m.setHorizontalHeaderLabels(list(HEADERS))
    m.horizontalHeaderItem(1).setToolTip(LAST_MESSAGE_TIP)
    for cwd, items in project_groups(infos):
        sessions = [i for i in items if not i.error]
        others = [i for i in items if i.error]
        label = NOT_SESSIONS if cwd is None else cwd
        proj = QStandardItem(visible(label, 300, keep_newlines=False))
        proj.setToolTip(rich_tooltip(NOT_SESSIONS_TIP if cwd is None else cwd))
        f = proj.font()
        f.setBold(True)
        proj.setFont(f)
        proj.setEditable(False)
        proj.setData(items[0].modified, Roles.SORT)
        proj.setData(label.casefold(), Roles.SEARCH)
        # the view spans the project's name over the row (it needs the width; the count after
        # it widened the Entries column and left the sessions' titles a few letters)
        proj.setData(_group_count(len(sessions), len(others), cwd is None), Roles.GROUP_COUNT)
        proj.setData(len(sessions), Roles.SESSIONS)
        row = [proj] + [QStandardItem("") for _ in HEADERS[1:]]
        for it in row:
            it.setEditable(False)
        roots, children = fork_tree(sessions)
        titles = {_path_key(i.path): i.title for i in sessions}

        for info in roots:
            _add_thread(proj, info, children, titles)
        for info in others:
            proj.appendRow(_session_cells(info, None))
        m.appendRow(row)
    return m


#: the group of the files that are no session, in folders that hold no session
NOT_SESSIONS = "Files that are not sessions"
NOT_SESSIONS_TIP = (
    ".jsonl files in the sessions folder that pi cannot load as a session (no valid header, "
    "empty or unreadable), in folders that hold no session; pi's session list leaves them out"
)


def project_groups(infos: list[SessionInfo]) -> list[tuple[str | None, list[SessionInfo]]]:
    """``infos`` by project, the project with the latest session first (a project's files keep
    the order of ``infos``); a file that is no session goes to the project of a session in the
    same folder (pi keeps one folder per project), else to a last group, keyed None."""
    folder_cwd: dict[str, str] = {}
    for i in infos:
        if not i.error:
            folder_cwd.setdefault(os.path.dirname(_path_key(i.path)), i.cwd or NO_PROJECT)
    groups: dict[str, list[SessionInfo]] = {}
    stray: list[SessionInfo] = []
    for i in infos:
        cwd = folder_cwd.get(os.path.dirname(_path_key(i.path))) if i.error else i.cwd or NO_PROJECT
        if cwd is None:
            stray.append(i)
        else:
            groups.setdefault(cwd, []).append(i)

    def latest(items: list[SessionInfo]) -> float:
        return max(i.modified for i in items if not i.error)  # each group holds a session

    ordered: list[tuple[str | None, list[SessionInfo]]] = sorted(
        groups.items(), key=lambda kv: latest(kv[1]), reverse=True
    )
    if stray:
        ordered.append((None, stray))
    return ordered


#: the project of a session whose header names no working directory
NO_PROJECT = "(no project)"


def _sessions(n: int) -> str:
    return f"{n:,} session{'s' if n != 1 else ''}"


def _group_count(sessions: int, others: int, strays: bool) -> str:
    """A project row's count ("3 sessions · 1 not a session"); the last group's ("2 files")."""
    if strays:
        return f"{others:,} file{'s' if others != 1 else ''}"
    return _sessions(sessions) + (f" · {others:,} not a session" if others else "")


def _add_thread(
    parent: QStandardItem, info: SessionInfo, children: dict[str, list[SessionInfo]], titles: dict[str, str]
) -> float:
    """The session's row under ``parent`` and its forks under it; the thread's latest activity."""
    cells = _session_cells(info, titles.get(_path_key(info.parent_session or "")))
    parent.appendRow(cells)
    latest = info.modified
    for child in children.get(_path_key(info.path), ()):
        latest = max(latest, _add_thread(cells[0], child, children, titles))
    cells[0].setData(latest, Roles.SORT)  # pi sorts a thread by its latest activity
    return latest


def _which_one(path: str, twins: list[str]) -> str:
    """What tells ``path`` from the other files listed by the same name: its folder's name where
    theirs differ (a copy in another project), else its own file name (timestamp and UUID)."""
    folders = [os.path.dirname(_path_key(q)) for q in twins]
    if len(set(folders)) == len(folders):
        return visible(os.path.basename(os.path.dirname(_path_key(path))) or "/", 120, keep_newlines=False)
    return visible(os.path.basename(path), 120, keep_newlines=False)


def _is_session(ix: QModelIndex) -> bool:
    """Whether a browser row is a session (not a project, not a file that is no session)."""
    return bool(ix.data(Roles.PATH)) and not ix.data(Roles.NOT_SESSION)


def _home_short(folder: str) -> str:
    """``folder`` with the home folder as "~"."""
    home = os.path.expanduser("~")
    if home != "/" and (folder == home or folder.startswith(home + os.sep)):
        return "~" + folder[len(home) :]
    return folder


def _path_key(path: str) -> str:
    """A session file's path as the browser compares them (a header's parentSession, a recent file)."""
    return os.path.abspath(path) if path else ""


def fork_tree(items: list[SessionInfo]) -> tuple[list[SessionInfo], dict[str, list[SessionInfo]]]:
    """The sessions that head a thread, and each listed session's forks (by its path key).

    A fork whose parent is not among ``items`` heads its own thread; so does every session of a
    parent cycle (malformed headers), which pi's selector would leave out of its list."""
    keys = {_path_key(i.path) for i in items}
    children: dict[str, list[SessionInfo]] = {}
    roots: list[SessionInfo] = []
    for info in items:
        parent = _path_key(info.parent_session or "")
        if parent and parent in keys and parent != _path_key(info.path):
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    roots, children = _break_cycles(items, roots, children)
    # threads newest first, by the latest activity anywhere in them (pi's order)
    latest: dict[str, float] = {}

    def activity(info: SessionInfo) -> float:
        key = _path_key(info.path)
        if key not in latest:
            latest[key] = max([info.modified, *(activity(c) for c in children.get(key, ()))])
        return latest[key]

    for group in (roots, *children.values()):
        group.sort(key=activity, reverse=True)
    return roots, children


def _break_cycles(
    items: list[SessionInfo], roots: list[SessionInfo], children: dict[str, list[SessionInfo]]
) -> tuple[list[SessionInfo], dict[str, list[SessionInfo]]]:
    """Every session reachable from a thread's head: a parent cycle (malformed headers) is cut
    where it is first met, so that session heads its own thread."""
    reached: set[str] = set()

    def reach(key: str) -> None:
        stack = [key]
        while stack:
            k = stack.pop()
            if k not in reached:
                reached.add(k)
                stack.extend(_path_key(c.path) for c in children.get(k, ()))

    for info in roots:
        reach(_path_key(info.path))
    for info in items:  # a cycle: nothing leads to it from a thread's head
        key = _path_key(info.path)
        if key not in reached:
            children[_path_key(info.parent_session or "")].remove(info)  # its one parent's list
            roots.append(info)
            reach(key)
    return roots, children


def _badges(info: SessionInfo) -> tuple[str, str]:
    """What the list says before a session's title (a legacy version, damaged lines seen) and
    the tooltip's words for it: the window says both on opening, the list said neither."""
    marks, notes = "", ""
    if info.damaged_seen:
        n = info.damaged_seen
        marks += "⚠ "
        notes += (
            f"\n\n⚠ {n} damaged line{'s' if n != 1 else ''} (not a JSON object) in the part of the file "
            "read for this list, its first and last 64 KiB: pi skips "
            f"{'them' if n != 1 else 'it'}. Opening the file lists every damaged line."
        )
    if info.legacy_version is not None:
        v = info.legacy_version
        shown = visible(str(v), 20, keep_newlines=False)
        marks += f"v{shown} · "
        notes += (
            f"\n\nVersion {shown} file: pi migrates it to version 3 when it opens it, rewriting the "
            "file; Session Studio shows it migrated and can upgrade it (keeping a backup)."
        )
    return marks, notes


def _session_cells(info: SessionInfo, parent_title: str | None) -> list[QStandardItem]:
    """One session's row; ``parent_title``: the session it was forked from, when listed."""
    # session text is shown literally: elided, control/bidi characters visible, never HTML
    if info.error:
        title = QStandardItem(f"⚠ {visible(info.title, 200, keep_newlines=False)} — {info.error}")
        title.setToolTip(rich_tooltip(f"{info.path}\n\nThis file {info.error}"))
    else:
        marks, notes = _badges(info)
        title = QStandardItem(marks + visible(info.title, 200, keep_newlines=False))
        fork = f"\n\nForked from: {parent_title}" if parent_title is not None else ""
        title.setToolTip(rich_tooltip(f"{info.path}\n\n{info.first_message}{fork}{notes}"))
    title.setData(info.path, Roles.PATH)
    title.setData(bool(info.error), Roles.NOT_SESSION)
    title.setData(info.modified, Roles.SORT)
    title.setData(
        "\n".join(x for x in (info.name or "", info.first_message, info.path) if x).casefold(),
        Roles.SEARCH,
    )
    cells = [
        title,
        QStandardItem(fmt_date(info.modified)),
        QStandardItem(
            "" if info.error else f"{info.entries:,}" if info.entries_exact else f"~{info.entries:,}"
        ),
        QStandardItem("" if info.error else fmt_size(info.size)),
    ]
    for c in cells:
        c.setEditable(False)
        c.setData(info.path, Roles.PATH)
    cells[2].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    cells[3].setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return cells


#: text whose glyphs come from the fallback fonts a session title may need (CJK, emoji)
_TALL_LINE_PROBE = "Ag字😀"


class TallLineDelegate(QStyledItemDelegate):
    """Rows as high as a line that a fallback font draws needs. The rows are uniform, as high as
    the first; a title with CJK or emoji is laid out in a taller line, centred, and its Latin
    letters' descenders were cut off ("arqument")."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._heights: dict[str, int] = {}

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(hint.width(), max(hint.height(), self._line_height(option.font) + 2))

    def _line_height(self, font: QFont) -> int:
        key = font.key()
        got = self._heights.get(key)
        if got is None:
            got = self._heights[key] = math.ceil(line_height(_TALL_LINE_PROBE, font))
        return got


class SessionFilterProxy(QSortFilterProxyModel):
    """The browser search: a session matches by name, first message or path; a project by its path.

    A matching project keeps all its sessions (something to open); a matching session keeps its
    project (recursive filtering).
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self._needle = ""
        #: the sessions whose content holds the search (In content), by path; None: not searched
        self._content: frozenset[str] | None = None

    def set_search(self, text: str, content: frozenset[str] | None = None) -> None:
        self.beginFilterChange()
        self._needle = text.strip().casefold()
        self._content = content
        self.endFilterChange()

    def searching(self) -> bool:
        return bool(self._needle)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """A project's row: its name, then how many sessions it holds ("/home/u/app · 2 sessions"),
        or, while a search filters them, how many of them it shows ("· 1 of 2 sessions")."""
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 0 and not index.parent().isValid():
            count = super().data(index, Roles.GROUP_COUNT)
            total = super().data(index, Roles.SESSIONS)
            if self._needle and isinstance(total, int) and total:
                count = f"{self._shown_sessions(self.index(index.row(), 0)):,} of {_sessions(total)}"
            return f"{super().data(index, role)} · {count}"
        return super().data(index, role)

    def _shown_sessions(self, parent: QModelIndex) -> int:
        n = 0
        for row in range(self.rowCount(parent)):
            ix = self.index(row, 0, parent)
            n += _is_session(ix) + self._shown_sessions(ix)
        return n

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        if not self._needle:
            return True
        src = self.sourceModel()
        cell = src.index(row, 0, parent)
        if self._needle in str(cell.data(Roles.SEARCH) or ""):
            return True
        if self._content is not None and cell.data(Roles.PATH) in self._content:
            return True
        # a matching project keeps all of its sessions, forks under a session included (checking
        # only the parent row dropped those: their parent is the session they came from)
        while parent.isValid():
            if self._needle in str(parent.data(Roles.SEARCH) or ""):
                return True
            parent = parent.parent()
        return False


class SessionBrowser(QWidget):
    open_requested = Signal(str)
    open_file_dialog = Signal()
    refresh_requested = Signal()
    #: Escape: back to the session that is open, if one is
    back_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.model = QStandardItemModel(self)
        self.proxy = SessionFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search sessions (name, first message, project, file)")
        self.search.setClearButtonEnabled(True)
        #: In content: the window gives it its Search the whole content action (one setting)
        self.content_button = QToolButton()
        self.content_button.setObjectName("scopeToggle")  # its look: main_window.stylesheet
        #: runs the content search (the window's); None: names, first messages and projects only
        self.runner: TaskRunner | None = None
        self._content_op: Operation | None = None
        #: what earlier content searches learned of each listed file: typing on reads only the
        #: files they leave open (a file without "rend" is not read for "render")
        self._content_memo = FileSearchMemo()
        self._content_serial = 0
        #: (sessions read, of sessions) by the content search running now
        self.content_read = (0, 0)
        self._content_timer = QTimer(self)
        self._content_timer.setSingleShot(True)
        self._content_timer.setInterval(CONTENT_SEARCH_DELAY_MS)
        self._content_timer.timeout.connect(self._search_content)
        self.title = QLabel()
        self.title.setProperty("heading", True)
        self._count, self._sample = 0, False  # the sessions listed, and whether they are the samples
        self._others = 0  # the files listed that are no session
        self.location = QLabel()
        self.location.setTextFormat(Qt.TextFormat.PlainText)  # a path is not HTML
        self.location.setProperty("muted", True)
        self.location.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_button = QPushButton("Open file…")
        self.refresh_button = QPushButton("Refresh")
        self.view = QTreeView()
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setItemDelegate(TallLineDelegate(self.view))
        self.view.setAlternatingRowColors(True)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setAllColumnsShowFocus(True)
        # the list keeps pi's order (newest activity first, forks under their session): headers
        # that looked clickable and sorted nothing are plain labels
        self.view.header().setSectionsClickable(False)
        self.recent = QListWidget()  # small list of paths: an item view is fine here
        self.recent.setAlternatingRowColors(True)
        # a long name loses its middle, not its end (where a folder tells two of one name apart);
        # the whole path is the item's tooltip
        self.recent.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.recent.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        #: the listed sessions by path: a recent file among them is named by its title and project
        self._listed: dict[str, SessionInfo] = {}
        self._recent: tuple[list[str], dict[str, str]] = ([], {})
        self.drop_hint = QLabel("Drop a .jsonl session file anywhere here to open it.")
        self.drop_hint.setProperty("muted", True)

        head = QHBoxLayout()
        head.addWidget(self.title)
        head.addStretch(1)
        head.addWidget(self.refresh_button)
        head.addWidget(self.open_button)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.search, 1)
        row.addWidget(self.content_button)
        ll.addLayout(row)
        ll.addWidget(self.view, 1)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(QLabel("<b>Recent files</b>"))
        rl.addWidget(self.recent, 1)
        rl.addWidget(self.drop_hint)
        split = KeySplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.splitter = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 10, 12, 10)
        lay.addLayout(head)
        lay.addWidget(self.location)
        lay.addWidget(split, 1)

        self.search.textChanged.connect(self._search)
        # from the search field, as in a quick-open list: Down goes to the first session shown,
        # Return opens it, Escape clears it
        self.search.returnPressed.connect(self._open_first)
        self.search.installEventFilter(self)
        self.view.installEventFilter(self)  # Escape on the list: back to the open session
        self.view.doubleClicked.connect(self._activated)
        self.view.activated.connect(self._activated)
        self.recent.itemActivated.connect(
            lambda it: self.open_requested.emit(it.data(Qt.ItemDataRole.UserRole))
        )
        self.open_button.clicked.connect(self.open_file_dialog)
        self.refresh_button.clicked.connect(self.refresh_requested)

    def set_sessions(self, infos: list[SessionInfo], where: str, sample: bool = False) -> None:
        build_browser_model(infos, self.model)
        self._listed = {_path_key(i.path): i for i in infos if not i.error}
        self.set_recent(*self._recent)
        self._count, self._sample = sum(not i.error for i in infos), sample
        self._others = len(infos) - self._count
        self._show_count()
        self.location.setText(
            f"No pi sessions found in {where}; showing the bundled sample sessions." if sample else where
        )
        self.view.expandAll()
        h = self.view.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self._span_projects()
        if self.search.text().strip():
            self._search(self.search.text())  # the new list searched as the old one was

    def _span_projects(self) -> None:
        """Each project row's name and count over the whole row (a filter change re-inserts the
        rows, and the view forgets the span of a row it removed)."""
        for row in range(self.proxy.rowCount()):
            self.view.setFirstColumnSpanned(row, QModelIndex(), True)

    def use_content_action(self, action: QAction) -> None:
        """In content is the window's Search the whole content (Ctrl+Shift+F): one setting for both."""
        self.content_button.setDefaultAction(action)
        action.toggled.connect(self._scope_changed)
        self._show_scope()

    def _scope_changed(self, _on: bool) -> None:
        self._show_scope()
        self._search(self.search.text())

    def _show_scope(self) -> None:
        """What the search matches, said where it is typed."""
        self.search.setPlaceholderText(
            "Search sessions (name, first message, project, file, content)"
            if self._in_content()
            else "Search sessions (name, first message, project, file)"
        )

    def _in_content(self) -> bool:
        action = self.content_button.defaultAction()
        return self.runner is not None and action is not None and action.isChecked()

    def _search(self, text: str) -> None:
        # names, first messages and projects at once; the sessions' content a moment after the
        # last key (it reads every file), added to them when read
        self._stop_content_search()
        self.proxy.set_search(text)
        self._span_projects()
        self.view.expandAll()  # every group left holds a match (or is one): show its sessions
        self._show_count()
        if text.strip() and self._in_content():
            self._content_timer.start()

    def _stop_content_search(self) -> None:
        self._content_timer.stop()
        self._content_serial += 1
        if self._content_op is not None:
            self._content_op.cancel()
            self._content_op = None
        self.content_read = (0, 0)

    def _search_content(self) -> None:
        """Which listed sessions hold the search anywhere in their content (core.content_search),
        read in a worker one file after the other; the list then shows them too."""
        text = self.search.text()
        assert self.runner is not None
        paths = [info.path for info in self._listed.values()]  # the sessions listed that opened
        serial = self._content_serial
        memo = self._content_memo
        memo.forget(set(paths))

        def work(op: Operation) -> frozenset[str]:
            found = set()
            for k, path in enumerate(paths):
                op.report(k, len(paths))
                try:
                    if file_holds_text(
                        path, text, lambda: op.cancelled.is_set() or serial != self._content_serial, memo
                    ):
                        found.add(path)
                except OSError:
                    continue  # gone or unreadable since it was listed: not a match
            return frozenset(found)

        work.wants_op = True  # type: ignore[attr-defined]  # TaskRunner passes the Operation

        def done(found: frozenset[str]) -> None:
            if serial != self._content_serial:
                return
            self._content_op = None
            self.content_read = (0, 0)
            self.proxy.set_search(text, found)
            self._span_projects()
            self.view.expandAll()
            self._show_count()

        def progress(k: int, n: int, _text: str) -> None:
            if serial == self._content_serial:
                self.content_read = (k, n)
                self._show_count()

        def failed(_e: BaseException, _tb: str) -> None:
            if serial == self._content_serial:  # (a newer search stopped it: that one says its state)
                self._content_op = None
                self.content_read = (0, 0)
                self._show_count()

        op = self.runner.op(work).on_success(done).on_failure(failed)
        op.progress.connect(progress)
        self._content_op = op
        self.content_read = (0, len(paths))
        self._show_count()
        op.start()

    def set_listing(self) -> None:
        """The sessions folder is being read (a first listing: "0 sessions" showed meanwhile)."""
        if not self._listed:
            self.title.setText("<b>Listing the sessions…</b>")

    def _show_count(self) -> None:
        """ "9 sessions"; while a search filters them, how many of them it shows ("1 of 9 sessions")."""
        n = self._count
        total = _sessions(n)
        if self.proxy.searching():
            total = f"{sum(_is_session(ix) for ix in self._shown_session_rows()):,} of {total}"
        elif self._others:
            total += f" · {self._others:,} other file{'s' if self._others != 1 else ''}"
        read, of = self.content_read
        reading = f" · reading their content: {read:,} of {of:,}" if of else ""
        self.title.setText(f"<b>{total}</b>" + (" · bundled samples" if self._sample else "") + reading)

    def _shown_session_rows(self, parent: QModelIndex | None = None) -> Iterator[QModelIndex]:
        """The session rows the search leaves, depth first (a project's sessions, a session's forks)."""
        parent = parent if parent is not None else QModelIndex()
        for row in range(self.proxy.rowCount(parent)):
            ix = self.proxy.index(row, 0, parent)
            if ix.data(Roles.PATH):
                yield ix
            yield from self._shown_session_rows(ix)

    def _first_session(self) -> QModelIndex:
        return next((ix for ix in self._shown_session_rows() if _is_session(ix)), QModelIndex())

    def _open_first(self) -> None:
        ix = self._first_session()
        if ix.isValid():
            self._activated(ix)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Down:
                ix = self._first_session()
                if ix.isValid():
                    self.view.setFocus()
                    self.view.setCurrentIndex(ix)
                    return True
            elif event.key() == Qt.Key.Key_Escape and self.search.text():
                self.search.clear()  # as in the session's entry search
                return True
        if (
            watched in (self.search, self.view)
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
        ):
            self.back_requested.emit()  # back to the open session (Ctrl+B came here; Escape goes back)
            return True
        return super().eventFilter(watched, event)

    def set_recent(self, paths: list[str], problems: dict[str, str] | None = None) -> None:
        """The recent files; ``problems``: files that could not be opened last time → why."""
        self.recent.clear()
        from PySide6.QtWidgets import QListWidgetItem

        problems = problems or {}
        self._recent = (list(paths), dict(problems))
        for p, label, why in self.recent_entries():
            it = QListWidgetItem(label)
            it.setToolTip(rich_tooltip(f"{p}\n\nLast attempt: {why}" if why else p))
            it.setData(Qt.ItemDataRole.UserRole, p)
            if why:
                f = it.font()
                f.setItalic(True)
                it.setFont(f)
            self.recent.addItem(it)
        if not paths:
            it = QListWidgetItem("(none yet)")
            it.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent.addItem(it)

    def recent_entries(self) -> list[tuple[str, str, str | None]]:
        """The recent files as this list and the File menu name them: (path, label, why it could
        not be opened last time or None)."""
        paths, problems = self._recent
        labels = [self._recent_label(p) for p in paths]
        # two files of one name (a copy, a fork, two sessions of one title): say which is which
        twins: dict[str, list[str]] = {}
        for p, label in zip(paths, labels, strict=True):
            twins.setdefault(label, []).append(p)
        out: list[tuple[str, str, str | None]] = []
        for p, label in zip(paths, labels, strict=True):
            why = problems.get(p)
            if len(twins[label]) > 1:
                label += " · " + _which_one(p, twins[label])
            out.append((p, label + (" — cannot open" if why else ""), why))
        return out

    def _recent_label(self, path: str) -> str:
        """A recent file as the list names it: a listed session by its project and title (its file
        name is a timestamp and a UUID), another file by its name."""
        info = self._listed.get(_path_key(path))
        if info is not None and info.title:
            # the project first: the pane is narrow and titles are long
            return (
                f"{visible(os.path.basename(info.cwd) or info.cwd, 60, keep_newlines=False)} · "
                f"{visible(info.title, 120, keep_newlines=False)}"
            )
        return visible(os.path.basename(path), 200, keep_newlines=False)

    def _activated(self, index: QModelIndex) -> None:
        path = index.data(Roles.PATH)
        if path:
            self.open_requested.emit(path)

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if e.mimeData().hasUrls() and any(u.isLocalFile() for u in e.mimeData().urls()):
            e.acceptProposedAction()

    def dropEvent(self, e: QDropEvent) -> None:
        for u in e.mimeData().urls():
            if u.isLocalFile():
                self.open_requested.emit(u.toLocalFile())
                e.acceptProposedAction()
                return
