"""The context timeline in the window: a chart under the token bar (View → Context timeline).

Everything it shows is core's (core/timeline.py): the history is built off the GUI thread once per
loaded path and profile (one planner per compaction segment, kept for the next build, so a live
reload only re-plans the last segment); a what-if slider or a new summary only calls
``Timeline.with_plan``. Painting draws a layout made once per size and timeline
(core/timeline_layout.py: one column per pixel), so a 100k-entry path paints in a few ms.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from PySide6.QtCore import QLineF, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSizePolicy, QToolTip, QVBoxLayout, QWidget

from session_studio.core.explain import AUTO_COMPACTION_OFF
from session_studio.core.plan import PathPlanner, PlanState
from session_studio.core.session import Session
from session_studio.core.timeline import Columns, Timeline, branch_leaf, build_timeline
from session_studio.core.timeline_layout import (
    MARKER_HALF_WIDTH,
    MARKER_HEIGHT,
    Hit,
    PlotArea,
    TimelineLayout,
    column_count,
    drop_text,
    hit_position,
    layout_timeline,
    marker_text,
    planned_text,
    point_text,
    stepped_hit,
    with_plan_of,
)

from .announce import announce
from .key_cursor import KeyCursorView
from .tasks import Operation, TaskRunner
from .theme import current_theme, role_color

__all__ = ["SegmentPlanners", "TimelineChart", "TimelinePanel"]

_MARGIN_LEFT, _MARGIN_RIGHT, _MARGIN_TOP, _MARGIN_BOTTOM = 46.0, 92.0, 8.0, 20.0

#: (key, modifiers) → the cursor's step (core.timeline_layout.STEPS): Ctrl+Left/Right go from
#: compaction to compaction (the planned one last), Ctrl+Shift+Left/Right from marker to marker
_CTRL = Qt.KeyboardModifier.ControlModifier
_CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
_NONE = Qt.KeyboardModifier.NoModifier
_STEPS = {
    (Qt.Key.Key_Left, _NONE): "previous",
    (Qt.Key.Key_Right, _NONE): "next",
    (Qt.Key.Key_PageUp, _NONE): "page_back",
    (Qt.Key.Key_PageDown, _NONE): "page_forward",
    (Qt.Key.Key_Home, _NONE): "first",
    (Qt.Key.Key_End, _NONE): "last",
    (Qt.Key.Key_Left, _CTRL): "previous_compaction",
    (Qt.Key.Key_Right, _CTRL): "next_compaction",
    (Qt.Key.Key_Left, _CTRL_SHIFT): "previous_marker",
    (Qt.Key.Key_Right, _CTRL_SHIFT): "next_marker",
}


class SegmentPlanners:
    """The planners of a session's earlier compaction segments, kept between builds: the history
    before the last compaction does not change when pi appends, so a reload builds only the rest."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._planners: dict[tuple[int, str], PathPlanner] = {}

    def factory(self, planner: PathPlanner) -> Callable[[Session, int], PathPlanner]:
        if planner.session is not self._session:
            self._session = planner.session
            self._planners = {}
        planners = self._planners
        profile = planner.profile

        def make(session: Session, leaf: int) -> PathPlanner:
            key = (leaf, profile.version)
            found = planners.get(key)
            if found is None:
                found = planners[key] = PathPlanner(session, leaf, profile=profile)
            return found

        return make


class _Drawables:
    """The layout as Qt objects, made once per layout: a paint is a handful of draw calls."""

    def __init__(self, lay: TimelineLayout) -> None:
        # one polyline per run (QPainterPath strokes are several times slower on long lines)
        self.runs = [
            (run.estimate, QPolygonF([QPointF(x, y) for x, y in zip(run.xs, run.ys, strict=True)]))
            for run in lay.runs
            if len(run.xs) >= 2
        ]
        self.spans = [QLineF(x, y_low, x, y_high) for x, y_low, y_high in lay.spans]
        self.branch_markers = QPainterPath()
        self.model_markers = QPainterPath()
        b, h, w = lay.area.bottom, MARKER_HEIGHT, MARKER_HALF_WIDTH
        for m, x in lay.markers:
            path = self.model_markers if m.kind == "model_change" else self.branch_markers
            path.addPolygon(
                QPolygonF([QPointF(x, b - h), QPointF(x - w, b), QPointF(x + w, b), QPointF(x, b - h)])
            )


