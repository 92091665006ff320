"""The columnar outline (issue 11: the window's memory) against the per-entry one it replaced.

``reference_outline`` is the former implementation (dicts, lists and sets per entry), kept here as
the oracle: on generated sessions with branches, duplicate and odd ids, parent cycles, odd
timestamps and pi 1.6.0 entries, every filter mode, search matches and active paths give the same
rows, groups, heads, last chains and active records.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from array import array
from collections.abc import Callable, Collection
from functools import cmp_to_key
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core import session as session_module
from session_studio.core.jsdate import js_date_ms
from session_studio.core.jsvalue import JsTypeError, js_key, js_truthy
from session_studio.core.record_table import unpack_timestamp
from session_studio.ui import outline as outline_module
from session_studio.ui.outline import (
    FILTERS,
    ROOT,
    Outline,
    RecordColumn,
    _plain_date,
    build_outline,
    entry_visible,
)
from tests.core.util import HEADER, U, to_bytes

# --------------------------------------------------------------------------- the former outline


def _date_ms(value: Any) -> float | None:
    try:
        return js_date_ms(value)
    except JsTypeError:
        return None


def _ts_cmp(records: Any, a: int, b: int) -> int:
    x, y = _date_ms(records[a].timestamp), _date_ms(records[b].timestamp)
    if x is None or y is None or x == y:
        return 0
    return -1 if x < y else 1


def reference_outline(
    session: Session,
    mode: str = "default",
    match: Callable[[int], bool] | None = None,
    active_path: Collection[int] | None = None,
) -> dict[str, Any]:
    """build_outline before it was columnar (its result as plain dicts and sets)."""
    records = session.records
    n = len(records)
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    by_id = session.by_id
    for r in records:
        pid = r.parent_id
        if pid is None or not js_truthy(pid) or js_key(pid) == js_key(r.id):
            roots.append(r.index)
            continue
        p = by_id.get(js_key(pid))
        if p is None or p == r.index:
            roots.append(r.index)
        else:
            kids.setdefault(p, []).append(r.index)

    def by_time(a: int, b: int) -> int:
        return _ts_cmp(records, a, b)

    for lst in kids.values():
        if len(lst) > 1:
            lst.sort(key=cmp_to_key(by_time))

    def shown(i: int) -> bool:
        return entry_visible(session, i, mode) and (match is None or match(i))

    vis_kids: dict[int, list[int]] = {}
    vis_roots: list[int] = []
    seen = bytearray(n)
    stack: list[tuple[int, int]] = [(r, ROOT) for r in reversed(roots)]
    while stack:
        i, anc = stack.pop()
        if seen[i]:
            continue
        seen[i] = 1
        if shown(i):
            (vis_roots if anc == ROOT else vis_kids.setdefault(anc, [])).append(i)
            anc = i
        for c in reversed(kids.get(i, ())):
            stack.append((c, anc))

    groups: dict[int, list[int]] = {}
    group_of: dict[int, int] = {}
    row_of: dict[int, int] = {}
    heads: set[int] = set()
    last_chain: set[int] = set()
    active: set[int] = set(active_path) if active_path else set()
    pending: list[tuple[int, list[int]]] = [(ROOT, vis_roots)]
    while pending:
        key, hs = pending.pop()
        rows: list[int] = []
        multi = len(hs) > 1 or key != ROOT
        for h_no, head in enumerate(hs):
            last = h_no == len(hs) - 1
            cur: int | None = head
            first = True
            while cur is not None:
                group_of[cur] = key
                row_of[cur] = len(rows)
                rows.append(cur)
                if first and multi:
                    heads.add(cur)
                if last:
                    last_chain.add(cur)
                first = False
                ch = vis_kids.get(cur, ())
                if len(ch) == 1:
                    cur = ch[0]
                elif len(ch) > 1:
                    act = next((c for c in ch if c in active), None)
                    if act is not None:
                        pending.append((cur, [c for c in ch if c != act]))
                        cur = act
                    else:
                        pending.append((cur, list(ch)))
                        cur = None
                else:
                    cur = None
        groups[key] = rows
    return {
        "groups": groups,
        "group_order": list(groups),
        "group_of": group_of,
        "row_of": row_of,
        "heads": heads,
        "last_chain": last_chain,
        "active": active,
        "len": len(group_of),
    }


def as_plain(o: Outline) -> dict[str, Any]:
    return {
        "groups": {k: list(v) for k, v in o.groups.items()},
        "group_order": list(o.groups),
        "group_of": dict(o.group_of.items()),
        "row_of": dict(o.row_of.items()),
        "heads": set(o.heads),
        "last_chain": set(o.last_chain),
        "active": set(o.active),
        "len": len(o),
    }


# --------------------------------------------------------------------------- generated sessions

_TIMESTAMPS: list[Any] = [
    "2025-01-01T10:00:00.000Z",
    "2025-01-01T10:00:00.000Z",  # ties: the sort is stable
    "2024-12-31T23:59:59.999Z",
    "2025-01-01T10:00:00.001Z",
    "2025-13-45T99:99:99.999Z",  # 24 ASCII characters, not a date: NaN
    "not a date at all, 24 ch",  # 24 ASCII characters again
    "2025-01-01",  # a date JavaScript parses, not pi's form
    "2025-01-01T10:00:00+02:00",
    "Wed, 01 Jan 2025 09:00:00 GMT",
    1735725600000,  # a number: new Date(n)
    None,
    True,
    "",
    "2025-01-01T10:00:00.000Zé",  # not ASCII
]


def _entry(rng: random.Random, k: int) -> dict[str, Any]:
    kind = rng.random()
    if kind < 0.55:
        role = rng.choice(["user", "assistant", "toolResult", "user", "assistant", "system"])
        msg: dict[str, Any] = {"role": role, "content": f"text {k} " + "é" * (k % 3), "timestamp": k}
        if role == "toolResult":
            msg.update(toolCallId=f"c{k}", toolName="bash", isError=False)
        return {"type": "message", "message": msg}
    if kind < 0.62:
        return {"type": "label", "targetId": f"{rng.randrange(max(1, k)):08x}", "label": f"L{k}"}
    if kind < 0.68:
        return {"type": "usage", "kind": "turn", "provider": "p", "model": "m", "usage": {"totalTokens": k}}
    if kind < 0.72:
        return {"type": "context_edit", "targetId": f"{rng.randrange(max(1, k)):08x}", "replacement": None}
    if kind < 0.76:
        return {"type": "custom", "customType": "x", "data": {}}
    if kind < 0.79:
        return {"type": "session_info", "name": f"n{k}"}
    if kind < 0.85:
        return {"type": "custom_message", "customType": "note", "content": "hi", "display": True}
    if kind < 0.92:
        return {
            "type": "compaction",
            "summary": "s",
            "firstKeptEntryId": f"{max(0, k - 3):08x}",
            "tokensBefore": 9,
        }
    return {"type": "model_change", "provider": "p", "modelId": "m"}


def generated_session(tmp_path: Path, seed: int, n: int) -> Session:
    """Branches (a parent among the recent entries, sometimes far back), duplicate ids, odd ids and
    parent ids, self parents, cycles, odd timestamps, pi 1.6.0 entry types."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": f"s{seed}",
            "timestamp": "2025-01-01T10:00:00.000Z",
            "cwd": "/w",
        }
    ]
    for k in range(n):
        e = _entry(rng, k)
        eid: Any = f"{k:08x}"
        r = rng.random()
        if r < 0.03:
            eid = f"{rng.randrange(max(1, k)):08x}"  # a duplicate id: byId keeps the last
        elif r < 0.05:
            eid = rng.choice([f"uuid-{k}", 12, "ABCDEF12", f"{k:08X}"])
        parent: Any
        r = rng.random()
        if k == 0 or r < 0.02:
            parent = rng.choice([None, "", 0])
        elif r < 0.04:
            parent = eid  # its own id
        elif r < 0.05:
            parent = f"{k + 1:08x}"  # a later entry: a cycle or a forward link
        elif r < 0.06:
            parent = "missing-id"
        elif r < 0.25:
            parent = f"{rng.randrange(max(0, k - 40), k):08x}"  # a branch
        elif r < 0.27:
            parent = rng.choice([f"uuid-{rng.randrange(k)}", 12, "ABCDEF12"])
        else:
            parent = f"{k - 1:08x}"
        ts = (
            rng.choice(_TIMESTAMPS)
            if rng.random() < 0.4
            else f"2025-01-01T1{rng.randrange(10)}:{rng.randrange(60):02d}:00.000Z"
        )
        lines.append({**e, "id": eid, "parentId": parent, "timestamp": ts})
    path = tmp_path / f"g{seed}.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return Session.open(path)


