"""The token bar: the active path's context against the model's window (custom painted).

Geometry lives in :mod:`session_studio.core.bar_geometry`; this widget only draws and hit-tests.
Row 1 ("now") shows one segment per context message coloured by role, row 2
("after") the projected context after the planned compaction. Markers: the
compaction threshold (window − reserve), the reserve zone, the keep-recent zone,
the provider-usage mark, the chosen cut and the turn prefix of a split turn.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from session_studio.core.bar_geometry import (
    AfterItems,
    Span,
    after_items,
    after_spans,
    cumulative,
    fill_tokens,
    item_span,
    pixel_spans,
    span_at,
    stepped_item,
    token_x,
)
from session_studio.core.explain import (
    AUTO_COMPACTION_OFF,
    RecoveryCut,
    keep_zone_text,
    overflow_text,
    threshold_check_text,
    tokens_unknown_text,
)
from session_studio.core.plan import PlanState

from .announce import announce
from .key_cursor import KeyCursorView
from .plain import rich_tooltip
from .theme import current_theme

if TYPE_CHECKING:
    from .real_tokens import PathTokensView

__all__ = ["BarLayout", "TokenBar"]

LABEL_W = 46
PAD = 8
ROW_H = 18
AFTER_H = 12
LEGEND_H = 14


class _Items:
    """Per-path facts of the bar, computed once per loaded path (not per plan): the keys and kinds
    of the context items, the fill (pi's count per item) and the chars/4 estimate, cumulated.

    When pi shows the context size as unknown (``PlanState.tokens_unknown``), no provider usage is
    spread over the items: the row shows their chars/4 estimates, hatched, under an "unknown" label."""

    def __init__(self, state: PlanState) -> None:
        items = state.item_tokens
        self.items = items
        # columns of 100k tuples in C (a long path's bar is set up on the GUI thread)
        self.keys = list(map(itemgetter(0), items))
        self.kinds = list(map(itemgetter(1), items))
        est = list(map(itemgetter(2), items))
        tok = state.tokens
        #: why pi shows no context size (None: it shows one); a per-path fact like the items
        self.unknown = tokens_unknown_text(state)
        last = tok.last_usage_index if tok is not None and self.unknown is None else None
        usage = (
            float(tok.usage_tokens) if tok is not None and isinstance(tok.usage_tokens, int | float) else 0.0
        )
        self.fill_cum = cumulative(fill_tokens(est, last, usage))
        self.est_cum = cumulative(est)
        #: items from here on are counted by the estimate only (after the last valid usage)
        self.estimated_from = (last + 1) if last is not None else 0
        self.now_key: tuple[float, int, int] | None = None
        self.now: list[Span] = []
        self.now_xs: list[int] = []
        self._item_of: dict[int, int] | None = None

    def item_of(self, record: int) -> int | None:
        """The context item of entry ``record`` on this path (None: not in the context). The map is
        made at the first question: only the keyboard asks, and a 100k-item path takes ~10 ms."""
        if self._item_of is None:
            self._item_of = {key: j for j, key in enumerate(self.keys) if key >= 0}
        return self._item_of.get(record)


class BarLayout:
    """Where everything goes for a given state and widget size (pure, testable).

    Work is O(width · log items): spans are per pixel run, the per-path sums are cached.
    """

    _cache: _Items | None = None
    #: (the after_tokens list, its AfterItems): one per plan or summary edit, not one per paint
    _after_cache: tuple[object, AfterItems | None] | None = None

    @classmethod
    def prime(cls, state: PlanState) -> None:
        """Make the per-path sums of ``state``'s path now, from a worker (the window's load job): the
        GUI step that shows a loaded path then finds them (on 100k items they took ~55 ms of it).
        Only the path matters, not the plan's parameters."""
        cls._items_of(state)

    @classmethod
    def _items_of(cls, state: PlanState) -> _Items:
        """The per-path sums of ``state``'s path: kept while the path's items are the same."""
        c = cls._cache
        if c is None or c.items is not state.item_tokens:
            c = cls._cache = _Items(state)
        return c

    def __init__(self, state: PlanState | None, width: int) -> None:
        self.x0 = LABEL_W + PAD
        self.w = max(10, width - self.x0 - PAD)
        self.top_text = 4
        self.row_y = 24
        self.after_y = self.row_y + ROW_H + 10
        self.legend_y = self.after_y + AFTER_H + 6
        self.state = state
        self.unknown: str | None = None
        self.now: list[Span] = []
        self.after: list[Span] = []
        self.now_xs: list[int] = []
        self.after_xs: list[int] = []
        self.scale = 1.0
        self.fill_total = 0.0
        self.est_now = 0.0
        self.after_total = 0.0
        if state is None:
            return
        c = BarLayout._items_of(state)
        self.items = c
        self.unknown = c.unknown
        self.fill_total = c.fill_cum[-1]
        self.est_now = c.est_cum[-1]
        ac = BarLayout._after_cache
        if ac is None or ac[0] is not state.after_tokens:
            ac = BarLayout._after_cache = (state.after_tokens, after_items(state, c.est_cum))
        projected = ac[1]
        if projected is not None:
            self.after_total = projected.total
        # a count pi does not show (unknown context size) does not stretch the bar either
        counted = state.context_tokens if self.unknown is None else 0.0
        self.scale = float(max(state.window, self.fill_total, self.after_total, counted, 1))
        now_key = (self.scale, self.w, self.x0)
        if c.now_key != now_key:  # the 'now' row depends on the path and the geometry only
            c.now = pixel_spans(
                c.keys, c.kinds, c.fill_cum, self.scale, self.w, self.x0, estimated_from=c.estimated_from
            )
            c.now_key = now_key
            c.now_xs = [s.x for s in c.now]
        self.now = c.now
        if projected is not None:
            self.after = after_spans(projected, c.keys, c.kinds, c.est_cum, self.scale, self.w, self.x0)
        self.now_xs = c.now_xs
        self.after_xs = [s.x for s in self.after]

    def x(self, tokens: float) -> int:
        return token_x(tokens, self.scale, self.w, self.x0)

    def item_x(self, item: int | None) -> int | None:
        """x where context item ``item`` starts on the 'now' row (by its cumulated fill)."""
        if item is None or self.state is None:
            return None
        cum = self.items.fill_cum
        if item >= len(cum) - 1:
            return None
        return self.x(cum[item])

    def hit(self, pos: QPoint) -> Span | None:
        if self.row_y <= pos.y() < self.row_y + ROW_H:
            return span_at(self.now, pos.x(), self.now_xs)
        if self.after_y <= pos.y() < self.after_y + AFTER_H:
            return span_at(self.after, pos.x(), self.after_xs)
        return None

    def marks(self) -> list[tuple[str, int, int, str]]:
        """(name, x from, x to, explanation) of every mark drawn, for hover texts and the legend."""
        st = self.state
        if st is None:
            return []
        out: list[tuple[str, int, int, str]] = []
        xt, xw = self.x(st.threshold), self.x(st.window)
        out.append(
            (
                "threshold",
                xt - 2,
                xt + 2,
                f"Threshold {_fmt(st.threshold)} = context window {_fmt(st.window)} − reserveTokens "
                f"{_fmt(st.reserve)}: pi compacts when the context exceeds it"
                + ("" if st.params.auto_compaction else f" ({AUTO_COMPACTION_OFF})"),
            )
        )
        cx = self.item_x(st.first_kept_item)
        if cx is not None:
            out.append(("cut", cx - 2, cx + 2, _LEGEND["cut"]))
        tok = st.tokens
        if self.unknown is not None and self.fill_total > 0:
            out.append(("unknown", self.x0, self.x(self.fill_total), _unknown_tip(self.unknown)))
        elif tok is not None and tok.last_usage_index is not None:
            ux = self.x(_f(tok.usage_tokens))
            out.append(
                (
                    "usage",
                    ux - 2,
                    ux + 2,
                    f"Usage tick: {_fmt(_f(tok.usage_tokens))} tokens reported by the provider for the last "
                    "assistant message with valid usage; pi adds the estimate of what follows",
                )
            )
        out.append(
            (
                "reserve",
                xt,
                xw,
                f"Reserve zone: the last {_fmt(st.reserve)} tokens of the window (reserveTokens), kept free "
                "for the reply",
            )
        )
        bx = self.item_x(st.budget_item) if st.budget_item is not None else self.x0
        if self.fill_total > 0 and bx is not None:
            out.append(
                (
                    "keep",
                    bx,
                    self.x(self.fill_total),
                    f"Keep zone (keepRecentTokens = {_fmt(st.keep)}, estimated tokens): "
                    + keep_zone_text(st.profile),
                )
            )
        return out


