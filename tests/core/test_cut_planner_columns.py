"""pi 0.80.2's cut planner reads a path's cut points and token estimates from the table's columns
(a long path before its first compaction): the same planner, cut for cut, as the record-by-record
reference, and the reference wherever a message is damaged or its estimate is not an int."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core import cut_points as cut_points_module
from session_studio.core.cut_points import CutPlanner
from session_studio.core.priority import STEP_ITEMS
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.record_table import records_at
from tests.conftest import generate
from tests.core.entry_strategies import MESSAGE


def _planners(session: Session, start: int | None = None) -> tuple[Any, Any]:
    """The planner over the table's records and the reference's over a plain list of them (or
    the error each construction raised: pi throws on a damaged message)."""
    path = session.path_indices(session.leaf_index())
    on_table = records_at(session.records, path)
    as_list = list(on_table)  # not a table's records: the reference, record by record
    lo = 0 if start is None else min(start, len(path))
    fast = _made(lambda: CutPlanner(on_table, lo, len(path)))
    return fast, _made(lambda: CutPlanner(as_list, lo, len(path)))


def _made(make: Any) -> Any:
    try:
        return make()
    except Exception as e:  # pi's TypeError (a damaged message), raised as the reference raises it
        return type(e), str(e)


def _same(fast: Any, ref: Any) -> None:
    if not isinstance(ref, CutPlanner):
        assert fast == ref
        return
    assert fast.cut_points == ref.cut_points
    # repr: NaN estimates are equal as pi prints them, not as floats compare
    assert repr(fast.positions) == repr(ref.positions) and repr(list(fast.sums)) == repr(list(ref.sums))
    assert [type(x) for x in fast.sums] == [type(x) for x in ref.sums]
    assert repr(fast.tokens) == repr(ref.tokens)
    assert (fast.stop_error, fast.stop_nan, fast._monotonic) == (ref.stop_error, ref.stop_nan, ref._monotonic)
    keeps = {0, 1, 2, 7, 100, 20_000, 10**9, *(s for s in ref.sums[:50]), *(s + 1 for s in ref.sums[:50])}
    for keep in sorted(keeps):
        assert _cut_or_error(fast, keep) == _cut_or_error(ref, keep), keep


def _cut_or_error(planner: CutPlanner, keep: float) -> Any:
    try:
        return planner.cut(keep)
    except Exception as e:  # pi's TypeError (a damaged message), raised as the reference raises it
        return type(e), str(e)


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "7501", "--count", "6"],
        ["--seed", "7502", "--count", "6", "--damaged"],
        ["--seed", "7503", "--count", "2", "--legacy"],
    ],
    ids=["plain", "damaged", "legacy"],
)
def test_the_columns_plan_as_the_records_do(tmp_path: Path, args: list[str]) -> None:
    used: list[bool] = []
    real = cut_points_module._plain_range

    def spy(*a: Any) -> Any:
        got = real(*a)
        used.append(got is not None)
        return got

    cut_points_module._plain_range = spy  # type: ignore[assignment]
    try:
        for f in generate(tmp_path, *args):
            for keep in (True, False):
                s = Session.open(f, keep_values=keep, use_cache=False)
                for start in (None, 3):
                    fast, ref = _planners(s, start)
                    _same(fast, ref)
    finally:
        cut_points_module._plain_range = real  # type: ignore[assignment]
    assert any(used)  # the columns were read, not only the reference run twice


def _write(path: Path, messages: list[Any], extra: list[dict[str, Any]]) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": "s",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/w",
    }
    lines = [header]
    parent = None
    entries: list[dict[str, Any]] = [{"type": "message", "message": m} for m in messages] + extra
    for k, e in enumerate(entries):
        lines.append({"id": f"{k:08x}", "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z", **e})
        parent = f"{k:08x}"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


_OTHER = st.sampled_from(
    [
        {"type": "branch_summary", "fromId": "x", "summary": "s"},
        {"type": "custom_message", "customType": "c", "content": "hi", "display": True},
        {"type": "label", "targetId": "00000000", "label": "L"},
        {"type": "model_change", "provider": "p", "modelId": "m"},
        {"type": "message"},  # no message: pi throws reading its role
        {"type": "message", "message": {"role": "toolResult", "content": [], "toolCallId": "t"}},
    ]
)


@settings(max_examples=60, deadline=None)
@given(messages=st.lists(MESSAGE, min_size=1, max_size=12), extra=st.lists(_OTHER, max_size=4))
def test_odd_messages_plan_as_the_records_do(
    tmp_path_factory: pytest.TempPathFactory, messages: Any, extra: Any
) -> None:
    f = _write(tmp_path_factory.mktemp("odd") / "s.jsonl", messages, extra)
    s = Session.open(f, keep_values=False, use_cache=False)
    if s.leaf_index() is None:
        return
    _same(*_planners(s))


CASES_16 = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases"


def _reference_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every column fast path off: the record-by-record reference for both pis."""
    from session_studio.core import projected_plan, projection

    monkeypatch.setattr(cut_points_module, "_plain_range", lambda *_a: None)
    monkeypatch.setattr(projection, "_plain_messages", lambda _s, records, _t, _r: [False] * len(records))
    monkeypatch.setattr(projection, "INT_ESTIMATE_FLAGS", 0)  # no flags & 0 is TOKENS_INT: no raw_estimates
    monkeypatch.setattr(  # each entry's roles asked one by one, not once per distinct tuple
        projected_plan,
        "_with_role",
        lambda roles, wanted: [projected_plan._has_role(r, wanted) for r in roles],
    )
    made = projected_plan.ProjectedCutPlanner.__init__

    def without_estimates(self: Any, *a: Any) -> None:  # the path planner asks each entry's sum
        made(self, *a)
        self.estimates = None

    monkeypatch.setattr(projected_plan.ProjectedCutPlanner, "__init__", without_estimates)
    from session_studio.core import plan

    monkeypatch.setattr(plan.PathPlanner, "_usage_unknown", _usage_unknown_by_records)


