"""Token-bar geometry as pure functions (no Qt): segments → pixel spans.

Spans are integer ``(x, width)`` pairs that tile ``[x0, x0 + width)`` exactly, with
no gaps or overlaps, whatever the token values (cumulative rounding).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Span", "bar_spans", "span_at", "tile", "token_x"]


@dataclass(frozen=True, slots=True)
class Span:
    key: int  # record index (-1 for synthetic segments)
    kind: str
    x: int
    w: int
    start: float  # tokens before this segment
    tokens: float


def _clean(t: float) -> float:
    return t if t > 0 and math.isfinite(t) else 0.0


def tile(weights: Sequence[float], width: int, x0: int = 0) -> list[tuple[int, int]]:
    """Integer spans proportional to ``weights`` that exactly tile ``[x0, x0+width)``."""
    n = len(weights)
    if n == 0:
        return []
    width = max(0, int(width))
    ws = [_clean(w) for w in weights]
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
