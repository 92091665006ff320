"""Where the timeline's parts go in a plot of a given size: one pure function for the window's
widget and the static SVG, so both draw the same lines, drops and markers (and a test can check
the geometry without Qt).

The points are reduced to one column per pixel (:func:`~session_studio.core.timeline.downsample`);
the context line is split into runs of one style (provider usage: solid; estimate: dashed; a column
with any estimate counts as estimate, so a rare estimate stays visible) and broken at each
compaction, whose drop is drawn as its own vertical line.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .timeline import Columns, Drop, Marker, Timeline, downsample

__all__ = [
    "LIMIT_LABEL_HEIGHT",
    "MARKER_HALF_WIDTH",
    "MARKER_HEIGHT",
    "DropLabel",
    "Hit",
    "PlotArea",
    "Run",
    "TimelineLayout",
    "column_count",
    "hit_position",
    "layout_timeline",
    "nice_ticks",
    "stepped_hit",
    "svg_label_width",
    "tokens_label",
    "with_plan_of",
    "y_scale_top",
]


def tokens_label(v: float) -> str:
    """120000 → "120k", 1500 → "1.5k", 950 → "950"."""
    if math.isnan(v):
        return "?"
    if abs(v) >= 1_000_000:
        return f"{v / 1_000_000:.3g}M"
    if abs(v) >= 1000:
        return f"{v / 1000:.3g}k"
    return f"{v:.0f}"


def nice_ticks(top: float, count: int = 5, least_step: float = 0.0) -> list[float]:
    """0 and round steps (1, 2 or 5 × 10^k, at least ``least_step``) up to ``top``: about ``count``
    labels on an axis."""
    if top <= 0 or math.isnan(top) or math.isinf(top):
        return [0.0]
    raw = top / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = max(next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw), least_step)
    return [k * step for k in range(int(top // step) + 1)]


@dataclass(frozen=True, slots=True)
class PlotArea:
    left: float
    top: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height


@dataclass(slots=True)
class Run:
    """A piece of the context line drawn in one style."""

    estimate: bool
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)


#: the marker triangles stand on the plot's foot: this tall, twice this wide
MARKER_HEIGHT = 8.0
MARKER_HALF_WIDTH = 4.0
#: the height a limit's label (window, threshold, reserve) right of the plot takes, its line's gap
LIMIT_LABEL_HEIGHT = 13.0
#: a drop's label starts this far right of its line, its baseline this far below the drop's dot
LABEL_DX, LABEL_DY = 4.0, 12.0
#: room under a label's baseline (descenders) and above it (the text), in pixels
LABEL_DESCENT, LABEL_ASCENT = 3.0, 9.0
#: labels closer than this on the x axis would run into each other: the later one is left out
LABEL_GAP = 6.0


def svg_label_width(text: str) -> float:
    """A drop label's width in the SVG (font-size 9: about 5.5 px a character)."""
    return len(text) * 5.5


@dataclass(frozen=True, slots=True)
class DropLabel:
    """Where a drop's label is written: "summary N" (a compaction) or "planned"."""

    x: float  # where the text starts
    baseline: float
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """What is under the pointer: a point (index into the timeline's columns), a drop, a marker or
    the planned drop."""

    kind: str  # "point" | "drop" | "marker" | "planned"
    index: int
    record: int | None


