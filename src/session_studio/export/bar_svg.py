"""The token bar of a plan as a static SVG: the window's picture, drawn from the same PlanState.

Row "now" is the context pi builds (one segment per context message, coloured by kind; pi's count:
the provider usage shared over the messages it covers, the chars/4 estimate after it), row
"after" the projected context after the planned compaction. Lines: the compaction threshold
(window − reserve) and the window; zones: the reserve and keep-recent; the cut and a split
turn's prefix. The geometry is core.bar_geometry.plan_bar, the window's own: at most one rectangle per column.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.bar_geometry import Span, after_items, plan_bar
from ..core.explain import AUTO_COMPACTION_OFF, keep_zone_text
from ..core.plan import PlanState
from .writer import Figure

__all__ = ["KIND_NAMES", "bar_figure"]

COLUMNS = 1000  # the SVG's user units across the bar
_X0, _LABEL_W = 70, 70
_W = COLUMNS
_ROW_NOW, _ROW_AFTER, _ROW_H = 34, 86, 30

KIND_NAMES = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "tool result",
    "bashExecution": "bash",
    "custom": "custom message",
    "branchSummary": "branch summary",
    "compactionSummary": "compaction summary",
    "system": "system message",
    "damaged": "damaged",
    "meta": "other",
}


def _x(tokens: float, scale: float) -> float:
    return _X0 + _W * min(max(tokens, 0.0), scale) / scale if scale > 0 else float(_X0)


def _row_rects(spans: Sequence[Span], y: int, h: int) -> list[str]:
    """One rect per span: core's pixel spans are already one per run of columns showing an item."""
    out: list[str] = []
    for s in spans:
        if s.w > 0:
            kind = s.kind if s.kind in KIND_NAMES else "meta"
            out.append(f'<rect class="k-{kind}" x="{s.x}" y="{y}" width="{s.w}" height="{h}"/>')
    return out


def _fmt(n: float) -> str:
    return f"{n:,.0f}"


