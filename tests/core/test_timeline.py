"""The context timeline's data: points, drops, markers, limits, planned drop, downsampling, SVG.

The reference values come from elsewhere than the timeline's segment walk: hand-counted chars/4 on
a built session, the context pi builds for a leaf at each compaction (buildSessionContext /
the 1.6.0 projection), the raw usage of each message, and the PlanState the token bar draws.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import xml.etree.ElementTree as ET
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core.context import build_session_context
from session_studio.core.jsvalue import u16len
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.session import Session
from session_studio.core.timeline import Limits, Timeline, branch_leaf, build_timeline, downsample
from session_studio.core.timeline_layout import (
    LABEL_DESCENT,
    LIMIT_LABEL_HEIGHT,
    PlotArea,
    drop_text,
    layout_timeline,
    svg_label_width,
    with_plan_of,
)
from session_studio.core.timeline_svg import timeline_svg
from session_studio.core.tokens import assistant_usage_tokens
from tests.conftest import FIXTURES, ORACLE16_DIR, generate
from tests.core.util import A, U, session_of

PROFILES = [PROFILE_0_80_2, PROFILE_1_6_0]


def _compaction(summary: str, first_kept: str, before: int, **kw: Any) -> dict[str, Any]:
    return {
        "type": "compaction",
        "summary": summary,
        "firstKeptEntryId": first_kept,
        "tokensBefore": before,
        **kw,
    }


def _hand_session() -> Session:
    # e0 user 400 chars (100 tokens); e1 assistant, usage 150; e2 user 80 (20); e3 aborted assistant
    # 40 chars (10, usage not valid); e4 compaction keeping from e2, summary 48 chars (12 tokens);
    # e5 model change; e6 user 20 (5); e7 failed assistant (stopReason error) 8 chars (2)
    return session_of(
        U(400),
        A(40, total=150),
        U(80),
        A(40, total=999, stop="aborted"),
        _compaction("s" * 48, "e2", 777),
        {"type": "model_change", "provider": "openai", "modelId": "gpt-<b>"},
        U(20),
        A(8, total=500, stop="error"),
    )


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
def test_points_drops_and_markers_of_a_hand_counted_session(profile: PiProfile) -> None:
    s = _hand_session()
    tl = build_timeline(PathPlanner(s, profile=profile))
    # e1: provider usage; e3: aborted, so the estimate of e0..e3 = 100+10+20+10; e7: estimate of
    # the rebuilt context: summary 12 + kept e2, e3 (20+10) + e6 5 + e7 2
    assert list(tl.positions) == [1, 3, 7]
    assert list(tl.tokens) == [150.0, 140.0, 49.0]
    assert list(tl.from_usage) == [1, 0, 0]
    (drop,) = tl.drops
    assert (drop.position, drop.entry_id, drop.tokens_before, drop.tokens_after, drop.summary_tokens) == (
        4,
        "e4",
        777.0,
        42.0,
        12.0,
    )
    (marker,) = tl.markers
    assert (marker.kind, marker.label, marker.position) == ("model_change", "openai/gpt-<b>", 5)


def _reference_after(session: Session, path: list[int], k: int, profile: PiProfile) -> float:
    """The context pi builds for a leaf at the compaction itself, summed item by item."""
    if profile.projection:
        return sum(t for _, _, t in PathPlanner(session, path[k], profile=profile).item_tokens)
    ctx = build_session_context(session, path=path[: k + 1])
    return float(sum(ctx.message_tokens()))


def _check_drops(session: Session, profile: PiProfile) -> int:
    planner = PathPlanner(session, profile=profile)
    tl = build_timeline(planner)
    path = planner.path
    compactions = [k for k, r in enumerate(path) if session.records[r].type == "compaction"]
    assert [d.position for d in tl.drops] == compactions
    for d in tl.drops:
        value = session.value(path[d.position])
        assert d.tokens_before == value["tokensBefore"]
        assert d.tokens_after == _reference_after(session, path, d.position, profile)
        assert d.summary_tokens == math.ceil(u16len(value["summary"]) / 4)
    return len(tl.drops)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
def test_drops_equal_tokens_before_to_after_on_real_pi_sessions(profile: PiProfile) -> None:
    assert _check_drops(Session.open(FIXTURES / "before-compaction.jsonl"), profile) == 2


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
def test_drops_equal_tokens_before_to_after_on_generated_sessions(profile: PiProfile, tmp_path: Path) -> None:
    files = generate(tmp_path / "gen", "--seed", "5", "--count", "4", "--size", "medium")
    assert sum(_check_drops(Session.open(f), profile) for f in files) >= 3


def test_the_drop_after_a_1_6_0_compaction_holds_the_system_snapshot() -> None:
    assert (
        _check_drops(Session.open(ORACLE16_DIR / "cases" / "m7-split-after-compaction.jsonl"), PROFILE_1_6_0)
        == 1
    )
    snapshot = {"role": "system", "content": "y" * 40, "timestamp": 1}  # 10 tokens
    s = session_of(
        {"type": "message", "message": {"role": "system", "content": "x" * 80, "timestamp": 1}},
        U(400),
        A(40, total=150),
        U(80),
        A(40, total=160),
        _compaction("s" * 48, "e3", 777, systemMessage=snapshot),
        U(20),
        A(8, total=500, stop="error"),
    )
    (drop,) = build_timeline(PathPlanner(s, profile=PROFILE_1_6_0)).drops
    # snapshot 10 + summary 12 + kept e3 (20) and e4 (10); 0.80.2 has no snapshot: 42
    assert (drop.tokens_after, drop.summary_tokens, drop.snapshot_tokens) == (52.0, 12.0, 10.0)
    # the hover names the snapshot in the drop (an audit read "summary 12" as all that came back)
    assert "system snapshot + summary + kept" in drop_text(drop) and "snapshot 10 tokens" in drop_text(drop)
    old = build_timeline(PathPlanner(s, profile=PROFILE_0_80_2)).drops[0]
    assert old.tokens_after == 42.0 and math.isnan(old.snapshot_tokens) and "snapshot" not in drop_text(old)
    assert _check_drops(s, PROFILE_1_6_0) == 1


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.version)
@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_points_agree_with_the_usage_and_the_token_bar(name: str, profile: PiProfile) -> None:
    s = Session.open(FIXTURES / name)
    planner = PathPlanner(s, profile=profile)
    state = planner.plan(PlanParams())
    tl = build_timeline(planner, state)
    path = planner.path
    last_compaction = max((k for k, r in enumerate(path) if s.records[r].type == "compaction"), default=-1)
    assistants = [
        k for k, r in enumerate(path) if s.records[r].type == "message" and s.records[r].role == "assistant"
    ]
    assert list(tl.positions) == assistants
    # the token bar's items, in context order: the context at an assistant is the sum up to it
    running: dict[int, float] = {}
    total = 0.0
    for rec, _, t in state.item_tokens:
        total += t
        running[rec] = total
    checked_estimates = 0
    for k, pos in enumerate(tl.positions):
        message = s.value(path[pos])["message"]
        usage = assistant_usage_tokens(message)
        assert bool(tl.from_usage[k]) == (usage is not None)
        if usage is not None:
            assert tl.tokens[k] == usage
        elif pos > last_compaction:
            assert tl.tokens[k] == running[path[pos]]
            checked_estimates += 1
    assert tl.usage_count() > 0 and len(tl) > tl.usage_count()
    assert checked_estimates > 0
    # the limits and the planned drop are the plan's
    assert tl.limits == Limits(state.window, state.reserve, state.window_known)
    assert tl.planned is not None
    assert tl.planned.tokens_before == state.context_tokens
    assert tl.planned.tokens_after == sum(t for _, _, t in state.after_tokens)


def test_with_plan_moves_the_lines_and_the_planned_drop() -> None:
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    tl = build_timeline(planner, planner.plan(PlanParams()))
    small = planner.plan(PlanParams(keep_recent_tokens=5000, reserve_tokens=30000, context_window=190000))
    moved = tl.with_plan(small)
    assert moved.limits.threshold == 160000
    assert moved.planned is not None and tl.planned is not None
    assert moved.planned.tokens_after < tl.planned.tokens_after
    assert moved.positions is tl.positions  # the history is shared, not rebuilt
    nothing = planner.plan(PlanParams(keep_recent_tokens=10**9))
    assert tl.with_plan(nothing).planned is None


def _timeline_of(positions: list[int], tokens: list[float], usage: list[int]) -> Timeline:
    return Timeline(
        "0.80.2",
        max(positions, default=0) + 1,
        None,
        array("q", positions),
        array("q", positions),
        array("d", tokens),
        array("b", usage),
        (),
        (),
        Limits(200000, 16384, True),
        None,
    )


def test_downsampling_keeps_each_column_s_min_max_and_last() -> None:
    rnd = random.Random(7)
    positions = sorted(rnd.sample(range(100_000), 20_000))
    tokens = [rnd.uniform(0, 200_000) for _ in positions]
    usage = [rnd.random() < 0.9 for _ in positions]
    tl = _timeline_of(positions, tokens, [int(u) for u in usage])
    cols = downsample(tl, 0, tl.x_end, 300)
    width = tl.x_end / 300
    expected: dict[int, list[int]] = {}
    for i, p in enumerate(positions):
        expected.setdefault(min(int(p / width), 299), []).append(i)
    assert list(cols.column) == sorted(expected)
    for j, c in enumerate(cols.column):
        idx = expected[c]
        assert cols.low[j] == min(tokens[i] for i in idx)
        assert cols.high[j] == max(tokens[i] for i in idx)
        assert cols.last[j] == tokens[idx[-1]] and cols.last_point[j] == idx[-1]
        assert cols.estimates[j] == sum(not usage[i] for i in idx)
    assert min(cols.low) == min(tokens) and max(cols.high) == max(tokens)


def test_layout_breaks_the_line_at_drops_and_styles_estimates() -> None:
    s = _hand_session()
    tl = build_timeline(PathPlanner(s))
    lay = layout_timeline(tl, PlotArea(0, 0, 800, 200))
    ((_, drop_x, y_before, y_after),) = lay.drops
    assert [r.estimate for r in lay.runs] == [False, True, True]
    assert lay.runs[1].xs[-1] == drop_x and lay.runs[1].ys[-1] == y_before
    assert lay.runs[2].xs[0] == drop_x and lay.runs[2].ys[0] == y_after
    hit = lay.hit(drop_x, 100)
    assert hit is not None and (hit.kind, hit.record) == ("drop", tl.drops[0].record)
    far = lay.hit(799, 100)
    assert far is not None and far.kind == "point" and far.record == tl.records[-1]


def test_the_svg_is_static_and_escapes_hostile_labels() -> None:
    hostile = '<script>alert(1)</script>"<img src=http://evil.example/x>'
    s = session_of(
        U(400),
        A(40, total=150),
        _compaction("s" * 48, "e0", 777),
        {"type": "model_change", "provider": hostile, "modelId": "javascript:alert(1)"},
        {"type": "branch_summary", "fromId": "e0", "summary": hostile, "id": hostile},
        U(20),
        A(8, total=300),
    )
    svg = timeline_svg(build_timeline(PathPlanner(s)), width=640, height=200)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    tags = {el.tag.rsplit("}", 1)[-1] for el in root.iter()}
    assert tags <= {"svg", "title", "rect", "line", "text", "path", "circle", "g"}
    attributes = {name.rsplit("}", 1)[-1].lower() for el in root.iter() for name in el.attrib}
    assert not attributes & {"href", "src", "style"} and not any(a.startswith("on") for a in attributes)
    assert "url(" not in svg
    # the hostile strings survive as text of the tooltips, not as markup
    titles = [el.text or "" for el in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any(hostile in t and "javascript:alert(1)" in t for t in titles)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&lt;img src=http://evil.example/x&gt;" in svg
    assert svg.count("<title>") >= 1 + 3  # the chart, the drop and both markers


def test_the_svg_stays_well_formed_with_control_and_bidi_characters() -> None:
    """A model name may hold characters XML refuses even escaped (NUL, ESC) and bidi overrides:
    the SVG stays parseable (a browser shows nothing of an ill-formed one) and shows them as escapes."""
    name = "evil\x00\x1b[31m\u202ereversed\ufffe"
    s = session_of(
        U(400),
        A(40, total=150),
        {"type": "model_change", "provider": name, "modelId": "m\x07"},
        U(20),
        A(8, total=300),
    )
    svg = timeline_svg(build_timeline(PathPlanner(s)), width=640, height=200)
    root = ET.fromstring(svg)  # raises on a character XML does not allow
    titles = " ".join(el.text or "" for el in root.iter("{http://www.w3.org/2000/svg}title"))
    assert "evil\\u0000\\u001b[31m\\u202ereversed\\ufffe" in titles and "m\\u0007" in titles
    assert "\u202e" not in svg and "\x00" not in svg


def test_crowded_drop_labels_are_left_out_not_overlapped() -> None:
    """Compactions a few pixels apart: one label is drawn, every drop keeps its <title>."""
    s = session_of(
        U(400),
        A(40, total=150),
        _compaction("s" * 48, "e0", 777),
        U(20),
        A(8, total=300),
        _compaction("t" * 48, "e0", 888),
        U(20),
        A(8, total=320),
    )
    svg = timeline_svg(build_timeline(PathPlanner(s)), width=200, height=120)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    drops = [g for g in root.iter(f"{ns}g") if "compaction" in (g.findtext(f"{ns}title") or "")]
    labels = [g.findtext(f"{ns}text") for g in drops if g.find(f"{ns}text") is not None]
    assert len(labels) == 1 and len(drops) == 2
    # the second compaction's line stands where "summary 12" would be: the label is the size alone
    assert labels[0] is not None and labels[0][0].isdigit()


def test_close_compactions_label_their_sizes_without_lines_through_them() -> None:
    """30 compactions across 1,100 px: each one's line crossed the "summary N" before it. The
    labels are the sizes alone, and no drop's line runs through a drawn label."""
    parts: list[Any] = [U(400), A(40, total=150_000)]
    for k in range(30):
        parts += [_compaction("s" * 1600, "e0", 150_000), U(20), A(8, total=20_000)]
        parts += [U(20), A(8, total=120_000 + k)]
    planner = PathPlanner(session_of(*parts))
    lay = layout_timeline(build_timeline(planner), PlotArea(40, 10, 1100, 130))
    drawn = [label for label in lay.drop_labels if label is not None]
    assert len(drawn) >= 10 and all(label.text == "400" for label in drawn)
    for label in drawn:
        left, right = label.x, label.x + svg_label_width(label.text)
        assert not any(left <= x <= right for _, x, _, _ in lay.drops), label
    roomy = layout_timeline(build_timeline(planner), PlotArea(40, 10, 6000, 130))
    assert all(label is not None and label.text == "summary 400" for label in roomy.drop_labels)


