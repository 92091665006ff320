"""The columnar index: every fact as the per-entry objects held it, byId, the parallel scan, the cache."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_studio.core import Session, index_cache
from session_studio.core.errors import LoadCancelled
from session_studio.core.jsvalue import UNDEFINED, JsTypeError
from session_studio.core.record_table import message_facts, pack_timestamp, unpack_timestamp
from tests.core.util import HEADER, A, T, U, chain, to_bytes

#: every kind of value the columns must give back unchanged
ODD_ENTRIES: list[dict[str, Any]] = [
    U("plain", id="0a1b2c3d", parentId=None, timestamp="2025-01-01T00:00:00.000Z"),
    A("upper-case id", id="ABCDEF12", parentId="0a1b2c3d", timestamp="2025-01-01"),
    T(7, id="123e4567-e89b-12d3-a456-426614174000", parentId="ABCDEF12"),
    U("numeric id", id=42, parentId="123e4567-e89b-12d3-a456-426614174000", timestamp=17),
    {"type": "message", "id": "deadbeef", "parentId": 42},  # no message: pi throws reading its role
    {"type": "message", "id": "cafe0001", "parentId": "deadbeef", "message": None},
    A("nan usage", id="cafe0002", parentId="cafe0001", total=2**60),
    {"type": {"odd": "type"}, "id": {"an": "object"}, "parentId": "cafe0002"},
    {"type": "label", "id": "cafe0003", "parentId": None, "targetId": "0a1b2c3d", "label": "L"},
    {"type": "custom", "parentId": "cafe0003"},  # no id, no timestamp
    [1, 2, 3],  # an array pi keeps as an entry
    U("same id again", id="0a1b2c3d", parentId="cafe0003"),
]

#: shapes next to the bulk loader's common case (hex ids, ISO timestamp, an int estimate)
BULK_EDGES: list[dict[str, Any]] = [
    A("float usage", id="cafe0004", parentId="0a1b2c3d", timestamp="2025-01-01T00:00:00.000Z", total=2.5),
    A("ts not ascii", id="cafe0005", parentId="cafe0004", timestamp="2025-01-01T00:00:00.000é"),
    U("upper parent", id="cafe0006", parentId="CAFE0005", timestamp="2025-01-01T00:00:00.000Z"),
    U("no parent key", id="cafe0007", timestamp="2025-01-01T00:00:00.000Z"),
    {
        "type": "message",
        "id": "cafe0008",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": 7, "content": "numeric role"},
    },
    {
        "type": "message",
        "id": "cafe0009",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"content": "no role"},
    },
    {
        "type": "message",
        "id": "cafe000a",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": "a string",
    },
    {
        "type": "message",
        "id": "cafe000b",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": "not a list", "usage": {"totalTokens": 5}},
    },
    {
        "type": "model_change",
        "id": "cafe000c",
        "parentId": "cafe000b",
        "timestamp": "2025-01-01T00:00:00.000Z",
    },
    {
        "type": "message",
        "id": "cafe000d",
        "parentId": "cafe000c",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "\U0001f600 astral"}]},
    },
    {
        "type": "label",
        "id": "cafe000e",
        "parentId": "cafe000d",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "targetId": "cafe0004",
        "label": "B",
    },
]


def _write(p: Path, entries: list[Any]) -> Path:
    p.write_bytes(
        (
            json.dumps(HEADER) + "\n" + "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
        ).encode()
    )
    return p


def _expected_facts(v: Any) -> tuple[Any, ...]:
    """What the former per-entry object held, computed from the value itself."""
    if type(v) is not dict:
        return (UNDEFINED,) * 4 + (UNDEFINED, 0, None, None)
    role: Any = UNDEFINED
    tokens: Any = 0
    usage: Any = None
    error = None
    if v.get("type") == "message":
        role, tokens, usage, error = message_facts(v)
    return (
        v.get("type", UNDEFINED),
        v.get("id", UNDEFINED),
        v.get("parentId", UNDEFINED),
        v.get("timestamp", UNDEFINED),
        role,
        tokens,
        usage,
        error,
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, JsTypeError) or isinstance(b, JsTypeError):
        return type(a) is type(b) and str(a) == str(b)
    if type(a) is float and math.isnan(a):
        return type(b) is float and math.isnan(b)
    return type(a) is type(b) and a == b


def _facts(s: Session) -> list[tuple[Any, ...]]:
    return [
        (r.type, r.id, r.parent_id, r.timestamp, r.role, r.tokens, r.usage_tokens, r.error) for r in s.records
    ]


@pytest.mark.parametrize("keep", [True, False])
def test_columns_give_back_every_value(tmp_path: Path, keep: bool, bulk_loader: str) -> None:
    p = _write(tmp_path / "s.jsonl", ODD_ENTRIES + BULK_EDGES)
    s = Session.open(p, keep_values=keep, use_cache=False)
    got = _facts(s)
    want = [_expected_facts(v) for v in ODD_ENTRIES + BULK_EDGES]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert all(_same(x, y) for x, y in zip(g, w, strict=True)), (g, w)
    # the token value of an entry without a message is the error it raises, the same object
    assert s.records[4].tokens is s.records[4].error
    assert s.records[6].usage_tokens == 2**60  # an int, not a float
    assert type(s.records[0].tokens) is int
    assert s.labels["cafe0004"] == ("B", "2025-01-01T00:00:00.000Z")  # a label of the common shape


def _comparable_ids(s: Session) -> dict[Any, int]:
    """byId without the keys of object ids (an object is its own key: never equal across opens)."""
    return {k: v for k, v in s.by_id.items() if not (type(k) is tuple and k[0] == "object")}


@pytest.mark.parametrize("keep", [True, False])
def test_a_refresh_indexes_what_a_fresh_open_does(tmp_path: Path, keep: bool, bulk_loader: str) -> None:
    """Lines pi appends after the open (at every split of odd and edge entries, labels and a
    repeated id among them) give the records, byId, labels, leaf and notes of a fresh open."""
    entries = [
        *ODD_ENTRIES,
        *BULK_EDGES,
        HEADER,
        U("after a second header", id="cafe00ff", parentId="0a1b2c3d"),
    ]
    whole = Session.open(_write(tmp_path / "whole.jsonl", entries), keep_values=keep, use_cache=False)
    for split in range(len(entries) + 1):
        p = _write(tmp_path / f"s{split}.jsonl", entries[:split])
        s = Session.open(p, keep_values=keep, use_cache=False)
        with p.open("ab") as fh:
            fh.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries[split:]).encode())
        before = len(s.records)
        assert s.refresh() == list(range(before, len(s.records)))
        assert [repr(r.facts()) for r in s.records] == [repr(r.facts()) for r in whole.records], split
        assert _comparable_ids(s) == _comparable_ids(whole), split
        assert s.labels == whole.labels and s.leaf_id == whole.leaf_id, split
        assert [(i.line, i.kind) for i in s.issues] == [(i.line, i.kind) for i in whole.issues], split


#: timestamps in or just beside pi's ISO layout (the packed column takes the first three)
_STAMPS_NEAR_PIS = [
    "9999-99-99T99:99:99.999Z",  # the layout, not a date: kept exactly all the same
    "0000-00-00T00:00:00.000Z",
    "2025-10-19T22:39:25.412Z",
    "2025-01-01 00:00:00.000Z",
    "2025-01-01T00:00:00,000Z",
    "2025-01-01T00:00:00.000+",
    "+025-01-01T00:00:00.000Z",
    "2025-01-01T00:00:00.00_Z",
    "\u0662025-01-01T00:00:00.000Z",  # an Arabic-Indic digit: 24 characters, not ASCII
    "2025-01-01T00:00:00.000Z ",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "type": st.sampled_from(["message", "label", "custom", "session", 3]),
                "id": st.sampled_from(["0a1b2c3d", "0A1B2C3D", "0a1b2c3", "e1", 5, None]),
                "parentId": st.sampled_from(["0a1b2c3d", "ffffffff", "xyz", None, 1.5]),
                "timestamp": st.sampled_from(
                    [
                        "2025-01-01T00:00:00.000Z",
                        "2025-01-01T00:00:00.000\u00e9",
                        1,
                        *_STAMPS_NEAR_PIS,
                    ]
                ),
                "targetId": st.sampled_from(["0a1b2c3d", "e1"]),
                "label": st.sampled_from(["L", "", None]),
                "message": st.one_of(
                    st.none(),
                    st.text(max_size=3),
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "role": st.sampled_from(
                                [
                                    "user",
                                    "assistant",
                                    "toolResult",
                                    "custom",
                                    "bashExecution",
                                    "compactionSummary",
                                    "system",
                                    1,
                                ]
                            ),
                            "command": st.one_of(st.text(max_size=4), st.none()),
                            "output": st.text(max_size=4),
                            "summary": st.one_of(st.text(max_size=4), st.integers()),
                            "content": st.one_of(
                                st.text(max_size=8),
                                st.lists(
                                    st.fixed_dictionaries(
                                        {"type": st.sampled_from(["text", "thinking", "image", "toolCall"])},
                                        optional={
                                            "text": st.one_of(
                                                st.text(max_size=8),
                                                st.integers(),
                                                st.sampled_from([None, {}, [], 0.0]),
                                            ),
                                            "thinking": st.text(max_size=8),
                                            "name": st.text(max_size=4),
                                            "arguments": st.dictionaries(
                                                st.text(max_size=3),
                                                st.one_of(
                                                    st.integers(-(2**70), 2**70),
                                                    st.floats(allow_nan=False, allow_infinity=False),
                                                    st.text(alphabet='a"\\\n\x01é😀', max_size=3),
                                                ),
                                                max_size=2,
                                            ),
                                        },
                                    ),
                                    max_size=3,
                                ),
                            ),
                            "usage": st.one_of(
                                st.none(),
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "totalTokens": st.one_of(
                                            st.integers(-5, 2**60), st.floats(allow_nan=False), st.none()
                                        ),
                                        "input": st.integers(-5, 2**54),
                                        "output": st.one_of(st.integers(0, 9), st.none()),
                                        "cacheRead": st.integers(0, 9),
                                        "cacheWrite": st.integers(0, 9),
                                    },
                                ),
                            ),
                            "stopReason": st.sampled_from(["stop", "aborted", "error"]),
                        },
                    ),
                ),
            },
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_bulk_loader_equals_the_general_path(
    tmp_path: Path, bulk_loader: str, entries: list[dict[str, Any]]
) -> None:
    """Big files are indexed by one loop for the common entry shape (Session._load_common);
    small ones, whose values are kept, by `_add_record` for every entry: the facts are the same."""
    p = _write(tmp_path / "s.jsonl", entries)
    general = Session.open(p, keep_values=True, use_cache=False)
    bulk = Session.open(p, keep_values=False, use_cache=False)
    assert len(general.records) == len(bulk.records)
    for g, b in zip(_facts(general), _facts(bulk), strict=True):
        assert all(_same(x, y) for x, y in zip(g, b, strict=True)), (g, b)
    assert general.records.flags == bulk.records.flags
    assert general.labels == bulk.labels and general.leaf_id == bulk.leaf_id
    assert [(i.line, i.kind) for i in general.issues] == [(i.line, i.kind) for i in bulk.issues]


def test_by_id_keeps_the_last_record_of_a_repeated_id(tmp_path: Path) -> None:
    p = _write(tmp_path / "s.jsonl", ODD_ENTRIES)
    s = Session.open(p, keep_values=False, use_cache=False)
    assert s.by_id.get("0a1b2c3d") == len(ODD_ENTRIES) - 1
    assert s.by_id.get("ABCDEF12") == 1 and s.by_id.get("abcdef12") is None
    assert s.get_index(42) == 3 and s.get_index(42.0) == 3 and s.get_index("42") is None
    assert "cafe0003" in s.by_id and "cafe0004" not in s.by_id
    # the leaf's parent is cafe0003, whose parent is null
    assert s.path_indices(s.leaf_index()) == [8, 11]
    # a path through a repeated id follows byId, not the previous line
    assert s.path_indices(2) == [8, 11, 1, 2]


def test_a_parent_on_the_previous_line_with_a_later_twin_follows_byid(tmp_path: Path) -> None:
    entries = chain(U("a"), A("b"), U("c"), A("d"))
    entries.append({**U("twin of e1"), "id": "e1", "parentId": None})
    s = Session.from_bytes(to_bytes(entries))
    assert s.path_indices(2) == [4, 2]  # e2's parent e1 is line 3 by byId, not the record before it


def test_parallel_scan_equals_the_sequential_one(tmp_path: Path, bulk_loader: str) -> None:
    entries: list[Any] = list(chain(*[U(i) if i % 2 else A(i) for i in range(1, 400)]))
    entries[300] = {**entries[300], "id": "123e4567-e89b-12d3-a456-426614174000"}
    entries.insert(320, HEADER)  # a second header in the worker's half
    entries.insert(330, {"type": "label", "id": "lab1", "parentId": None, "targetId": "e2", "label": "two"})
    entries.insert(340, {"type": "label", "id": "lab2", "parentId": None, "targetId": "e2"})
    entries.insert(341, {"type": "label", "id": "lab3", "parentId": None, "targetId": "e3", "label": "3"})
    # ids and parentIds that are not 8 hex digits in the worker's half: its codes for them change
    entries[350:350] = [e for e in ODD_ENTRIES if isinstance(e, dict) and e.get("type") != "label"]
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(entries))
    seq = Session.open(p, keep_values=False, parallel=False, use_cache=False)
    par = Session.open(p, keep_values=False, parallel=True, use_cache=False)
    assert [repr(r.facts()) for r in par.records] == [repr(r.facts()) for r in seq.records]
    assert [(i.line, i.kind) for i in par.issues] == [(i.line, i.kind) for i in seq.issues]
    assert par.labels == seq.labels == {"e3": ("3", UNDEFINED)}
    assert par.leaf_id == seq.leaf_id
    for key in ("e5", "123e4567-e89b-12d3-a456-426614174000", "lab3", "nope", "ABCDEF12", "42"):
        assert par.by_id.get(key) == seq.by_id.get(key)
    assert par.records.ids_other  # (the codes themselves may differ: facts and byId are compared)


@pytest.fixture
def cache_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SESSION_STUDIO_NO_INDEX_CACHE", raising=False)
    return tmp_path / "cache"


def test_the_cache_gives_back_every_value(tmp_path: Path, cache_here: Path) -> None:
    p = _write(tmp_path / "s.jsonl", ODD_ENTRIES)
    cold = Session.open(p, keep_values=False, use_cache=True)
    assert index_cache.load_cached(str(p), p.stat().st_size) is not None
    warm = Session.open(p, keep_values=False, use_cache=True)
    assert [repr(r.facts()) for r in warm.records] == [repr(r.facts()) for r in cold.records]
    assert warm.labels == cold.labels and warm.leaf_id == cold.leaf_id
    assert warm.path_indices(2) == cold.path_indices(2)
    assert warm.records[4].tokens is warm.records[4].error


def test_the_cache_is_read_in_chunks_with_progress_and_cancel(
    tmp_path: Path, cache_here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(*[U(i) for i in range(1, 2000)])))
    Session.open(p, keep_values=False, use_cache=True)
    monkeypatch.setattr(index_cache, "CHUNK_BYTES", 1024)
    calls: list[tuple[int, int]] = []
    warm = Session.open(p, keep_values=False, use_cache=True, progress=lambda d, t: calls.append((d, t)))
    assert len(warm.records) == 1999
    assert len(calls) > 50  # one call per chunk: the reading thread lets others run in between
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    size = p.stat().st_size  # reported on the file's scale, as a cold load does
    assert all(t == size and 0 <= d <= size for d, t in calls) and calls[-1] == (size, size)
    with pytest.raises(LoadCancelled):
        Session.open(p, keep_values=False, use_cache=True, cancel=lambda: True)


def test_the_index_holds_no_object_per_entry(tmp_path: Path) -> None:
    """~100 bytes an entry in columns (the per-entry objects took ~900)."""
    p = tmp_path / "s.jsonl"
    n = 20000
    entries = [(U if i % 2 else A)(i % 50 + 1, id=f"{i:08x}") for i in range(n)]
    p.write_bytes(to_bytes(chain(*entries)))  # pi's ids: 8 hex digits
    tracemalloc.start()
    try:
        s = Session.open(p, keep_values=False, use_cache=False, parallel=False)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(s.records) == n
    assert held / n < 200, f"{held / n:.0f} bytes an entry"


@given(st.lists(st.sampled_from("0123456789"), min_size=17, max_size=17), st.text(max_size=26))
def test_pis_timestamps_are_packed_without_loss(digits: list[str], other: str) -> None:
    """The timestamp column holds pi's ISO form as an int (8 bytes, not 24): every string of that
    layout comes back exactly and the ints sort as the strings; anything else is not packed."""
    d = "".join(digits)
    stamp = f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:17]}Z"
    packed = pack_timestamp(stamp)
    assert packed is not None and unpack_timestamp(packed) == stamp
    assert packed == int(d)  # the order of the strings
    other_packed = pack_timestamp(other)
    assert other_packed is None or unpack_timestamp(other_packed) == other
    for near in _STAMPS_NEAR_PIS[3:]:
        assert pack_timestamp(near) is None, near


def test_the_timestamp_column_takes_8_bytes_a_record(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "s.jsonl", [U("a", id="0a1b2c3d", parentId=None, timestamp="2025-10-19T22:39:25.412Z")]
    )
    t = Session.open(p, keep_values=False, use_cache=False).records
    assert t.timestamps.itemsize == 8 and len(t.timestamps) == len(t)
    assert t[0].timestamp == "2025-10-19T22:39:25.412Z"


# --------------------------------------------------------------------------- id searches in C


_CODES = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from([0, 0xFF, 0xFF00, 0x00FF00FF, 0xFFFFFFFF, 0x100, 0x01000000]),
    st.integers(-40, -1),  # null, undefined, the other ids' codes
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CODES, max_size=60), _CODES, st.data())
def test_find_code_finds_what_a_scan_of_the_column_finds(codes: list[int], code: int, data: Any) -> None:
    """Issue 11: ids found by searching the id column's bytes (by an 8-hex id's low bytes): the first
    item equal to the code in any window, never a match straddling two items."""
    from array import array

    from session_studio.core.record_table import find_code

    column = array("q", codes + [code] * data.draw(st.integers(0, 2)))
    data.draw(st.randoms()).shuffle(column)
    start = data.draw(st.integers(0, len(column)))
    end = data.draw(st.integers(start, len(column)))
    want = next((k for k in range(start, end) if column[k] == code), -1)
    assert find_code(column.tobytes(), code, start, end) == want


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_first_index_of_id_is_pis_find_index(tmp_path: Path, data: Any) -> None:
    """``path.findIndex(e => e.id === id)`` with duplicate ids, odd ids and ids not on the path."""
    from session_studio.core.projection import first_index_of_id

    pool = ["0a1b2c3d", "00000001", "ffffffff", "ABCDEF12", "uuid-1", "0a1b2c3e"]
    entries = []
    for k in range(data.draw(st.integers(1, 30))):
        eid = data.draw(st.sampled_from(pool))
        entries.append(U(f"m{k}", id=eid, parentId=None))
    p = tmp_path / "ids.jsonl"
    p.write_bytes(to_bytes([HEADER, *entries]))
    s = Session.open(p)
    n = len(s.records)
    path = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    for wanted in [*pool, "not-there", "12345678"]:
        want = next((k for k, i in enumerate(path) if s.records[i].id == wanted), -1)
        assert first_index_of_id(s, path, wanted) == want


@given(st.lists(st.integers(0, 3), max_size=40), st.integers(0, 4))
def test_indexes_of_finds_every_place_of_a_value_in_order(values: list[int], value: int) -> None:
    from session_studio.core.record_table import indexes_of

    expected = [k for k, v in enumerate(values) if v == value]
    assert list(indexes_of(values, value)) == expected
    assert list(indexes_of(tuple(values), value)) == expected