def bar_figure(st: PlanState) -> Figure:
    """The bar for ``st`` as an inline SVG and the same facts in words."""
    bar = plan_bar(st, _W, _X0)
    projected = after_items(st)
    cum = bar.fill_cum
    after = st.after_tokens
    now_total = cum[-1]
    scale = bar.scale
    threshold = st.threshold
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_X0 + _W + 10} 150" role="img" '
        'aria-label="token bar" class="tokenbar">',
        "<style>.k-user{fill:var(--user)}.k-assistant{fill:var(--assistant)}"
        ".k-toolResult{fill:var(--toolResult)}.k-bashExecution{fill:var(--bashExecution)}"
        ".k-custom{fill:var(--custom)}.k-branchSummary{fill:var(--branchSummary)}"
        ".k-compactionSummary{fill:var(--compactionSummary)}.k-system{fill:var(--system)}"
        ".k-meta,.k-damaged{fill:var(--meta)}.free{fill:var(--panel);stroke:var(--line)}"
        ".reserve{fill:var(--warn);opacity:.18}.keep{fill:none;stroke:var(--accent);stroke-width:2;"
        "stroke-dasharray:6 3}.prefix{fill:var(--cut);opacity:.28}.cutline{stroke:var(--cut);stroke-width:4}"
        ".threshold{stroke:var(--warn);stroke-width:2;stroke-dasharray:4 3}.axis{fill:var(--muted);"
        "font:13px system-ui,sans-serif}.lbl{fill:var(--fg);font:600 13px system-ui,sans-serif}</style>",
    ]
    add = parts.append
    for y in (_ROW_NOW, _ROW_AFTER):
        add(f'<rect class="free" x="{_X0}" y="{y}" width="{_W}" height="{_ROW_H}"/>')
    x_thr, x_win = _x(threshold, scale), _x(st.window, scale)
    add(
        f'<rect class="reserve" x="{x_thr:.1f}" y="{_ROW_NOW - 6}" width="{max(0.0, x_win - x_thr):.1f}" '
        f'height="{_ROW_AFTER + _ROW_H - _ROW_NOW + 12}"/>'
    )
    parts += _row_rects(bar.now, _ROW_NOW, _ROW_H)
    parts += _row_rects(bar.after, _ROW_AFTER, _ROW_H)
    add(f'<text class="lbl" x="4" y="{_ROW_NOW + 20}">now</text>')
    add(f'<text class="lbl" x="4" y="{_ROW_AFTER + 20}">after</text>')
    lines: list[str] = [
        f"now: {_fmt(now_total)} tokens of a {_fmt(st.window)}-token window "
        f"({100 * now_total / st.window:.1f} %)"
        if st.window > 0
        else f"now: {_fmt(now_total)} tokens",
        f"compaction threshold {_fmt(threshold)} (window − reserve {_fmt(st.reserve)}): "
        + (
            "pi would compact now"
            if st.should_compact
            else f"over it, but {AUTO_COMPACTION_OFF}"
            if st.over_threshold and not st.params.auto_compaction
            else "over it, but pi's cut leaves nothing to compact"
            if st.over_threshold
            else "not over it, no automatic compaction"
        ),
    ]
    if st.first_kept_item is not None and st.cut is not None and not st.nothing_to_compact:
        x_cut = _x(cum[min(st.first_kept_item, len(cum) - 1)], scale)
        if st.turn_start_item is not None and st.turn_start_item < st.first_kept_item:
            # at least a few units wide, so a short prefix stays visible left of the cut
            x_ts = min(_x(cum[st.turn_start_item], scale), x_cut - 4)
            add(
                f'<rect class="prefix" x="{x_ts:.1f}" y="{_ROW_NOW - 8}" width="{x_cut - x_ts:.1f}" '
                f'height="{_ROW_H + 16}"/>'
            )
            # chars/4, as the kept part's figure below (the bar's own widths are shares of the
            # provider's usage, which pi never gives single entries)
            prefix = sum(t for _, _, t in st.item_tokens[st.turn_start_item : st.first_kept_item])
            lines.append(
                f"split turn: its prefix (shaded red, left of the cut: ~{_fmt(prefix)} tokens, chars/4) "
                "is summarised separately"
            )
        add(
            f'<line class="cutline" x1="{x_cut:.1f}" y1="{_ROW_NOW - 8}" x2="{x_cut:.1f}" '
            f'y2="{_ROW_NOW + _ROW_H + 8}"/>'
        )
        add(f'<text class="axis" x="{min(x_cut + 4, _X0 + _W - 60):.1f}" y="{_ROW_NOW - 12}">cut</text>')
        # the projected context's head: pi 1.6.0's system snapshot, then the summary
        head = {kind: t for _, kind, t in projected.head} if projected is not None else {}
        lines.append(
            f"the cut keeps ~{_fmt(st.kept_tokens)} tokens (chars/4) of the end verbatim; "
            f"after: ~{_fmt(bar.after_total)} tokens ("
            + (f"the system message snapshot {_fmt(head['system'])}, " if "system" in head else "")
            + f"the summary counted as {_fmt(head.get('compactionSummary', 0))})"
            if after
            else "after: nothing to compact"
        )
    else:
        lines.append("nothing to compact with this plan" if st.error is None else f"no plan: {st.error}")
    # the keep-recent zone starts where pi's walk back reached keepRecentTokens (the budget item)
    budget = st.budget_item
    keep_from = cum[budget] if budget is not None and budget < len(cum) else max(0.0, now_total - st.keep)
    x_keep = _x(keep_from, scale)
    add(
        f'<rect class="keep" x="{x_keep:.1f}" y="{_ROW_NOW - 3}" width="{_x(now_total, scale) - x_keep:.1f}" '
        f'height="{_ROW_H + 6}"/>'
    )
    lines.append(
        f"keep-recent zone (dashed, keepRecentTokens = {_fmt(st.keep)}): {keep_zone_text(st.profile)}"
    )
    add(
        f'<line class="threshold" x1="{x_thr:.1f}" y1="{_ROW_NOW - 10}" x2="{x_thr:.1f}" '
        f'y2="{_ROW_AFTER + _ROW_H + 10}"/>'
    )
    add(
        f'<text class="axis" x="{max(_X0, x_thr - 80):.1f}" y="{_ROW_AFTER + _ROW_H + 26}">threshold '
        f"{_fmt(threshold)}</text>"
    )
    add(f'<text class="axis" x="{_X0}" y="{_ROW_AFTER + _ROW_H + 26}">0</text>')
    add(f'<text class="axis" x="{_X0 + _W - 4}" y="{_ROW_NOW - 12}" text-anchor="end">{_fmt(scale)}</text>')
    legend_x = _X0
    present = {k for _, k, _ in (*st.item_tokens, *after)}
    for kind, name in KIND_NAMES.items():
        if kind in present and legend_x < _X0 + _W - 120:
            add(f'<rect class="k-{kind}" x="{legend_x}" y="2" width="12" height="12"/>')
            add(f'<text class="axis" x="{legend_x + 16}" y="13">{name}</text>')
            legend_x += 22 + 8 * len(name)
    add("</svg>")
    return Figure("".join(parts), "The token bar: the context now and after the planned compaction.", lines)
