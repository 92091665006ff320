"""The plan report: the settings, the token bar, the cut and why, what is summarised, the quirks.

Everything comes from one :class:`~session_studio.core.plan.PlanState` (the PathPlanner's plan,
as the window and `plan` show it) and core's explanation model (:func:`explain_plan`). The report
is a list of :class:`ReportSection`; another figure (the context timeline) is one call away::

    sections = plan_sections(state)
    sections.insert(2, figure_section("Context timeline", "timeline", svg, caption))
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.bar_geometry import after_items
from ..core.explain import (
    AUTO_COMPACTION_OFF,
    RecoveryPlanner,
    explain_plan,
    overflow_text,
    planned_recovery,
    threshold_check_text,
)
from ..core.plan import PlanState
from ..core.preparation import Preparation
from .bar_svg import bar_figure
from .safe import visible
from .writer import Figure, ReportWriter

__all__ = ["ReportSection", "figure_section", "plan_sections", "write_sections"]


@dataclass(frozen=True)
class ReportSection:
    title: str
    anchor: str
    render: Callable[[ReportWriter], None]


def write_sections(w: ReportWriter, sections: Sequence[ReportSection]) -> None:
    for s in sections:
        w.heading(2, s.title, s.anchor)
        s.render(w)


_SVG_NS = "{http://www.w3.org/2000/svg}"
#: the drawing elements a figure may use (no script, foreignObject, use, image, a, animation)
_SVG_TAGS = frozenset(
    {
        "svg",
        "g",
        "rect",
        "line",
        "polyline",
        "polygon",
        "path",
        "circle",
        "ellipse",
        "text",
        "tspan",
        "title",
        "desc",
        "style",
        "defs",
        "clipPath",
        "linearGradient",
        "stop",
        "pattern",
    }
)


def check_svg(svg: str) -> str:
    """``svg`` when it is a plain drawing (allowed elements, no event handlers, no links, no url()
    outside the document), else ValueError: a figure can never bring script or a remote load."""
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as e:
        raise ValueError(f"not a well-formed SVG: {e}") from None
    for el in root.iter():
        tag = el.tag.removeprefix(_SVG_NS) if isinstance(el.tag, str) else ""
        if tag not in _SVG_TAGS:
            raise ValueError(f"SVG element not allowed in a report: {tag!r}")
        for name, value in el.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or local in ("href", "src") or "javascript:" in value.lower():
                raise ValueError(f"SVG attribute not allowed in a report: {name!r}")
            if "url(" in value.replace(" ", "") and "url(#" not in value.replace(" ", ""):
                raise ValueError(f"SVG attribute {name!r} refers outside the document")
        if tag == "style" and ("@import" in (el.text or "") or "url(" in (el.text or "")):
            raise ValueError("SVG style sheets may not import or load anything")
    return svg


def figure_section(
    title: str, anchor: str, svg: str, caption: str, text: Sequence[str] = ()
) -> ReportSection:
    """A section showing a static figure (e.g. the context timeline); the SVG is checked first."""
    fig = Figure(check_svg(svg), caption, list(text))
    return ReportSection(title, anchor, lambda w: w.figure(fig))


def _n(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return visible(value)
    return f"{value:,.0f}"


def _overview(st: PlanState, recovery: RecoveryPlanner | None) -> Callable[[ReportWriter], None]:
    def render(w: ReportWriter) -> None:
        tok = st.tokens
        rows: list[tuple[str, Any]] = [
            ("pi profile", st.profile.version),
            ("keepRecentTokens", _n(st.keep)),
            ("reserveTokens", _n(st.reserve)),
            ("context window", _n(st.window) + ("" if st.window_known else " (assumed)")),
            ("compaction threshold", f"{_n(st.threshold)} (window − reserve)"),
        ]
        if tok is not None:
            rows.append(
                (
                    "context now",
                    f"{_n(tok.tokens)} tokens: provider usage {_n(tok.usage_tokens)} + "
                    f"chars/4 estimate of the later messages {_n(tok.trailing_tokens)}"
                    + (" (pi shows it as unknown until the next answer)" if st.tokens_unknown else ""),
                )
            )
        rows.append(
            (
                "pi would compact now",
                (
                    "yes"
                    if st.should_compact
                    else f"no: {AUTO_COMPACTION_OFF}"
                    if not st.params.auto_compaction
                    else "no"
                )
                + f": {threshold_check_text(st)}",
            )
        )
        overflow = overflow_text(st, planned_recovery(st, recovery))
        if overflow is not None:
            rows.append(("pi's overflow case", overflow))
        rows.append(("path", f"{len(st.path):,} entries, {len(st.item_tokens):,} context messages"))
        if st.manual:
            rows.append(("cut", "manual (chosen in Session Studio)"))
        w.facts(rows)
        if st.error:
            w.para(st.error, tone="warning")
        elif st.nothing_to_compact:
            w.para("Nothing to compact with this plan: pi would not write a compaction.", tone="warning")

    return render


def _cut(st: PlanState, prep: Preparation | None) -> Callable[[ReportWriter], None]:
    def render(w: ReportWriter) -> None:
        ex = explain_plan(st)
        s = st.session
        if st.cut is not None and s is not None and st.first_kept_record is not None:
            first = s.records[st.first_kept_record]
            rows: list[tuple[str, Any]] = [
                ("first kept entry", f"#{st.cut.first_kept_index} (id {visible(first.id, one_line=True)})"),
                ("split turn", "yes" if st.cut.is_split_turn else "no"),
            ]
            if st.cut.is_split_turn and 0 <= st.cut.turn_start_index < st.cut.first_kept_index:
                start = s.records[st.path[st.cut.turn_start_index]]
                rows.append(
                    (
                        "turn start",
                        f"#{st.cut.turn_start_index} (id {visible(start.id, one_line=True)}); entries "
                        f"#{st.cut.turn_start_index}…#{st.cut.first_kept_index - 1} are the turn prefix",
                    )
                )
            w.facts(rows)
        w.heading(3, "Why this cut")
        w.facts([(step.title + (" (!)" if step.warning else ""), step.text) for step in ex.steps])
        if ex.rows:
            w.open_fold(f"the walk back from the newest entry ({len(ex.rows):,} rows)", kind="walk")
            w.table(
                ["path #", "entry", "tokens", "running total", ""],
                (
                    [
                        f"#{r.position}",
                        r.entry,
                        _n(r.tokens),
                        _n(r.total) if r.counted else "—",
                        "budget reached" if r.budget_reached else "" if r.counted else "older: not counted",
                    ]
                    for r in ex.rows
                ),
            )
            if ex.rows_left_out:
                w.para(
                    f"… {ex.rows_left_out:,} older row{'s' if ex.rows_left_out != 1 else ''} left out",
                    tone="muted",
                )
            w.close_fold()

    return render


def _summarised(st: PlanState, prep: Preparation | None) -> Callable[[ReportWriter], None]:
    def render(w: ReportWriter) -> None:
        if prep is None:
            w.para("No compaction is planned, so nothing is summarised.", tone="muted")
            return
        # the bar's 'after' row: pi 1.6.0's system snapshot, the summary, the kept messages
        projected = after_items(st)
        head = {kind: t for _, kind, t in projected.head} if projected is not None else {}
        after = projected.total if projected is not None else 0.0
        kept = after - projected.head_total if projected is not None else 0.0
        read, modified = prep.file_lists
        rows: list[tuple[str, Any]] = [
            ("tokens before (tokensBefore)", _n(prep.tokens_before)),
            (
                "tokens after (estimated)",
                f"~{_n(after)}: "
                + (f"the system message snapshot ({_n(head['system'])}), " if "system" in head else "")
                + f"the summary counted as {_n(head.get('compactionSummary', 0))}"
                + ("" if st.params.summary_tokens is not None else " until it is generated")
                + f", plus the kept messages ({_n(kept)})",
            ),
            ("messages summarised", f"{len(prep.messages_to_summarize):,}"),
        ]
        if prep.is_split_turn:
            n_prefix = len(prep.turn_prefix_messages)
            rows.append(
                (
                    "turn prefix messages",
                    f"{n_prefix:,} (summarised separately)"
                    if n_prefix
                    else "0: no turn-prefix request, one history request as for an unsplit cut",
                )
            )
        w.facts(rows)
        w.heading(3, f"Read files ({len(read)})")
        w.bullets([visible(f, one_line=True) for f in read] or ["(none)"])
        w.heading(3, f"Modified files ({len(modified)})")
        w.bullets([visible(f, one_line=True) for f in modified] or ["(none)"])

    return render


def _quirks(st: PlanState) -> Callable[[ReportWriter], None]:
    def render(w: ReportWriter) -> None:
        if not st.quirks:
            w.para("None: this cut meets none of pi's known quirks.", tone="muted")
        for q in st.quirks:
            ref = f" (spec §{q.spec})" if q.spec else ""
            w.para(f"{q.title}{ref}", tone="warning")
            w.para(q.text)

    return render


def plan_sections(st: PlanState, recovery: RecoveryPlanner | None = None) -> list[ReportSection]:
    """The plan report's sections, in order (insert more, e.g. a timeline figure, by position).
    ``recovery``: plans pi 1.6.0's overflow recovery, which the overflow row then names."""
    prep = st.prepare() if st.error is None and not st.nothing_to_compact else None
    return [
        ReportSection("The plan", "plan", _overview(st, recovery)),
        # drawn when written: the context report takes only "The plan" and "The cut" from here
        ReportSection("Token bar", "token-bar", lambda w: w.figure(bar_figure(st))),
        ReportSection("The cut", "cut", _cut(st, prep)),
        ReportSection("What is summarised", "summarised", _summarised(st, prep)),
        ReportSection("Quirks", "quirks", _quirks(st)),
    ]
