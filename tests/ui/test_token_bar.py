from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QPoint

from session_studio.core.bar_geometry import bar_spans, span_at, tile, token_x
from session_studio.ui.document import SessionDocument
from session_studio.ui.theme import current_theme
from session_studio.ui.token_bar import ROW_H, BarLayout, TokenBar

finite = st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False)


@given(
    st.lists(finite, min_size=1, max_size=300),
    st.integers(min_value=0, max_value=5000),
    st.integers(min_value=0, max_value=200),
)
def test_spans_tile_the_width(weights: list[float], width: int, x0: int) -> None:
    spans = tile(weights, width, x0)
    assert len(spans) == len(weights)
    assert spans[0][0] == x0
    for (x, w), (nx, _) in itertools.pairwise(spans):
        assert w >= 0 and x + w == nx
    assert spans[-1][0] + spans[-1][1] == x0 + width


@given(
    st.lists(st.one_of(finite, st.just(float("nan")), st.just(-5.0)), min_size=1, max_size=50),
    st.integers(min_value=1, max_value=3000),
)
def test_bar_spans_stay_inside(tokens: list[float], width: int) -> None:
    segs = [(k, "user", t) for k, t in enumerate(tokens)]
    spans = bar_spans(segs, 200000, width, 10)
    assert all(s.x >= 10 and s.x + s.w <= 10 + width for s in spans)
    for a, b in itertools.pairwise(spans):
        assert a.x + a.w == b.x


def test_span_at_and_token_x() -> None:
    spans = bar_spans([(1, "user", 100), (2, "assistant", 300)], 400, 400)
    assert span_at(spans, 50).key == 1
    assert span_at(spans, 150).key == 2
    assert span_at(spans, 400) is None
    assert token_x(200, 400, 400, 10) == 210


def _doc(qtbot: Any, runner: Any, path: Path) -> SessionDocument:
    d = SessionDocument(runner)
    d.open(str(path))
    qtbot.waitUntil(lambda: d.state is not None)
    return d


def _shown_bar(qtbot: Any, d: SessionDocument) -> TokenBar:
    """A 1000 px wide bar showing the document's plan."""
    bar = TokenBar()
    qtbot.addWidget(bar)
    bar.resize(1000, bar.sizeHint().height())
    bar.set_state(d.state)
    bar.show()
    return bar