def _usage_unknown_by_records(self: Any, visible: set[int]) -> bool:
    """PathPlanner._usage_unknown as it read each record (the reference for the columns' scan)."""
    from session_studio.core.plan import _num

    recs = self.session.records
    path = self.path
    last = next((k for k in range(len(path) - 1, -1, -1) if recs[path[k]].type == "compaction"), -1)
    if last < 0:
        return False
    for i in path[last + 1 :]:
        r = recs[i]
        if r.type == "message" and r.role == "assistant" and i in visible and _num(r.usage_tokens) > 0:
            return False
    return True


def _loads(f: Path) -> Iterator[tuple[Session, PiProfile]]:
    """``f`` opened with its values kept and re-read from the file, each under both pis."""
    for keep in (True, False):
        s = Session.open(f, keep_values=keep, use_cache=False)
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            yield s, profile


def _plans(f: Path) -> list[Any]:
    from session_studio.core.oracle_schema import plan_output

    out = []
    for s, profile in _loads(f):
        got = _made(lambda s=s, profile=profile: plan_output(s, profile=profile))
        if isinstance(got[0], dict) and got[0].get("sessionReset"):
            got[0].pop("header")  # a file without a header gets a fresh one (a new id, the time now)
        out.append(repr(got))
    return out


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "7504", "--count", "5"],
        ["--seed", "7505", "--count", "5", "--damaged"],
        ["cases"],
        ["long-chain"],
    ],
    ids=["plain", "damaged", "pi16-cases", "long-chain"],
)
def test_both_pis_plan_as_the_reference_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """The whole plan output (the oracle's schema) under pi 0.80.2 and pi 1.6.0, with the columns'
    fast paths and with every one of them off: the same, including the errors pi throws; the 1.6.0
    cases add system messages, context edits, usage entries and compactions with snapshots."""
    files = _sessions(tmp_path, args)
    fast = {f.name: _plans(f) for f in files}
    _reference_only(monkeypatch)
    assert {f.name: _plans(f) for f in files} == fast


def _window_plans(f: Path) -> list[Any]:
    """pi 1.6.0's plan in path coordinates (the window's and the CLI's info): its planner's facts."""
    from session_studio.core.projected_plan import ProjectedPathPlan

    out = []
    for keep in (True, False):
        s = Session.open(f, keep_values=keep, use_cache=False)
        path = s.path_indices(s.leaf_index()) if s.leaf_index() is not None else []

        def facts(s: Session = s, path: list[int] = path) -> Any:
            c = ProjectedPathPlan.of(s, path).planner
            keeps = [0, 1, 50, 20_000, *c.sums[:20]]
            return (
                c.start,
                c.end,
                c.cut_points,
                c.positions,
                c.sums,
                c.tokens,
                list(c.tokens),
                c._projected_of,
                [_made(lambda k=k: c.cut(k)) for k in keeps],
                [c.projected_index(k) for k in range(len(path) + 1)],
                [c.reason(k) for k in range(len(path))],
            )

        out.append(repr(_made(facts)))
    return out