@pytest.mark.parametrize("seed", range(10))
def test_columnar_outline_equals_the_per_entry_one(tmp_path: Path, seed: int, bulk_loader: str) -> None:
    s = generated_session(tmp_path, seed, 100 + 30 * seed)
    n = len(s.records)
    rng = random.Random(seed)
    leaf_path = s.path_indices(s.leaf_index())
    hit_set = set(rng.sample(range(n), n // 3))
    hits = hit_set.__contains__
    cases: list[tuple[Callable[[int], bool] | None, Collection[int] | None]] = [
        (None, None),
        (None, leaf_path),
        (None, s.path_indices(rng.randrange(n))),
        (hits, leaf_path),
    ]
    for mode in FILTERS:
        for match, path in cases:
            new = build_outline(s, mode, match, path)
            assert as_plain(new) == reference_outline(s, mode, match, path), (mode, path is None)
            if match is not None:  # room made for the hits only (a search), the same rows
                bounded = build_outline(s, mode, match, path, len(hit_set))
                assert as_plain(bounded) == as_plain(new)
                # the hits as a column (the window's search): the walk asks no function
                hit_column = bytearray(n)
                outline_module.mark_hits(hit_column, [*hit_set, -1, n])  # records outside it: ignored
                as_column = build_outline(s, mode, None, path, len(hit_set), hits=hit_column)
                assert as_plain(as_column) == as_plain(new)
        # the next outline takes this one's active path as it is (a search, a filter change)
        again = build_outline(s, mode, hits, new.active)
        assert as_plain(again) == reference_outline(s, mode, hits, leaf_path)


def test_many_roots_and_wide_branch_points_grow_the_walks_stack(tmp_path: Path, bulk_loader: str) -> None:
    """The C walk's stack starts small and grows: 3,000 roots, and one entry with 3,000 children."""
    at = HEADER["timestamp"]
    lines: list[dict[str, Any]] = [
        U(f"u{k}", id=f"a{k:07x}", parentId=None, timestamp=at) for k in range(3000)
    ]
    lines.append(U("u", id="b0000000", parentId=None, timestamp=at))
    lines += [U(f"u{k}", id=f"c{k:07x}", parentId="b0000000", timestamp=at) for k in range(3000)]
    path = tmp_path / "wide.jsonl"
    path.write_bytes(to_bytes([HEADER, *lines]))
    s = Session.open(path)
    for mode in ("default", "all"):
        assert as_plain(build_outline(s, mode)) == reference_outline(s, mode)


def test_too_little_room_for_the_shown_rows_is_an_error_not_a_write_past_the_end(tmp_path: Path) -> None:
    s = generated_session(tmp_path, 3, 120)
    if session_module.BULK_HELPER is None:
        pytest.skip("the compiled loader helper is not built")
    with pytest.raises(ValueError, match="room"):
        build_outline(s, "all", lambda _i: True, None, 5)


def test_outline_views_answer_like_the_dicts_and_sets_they_replace(tmp_path: Path) -> None:
    s = generated_session(tmp_path, 99, 120)
    o = build_outline(s, "default", None, s.path_indices(s.leaf_index()))
    ref = reference_outline(s, "default", None, s.path_indices(s.leaf_index()))
    n = len(s.records)
    for r in [-5, -1, *range(n), n, n + 7]:
        assert o.group_of.get(r) == ref["group_of"].get(r)
        assert o.group_of.get(r, ROOT) == ref["group_of"].get(r, ROOT)
        assert (r in o.group_of) == (r in ref["group_of"]) == o.contains(r)
        assert o.row_of.get(r) == ref["row_of"].get(r)
        assert (r in o.heads) == (r in ref["heads"])
        assert (r in o.last_chain) == (r in ref["last_chain"])
        assert (r in o.active) == (r in ref["active"])
        if r in ref["group_of"]:
            assert o.group_of[r] == ref["group_of"][r] and o.row_of[r] == ref["row_of"][r]
        else:
            with pytest.raises(KeyError):
                o.group_of[r]
    assert o.heads == ref["heads"] and (o.heads & {1, 2, 3}) == (ref["heads"] & {1, 2, 3})
    assert len(o.active) == len(ref["active"]) and len(o.heads) == len(ref["heads"])
    assert len(Outline()) == 0 and list(Outline().rows(ROOT)) == [] and not Outline().active


def test_the_outline_costs_bytes_per_entry_not_python_objects(tmp_path: Path) -> None:
    """Issue 11: the window held ~200 bytes an entry for the outline (dicts of record → group and
    row, sets of heads, of the active path…) and ~530 while it was built; the columns cost ~13."""
    import gc
    import tracemalloc

    n = 4000
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"}
    ]
    for k in range(n):  # a long chain with a side branch every 500 entries
        parent = None if k == 0 else f"{k - 2 if k % 500 == 0 else k - 1:08x}"
        msg = {"role": "user" if k % 2 else "assistant", "content": f"m{k}", "timestamp": k}
        ts = f"2025-01-01T10:00:{k % 60:02d}.000Z"
        lines.append(
            {"type": "message", "id": f"{k:08x}", "parentId": parent, "timestamp": ts, "message": msg}
        )
    (tmp_path / "chain.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    s = Session.open(tmp_path / "chain.jsonl")
    path = s.path_indices(s.leaf_index())
    build_outline(s, "default", None, path)  # whatever the session computes once and keeps
    gc.collect()
    tracemalloc.start()
    try:
        kept = build_outline(s, "default", None, path)
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(kept) > n // 2
    assert retained / n < 24, f"{retained / n:.0f} bytes an entry kept"
    assert peak / n < 64, f"{peak / n:.0f} bytes an entry at the peak"


def test_an_outline_takes_the_active_path_of_one_built_before_entries_were_appended(tmp_path: Path) -> None:
    s = generated_session(tmp_path, 11, 60)
    before = build_outline(s, "all", None, s.path_indices(s.leaf_index()))
    with open(s.path, "a", encoding="utf-8") as fh:
        for k in range(60, 70):
            msg = {"role": "user", "content": f"more {k}", "timestamp": k}
            line = {"type": "message", "id": f"{k:08x}", "parentId": f"{k - 1:08x}", "message": msg}
            fh.write(json.dumps({**line, "timestamp": "2025-01-02T10:00:00.000Z"}) + "\n")
    assert len(s.refresh()) == 10
    after = build_outline(s, "all", None, before.active)
    assert as_plain(after) == reference_outline(s, "all", None, set(before.active))
    assert set(after.active) == set(before.active)


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_parent_links_are_the_python_ones(tmp_path: Path, seed: int) -> None:
    """outline._parents (core/_bulkindex.c link_parents) equals its Python reference, also over
    records pi appended after the load (byId's recent ids, repeating earlier ones)."""
    from session_studio.core import session as session_module
    from session_studio.ui import outline

    if session_module.BULK_HELPER is None:
        pytest.skip("the compiled loader helper is not built")
    s = generated_session(tmp_path, seed, 300)
    assert outline._parents(s) == outline._parents_python(s)
    rng = random.Random(seed)
    more = [
        {"type": "custom", "id": f"{rng.randrange(300):08x}", "parentId": f"{rng.randrange(300):08x}"}
        for _ in range(20)
    ]
    with open(s.path, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps({**e, "timestamp": "2025-01-02T00:00:00.000Z"}) + "\n" for e in more))
    assert s.refresh() and s.by_id.recent
    assert outline._parents(s) == outline._parents_python(s)


@settings(max_examples=200, deadline=None)
@given(
    buckets=st.integers(0, 12),
    shift=st.integers(0, 2),
    data=st.data(),
)
def test_the_compiled_counting_sort_is_the_python_one(buckets: int, shift: int, data: Any) -> None:
    """outline._buckets (core/_bulkindex.c bucket_items) equals its Python reference and a stable
    sort by key: every item in its key's bucket, in the order of the keys, none for a negative one."""
    from array import array

    from session_studio.core import session as session_module
    from session_studio.ui import outline

    if session_module.BULK_HELPER is None:
        pytest.skip("the compiled loader helper is not built")
    keys = data.draw(st.lists(st.integers(-shift - 2, buckets - shift - 1), max_size=40)) if buckets else []
    with_values = data.draw(st.booleans())
    values = array("i", data.draw(st.lists(st.integers(-5, 99), min_size=len(keys), max_size=len(keys))))
    key_col = array("i", keys)
    got = outline._buckets(key_col, values if with_values else None, shift, buckets)
    ref = outline._buckets_python(
        key_col, values if with_values else None, shift, array("i", [0]) * (buckets + 1)
    )
    assert got == ref
    first, items = got
    for b in range(buckets):
        want = [values[j] if with_values else j for j, k in enumerate(keys) if k + shift == b]
        assert items[first[b] : first[b + 1]].tolist() == want
    assert len(items) == sum(1 for k in keys if k + shift >= 0)


@settings(max_examples=100, deadline=None)
@given(
    codes=st.lists(st.integers(0, 255), max_size=60),
    wanted=st.sets(st.integers(0, 255)),
    slice_=st.integers(1, 9),
)
def test_a_code_mask_read_a_slice_at_a_time_is_the_whole_columns(
    codes: list[int], wanted: set[int], slice_: int
) -> None:
    """outline._code_mask reads the type or role column a slice at a time (a whole copy was 4.5 MB
    at 900k entries): 1 exactly where the code is wanted, across the slices' edges too."""
    from array import array
    from unittest import mock

    from session_studio.ui import outline

    column = array("I", codes)
    with mock.patch.object(outline, "MASK_SLICE", slice_):
        got = outline._code_mask(column, wanted, 256)
    assert got == bytearray(c in wanted for c in codes)


@settings(max_examples=100, deadline=None)
@given(
    a=st.lists(st.integers(0, 1), max_size=40),
    b=st.lists(st.integers(0, 1), max_size=40),
    slice_=st.integers(1, 9),
)
def test_two_columns_anded_a_slice_at_a_time(a: list[int], b: list[int], slice_: int) -> None:
    """outline._both: a's length, 1 where both are 1, 0 past b's end (a search's hits, made before
    pi appended more records)."""
    from unittest import mock

    from session_studio.ui import outline

    with mock.patch.object(outline, "MASK_SLICE", slice_):
        got = outline._both(bytearray(a), bytes(b))
    assert got == bytearray(x & (b[i] if i < len(b) else 0) for i, x in enumerate(a))


def test_the_compiled_outline_steps_refuse_columns_that_are_not_one_tree() -> None:
    """C reads the columns by index: a record or child past them is a ValueError, never a read
    outside the buffers."""
    from array import array

    from session_studio.core import session as session_module

    helper = session_module.BULK_HELPER
    if helper is None:
        pytest.skip("the compiled loader helper is not built")
    one = array("i", [0])
    with pytest.raises(ValueError):  # the top's child is record 5 of 1
        helper.chain_rows(array("i", [0, 1, 1]), array("i", [5]), bytearray(1), 1, 2, 4, one, one, one, [])
    with pytest.raises(ValueError):  # record 0's children end past the children column
        helper.chain_rows(array("i", [0, 1, 9]), array("i", [0]), bytearray(1), 1, 2, 4, one, one, one, [])
    with pytest.raises(ValueError):  # key 3 of 1 bucket
        helper.bucket_items(array("i", [3]), None, 0, array("i", [0, 0]), array("i", [0]))
    with pytest.raises(ValueError):  # values shorter than keys
        helper.bucket_items(array("i", [0, 0]), array("i", [7]), 0, array("i", [0, 0]), array("i", [0, 0]))


def test_more_than_256_types_and_roles_filter_like_one_byte_codes(tmp_path: Path, bulk_loader: str) -> None:
    """The filter modes read the type and role columns a byte per code (bytes.translate) while the
    codes fit one; 300 custom entry types and roles take the per-record way: the same outline."""
    at = HEADER["timestamp"]
    lines: list[dict[str, Any]] = []
    parent = None
    for k in range(300):
        for entry in (
            {"type": f"kind{k}", "id": f"a{k:07x}", "parentId": parent, "timestamp": at},
            U("u", id=f"b{k:07x}", parentId=f"a{k:07x}", timestamp=at),
            {
                "type": "message",
                "id": f"c{k:07x}",
                "parentId": f"b{k:07x}",
                "timestamp": at,
                "message": {"role": f"role{k}" if k % 2 else "toolResult", "content": "x"},
            },
        ):
            lines.append(entry)
        parent = f"c{k:07x}"
    path = tmp_path / "many-kinds.jsonl"
    path.write_bytes(to_bytes([HEADER, *lines]))
    s = Session.open(path)
    assert len(s.records.symbols) > 256
    leaf_path = s.path_indices(s.leaf_index())
    for mode in FILTERS:
        assert as_plain(build_outline(s, mode, None, leaf_path)) == reference_outline(
            s, mode, None, leaf_path
        ), mode


def _others_ran_during(call: Callable[[], object]) -> bool:
    """Whether another Python thread kept running during ``call()``: its longest pause then was
    under half the call's time (a call holding the GIL pauses it for the whole call)."""
    pauses: list[tuple[float, float]] = []
    running, done = threading.Event(), threading.Event()

    def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            now = time.perf_counter()
            if now - last > 0.002:
                pauses.append((last, now))
            last = now
            running.set()

    thread = threading.Thread(target=ticker)
    thread.start()
    running.wait()
    start = time.perf_counter()
    call()
    end = time.perf_counter()
    done.set()
    thread.join()
    assert end - start > 0.005, "too short a call to tell"
    longest = max((min(b, end) - max(a, start) for a, b in pauses), default=0.0)
    return longest < (end - start) / 2


@pytest.mark.skipif(session_module.BULK_HELPER is None, reason="the compiled loader helper is not built")
def test_the_tree_walk_lets_other_threads_run() -> None:
    """Issue 11: the window's worker builds the outline of 900k entries while the GUI thread paints;
    the C walk (no match function: a search's hits come as a column) runs without the GIL. A
    2M-entry chain takes tens of ms; a call holding the GIL pauses the other thread throughout
    (tried thrice, for a machine too busy to schedule it)."""
    helper = session_module.BULK_HELPER
    assert helper is not None
    n = 2_000_000
    parent = array("i", range(-1, n - 1))
    first = array("i", range(n)) + array("i", [n - 1, n - 1])
    del first[n + 1 :]
    kids = array("i", range(1, n))
    shows = bytearray(b"\x01") * n
    order, under = array("i", [0]) * n, array("i", [0]) * n
    assert any(
        _others_ran_during(lambda: helper.tree_order(parent, first, kids, shows, None, order, under))
        for _ in range(3)
    )
    assert list(order[:3]) == [0, 1, 2] and list(under[:3]) == [-1, 0, 1]


@pytest.mark.skipif(session_module.BULK_HELPER is None, reason="the compiled loader helper is not built")
def test_the_parent_links_go_in_slices_the_same_as_at_once() -> None:
    """link_parents holds the GIL (the columns are the session's, which may grow meanwhile): outline
    calls it a slice of records at a time, each the same as its part of one call over all."""
    helper = session_module.BULK_HELPER
    assert helper is not None
    n = 10_000
    rng = random.Random(5)
    ids = array("q", range(1, n + 1))
    parents = array("q", [-2, -1, -3, *(rng.randrange(1, n + 1) for _ in range(n - 3))])
    sorted_ids = array("Q", ((k + 1) << 32 | k for k in range(n)))
    whole, sliced = array("i", [0]) * n, array("i", [7]) * n
    helper.link_parents(parents, ids, sorted_ids, {}, False, whole, 0, n)
    for start in range(0, n, 777):
        helper.link_parents(parents, ids, sorted_ids, {}, False, sliced, start, min(n, start + 777))
    assert sliced == whole
    assert whole[:3].tolist() == [-1, -1, -2]
    with pytest.raises(ValueError, match="range"):
        helper.link_parents(parents, ids, sorted_ids, {}, False, whole, 5, n + 1)


_DIGITS = st.text(alphabet="0123456789", min_size=17, max_size=17)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            _DIGITS,
            st.sampled_from(
                [
                    *("20251019223925412", "20240229235959999", "00000101000000000", "20250230100000000"),
                    *("20250301050000000", "20251019240000000", "20251020000000000", "20250431000000000"),
                ]
            ),
        ),
        min_size=2,
        max_size=6,
    )
)
def test_packed_dates_taken_as_they_are_order_as_their_times(digit_strings: list[str]) -> None:
    """Where _plain_date keeps a packed timestamp, JavaScript reads it as a date, and two such
    compare as their times do."""
    kept = [
        (int(d), _date_ms(unpack_timestamp(int(d)))) for d in digit_strings if _plain_date(int(d)) is not None
    ]
    for packed, ms in kept:
        assert ms is not None, packed
    for (a, ms_a), (b, ms_b) in itertools.combinations(kept, 2):
        assert (a < b) == (ms_a < ms_b) and (a == b) == (ms_a == ms_b)


