"""Session.with_virtual_entries: what new entries would make, without copying the index.

The preview of a compaction, the context report and pi 1.6.0's recovery plan the session as it will
be once entries are appended. with_virtual_entries copied every column of the index for that (72 MB
on a 900k-entry session, at each preview of a summary); it now shares them (RecordTable.with_tail)
and walks paths through its own entries first: the same as the file with the entries written.
"""

from __future__ import annotations

import json
import shutil
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core.context import build_session_context
from session_studio.core.jsvalue import js_stringify
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.projection import build_session_projection
from session_studio.core.record_table import TailedColumn, column_on_path
from session_studio.engine import draft_compaction
from session_studio.engine.compaction import CompactionDraft, CompactionOutcome
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
    positions = [k % len(whole) for k in range(index, index + 7)] if whole else []
    assert tailed.on_path(positions) == tuple(whole[k] for k in positions)
    assert column_on_path(tailed, positions) == tuple(whole[k] for k in positions)
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


def _written(session: Session, entries: list[dict[str, Any]], tmp_path: Path) -> Session:
    """The session's file with ``entries`` appended, read again: what the virtual copy stands for."""
    out = tmp_path / Path(session.path).name
    shutil.copy(session.path, out)
    with out.open("a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return Session.open(out)


def _drafted(sessions: list[Path], profile: Any) -> Iterator[tuple[Session, CompactionDraft]]:
    """Each session as read and its compaction's draft at keepRecentTokens 300, where there is one."""
    for src in sessions:
        session = Session.open(src)
        if session.migrated or session.reset:
            continue
        try:
            draft = draft_compaction(session, keep_recent_tokens=300, profile=profile)
        except Exception:  # nothing to compact here
            continue
        yield session, draft


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["0.80.2", "1.6.0"])
def test_the_context_after_virtual_entries_is_the_written_files(
    sessions: list[Path], profile: Any, tmp_path: Path
) -> None:
    """A compaction's preview: the context of the virtual copy is the one of the file with the entry
    written, and the session read is left as it was (no record added, its columns shared)."""
    compared = 0
    for session, draft in _drafted(sessions, profile):
        entry = CompactionOutcome(draft, "## Goal\nsummary").entry().to_json_dict()
        n = len(session.records)
        build = build_session_projection if profile.projection else build_session_context
        virtual = session.with_virtual_entries([entry])
        assert _json(build(virtual)) == _json(build(_written(session, [entry], tmp_path)))
        assert virtual.records.id_of(n) == entry["id"] and virtual.path_indices(n)[-1] == n
        assert len(session.records) == n and session.by_id.get(entry["id"]) is None
        assert all(
            getattr(virtual.records, name)._base is getattr(session.records, name)  # shared, not copied
            for name in ("ids", "parents", "types", "offsets")
        )
        compared += 1
    assert compared >= 3


def test_a_plan_after_chained_virtual_entries_is_the_written_files(
    sessions: list[Path], tmp_path: Path
) -> None:
    """Several entries, each under the one before (pi 1.6.0's recovery appends its omissions so):
    the path and the plan over the virtual copy are the written file's."""
    from session_studio.engine.context_edits import omission_entries

    planned = 0
    for src in sessions:
        session = Session.open(src)
        if session.migrated or session.reset or session.leaf_index() is None:
            continue
        path = session.path_indices(session.leaf_index())
        targets = [session.records[i].id for i in path[-3:] if session.records[i].type == "message"]
        if not targets:
            continue
        entries = omission_entries(session, targets)
        virtual = session.with_virtual_entries(entries)
        written = _written(session, entries, tmp_path)
        assert virtual.path_indices(virtual.leaf_index()) == written.path_indices(written.leaf_index())
        params = PlanParams(keep_recent_tokens=300)
        ours = PathPlanner(virtual, profile=PROFILE_1_6_0).plan(params)
        theirs = PathPlanner(written, profile=PROFILE_1_6_0).plan(params)
        assert (ours.cut, ours.nothing_to_compact, ours.error) == (
            theirs.cut,
            theirs.nothing_to_compact,
            theirs.error,
        )
        planned += 1
    assert planned >= 3


@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["0.80.2", "1.6.0"])
def test_a_compaction_preview_starts_its_path_with_the_drafts(sessions: list[Path], profile: Any) -> None:
    """context_after reuses the draft's path (its int objects, not a second walk's) and builds the
    same context as a copy that walks it; a known path that ends elsewhere is walked as before."""
    previewed = 0
    for session, draft in _drafted(sessions, profile):
        outcome = CompactionOutcome(draft, "## Goal\nsummary")
        entry = outcome.entry().to_json_dict()
        n = len(session.records)
        build = build_session_projection if profile.projection else build_session_context
        walked = session.with_virtual_entries([entry])
        known = session.with_virtual_entries([entry], known_path=draft.path)
        path = known.path_indices(n)
        assert path == walked.path_indices(n) == [*draft.path, n]
        assert all(a is b for a, b in zip(path, draft.path, strict=False))  # the draft's own ints
        assert _json(outcome.context_after()) == _json(build(walked))
        elsewhere = session.with_virtual_entries([entry], known_path=draft.path[:-1])
        assert elsewhere.path_indices(n) == path
        previewed += 1
    assert previewed >= 3
