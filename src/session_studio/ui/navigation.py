"""Tree navigation: selection sync with the document, next/previous, go to leaf or cut, the filter
and search, branch points opened."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, QPoint, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QMenu

from .outline import PREVIEW_CHARS
from .plain import visible
from .window_parts import PAGE_BROWSER, WindowParts

__all__ = ["BRANCH_ROWS_PER_TURN", "TreeNavigation"]

#: rows a row block's branch points may lay out in one turn of the event loop: a block of a big session
#: holds tens of side branches (thousands of rows, a Python call or more each for the view's layout),
#: so opening them all at once froze the window for a few hundred ms. A turn's layout (~30 µs a row:
#: index(), flags() and Qt's own work) is followed by a paint in the same step of the event loop
BRANCH_ROWS_PER_TURN = 500
#: ... and in the turn that shows a new tree: its layout is followed at once by the tree's first paint
#: (a screenful of new rows, ~40-70 ms), and the two together must stay a short step
FIRST_TURN_BRANCH_ROWS = 300
#: the pause between two turns: a turn's layout is followed by a paint, and a timer of 0 ms ran the
#: next turn before any other timer of the event loop could (two steps of the GUI thread as one)
BRANCH_TURN_MS = 20
#: what opening one branch point counts for against those budgets, besides its rows: an expand
#: costs about as much as laying out this many rows (~0.2 ms: the view's bookkeeping and the model
#: calls it makes). A search's result has hundreds of branch points of a row or two each: counted
#: by rows alone, the first turn opened ~200 of them, 40 ms before its paint.
EXPAND_ROWS = 6


class TreeNavigation(WindowParts):
    """Moving through the session tree and keeping it in step with the document's selection."""

    _search_timer: QTimer  # the entry search's pause before it applies (MainWindow makes it)

    def _init_navigation(self) -> None:
        #: branch points of opened row blocks still to expand (from the end of the list)
        self._pending_branches: list[QPersistentModelIndex] = []
        self._branch_timer = QTimer(self)
        self._branch_timer.setSingleShot(True)
        self._branch_timer.setInterval(BRANCH_TURN_MS)
        self._branch_timer.timeout.connect(lambda: self._open_pending_branches())
        self._selecting = False  # a selection is being shown: the blocks it opens keep side branches shut

    def _reselect(self, record: int) -> None:
        if record < 0:
            return
        shown = self.tree_model.outline.nearest_shown(self.doc.session, record) if self.doc.session else None
        if shown is None:
            return
        if shown != record and self.tree_model.rebuilding:
            # the entry is not in the rows shown yet (pi appended it, a commit wrote it): showing its
            # nearest shown ancestor would make that the document's selection; the rows being built
            # show the entry itself when they are swapped in
            return
        ix = self.tree_model.index_of(shown)
        if ix.isValid() and self.tree.currentIndex().internalId() != ix.internalId():
            # the view opens the rows above the selected one (its block, the branch points it is in)
            # and only those: a block of a big session holds tens of side branches, thousands of rows
            # whose layout (a Python call or more each) froze the window on every jump into a block
            self._selecting = True
            try:
                self.tree.selectionModel().setCurrentIndex(
                    ix,
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )
                self.tree.scrollTo(ix)
            finally:
                self._selecting = False

    def _on_tree_current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        rec = self.tree_model.record_of(cur)
        if rec >= 0:
            self.doc.select(rec)

    def _expand_in_steps(self) -> None:
        """Open every branch point outside row blocks (blocks open theirs when they are expanded) of a
        new tree: the first FIRST_TURN_BRANCH_ROWS rows' branch points now, the rest
        BRANCH_ROWS_PER_TURN at a time, a turn of the event loop each (a big file's head or tree
        opened at once was laid out in one step that froze the window for ~0.2 s; a small one still
        opens at once)."""
        self._pending_branches = [QPersistentModelIndex(b) for b in reversed(self.tree_model.branch_points())]
        self._open_pending_branches(FIRST_TURN_BRANCH_ROWS)

    def _on_tree_expanded(self, ix: QModelIndex) -> None:
        if self.tree_model.is_chunk(ix) and not self._selecting:
            # a block opened by hand: its side branches open a few at a time from the next turn of the
            # event loop on; the current row stays where it is meanwhile
            self._pending_branches.extend(QPersistentModelIndex(b) for b in self.tree_model.branch_points(ix))
            self._branch_timer.start()

    def _open_pending_branches(self, budget: int | None = None) -> None:
        """Expand queued branch points up to ``budget`` rows (``BRANCH_ROWS_PER_TURN``; each one
        counts for its rows and EXPAND_ROWS), the rest in later turns of the event loop; ``budget``
        < 0: all of them now."""
        pending, m, t = self._pending_branches, self.tree_model, self.tree
        limit = BRANCH_ROWS_PER_TURN if budget is None else budget
        cur = t.currentIndex()
        before = t.visualRect(cur) if cur.isValid() else None
        shown = before is not None and t.viewport().rect().intersects(before)
        rows = 0
        while pending and (limit < 0 or rows < limit):
            kept = pending.pop()
            b = m.index(kept.row(), 0, kept.parent())  # gone (invalid) if the model was reset since
            if b.isValid() and not t.isExpanded(b):
                rows += m.rowCount(b) + EXPAND_ROWS
                t.expand(b)
        if shown and before is not None:
            self._keep_row_in_place(cur, before.top())
        if pending:
            self._branch_timer.start()

    def _keep_row_in_place(self, ix: QModelIndex, top: int) -> None:
        """Scroll so that ``ix`` is drawn at ``top`` again (rows opened above it pushed it down)."""
        t = self.tree
        now = t.visualRect(ix)
        moved = now.top() - top
        if not moved or not now.height():
            return
        bar = t.verticalScrollBar()
        per_item = t.verticalScrollMode() == QAbstractItemView.ScrollMode.ScrollPerItem
        bar.setValue(bar.value() + (moved // now.height() if per_item else moved))

    def _show_new_rows(self) -> None:
        """Rows built in a worker were swapped in (a search, a filter, entries pi appended): their
        side branches open a turn at a time (a search's result can be ten thousand rows in them),
        the count is said, the rows are painted in a turn of their own and the selection shown
        again in the turn after: showing it lays out its block (500 rows, 30-60 ms), which with
        the swap and the first paint in one step of the GUI thread made a search's results on
        the 1 GB session a stall of ~145 ms."""
        self._expand_in_steps()
        self._update_count()
        self.inspector.set_search(self.tree_model.query)
        self._paint_tree_next_turn(lambda: self._reselect(self.doc.selected))

    def _paint_tree_next_turn(self, then: Callable[[], None] | None = None) -> None:
        """Paint the tree's new rows two turns of the event loop after this step, and ``then`` in a
        turn after that paint. The first paint of a new tree (~40–70 ms: its rows laid out, each
        cell's text elided and prepared) right after the step that made it (25–60 ms when a file's
        head or whole index arrives) was one stall of the GUI thread over 100 ms. So was that paint
        in the turn after the step: there Qt lays out what the step changed in the rest of the window
        (the panel, the bar, the labels), and a second wave of layouts follows the first one's paint
        (~20 ms with the tree's first paint: a stall of ~120 ms on the 1 GB session)."""
        if self.runner.synchronous:  # no event loop turns between the steps (tests)
            if then is not None:
                then()
            return
        tree = self.tree
        tree.setUpdatesEnabled(False)

        def paint() -> None:
            tree.setUpdatesEnabled(True)
            if then is not None:
                tree.call_after_paint(then)

        QTimer.singleShot(1, self, lambda: QTimer.singleShot(1, self, paint))

    def _tree_context_menu(self, pos: QPoint) -> None:
        """The entry's commands (the window's own actions) at a right click on its row, or at the
        Menu key on the current row; the row is selected first, as the commands act on the
        selection."""
        t = self.tree
        ix = t.indexAt(pos)
        if not ix.isValid():  # the Menu key: Qt may give a point beside the current row
            ix = t.currentIndex()
            pos = t.visualRect(ix).center()
        record = self.tree_model.record_of(ix)
        if record < 0:  # a block of rows or no row: no entry to act on
            return
        if t.currentIndex().internalId() != ix.internalId():
            t.setCurrentIndex(ix)  # selects its entry; the actions follow the selection (_on_selection)
        menu = self.tree_menu
        if menu is None:  # made once: a menu made per click stayed, a child of the window
            menu = self.tree_menu = QMenu(self)
            menu.setToolTipsVisible(True)  # a disabled command's tooltip says why
            menu.addActions([self.a_cut_here, self.a_goto_cut])
            menu.addSeparator()
            menu.addActions([self.a_branch, self.a_branch_sum, self.a_fork, self.a_label])
            menu.addSeparator()
            menu.addAction(self.a_copy_id)
        menu.popup(t.viewport().mapToGlobal(pos))

    def _copy_entry_id(self) -> None:
        rid = self._copyable_id(self.doc.selected)
        if rid is not None:
            QGuiApplication.clipboard().setText(rid)
            self.statusBar().showMessage(f"Copied the entry id {rid}", 3000)

    def _apply_filter(self) -> None:
        # built in a worker and swapped in: typing never freezes the window on a big session
        self.tree_model.filter_async(
            self.runner,
            self.filter_combo.currentData(),
            self.search.text(),
            self._show_new_rows,
            self.a_search_content.isChecked(),
        )
        if self.tree_model.rebuilding:  # not shown yet: say so until the rows come
            self._say_searching()

    def _on_search_scope(self, in_content: bool) -> None:
        """Search the whole content, or the rows again: the same text searched anew."""
        self.settings.set_search_content(in_content)
        self._show_search_scope()
        if self.search.text().strip():
            self._apply_filter()
        self._focus_search()

    def _show_search_scope(self) -> None:
        """What the search matches, said where it is typed."""
        if self.a_search_content.isChecked():
            self.search.setPlaceholderText("Search content (Ctrl+F)")
            self.search.setToolTip(
                "Finds entries that hold what you type anywhere in their content (messages, tool calls "
                "and their outputs, summaries), or in their row, label or exact id; upper and lower "
                "case alike. Reads the whole file again: seconds on a big session"
            )
        else:
            self.search.setPlaceholderText("Search entries (Ctrl+F)")
            self.search.setToolTip(
                f"Finds entries whose row text (the first {PREVIEW_CHARS} characters of the entry), "
                "label or exact id holds what you type; upper and lower case alike. "
                "In content (Ctrl+Shift+F) searches their whole content"
            )

    def _say_searching(self) -> None:
        """The count line while a search or filter is built: the rows shown are still the old ones
        (on a big session the search texts may still be coming from their workers, ~10 s on 1 GB,
        and a search of the content reads the whole file)."""
        query = self.search.text().strip()
        text = f"Searching for “{query}”…" if query else "Filtering…"
        m = self.tree_model
        if m.waiting_for_search_texts:
            done, total = m.search_text_read
            text += " preparing the search" + (f": {done:,} of {total:,} entries read" if total else "")
        elif query and self.a_search_content.isChecked():
            done, total = m.content_read
            text = f"Searching the content for “{query}”…" + (
                f" {done / 1e6:,.0f} of {total / 1e6:,.0f} MB read" if total else ""
            )
        self.tree_count.setText(text)

    def _on_search_text_progress(self, _done: int, _total: int) -> None:
        if self.tree_model.waiting_for_search_texts or self.tree_model.rebuilding:
            self._say_searching()

    def _update_count(self) -> None:
        s = self.doc.session
        if s is None:
            self.tree_count.clear()
            self.tree.set_empty_text("")
            return
        n = len(self.tree_model.outline)
        self.tree.set_empty_text(self._no_rows_text() if not n else "")
        path_n = len(self.doc.loaded_state.path_indices) if self.doc.loaded_state else 0
        self.tree_count.setText(
            f"{n:,} of {len(s.records):,} entries shown · active path {path_n:,} · "
            f"{len(s.labels)} label{'s' if len(s.labels) != 1 else ''}"
        )

    def _no_rows_text(self) -> str:
        """What the empty tree says: the search or the filter shows no entry."""
        query = self.search.text().strip()
        default = self.filter_combo.currentData() == "default"
        where = "" if default else f" with the filter “{self.filter_combo.currentText()}”"
        if query:
            scope = " anywhere in its content" if self.a_search_content.isChecked() else ""
            return f"No entry matches “{visible(query)}”{scope}{where}.\nEscape clears the search."
        return f"No entry is shown{where}."

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
                self._open_pending_branches(-1)  # the step goes through the block's side branches
                nxt = t.indexBelow(nxt)
            elif int(nxt.internalId()) in ancestors:
                nxt = t.indexAbove(nxt)  # the header of the block we are leaving
            else:
                # a closed block above: open it and take its last row
                t.expand(nxt)
                self._open_pending_branches(-1)
                while t.isExpanded(nxt) and m.rowCount(nxt) > 0:
                    nxt = m.index(m.rowCount(nxt) - 1, 0, nxt)
        if nxt.isValid():
            self.tree.setCurrentIndex(nxt)

    def _goto_leaf(self) -> None:
        res = self.doc.loaded_state
        if res and res.path_indices:
            self._go_to(res.path_indices[-1], "leaf")

    def _goto_cut(self) -> None:
        st = self.doc.state
        if st and st.first_kept_record is not None:
            self._go_to(st.first_kept_record, "cut")

    def _go_to(self, record: int, what: str) -> None:
        """Select ``record`` for Go to leaf / Go to cut; an entry search that hides it is cleared
        first (the tree kept showing a row the search found while the inspector showed the cut),
        and the rows without it select it when they come (_show_new_rows)."""
        if self.search.text() and not self.tree_model.index_of(record).isValid():
            self._search_timer.stop()
            self.search.clear()
            self._apply_filter()
            self.statusBar().showMessage(f"Entry search cleared to show the {what}", 6000)
        self.doc.select(record)

    def _cut_at(self, record: int) -> None:
        if record < 0:
            return
        why = self.doc.set_manual_cut(record)
        if why:
            self.statusBar().showMessage(f"Not a cut point: {why}", 8000)