@dataclass
class TimelineLayout:
    timeline: Timeline
    area: PlotArea
    y_top: float  # tokens at the plot's top edge
    columns: Columns
    runs: list[Run]
    #: (x, y_low, y_high) where a pixel column's points spread over more than a pixel
    spans: list[tuple[float, float, float]]
    y_ticks: list[tuple[float, str]]
    x_ticks: list[tuple[float, str]]
    drops: list[tuple[Drop, float, float, float]]  # drop, x, y before, y after
    markers: list[tuple[Marker, float]]
    planned: tuple[float, float, float] | None  # x, y before, y after
    #: width of a label's text in the renderer's font (the window measures, the SVG estimates)
    label_width: Callable[[str], float] = svg_label_width
    #: the label of each drop in `drops` (None: left out, it would run into the previous one)
    drop_labels: list[DropLabel | None] = field(default_factory=list)
    planned_label: DropLabel | None = None
    #: the markers' x, sorted (which labels would cross the row of triangles)
    marker_xs: list[float] = field(default_factory=list)

    def x(self, position: float) -> float:
        a = self.area
        return a.left + (position / self.timeline.x_end) * a.width

    def y(self, tokens: float) -> float:
        a = self.area
        if math.isnan(tokens):
            return a.bottom
        return a.bottom - min(max(tokens / self.y_top, 0.0), 1.05) * a.height

    def position_at(self, px: float) -> float:
        a = self.area
        return (px - a.left) / max(a.width, 1e-9) * self.timeline.x_end

    def limit_y(self) -> tuple[float, float] | None:
        """y of the window and of the threshold lines, if the window is drawn."""
        lim = self.timeline.limits
        if lim.context_window <= 0:
            return None
        return self.y(float(lim.context_window)), self.y(float(lim.threshold))

    def limit_label_ys(self) -> tuple[float, float, float] | None:
        """The vertical middles of the window, threshold and reserve labels right of the plot: each
        at its line, the threshold's pushed under the window's where the two lines lie closer than
        a label's height (a window of 1.05M and a threshold of 1.03M drew one label over the other),
        the reserve's between the lines where they leave room for it, else under the threshold's."""
        ys = self.limit_y()
        if ys is None:
            return None
        y_window, y_threshold = ys
        y_threshold_label = max(y_threshold, y_window + LIMIT_LABEL_HEIGHT)
        if y_threshold - y_window > 2 * LIMIT_LABEL_HEIGHT:
            y_reserve_label = (y_window + y_threshold) / 2
        else:
            y_reserve_label = y_threshold_label + LIMIT_LABEL_HEIGHT
        return y_window, y_threshold_label, y_reserve_label

    def limit_labels(self) -> list[tuple[str, float, str]] | None:
        """(which, the vertical middle, the text) of the window, threshold and reserve labels right of
        the plot (placed by limit_label_ys): what the window and the SVG both write."""
        ys = self.limit_label_ys()
        if ys is None:
            return None
        lim = self.timeline.limits
        known = "" if lim.window_known else "?"
        y_window, y_threshold, y_reserve = ys
        return [
            ("window", y_window, f"window {tokens_label(lim.context_window)}{known}"),
            ("threshold", y_threshold, f"threshold {tokens_label(lim.threshold)}"),
            ("reserve", y_reserve, f"reserve {tokens_label(lim.reserve_tokens)}"),
        ]

    def place_label(self, x: float, y_after: float, text: str) -> DropLabel | None:
        """A drop label beside its line, under its dot, but above the marker triangles where one
        stands under the text (labels crossing the row of triangles made both unreadable); None
        when the plot is too short for it there."""
        a = self.area
        left = x + LABEL_DX
        baseline = min(y_after + LABEL_DY, a.bottom - 2)
        right = left + self.label_width(text)
        xs = self.marker_xs
        k = bisect.bisect_left(xs, left - MARKER_HALF_WIDTH - 1)
        under = k < len(xs) and xs[k] <= right + MARKER_HALF_WIDTH + 1
        if under and baseline + LABEL_DESCENT > a.bottom - MARKER_HEIGHT - 1:
            baseline = a.bottom - MARKER_HEIGHT - 1 - LABEL_DESCENT
        if baseline - LABEL_ASCENT < a.top:
            return None
        return DropLabel(left, baseline, text)

    def hit(self, px: float, py: float, slack: float = 5.0) -> Hit | None:
        """The drop, marker, planned drop or point under (px, py); drops and markers win within
        ``slack`` pixels, else the nearest point of the timeline."""
        a = self.area
        if not (a.left - slack <= px <= a.right + slack):
            return None
        best: tuple[float, Hit] | None = None
        for i, (d, x, _, _) in enumerate(self.drops):
            if abs(x - px) <= slack and (best is None or abs(x - px) < best[0]):
                best = (abs(x - px), Hit("drop", i, d.record))
        for i, (m, x) in enumerate(self.markers):
            if abs(x - px) <= slack and py >= a.bottom - 14 and (best is None or abs(x - px) < best[0]):
                best = (abs(x - px), Hit("marker", i, m.record))
        if best is not None:
            return best[1]
        if self.planned is not None and abs(self.planned[0] - px) <= slack:
            return Hit("planned", 0, None)
        k = self.timeline.nearest_point(self.position_at(px))
        if k is None:
            return None
        return Hit("point", k, self.timeline.records[k])


