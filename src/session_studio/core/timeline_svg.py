"""The context timeline as one static, self-contained SVG (for exported reports).

It draws what the window's chart draws, from the same layout (core/timeline_layout.py): the context
line (provider usage solid, estimate dashed), the window and threshold lines with the reserve band
between them, each compaction's drop labelled with its summary's size, branch summaries and model
changes as markers, and the planned drop at the end (dashed). Each drop, marker and the planned drop
carries a ``<title>`` (a tooltip in browsers). No scripts, no external references; every text is
XML-escaped, because entry ids and model names come from the (untrusted) session file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from html import escape as _html_escape

from .timeline import Timeline
from .timeline_layout import (
    MARKER_HALF_WIDTH,
    MARKER_HEIGHT,
    PlotArea,
    Run,
    drop_text,
    layout_timeline,
    marker_text,
    planned_text,
)

__all__ = ["timeline_svg"]

# light colours that read on white and in print
_TEXT = "#1d2128"
_MUTED = "#6b7280"
_GRID = "#e3e5e9"
_USAGE = "#1f9d6a"
_ESTIMATE = "#c98a0b"
_DROP = "#d0452f"
_RESERVE = "#dc4632"
_BRANCH = "#0f8f9c"
_MODEL = "#7b5cd6"


#: characters XML 1.0 does not allow even escaped (C0 controls but tab/LF/CR, lone surrogates,
#: U+FFFE/U+FFFF) and the bidi controls that would reorder a label: shown as \uXXXX instead
_NOT_XML_TEXT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]"
)


def escape(s: str) -> str:
    """``s`` as XML text: escaped, and characters an XML parser refuses (a session's model name can
    hold any) written out as ``\\uXXXX`` so the SVG stays well-formed and the label reads as stored."""
    return _html_escape(_NOT_XML_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}", s))


def _f(v: float) -> str:
    return f"{v:.1f}"


def _path_d(run: Run) -> str:
    return "M" + " L".join(f"{_f(x)},{_f(y)}" for x, y in zip(run.xs, run.ys, strict=True))


def _text(x: float, y: float, s: str, *, fill: str = _MUTED, anchor: str = "start", size: int = 10) -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" fill="{fill}" font-size="{size}" text-anchor="{anchor}">'
        f"{escape(s)}</text>"
    )


def _title(s: str) -> str:
    return f"<title>{escape(s)}</title>"


def _legend(y: float) -> list[tuple[float, Callable[[float], str], str]]:
    """(width, swatch drawn at x, label) of each legend item."""
    mid = _f(y - 4)

    def stroke(color: str, dash: str = "") -> Callable[[float], str]:
        return lambda x: (
            f'<line x1="{_f(x)}" y1="{mid}" x2="{_f(x + 18)}" y2="{mid}" stroke="{color}" stroke-width="1.5"{dash}/>'
        )

    def box(color: str, w: float, h: float) -> Callable[[float], str]:
        return lambda x: f'<rect x="{_f(x + 6)}" y="{_f(y - h)}" width="{w}" height="{h}" fill="{color}"/>'

    return [
        (110, stroke(_USAGE), "provider usage"),
        (112, stroke(_ESTIMATE, ' stroke-dasharray="4 3"'), "chars/4 estimate"),
        (168, box(_DROP, 2, 9), "compaction (summary size)"),
        (110, box(_BRANCH, 7, 7), "branch summary"),
        (100, box(_MODEL, 7, 7), "model change"),
    ]


def timeline_svg(timeline: Timeline, *, width: int = 900, height: int = 260) -> str:
    """The chart as an SVG document string (``<svg …>…</svg>``), ``width`` × ``height`` pixels."""
    area = PlotArea(48.0, 26.0, max(width - 48.0 - 100.0, 10.0), max(height - 26.0 - 22.0, 10.0))
    lay = layout_timeline(timeline, area)
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img">',
        _title(f"Context timeline (pi {timeline.profile})"),
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for y, label in lay.y_ticks:
        out.append(
            f'<line x1="{_f(area.left)}" y1="{_f(y)}" x2="{_f(area.right)}" y2="{_f(y)}" stroke="{_GRID}"/>'
        )
        out.append(_text(area.left - 4, y + 3, label, anchor="end"))
    for x, label in lay.x_ticks:
        out.append(_text(x, area.bottom + 14, label, anchor="middle"))
    lim = timeline.limits
    ys = lay.limit_y()
    if ys is not None:
        y_window, y_threshold = ys
        out.append(
            f'<rect x="{_f(area.left)}" y="{_f(y_window)}" width="{_f(area.width)}" '
            f'height="{_f(max(y_threshold - y_window, 0.0))}" fill="{_RESERVE}" fill-opacity="0.12">'
            + _title(f"reserve {lim.reserve_tokens:,} tokens")
            + "</rect>"
        )
        out.append(
            f'<line x1="{_f(area.left)}" y1="{_f(y_window)}" x2="{_f(area.right)}" y2="{_f(y_window)}" '
            f'stroke="{_TEXT}" stroke-width="1"/>'
        )
        out.append(
            f'<line x1="{_f(area.left)}" y1="{_f(y_threshold)}" x2="{_f(area.right)}" y2="{_f(y_threshold)}" '
            f'stroke="{_DROP}" stroke-width="1" stroke-dasharray="5 3"/>'
        )
        for _which, y_label, text in lay.limit_labels() or ():
            out.append(_text(area.right + 4, y_label + 3, text))
    for x, y_low, y_high in lay.spans:
        out.append(
            f'<line x1="{_f(x)}" y1="{_f(y_low)}" x2="{_f(x)}" y2="{_f(y_high)}" stroke="{_USAGE}" '
            'stroke-opacity="0.35"/>'
        )
    for run in lay.runs:
        if len(run.xs) < 2:
            continue
        style = f'stroke="{_ESTIMATE}" stroke-dasharray="4 3"' if run.estimate else f'stroke="{_USAGE}"'
        out.append(f'<path d="{_path_d(run)}" fill="none" {style} stroke-width="1.5"/>')
    for (d, x, y_before, y_after), drop_label in zip(lay.drops, lay.drop_labels, strict=True):
        top = y_before if not math.isnan(d.tokens_before) else y_after
        out.append(
            f'<g><line x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(y_after)}" stroke="{_DROP}" '
            f'stroke-width="2"/><circle cx="{_f(x)}" cy="{_f(y_after)}" r="2.5" fill="{_DROP}"/>'
            + (
                _text(drop_label.x, drop_label.baseline, drop_label.text, fill=_DROP, size=9)
                if drop_label is not None
                else ""
            )
            + _title(drop_text(d))
            + "</g>"
        )
    b, mh, mw = area.bottom, MARKER_HEIGHT, MARKER_HALF_WIDTH
    for m, x in lay.markers:
        color = _MODEL if m.kind == "model_change" else _BRANCH
        out.append(
            f'<path d="M{_f(x)},{_f(b - mh)} L{_f(x - mw)},{_f(b)} L{_f(x + mw)},{_f(b)} Z" fill="{color}">'
            + _title(marker_text(m))
            + "</path>"
        )
    if lay.planned is not None:
        x, y_before, y_after = lay.planned
        planned = lay.planned_label
        out.append(
            f'<g><line x1="{_f(x)}" y1="{_f(y_before)}" x2="{_f(x)}" y2="{_f(y_after)}" stroke="{_DROP}" '
            f'stroke-width="2" stroke-dasharray="4 3"/>'
            + (_text(planned.x, planned.baseline, planned.text, fill=_DROP, size=9) if planned else "")
            + _title(planned_text(timeline))
            + "</g>"
        )
    out.append(
        f'<rect x="{_f(area.left)}" y="{_f(area.top)}" width="{_f(area.width)}" height="{_f(area.height)}" '
        f'fill="none" stroke="{_GRID}"/>'
    )
    legend_y = 14.0
    out.append(_text(area.left, legend_y, f"Context timeline · pi {timeline.profile}", fill=_TEXT, size=11))
    lx = area.left + 190
    for width_px, swatch, label in _legend(legend_y):
        if lx + width_px > width:
            break  # a narrow chart keeps the legend items that fit
        out.append(swatch(lx))
        out.append(_text(lx + 22, legend_y, label))
        lx += width_px
    out.append("</svg>")
    return "\n".join(out)