#: the keys the bar's keyboard cursor takes (without modifiers); the rest go on (Tab, shortcuts)
_CURSOR_KEYS = frozenset(
    {
        Qt.Key.Key_Left,
        Qt.Key.Key_Right,
        Qt.Key.Key_Up,
        Qt.Key.Key_Down,
        Qt.Key.Key_Home,
        Qt.Key.Key_End,
        Qt.Key.Key_PageUp,
        Qt.Key.Key_PageDown,
        Qt.Key.Key_Return,
        Qt.Key.Key_Enter,
        Qt.Key.Key_Space,
    }
)


#: the keys after whose release the cursor's text is shown again (see TokenBar.keyReleaseEvent)
_TEXT_KEPT_KEYS = frozenset(
    {Qt.Key.Key_Tab, Qt.Key.Key_Backtab}
    | {k for k in _CURSOR_KEYS if k not in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)}
)


def _after_index_of(after: list[Span], item: int) -> int:
    """Where context item ``item`` is on the 'after' row: its own span if it is kept (or the span
    drawn over it, for an item thinner than a pixel), else the projected summary that replaces it."""
    kept = [k for k, sp in enumerate(after) if sp.item >= 0]
    if not kept or item < after[kept[0]].item:
        return 0
    items = [after[k].item for k in kept]
    return kept[max(bisect.bisect_right(items, item) - 1, 0)]


