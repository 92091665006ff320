"""PathPositions answers as the dict {record: first position} of the path did, holding no dict for
paths in file order (every path pi writes)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from session_studio.core.path_positions import PathPositions


@given(st.lists(st.integers(0, 60), unique=True), st.booleans(), st.integers(-5, 70))
def test_positions_equal_the_dict_of_the_path(records: list[int], in_order: bool, probe: int) -> None:
    path = sorted(records) if in_order else records
    want: dict[int, int] = {}
    for k, r in enumerate(path):
        want.setdefault(r, k)
    got = PathPositions(path)
    assert got.get(probe) == want.get(probe)
    assert got.get(probe, -1) == want.get(probe, -1)
    assert (probe in got) == (probe in want)
    assert dict(got) == want and len(got) == len(want)


def test_a_path_in_file_order_keeps_no_dict() -> None:
    path = list(range(0, 200_000, 3))
    positions = PathPositions(path)
    assert positions._dict is None
    assert positions.get(299_997) is None and positions.get(199_998) == 66_666


@given(
    st.lists(st.integers(0, 60), unique=True),
    st.booleans(),
    st.integers(0, 30),
    st.integers(0, 30),
    st.lists(st.integers(-5, 70), max_size=3),
)
def test_positions_of_many_records_are_each_ones(
    records: list[int], in_order: bool, start: int, length: int, extra: list[int]
) -> None:
    """positions_of answers as get() one by one: for runs of the path (the fast case), a run after
    another record (a compaction before its kept entries), and anything else."""
    path = sorted(records) if in_order else records
    positions = PathPositions(path)
    run = path[start : start + length]
    for asked in (run, extra[:1] + run, extra + run, run + extra, extra, list(reversed(run))):
        assert positions.positions_of(asked) == [positions.get(r, -1) for r in asked]
        assert positions.positions_of(asked, -7) == [positions.get(r, -7) for r in asked]
