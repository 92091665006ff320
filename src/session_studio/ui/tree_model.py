"""The session tree model: a QAbstractItemModel over :class:`outline.Outline`.

Rows are record indices; ``internalId`` is the record index + 1, so ``parent()``
and ``index()`` are dictionary lookups. Display strings are computed lazily and
cached; rows have uniform heights.

Long lists (a group of more than ``chunk_threshold`` rows, typically the flattened
active path of a 100k-entry session) are shown as collapsible blocks of
``chunk_rows`` rows ("Entries 1–500"): QTreeView lays out every expanded row
when the model resets (several Python calls per row), so only the blocks the user
or the selection opens cost anything. A block's ``internalId`` is
``CHUNK_BASE + (group + 1) * CHUNK_SPAN + block``.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QStaticText,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTreeView

from session_studio.core.content_search import content_matches
from session_studio.core.cut_points import cut_point_reason
from session_studio.core.errors import LoadCancelled
from session_studio.core.jsvalue import JsTypeError
from session_studio.core.plan import PlanMarks
from session_studio.core.priority import foreground, yield_to_foreground
from session_studio.core.session import Session

from .outline import ROOT, Outline, build_outline, extended_outline, mark_hits, preview_text
from .pi16 import (
    NO_EDITS,
    SYNC_EDIT_PATH,
    EditFacts,
    UsageTotals,
    context_edit_facts,
    has_context_edits,
    system_tokens,
    usage_totals,
)
from .plain import rich_tooltip, visible
from .roles import Roles
from .search_texts import BATCH_RECORDS, SearchTexts
from .search_worker import build_search_texts
from .tasks import Operation, TaskRunner, paused_gc
from .text_lines import line_height
from .theme import Theme, current_theme, entry_icon, kind_of

__all__ = ["CHUNK_BASE", "GUTTER", "BranchDelegate", "SessionTreeModel"]

COLUMNS = ("Entry", "Tokens", "Time")
#: entries that are not messages but give the LLM one (their Tokens cell: ui.real_tokens' estimate)
SUMMARY_TYPES = frozenset({"compaction", "branch_summary", "custom_message"})
GUTTER = 14
LAST_CHAIN = Roles.EDIT + 1

_MARK_TEXT = {
    "cut": "First kept entry: the chosen cut point",
    "turn_start": "Turn start of the split turn (its prefix is summarised separately)",
    "prefix": "Turn prefix of the split turn: summarised with the turn-prefix prompt",
    "summarised": "Before the previous compaction's kept start: already summarised",
}

Index = QModelIndex | QPersistentModelIndex
_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
#: most rows never have children: telling the view so spares it a hasChildren() call per row on layout
_LEAF_FLAGS = _FLAGS | Qt.ItemFlag.ItemNeverHasChildren
_NO_FLAGS = Qt.ItemFlag.NoItemFlags
#: more changed marks than this repaint the view instead of emitting dataChanged ranges
#: (a dataChanged range over tens of thousands of rows makes QTreeView walk every row)
MAX_MARK_RUNS = 64
#: the roles data() answers after the display, icon, alignment and font roles
_MARKED_ROLES = frozenset(
    int(r)
    for r in (
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.ToolTipRole,
        Roles.RECORD,
        Roles.ACTIVE,
        Roles.CUT_MARK,
        Roles.HEAD,
        LAST_CHAIN,
        Roles.KIND,
        Roles.EDIT,
    )
)
#: a preview not read yet is read with those of the rows around it (one file read for a screenful)
PREVIEW_BATCH = 64
PREVIEW_BATCH_BEFORE = 16
#: internal ids at and above this are row blocks, not records
CHUNK_BASE = 1 << 40
CHUNK_SPAN = 1 << 20


def _chunk_id(group: int, block: int) -> int:
    return CHUNK_BASE + (group + 1) * CHUNK_SPAN + block


def _chunk_of(iid: int) -> tuple[int, int]:
    """(group key, block number) of a block's internal id."""
    g, c = divmod(iid - CHUNK_BASE, CHUNK_SPAN)
    return g - 1, c


#: what a record's cell shows: text, font, text colour, background (see SessionTreeModel.cell_style)
CellStyle = tuple[str, QFont | None, QColor | None, QColor | None]
#: cell styles kept between paints (see SessionTreeModel.begin_paint): ~9 screenfuls of 54 rows (a
#: screenful asks for ~220), under 1 MB
KEPT_CELLS = 2048


class RowLook(NamedTuple):
    """How a record's row is drawn around its cells (see SessionTreeModel.row_look)."""

    in_group: bool  #: the entry cell has the branch connector gutter
    mark: str  #: the plan's mark ("cut", "valid", ...; "" none)
    head: bool  #: the row heads a branch
    last: bool  #: the row is in the last chain of its group (the connector ends)
    background: QColor | None


class _RowColors(NamedTuple):
    """What rows are painted with under one theme (see SessionTreeModel._row_colors)."""

    theme: Theme
    cut_bg: QColor
    prefix: QColor
    active_bg: QColor
    muted: QColor


