"""Where the token bar's and the timeline's keyboard cursors go (pure: core.bar_geometry and
core.timeline_layout; the widgets map keys to these steps, tests/ui/test_keyboard_bar_timeline.py)."""

from __future__ import annotations

import dataclasses
from array import array

from hypothesis import given
from hypothesis import strategies as st

from session_studio.core.bar_geometry import cumulative, item_span, pixel_spans, stepped_item
from session_studio.core.timeline import Drop, Limits, Marker, PlannedDrop, Timeline
from session_studio.core.timeline_layout import Hit, hit_position, stepped_hit

tokens_lists = st.lists(st.floats(min_value=0, max_value=5000, allow_nan=False), min_size=1, max_size=60)


@given(tokens_lists, st.integers(min_value=-5, max_value=70), st.sampled_from([-1, 1]), st.floats(0, 20000))
def test_a_step_stays_on_the_row_and_goes_its_way(
    tokens: list[float], item: int, direction: int, page: float
) -> None:
    cum = cumulative(tokens)
    n = len(tokens)
    start = min(max(item, 0), n - 1)
    moved = stepped_item(cum, item, direction, page)
    assert 0 <= moved < n
    if (direction > 0 and start < n - 1) or (direction < 0 and start > 0):
        assert (moved - start) * direction >= 1  # never stuck before an end, not even on 0-token items
    else:
        assert moved == start
    if page == 0:
        assert abs(moved - start) <= 1


def test_a_page_goes_about_the_tokens_it_is_given() -> None:
    cum = cumulative([100.0] * 100)  # 10,000 tokens, 100 each
    assert stepped_item(cum, 0, 1, 1000.0) == 10
    assert stepped_item(cum, 50, -1, 1000.0) == 40
    assert stepped_item(cum, 95, 1, 1000.0) == 99  # clamped at the end
    assert stepped_item(cum, 3, 1, 1.0) == 4  # a page smaller than the item: still the next one
    assert stepped_item(cumulative([]), 0, 1) == -1


def test_an_item_s_span_is_its_exact_extent_and_agrees_with_the_pixel_row() -> None:
    tokens = [5000.0, 1.0, 1.0, 3000.0, 40.0]
    keys, kinds = [10, 11, 12, 13, 14], ["user", "assistant", "toolResult", "assistant", "user"]
    cum = cumulative(tokens)
    row = pixel_spans(keys, kinds, cum, 10000.0, 500, 40, estimated_from=3)
    for sp in row:  # an item wide enough to have a pixel span: the same span
        assert item_span(keys, kinds, cum, sp.item, 10000.0, 500, 40, estimated_from=3) == sp
    thin = item_span(keys, kinds, cum, 1, 10000.0, 500, 40, estimated_from=3)
    assert (thin.key, thin.tokens, thin.estimated, thin.w) == (11, 1.0, False, 0)  # no pixel: found anyway
    assert item_span(keys, kinds, cum, 4, 10000.0, 500, 40, estimated_from=3).estimated


def _timeline() -> Timeline:
    positions = [0, 1, 2, 3, 5, 6, 7, 8, 9]  # position 4: the compaction (a drop, no point)
    drop = Drop(4, 104, "c", 9000.0, 2000.0, 1500.0)
    marker = Marker(7, 107, "m", "model_change", "a/b", float("nan"))
    return Timeline(
        "0.80.2",
        10,
        109,
        array("q", positions),
        array("q", [100 + p for p in positions]),
        array("d", [1000.0 * (p + 1) for p in positions]),
        array("b", [1] * len(positions)),
        (drop,),
        (marker,),
        Limits(200000, 16384, True),
        PlannedDrop(10, 9000.0, 3000.0, 2000.0, 106),
    )


def test_timeline_steps_walk_points_pages_compactions_and_markers() -> None:
    tl = _timeline()
    first = stepped_hit(tl, None, "next")
    assert first == Hit("point", 0, 100)
    assert stepped_hit(tl, first, "previous") == first  # at the start it stays
    assert stepped_hit(tl, first, "last") == Hit("point", 8, 109)
    assert stepped_hit(tl, first, "page_forward") == Hit("point", 1, 101)  # a tenth of 10 positions
    drop = stepped_hit(tl, Hit("point", 2, 102), "next_compaction")
    assert drop == Hit("drop", 0, 104)
    assert stepped_hit(tl, drop, "next") == Hit("point", 4, 105)  # the first point after the drop
    assert stepped_hit(tl, drop, "previous") == Hit("point", 3, 103)
    planned = stepped_hit(tl, drop, "next_compaction")  # over the marker: compactions only
    assert planned is not None and planned.kind == "planned" and hit_position(tl, planned) == 10
    assert stepped_hit(tl, planned, "next_compaction") == planned  # nothing after it
    assert stepped_hit(tl, planned, "previous_compaction") == drop
    marker = stepped_hit(tl, drop, "next_marker")
    assert marker == Hit("marker", 0, 107)
    assert stepped_hit(tl, marker, "previous_compaction") == drop
    assert stepped_hit(tl, marker, "next_marker") == marker
    at_marker = Hit("point", 6, 107)
    assert stepped_hit(tl, at_marker, "previous_marker") == at_marker  # its own marker is not before it
    assert stepped_hit(tl, at_marker, "next_marker") == marker  # ...but next, at the same place


def test_timeline_steps_on_an_empty_history() -> None:
    tl = dataclasses.replace(
        _timeline(),
        positions=array("q"),
        records=array("q"),
        tokens=array("d"),
        from_usage=array("b"),
        drops=(),
        markers=(),
        planned=None,
    )
    assert stepped_hit(tl, None, "next") is None
    assert stepped_hit(tl, None, "next_compaction") is None
    assert stepped_hit(tl, None, "previous_marker") is None
