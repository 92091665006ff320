"""'Why this cut': pi's findCutPoint walked step by step on this session, as HTML. No Qt."""

from __future__ import annotations

import bisect
import html

from session_studio.core.cut_points import CutPoint, cut_point_reason

from .document import PlanState

__all__ = ["explain_cut"]

MAX_ROWS = 400


def _who(rec: object) -> str:
    t = getattr(rec, "type", "?")
    if t == "message":
        return str(getattr(rec, "role", "?"))
    return str(t)


def explain_cut(st: PlanState, muted: str = "#888", accent: str = "#c00") -> str:
    """HTML of the walk: accumulation newest → oldest, budget, candidate, backward scan, split turn."""
    if st.error:
        return f"<p><b>pi would fail here:</b> {html.escape(st.error)}</p>"
    if st.plan is None or st.cut is None:
        return "<p>No active path to plan.</p>"
    pl = st.plan.planner
    b = st.plan.boundary
    recs = pl.path
    keep = st.keep
    out: list[str] = []
    e = html.escape
    out.append("<h3 style='margin:0'>How pi 0.80.2 picks the cut</h3>")
    out.append(
        f"<p style='color:{muted}'>Range: path #{b.start} … #{b.end - 1}"
        + (
            f" (after the previous compaction at #{b.prev_compaction}; its kept start is #{b.start})"
            if b.prev_compaction >= 0
            else " (no previous compaction)"
        )
        + f". keepRecentTokens = {keep:,}.</p>"
    )
    out.append(
        "<p><b>1. Accumulate</b> estimated tokens of <i>message</i> entries from the newest back "
        "(other entries add nothing) until the total reaches keepRecentTokens.</p>"
    )
    rows = []
    reached = st.budget_pos
    k_budget = (
        pl.positions.index(reached)
        if reached is not None and reached in pl.positions
        else len(pl.positions) - 1
    )
    shown = min(len(pl.positions), k_budget + 4, MAX_ROWS)
    for k in range(shown):
        pos = pl.positions[k]
        hit = pos == reached
        style = f" style='color:{accent}; font-weight:bold'" if hit else ""
        rows.append(
            f"<tr{style}><td align='right'>#{pos}</td><td>{e(_who(recs[pos]))}</td>"
            f"<td align='right'>{pl.tokens.get(pos, 0):,}</td><td align='right'>{pl.sums[k]:,.0f}</td>"
            f"<td>{'≥ keep: budget reached' if hit else ''}</td></tr>"
        )
    if shown < len(pl.positions):
        rows.append(
            f"<tr><td colspan='5' style='color:{muted}'>… {len(pl.positions) - shown:,} older messages not needed"
            "</td></tr>"
        )
    out.append(
        "<table cellspacing='0' cellpadding='2' width='100%'><tr style='font-weight:bold'><td align='right'>path</td>"
        "<td>entry</td><td align='right'>tokens</td><td align='right'>total</td><td></td></tr>"
        + "".join(rows)
        + "</table>"
    )
    cps = pl.cut_points
    if st.manual:
        out.append(
            f"<p><b>Manual cut</b> at #{st.cut.first_kept_index}: you picked this cut point; pi's automatic "
            "choice is replaced (no backward scan).</p>"
        )
    else:
        if pl.stop_nan:
            out.append(
                "<p>The running total became NaN (a damaged token count): it never reaches the budget.</p>"
            )
        if reached is None:
            out.append(
                f"<p><b>2. Budget never reached</b>: the whole range holds less than {keep:,} tokens, so the cut "
                f"stays at the first valid cut point #{cps[0] if cps else b.start} — nothing older to summarise.</p>"
            )
        else:
            j = bisect.bisect_left(cps, reached)
            if j < len(cps):
                out.append(
                    f"<p><b>2. Candidate</b>: the first valid cut point at or after #{reached} is "
                    f"<b>#{cps[j]}</b> ({e(cut_point_reason(recs[cps[j]]))}).</p>"
                )
            else:
                out.append(
                    f"<p><b>2. No valid cut point at or after #{reached}</b>: pi keeps its initial candidate, the "
                    f"<i>first</i> cut point #{cps[0] if cps else b.start}. (This is quirk 12.1.2: an oversized "
                    "trailing entry disables compaction.)</p>"
                )
        out.append(_scan(st.cut, pl.path, b.start, cps, reached))
    c: CutPoint = st.cut
    fk = c.first_kept_index
    if fk < len(recs):
        first = recs[fk]
        if first.type == "message" and first.role == "user":
            out.append(
                f"<p><b>4. Turn</b>: #{fk} is a user message, so the cut is at a turn boundary (no split).</p>"
            )
        elif c.turn_start_index >= 0:
            out.append(
                f"<p><b>4. Split turn</b>: #{fk} is {e(_who(first))}, not a user message. Searching back for the "
                f"turn start finds #{c.turn_start_index} ({e(_who(recs[c.turn_start_index]))}). Entries "
                f"#{c.turn_start_index}…#{fk - 1} are the <i>turn prefix</i>, summarised with the turn-prefix "
                "prompt; older entries go to the history summary.</p>"
            )
        else:
            out.append(
                f"<p><b>4. Turn</b>: #{fk} is {e(_who(first))}; no turn start before it, so no split.</p>"
            )
    out.append(
        f"<p><b>Result</b>: firstKept = #{fk}, turnStart = {c.turn_start_index}, "
        f"isSplitTurn = {str(c.is_split_turn).lower()}.</p>"
    )
    if st.nothing_to_compact:
        out.append(
            f"<p style='color:{accent}'><b>Nothing to compact</b>: prepareCompaction finds no message before "
            "the cut.</p>"
        )
    for q in st.quirks:
        ref = f" <small>(spec §{e(q.spec)})</small>" if q.spec else ""
        out.append(f"<p style='color:{accent}'><b>{e(q.title)}.</b> {e(q.text)}{ref}</p>")
    return "\n".join(out)


def _scan(cut: CutPoint, recs: list, start: int, cps: list[int], reached: int | None) -> str:  # type: ignore[type-arg]
    # re-walk pi's backward scan from the candidate to the final cut
    if reached is None:
        cand = cps[0] if cps else start
    else:
        j = bisect.bisect_left(cps, reached)
        cand = cps[j] if j < len(cps) else (cps[0] if cps else start)
    steps = []
    c = cand
    while c > start:
        prev = recs[c - 1]
        if prev.type in ("compaction", "message"):
            steps.append(f"#{c - 1} is a {html.escape(_who(prev))} → stop")
            break
        steps.append(f"#{c - 1} is {html.escape(_who(prev))} (not a message) → move the cut back to #{c - 1}")
        c -= 1
    if c == start and not steps:
        steps.append("at the start of the range → stop")
    return (
        "<p><b>3. Backward scan</b> over entries right before the candidate: "
        + "; ".join(steps)
        + f". Cut = <b>#{cut.first_kept_index}</b>.</p>"
    )
