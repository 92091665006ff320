"""Token-bar geometry as pure functions (no Qt): segments → pixel spans.

One source for the window's token bar (ui.token_bar) and the HTML export's static bar
(export.bar_svg): :func:`plan_bar` places a plan's two rows for a given width.
Spans are integer ``(x, width)`` pairs that tile ``[x0, x0 + width)`` exactly, with
no gaps or overlaps, whatever the token values (cumulative rounding).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import operator
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from .explain import tokens_unknown_text
from .plan import PlanState

__all__ = [
    "AfterItems",
    "PlanBar",
    "Span",
    "after_items",
    "after_spans",
    "bar_spans",
    "cumulative",
    "fill_tokens",
    "item_span",
    "pixel_spans",
    "plan_bar",
    "span_at",
    "stepped_item",
    "tile",
    "token_x",
]


@dataclass(frozen=True, slots=True)
class Span:
    key: int  # record index (-1 for synthetic segments)
    kind: str
    x: int
    w: int
    start: float  # tokens before this segment
    tokens: float
    item: int = -1  # index of the context item (-1 for synthetic segments)
    estimated: bool = False  # counted by the chars/4 estimate only (after pi's last valid usage)


def _clean(t: float) -> float:
    return t if t > 0 and math.isfinite(t) else 0.0


def tile(weights: Sequence[float], width: int, x0: int = 0) -> list[tuple[int, int]]:
    """Integer spans proportional to ``weights`` that exactly tile ``[x0, x0+width)``."""
    n = len(weights)
    if n == 0:
        return []
    width = max(0, int(width))
    ws = cleaned(weights)
    total = sum(ws)
    if total <= 0:
        ws = [1.0] * n
        total = float(n)
    out = []
    cum = 0.0
    prev = 0
    for k, w in enumerate(ws):
        cum += w
        x = width if k == n - 1 else min(width, round(width * cum / total))
        out.append((x0 + prev, x - prev))
        prev = x
    return out


def token_x(tokens: float, scale: float, width: int, x0: int = 0) -> int:
    """The x of a token position on a bar of ``width`` px showing ``scale`` tokens."""
    if not (scale > 0 and math.isfinite(scale)):
        return x0
    if not math.isfinite(tokens):  # a usage field of 1e400 parses as inf (NaN from inf - inf)
        tokens = scale if tokens > 0 else 0.0
    return x0 + round(width * min(max(tokens, 0.0), scale) / scale)


def bar_spans(
    segments: Sequence[tuple[int, str, float]], scale: float, width: int, x0: int = 0
) -> list[Span]:
    """Spans of ``(key, kind, tokens)`` segments on a bar whose full width is ``scale`` tokens.

    The segments fill ``[x0, token_x(total))`` exactly; the rest of the bar is free.
    """
    tokens = [_clean(t) for _, _, t in segments]
    total = sum(tokens)
    used = token_x(total, max(scale, total), width) - 0 if segments else 0
    spans = tile(tokens, used, x0) if total > 0 else [(x0, 0)] * len(segments)
    out = []
    start = 0.0
    for (key, kind, _), t, (x, w) in zip(segments, tokens, spans, strict=True):
        out.append(Span(key, kind, x, w, start, t))
        start += t
    return out


def span_at(spans: Sequence[Span], x: float, xs: Sequence[int] | None = None) -> Span | None:
    """The span under ``x`` (binary search; pass the cached ``xs`` of the spans), or None."""
    if not spans:
        return None
    if xs is None:
        xs = [s.x for s in spans]
    k = bisect.bisect_right(xs, x) - 1
    while k >= 0 and spans[k].w == 0:
        k -= 1
    if k < 0:
        return None
    s = spans[k]
    return s if s.x <= x < s.x + s.w else None


def item_span(
    keys: Sequence[int],
    kinds: Sequence[str],
    cum: Sequence[float],
    item: int,
    scale: float,
    width: int,
    x0: int = 0,
    *,
    estimated_from: int | None = None,
) -> Span:
    """Context item ``item``'s own span on a row placed from ``cum`` (as :func:`pixel_spans` places
    the row from its first item): its exact extent however thin, where a pixel span shows only the
    item under its column. What the token bar's keyboard cursor points at."""
    start, end = cum[item], cum[item + 1]
    x = token_x(start, scale, width, x0)
    n = len(cum) - 1
    estimated = item >= (n if estimated_from is None else estimated_from)
    return Span(
        keys[item], kinds[item], x, token_x(end, scale, width, x0) - x, start, end - start, item, estimated
    )