def test_siblings_with_odd_timestamps_sort_as_pi_sorts_them(tmp_path: Path, bulk_loader: str) -> None:
    """Branch points whose children have pi's timestamps (sorted by their digits), equal ones (kept
    in file order), and ones JavaScript reads otherwise or not at all (month 13, February 30, hour
    24, another format, a number): the reference comparator's order everywhere."""
    odd = [
        "2025-13-01T00:00:00.000Z",
        "2025-02-30T10:00:00.000Z",
        "2025-10-19T24:00:00.000Z",
        "2025-10-19T10:00:00Z",
        "Oct 19 2025",
        17,
    ]
    plain = [
        *("2025-10-19T22:39:25.412Z", "2025-10-19T22:39:25.412Z", "2024-02-28T23:59:59.999Z"),
        # next to the odd ones JavaScript rolls over: February 30 is March 2, 24:00 the next day
        *("2025-03-01T05:00:00.000Z", "2025-03-02T10:00:00.000Z", "2025-10-20T00:00:00.000Z"),
    ]
    lines: list[dict[str, Any]] = [U("root", id="a0000000", parentId=None, timestamp=plain[0])]
    rng = random.Random(3)
    for group in range(8):
        parent = f"b{group:07x}"
        lines.append(U("p", id=parent, parentId="a0000000", timestamp=plain[0]))
        pool = plain + (odd if group % 2 else [])
        for k in range(9):
            lines.append(U(f"c{k}", id=f"c{group:03x}{k:04x}", parentId=parent, timestamp=rng.choice(pool)))
    path = tmp_path / "siblings.jsonl"
    path.write_bytes(to_bytes([HEADER, *lines]))
    s = Session.open(path)
    for mode in ("default", "all"):
        assert as_plain(build_outline(s, mode)) == reference_outline(s, mode)