class SessionTreeModel(QAbstractItemModel):
    #: many marks changed at once: repaint the visible rows (connect to ``viewport().update``)
    repaint_requested = Signal()
    #: pi 1.6.0 facts computed in a worker arrived (context edits, usage totals): views showing
    #: them render again
    pi16_ready = Signal()
    #: (records done, records) of the search texts a big session's workers are building
    search_text_progress = Signal(int, int)
    #: a content search's bytes read of the file (see content_read)
    content_search_progress = Signal(int, int)

    #: groups longer than this are shown as blocks of ``chunk_rows`` rows; below it a flat list
    #: lays out in a few tens of ms, and blocks would only get in the reader's way (at 4,000 a 12 MB
    #: session's 3,586 top-level rows were laid out in the loaded step: 106–139 ms of the GUI thread)
    chunk_threshold = 2000
    chunk_rows = 500
    #: the head of a big file (shown while the rest is indexed) is in blocks from this many rows: its
    #: flat list of ~3,000 rows took ~0.1 s of the GUI thread to lay out, a stall in the middle of the
    #: load, and the whole file is shown in blocks a moment later anyway
    head_chunk_threshold = 1000
    #: previews kept for painting (~400 bytes each): a scroll through 900k rows kept them all
    preview_cache_rows = 8192

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.session: Session | None = None
        self._outline = Outline()
        self._root_rows: Sequence[int] = []
        self._chunked: dict[int, int] = {}  # group key → number of blocks (long groups only)
        self._colors: _RowColors | None = None
        self._parents: dict[int, QModelIndex] = {}  # internal id → parent index (see parent())
        self._head = False  # the session shown is the head of a file still being indexed
        self._bp_by_chunk: dict[int, list[int]] | None = None
        self._italic = QFont()
        self._italic.setItalic(True)
        self._fresh = True  # reset since the last marks: nothing was painted with marks yet
        self.marks: Mapping[int, str] = {}
        self._preview: dict[int, str] = {}
        self._bold = QFont()
        self._bold.setBold(True)
        self._struck = QFont()
        self._struck.setStrikeOut(True)
        self._bold_struck = QFont(self._bold)
        self._bold_struck.setStrikeOut(True)
        #: pi 1.6.0 context edits seen from the active path (which rows are hidden / replaced)
        self.edits: EditFacts = NO_EDITS
        self._edits_path: list[int] | None = None  # a long path whose edits a worker is to find
        self._usage: UsageTotals | None = None
        self._usage_wanted = False
        self._pi16_runner: TaskRunner | None = None
        self._pi16_serial = 0
        self._system_tokens: dict[int, Any] = {}
        #: record → "pi estimate N · real M (tokenizer)" for the tooltip (ui.real_tokens); None: none
        self.token_line: Callable[[int], str] | None = None
        #: record → pi's estimate of the messages a summary or custom message gives the LLM, under
        #: the file's profile (ui.real_tokens); None: the Tokens column leaves those rows empty
        self.estimate_of: Callable[[int], float | None] | None = None
        self._summary_tokens: dict[int, float | None] = {}
        #: (session, records looked at, a context edit among them): see _has_context_edits
        self._edits_scan: tuple[Session, int, bool] | None = None
        self.mode = "default"
        self.query = ""
        #: the search looks at the entries' whole content too (core.content_search), not only the rows
        self.in_content = False
        #: (bytes, of bytes) of the file a content search running now has read
        self.content_read = (0, 0)
        #: an In content search shown without the rows' matches (their texts were still being built):
        #: (mode, query, on_done), searched again when the texts come
        self._without_texts: tuple[str, str, Callable[[], None]] | None = None
        #: the last content search: (session, its records then, lowercased query, the hits in order;
        #: an array: a search for "e" holds most of 900k records, ~60 MB as a set of ints)
        self._content_hits: tuple[Session, int, str, array[int]] | None = None
        #: lowercased search text per record (its preview), built once per session off the GUI thread
        self._search_texts: SearchTexts | None = None
        #: (records, of records) whose search text the workers sent so far (see prepare_search)
        self.search_text_read = (0, 0)
        self._filter_serial = 0
        self._filtering = False  # a filter build runs in a worker
        self._indexing = False  # the search texts are being built in a worker
        self._pending_filter: tuple[str, str, Callable[[], None], bool] | None = None
        #: the active path the next outline build is to show (set by rebuild_async: pi appended, the
        #: path moved); None: the shown outline's
        self._wanted_active: Collection[int] | None = None
        #: the default, unsearched outline last shown, with its session and record count: clearing
        #: a search shows it again without building it again
        self._default_outline: tuple[Session, int, Outline] | None = None
        #: a paint of the view is under way (see begin_paint): the styles below are used and kept
        self._painting = False
        #: the cell styles kept between paints, by record * 4 + column, and the rows' looks by record
        self._kept_cells: dict[int, CellStyle] = {}
        self._kept_rows: dict[int, RowLook] = {}
        #: what the kept cell styles were made from (see _cell_sources)
        self._kept_from: tuple[tuple[object, ...], int] | None = None

    @property
    def outline(self) -> Outline:
        return self._outline

    @outline.setter
    def outline(self, o: Outline) -> None:
        self._outline = o
        self._parents.clear()
        if self.session is None:
            self._default_outline = None  # never keeps a closed session alive
        elif self.mode == "default" and not self.query:
            self._default_outline = (self.session, len(self.session.records), o)
        c = self.chunk_rows
        t = min(self.head_chunk_threshold, self.chunk_threshold) if self._head else self.chunk_threshold
        self._chunked = {g: (len(rows) + c - 1) // c for g, rows in o.groups.items() if len(rows) > t}
        self._root_rows = [] if ROOT in self._chunked else o.groups.get(ROOT, [])
        self._bp_by_chunk = None
        self._fresh = True

    # ---------------------------------------------------------------- blocks
    def is_chunk(self, index: Index) -> bool:
        return index.isValid() and index.internalId() >= CHUNK_BASE

    def chunk_range(self, index: Index) -> tuple[int, int, int]:
        """(first row, end row, rows in the group) of a block index (rows of its group, 0-based)."""
        g, c = _chunk_of(index.internalId())
        n = len(self.outline.groups.get(g, ()))
        return c * self.chunk_rows, min(n, (c + 1) * self.chunk_rows), n

    def _chunk_key(self, record: int) -> int | None:
        """The block id that directly holds ``record``'s row, if its group is shown in blocks."""
        g = self.outline.group_of.get(record)
        if g is None or g not in self._chunked:
            return None
        return _chunk_id(g, self.outline.row_of[record] // self.chunk_rows)

    def branch_points(self, under: Index | None = None) -> list[QModelIndex]:
        """Indexes of the rows that have nested groups (what ``expandAll`` would expand).

        Only those whose nearest enclosing block is ``under`` (None: not inside any block), so
        opening a block opens the branches inside it and nothing else.
        """
        if (under is None or not self.is_chunk(under)) and ROOT in self._chunked:
            return []  # every row is inside a block of the top level: none is outside all blocks
        if self._bp_by_chunk is None:
            o = self.outline
            by: dict[int, list[int]] = {}
            # the nearest enclosing block of each row that opens a group, found once per row: nested
            # branch points share their chain up to the top (walking it for each made a search's
            # result, ~1,600 groups on 100k entries, cost the GUI thread tens of ms)
            nearest: dict[int, int] = {ROOT: -1}
            for g in o.groups:
                if g == ROOT:
                    continue
                chain: list[int] = []
                x = g
                while x not in nearest:
                    chain.append(x)
                    x = o.group_of.get(x, ROOT)
                key = nearest[x]
                for y in reversed(chain):  # from the top down: a row in a block is that block's
                    ck = self._chunk_key(y)
                    key = nearest[y] = ck if ck is not None else key
                by.setdefault(nearest[g], []).append(g)
            self._bp_by_chunk = by
        key = -1 if under is None or not self.is_chunk(under) else int(under.internalId())
        return [self.index_of(k) for k in self._bp_by_chunk.get(key, ())]

    # ---------------------------------------------------------------- content
    def set_session(
        self,
        session: Session | None,
        active_path: list[int] | None = None,
        outline: Outline | None = None,
        context_edits: bool | None = None,
        *,
        head: bool = False,
    ) -> None:
        """Show ``session``; ``outline`` is a default-filter outline built in a worker (used if it fits),
        ``context_edits`` whether its records hold a context edit, if a worker found out; ``head``:
        it is the head of a file still being indexed (long lists go in blocks sooner)."""
        self.beginResetModel()
        self._head = head
        self._wanted_active = None
        if session is not self.session:
            self._search_texts = None
            self.search_text_read = (0, 0)
            self._content_hits = None
            self._default_outline = None
            self.edits = NO_EDITS
        if session is not None and context_edits is not None:
            self._edits_scan = (session, len(session.records), context_edits)
        self.session = session
        self._preview.clear()
        self._system_tokens.clear()
        self._summary_tokens.clear()
        self.marks = {}
        self._usage, self._usage_wanted = None, False
        self._find_edits(active_path or [])
        if session is None:
            self.outline = Outline()
        elif outline is not None and self.mode == "default" and not self.query:
            self.outline = outline
        else:
            self.outline = self._build(active_path)
        self.endResetModel()

    def rebuild(self, active_path: list[int] | None = None) -> None:
        """Re-derive rows (filter/search changed or entries appended)."""
        if self.session is None:
            return
        self.beginResetModel()
        self._wanted_active = None
        if active_path is not None:  # the branch moved or entries were appended: edits may apply anew
            self._usage = None
            self._find_edits(active_path)
        self.outline = self._build(active_path if active_path is not None else self.outline.active)
        self.endResetModel()

    # ---------------------------------------------------------------- pi 1.6.0 facts
    def _find_edits(self, path: list[int]) -> None:
        """The context edits seen from ``path``: here for short paths, in a worker for long ones."""
        self._pi16_serial += 1
        s = self.session
        if s is None or not self._has_context_edits(s):
            self.edits, self._edits_path = NO_EDITS, None
        elif len(path) <= SYNC_EDIT_PATH:
            self.edits, self._edits_path = context_edit_facts(s, path), None
        else:
            # a worker finds them; meanwhile the last facts of this session stay (records are
            # only ever appended, so their indices still hold)
            self._edits_path = list(path)
            self._start_pi16_work()

    def _has_context_edits(self, s: Session) -> bool:
        """Whether ``s`` holds a context edit: records are only ever appended, so only the records
        not looked at yet are (a whole big session's scan is a worker's job: see set_session)."""
        memo = self._edits_scan
        scanned, found = (memo[1], memo[2]) if memo is not None and memo[0] is s else (0, False)
        if not found and scanned < len(s.records):
            found = has_context_edits(s, scanned)
        self._edits_scan = (s, len(s.records), found)
        return found

    def prepare_pi16(self, runner: TaskRunner) -> None:
        """Find what is too slow for the GUI thread (edits of a long path, usage totals of a big
        file) with ``runner``; ``pi16_ready`` says when it is there."""
        self._pi16_runner = runner
        self._start_pi16_work()

    def usage(self) -> UsageTotals | None:
        """The session's usage totals; None while a worker sums them (a file too big to read here)."""
        s = self.session
        if s is None or self._usage is not None:
            return self._usage
        if self._head:  # a part of the file's usage is not the session's; its whole file comes next
            return None
        if self._pi16_runner is None or self._pi16_runner.synchronous or all_values_kept(s):
            self._usage = usage_totals(s)
            return self._usage
        self._usage_wanted = True
        self._start_pi16_work()
        return None

    def _start_pi16_work(self) -> None:
        runner, s = self._pi16_runner, self.session
        if runner is None or s is None:
            return
        path, want_usage = self._edits_path, self._usage_wanted and self._usage is None
        if path is None and not want_usage:
            return
        self._edits_path, self._usage_wanted = None, False
        serial = self._pi16_serial

        def work() -> tuple[EditFacts | None, UsageTotals | None]:
            with paused_gc():
                edits = context_edit_facts(s, path) if path is not None else None
                return edits, usage_totals(s) if want_usage else None

        def done(result: tuple[EditFacts | None, UsageTotals | None]) -> None:
            edits, usage = result
            if s is not self.session:
                return
            if edits is not None and serial == self._pi16_serial:
                self.edits = edits
                self._preview.clear()
                self.repaint_requested.emit()
            if usage is not None:
                self._usage = usage
            self.pi16_ready.emit()

        runner.op(work).on_success(done).start()

    def set_filter(self, mode: str, query: str, in_content: bool = False) -> None:
        self._filter_serial += 1  # an outline still being built in a worker is now stale
        self.mode, self.query, self.in_content = mode, query.strip().lower(), in_content
        self.rebuild()

    def _build(self, active_path: Collection[int] | None) -> Outline:
        assert self.session is not None
        texts = None
        content = None
        if self.query:
            texts = self._search_texts = extend_search_texts(self.session, self._search_texts, self.preview)
            if self.in_content:
                content = self._content_matches(self.session, self.query)
        return filtered_outline(self.session, self.mode, self.query, active_path, texts, content)

    def _content_matches(
        self,
        session: Session,
        query: str,
        cancelled: Callable[[], bool] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> array[int]:
        """The records whose content holds ``query``, in order: the last search's answer when it is
        the same search of the same session (a filter change need not read the file again), with
        the records pi appended since searched (and the last one before them: a refresh may have
        read it anew)."""
        last = self._content_hits
        n = len(session.records)
        if last is not None and last[0] is session and last[2] == query and 0 < last[1] <= n:
            if last[1] == n:
                return last[3]
            start = last[1] - 1
            hits = last[3][: bisect.bisect_left(last[3], start)]
            hits.extend(content_matches(session, query, cancelled, progress, start=start))
        else:
            hits = array("I", content_matches(session, query, cancelled, progress))
        self._content_hits = (session, n, query, hits)
        return hits

    def prepare_search(self, runner: TaskRunner) -> None:
        """Build the search text of the loaded session in the background, before the first search."""
        s = self.session
        if s is None or runner.synchronous or self._search_texts is not None or self._indexing:
            return
        self._indexing = True

        def work(op: Operation) -> SearchTexts:
            # a big file's texts come from other processes: built here, they took the GIL in turns
            # with the GUI thread for seconds (see search_worker)
            texts = build_search_texts(s, cancelled=op.cancelled.is_set, progress=op.report)
            if texts is not None:
                return texts
            if op.cancelled.is_set():  # the window is closing: its result is dropped anyway
                raise LoadCancelled("search text")
            with paused_gc():
                return extend_search_texts(s, None)

        work.wants_op = True  # type: ignore[attr-defined]  # TaskRunner passes the Operation

        def done(texts: SearchTexts) -> None:
            self._indexing = False
            if s is self.session and (self._search_texts is None or len(texts) > len(self._search_texts)):
                self._search_texts = texts
            pending, self._pending_filter = self._pending_filter, None
            partial, self._without_texts = self._without_texts, None
            if pending is not None:
                self.filter_async(runner, *pending)
            elif (
                partial is not None
                and s is self.session
                and self.in_content
                and partial[:2]
                == (
                    self.mode,
                    self.query,
                )
            ):
                # the In content search shown without the rows' matches: now with them (its content
                # hits are kept: no read of the file again)
                self.filter_async(runner, *partial, True)

        def failed(_e: BaseException, _tb: str) -> None:
            self._indexing = False

        def progress(n: int, total: int, _text: str) -> None:
            if s is self.session:
                self.search_text_read = (n, total)
                self.search_text_progress.emit(n, total)

        self.search_text_read = (0, 0)
        op = runner.op(work).on_success(done).on_failure(failed)
        op.progress.connect(progress)
        op.start()

    @property
    def waiting_for_search_texts(self) -> bool:
        """A search waits for the session's search texts, still being built (see prepare_search)."""
        return self._indexing and self._pending_filter is not None

    @property
    def rebuilding(self) -> bool:
        """Rows for a new outline are being built in a worker (see filter_async)."""
        return self._filtering or self._pending_filter is not None

    def rebuild_async(self, runner: TaskRunner, active_path: list[int], on_done: Callable[[], None]) -> None:
        """:meth:`rebuild` with the outline built in a worker (pi appended to a big session: the tree
        shown extended by the new rows, or derived again, ~0.35 s on 100k entries, seconds on 900k),
        swapped in when ready with the filter and search shown then."""
        if self.session is None:
            return
        if runner.synchronous:
            self.rebuild(active_path)
            on_done()
            return
        self._usage = None
        self._find_edits(active_path)
        # the path itself (the plan's, never changed): the builds only iterate it, and the extended
        # outline checks a path in C (a set of it cost the GUI thread ~10 ms on 209k entries)
        self._wanted_active = active_path
        self.filter_async(runner, self.mode, self.query, on_done, self.in_content)

    def filter_async(
        self, runner: TaskRunner, mode: str, query: str, on_done: Callable[[], None], in_content: bool = False
    ) -> None:
        """Filter/search off the GUI thread: the outline (and the search text of new entries) is
        built in a worker and swapped in when ready. One build runs at a time: requests made
        meanwhile are merged into the latest, which runs when the current one ends (a content
        search, which reads the whole file, stops at its next read for it)."""
        s = self.session
        if s is None or runner.synchronous:
            self.set_filter(mode, query, in_content)
            on_done()
            return
        self._filter_serial += 1
        kept = self._default_outline
        if (
            mode == "default"
            and not query.strip()
            and self._wanted_active is None
            and kept is not None
            and kept[0] is s
            and kept[1] == len(s.records)
        ):
            # a search cleared: the tree as it was before it (rebuilt, ~2.5 s of a worker holding
            # the GIL on 900k entries while the window painted); a build still running is outdated
            self._pending_filter = None
            self.mode, self.query = mode, ""
            self.beginResetModel()
            self.outline = kept[2]
            self.endResetModel()
            on_done()
            return
        if self._filtering or (self._indexing and query.strip() and not in_content):
            # superseded requests are never built; an In content search does not wait for the rows'
            # texts (seconds on a big session): it is searched again with them when they come
            self._pending_filter = (mode, query, on_done, in_content)
            return
        without_texts = in_content and self._indexing and self._search_texts is None
        query = query.strip().lower()
        serial = self._filter_serial
        # the outline only asks whether a record is on the active path: the set as it is (never
        # changed once built), not a sorted copy (~0.2 s of the GUI thread on 900k entries)
        active = self.outline.active if self._wanted_active is None else self._wanted_active
        texts = self._search_texts
        self._filtering = True
        # the rows shown, of the records the session had when they were built: pi's appends at the
        # end of a chain extend them (a few rows) instead of deriving the whole tree again
        shown = self.outline if mode == self.mode and not query and not self.query else None

        def work(op: Operation) -> tuple[Outline, SearchTexts | None]:
            with paused_gc():
                if shown is not None:
                    extended = extended_outline(s, shown, mode, active)
                    if extended is not None:
                        return extended, texts
                # (texts still being built by their workers: not built here too, see without_texts)
                new_texts = extend_search_texts(s, texts) if query and not without_texts else texts
                content = None
                if query and in_content:
                    # a newer search (typing on) stops this one at its next read of the file
                    content = self._content_matches(
                        s, query, lambda: serial != self._filter_serial or op.cancelled.is_set(), op.report
                    )
                return filtered_outline(s, mode, query, active, new_texts, content), new_texts

        work.wants_op = True  # type: ignore[attr-defined]  # TaskRunner passes the Operation

        def next_pending() -> None:
            self._filtering = False
            pending, self._pending_filter = self._pending_filter, None
            if pending is not None:
                self.filter_async(runner, *pending)

        def done(result: tuple[Outline, SearchTexts | None]) -> None:
            outline, new_texts = result
            if (
                s is self.session
                and new_texts is not None
                and (self._search_texts is None or len(new_texts) > len(self._search_texts))
            ):
                self._search_texts = new_texts
            self.content_read = (0, 0)
            if serial == self._filter_serial and s is self.session:
                self._without_texts = (mode, query, on_done) if without_texts and query else None
                self.mode, self.query, self.in_content = mode, query, in_content
                self.beginResetModel()
                if self._wanted_active is active:
                    self._wanted_active = None  # shown now: later builds take the outline's
                self.outline = outline
                self.endResetModel()
                # these rows are the ones shown now (rebuilding says so to on_done, e.g. to show a
                # selection of an entry that has no row through its nearest shown ancestor)
                self._filtering = False
                on_done()
            next_pending()

        def failed(_e: BaseException, _tb: str) -> None:
            self.content_read = (0, 0)
            next_pending()

        def read(done: int, total: int, _text: str) -> None:
            if serial == self._filter_serial:
                self.content_read = (done, total)
                self.content_search_progress.emit(done, total)

        op = runner.op(work).on_success(done).on_failure(failed)
        op.progress.connect(read)
        op.start()

    def set_marks(self, marks: Mapping[int, str]) -> None:
        old = self.marks
        self.marks = marks
        fresh, self._fresh = self._fresh, False
        if self.rowCount() == 0:
            return
        if fresh:
            # first marks since a reset: the view lays out and paints from scratch anyway
            self.repaint_requested.emit()
            return
        # marks only change painting: dataChanged over contiguous runs of changed rows, never a relayout;
        # many runs (a new session, a big move of the cut) just repaint the visible rows
        rows_by_group: dict[int, list[int]] = {}  # parent key (group key or block id) → display rows
        group_of, row_of = self.outline.group_of, self.outline.row_of
        chunked, crows = self._chunked, self.chunk_rows
        n = 0
        # a plan's marks share the path's valid/invalid marks with the previous plan: only the cut
        # marks can differ, so a slider step looks at a handful of records, not the whole path
        candidates = marks.changed_since(old) if isinstance(marks, PlanMarks) else None
        if candidates is None and len(old) + len(marks) > MAX_MARK_RUNS * 32:
            # another path's marks (pi appended, another leaf): comparing every entry of two long
            # paths cost ~80 ms of the GUI thread on 100k entries, to find runs too many to name
            self.repaint_requested.emit()
            return
        for k in candidates if candidates is not None else old.keys() | marks.keys():
            if old.get(k) == marks.get(k):
                continue
            g = group_of.get(k)
            if g is None:
                continue
            r = row_of[k]
            if g in chunked:
                g, r = _chunk_id(g, r // crows), r % crows
            rows_by_group.setdefault(g, []).append(r)
            n += 1
            if n > MAX_MARK_RUNS * 32:
                self.repaint_requested.emit()
                return
        runs: list[tuple[int, int, int]] = []
        for g, rows in rows_by_group.items():
            rows.sort()
            lo = hi = rows[0]
            for r in rows[1:]:
                if r == hi + 1:
                    hi = r
                    continue
                runs.append((g, lo, hi))
                lo = hi = r
            runs.append((g, lo, hi))
        if len(runs) > MAX_MARK_RUNS:
            self.repaint_requested.emit()
            return
        last = len(COLUMNS) - 1
        for key, lo, hi in runs:
            if key >= CHUNK_BASE:
                parent = self.createIndex(_chunk_of(key)[1], 0, key)
            else:
                parent = QModelIndex() if key == ROOT else self.index_of(key)
            self.dataChanged.emit(self.index(lo, 0, parent), self.index(hi, last, parent))

    def preview(self, i: int) -> str:
        s = self._preview.get(i)
        if s is None:
            assert self.session is not None
            if len(self._preview) >= self.preview_cache_rows:
                self._forget_old_previews()
            self._read_previews(i)
            s = self._preview.get(i)
            if s is None:
                try:
                    s = preview_text(self.session.value(i))
                except Exception as e:
                    s = f"(unreadable: {e})"
                self._preview[i] = s
        return s

    def _forget_old_previews(self) -> None:
        """The oldest half of the cached previews goes (the rows painted now were read lately)."""
        cache = self._preview
        for k in list(itertools.islice(cache, len(cache) // 2)):
            del cache[k]

    def _read_previews(self, i: int) -> None:
        """The previews of ``i`` and the rows shown after it, read at once: a big file's values are
        re-read from disk, and one read per painted row (a file open each) made every scroll step
        of a big session cost tens of ms."""
        assert self.session is not None
        o = self.outline
        g = o.group_of.get(i)
        if g is None:
            return
        rows = o.groups.get(g, ())
        r = o.row_of[i]
        wanted = [
            x for x in rows[max(0, r - PREVIEW_BATCH_BEFORE) : r + PREVIEW_BATCH] if x not in self._preview
        ]
        if len(wanted) < 2:
            return
        try:
            values = self.session.values(wanted)
        except Exception:  # one unreadable row: each is read (and reported) on its own
            return
        for x, v in zip(wanted, values, strict=True):
            try:
                self._preview[x] = preview_text(v)
            except Exception as e:
                self._preview[x] = f"(unreadable: {e})"

    # ---------------------------------------------------------------- structure
    def index_of(self, record: int, column: int = 0) -> QModelIndex:
        o = self.outline
        row = o.row_of.get(record)
        if row is None:
            return QModelIndex()
        if self._chunked and o.group_of[record] in self._chunked:
            row %= self.chunk_rows
        return self.createIndex(row, column, record + 1)

    def record_of(self, index: Index) -> int:
        if not index.isValid():
            return -1
        iid = int(index.internalId())
        return iid - 1 if iid < CHUNK_BASE else -1

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        # called once per row on the view's layout: the top level is the fast path
        rows: Sequence[int] | None
        if not parent.isValid():
            rows = self._root_rows
            if 0 <= row < len(rows) and 0 <= column < 3:
                return self.createIndex(row, column, rows[row] + 1)
            g = ROOT
        else:
            if parent.column() != 0:
                return QModelIndex()
            pid = parent.internalId()
            if pid >= CHUNK_BASE:
                g, c = _chunk_of(pid)
                rows = self.outline.groups.get(g)
                r = c * self.chunk_rows + row
                if rows is None or not 0 <= row < self.chunk_rows or r >= len(rows) or not 0 <= column < 3:
                    return QModelIndex()
                return self.createIndex(row, column, rows[r] + 1)
            g = pid - 1
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        nc = self._chunked.get(g)
        if nc is not None:
            return self.createIndex(row, column, _chunk_id(g, row)) if row < nc else QModelIndex()
        rows = self.outline.groups.get(g)
        if rows is None or row >= len(rows):
            return QModelIndex()
        return self.createIndex(row, column, rows[row] + 1)

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008  (QObject.parent() vs the model overload)
        # a painted screenful asks ~500 times (the view walks up from each row to draw its branch
        # lines): the answers are kept until the rows change (only a reset changes them)
        if not index.isValid():
            return QModelIndex()
        iid = index.internalId()
        got = self._parents.get(iid)
        if got is None:
            if len(self._parents) >= PARENT_CACHE_ROWS:
                self._parents.clear()
            got = self._parents[iid] = self._parent_of(iid)
        return got

    def _parent_of(self, iid: int) -> QModelIndex:
        if iid >= CHUNK_BASE:
            g = _chunk_of(iid)[0]
            return QModelIndex() if g == ROOT else self.index_of(g)
        r = iid - 1
        g = self.outline.group_of.get(r, ROOT)
        if g in self._chunked:
            c = self.outline.row_of[r] // self.chunk_rows
            return self.createIndex(c, 0, _chunk_id(g, c))
        if g == ROOT:
            return QModelIndex()
        return self.index_of(g)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid():
            if parent.column() != 0:
                return 0
            pid = parent.internalId()
            if pid >= CHUNK_BASE:
                lo, hi, _n = self.chunk_range(parent)
                return max(0, hi - lo)
            g = pid - 1
        else:
            g = ROOT
        nc = self._chunked.get(g)
        if nc is not None:
            return nc
        return len(self.outline.groups.get(g, ()))

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        # called for every row on layout: keep it to one dict lookup
        if not parent.isValid():
            return bool(self.outline.groups.get(ROOT))
        if parent.column() != 0:
            return False
        pid = parent.internalId()
        return pid >= CHUNK_BASE or pid - 1 in self.outline.groups

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return _NO_FLAGS
        iid = index.internalId()
        return _FLAGS if iid >= CHUNK_BASE or iid - 1 in self._outline.groups else _LEAF_FLAGS

    # ---------------------------------------------------------------- data
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.session is None:
            return None
        if index.internalId() >= CHUNK_BASE:
            return self._chunk_data(index, role)
        i = self.record_of(index)
        rec = self.session.records[i]
        col = index.column()
        R = Qt.ItemDataRole
        edit = self.edit_state(i)
        if role == R.DisplayRole:
            return self._display(i, col, edit)
        if role == R.DecorationRole and col == 0:
            return entry_icon(kind_of(rec.type, rec.role))
        if role == R.TextAlignmentRole and col == 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == R.FontRole and col < 2:
            return self._font(i, col, edit)
        if role not in _MARKED_ROLES:  # most of the roles a paint asks for: no marks, no theme
            return None
        mark = self.marks.get(i, "")
        if role in (R.BackgroundRole, R.ForegroundRole):  # a copy: the painting ones are shared
            color = self._background(i, mark) if role == R.BackgroundRole else self._foreground(i, mark, edit)
            return QColor(color) if color is not None else None
        if role == R.ToolTipRole:
            lines = [f"{rec.type} · line {rec.line} · id {rec.id}"]
            if rec.role is not None and rec.type == "message":
                lines[0] += f" · {rec.role}"
            lines += self._edit_lines(i, edit)
            if rec.type == "message" and rec.role == "system":
                lines.append(
                    "Tokens: pi 1.6.0's estimate of the system message (content, sections, tool "
                    "declarations); pi 0.80.2 drops system messages from the context"
                )
            if mark in _MARK_TEXT:
                lines.append(_MARK_TEXT[mark])
            if mark in ("valid", "invalid", "cut", "prefix", "turn_start"):
                lines.append("Cut point: " + cut_point_reason(rec))
            if i not in self.outline.active:
                lines.append("Not on the active path")
            if self.token_line is not None and (tokens := self.token_line(i)):
                lines.append("Tokens: " + tokens)
            return rich_tooltip("\n".join(lines))  # ids and types come from the file: never HTML
        if role == Roles.RECORD:
            return i
        if role == Roles.ACTIVE:
            return i in self.outline.active
        if role == Roles.CUT_MARK:
            return mark
        if role == Roles.HEAD:
            return i in self.outline.heads
        if role == LAST_CHAIN:
            return i in self.outline.last_chain
        if role == Roles.KIND:
            return kind_of(rec.type, rec.role)
        if role == Roles.EDIT:
            return edit
        return None

    def begin_paint(self) -> None:
        """A paint of the view starts: the cell styles of the paints before it are used again if
        nothing they were made from changed since (a screenful of cell styles was ~20% of a paint).

        Everything a cell shows comes from objects that are replaced, never changed, when what they
        say changes: the session (and its record count: pi appends in place), the outline (active
        path, filter), the plan's marks, the context edits and the theme. So the kept styles are
        dropped when one of them is not the same object as before."""
        sources = self._cell_sources()
        kept = self._kept_from
        if (
            kept is None
            or kept[1] != sources[1]
            or any(a is not b for a, b in zip(kept[0], sources[0], strict=True))
            or len(self._kept_cells) >= KEPT_CELLS
        ):
            self._kept_cells, self._kept_rows = {}, {}
            self._kept_from = sources
        self._painting = True

    def end_paint(self) -> None:
        """The paint is done: cell styles asked outside a paint are made afresh (see begin_paint)."""
        self._painting = False

    def _cell_sources(self) -> tuple[tuple[object, ...], int]:
        s = self.session
        count = len(s.records) if s is not None else 0
        return (s, self._outline, self.marks, self.edits, current_theme()), count

    def cell_style(self, i: int, col: int) -> CellStyle:
        """What a record's cell shows: (text, font, text colour, background), each None where the
        view's default applies; the same answers as data()'s display, font, foreground and background
        roles, in one call for the delegate (Qt asks data() seven times per painted cell)."""
        if not self._painting:
            return self._cell_style(i, col)
        cells = self._kept_cells
        got = cells.get(i * 4 + col)
        if got is None:
            got = cells[i * 4 + col] = self._cell_style(i, col)
        return got

    def row_look(self, i: int) -> RowLook:
        """How a record's row is drawn around its cells (connectors, cut marks), kept during paints
        like :meth:`cell_style`."""
        if not self._painting:
            return self._row_look(i)
        rows = self._kept_rows
        got = rows.get(i)
        if got is None:
            got = rows[i] = self._row_look(i)
        return got

    def _row_look(self, i: int) -> RowLook:
        o = self.outline
        mark = self.marks.get(i, "")
        if o.group_of.get(i, ROOT) != ROOT:
            in_group = True
        else:  # a top-level row: in the connector gutter too when the first top-level row heads a branch
            top: Sequence[int] = o.groups.get(ROOT, ())
            in_group = len(top) > 0 and top[0] in o.heads
        return RowLook(in_group, mark, i in o.heads, i in o.last_chain, self._background(i, mark))

    def _cell_style(self, i: int, col: int) -> CellStyle:
        edit = self.edit_state(i)
        mark = self.marks.get(i, "")
        font = self._font(i, col, edit) if col < 2 else None
        return self._display(i, col, edit), font, self._foreground(i, mark, edit), self._background(i, mark)

    def block_style(self, index: Index) -> tuple[str, QFont | None, QColor | None, QColor | None]:
        """:meth:`cell_style` for a cell of a block row ("Entries 1–500")."""
        R = Qt.ItemDataRole
        return (
            self._chunk_data(index, R.DisplayRole),
            self._chunk_data(index, R.FontRole),
            self._chunk_data(index, R.ForegroundRole),
            None,
        )

    def _display(self, i: int, col: int, edit: str) -> str:
        assert self.session is not None
        rec = self.session.records[i]
        if col == 0:
            lab = self.session.label_of(rec.id)
            row = f"[{lab}]  {self.preview(i)}" if lab else self.preview(i)
            if edit:
                row = ("⊘ hidden · " if edit == "hidden" else "✎ replaced · ") + row
            return visible(row, 300, keep_newlines=False)  # session text: elided, controls shown
        if col == 1:
            if rec.type in SUMMARY_TYPES:
                return self._summary_tokens_text(i)
            if rec.type != "message":
                return ""
            t = self.tokens_of(i)
            if edit == "replaced":
                t = self.edits.replaced_tokens.get(i, t)
            if isinstance(t, JsTypeError) or t is None:
                return "error"
            return f"{t:,}" if isinstance(t, int) else str(t)
        ts = rec.timestamp
        return ts[11:19] if isinstance(ts, str) and len(ts) >= 19 else ""

    def _font(self, i: int, col: int, edit: str) -> QFont | None:
        bold = i in self.outline.active and col == 0
        if edit == "hidden":  # what the LLM no longer sees is struck out
            return self._bold_struck if bold else self._struck
        return self._bold if bold else None

    def _row_colors(self) -> _RowColors:
        """The theme's row colours, copied once per theme (the theme hands out a new copy on every
        attribute read; a painted cell asked for two or three)."""
        th = current_theme()
        got = self._colors
        if got is None or got.theme is not th:
            got = self._colors = _RowColors(th, th.cut_bg, th.prefix, th.active_bg, th.muted)
        return got

    def _background(self, i: int, mark: str) -> QColor | None:
        if mark == "cut":
            return self._row_colors().cut_bg
        if mark in ("prefix", "turn_start"):
            return self._row_colors().prefix
        if i in self.outline.active:
            return self._row_colors().active_bg
        return None

    def _foreground(self, i: int, mark: str, edit: str) -> QColor | None:
        if i not in self.outline.active or mark == "summarised" or edit == "hidden":
            return self._row_colors().muted
        return None

    def edit_state(self, i: int) -> str:
        """ "hidden" / "replaced" when a context edit applies to the entry on the active path."""
        if i not in self.edits.applied:
            return ""
        return "hidden" if i in self.edits.hidden else "replaced"

    def _summary_tokens_text(self, i: int) -> str:
        """A compaction's, branch summary's or custom message's Tokens cell (read once per row)."""
        if self.estimate_of is None:
            return ""
        if i not in self._summary_tokens:
            self._summary_tokens[i] = self.estimate_of(i)
        t = self._summary_tokens[i]
        return "" if t is None else f"{t:,.0f}"

    def forget_estimates(self) -> None:
        """The file's profile changed: a compaction's messages (its 1.6.0 snapshot) may differ."""
        self._summary_tokens.clear()
        if self.rowCount() and self.session is not None:
            self.dataChanged.emit(self.index(0, 1), self.index(self.rowCount() - 1, 1))

    def tokens_of(self, i: int) -> Any:
        """The row's token estimate: the index's, or pi 1.6.0's for a system message (rule 21)."""
        assert self.session is not None
        rec = self.session.records[i]
        if rec.role != "system":
            return rec.tokens
        t = self._system_tokens.get(i)
        if t is None:
            v = self.session.value(i)
            t = self._system_tokens[i] = system_tokens(v.get("message") if type(v) is dict else None)
        return t

    def _edit_lines(self, i: int, edit: str) -> list[str]:
        assert self.session is not None
        recs = self.session.records
        lines = []
        if edit:
            e = recs[self.edits.applied[i]]
            what = "Hidden from the LLM" if edit == "hidden" else "Content replaced for the LLM"
            lines.append(f"{what} by context edit {e.id} (line {e.line})")
            if edit == "replaced":
                lines.append(f"Tokens: what the LLM sees now; stored: {self.tokens_of(i)}")
        elif i in self.edits.by_target:
            lines.append("Named by a context edit that does not apply on the active path")
        return lines

    def _chunk_data(self, index: Index, role: int) -> Any:
        R = Qt.ItemDataRole
        col = index.column()
        if role == R.DisplayRole:
            lo, hi, n = self.chunk_range(index)
            if col == 0:
                return f"Entries {lo + 1:,}–{hi:,} of {n:,}"
            if col == 2 and self.session is not None:
                g = _chunk_of(index.internalId())[0]
                rows = self.outline.groups.get(g, ())
                ts = self.session.records[rows[lo]].timestamp if lo < len(rows) else None
                return ts[11:19] if isinstance(ts, str) and len(ts) >= 19 else ""
            return ""
        if role == R.ToolTipRole:
            lo, hi, n = self.chunk_range(index)
            return (
                f"Rows {lo + 1:,} to {hi:,} of a list of {n:,} rows.\n"
                "Long lists are shown in blocks so the tree stays fast; expand a block to see its rows."
            )
        if role == R.FontRole and col == 0:
            return self._italic
        if role == R.ForegroundRole:
            return current_theme().muted
        if role == Roles.RECORD:
            return -1
        return None


def all_values_kept(session: Session) -> bool:
    """Whether the session holds every value in memory (no file reads to sum them up)."""
    recs = session.records
    return not recs or (recs[0].value is not None and recs[-1].value is not None)


#: records whose values are read per batch (one file handle, sequential reads) for the search text
SEARCH_TEXT_BATCH = BATCH_RECORDS


def extend_search_texts(
    session: Session, texts: SearchTexts | None, preview: Callable[[int], str] | None = None
) -> SearchTexts:
    """The search text of every record (its lowercased preview); only new records are read.

    Without ``preview`` the values are read from the file in batches (a value re-read alone opens
    the file each time: ~10× slower over a whole big session)."""
    out = texts if texts is not None else SearchTexts()
    n = len(session.records)
    if preview is not None:
        return out.extended(_search_text(preview, i) for i in range(len(out), n))
    # reads end where the stored batches end: each one fills a batch, none is packed twice
    start = len(out)
    ends = range((start // SEARCH_TEXT_BATCH + 1) * SEARCH_TEXT_BATCH, n, SEARCH_TEXT_BATCH)
    for lo, hi in itertools.pairwise([start, *ends, n]):
        if lo >= hi:
            continue
        yield_to_foreground()
        batch = range(lo, hi)
        try:
            values = session.values(batch)
        except Exception:  # one unreadable value: read them one by one, so the others are found
            out = out.extended(_search_text(lambda i: preview_text(session.value(i)), i) for i in batch)
            continue
        out = out.extended([_search_text(preview_text, v) for v in values])
        del values
    return out


def _search_text(make: Callable[[Any], str], arg: Any) -> str:
    try:
        text = make(arg)
    except Exception as e:  # an unreadable value is still findable by its id
        text = f"(unreadable: {e})"
    return text.lower()


def filtered_outline(
    session: Session,
    mode: str,
    query: str,
    active_path: Collection[int] | None,
    texts: SearchTexts | None,
    content: Collection[int] | None = None,
) -> Outline:
    """The outline for a filter mode and a (lowercased) search query, matched on ``texts`` (and, for
    a search of the whole content, the records ``content`` says hold it; without ``texts`` while
    they are being built)."""
    if not query or (texts is None and content is None):
        return build_outline(session, mode, None, active_path)
    q = query
    # the matching records as one column, found in bulk (text, exact id, label)
    hits = bytearray(len(session.records))
    if texts is not None:
        mark_hits(hits, texts.matching(q))
    if content is not None:
        mark_hits(hits, content)
    by_id = session.by_id
    labelled = (
        by_id.get(key)
        for key, (label, _ts) in session.labels.items()
        if isinstance(label, str) and q in label.lower()
    )
    mark_hits(hits, (rec for rec in labelled if rec is not None))
    mark_hits(hits, exact_id_hits(session, q))
    # the hits go in as a column (the outline makes room for as many rows): the tree walk needs no
    # call per record (nor the GIL)
    return build_outline(session, mode, None, active_path, hits=hits)


def exact_id_hits(session: Session, q: str) -> list[int]:
    """The records whose id, as text and lowercased, is ``q`` (from the id column: a record view
    per entry cost ~0.1 s a search on 900k entries)."""
    records = session.records
    unpack = records.unpack_id
    others = range(-1, -3 - len(records.ids_other), -1)  # undefined, null, then ids_other's codes
    wanted = {c for c in others if str(unpack(c)).lower() == q}
    code = records.id_code(q)  # pi's 8-hex ids: the column holds their number
    if code is not None:
        wanted.add(code)
    if not wanted:
        return []
    return [i for i, c in enumerate(records.ids) if c in wanted]


#: parent indexes the model keeps (a few screenfuls' worth and more; see parent())
PARENT_CACHE_ROWS = 20_000
#: how many pre-elided row texts the delegate keeps (a few screenfuls at a few column widths)
ELIDED_CACHE = 4096
_RIGHT_ALIGNED = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_NO_BRUSH = QBrush()
# At import, not in the first paint of a session: the first QBrush made from a colour makes PySide
# create the Python enums of the constructor's other overloads (QGradient's; Preset has 169
# members), 45–115 ms of the GUI thread that was added to that paint's own.
QBrush(QColor())
#: cells in these states (or disabled, inactive, alternate, right-to-left) are left to Qt's style
_STYLED_STATES = (
    QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_HasFocus | QStyle.StateFlag.State_MouseOver
)


#: when the tree is not painted (a hidden or minimised window), what waits for its next paint runs
#: after this long anyway
AFTER_PAINT_FALLBACK_MS = 250


class SessionTreeView(QTreeView):
    """The session tree's view. Each paint is foreground work (core.priority): a worker planning or
    laying out a big session waits at its next step instead of taking the GIL each time the paint
    returns to Qt (a 50 ms paint took 250-350 ms while the 1 GB session was re-planned)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        #: what runs in a turn of the event loop after the next paint (see call_after_paint)
        self._after_paint: list[Callable[[], None]] = []
        #: said in the empty view when no row is shown (a search that matches nothing)
        self.empty_text = ""
        self._after_paint_fallback = QTimer(self)
        self._after_paint_fallback.setSingleShot(True)
        self._after_paint_fallback.setInterval(AFTER_PAINT_FALLBACK_MS)
        self._after_paint_fallback.timeout.connect(self._run_after_paint)

    #: the indentation of a level where the tree is shallow, the least where it is deep, and the
    #: share of the view's width the levels may take before each is narrowed
    INDENTATION = 16
    LEAST_INDENTATION = 4
    INDENT_SHARE = 0.4

    def setModel(self, model: Any) -> None:
        super().setModel(model)
        if isinstance(model, SessionTreeModel):
            # a new outline (a file, a filter, a search, pi's appends) may be deeper or shallower
            for signal in (model.modelReset, model.layoutChanged, model.rowsInserted):
                signal.connect(self._fit_indentation_soon)
        self.fit_indentation()

    def _fit_indentation_soon(self, *_args: object) -> None:
        QTimer.singleShot(0, self, self.fit_indentation)

    def fit_indentation(self) -> None:
        """Indent each level less where the tree is deep: at 16 px a level, branches nested ten
        deep left the Entry column a few letters (and generated sessions nest hundreds deep). The
        levels take at most INDENT_SHARE of the view's width, each at least LEAST_INDENTATION."""
        model = self.model()
        depth = model.outline.max_depth + 1 if isinstance(model, SessionTreeModel) else 0  # +1: blocks
        room = int(self.viewport().width() * self.INDENT_SHARE)
        step = (
            self.INDENTATION
            if depth * self.INDENTATION <= room
            else max(self.LEAST_INDENTATION, room // depth)
        )
        if step != self.indentation():
            self.setIndentation(step)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_indentation()

    def call_after_paint(self, then: Callable[[], None]) -> None:
        """Run ``then`` in a turn of the event loop after the view's next paint: a timer of its own
        started before that paint fired in the same step of the GUI thread as the paint (both due
        when the event loop came round), so a first paint of new rows (40-70 ms) and what follows it
        (showing the current row, ~20 ms) were one stall. Without a paint (a hidden window) it runs
        after AFTER_PAINT_FALLBACK_MS."""
        self._after_paint.append(then)
        if not self._after_paint_fallback.isActive():
            self._after_paint_fallback.start()

    def set_empty_text(self, text: str) -> None:
        """What the view says while it shows no row (plain text; "" says nothing)."""
        if text != self.empty_text:
            self.empty_text = text
            self.viewport().update()

    def _paint_empty_text(self) -> None:
        painter = QPainter(self.viewport())
        painter.setPen(current_theme().muted)
        area = self.viewport().rect().adjusted(12, 24, -12, -12)
        flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
        painter.drawText(area, int(flags), self.empty_text)
        painter.end()

    def _run_after_paint(self) -> None:
        self._after_paint_fallback.stop()
        waiting, self._after_paint = self._after_paint, []
        for then in waiting:
            then()

    def paintEvent(self, event: QPaintEvent) -> None:
        model = self.model()
        if not isinstance(model, SessionTreeModel):
            with foreground():
                super().paintEvent(event)
        else:
            model.begin_paint()
            try:
                with foreground():
                    super().paintEvent(event)
            finally:
                model.end_paint()
        if self.empty_text and model is not None and not model.rowCount():
            self._paint_empty_text()
        if self._after_paint:
            QTimer.singleShot(1, self, self._run_after_paint)


class BranchDelegate(QStyledItemDelegate):
    """Draws pi-style branch connectors in a gutter left of rows inside branch groups.

    A record's cell is styled from one :meth:`SessionTreeModel.cell_style` call instead of Qt's seven
    data() round trips per cell, and its text comes elided to the column's width once per row and
    width (Qt lays out the whole 300-character preview on every paint to elide it; with the scripts
    and emoji of real sessions that was much of a scroll step's cost). Qt's style draws the cell as
    before, so it looks the same."""

    #: False: every cell through QStyledItemDelegate's own option filling (the reference drawing)
    direct_style = True

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._elided: dict[tuple[str, int, str], str] = {}
        self._static: dict[tuple[str, str], QStaticText] = {}
        #: a non-ASCII text's one-line height (see _fallback_shift)
        self._lines: dict[tuple[str, str], float] = {}
        self._geometries: dict[tuple[int, int, bool, int], tuple[QRect, QRect, Qt.AlignmentFlag]] = {}
        #: per item state: whether a cell in it is drawn here (else by Qt's style), and whether its
        #: window is active
        self._state_facts: dict[QStyle.StateFlag, tuple[bool, bool]] = {}
        #: the text colour by (palette, window active)
        self._text_colours: dict[tuple[int, bool], QColor] = {}
        #: the view's font last seen, and the model's fonts resolved against it (by the model font's
        #: id; the model font is kept in the entry so the id stays its own)
        self._base_font: QFont | None = None
        self._resolved: dict[int, tuple[QFont, QFontMetrics, str, QFont | None]] = {}

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        if not self.direct_style or not isinstance(model, SessionTreeModel) or model.session is None:
            super().initStyleOption(option, index)
            return
        rec = model.record_of(index)
        col = index.column()
        text, font, fg, bg = model.cell_style(rec, col) if rec >= 0 else model.block_style(index)
        if font is not None:
            option.font = font.resolve(option.font)
            option.fontMetrics = QFontMetrics(option.font)
        if col == 1:
            option.displayAlignment = _RIGHT_ALIGNED
        if fg is not None:
            pal = option.palette
            pal.setBrush(QPalette.ColorRole.Text, QBrush(fg))
            option.palette = pal
        if isinstance(index, QModelIndex):  # always, from a view (not a persistent index)
            option.index = index
        features = option.features | QStyleOptionViewItem.ViewItemFeature.HasDisplay
        if col == 0 and rec >= 0:
            rr = model.session.records[rec]
            icon = entry_icon(kind_of(rr.type, rr.role))
            features |= QStyleOptionViewItem.ViewItemFeature.HasDecoration
            option.icon = icon
            option.decorationSize = icon.actualSize(option.decorationSize)
            option.features = features
            text = self._elide(option, text)
        option.features = features
        option.text = text
        option.backgroundBrush = QBrush(bg) if bg is not None else _NO_BRUSH

    def _draw(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        """The cell as Qt's style draws it; a plain cell (not selected, no focus, not hovered) is drawn
        here, from one model call, with the text's layout kept (QStaticText) and the style's cell
        geometry measured once per column width: the style lays out the whole text to place it on
        every paint, most of a scroll step's cost."""
        model = index.model()
        col = index.column()
        w = option.widget
        # each read of an enum property makes a Python enum, each & another (~2 µs each, a few per
        # cell): the state is read once and what it means looked up; the view answers the rest
        state = option.state
        facts = self._state_facts.get(state)
        if facts is None:
            drawn_here = bool(not state & _STYLED_STATES and state & QStyle.StateFlag.State_Enabled)
            facts = self._state_facts[state] = (drawn_here, bool(state & QStyle.StateFlag.State_Active))
        if (
            not facts[0]
            or not self.direct_style
            or w is None
            or not isinstance(model, SessionTreeModel)
            or model.session is None
            or (isinstance(w, QTreeView) and w.alternatingRowColors())  # the style alternates
            or w.isRightToLeft()
        ):
            super().paint(painter, option, index)
            return
        rec = model.record_of(index)
        text, font, fg, bg = model.cell_style(rec, col) if rec >= 0 else model.block_style(index)
        r = option.rect
        with_icon = col == 0 and rec >= 0
        view_font, metrics, key = self._fonts(option, font)  # first: a new view font drops the geometry
        geometry = self._geometry(option, index, with_icon)
        x, y = r.left(), r.top()
        if bg is not None:
            painter.fillRect(r, bg)
        if with_icon:
            rr = model.session.records[rec]
            icon = entry_icon(kind_of(rr.type, rr.role))
            icon.paint(painter, geometry[0].translated(x, y), geometry[2])
        if not text:
            return
        text_rect = geometry[1]
        full = text
        text = self._elided_text(text, text_rect.width(), key, metrics)
        skey = (text, key)
        static = self._static.get(skey)
        if static is None:
            if len(self._static) >= ELIDED_CACHE:
                self._static.clear()
            static = self._static[skey] = QStaticText(text)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=view_font)
        size = static.size()
        top = y + text_rect.top() + (text_rect.height() - round(size.height())) // 2
        if not full.isascii():
            top += self._fallback_shift(full, key, view_font, text_rect.height(), size.height())
        # the tokens column is right-aligned: the style lays the line out in the whole text width
        # and moves it right by what the text leaves free (a fraction of a pixel included)
        left = x + text_rect.left() + (text_rect.width() - size.width() if col == 1 else 0)
        painter.save()
        painter.setFont(view_font)
        if fg is None:
            fg = self._text_colour(option, facts[1])
        painter.setPen(fg)
        painter.drawStaticText(QPointF(left, top), static)
        painter.restore()

    def _fallback_shift(self, full: str, key: str, font: QFont, room: int, shown_height: float) -> int:
        """How far Qt's style draws a cell's text from where centring the elided text alone puts
        it: the style centres the line of the whole text, and a fallback font's glyphs (CJK, emoji)
        make that line taller, also where the elision cut them off (the direct drawing sat 1 px
        lower in such rows). Only for text that is not ASCII, which any UI font draws itself; each
        text's line measured once."""
        full_height = self._line_height(full, key, font)
        return (room - round(full_height)) // 2 - (room - round(shown_height)) // 2

    def _line_height(self, text: str, key: str, font: QFont) -> float:
        """The height of ``text`` laid out on one line (what its glyphs' fonts need)."""
        lkey = (text, key)
        got = self._lines.get(lkey)
        if got is None:
            if len(self._lines) >= ELIDED_CACHE:
                self._lines.clear()
            got = self._lines[lkey] = line_height(text, font)
        return got

    def _text_colour(self, option: QStyleOptionViewItem, active: bool) -> QColor:
        """The palette's text colour for the cell's window state, looked up once per palette (a
        palette lookup with its enums was ~4 µs of every cell)."""
        palette = option.palette
        key = (palette.cacheKey(), active)
        got = self._text_colours.get(key)
        if got is None:
            group = QPalette.ColorGroup.Normal if active else QPalette.ColorGroup.Inactive
            if len(self._text_colours) >= 16:
                self._text_colours.clear()
            got = self._text_colours[key] = QColor(palette.color(group, QPalette.ColorRole.Text))
        return got

    def _geometry(
        self, option: QStyleOptionViewItem, index: Index, with_icon: bool
    ) -> tuple[QRect, QRect, Qt.AlignmentFlag]:
        """The style's icon rect and text rect (less the text margin) of a cell, relative to it, and
        the icon's alignment."""
        r = option.rect
        key = (r.width(), r.height(), with_icon, option.decorationSize.width())
        got = self._geometries.get(key)
        if got is None:
            w = option.widget
            style = w.style()
            opt = QStyleOptionViewItem(option)
            self.initStyleOption(opt, index)
            icon = style.subElementRect(QStyle.SubElement.SE_ItemViewItemDecoration, opt, w)
            text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, w)
            margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, w) + 1
            text.adjust(margin, 0, -margin, 0)
            got = (
                icon.translated(-r.left(), -r.top()),
                text.translated(-r.left(), -r.top()),
                option.decorationAlignment,
            )
            if len(self._geometries) >= 64:
                self._geometries.clear()
            self._geometries[key] = got
        return got

    def _fonts(self, option: QStyleOptionViewItem, font: QFont | None) -> tuple[QFont, QFontMetrics, str]:
        """The view's font with the model's (bold, struck) applied, its metrics and key."""
        base = option.font
        if self._base_font is None or self._base_font != base:
            self._base_font = QFont(base)
            self._resolved.clear()
            self._geometries.clear()
        got = self._resolved.get(id(font))
        if got is None:
            f = font.resolve(base) if font is not None else QFont(base)
            got = self._resolved[id(font)] = (f, QFontMetrics(f), f.key(), font)
        return got[0], got[1], got[2]

    def _elided_text(self, text: str, width: int, font_key: str, metrics: QFontMetrics) -> str:
        key = (text, width, font_key)
        got = self._elided.get(key)
        if got is None:
            if len(self._elided) >= ELIDED_CACHE:
                self._elided.clear()
            got = self._elided[key] = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
        return got

    def _elide(self, option: QStyleOptionViewItem, text: str) -> str:
        """``text`` as Qt's style would elide it in the cell, from the cache after the first paint."""
        w = option.widget
        style = w.style() if w is not None else None
        if style is None or option.textElideMode != Qt.TextElideMode.ElideRight:
            return text
        rect = style.subElementRect(style.SubElement.SE_ItemViewItemText, option, w)
        margin = style.pixelMetric(style.PixelMetric.PM_FocusFrameHMargin, None, w) + 1
        return self._elided_text(text, rect.width() - 2 * margin, option.font.key(), option.fontMetrics)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        column = index.column()
        look: RowLook | None = None
        if isinstance(model, SessionTreeModel):
            rec = model.record_of(index)
            if rec < 0:  # a block row: no connectors, no marks
                self._draw(painter, option, index)
                return
            # the row's facts straight from the model: a role asked through the index is a round
            # trip through Qt and the whole of data() per cell, several per painted row
            look = model.row_look(rec)
            in_group = column == 0 and look.in_group
            mark = look.mark
        else:
            in_group = column == 0 and index.parent().isValid()
            mark = index.data(Roles.CUT_MARK)
        if not in_group:
            self._draw(painter, option, index)
        else:
            opt = QStyleOptionViewItem(option)
            r = opt.rect
            if look is not None:
                assert isinstance(model, SessionTreeModel)
                head, last, bg = look.head, look.last, look.background
                muted = model._row_colors().muted
            else:
                head = bool(index.data(Roles.HEAD))
                last = bool(index.data(LAST_CHAIN))
                bg = index.data(Qt.ItemDataRole.BackgroundRole)
                muted = current_theme().muted
            painter.save()
            if bg is not None:
                painter.fillRect(QRect(r.left(), r.top(), GUTTER, r.height()), bg)
            painter.setPen(QPen(muted, 1))
            cx = r.left() + 5
            top, bottom, mid = r.top(), r.bottom() + 1, r.center().y()
            if head:
                painter.drawLine(cx, top, cx, bottom if not last else mid)
                painter.drawLine(cx, mid, r.left() + GUTTER - 2, mid)
            elif not last:
                painter.drawLine(cx, top, cx, bottom)
            painter.restore()
            opt.rect = QRect(r.left() + GUTTER, r.top(), r.width() - GUTTER, r.height())
            self._draw(painter, opt, index)
        if column == 1 and mark in ("valid", "invalid", "cut", "turn_start", "prefix"):
            _paint_cut_gutter(painter, option.rect, mark)
        if column == 0 and mark == "cut":
            th = current_theme()
            painter.save()
            painter.setPen(QPen(th.cut, 2))
            painter.drawLine(
                option.rect.left(), option.rect.top() + 1, option.rect.right(), option.rect.top() + 1
            )
            painter.restore()
        elif column == 0 and mark == "turn_start":
            th = current_theme()
            painter.save()
            painter.setPen(QPen(th.turn_start, 2))
            painter.drawLine(
                option.rect.left(), option.rect.top() + 1, option.rect.right(), option.rect.top() + 1
            )
            painter.restore()


_ANTIALIASING = QPainter.RenderHint.Antialiasing
#: the theme the gutter's pens and brushes were made for, and they by mark
_gutter_tools: tuple[Any, dict[str, tuple[QPen, QBrush]]] | None = None


def _gutter_pen_and_brush(mark: str) -> tuple[QPen, QBrush]:
    """The pen and brush of a cut-point mark, made once per theme (a theme colour is a copy per
    read, and the gutter is drawn on every row with a mark)."""
    global _gutter_tools
    th = current_theme()
    if _gutter_tools is None or _gutter_tools[0] is not th:
        ring = (QPen(th.muted, 1), QBrush(Qt.BrushStyle.NoBrush))
        dot = QPen(Qt.PenStyle.NoPen)
        _gutter_tools = (
            th,
            {
                "invalid": ring,
                "prefix": ring,
                "cut": (dot, QBrush(th.cut)),
                "turn_start": (dot, QBrush(th.turn_start)),
                "valid": (dot, QBrush(th.valid_cut)),
            },
        )
    return _gutter_tools[1][mark]


def _paint_cut_gutter(painter: QPainter, r: QRect, mark: str) -> None:
    """A mark at the left of the tokens column: a filled dot where the user may cut (valid cut
    point, or the cut itself), a small ring where pi never cuts. The reason is the row's tooltip."""
    d = 6
    x, y = r.left() + 3, r.center().y() - d // 2
    pen, brush = _gutter_pen_and_brush(mark)
    painter.save()
    painter.setRenderHint(_ANTIALIASING, True)
    painter.setPen(pen)
    painter.setBrush(brush)
    if mark == "invalid" or mark == "prefix":
        painter.drawEllipse(QRect(x + 1, y + 1, d - 2, d - 2))
    else:
        painter.drawEllipse(QRect(x, y, d, d))
    painter.restore()