def stepped_item(cum: Sequence[float], item: int, direction: int, tokens: float = 0.0) -> int:
    """The item a keyboard step reaches from ``item`` on a row of ``cum`` (:func:`cumulative`):
    the next one (``direction`` +1) or the previous one (-1); with ``tokens`` the item ``tokens``
    further along, and at least the next one (a page of the bar). Clamped to the row's items."""
    n = len(cum) - 1
    if n <= 0:
        return -1
    item = min(max(item, 0), n - 1)
    step = min(max(item + direction, 0), n - 1)
    if tokens <= 0:
        return step
    target = cum[item] + direction * tokens
    reached = min(max(bisect.bisect_right(cum, target, 0, n + 1) - 1, 0), n - 1)
    return reached if (reached - item) * direction > 0 else step


def fill_tokens(estimates: Sequence[float], last_usage_index: int | None, usage_tokens: float) -> list[float]:
    """Per-item tokens adding up to pi's context count (estimateContextTokens).

    pi counts the provider-reported usage of the last assistant message with valid usage for
    everything up to it, plus the chars/4 estimate of the messages after it. The usage total is
    shared among the items it covers in proportion to their estimates; later items keep theirs.
    """
    est = cleaned(estimates)
    if last_usage_index is None or not 0 <= last_usage_index < len(est):
        return est
    usage = _clean(usage_tokens)
    covered = est[: last_usage_index + 1]
    total = sum(covered)
    if total > 0:
        f = usage / total
        head = [t * f for t in covered]
    else:  # nothing estimated before the usage: put it all on the message that reported it
        head = [0.0] * last_usage_index + [usage]
    return head + est[last_usage_index + 1 :]


def cleaned(tokens: Sequence[float]) -> list[float]:
    """``[_clean(t) for t in tokens]``: checked in C first, as a long path's estimates all are clean
    (finite and not negative; a NaN or ±inf makes the sum non-finite) — the window computes the
    bar's sums of 100k items on the GUI thread when a path is shown."""
    if not tokens or (math.isfinite(sum(tokens)) and min(tokens) >= 0):
        return list(tokens)  # -0.0 kept: adding it changes no sum
    return [_clean(t) for t in tokens]


def cumulative(tokens: Sequence[float]) -> array[float]:
    """[0, t0, t0+t1, …]: the token position where each item starts (and the total at the end); an
    array of doubles (a long path's bar keeps two: 100k floats as objects were 3.2 MB each)."""
    return array("d", itertools.accumulate(cleaned(tokens), operator.add, initial=0.0))


def pixel_spans(
    keys: Sequence[int],
    kinds: Sequence[str],
    cum: Sequence[float],
    scale: float,
    width: int,
    x0: int = 0,
    *,
    first: int = 0,
    offset: float = 0.0,
    estimated_from: int | None = None,
) -> list[Span]:
    """Spans of items ``first…`` placed from token ``offset`` on, one per run of pixel columns.

    Each pixel column shows the item at its left edge, so the work is O(width · log items) and the
    result has at most ``width`` spans, whatever the number of items (items thinner than a pixel
    between two columns are not drawn; hovering finds the one under the column). ``cum`` is
    :func:`cumulative` of all items; items from ``estimated_from`` on are marked estimated.
    """
    n = len(cum) - 1
    if n <= first or scale <= 0 or width <= 0:
        return []
    base = cum[first] - offset  # token position t on the bar ↔ cum value t + base
    end_tokens = cum[n] - base
    px_from = round(width * min(max(offset, 0.0), scale) / scale)
    px_to = round(width * min(end_tokens, scale) / scale)
    per_px = scale / width
    est_from = n if estimated_from is None else estimated_from
    bisect_right = bisect.bisect_right
    out: list[Span] = []
    px = px_from
    while px < px_to:
        # the item under this column's centre, then jump to the first column past its end
        j = bisect_right(cum, (px + 0.5) * per_px + base, first, n + 1) - 1
        if j >= n:
            j = n - 1
        nxt = math.ceil((cum[j + 1] - base) / per_px - 0.5)
        nxt = min(px_to, nxt if nxt > px else px + 1)
        out.append(
            Span(keys[j], kinds[j], x0 + px, nxt - px, cum[j] - base, cum[j + 1] - cum[j], j, j >= est_from)
        )
        px = nxt
    return out


@dataclass(frozen=True, slots=True)
class AfterItems:
    """The projected context after the planned compaction (``PlanState.after_tokens``) as the
    bar's 'after' row places it: the new compaction's items first (pi 1.6.0's system snapshot,
    then the summary), then the kept context items.

    Under pi 0.80.2 every context item from the first kept one on is kept; pi 1.6.0 leaves the
    kept range's system messages out (the snapshot replays them), so ``kept`` names the items
    that stay and ``kept_cum`` cumulates their estimates."""

    head: list[tuple[int, str, float]]
    head_total: float
    first: int  # index into item_tokens of the first kept context item
    kept: list[int] | None  # the kept items' indices; None: every item from ``first`` on
    kept_cum: Sequence[float] | None
    total: float  # the projected context's tokens: what pi estimates after the compaction