def test_bar_pixels(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    bar = _shown_bar(qtbot, d)
    img = bar.grab().toImage()
    lay = BarLayout(d.state, 1000)
    th = current_theme()
    first = max(lay.now, key=lambda s: s.w)  # the widest segment (hatched if estimate-only)
    y = lay.row_y + ROW_H // 2
    seen = {img.pixelColor(first.x + first.w // 2 + dx, y + dy).name() for dx in range(3) for dy in range(3)}
    assert th.role(first.kind).name() in seen
    # the reserve zone is tinted, the free part of the bar is the plain track
    xt = lay.x(d.state.threshold)
    free_x = (lay.now[-1].x + lay.now[-1].w + xt) // 2
    assert img.pixelColor(free_x, y).name() == th.base.name()
    assert img.pixelColor(xt + 20, y + 3).name() != th.base.name()
    # hover text and click → entry
    sp = lay.hit(QPoint(first.x + first.w // 2, y))
    assert sp is not None and sp.key == first.key and "path #" in bar.describe(sp)
    shares = [s for s in lay.now if not s.estimated and s.item >= 0]
    assert shares  # a share of the usage names the entry's own chars/4 estimate beside it
    own = d.state.item_tokens[shares[0].item][2]
    assert f"its own chars/4 estimate: {own:,.0f}" in bar.describe(shares[0])
    with qtbot.waitSignal(bar.entry_clicked) as blocker:
        qtbot.mouseClick(
            bar,
            __import__("PySide6.QtCore").QtCore.Qt.MouseButton.LeftButton,
            pos=QPoint(first.x + first.w // 2, y),
        )
    assert blocker.args == [first.key]


def test_projected_bar_shorter(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    st_ = d.state
    assert st_.after_tokens and st_.after_tokens[0][1] == "compactionSummary"
    assert sum(t for *_, t in st_.after_tokens) < sum(t for *_, t in st_.item_tokens)


def test_fill_is_the_number_pi_uses(qtbot: Any, runner: Any) -> None:
    """Issue 9 #5: on the before-compaction fixture the headline says 180,820 / 200,000 but the fill
    stopped at the chars/4 sum (~139k). The fill now ends at pi's count, the estimated tail is
    hatched, and every mark has a hover text."""
    fixture = Path(__file__).resolve().parents[1] / "oracle" / "fixtures" / "before-compaction.jsonl"
    d = _doc(qtbot, runner, fixture)
    st_ = d.state
    assert round(st_.context_tokens) == 180820
    bar = TokenBar()
    qtbot.addWidget(bar)
    bar.resize(1000, bar.sizeHint().height())
    bar.set_state(st_)
    lay = bar.layout_
    assert abs(lay.fill_total - st_.context_tokens) < 1e-6 * st_.context_tokens
    end = lay.now[-1].x + lay.now[-1].w
    assert abs(end - lay.x(st_.context_tokens)) <= 1
    tok = st_.tokens
    assert tok is not None and tok.last_usage_index is not None
    # spans after the last valid usage are marked estimate-only, the ones before are not
    assert all(s.estimated == (s.item > tok.last_usage_index) for s in lay.now)
    img = bar.grab().toImage()
    assert img.width() >= 1000
    names = {name for name, *_ in lay.marks()}
    assert {"threshold", "cut", "usage", "reserve", "keep"} <= names
    for name, a, b, _text in lay.marks():
        y = lay.row_y + ROW_H + 4 if name == "keep" else lay.row_y + 2
        text = bar.describe_at(QPoint((a + b) // 2, y))
        assert text, name
    bar.grab()  # the legend is laid out while painting
    for name, a, b in bar._legend_boxes:
        assert bar.describe_at(QPoint((a + b) // 2, lay.legend_y + 3)), name


def test_theme_colours_cannot_be_changed_by_a_caller() -> None:
    """SessionTreeModel.data() set alpha 55 on the shared theme's cut colour: the bar's cut line faded."""
    th = current_theme()
    c = th.cut
    c.setAlpha(55)
    assert th.cut.alpha() == 255
    assert th.cut_bg.alpha() == 55


def test_pixel_spans_are_bounded_by_the_width_and_fill_is_pis_count() -> None:
    """The bar's work does not grow with the session: at most one span per pixel column."""
    from session_studio.core.bar_geometry import cumulative, fill_tokens, pixel_spans

    n = 100_000
    est = [float(10 + (k % 7)) for k in range(n)]
    fill = fill_tokens(est, 59_999, 500_000.0)
    assert abs(sum(fill[:60_000]) - 500_000.0) < 1e-3 and fill[60_000:] == est[60_000:]
    cum = cumulative(fill)
    keys, kinds = list(range(n)), ["user"] * n
    spans = pixel_spans(keys, kinds, cum, cum[-1], 800, 10, estimated_from=60_000)
    assert 0 < len(spans) <= 800
    assert spans[0].x == 10 and spans[-1].x + spans[-1].w == 810
    for a, b in itertools.pairwise(spans):
        assert a.x + a.w == b.x and a.item < b.item
    assert all(s.estimated == (s.item >= 60_000) for s in spans)
    scale = (cum[-1] - cum[90_000]) * 2
    tail = pixel_spans(keys, kinds, cum, scale, 800, 10, first=90_000, offset=scale / 4)
    assert tail[0].x == 10 + 200 and tail[0].item >= 90_000
    assert tail[-1].x + tail[-1].w == 10 + 200 + 400 and tail[-1].item > n - 400


def _compacted_with_stale_usage(path: Path) -> Path:
    """A compaction keeps an assistant answer whose usage (90,050) is from before the compaction, and
    no answer came after it: pi shows the context size as unknown (§4.7)."""
    import json

    from .conftest import write_session

    compaction = {
        "type": "compaction",
        "summary": "s" * 400,
        "firstKeptEntryId": "e0002",
        "tokensBefore": 9e4,
    }
    write_session(
        path, [("user", 100), ("assistant", 100), ("user", 100), ("assistant", 100), compaction, ("user", 50)]
    )
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[4]["message"]["usage"].update(input=90000, totalTokens=90050)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_unknown_context_size_is_shown_hatched_and_labelled_not_a_made_up_number(
    qtbot: Any, runner: Any, tmp_path: Path
) -> None:
    from session_studio.core.explain import tokens_unknown_text

    d = _doc(qtbot, runner, _compacted_with_stale_usage(tmp_path / "c.jsonl"))
    d.set_params(reserve=100, window=1000)  # a small window: the estimates are wide on the bar
    st_ = d.state
    assert st_ is not None and st_.tokens_unknown
    assert st_.context_tokens > 90000  # the plan (pi 0.80.2) counts the stale usage
    reason = tokens_unknown_text(st_)
    assert reason is not None and "path #4" in reason
    bar = TokenBar()
    qtbot.addWidget(bar)
    bar.resize(1000, bar.sizeHint().height())
    bar.set_state(st_)
    lay = bar.layout_
    assert lay.unknown == reason
    # no provider usage spread over the row: the chars/4 estimates, all marked estimated
    assert abs(lay.fill_total - lay.est_now) < 1e-6 and lay.fill_total < 1000
    assert lay.now and all(s.estimated for s in lay.now)
    names = {name for name, *_ in lay.marks()}
    assert "unknown" in names and "usage" not in names
    y = lay.row_y + ROW_H // 2
    widest = max(lay.now, key=lambda s: s.w)
    assert reason[1:] in bar.describe_at(QPoint(widest.x + widest.w // 2, y))
    assert reason[1:] in bar.describe_at(QPoint(lay.x0 + 5, lay.top_text + 4))  # the header
    img = bar.grab().toImage()  # paints the veil, the label and the legend entry
    assert any(name == "unknown" for name, *_ in bar._legend_boxes)
    assert not any(name in ("usage", "usage_fill") for name, *_ in bar._legend_boxes)
    for name, a, b in bar._legend_boxes:
        if name == "unknown":
            assert reason[1:] in bar.describe_at(QPoint((a + b) // 2, lay.legend_y + 3))
    assert img.width() >= 1000
    # the planner says the same sentence
    from session_studio.ui.planner import PlannerPanel

    panel = PlannerPanel()
    qtbot.addWidget(panel)
    panel.set_state(st_)
    assert reason[1:] in panel.cut_details.text()


def test_a_known_context_size_has_no_unknown_mark(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = _doc(qtbot, runner, split_turn_session)
    lay = BarLayout(d.state, 1000)
    assert lay.unknown is None
    assert "unknown" not in {name for name, *_ in lay.marks()}


def test_the_real_token_text_repaints_its_row_only(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    """A count's progress ("counting 41 %", ~100 times on a long path) repaints the legend's row,
    not the rows of spans, and what that row shows is what a whole paint shows there."""
    from PySide6.QtGui import QImage, QRegion

    from session_studio.ui import token_bar
    from session_studio.ui.real_tokens import PathTokensView

    d = _doc(qtbot, runner, split_turn_session)
    bar = _shown_bar(qtbot, d)
    qtbot.waitExposed(bar)
    drawn: list[int] = []
    real_draw = token_bar.TokenBar._draw_spans

    def counting(self: Any, *args: Any, **kw: Any) -> None:
        drawn.append(1)
        real_draw(self, *args, **kw)

    token_bar.TokenBar._draw_spans = counting  # type: ignore[method-assign]
    try:
        qtbot.wait(50)
        drawn.clear()
        bar.set_real(PathTokensView(None, "counting 41 %"))
        qtbot.wait(50)
        assert drawn == []  # the spans were not drawn again
        whole = bar.grab().toImage()
        assert drawn  # a whole paint draws them
    finally:
        token_bar.TokenBar._draw_spans = real_draw  # type: ignore[method-assign]
    strip = bar._legend_strip()
    part = QImage(whole.size(), whole.format())
    part.fill(0)
    bar.render(part, strip.topLeft(), QRegion(strip))  # a paint of that row alone, where it is
    assert part.copy(strip) == whole.copy(strip)
    assert "counting 41 %" in bar.describe_at(QPoint(bar.width() - 20, strip.y() + 5))


def test_what_real_tokens_change_comes_first_where_the_row_is_short() -> None:
    """At 960 px the real-token row was cut to "real 161,325 (…) vs chars/4 139,…": the cut
    moving, its point, went. Where the whole text does not fit, the changes come first."""
    from types import SimpleNamespace

    from session_studio.ui.token_bar import real_legend_text

    view = SimpleNamespace(
        header=lambda: "real 161,325 (≈ o200k, approximation for claude) vs chars/4 139,429",
        notes=lambda: ["with real tokens the cut moves #24 → #16"],
    )
    wide = real_legend_text(view, 10_000, len)  # type: ignore[arg-type]
    assert wide.startswith("real 161,325") and wide.endswith("#24 → #16")
    short = real_legend_text(view, 60, len)  # type: ignore[arg-type]
    assert short.startswith("with real tokens the cut moves #24 → #16  ·  real 161,325")
    quiet = SimpleNamespace(header=view.header, notes=lambda: [])
    assert real_legend_text(quiet, 10, len) == view.header()  # type: ignore[arg-type]


def test_no_usage_swatch_when_no_usage_is_counted(qtbot: Any) -> None:
    """m6 under pi 1.6.0: its answer's usage is older than the context edits (rule 22), so the bar
    counts none and draws no usage, yet the legend showed "usage" and "usage tick"."""
    from session_studio.core import Session
    from session_studio.core.plan import PathPlanner, PlanParams
    from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0

    case = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases" / "m6-recovery.jsonl"
    session = Session.open(case)
    for profile, counted in ((PROFILE_1_6_0, False), (PROFILE_0_80_2, True)):
        state = PathPlanner(session, profile=profile).plan(PlanParams())
        assert state.tokens is not None and (state.tokens.last_usage_index is not None) == counted
        bar = TokenBar()
        qtbot.addWidget(bar)
        bar.resize(1000, bar.sizeHint().height())
        bar.set_state(state)
        bar.grab()  # the legend is laid out while painting
        shown = {name for name, *_ in bar._legend_boxes}
        assert ("usage" in shown) == counted and ("usage_fill" in shown) == counted, (profile.version, shown)
