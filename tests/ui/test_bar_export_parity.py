"""The HTML export's static token bar and the window's token bar place the same segments.

Both draw core.bar_geometry's spans: for one plan and one width, the export's rectangles are the
window's 'now' and 'after' spans (kind, offset from the bar's left edge, width)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.bar_geometry import Span, plan_bar
from session_studio.export.bar_svg import _X0, COLUMNS, KIND_NAMES, bar_figure
from session_studio.ui.document import SessionDocument
from session_studio.ui.token_bar import LABEL_W, PAD, BarLayout

_FIXTURES = Path(__file__).resolve().parents[1] / "oracle" / "fixtures"
_RECT = re.compile(r'<rect class="k-(\w+)" x="(\d+)" y="(\d+)" width="(\d+)" height="\d+"/>')


def _row(spans: list[Span], x0: int) -> list[tuple[str, int, int]]:
    return [(s.kind if s.kind in KIND_NAMES else "meta", s.x - x0, s.w) for s in spans if s.w > 0]


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "split-turn"])
def test_export_bar_has_the_windows_segments(
    qtbot: Any, runner: Any, split_turn_session: Path, name: str
) -> None:
    path = split_turn_session if name == "split-turn" else _FIXTURES / name
    d = SessionDocument(runner)
    d.open(str(path))
    qtbot.waitUntil(lambda: d.state is not None)
    st = d.state
    assert st is not None and st.after_tokens
    lay = BarLayout(st, COLUMNS + LABEL_W + 2 * PAD)  # a window bar exactly COLUMNS pixels wide
    assert lay.w == COLUMNS
    svg = bar_figure(st).svg
    rows: dict[int, list[tuple[str, int, int]]] = {}
    for kind, x, y, w in _RECT.findall(svg):
        if int(y) > 20:  # the legend's swatches sit above the rows
            rows.setdefault(int(y), []).append((kind, int(x) - _X0, int(w)))
    now_y, after_y = sorted(rows)
    window_now, window_after = _row(lay.now, lay.x0), _row(lay.after, lay.x0)
    assert len(window_now) > 3 and len(window_after) > 1
    assert rows[now_y] == window_now
    assert rows[after_y] == window_after
    core = plan_bar(st, COLUMNS)
    assert (_row(core.now, 0), _row(core.after, 0)) == (window_now, window_after)