def _reference_nearest_shown(outline: Outline, session: Session, record: int) -> int | None:
    """The record-by-record walk up the parents that nearest_shown replaced."""
    seen = set()
    cur: int | None = record
    while cur is not None and cur not in seen:
        if cur in outline.group_of:
            return cur
        seen.add(cur)
        pid = session.records[cur].parent_id
        cur = session.get_index(pid) if js_truthy(pid) else None
    return None


@pytest.mark.parametrize("near", [0, 3, outline_module.NEAR_STEPS])
@pytest.mark.parametrize("seed", range(6))
def test_the_nearest_shown_ancestor_is_the_walk_ups(
    tmp_path: Path, seed: int, bulk_loader: str, near: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selection kept through a search: the entry if shown, else its nearest shown ancestor — over
    branches, cycles, missing, duplicate and odd parent ids; no load issue noted for a cycle met.
    ``near``: the steps walked record by record before the whole path is taken (0: always the path)."""
    monkeypatch.setattr(outline_module, "NEAR_STEPS", near)
    s = generated_session(tmp_path, seed, 150 + 40 * seed)
    rng = random.Random(seed)
    found = 0
    for share in (0.02, 0.2, 0.7):
        matches = {i for i in range(len(s.records)) if rng.random() < share}
        o = build_outline(s, "all", match=matches.__contains__)
        issues = len(s.issues)
        for record in range(len(s.records)):
            expected = _reference_nearest_shown(o, s, record)
            assert o.nearest_shown(s, record) == expected, record
            found += expected is not None and expected != record
        assert len(s.issues) == issues
    assert found


def test_last_present_skips_records_past_the_column() -> None:
    """Records pi appended after the outline was built are not in its columns: not shown."""
    column = RecordColumn(array("i", [5, -1, 3]), -1, 2)
    assert column.last_present([0, 1, 2, 7]) == 2
    assert column.last_present([0, 1, 7, 9]) == 0
    assert column.last_present([1]) is None
    assert column.last_present([]) is None


@pytest.mark.parametrize("seed", range(4))
def test_the_last_record_of_a_type_is_the_last_of_all_of_them(tmp_path: Path, seed: int) -> None:
    s = generated_session(tmp_path, seed, 300)
    for symbol in ("session_info", "message", "compaction", "label", "no such type"):
        every = s.records.indices_of_types((symbol,))
        assert s.records.last_of_type(symbol) == (every[-1] if every else None)


def test_the_last_of_a_type_is_not_a_match_across_two_items() -> None:
    """Codes whose bytes, side by side, spell another code's: only whole items count."""
    from session_studio.core.record_table import RecordTable

    t = RecordTable()
    for name in ("a", "b", "c"):
        t.symbol(name)
    a, b, c = t.code("a"), t.code("b"), t.code("c")
    t.types = array("I", [c, a, 0x01000000 * c, 0x00000100 * b, 0, 0])
    assert t.last_of_type("c") == 0 and t.last_of_type("a") == 1
    t.types = array("I", [b, (c << 8), 0])
    assert t.last_of_type("c") is None and t.last_of_type("b") == 0