def hit_position(timeline: Timeline, hit: Hit) -> float:
    """The path position a hit stands at (a point's, a drop's or a marker's entry; the planned drop
    one step after the leaf)."""
    if hit.kind == "drop":
        return float(timeline.drops[hit.index].position)
    if hit.kind == "marker":
        return float(timeline.markers[hit.index].position)
    if hit.kind == "planned":
        return float(timeline.planned.position) if timeline.planned is not None else float(timeline.x_end)
    return float(timeline.positions[hit.index])


#: what a key does on the chart (ui.timeline maps the keys): one point, a tenth of the path, the
#: ends, the previous/next compaction (the planned one last), the previous/next branch summary or
#: model change
STEPS = (
    "previous",
    "next",
    "page_back",
    "page_forward",
    "first",
    "last",
    "previous_compaction",
    "next_compaction",
    "previous_marker",
    "next_marker",
)


def _events(timeline: Timeline, markers: bool) -> list[tuple[float, int, Hit]]:
    """The compactions and the planned one (or the markers), in the order of their positions."""
    if markers:
        out = [(float(m.position), 1, Hit("marker", i, m.record)) for i, m in enumerate(timeline.markers)]
    else:
        out = [(float(d.position), 0, Hit("drop", i, d.record)) for i, d in enumerate(timeline.drops)]
        if timeline.planned is not None:
            out.append((float(timeline.planned.position), 2, Hit("planned", 0, None)))
    out.sort(key=lambda e: (e[0], e[1]))
    return out


def _point(timeline: Timeline, k: int) -> Hit:
    return Hit("point", k, timeline.records[k])


def stepped_hit(timeline: Timeline, hit: Hit | None, step: str) -> Hit | None:
    """Where a keyboard step (one of :data:`STEPS`) moves the chart's cursor from ``hit`` (None: from
    before the first point). Points step along the path; compactions (the planned one last) and
    markers are visited in the order of their positions; None when there is nothing to reach."""
    n = len(timeline)
    if step.endswith(("_compaction", "_marker")):
        events = _events(timeline, markers=step.endswith("_marker"))
        if not events:
            return hit
        order = (-1.0, -1) if hit is None else (hit_position(timeline, hit), _KIND_ORDER.get(hit.kind, -1))
        keys = [(p, o) for p, o, _ in events]
        if step.startswith("next"):
            k = bisect.bisect_right(keys, order)
            return events[k][2] if k < len(events) else hit
        k = bisect.bisect_left(keys, order) - 1
        return events[k][2] if k >= 0 else hit
    if n == 0:
        return hit
    if step == "first" or (hit is None and step in ("next", "page_forward")):
        return _point(timeline, 0)
    if step == "last" or hit is None:
        return _point(timeline, n - 1)
    here = hit_position(timeline, hit)
    if step in ("page_back", "page_forward"):
        sign = 1 if step == "page_forward" else -1
        near = timeline.nearest_point(here + sign * timeline.x_end / 10)
        if near is not None and (timeline.positions[near] - here) * sign > 0:
            return _point(timeline, near)
        step = "next" if sign > 0 else "previous"
    if hit.kind == "point":
        k = hit.index + (1 if step == "next" else -1)
    elif step == "next":  # from an event: the first point after it (the drop's own entry is one)
        k = bisect.bisect_right(timeline.positions, here)
        k = k if k < n else n - 1
    else:
        k = bisect.bisect_left(timeline.positions, here) - 1
    return _point(timeline, min(max(k, 0), n - 1))


_KIND_ORDER = {"point": -1, "drop": 0, "marker": 1, "planned": 2}


def y_scale_top(timeline: Timeline) -> float:
    """The tokens at the plot's top: 8 % over the highest value, rounded up to a quarter of its
    power of ten (a what-if window a few thousand tokens wider keeps the scale, and the drawn
    history with it)."""
    v = max(timeline.peak * 1.08, 1000.0)
    step = 10.0 ** math.floor(math.log10(v)) / 4
    return float(math.ceil(v / step) * step)


def with_plan_of(lay: TimelineLayout, timeline: Timeline) -> TimelineLayout | None:
    """``lay`` for ``timeline`` (the same history under another plan) without redoing the history's
    geometry, or None if the y scale changed (then lay it out again)."""
    if timeline.positions is not lay.timeline.positions or timeline.drops is not lay.timeline.drops:
        return None
    if y_scale_top(timeline) != lay.y_top:
        return None
    new = dataclasses.replace(lay, timeline=timeline, planned=None, planned_label=None)
    _place_planned(new)
    return new


