"""'Why this cut' as HTML: the core's explanation (core/explain.py) rendered for the window. No Qt.

Every piece of session text is escaped: entry types, roles and ids come from the file.
"""

from __future__ import annotations

import html

from session_studio.core.explain import AccumulationRow, explain_plan
from session_studio.core.plan import PlanState

__all__ = ["explain_cut"]


def explain_cut(st: PlanState, muted: str = "#888", accent: str = "#c00") -> str:
    """HTML of the walk: accumulation newest → oldest, budget, candidate, backward scan, split turn."""
    e = html.escape
    ex = explain_plan(st)
    out: list[str] = [f"<h3 style='margin:0'>How pi {e(st.profile.version)} picks the cut</h3>"]
    n = 0
    for step in ex.steps:
        colour = f" style='color:{accent}'" if step.warning else ""
        if step.kind == "failure":
            out.append(f"<p{colour}><b>{e(step.title)}</b>{': ' if step.title else ''}{e(step.text)}</p>")
            continue
        if step.kind == "range":
            out.append(f"<p style='color:{muted}'>{e(step.title)}: {e(step.text)}.</p>")
            continue
        if step.kind in ("outcome",):
            out.append(f"<p{colour}><b>{e(step.title)}</b>: {e(step.text)}.</p>")
            continue
        if step.title:
            n += 1
            out.append(f"<p{colour}><b>{n}. {e(step.title)}</b>: {e(step.text)}.</p>")
        else:
            out.append(f"<p{colour}>{e(step.text)}</p>")
        if step.kind == "accumulate" and step.title:
            out.append(_table(ex.rows, ex.rows_left_out, muted, accent))
    for q in ex.quirks:
        ref = f" <small>(spec §{e(q.spec)})</small>" if q.spec else ""
        out.append(f"<p style='color:{accent}'><b>{e(q.title)}.</b> {e(q.text)}{ref}</p>")
    return "\n".join(out)


_NOWRAP = "style='white-space:nowrap'"


def _table(rows: list[AccumulationRow], left_out: int, muted: str, accent: str) -> str:
    e = html.escape
    body = []
    for r in rows:
        style = (
            f" style='color:{accent}; font-weight:bold'"
            if r.budget_reached
            else ""
            if r.counted
            else f" style='color:{muted}'"
        )
        tokens = f"{r.tokens:,}" if isinstance(r.tokens, int) else e(str(r.tokens))
        total = f"{r.total:,.0f}" if r.counted else "—"
        note = "≥ keep: budget reached" if r.budget_reached else "" if r.counted else "older: not counted"
        body.append(
            # in a narrow pane the wide last column left the others their minimum width, and
            # "bashExecution" broke into "bashExecutio" / "n" (Qt's rich text honours the CSS
            # white-space, not the nowrap attribute)
            f"<tr{style}><td align='right' {_NOWRAP}>#{r.position}</td><td {_NOWRAP}>{e(r.entry)}</td>"
            f"<td align='right' {_NOWRAP}>{tokens}</td><td align='right' {_NOWRAP}>{total}</td>"
            f"<td>{note}</td></tr>"
        )
    if left_out:
        plural = "s" if left_out != 1 else ""
        body.append(
            f"<tr><td colspan='5' style='color:{muted}'>… {left_out:,} older message{plural} not needed</td></tr>"
        )
    return (
        "<table cellspacing='0' cellpadding='2' width='100%'><tr style='font-weight:bold'>"
        "<td align='right'>path</td><td>entry</td><td align='right'>tokens</td><td align='right'>total</td>"
        "<td></td></tr>" + "".join(body) + "</table>"
    )