def test_a_new_plan_keeps_the_history_s_geometry_unless_the_scale_changes() -> None:
    planner = PathPlanner(Session.open(FIXTURES / "before-compaction.jsonl"))
    tl = build_timeline(planner, planner.plan(PlanParams()))
    lay = layout_timeline(tl, PlotArea(40, 10, 700, 180))
    other = tl.with_plan(planner.plan(PlanParams(keep_recent_tokens=3000)))
    kept = with_plan_of(lay, other)
    assert kept is not None and kept.runs is lay.runs and kept.timeline is other
    assert other.planned is not None and kept.planned == layout_timeline(other, lay.area).planned
    assert kept.planned != lay.planned
    assert lay.y_top == 225000  # the peak (window 200k) + 8 %, rounded up to 25k
    slightly = tl.with_plan(planner.plan(PlanParams(context_window=205000)))
    assert with_plan_of(lay, slightly) is not None  # the same scale: only the lines move
    wider = tl.with_plan(planner.plan(PlanParams(context_window=400000)))
    assert with_plan_of(lay, wider) is None  # the y scale follows the window


def test_branch_leaf_follows_the_newest_child_down_to_a_leaf() -> None:
    s = session_of(
        U(40),
        A(8),
        U(40, id="old", parentId="e1"),
        A(8, id="old-a", parentId="old"),
        U(40, id="new", parentId="e1"),
    )
    assert branch_leaf(s, s.get_index("e1")) == s.get_index("new")  # the newest child wins
    assert branch_leaf(s, s.get_index("old")) == s.get_index("old-a")
    assert branch_leaf(s, s.get_index("new")) == s.get_index("new")
    tl = build_timeline(PathPlanner(s, branch_leaf(s, s.get_index("old"))))
    assert tl.leaf_record == s.get_index("old-a") and list(tl.positions) == [1, 3]