def after_items(state: PlanState, est_cum: Sequence[float] | None = None) -> AfterItems | None:
    """``state``'s projected context for the bar (None when nothing is planned).

    O(kept items); ``after_tokens`` is itself rebuilt per plan and per summary edit. ``est_cum``:
    :func:`cumulative` of the plan's item estimates, if the caller has it: where every item from the
    first kept one on stays (pi 0.80.2; 1.6.0 without system messages there) the kept total is then
    a difference of two of its sums, not a sum over the kept items (the window's bar, on each move of
    the keepRecentTokens slider: ~70 ms for 19k kept items of a long path)."""
    after, fk = state.after_tokens, state.first_kept_item
    if not after or fk is None:
        return None
    h = next(
        (i + 1 for i, (key, kind, _) in enumerate(after) if key == -1 and kind == "compactionSummary"), 0
    )
    head = list(after[:h])
    rest = after[h:]
    items = state.item_tokens
    n = len(items)
    kept: list[int] | None = None
    kept_cum: Sequence[float] | None = None
    if len(rest) != n - fk:
        # a subsequence of the items from fk on: only (1.6.0) system messages are skipped, and a
        # kept item is never one, so matching by position and kind in order is exact
        kept = []
        j = fk
        for key, kind, _ in rest:
            while j < n and (items[j][0] != key or items[j][1] != kind):
                j += 1
            if j == n:
                raise ValueError("the projected context's kept items are not the plan's context items")
            kept.append(j)
            j += 1
        kept_cum = cumulative([items[j][2] for j in kept])
    head_total = sum(_clean(t) for _, _, t in head)
    if kept is None and est_cum is not None and len(est_cum) == n + 1:
        kept_total = est_cum[n] - est_cum[fk]  # the same items (after_tokens holds item_tokens' tuples)
    else:
        kept_total = sum(_clean(t) for _, _, t in rest)
    return AfterItems(head, head_total, fk, kept, kept_cum, head_total + kept_total)


def after_spans(
    after: AfterItems,
    keys: Sequence[int],
    kinds: Sequence[str],
    est_cum: Sequence[float],
    scale: float,
    width: int,
    x0: int = 0,
) -> list[Span]:
    """The 'after' row: the head items one span each, then the kept items as :func:`pixel_spans`
    places them (``keys``/``kinds``/``est_cum`` over all context items; the spans' ``item`` indexes
    them)."""
    out: list[Span] = []
    start = 0.0
    for key, kind, t in after.head:
        t = _clean(t)
        x = token_x(start, scale, width, x0)
        out.append(Span(key, kind, x, token_x(start + t, scale, width, x0) - x, start, t))
        start += t
    if after.kept is None:
        return out + pixel_spans(keys, kinds, est_cum, scale, width, x0, first=after.first, offset=start)
    kept = after.kept
    assert after.kept_cum is not None
    sub = pixel_spans(
        [keys[j] for j in kept], [kinds[j] for j in kept], after.kept_cum, scale, width, x0, offset=start
    )
    return out + [dataclasses.replace(s, item=kept[s.item]) for s in sub]


@dataclass(frozen=True, slots=True)
class PlanBar:
    """A plan's bar at one width: the scale (tokens across the full width) and both rows."""

    scale: float
    fill_cum: Sequence[float]  # cumulative pi's count per context item (see :func:`fill_tokens`)
    est_cum: Sequence[float]  # cumulative chars/4 estimate per context item
    now: list[Span]  # the context pi builds now
    after: list[Span]  # the projected context after the planned compaction (see AfterItems)
    after_total: float
    estimated_from: int  # items from here on are counted by the estimate only


def plan_bar(state: PlanState, width: int, x0: int = 0) -> PlanBar:
    """Both rows of ``state``'s token bar on ``width`` pixels (columns) from ``x0``.

    When pi shows the context size as unknown, no provider usage is spread over the items (the
    row shows their estimates) and the plan's own count does not stretch the bar.
    """
    items = state.item_tokens
    keys = [k for k, _, _ in items]
    kinds = [k for _, k, _ in items]
    est = [t for _, _, t in items]
    tok = state.tokens
    unknown = tokens_unknown_text(state) is not None
    last = tok.last_usage_index if tok is not None and not unknown else None
    usage = float(tok.usage_tokens) if tok is not None and isinstance(tok.usage_tokens, int | float) else 0.0
    fill_cum = cumulative(fill_tokens(est, last, usage))
    est_cum = cumulative(est)
    estimated_from = (last + 1) if last is not None else 0
    projected = after_items(state, est_cum)
    after_total = projected.total if projected is not None else 0.0
    counted = state.context_tokens if not unknown else 0.0
    scale = float(max(state.window, fill_cum[-1], after_total, counted, 1))
    now = pixel_spans(keys, kinds, fill_cum, scale, width, x0, estimated_from=estimated_from)
    after: list[Span] = []
    if projected is not None:
        after = after_spans(projected, keys, kinds, est_cum, scale, width, x0)
    return PlanBar(scale, fill_cum, est_cum, now, after, after_total, estimated_from)
