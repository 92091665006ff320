"""first_on_path_with_id: pi's `entries.findIndex(e => e.id === value)` over a path, by id code."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core.context import first_on_path_with_id, js_strict_eq
from session_studio.core.jsvalue import UNDEFINED
from tests.core.util import HEADER, U, to_bytes

#: ids as sessions hold them: pi's, repeated ones, other strings, numbers, null, none at all
_IDS = st.sampled_from(["0a1b2c3d", "ffffffff", "00000000", "ABCDEF12", "e1", "", 5, 5.0, None, UNDEFINED])
_TYPES = st.sampled_from(["message", "compaction", "custom"])


def _session(entries: list[tuple[Any, str]]) -> Session:
    values: list[Any] = [HEADER]
    for rid, typ in entries:
        v = {**U("x"), "type": typ, "parentId": None, "timestamp": "2025-01-01T00:00:00.000Z"}
        if rid is not UNDEFINED:
            v["id"] = rid
        values.append(v)
    return Session.from_bytes(to_bytes(values))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_IDS, _TYPES), min_size=1, max_size=12),
    st.data(),
    _IDS,
    st.one_of(st.none(), _TYPES),
    st.one_of(st.none(), st.integers(-2, 14)),
)
def test_the_search_by_id_code_is_the_loop_over_the_path(
    entries: list[tuple[Any, str]], data: Any, value: Any, type_name: str | None, stop: int | None
) -> None:
    s = _session(entries)
    n = len(s.records)
    path = data.draw(st.lists(st.integers(0, n - 1), max_size=20))
    end = len(path) if stop is None else max(0, min(stop, len(path)))
    expected = next(
        (
            k
            for k in range(end)
            if (type_name is None or s.records[path[k]].type == type_name)
            and js_strict_eq(s.records[path[k]].id, value)
        ),
        -1,
    )
    assert first_on_path_with_id(s, path, value, type_name=type_name, stop=stop) == expected