def _place_planned(lay: TimelineLayout) -> None:
    p = lay.timeline.planned
    if p is None:
        return
    x, y_before, y_after = lay.planned = (lay.x(p.position), lay.y(p.tokens_before), lay.y(p.tokens_after))
    label = lay.place_label(x, y_after, "planned")
    if label is not None and _runs_into_a_drop_label(lay, label):
        # right after a compaction whose label is drawn there (the two were written over each
        # other): "planned" goes above the top of its own line, else it is left out
        above = DropLabel(label.x, y_before - LABEL_DESCENT - 1, label.text)
        fits = above.baseline - LABEL_ASCENT >= lay.area.top
        label = above if fits and not _runs_into_a_drop_label(lay, above) else None
    lay.planned_label = label


def _runs_into_a_drop_label(lay: TimelineLayout, label: DropLabel) -> bool:
    """Whether ``label``'s text would touch a drawn drop label's (within LABEL_GAP across)."""
    right = label.x + lay.label_width(label.text)
    for other in lay.drop_labels:
        if other is None or abs(other.baseline - label.baseline) >= LABEL_ASCENT + LABEL_DESCENT:
            continue
        if other.x < right + LABEL_GAP and label.x < other.x + lay.label_width(other.text) + LABEL_GAP:
            return True
    return False


def _place_drop_labels(lay: TimelineLayout) -> None:
    """Each drop's "summary N", left to right; one that would run into the previous label or
    across a later drop's line is left out (hover and the SVG's <title> still name each drop).
    Where compactions stand closer than "summary N" is wide (30 of them across 1,100 px, where the
    line of each crossed the label before it), every label is the size alone: the key says
    "compaction (summary size)"."""
    for short in (False, True):
        lay.drop_labels.clear()
        crossed = False
        free_from = -math.inf
        for k, (d, x, _, y_after) in enumerate(lay.drops):
            size = tokens_label(d.summary_tokens)
            label = lay.place_label(x, y_after, size if short else f"summary {size}")
            if label is None or label.x < free_from:
                lay.drop_labels.append(None)
                continue
            if _crosses_a_later_drop(lay, label, k):
                crossed = True
                lay.drop_labels.append(None)
                continue
            lay.drop_labels.append(label)
            free_from = label.x + lay.label_width(label.text) + LABEL_GAP
        if not crossed:
            return


def _crosses_a_later_drop(lay: TimelineLayout, label: DropLabel, k: int) -> bool:
    """Whether a drop after the ``k``-th draws its line through ``label``'s text (within LABEL_GAP)."""
    right = label.x + lay.label_width(label.text) + LABEL_GAP
    top, bottom = label.baseline - LABEL_ASCENT, label.baseline + LABEL_DESCENT
    for d, x, y_before, y_after in lay.drops[k + 1 :]:
        if x > right:
            return False
        ys = (y_after,) if math.isnan(d.tokens_before) or math.isnan(y_before) else (y_before, y_after)
        if x >= label.x - LABEL_GAP and min(ys) <= bottom and max(ys) + 2.5 >= top:  # 2.5: its dot
            return True
    return False


def column_count(area: PlotArea) -> int:
    """One column per pixel of the plot's width."""
    return max(int(area.width), 1)


