"""Issue 11 (the window's memory on 1 GB): what a plan keeps per path entry is compact, and says
exactly what the per-entry objects it replaced said."""

from __future__ import annotations

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathMarks, PathPlanner
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.core.record_table import RecordsAt
from tests.conftest import generate


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> list[Session]:
    out = tmp_path_factory.mktemp("plan-memory")
    files = generate(out, "--seed", "61", "--count", "6", "--size", "medium")
    return [Session.open(str(f), keep_values=False) for f in files]


def _marks_as_a_dict(planner: PathPlanner) -> dict[int, str]:
    """The record → mark dict the planner held before (its construction, verbatim)."""
    marks: dict[int, str] = {}
    pl, path = planner.plan_, planner.path
    if pl is not None:
        b = pl.boundary
        cps = set(pl.planner.cut_points)
        for pos in range(0, min(b.start, len(path))):
            marks[path[pos]] = "summarised"
        for pos in range(b.start, b.end):
            marks[path[pos]] = "valid" if pos in cps else "invalid"
    return marks


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_path_marks_say_what_the_dict_said(sessions: list[Session], profile: PiProfile) -> None:
    checked = 0
    for s in sessions:
        for leaf in {s.leaf_index(), len(s.records) // 2, 3}:
            planner = PathPlanner(s, leaf, profile=profile)
            want = _marks_as_a_dict(planner)
            got = planner.base_marks
            assert isinstance(got, PathMarks)
            assert dict(got) == want and len(got) == len(want) and list(got) == list(want)
            for record in range(-1, len(s.records) + 1):
                assert got.get(record) == want.get(record)
                assert (record in got) == (record in want)
            checked += len(want)
    assert checked > 1000  # the sessions have compactions, cut points and summarised entries


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=lambda p: p.version)
def test_the_cut_planners_records_are_the_paths_made_on_access(
    sessions: list[Session], profile: PiProfile
) -> None:
    for s in sessions:
        planner = PathPlanner(s, profile=profile)
        assert planner.plan_ is not None
        records = planner.plan_.planner.path
        assert isinstance(records, RecordsAt)
        assert len(records) == len(planner.path)
        assert [r.index for r in records] == planner.path
        assert [records[k].index for k in range(len(records))] == planner.path
        assert [r.index for r in records[3:-2]] == planner.path[3:-2]
        assert records[-1].index == planner.path[-1]
        assert all(
            r.id == s.records[i].id and r.type == s.records[i].type
            for r, i in zip(records, planner.path, strict=True)
        )
