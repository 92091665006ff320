"""The token bar: the active path's context against the model's window (custom painted).

Geometry lives in :mod:`bar_geometry`; this widget only draws and hit-tests.
Row 1 ("now") shows one segment per context message coloured by role, row 2
("after") the projected context after the planned compaction. Markers: the
compaction threshold (window − reserve), the reserve zone, the keep-recent zone,
the provider-usage mark, the chosen cut and the turn prefix of a split turn.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from .bar_geometry import Span, bar_spans, span_at, token_x
from .document import PlanState
from .theme import current_theme

__all__ = ["BarLayout", "TokenBar"]

LABEL_W = 46
PAD = 8
ROW_H = 18
AFTER_H = 12


class BarLayout:
    """Where everything goes for a given state and widget size (pure, testable)."""

    def __init__(self, state: PlanState | None, width: int) -> None:
        self.x0 = LABEL_W + PAD
        self.w = max(10, width - self.x0 - PAD)
        self.top_text = 4
        self.row_y = 24
        self.after_y = self.row_y + ROW_H + 10
        self.state = state
        self.now: list[Span] = []
        self.after: list[Span] = []
        self.scale = 1.0
        if state is None:
            return
        est_now = sum(t for _, _, t in state.item_tokens)
        est_after = sum(t for _, _, t in state.after_tokens)
        self.scale = float(max(state.window, est_now, est_after, state.context_tokens, 1))
        self.now = bar_spans(state.item_tokens, self.scale, self.w, self.x0)
        self.after = bar_spans(state.after_tokens, self.scale, self.w, self.x0)
        self.now_xs = [s.x for s in self.now]
        self.after_xs = [s.x for s in self.after]
        self.est_now = est_now

    def x(self, tokens: float) -> int:
        return token_x(tokens, self.scale, self.w, self.x0)

    def hit(self, pos: QPoint) -> Span | None:
        if self.row_y <= pos.y() < self.row_y + ROW_H:
            return span_at(self.now, pos.x(), self.now_xs)
        if self.after_y <= pos.y() < self.after_y + AFTER_H:
            return span_at(self.after, pos.x(), self.after_xs)
        return None


def _fmt(n: float) -> str:
    return f"{n:,.0f}"


class TokenBar(QWidget):
    entry_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state: PlanState | None = None
        self.selected = -1
        self.layout_ = BarLayout(None, self.width())
        self.setMouseTracking(True)
        self.setMinimumHeight(self.sizeHint().height())
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Token bar")

    def sizeHint(self) -> QSize:
        return QSize(600, 24 + ROW_H + 10 + AFTER_H + 22)

    def set_state(self, state: PlanState | None) -> None:
        self.state = state
        self._relayout()

    def set_selected(self, record: int) -> None:
        self.selected = record
        self.update()

    def _relayout(self) -> None:
        self.layout_ = BarLayout(self.state, self.width())
        self.update()

    def resizeEvent(self, e) -> None:
        self._relayout()
        super().resizeEvent(e)

    # ---------------------------------------------------------------- interaction
    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        sp = self.layout_.hit(e.position().toPoint())
        if sp is None:
            QToolTip.hideText()
            return
        QToolTip.showText(e.globalPosition().toPoint(), self.describe(sp), self)

    def describe(self, sp: Span) -> str:
        st = self.state
        if sp.key < 0:
            return f"Compaction summary (projected): ~{_fmt(sp.tokens)} tokens"
        name = {
            "toolResult": "tool result",
            "bashExecution": "bash execution",
            "compactionSummary": "compaction summary",
            "branchSummary": "branch summary",
            "custom": "custom message",
        }.get(sp.kind, sp.kind)
        pos = st.path.index(sp.key) if st and sp.key in st.path else -1
        mark = st.marks.get(sp.key, "") if st else ""
        extra = {
            "cut": " · first kept entry (cut)",
            "turn_start": " · turn start",
            "prefix": " · split-turn prefix",
        }
        return (
            f"{name} · path #{pos} · {_fmt(sp.tokens)} tokens (chars/4)"
            f" · {_fmt(sp.start)}–{_fmt(sp.start + sp.tokens)}{extra.get(mark, '')}"
        )

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            sp = self.layout_.hit(e.position().toPoint())
            if sp is not None and sp.key >= 0:
                self.entry_clicked.emit(sp.key)

    # ---------------------------------------------------------------- painting
    def paintEvent(self, _e: QPaintEvent) -> None:
        th = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().window())
        lay = self.layout_
        st = self.state
        f = QFont(self.font())
        f.setPointSizeF(max(7.5, f.pointSizeF() - 1))
        p.setFont(f)
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
        # segments
        self._draw_spans(p, lay.now, lay.row_y, ROW_H)
        self._draw_spans(p, lay.after, lay.after_y, AFTER_H)
        # prefix of a split turn + cut
        fk = st.first_kept_record
        sp_by_key = {s.key: s for s in lay.now}
        if st.cut is not None and st.cut.is_split_turn and st.cut.turn_start_index >= 0:
            prefix_keys = [k for k, m in st.marks.items() if m in ("prefix", "turn_start")]
            xs = [sp_by_key[k] for k in prefix_keys if k in sp_by_key]
            if xs:
                a = min(s.x for s in xs)
                b = max(s.x + s.w for s in xs)
                p.fillRect(QRect(a, lay.row_y - 3, max(2, b - a), 3), th.turn_start)
        if fk is not None:
            cx = sp_by_key[fk].x if fk in sp_by_key else None
            if cx is None:  # cut on a non-message entry: first kept segment after it
                later = (
                    [s for s in lay.now if st.path.index(s.key) > st.cut.first_kept_index] if st.cut else []
                )
                cx = later[0].x if later else None
            if cx is not None:
                p.setPen(QPen(th.cut, 2))
                p.drawLine(cx, lay.row_y - 5, cx, lay.row_y + ROW_H + 4)
        # keep-recent zone: the newest keepRecentTokens of the estimate
        if lay.est_now > 0:
            ka = lay.x(max(0.0, lay.est_now - st.keep))
            kb = lay.x(lay.est_now)
            p.setPen(QPen(th.role("user"), 1))
            y = lay.row_y + ROW_H + 3
            p.drawLine(ka, y, kb, y)
            p.drawLine(ka, y - 2, ka, y + 2)
            p.drawLine(kb, y - 2, kb, y + 2)
        # threshold line
        p.setPen(QPen(th.threshold, 1, Qt.PenStyle.DashLine))
        p.drawLine(xt, lay.row_y - 4, xt, lay.after_y + AFTER_H + 2)
        # usage mark (provider-reported tokens at the last valid usage)
        tok = st.tokens
        if tok is not None and tok.last_usage_index is not None:
            ux = lay.x(float(tok.usage_tokens) if isinstance(tok.usage_tokens, int | float) else 0)
            p.setPen(QPen(th.text, 2))
            p.drawLine(ux, lay.row_y + ROW_H - 5, ux, lay.row_y + ROW_H + 4)
        # header text
        p.setPen(th.text)
        usage = ""
        if tok is not None and tok.last_usage_index is not None:
            usage = f"  (usage {_fmt(_f(tok.usage_tokens))} + est. {_fmt(_f(tok.trailing_tokens))})"
        left = f"{_fmt(st.context_tokens)} / {_fmt(st.window)} tokens{usage}  ·  chars/4 estimate {_fmt(lay.est_now)}"
        after_t = sum(s.tokens for s in lay.after)
        right = (
            f"threshold {_fmt(st.threshold)}  ·  keep {_fmt(st.keep)}  ·  after ≈ {_fmt(after_t)}"
            if lay.after
            else f"threshold {_fmt(st.threshold)}  ·  keep {_fmt(st.keep)}  ·  nothing to compact"
        )
        p.drawText(
            QRect(x0, lay.top_text, w, 16),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(left, Qt.TextElideMode.ElideRight, max(0, w - fm.horizontalAdvance(right) - 16)),
        )
        p.setPen(th.threshold if st.should_compact else th.muted)
        p.drawText(
            QRect(x0, lay.top_text, w, 16), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, right
        )
        p.end()

    def _draw_spans(self, p: QPainter, spans: list[Span], y: int, h: int) -> None:
        th = current_theme()
        sel = None
        last_kind = None
        color = QColor()
        for s in spans:
            if s.w <= 0:
                continue
            if s.kind != last_kind:
                color = th.role(s.kind)
                last_kind = s.kind
            if s.key < 0:
                p.fillRect(QRect(s.x, y + 1, s.w, h - 2), QBrush(color, Qt.BrushStyle.Dense4Pattern))
            else:
                p.fillRect(QRect(s.x, y + 1, s.w, h - 2), color)
            if s.w >= 4:
                p.fillRect(QRect(s.x + s.w - 1, y + 1, 1, h - 2), th.base)
            if s.key == self.selected and s.key >= 0:
                sel = s
        if sel is not None:
            p.setPen(QPen(th.text, 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRect(sel.x, y, max(2, sel.w), h))


def _f(v: object) -> float:
    return float(v) if isinstance(v, int | float) else 0.0