class TimelineChart(KeyCursorView):
    """The chart: context line, window/threshold/reserve, drops, markers, planned drop."""

    entry_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline: Timeline | None = None
        self.session: Session | None = None
        self.selected = -1
        self._layout: TimelineLayout | None = None
        self._drawables: _Drawables | None = None
        #: the downsampled columns and what they were made from (history arrays, width)
        self._columns: tuple[tuple[int, int, int], Columns] | None = None
        #: the keyboard's place on the chart (a point, a drop, a marker or the planned drop); None:
        #: the next key starts from the selected entry
        self.key_cursor: Hit | None = None
        self.setMouseTracking(True)
        self.setMinimumHeight(90)  # the plot and its axis, in a short window too
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName("Context timeline")
        self.building = False

    def sizeHint(self) -> QSize:
        return QSize(800, 190)

    def set_building(self, building: bool) -> None:
        """A timeline is being built for what the chart will show (its text says so meanwhile)."""
        if building != self.building:
            self.building = building
            self.update()

    def set_timeline(self, timeline: Timeline | None, session: Session | None) -> None:
        self.building = False
        if timeline is None or self.timeline is None or timeline.positions is not self.timeline.positions:
            self.key_cursor = None  # another history: its indexes mean other entries
        elif self.key_cursor is not None and self.key_cursor.kind == "planned" and timeline.planned is None:
            self.key_cursor = None
        self.timeline = timeline
        self.session = session
        # a new plan over the same history keeps the drawn history (only lines and planned drop move)
        same = with_plan_of(self._layout, timeline) if self._layout and timeline else None
        self._layout = same
        self.update()

    def set_selected(self, record: int) -> None:
        self.selected = record
        if not self.hasFocus():
            self.key_cursor = None  # the next key starts from the selected entry
        elif self.key_cursor is None or self.key_cursor.record != record:  # chosen elsewhere (Alt+Down)
            self.key_cursor = self._hit_of(record) or self.key_cursor
        self.update()

    def plot_area(self) -> PlotArea:
        return PlotArea(
            _MARGIN_LEFT,
            _MARGIN_TOP,
            max(self.width() - _MARGIN_LEFT - _MARGIN_RIGHT, 10.0),
            max(self.height() - _MARGIN_TOP - _MARGIN_BOTTOM, 10.0),
        )

    def current_layout(self) -> TimelineLayout | None:
        """The layout for the current size and timeline (made once, reused by every paint and hover;
        a new plan over the same history and width reuses the downsampled columns)."""
        tl = self.timeline
        if tl is None:
            return None
        area = self.plot_area()
        if self._layout is None or self._layout.area != area:
            key = (id(tl.positions), id(tl.tokens), column_count(area))
            cols = self._columns[1] if self._columns is not None and self._columns[0] == key else None
            self._layout = layout_timeline(tl, area, cols, QFontMetricsF(self.label_font()).horizontalAdvance)
            self._columns = (key, self._layout.columns)
            self._drawables = _Drawables(self._layout)
        return self._layout

    def label_font(self) -> QFont:
        """The chart's text: a little smaller than the widget's (the layout measures labels in it)."""
        font = self.font()
        font.setPointSizeF(max(font.pointSizeF() * 0.85, 7.0))
        return font

    def resizeEvent(self, e: QResizeEvent) -> None:
        self._layout = None
        super().resizeEvent(e)

    # ---------------------------------------------------------------- interaction
    def hit_at(self, x: float, y: float) -> Hit | None:
        lay = self.current_layout()
        return lay.hit(x, y) if lay is not None else None

    def describe(self, hit: Hit) -> str:
        tl = self.timeline
        if tl is None:
            return ""
        if hit.kind == "drop":
            return drop_text(tl.drops[hit.index])
        if hit.kind == "marker":
            return marker_text(tl.markers[hit.index])
        if hit.kind == "planned":
            return planned_text(tl)
        rid = self.session.records[tl.records[hit.index]].id if self.session is not None else None
        return point_text(tl, hit.index, rid if isinstance(rid, str) else "(no id)")

    def describe_at(self, x: float, y: float) -> str:
        hit = self.hit_at(x, y)
        return self.describe(hit) if hit is not None else ""

    def mouseMoveEvent(self, e: QMouseEvent) -> None:
        p = e.position()
        text = self.describe_at(p.x(), p.y())
        if text:
            QToolTip.showText(e.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, e: QMouseEvent) -> None:
        if e.button() != Qt.MouseButton.LeftButton:
            return
        p = e.position()
        hit = self.hit_at(p.x(), p.y())
        if hit is not None:  # the keyboard goes on from what was clicked
            self.key_cursor = hit
            self.update()
        if hit is not None and hit.record is not None and hit.record >= 0:
            self.entry_clicked.emit(hit.record)

    # ---------------------------------------------------------------- keyboard
    def _hit_of(self, record: int) -> Hit | None:
        """The chart's item for entry ``record``: its compaction's drop, its marker or its point
        (what the selection line marks and where the keyboard starts)."""
        tl = self.timeline
        if tl is None or record < 0:
            return None
        for i, d in enumerate(tl.drops):
            if d.record == record:
                return Hit("drop", i, record)
        for i, m in enumerate(tl.markers):
            if m.record == record:
                return Hit("marker", i, record)
        if record in tl.records:
            return Hit("point", tl.records.index(record), record)
        return None

    def cursor_text(self) -> str:
        return (
            self.describe(self.key_cursor)
            if self.key_cursor is not None and self.timeline is not None
            else ""
        )

    def keyPressEvent(self, e: QKeyEvent) -> None:
        tl = self.timeline
        mods = e.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        step = _STEPS.get((Qt.Key(e.key()), mods))
        activate = e.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and mods == _NONE
        if tl is None or not (activate or step is not None):
            super().keyPressEvent(e)
            return
        e.accept()
        if self.key_cursor is None:
            self.key_cursor = self._hit_of(self.selected)
        if activate:
            hit = self.key_cursor or stepped_hit(tl, None, "last")
            self.key_cursor = hit
            if hit is not None and hit.record is not None and hit.record >= 0:
                self.entry_clicked.emit(hit.record)
            return
        assert step is not None
        self.key_cursor = stepped_hit(tl, self.key_cursor, step)
        self.show_cursor()

    def show_cursor(self, say: bool = True) -> None:
        """Draw the cursor, show its item's text where the hover text would be, and ``say`` it to
        a screen reader."""
        self.update()
        lay, text = self.current_layout(), self.cursor_text()
        if lay is None or self.key_cursor is None or not text:
            return
        x = lay.x(hit_position(lay.timeline, self.key_cursor))
        QToolTip.showText(self.mapToGlobal(QPointF(x, lay.area.bottom).toPoint()), text, self)
        if say:
            announce(self, text)

    def keyReleaseEvent(self, e: QKeyEvent) -> None:
        # Qt hides a tooltip at every key press and release (see ui.token_bar)
        super().keyReleaseEvent(e)
        stepping = any(key == e.key() for key, _ in _STEPS) or e.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
        if not e.isAutoRepeat() and stepping:
            self.show_cursor(say=False)

    def place_cursor(self) -> None:
        if self.key_cursor is None and self.timeline is not None:
            self.key_cursor = self._hit_of(self.selected) or stepped_hit(self.timeline, None, "last")

    def _paint_cursor(self, p: QPainter, lay: TimelineLayout) -> None:
        """The keyboard cursor: a line in the focus colour through its place, and the plot framed."""
        th = current_theme()
        a = lay.area
        p.setPen(QPen(th.focus, 2))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(a.left, a.top, a.width, a.height))
        if self.key_cursor is None:
            return
        x = lay.x(hit_position(lay.timeline, self.key_cursor))
        p.drawLine(QPointF(x, a.top), QPointF(x, a.bottom))
        if self.key_cursor.kind == "point":
            tokens = lay.timeline.tokens[self.key_cursor.index]
            p.drawEllipse(QPointF(x, lay.y(tokens)), 4.0, 4.0)

    # ---------------------------------------------------------------- painting
    def paintEvent(self, _e: QPaintEvent) -> None:
        th = current_theme()
        p = QPainter(self)
        p.fillRect(self.rect(), th.base)
        lay = self.current_layout()
        if lay is None:
            p.setPen(th.muted)
            # the chart said "No timeline" for the ~25 s a 1 GB session's timeline takes to build
            text = "Building the timeline…" if self.building else "No timeline"
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, text)
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        a = lay.area
        p.setFont(self.label_font())
        p.setPen(QPen(th.grid, 1))
        for y, _label in lay.y_ticks:
            p.drawLine(QPointF(a.left, y), QPointF(a.right, y))
        p.setPen(th.muted)
        for y, label in lay.y_ticks:
            p.drawText(
                QRectF(0, y - 8, a.left - 4, 16),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                label,
            )
        for x, label in lay.x_ticks:
            p.drawText(QRectF(x - 40, a.bottom + 2, 80, 16), Qt.AlignmentFlag.AlignHCenter, label)
        self._paint_limits(p, lay)
        self._paint_selection(p, lay)
        drawables = self._drawables
        assert drawables is not None
        usage = role_color("assistant")
        spans = QColor(usage)
        spans.setAlpha(90)
        p.setPen(QPen(spans, 1))
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # vertical pixel columns
        p.drawLines(drawables.spans)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        solid = QPen(usage, 1.6)
        dashed = QPen(role_color("toolResult"), 1.6, Qt.PenStyle.DashLine)
        for estimate, polyline in drawables.runs:
            p.setPen(dashed if estimate else solid)
            p.drawPolyline(polyline)
        self._paint_drops(p, lay)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # hundreds of 8-pixel triangles
        p.fillPath(drawables.branch_markers, role_color("branchSummary"))
        p.fillPath(drawables.model_markers, role_color("bashExecution"))
        p.setPen(QPen(th.grid, 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(a.left, a.top, a.width, a.height))
        if self.hasFocus():
            self._paint_cursor(p, lay)
        p.end()

    def _paint_limits(self, p: QPainter, lay: TimelineLayout) -> None:
        ys = lay.limit_y()
        tl = lay.timeline
        if ys is None or tl is None:
            return
        th = current_theme()
        a = lay.area
        y_window, y_threshold = ys
        p.fillRect(QRectF(a.left, y_window, a.width, max(y_threshold - y_window, 0.0)), th.reserve)
        p.setPen(QPen(th.text, 1))
        p.drawLine(QPointF(a.left, y_window), QPointF(a.right, y_window))
        p.setPen(QPen(th.threshold, 1, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(a.left, y_threshold), QPointF(a.right, y_threshold))
        label_rect = QRectF(a.right + 4, -7, _MARGIN_RIGHT - 6, 14)  # around y = 0: moved to a label's middle
        for which, y_label, text in lay.limit_labels() or ():
            p.setPen(th.threshold if which == "threshold" else th.muted)
            p.drawText(label_rect.translated(0, y_label), text)

    def _paint_selection(self, p: QPainter, lay: TimelineLayout) -> None:
        hit = self._hit_of(self.selected) if self.session is not None else None
        if hit is None:
            return
        x = lay.x(hit_position(lay.timeline, hit))
        p.setPen(QPen(current_theme().highlight.darker(130), 1, Qt.PenStyle.DotLine))
        p.drawLine(QPointF(x, lay.area.top), QPointF(x, lay.area.bottom))

    def _paint_drops(self, p: QPainter, lay: TimelineLayout) -> None:
        color = role_color("compaction")
        p.setBrush(color)
        p.setPen(QPen(color, 2))
        for (d, x, y_before, y_after), label in zip(lay.drops, lay.drop_labels, strict=True):
            top = y_after if math.isnan(d.tokens_before) else y_before
            p.drawLine(QPointF(x, top), QPointF(x, y_after))
            p.drawEllipse(QPointF(x, y_after), 2.5, 2.5)
            if label is not None:  # placed by the layout: clear of the markers and of each other
                p.drawText(QPointF(label.x, label.baseline), label.text)
        if lay.planned is not None:
            x, y_before, y_after = lay.planned
            p.setPen(QPen(color, 2, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(x, y_before), QPointF(x, y_after))
            if lay.planned_label is not None:
                p.drawText(QPointF(lay.planned_label.x, lay.planned_label.baseline), "planned")
        p.setBrush(Qt.BrushStyle.NoBrush)


class _Legend(QWidget):
    """The chart's key, painted with the chart's own pens (theme colours)."""

    _ITEMS = (
        ("usage", "provider usage"),
        ("estimate", "chars/4 estimate"),
        ("drop", "compaction (summary size)"),
        ("planned", "planned"),
        ("branch", "branch summary"),
        ("model", "model change"),
    )

    #: the height of a row of the key
    _ROW = 16

    def _item_width(self, label: str) -> int:
        """An item's width: its symbol (22 px with the gap to the text) and its text."""
        return 22 + self.fontMetrics().horizontalAdvance(label)

    def _places(self, width: int) -> list[tuple[float, int]]:
        """Where each item goes: its x and its row. Items that do not fit the width start a new row
        (at a narrow window the last ones were cut off, "planned" in the middle of its word)."""
        x, row = 4.0, 0
        places = []
        for _key, label in self._ITEMS:
            w = self._item_width(label)
            if x > 4.0 and x + w > width:
                x, row = 4.0, row + 1
            places.append((x, row))
            x += w + 14
        return places

    def sizeHint(self) -> QSize:  # all items in one row
        last = self._item_width(self._ITEMS[-1][1])
        return QSize(math.ceil(self._places(1 << 20)[-1][0]) + last, self._ROW)

    def minimumSizeHint(self) -> QSize:  # the widest item alone in its row
        return QSize(4 + max(self._item_width(label) for _k, label in self._ITEMS), self._ROW)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return (1 + self._places(width)[-1][1]) * self._ROW

    def paintEvent(self, _e: QPaintEvent) -> None:
        th = current_theme()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        fm = p.fontMetrics()
        for (key, label), (x, row) in zip(self._ITEMS, self._places(self.width()), strict=True):
            y = row * self._ROW + self._ROW / 2
            path = QPainterPath()
            if key in ("usage", "estimate", "planned"):
                color = role_color(
                    "assistant" if key == "usage" else "toolResult" if key == "estimate" else "compaction"
                )
                style = Qt.PenStyle.SolidLine if key == "usage" else Qt.PenStyle.DashLine
                p.setPen(QPen(color, 1.6, style))
                if key == "planned":
                    p.drawLine(QPointF(x + 8, y - 6), QPointF(x + 8, y + 6))
                else:
                    p.drawLine(QPointF(x, y), QPointF(x + 18, y))
            elif key == "drop":
                p.setPen(QPen(role_color("compaction"), 2))
                p.drawLine(QPointF(x + 8, y - 6), QPointF(x + 8, y + 6))
            else:
                color = role_color("branchSummary" if key == "branch" else "bashExecution")
                path.addPolygon(
                    QPolygonF([QPointF(x + 8, y - 5), QPointF(x + 4, y + 4), QPointF(x + 12, y + 4)])
                )
                p.fillPath(path, color)
            p.setPen(th.muted)
            p.drawText(QPointF(x + 22, y + fm.ascent() / 2 - 1), label)
        p.end()


class TimelinePanel(QWidget):
    """The chart with its key and a status line; follows the document's plan."""

    def __init__(
        self, runner: TaskRunner, planner_of: Callable[[], PathPlanner | None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.planner_of = planner_of
        self.chart = TimelineChart()
        self.status = QLabel()
        self.status.setProperty("muted", True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)  # beside the key: wrapped, not drawn over it at a narrow window
        self.segments = SegmentPlanners()
        #: the planner the shown history was built from, and the plan it shows
        self.built_for: PathPlanner | None = None
        #: (the document's planner, the selected entry whose branch is shown or None) of the history
        self.built_key: tuple[PathPlanner, int | None] | None = None
        self.selected = -1
        self.history: Timeline | None = None
        self.state: PlanState | None = None
        self._op: Operation | None = None
        top = QHBoxLayout()
        top.setContentsMargins(6, 2, 6, 0)
        # the key wraps into the width the counts leave it; the counts keep their line (they were
        # squeezed into three against the check box): see where the built timeline sets them
        top.addWidget(_Legend(), 1)
        top.addWidget(self.status)
        self.status.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.branch_box = QCheckBox("Selected branch")
        self.branch_box.setToolTip(
            "Show the branch of the entry selected in the tree (down to its newest leaf) instead of the "
            "active path"
        )
        self.branch_box.toggled.connect(lambda _on: self.follow_plan(self.state))
        top.addSpacing(12)
        top.addWidget(self.branch_box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 2)
        lay.setSpacing(0)
        lay.addLayout(top)
        lay.addWidget(self.chart, 1)

    def follow_plan(self, state: PlanState | None) -> None:
        """A new plan (parameters, profile, summary, reload): new lines, or a new history if the path
        or its planner changed. Nothing is built while the panel is hidden."""
        self.state = state
        if not self.isVisible():
            return
        active = self.planner_of() if state is not None else None
        if active is None or state is None:
            self._cancel()
            self.built_key = None
            self.built_for = self.history = None
            self.chart.set_timeline(None, None)
            self.status.clear()
            return
        key = (active, self._branch_of(active))
        if key == self.built_key and self.history is not None and self.built_for is not None:
            self.chart.set_timeline(self.history.with_plan(self._state_for(self.built_for)), active.session)
            return
        self._build(key, state)

    def set_selected(self, record: int) -> None:
        """The document's selection: marked on the chart; with "Selected branch" on, an entry off the
        shown path switches the chart to its branch."""
        self.selected = record
        self.chart.set_selected(record)
        if self.branch_box.isChecked():
            self.follow_plan(self.state)

    def _branch_of(self, active: PathPlanner) -> int | None:
        """The selected entry when the chart shows its branch (None: the active path). An entry on the
        path shown already keeps it (a click on the chart never switches the path)."""
        if not self.branch_box.isChecked() or self.selected < 0:
            return None
        shown = self.built_for
        key = self.built_key
        if shown is not None and key is not None and key[0] is active and self.selected in shown.positions:
            return key[1]
        return None if self.selected in active.positions else self.selected

    def _state_for(self, planner: PathPlanner) -> PlanState | None:
        """The plan of the shown path: the document's, or the same settings on the selected branch
        (without the manual cut: it is a position on the active path)."""
        st = self.state
        if st is None or planner is self.planner_of():
            return st
        return planner.plan(dataclasses.replace(st.params, manual_cut=None), window_known=st.window_known)

    def _cancel(self) -> None:
        if self._op is not None:
            self._op.cancel()
            self._op = None
            self.chart.set_building(False)

    def _build(self, key: tuple[PathPlanner, int | None], state: PlanState) -> None:
        self._cancel()
        self.built_key = key
        active, selected = key
        make = self.segments.factory(active)
        self.status.setText("building the timeline…")
        self.chart.set_building(True)
        params = dataclasses.replace(state.params, manual_cut=None)

        def work() -> tuple[PathPlanner, Timeline]:
            if selected is None:
                return active, build_timeline(active, state, segment_planner=make)
            leaf = branch_leaf(active.session, selected)
            planner = PathPlanner(active.session, leaf, profile=active.profile)
            st = planner.plan(params, window_known=state.window_known)
            return planner, build_timeline(planner, st, segment_planner=make)

        def done(result: tuple[PathPlanner, Timeline]) -> None:
            if self.built_key is not key:
                return  # a newer path, branch or profile arrived meanwhile
            planner, tl = result
            self._op = None
            self.built_for = planner
            self.history = tl
            self.chart.set_timeline(tl.with_plan(self._state_for(planner)), planner.session)
            usage = tl.usage_count()
            leaf_id = planner.session.records[tl.leaf_record].id if tl.leaf_record is not None else None
            where = f"branch to {leaf_id} · " if planner is not active else ""
            # the threshold line is where pi would compact by itself: say when it does not
            auto = "" if state.params.auto_compaction else f" · {AUTO_COMPACTION_OFF}"
            # the counts wrap as whole parts (a narrow window broke "(21 by usage, 0 / estimated)");
            # how many points come from usage is the tooltip's: at 960 px the counts took 3 lines
            counts = (
                # one point per assistant answer: a "turn" starts at a user message (rule 29)
                f"{len(tl):,} answers",
                f"{len(tl.drops)} compaction{'s' if len(tl.drops) != 1 else ''}",
            )
            head = f"{where}pi {tl.profile} · " + " · ".join(part.replace(" ", "\u00a0") for part in counts)
            self.status.setText(head + auto + (f" · {tl.problems[0]}" if tl.problems else ""))
            # the counts on one line (a note after them may wrap); at most a third of the panel
            one_line = self.status.fontMetrics().horizontalAdvance(head) + 4
            self.status.setMinimumWidth(min(one_line, max(self.width() // 3, 200)))
            self.status.setToolTip(
                f"One point per assistant answer: {len(tl):,} answers, {usage:,} at the provider's usage "
                f"and {len(tl) - usage:,} estimated (chars/4 after the last usage, as pi estimates)"
            )

        def failed(exc: BaseException, _tb: str) -> None:
            if self.built_key is key:
                self._op = None
                self.chart.set_building(False)
                self.status.setText(f"no timeline: {exc}")

        self._op = self.runner.op(work).on_success(done).on_failure(failed)
        self._op.start()

    def showEvent(self, e: QShowEvent) -> None:
        super().showEvent(e)
        self.follow_plan(self.state)  # built on demand: a hidden panel costs nothing