def _sessions(tmp_path: Path, args: list[str]) -> list[Path]:
    """The sessions a test runs on: ["chain"] (no compaction), ["cases"] (pi 1.6.0's seven), or
    gen_sessions.py's output for these arguments."""
    if args == ["chain"]:
        return _chain(tmp_path)
    if args == ["long-chain"]:  # more plain messages than the projection's blocks (STEP_ITEMS) hold
        return _chain(tmp_path, 2 * STEP_ITEMS + 100)
    if args == ["cases"]:
        return sorted(CASES_16.glob("*.jsonl"))
    return generate(tmp_path, *args)


def _chain(tmp_path: Path, n: int = 40) -> list[Path]:
    """A path with no compaction (every entry projected, from path position 0 on)."""
    messages: list[Any] = []
    for k in range(n):
        if k % 2:
            usage = {"input": 10 * k, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10 * k + 5}
            messages.append(
                {"role": "assistant", "content": [{"type": "text", "text": f"a{k}"}], "usage": usage}
            )
        else:
            messages.append({"role": "user", "content": f"u{k} " * (k % 40)})
    return [_write(tmp_path / "chain.jsonl", messages, [])]


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "7506", "--count", "4"],
        ["--seed", "7507", "--count", "4", "--damaged"],
        ["cases"],
        ["chain"],
        ["long-chain"],
    ],
    ids=["plain", "damaged", "pi16-cases", "chain", "long-chain"],
)
def test_the_path_coordinates_plan_as_the_reference_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    files = _sessions(tmp_path, args)
    fast = {f.name: _window_plans(f) for f in files}
    _reference_only(monkeypatch)
    assert {f.name: _window_plans(f) for f in files} == fast


@pytest.mark.parametrize("kind", ["chain", "plain", "cases"])
def test_the_path_planners_positions_are_the_plans_path_index(tmp_path: Path, kind: str) -> None:
    """PathCutPlanner looks each projected entry's path position up once; the plan's path_index
    (the oracle's mapping) says the same for every projected index, and the inverse is its inverse."""
    from session_studio.core.projected_plan import PathCutPlanner, plan_projected_compaction

    files = _sessions(tmp_path, [kind] if kind != "plain" else ["--seed", "7508", "--count", "3"])
    for f in files:
        s = Session.open(f, keep_values=False, use_cache=False)
        if s.leaf_index() is None:
            continue
        plan = _made(lambda s=s: plan_projected_compaction(s, s.path_indices(s.leaf_index())))
        if isinstance(plan, tuple):
            continue  # pi throws planning this one (the test above compares that)
        c = PathCutPlanner(plan)
        n = len(plan.projection.entries)
        assert [c.path_position(j) for j in range(-1, n + 1)] == [
            plan.path_index(j) for j in range(-1, n + 1)
        ]
        inverse = {plan.path_index(j): j for j in range(n) if plan.path_index(j) >= 0}
        beyond = len(plan.path)
        assert [c.projected_index(pos) for pos in range(-2, beyond + 2)] == [
            n if pos >= beyond else inverse.get(pos) for pos in range(-2, beyond + 2)
        ]


def _path_planners(f: Path) -> list[Any]:
    """The window's parameter-free plan of the leaf's path under both pis: what it shows."""
    from session_studio.core.plan import PathPlanner

    out = []
    for s, profile in _loads(f):
        p = _made(lambda s=s, profile=profile: PathPlanner(s, profile=profile))
        if not isinstance(p, PathPlanner):
            out.append(repr(p))
            continue
        if profile is PROFILE_0_80_2:  # its counts, as each record's type says them
            types = [s.records[r].type for r in p.path]
            producing = [int(t in ("message", "custom_message", "branch_summary")) for t in types]
            unweighed = [int(t in ("custom_message", "branch_summary")) for t in types]
            assert list(p._producing) == list(itertools.accumulate(producing, initial=0))
            assert list(p._unweighed) == list(itertools.accumulate(unweighed, initial=0))
        facts = (
            p.error,
            p.tokens,
            p.item_tokens,
            p._item_positions,
            p._item_cum,
            p.tokens_unknown,
            list(p._producing),
            list(p._unweighed),
            [p.base_marks.get(r) for r in p.path],
        )
        out.append(repr(facts))
    return out