def _label_session() -> Session:
    """A compaction that drops the context near the foot, then model changes standing under where
    its label goes."""
    return session_of(
        U(400),
        A(40, total=150_000),
        _compaction("s" * 48, "e0", 150_000),
        {"type": "model_change", "provider": "openai", "modelId": "gpt-4o"},
        {"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        U(20),
        A(8, total=2_000),
        {"type": "model_change", "provider": "openai", "modelId": "gpt-4o"},
        U(20),
        A(8, total=3_000),
    )


def test_drop_labels_stay_above_the_marker_triangles_in_the_svg() -> None:
    """A compaction's label under its dot would cross the row of markers at the chart's foot: it is
    lifted above them (the text's bottom above the triangles' tips wherever they share an x)."""
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(timeline_svg(build_timeline(PathPlanner(_label_session())), width=400, height=160))
    tips = []  # (x left, x right, y of the tip) of each marker triangle
    for el in root.iter(f"{ns}path"):
        d = el.get("d") or ""
        if d.endswith("Z"):
            (_, ty), (lx, _), (rx, _) = [tuple(map(float, p[1:].split(","))) for p in d[:-2].split(" ")]
            tips.append((lx, rx, ty))
    assert len(tips) == 3
    labels = [el for el in root.iter(f"{ns}text") if (el.text or "").startswith("summary ")]
    assert len(labels) == 1
    x, y = float(labels[0].get("x") or 0), float(labels[0].get("y") or 0)
    right = x + svg_label_width(labels[0].text or "")
    under = [tip for lx, rx, tip in tips if lx <= right and rx >= x]
    assert under, "the test needs a marker under the label"
    assert all(y + LABEL_DESCENT <= tip for tip in under), (y, under)


def test_without_markers_under_it_a_drop_label_stays_under_its_dot() -> None:
    s = session_of(
        U(400), A(40, total=150_000), _compaction("s" * 48, "e0", 150_000), U(20), A(8, total=2_000)
    )
    lay = layout_timeline(build_timeline(PathPlanner(s)), PlotArea(40, 10, 300, 120))
    ((_, _, _, y_after),) = lay.drops
    (label,) = lay.drop_labels
    assert label is not None and label.baseline == min(y_after + 12, lay.area.bottom - 2)


def test_the_planned_label_is_not_written_over_a_compactions_label() -> None:
    """A compaction near the end of the path, and the planned one right after it: their labels
    ("summary 100", "planned") were written over each other in the export's chart. "planned" moves
    above the top of its own line; each label's box is clear of the other's."""
    parts = [U(400), A(40, total=150_000)]
    for k in range(8):
        parts += [U(300), A(40, total=20_000 + k * 1000)]
    parts += [_compaction("s" * 400, "e0", 150_000), U(4000), A(8, total=60_000), U(4000), A(8, total=62_000)]
    planner = PathPlanner(session_of(*parts))
    lay = layout_timeline(
        build_timeline(planner, planner.plan(PlanParams(keep_recent_tokens=100))), PlotArea(40, 10, 300, 120)
    )
    (drop_label,) = lay.drop_labels
    planned = lay.planned_label
    assert drop_label is not None and planned is not None and lay.planned is not None

    def box(label: Any) -> tuple[float, float, float, float]:
        return (label.x, label.baseline - 9, label.x + svg_label_width(label.text), label.baseline + 3)

    a, b = box(drop_label), box(planned)
    assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    assert planned.baseline < lay.planned[1]  # above the planned line's top dot


_HAND_TIMELINE = build_timeline(PathPlanner(_hand_session()))


@settings(max_examples=300, deadline=None)
@given(
    window=st.integers(1_000, 2_000_000),
    reserve_share=st.floats(0.0, 0.99),
    height=st.integers(40, 400),
)
def test_the_limit_labels_never_overlap(window: int, reserve_share: float, height: int) -> None:
    """The window, threshold and reserve labels right of the chart: a window of 1.05M and a
    threshold of 1.03M drew "threshold" over "window" (in the window and in the exported SVG, which
    place them with the layout's limit_label_ys). Each label is at its line where there is room."""
    limits = Limits(window, int(window * reserve_share), True)
    lay = layout_timeline(dataclasses.replace(_HAND_TIMELINE, limits=limits), PlotArea(40, 10, 300, height))
    ys = lay.limit_y()
    labels = lay.limit_label_ys()
    assert ys is not None and labels is not None
    y_window, y_threshold = ys
    window_label, threshold_label, reserve_label = labels
    gaps = [abs(a - b) for a, b in itertools.combinations(labels, 2)]
    assert min(gaps) >= LIMIT_LABEL_HEIGHT - 1e-9, (labels, ys)
    assert window_label == y_window
    if y_threshold - y_window >= LIMIT_LABEL_HEIGHT:
        assert threshold_label == y_threshold
    if y_threshold - y_window > 2 * LIMIT_LABEL_HEIGHT:
        assert y_window < reserve_label < y_threshold


def test_a_short_paths_axis_names_each_position_once() -> None:
    """A two-entry path was labelled "#0 #0 #0 #0 #0 #0 #1 #1 #1 #1" (steps of 0.1)."""
    s = session_of(U(400), A(40, total=150))
    tl = build_timeline(PathPlanner(s, profile=PROFILE_1_6_0))
    lay = layout_timeline(tl, PlotArea(60, 10, 900, 150))
    labels = [text for _x, text in lay.x_ticks]
    assert labels == sorted(set(labels), key=labels.index) and labels[0] == "#0"
