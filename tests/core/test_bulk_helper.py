"""The compiled loader helper (core/_bulkindex.c): built where CI runs, and its token estimate is
pi's wherever it gives one (it gives None to leave a message to the Python path)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core import session as session_module
from session_studio.core.tokens import _estimate_tokens_exact
from tests.core.entry_strategies import JSON, MESSAGE
from tests.core.util import HEADER, U

HELPER = session_module.BULK_HELPER
needs_helper = pytest.mark.skipif(HELPER is None, reason="the compiled loader helper is not built")


def test_ci_builds_the_helper() -> None:
    """`pip install` builds it where a compiler is at hand: in CI it must be there, and current."""
    if HELPER is None:
        if os.environ.get("CI"):
            pytest.fail(
                "core/_bulkindex.c was not built by pip install (a compiler or Python headers missing?)"
            )
        pytest.skip("the compiled loader helper is not built")
    built = Path(HELPER.__file__)
    source = Path(session_module.__file__).with_name("_bulkindex.c")
    if built.parent == source.parent:  # an editable install builds it beside the source
        assert built.stat().st_mtime >= source.stat().st_mtime, "stale: run pip install -e . again"


@needs_helper
@settings(max_examples=400, deadline=None)
@given(MESSAGE)
@example({"role": "user", "content": [{"type": "text", "text": {}}]})  # NaN in pi
@example({"role": "assistant", "content": [{"type": "toolCall", "name": "n", "arguments": {"x": 1e16}}]})
def test_the_compiled_estimate_is_pis(message: dict[str, Any]) -> None:
    got = HELPER.estimate_message(message)
    if got is not None:
        assert got == _estimate_tokens_exact(message)


def _has_surrogate(v: Any) -> bool:
    if type(v) is str:
        return any("\ud800" <= c <= "\udfff" for c in v)
    if type(v) is dict:
        return any(_has_surrogate(k) or _has_surrogate(x) for k, x in v.items())
    if type(v) is list:
        return any(_has_surrogate(x) for x in v)
    return False


@needs_helper
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON, max_size=4), st.text(max_size=4))
def test_plain_tool_arguments_are_measured_in_c(arguments: dict[str, Any], name: str) -> None:
    """Floats and integers past 2**53 too: only surrogates leave a call to Python."""
    message = {"role": "assistant", "content": [{"type": "toolCall", "name": name, "arguments": arguments}]}
    got = HELPER.estimate_message(message)
    if not _has_surrogate(arguments):
        assert got is not None
        assert got == _estimate_tokens_exact(message)


_ID = st.sampled_from(["0000000a", "0000000b", "0000000c", "0000000d", "0000000e", "e1", "", "0000000A"])
_PARENT = st.one_of(_ID, st.none(), st.just(7))


@needs_helper
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(_ID, _PARENT), min_size=1, max_size=14),
    st.lists(st.tuples(_ID, _PARENT), max_size=4),
)
# a repeated id: the parent is its later record, not the previous line
@example([("0000000a", None), ("0000000b", "0000000a"), ("0000000a", None)], [])
# ... also when the later one was appended after the load
@example([("0000000a", None), ("0000000b", "0000000a")], [("0000000a", None)])
def test_the_compiled_path_walk_is_the_python_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    links: list[tuple[str, Any]],
    appended: list[tuple[str, Any]],
) -> None:
    """getBranch from every record, over repeated ids, ids that are not 8 hex digits, cycles and
    records pi appended after the load (byId's `recent` part): the same path and cycle notes."""

    def line(rid: str, parent: Any) -> bytes:
        return orjson.dumps(
            {**U("x"), "id": rid, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z"}
        )

    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\n".join([orjson.dumps(HEADER), *(line(*x) for x in links)]) + b"\n")
    session = Session.open(p, keep_values=False, use_cache=False, parallel=False)
    with p.open("ab") as fh:
        fh.write(b"".join(line(*x) + b"\n" for x in appended))
    session.refresh()

    def walks(helper: Any) -> tuple[list[list[int]], list[str]]:
        monkeypatch.setattr(session_module, "BULK_HELPER", helper)
        del session.issues[:]
        paths = [session.path_indices(i) for i in range(len(session.records))]
        return paths, [i.describe() for i in session.issues]

    assert walks(HELPER) == walks(None)


_ID_CODES = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from([0, 1, 0xFF, 0xFF00, 0x00FF00FF, 0xFFFFFFFF, 0x01000000]),
    st.integers(-40, -1),  # null, undefined, the other ids' codes
)


@needs_helper
@settings(max_examples=300, deadline=None)
@given(st.lists(_ID_CODES, max_size=400), st.booleans())
def test_the_compiled_id_sort_is_the_python_one(codes: list[int], repeat: bool) -> None:
    """byId's sorted (id << 32 | index) column and its "no id twice", sorted in C after a bulk load."""
    from array import array

    from session_studio.core.record_table import _no_repeats, _sorted_ids

    if repeat and codes:
        codes = codes + codes[: len(codes) // 3]  # ids that occur twice (pi's byId keeps the last)
    ids = array("q", codes)
    out = array("Q", [0]) * len(ids)
    count, unique = HELPER.sort_ids(ids, out)
    expected = _sorted_ids(ids)
    assert out[:count] == expected
    assert unique == _no_repeats(expected)


@needs_helper
@given(st.lists(st.integers(-(2**40), 2**40), max_size=50), st.integers(0, 60), st.integers(-(2**40), 2**40))
def test_the_compiled_line_shift_is_the_python_one(column: list[int], start: int, delta: int) -> None:
    from array import array

    from session_studio.core.record_table import _map_tail

    ours, theirs = array("q", column), array("q", column)
    HELPER.add_to_tail(ours, start, delta)
    _map_tail(theirs, start, lambda x: x + delta)
    assert ours == theirs
