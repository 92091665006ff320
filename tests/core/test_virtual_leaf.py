"""Session.with_virtual_leaf: the context a new entry would make, without copying the index.

The preview of a compaction (and the context report) builds the context pi will rebuild once the
entry is appended. with_virtual_entries copied every column of the index for that (72 MB on a
900k-entry session, at each preview of a summary); with_virtual_leaf shares them
(RecordTable.with_tail) and must give the same context.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core.context import build_session_context
from session_studio.core.jsvalue import js_stringify
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.projection import build_session_projection
from session_studio.core.record_table import TailedColumn
from session_studio.engine import draft_compaction
from session_studio.engine.compaction import CompactionOutcome
from tests.conftest import generate


@settings(max_examples=200, deadline=None)
@given(
    typecode=st.sampled_from(["q", "I", "d", "B"]),
    base=st.lists(st.integers(0, 200), max_size=30),
    tail=st.lists(st.integers(0, 200), max_size=5),
    grown=st.lists(st.integers(0, 200), max_size=5),
    index=st.integers(-40, 40),
    lo=st.integers(-40, 40) | st.none(),
    hi=st.integers(-40, 40) | st.none(),
)
def test_a_tailed_column_reads_as_the_base_and_its_own_items(
    typecode: str, base: list[int], tail: list[int], grown: list[int], index: int, lo: Any, hi: Any
) -> None:
    """Indexes, slices, iteration and bytes as the array base + tail would give them; what the base
    gains afterwards (pi's appends, on another thread) is not the column's."""
    column = array(typecode, base)
    tailed = TailedColumn(column)
    for v in tail:
        tailed.append(v)
    column.extend(grown)
    whole = array(typecode, base + tail)
    assert len(tailed) == len(whole) and list(tailed) == list(whole)
    assert tailed.typecode == typecode and tailed.itemsize == whole.itemsize
    if -len(whole) <= index < len(whole):
        assert tailed[index] == whole[index]
    else:
        with pytest.raises(IndexError):
            tailed[index]
    assert tailed[lo:hi] == whole[lo:hi]
    assert tailed.tobytes() == whole.tobytes()
    assert b"".join(raw for _start, raw in tailed.parts()) == whole.tobytes()
    if tail:
        assert tailed.pop() == tail[-1]


def _json(ctx: Any) -> Any:
    return js_stringify(ctx.to_json())


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("gen")
    return generate(out / "a", "--seed", "7301", "--count", "10") + generate(
        out / "b", "--seed", "7302", "--count", "2", "--size", "medium"
    )


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["0.80.2", "1.6.0"])
def test_the_context_after_a_virtual_leaf_is_the_copying_ones(sessions: list[Path], profile: Any) -> None:
    """A compaction's preview: the same context over the shared columns as over a copy of them,
    and the session read is left as it was (no record added, its columns not copied)."""
    compared = 0
    for src in sessions:
        session = Session.open(src)
        if session.migrated or session.reset:
            continue
        try:
            draft = draft_compaction(session, keep_recent_tokens=300, profile=profile)
        except Exception:  # nothing to compact here
            continue
        entry = CompactionOutcome(draft, "## Goal\nsummary").entry().to_json_dict()
        n = len(session.records)
        build = build_session_projection if profile.projection else build_session_context
        copied = build(session.with_virtual_entries([entry]))
        virtual, path = session.with_virtual_leaf(entry)
        assert _json(build(virtual, path=path)) == _json(copied)
        assert path[-1] == n and virtual.records.id_of(n) == entry["id"]
        assert len(session.records) == n and session.by_id.get(entry["id"]) is None
        assert all(
            getattr(virtual.records, name)._base is getattr(session.records, name)  # shared, not copied
            for name in ("ids", "parents", "types", "offsets")
        )
        compared += 1
    assert compared >= 3