def layout_timeline(
    timeline: Timeline,
    area: PlotArea,
    columns: Columns | None = None,
    label_width: Callable[[str], float] = svg_label_width,
) -> TimelineLayout:
    """Everything to draw ``timeline`` in ``area`` (pixels), from one pass over the pixel columns.

    ``columns``: the points already downsampled to ``column_count(area)`` columns (a new plan over
    the same history and width reuses them). ``label_width``: a label's width in the font it is
    drawn with."""
    y_top = y_scale_top(timeline)
    cols = columns if columns is not None else downsample(timeline, 0, timeline.x_end, column_count(area))
    columns_n = column_count(area)
    lay = TimelineLayout(timeline, area, y_top, cols, [], [], [], [], [], [], None, label_width)
    col_w = area.width / columns_n
    drops = sorted(timeline.drops, key=lambda d: d.position)
    lay.drops = [(d, lay.x(d.position), lay.y(d.tokens_before), lay.y(d.tokens_after)) for d in drops]
    lay.markers = [(m, lay.x(m.position)) for m in timeline.markers]
    lay.marker_xs = sorted(x for _, x in lay.markers)
    _place_drop_labels(lay)
    _place_planned(lay)
    run: Run | None = None
    next_drop = 0
    # lay.y inlined: this loop runs once per pixel column
    bottom, scale = area.bottom, area.height / y_top
    top_clip = area.bottom - 1.05 * area.height
    positions = timeline.positions
    prev_y: float | None = None
    for j in range(len(cols)):
        x = area.left + (cols.column[j] + 0.5) * col_w
        y = max(bottom - max(cols.last[j], 0.0) * scale, top_clip)
        estimate = cols.estimates[j] > 0
        position = positions[cols.last_point[j]]
        while next_drop < len(lay.drops) and drops[next_drop].position < position:
            _, dx, dy_before, dy_after = lay.drops[next_drop]
            if run is not None:
                if not math.isnan(drops[next_drop].tokens_before):
                    run.xs.append(dx)
                    run.ys.append(dy_before)
                lay.runs.append(run)
            run = Run(estimate, [dx], [dy_after])
            prev_y = dy_after
            next_drop += 1
        if run is None:
            run = Run(estimate)
        elif run.estimate != estimate:
            lay.runs.append(run)
            run = Run(estimate, [run.xs[-1]], [run.ys[-1]]) if run.xs else Run(estimate)
        run.xs.append(x)
        run.ys.append(y)
        # a column's spread is drawn where the line through the last values does not cover it
        y_low = max(bottom - max(cols.low[j], 0.0) * scale, top_clip)
        y_high = max(bottom - max(cols.high[j], 0.0) * scale, top_clip)
        near_low = max(y, prev_y) if prev_y is not None else y
        near_high = min(y, prev_y) if prev_y is not None else y
        if y_low - near_low >= 1.0 or near_high - y_high >= 1.0:
            lay.spans.append((x, y_low, y_high))
        prev_y = y
    for d, dx, dy_before, dy_after in lay.drops[next_drop:]:  # compactions after the last point
        if run is not None and not math.isnan(d.tokens_before):
            run.xs.append(dx)
            run.ys.append(dy_before)
        if run is not None:
            lay.runs.append(run)
        run = Run(run.estimate if run is not None else False, [dx], [dy_after])
    if run is not None:
        lay.runs.append(run)
    lay.y_ticks = [(lay.y(v), tokens_label(v)) for v in nice_ticks(y_top * 0.98)]
    lay.x_ticks = [
        (lay.x(v), f"#{v:,.0f}")
        # path positions are whole: a two-entry path was labelled "#0 #0 #0 #0 #0 #1 #1 …"
        for v in nice_ticks(float(timeline.x_end), max(int(area.width // 110), 1), least_step=1.0)
        if v <= timeline.x_end
    ]
    return lay


def _tokens_text(v: float) -> str:
    return "unknown" if math.isnan(v) else f"{v:,.0f}"


def drop_text(d: Drop) -> str:
    snapshot = not math.isnan(d.snapshot_tokens)  # pi 1.6.0: the system message comes along
    return (
        f"compaction {d.entry_id} (path #{d.position:,})\n"
        f"context {_tokens_text(d.tokens_before)} → {_tokens_text(d.tokens_after)} tokens "
        f"(tokensBefore → {'system snapshot + ' if snapshot else ''}summary + kept, chars/4)\n"
        f"summary {_tokens_text(d.summary_tokens)} tokens"
        + (f", system message snapshot {_tokens_text(d.snapshot_tokens)} tokens" if snapshot else "")
    )


def marker_text(m: Marker) -> str:
    if m.kind == "model_change":
        return f"model change {m.entry_id} (path #{m.position:,})\nmodel {m.label}"
    return (
        f"branch summary {m.entry_id} (path #{m.position:,})\n{_tokens_text(m.tokens)} tokens in the context"
    )


def planned_text(timeline: Timeline) -> str:
    p = timeline.planned
    if p is None:
        return ""
    return (
        f"planned compaction (pi {timeline.profile})\n"
        f"context {_tokens_text(p.tokens_before)} → {_tokens_text(p.tokens_after)} tokens\n"
        f"summary {_tokens_text(p.summary_tokens)} tokens"
    )


def point_text(timeline: Timeline, k: int, entry_id: str) -> str:
    source = "provider usage" if timeline.from_usage[k] else "chars/4 estimate"
    return (
        f"assistant message {entry_id} (path #{timeline.positions[k]:,})\n"
        f"context {_tokens_text(timeline.tokens[k])} tokens · {source}"
    )