@pytest.mark.parametrize(
    "args",
    [
        ["chain"],
        ["--seed", "7509", "--count", "4"],
        ["--seed", "7509", "--count", "4", "--damaged"],
        ["cases"],
    ],
    ids=["chain", "plain", "damaged", "cases"],
)
def test_the_windows_path_plan_is_the_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """PathPlanner (the window's plan at load, `info`'s) with the columns' fast paths and without:
    the same items, their positions and running sums, counts, marks, tokens and errors."""
    files = _sessions(tmp_path, args)
    fast = {f.name: _path_planners(f) for f in files}
    _reference_only(monkeypatch)
    assert {f.name: _path_planners(f) for f in files} == fast


def _projected(f: Path) -> list[Any]:
    """Each projection's entries (pi 1.6.0's buildSessionProjection of the leaf's path), asked one
    by one and all at once, with the roles and types the planners read from the columns."""
    from session_studio.core.projection import Projection, build_session_projection

    out: list[Any] = []
    for keep in (True, False):
        s = Session.open(f, keep_values=keep, use_cache=False)
        path = s.path_indices(s.leaf_index()) if s.leaf_index() is not None else []
        proj = _made(lambda s=s, path=path: build_session_projection(s, path=path))
        if not isinstance(proj, Projection):
            out.append(proj)
            continue
        entries = proj.entries
        n = len(entries)
        one_by_one = [entries[k] for k in range(n)]
        for lo, hi in ((0, n), (n // 3, n), (1, max(1, n - 1)), (n - STEP_ITEMS // 2, n)):
            lo = max(0, lo)
            assert entries.roles(lo, hi) == [e.roles for e in one_by_one[lo:hi]]
            assert entries.message_count(lo, hi) == sum(len(e.roles) for e in one_by_one[lo:hi])
            raw = proj.raw_estimates(lo, hi)
            for k, t in zip(range(lo, hi), raw, strict=True):  # an estimate the columns gave is pi's
                if t is not None:
                    assert one_by_one[k].raw and t == proj.entry_token_sum(k)
            if entries.plain(lo, hi):  # the run of plain messages read from the tokens column
                assert None not in raw
        assert list(entries.types) == [s.records.types[e.record] for e in one_by_one]
        assert entries.records == [e.record for e in one_by_one]
        out.append((one_by_one, list(entries), entries[:], proj.records()))
    return out


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "7506", "--count", "5"],
        ["--seed", "7507", "--count", "4", "--damaged"],
        ["cases"],
        ["long-chain"],
    ],
    ids=["plain", "damaged", "pi16-cases", "long-chain"],
)
def test_projected_entries_left_to_the_columns_are_the_ones_made_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """pi 1.6.0's projection makes a plain message's entry only when it is asked (a long path's
    entries are mostly those): asked one by one, all at once or by their roles, they are the
    entries the reference makes record by record, and their estimates are pi's."""
    files = _sessions(tmp_path, args)
    lazy = {f.name: _projected(f) for f in files}
    _reference_only(monkeypatch)
    assert {f.name: _projected(f) for f in files} == lazy


def test_the_window_plans_a_path_of_plain_messages_without_an_object_per_entry(tmp_path: Path) -> None:
    """PathPlanner under pi 1.6.0 reads a plain message's entry from the projection's columns: on a
    100k-entry path the entry objects were 7 MB the window kept. The plan is the one the tests
    above compare with the record-by-record way."""
    from session_studio.core.plan import PathPlanner
    from session_studio.core.projection import Projection

    (f,) = _sessions(tmp_path, ["long-chain"])
    s = Session.open(f, keep_values=False, use_cache=False)
    p = PathPlanner(s, profile=PROFILE_1_6_0)
    assert p.error is None and len(p.item_tokens) == len(p.path)
    assert isinstance(p.context, Projection)
    assert p.context.entries._whole is None


def test_running_totals_are_exact_past_an_int64() -> None:
    """The column path keeps its running totals as int64s; totals past 2**63 (estimates up to 2**53
    each: possible, never real) stay exact Python ints."""
    from session_studio.core.cut_points import RunningSums

    for estimates in ([5, 0, 7], [2**53] * 1100):
        r = RunningSums()
        r._sum_back_ints(list(range(len(estimates))), estimates)
        assert list(r.sums) == list(itertools.accumulate(estimates))
    assert r.budget_index(2**63) == 1023 and r.budget_index(2**63 + 1) == 1024