def _index_at(xs: list[int], x: int) -> int:
    """The span of a row (its spans' ``xs``) at or before ``x``; the first if ``x`` is before all."""
    return max(bisect.bisect_right(xs, x) - 1, 0)


def _fmt(n: float) -> str:
    return f"{n:,.0f}"


def _unknown_tip(reason: str) -> str:
    return (
        f"{reason[0].upper()}{reason[1:]}. The hatched segments are the chars/4 estimates of the messages "
        "in the context, not a figure pi shows."
    )


def real_legend_text(view: PathTokensView, width: int, advance: Callable[[str], int]) -> str:
    """The real-token row's text: the figures, then what real tokens change; where that is wider
    than ``width`` (``advance``: a text's width), the changes first (at 960 px the elision cut
    "with real tokens the cut moves #24 → #16" away, keeping the figures)."""
    text, notes = view.header(), view.notes()
    if not notes:
        return text
    both = text + "  ·  " + "  ·  ".join(notes)
    return both if advance(both) <= width else "  ·  ".join(notes) + "  ·  " + text


class TokenBar(KeyCursorView):
    entry_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state: PlanState | None = None
        self.recovery: RecoveryCut | None = None  # pi 1.6.0's overflow recovery (set_state)
        self.selected = -1
        self.layout_ = BarLayout(None, self.width())
        self._legend_boxes: list[tuple[str, int, int]] = []
        #: (spans, y, rects by colour, separators) of the last 'now' row drawn: reused while unchanged
        self._rects_cache: tuple[list[Span], int, dict[tuple[str, int], list[QRect]], list[QRect]] | None = (
            None
        )
        #: the path's real token count (ui.real_tokens.PathTokensView), drawn at the legend's right
        self.real: PathTokensView | None = None
        #: the keyboard's place on the bar: ("now", context item) or ("after", span of that row);
        #: None: the next key starts from the selected entry
        self._cursor: tuple[str, int] | None = None
        self.setMouseTracking(True)
        self.setMinimumHeight(self.sizeHint().height())
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Token bar")

    def sizeHint(self) -> QSize:
        return QSize(600, 24 + ROW_H + 10 + AFTER_H + 6 + LEGEND_H + 6)

    def set_state(self, state: PlanState | None, recovery: RecoveryCut | None = None) -> None:
        """Show the plan ``state``; ``recovery``: pi 1.6.0's overflow recovery for it
        (SessionDocument.recovery), which the bar's text for a screen reader names."""
        self.state = state
        self.recovery = recovery
        self._relayout()

    def set_recovery(self, recovery: RecoveryCut | None) -> None:
        """pi 1.6.0's overflow recovery for the plan shown, planned in a worker after it."""
        self.recovery = recovery
        self._describe()

    def set_real(self, view: PathTokensView | None) -> None:
        self.real = view
        # only the legend's row shows it: a count's progress ("counting 41 %") repainted the whole
        # bar ~200 times on a 100k-entry path (6 ms of the GUI thread each)
        self.update(self._legend_strip())

    def _legend_strip(self) -> QRect:
        return QRect(0, self.layout_.legend_y, self.width(), LEGEND_H)

    def set_selected(self, record: int) -> None:
        self.selected = record
        if self.hasFocus():  # an entry chosen elsewhere (Alt+Down, Enter here): the cursor goes to it
            here = self.cursor_span()
            if here is None or here.key != record:
                item = self.layout_.items.item_of(record) if self.layout_.state is not None else None
                self._cursor = ("now", item) if item is not None else self._cursor
        else:
            self._cursor = None  # the next key starts from the selected entry
        self.update()

    def _relayout(self) -> None:
        before = self.layout_
        self.layout_ = BarLayout(self.state, self.width())
        self._keep_cursor(before)
        self.update()
        self._describe()

    def _describe(self) -> None:
        """What the painted bar says, as text for a screen reader: its header lines and pi's check."""
        st = self.state
        if st is None or st.session is None:
            self.setAccessibleDescription("")
            return
        left, right = _header_texts(st, self.layout_)
        cut = f"cut at path #{st.cut.first_kept_index}" if st.cut is not None else "no cut"
        overflow = overflow_text(st, self.recovery)
        self.setAccessibleDescription(
            f"{left}. {right}. {cut}. {threshold_check_text(st)}.{f' {overflow}.' if overflow else ''}".replace(
                "  ·  ", "; "
            )
        )

    def resizeEvent(self, e: QResizeEvent) -> None:
        self._relayout()
        super().resizeEvent(e)

    # ---------------------------------------------------------------- interaction
    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        text = self.describe_at(e.position().toPoint())
        if not text:
            QToolTip.hideText()
            return
        QToolTip.showText(e.globalPosition().toPoint(), text, self)

    def describe_at(self, pos: QPoint) -> str:
        """The hover text at ``pos``: a mark (threshold, cut, usage tick, reserve, keep zone, legend
        entry) or the entry under the pointer."""
        lay = self.layout_
        x, y = pos.x(), pos.y()
        if lay.legend_y <= y < lay.legend_y + LEGEND_H:
            for name, a, b in self._legend_boxes:
                if a <= x < b:
                    if name == "unknown" and lay.unknown:
                        return _unknown_tip(lay.unknown)
                    if name == "keep" and self.state is not None:  # pi 1.6.0 cuts otherwise
                        return f"Keep zone: {keep_zone_text(self.state.profile)}"
                    return _LEGEND[name]
            if self.real is not None and self._legend_boxes and x >= self._legend_boxes[-1][2]:
                return rich_tooltip(self.real.tooltip())  # names the session's model: never HTML
            return ""
        if y < lay.row_y - 6 and lay.unknown is not None:  # the header's "unknown"
            return _unknown_tip(lay.unknown)
        on_rows = lay.row_y - 6 <= y < lay.after_y + AFTER_H + 3
        if on_rows:
            texts = [
                text
                for name, a, b, text in lay.marks()
                if a <= x <= b and name not in ("reserve", "keep", "unknown")
            ]
            if texts:
                return "\n".join(texts)
        if lay.row_y + ROW_H <= y < lay.row_y + ROW_H + 6:
            for name, a, b, text in lay.marks():
                if name == "keep" and a <= x <= b:
                    return text
        sp = lay.hit(pos)
        if sp is not None:
            if lay.unknown is not None and any(s is sp for s in lay.now):
                return f"{self.describe(sp)}\n{_unknown_tip(lay.unknown)}"
            return self.describe(sp)
        if on_rows:
            for name, a, b, text in lay.marks():
                if name == "reserve" and a <= x <= b:
                    return text
        return ""

    def describe(self, sp: Span, row: str | None = None) -> str:
        st = self.state
        if sp.key < 0:
            if sp.kind == "system":  # pi 1.6.0: the new compaction carries the current system message
                return f"System message snapshot of the new compaction (projected): ~{_fmt(sp.tokens)} tokens"
            return f"Compaction summary (projected): ~{_fmt(sp.tokens)} tokens"
        name = {
            "toolResult": "tool result",
            "bashExecution": "bash execution",
            "compactionSummary": "compaction summary",
            "branchSummary": "branch summary",
            "custom": "custom message",
        }.get(sp.kind, sp.kind)
        pos = st.positions.get(sp.key, -1) if st else -1
        mark = st.marks.get(sp.key, "") if st else ""
        extra = {
            "cut": " · first kept entry (cut)",
            "turn_start": " · turn start",
            "prefix": " · split-turn prefix",
        }
        on_now = row == "now" if row is not None else any(s is sp for s in self.layout_.now)
        share = not sp.estimated and on_now
        own = (
            st.item_tokens[sp.item][2]
            if share and st is not None and 0 <= sp.item < len(st.item_tokens)
            else None
        )
        counted = (
            "estimated (chars/4), after the last valid usage"
            if sp.estimated
            # pi never gives one entry a usage figure: this width is the entry's part of the usage,
            # its own estimate (the tree's Tokens column, Why this cut) is said beside it
            else "share of the provider-reported usage"
            + (f" (its own chars/4 estimate: {_fmt(own)})" if own is not None else "")
            if share
            else "estimated (chars/4)"
        )
        return (
            f"{name} · path #{pos} · {_fmt(sp.tokens)} tokens, {counted}"
            f" · {_fmt(sp.start)}–{_fmt(sp.start + sp.tokens)}{extra.get(mark, '')}"
        )

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            lay = self.layout_
            sp = lay.hit(e.position().toPoint())
            if sp is not None:  # the keyboard goes on from what was clicked
                on_now = any(s is sp for s in lay.now)
                self._cursor = ("now", sp.item) if on_now else ("after", lay.after.index(sp))
                self.update()
            if sp is not None and sp.key >= 0:
                self.entry_clicked.emit(sp.key)

    # ---------------------------------------------------------------- keyboard
    def _keep_cursor(self, before: BarLayout) -> None:
        """After a relayout: the cursor stays on its item while the path is the same (a plan's
        parameters moved the cut, the width changed); another path starts from the selection."""
        cur, lay = self._cursor, self.layout_
        if cur is None:
            return
        same_path = lay.state is not None and before.state is not None and lay.items is before.items
        if not same_path:
            self._cursor = None
        elif cur[0] == "after":
            self._cursor = ("after", min(cur[1], len(lay.after) - 1)) if lay.after else None

    def _start(self) -> tuple[str, int] | None:
        """Where the keyboard starts: the selected entry's item, else the newest item."""
        lay = self.layout_
        if lay.state is None or not lay.items.keys:
            return None
        item = lay.items.item_of(self.selected)
        return ("now", item if item is not None else len(lay.items.keys) - 1)

    def cursor_span(self, cur: tuple[str, int] | None = None) -> Span | None:
        """The span the keyboard cursor (or ``cur``) is on (a 'now' item's exact extent, however
        thin)."""
        cur, lay = cur or self._cursor, self.layout_
        if cur is None or lay.state is None:
            return None
        row, i = cur
        if row == "after":
            return lay.after[i] if 0 <= i < len(lay.after) else None
        c = lay.items
        if not 0 <= i < len(c.keys):
            return None
        return item_span(
            c.keys, c.kinds, c.fill_cum, i, lay.scale, lay.w, lay.x0, estimated_from=c.estimated_from
        )

    def cursor_text(self) -> str:
        """What the cursor's item is, as its hover text says it (with the row it is on)."""
        sp = self.cursor_span()
        if sp is None or self._cursor is None:
            return ""
        row = self._cursor[0]
        text = f"{'now' if row == 'now' else 'after the compaction'}: {self.describe(sp, row=row)}"
        unknown = self.layout_.unknown
        return f"{text}\n{_unknown_tip(unknown)}" if row == "now" and unknown is not None else text

    def keyPressEvent(self, e: QKeyEvent) -> None:
        key = e.key()
        plain = not (e.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
        cur = None
        if plain and key in _CURSOR_KEYS:
            cur = self._cursor if self._cursor is not None else self._start()
        if cur is None:
            super().keyPressEvent(e)
            return
        e.accept()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self._cursor = cur
            sp = self.cursor_span(cur)
            if sp is not None and sp.key >= 0:
                self.entry_clicked.emit(sp.key)
            return
        self._cursor = self._moved(cur, key)
        self.show_cursor()

    def _moved(self, cur: tuple[str, int], key: int) -> tuple[str, int]:
        lay = self.layout_
        row, i = cur
        here = self.cursor_span(cur)
        middle = here.x + here.w // 2 if here is not None else lay.x0
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            if key == Qt.Key.Key_Down and row == "now" and lay.after:
                return ("after", _after_index_of(lay.after, i))
            if key == Qt.Key.Key_Up and row == "after":
                if here is not None and here.item >= 0:  # a kept item: the same item above
                    return ("now", here.item)
                above = span_at(lay.now, middle, lay.now_xs)
                return ("now", above.item if above is not None else 0)
            return cur
        last = (len(lay.items.keys) if row == "now" else len(lay.after)) - 1
        if key == Qt.Key.Key_Home:
            return (row, 0)
        if key == Qt.Key.Key_End:
            return (row, last)
        direction = 1 if key in (Qt.Key.Key_Right, Qt.Key.Key_PageDown) else -1
        page = key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)
        if row == "now":
            return (row, stepped_item(lay.items.fill_cum, i, direction, lay.scale / 10 if page else 0.0))
        if page:  # a tenth of the bar along the row
            k = _index_at(lay.after_xs, middle + direction * lay.w // 10)
            return (row, k if (k - i) * direction > 0 else min(max(i + direction, 0), last))
        return (row, min(max(i + direction, 0), last))

    def show_cursor(self, say: bool = True) -> None:
        """Draw the cursor, show its item's text where the hover text would be, and ``say`` it to
        a screen reader."""
        self.update()
        sp, text = self.cursor_span(), self.cursor_text()
        if sp is None or not text or self._cursor is None:
            return
        lay = self.layout_
        below = lay.row_y + ROW_H + 4 if self._cursor[0] == "now" else lay.after_y + AFTER_H + 2
        QToolTip.showText(self.mapToGlobal(QPoint(sp.x + sp.w // 2, below)), text, self)
        if say:
            announce(self, text)

    def keyReleaseEvent(self, e: QKeyEvent) -> None:
        # Qt hides a tooltip at every key press and release: the text shown at the press (or at the
        # focus a Tab gave) would vanish as the key comes up
        super().keyReleaseEvent(e)
        if not e.isAutoRepeat() and e.key() in _TEXT_KEPT_KEYS:
            self.show_cursor(say=False)

    def place_cursor(self) -> None:
        if self._cursor is None:
            self._cursor = self._start()

    def _draw_cursor(self, p: QPainter, lay: BarLayout) -> None:
        """The keyboard cursor: a frame in the focus colour around its item (3 px at least: an item
        thinner than a pixel is still found)."""
        sp = self.cursor_span()
        if sp is None or self._cursor is None:
            return
        y, h = (lay.row_y, ROW_H) if self._cursor[0] == "now" else (lay.after_y, AFTER_H)
        w = max(sp.w, 3)
        p.setPen(QPen(current_theme().focus, 2))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRect(sp.x - (w - sp.w) // 2, y - 2, w, h + 4))

    # ---------------------------------------------------------------- painting
    def paintEvent(self, e: QPaintEvent) -> None:
        th = current_theme()
        p = QPainter(self)
        lay = self.layout_
        st = self.state
        f = QFont(self.font())
        f.setPointSizeF(max(7.5, f.pointSizeF() - 1))
        p.setFont(f)
        if self._legend_strip().contains(e.rect()):  # the real-token text changed (set_real): that row only
            p.fillRect(e.rect(), self.palette().window())
            self._draw_legend(p, lay)
            self._draw_real(p, lay)
            p.end()
            return
        p.fillRect(self.rect(), self.palette().window())
        fm = p.fontMetrics()
        x0, w = lay.x0, lay.w
        # row labels
        p.setPen(th.muted)
        p.drawText(
            QRect(4, lay.row_y, LABEL_W, ROW_H),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            "now",
        )
        p.drawText(
            QRect(4, lay.after_y - 2, LABEL_W, AFTER_H + 4),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            "after",
        )
        # tracks
        track = th.base
        p.fillRect(QRect(x0, lay.row_y, w, ROW_H), track)
        p.fillRect(QRect(x0, lay.after_y, w, AFTER_H), track)
        p.setPen(QPen(th.grid, 1))
        p.drawRect(QRect(x0, lay.row_y, w, ROW_H).adjusted(0, 0, -1, -1))
        p.drawRect(QRect(x0, lay.after_y, w, AFTER_H).adjusted(0, 0, -1, -1))
        if st is None:
            p.setPen(th.muted)
            p.drawText(QRect(x0, 2, w, 20), Qt.AlignmentFlag.AlignVCenter, "No session")
            p.end()
            return
        # reserve zone + threshold
        xt = lay.x(st.threshold)
        xw = lay.x(st.window)
        for y, h in ((lay.row_y, ROW_H), (lay.after_y, AFTER_H)):
            p.fillRect(QRect(xt, y, max(0, xw - xt), h), QBrush(th.reserve))
            p.fillRect(
                QRect(xt, y, max(0, xw - xt), h), QBrush(th.reserve.darker(110), Qt.BrushStyle.BDiagPattern)
            )
        # segments: the 'now' row adds up to pi's count (usage + estimated tail)
        self._draw_spans(p, lay.now, lay.row_y, ROW_H, reuse=True)
        self._draw_spans(p, lay.after, lay.after_y, AFTER_H)
        # prefix of a split turn + cut (context items by index: no search over the path)
        if st.turn_start_item is not None and st.first_kept_item is not None:
            a = lay.item_x(st.turn_start_item)
            b = lay.item_x(st.first_kept_item)
            if a is not None:
                b = b if b is not None else lay.x(lay.fill_total)
                p.fillRect(QRect(a, lay.row_y - 3, max(2, b - a), 3), th.turn_start)
        cx = lay.item_x(st.first_kept_item)
        if cx is not None:
            p.setPen(QPen(th.cut, 2))
            p.drawLine(cx, lay.row_y - 5, cx, lay.row_y + ROW_H + 4)
        # keep-recent zone: from where keepRecentTokens was reached to the newest message
        if lay.fill_total > 0:
            ka = lay.item_x(st.budget_item) if st.budget_item is not None else lay.x0
            kb = lay.x(lay.fill_total)
            if ka is not None:
                p.setPen(QPen(th.role("user"), 1))
                y = lay.row_y + ROW_H + 3
                p.drawLine(ka, y, kb, y)
                p.drawLine(ka, y - 2, ka, y + 2)
                p.drawLine(kb, y - 2, kb, y + 2)
        # threshold line
        p.setPen(QPen(th.threshold, 1, Qt.PenStyle.DashLine))
        p.drawLine(xt, lay.row_y - 4, xt, lay.after_y + AFTER_H + 2)
        # usage tick (provider-reported tokens at the last valid usage)
        tok = st.tokens
        if lay.unknown is not None:
            self._draw_unknown(p, lay)
        elif tok is not None and tok.last_usage_index is not None:
            ux = lay.x(_f(tok.usage_tokens))
            p.setPen(QPen(th.usage, 2))
            p.drawLine(ux, lay.row_y - 2, ux, lay.row_y + ROW_H + 4)
        # header text
        p.setPen(th.text)
        left, right = _header_texts(st, lay)
        p.drawText(
            QRect(x0, lay.top_text, w, 16),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(left, Qt.TextElideMode.ElideRight, max(0, w - fm.horizontalAdvance(right) - 16)),
        )
        p.setPen(th.threshold if st.should_compact else th.muted)
        p.drawText(
            QRect(x0, lay.top_text, w, 16), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, right
        )
        self._draw_legend(p, lay)
        self._draw_real(p, lay)
        if self.hasFocus():
            self._draw_cursor(p, lay)
        p.end()

    def _draw_unknown(self, p: QPainter, lay: BarLayout) -> None:
        """pi shows no context size: a hatched veil over the estimated 'now' row, labelled unknown."""
        th = current_theme()
        xa, xb = lay.x0, lay.x(lay.fill_total)
        if xb <= xa:
            return
        band = QRect(xa, lay.row_y + 1, xb - xa, ROW_H - 2)
        p.fillRect(band, QBrush(th.muted, Qt.BrushStyle.BDiagPattern))
        label = "unknown"
        fm = p.fontMetrics()
        tw = fm.horizontalAdvance(label) + 8
        # right after the estimated fill (where pi's figure would end), else at the fill's end
        box = QRect(xb + 3, lay.row_y + 2, tw, ROW_H - 4)
        if box.right() > lay.x0 + lay.w:
            box.moveRight(xb - 2)
        p.fillRect(box, th.base)
        p.setPen(QPen(th.muted, 1))
        p.drawRect(box.adjusted(0, 0, -1, -1))
        p.setPen(th.text)
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    def _draw_real(self, p: QPainter, lay: BarLayout) -> None:
        """The path's real token count and the decisions it changes, right of the legend."""
        view = self.real
        text = view.header() if view is not None else ""
        if view is None or not text:
            return
        notes = view.notes()
        th = current_theme()
        left = (self._legend_boxes[-1][2] if self._legend_boxes else lay.x0) + 8
        width = max(0, lay.x0 + lay.w - left)
        text = real_legend_text(view, width, p.fontMetrics().horizontalAdvance)
        p.setPen(th.threshold if notes else th.muted)
        p.drawText(
            QRect(left, lay.legend_y, width, LEGEND_H),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            p.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, width),
        )

    def _draw_legend(self, p: QPainter, lay: BarLayout) -> None:
        """One swatch per mark, each with a hover text (describe_at)."""
        th = current_theme()
        fm = p.fontMetrics()
        x = lay.x0
        y = lay.legend_y
        boxes: list[tuple[str, int, int]] = []
        tok = self.state.tokens if self.state is not None else None
        counted = tok is not None and tok.last_usage_index is not None
        for name in _LEGEND:
            if name == "unknown" and lay.unknown is None:
                continue
            if name in ("usage_fill", "usage") and (lay.unknown is not None or not counted):
                # no usage is drawn: pi has no figure, no answer reported one, or pi 1.6.0 does not
                # count it (rule 22); a "usage" swatch explained nothing on the bar
                continue
            label = _LEGEND_LABEL[name]
            start = x
            sw = QRect(x, y + 3, 10, LEGEND_H - 6)
            if name in ("usage_fill", "estimated"):
                # stripes of three kinds' colours: a segment has its entry's colour (the swatch was
                # all assistant green, and an audit took green for "usage")
                style = Qt.BrushStyle.SolidPattern if name == "usage_fill" else Qt.BrushStyle.Dense3Pattern
                for k, kind in enumerate(("user", "assistant", "toolResult")):
                    stripe = QRect(sw.x() + k * 4, sw.y(), 4 if k < 2 else sw.width() - 8, sw.height())
                    p.fillRect(stripe, QBrush(th.role(kind), style))
            elif name == "reserve":
                p.fillRect(sw, th.reserve)
            elif name == "unknown":
                p.fillRect(sw, th.base)
                p.fillRect(sw, QBrush(th.muted, Qt.BrushStyle.BDiagPattern))
            elif name == "keep":
                p.setPen(QPen(th.role("user"), 1))
                p.drawLine(x, y + LEGEND_H // 2, x + 10, y + LEGEND_H // 2)
            else:
                colour = {"usage": th.usage, "threshold": th.threshold, "cut": th.cut}[name]
                pen = QPen(colour, 2 if name != "threshold" else 1)
                if name == "threshold":
                    pen.setStyle(Qt.PenStyle.DashLine)
                p.setPen(pen)
                p.drawLine(x + 5, y + 1, x + 5, y + LEGEND_H - 1)
            x += 14
            p.setPen(th.muted)
            p.drawText(QRect(x, y, 400, LEGEND_H), Qt.AlignmentFlag.AlignVCenter, label)
            x += fm.horizontalAdvance(label) + 12
            boxes.append((name, start, x))
        self._legend_boxes = boxes

    def _draw_spans(self, p: QPainter, spans: list[Span], y: int, h: int, *, reuse: bool = False) -> None:
        """Fill the spans: one drawRects call per colour and style (a row has ≤ width spans).
        ``reuse``: the rectangles of the last call with these very spans are drawn again."""
        th = current_theme()
        cached = self._rects_cache
        if reuse and cached is not None and cached[0] is spans and cached[1] == y:
            groups, separators = cached[2], cached[3]  # the 'now' row of the same path and size
        else:
            groups, separators = _group_rects(spans, y, h)
            if reuse:
                self._rects_cache = (spans, y, groups, separators)
        p.save()
        p.setPen(Qt.PenStyle.NoPen)
        patterns = (Qt.BrushStyle.SolidPattern, Qt.BrushStyle.Dense3Pattern, Qt.BrushStyle.Dense4Pattern)
        for (kind, style), rects in groups.items():
            p.setBrush(QBrush(th.role(kind), patterns[style]))
            p.drawRects(rects)
        if separators:
            p.setBrush(th.base)
            p.drawRects(separators)
        p.restore()
        sel = next((s for s in spans if s.key == self.selected), None) if self.selected >= 0 else None
        if sel is not None:
            p.setPen(QPen(th.text, 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRect(sel.x, y, max(2, sel.w), h))


def _group_rects(spans: list[Span], y: int, h: int) -> tuple[dict[tuple[str, int], list[QRect]], list[QRect]]:
    """Rectangles per (kind, style: 0 solid, 1 estimated, 2 projected summary) and the separators."""
    groups: dict[tuple[str, int], list[QRect]] = {}
    separators: list[QRect] = []
    for s in spans:
        if s.w <= 0:
            continue
        style = 2 if s.key < 0 else 1 if s.estimated else 0
        groups.setdefault((s.kind, style), []).append(QRect(s.x, y + 1, s.w, h - 2))
        if s.w >= 4:  # a separator at the end of a segment wide enough to show one
            separators.append(QRect(s.x + s.w - 1, y + 1, 1, h - 2))
    return groups, separators


_LEGEND_LABEL = {
    "usage_fill": "usage",
    "estimated": "estimated",
    "usage": "usage tick",
    "threshold": "threshold",
    "reserve": "reserve",
    "keep": "keep",
    "cut": "cut",
    "unknown": "unknown",
}
_LEGEND = {
    "usage_fill": "Solid segments: the provider-reported usage of the last assistant message with valid "
    "usage, shared among the messages it covers (pi counts this). Each segment has its entry's colour, "
    "as the tree's icons: user, assistant, tool result, bash, system, summaries",
    "estimated": "Hatched segments: messages after the last valid usage, counted by pi's chars/4 estimate "
    "(coloured by kind, as the solid ones)",
    "usage": "Usage tick: where the provider-reported usage ends",
    "threshold": "Threshold: context window − reserveTokens; pi compacts when the context exceeds it",
    "reserve": (
        "Reserve zone: reserveTokens at the end of the window; pi compacts when the context is over "
        "window − reserve (pi 0.80.2 also caps the summary's answer at 80 % of it, 50 % for a turn prefix)"
    ),
    "keep": (
        "Keep zone: the newest messages that reach keepRecentTokens, walking back; pi cuts at the first "
        "valid cut point at or after where they reach it, so it keeps about this much, often less"
    ),
    "cut": (
        "Cut: the first kept entry; the messages left of it are summarised (pi 1.6.0 leaves out system "
        "messages and entries hidden by context edits)"
    ),
    "unknown": "pi shows the context size as unknown (§4.7)",
}


def _header_texts(st: PlanState, lay: BarLayout) -> tuple[str, str]:
    """The bar's two header lines: the context now (against the window), and threshold, keep and after."""
    tok = st.tokens
    usage = ""
    if tok is not None and tok.last_usage_index is not None and lay.unknown is None:
        usage = f"  (usage {_fmt(_f(tok.usage_tokens))} + est. {_fmt(_f(tok.trailing_tokens))})"
    left = (
        f"unknown / {_fmt(st.window)} tokens (pi {st.profile.version} has no figure since the compaction)"
        f"  ·  chars/4 estimate {_fmt(lay.est_now)}"
        if lay.unknown is not None
        else f"{_fmt(st.context_tokens)} / {_fmt(st.window)} tokens{usage}  ·  chars/4 estimate "
        f"{_fmt(lay.est_now)}"
    )
    threshold = f"threshold {_fmt(st.threshold)}" + ("" if st.params.auto_compaction else " (auto off)")
    stand_in = " (with a stand-in summary)" if st.params.summary_tokens is None else ""
    right = (
        f"{threshold}  ·  keep {_fmt(st.keep)}  ·  after ≈ {_fmt(lay.after_total)}{stand_in}"
        if lay.after
        else f"{threshold}  ·  keep {_fmt(st.keep)}  ·  nothing to compact"
    )
    return left, right


def _f(v: object) -> float:
    return float(v) if isinstance(v, int | float) else 0.0
