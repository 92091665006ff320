"""iter_values(runs=True): the first value alone, every later complete line in runs.

The compiled loader reads runs of lines itself (most lines without building their JSON values);
only the first value (the header, which the caller takes) is parsed on its own. Until 2026-12-02
the whole first run (up to a MB of lines) was parsed: the first MB of every file, and all the
lines of a refresh after pi appended (~20 ms of a cached reopen of the 117 MB file)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from session_studio.core.reader import LineRun, RawValue, expand_runs, iter_values
from tests.core.util import A, U, chain, to_bytes


def _items(data: bytes, start: int = 0) -> list[RawValue | LineRun]:
    return list(iter_values(io.BytesIO(data), [], start, runs=True))


def _values(items: list[RawValue | LineRun]) -> list[tuple[int, int, Any]]:
    return [(v.line, v.offset, v.value) for v in expand_runs(items)]


@pytest.mark.parametrize("before", [b"", b"\n", b"not json\n", b"\n{broken\n\n"])
def test_only_the_first_value_is_parsed_alone(before: bytes) -> None:
    data = before + to_bytes(chain(*[m for i in range(50) for m in (U(f"q{i}"), A(i))]))
    items = _items(data)
    assert type(items[0]) is RawValue and items[0].value["type"] == "session"
    assert all(type(i) is LineRun for i in items[1:]) and len(items) > 1
    plain = list(iter_values(io.BytesIO(data), []))
    assert _values(items) == [(v.line, v.offset, v.value) for v in plain]


def test_a_read_from_an_offset_parses_its_first_value_alone() -> None:
    """A refresh reads the lines pi appended: its first value alone, the rest in runs."""
    data = to_bytes(chain(*[m for i in range(50) for m in (U(f"q{i}"), A(i))]))
    start = data.index(b"\n", len(data) // 2) + 1
    items = _items(data, start)
    assert type(items[0]) is RawValue and items[0].offset == start
    assert all(type(i) is LineRun for i in items[1:])
    plain = list(iter_values(io.BytesIO(data), [], start))
    assert _values(items) == [(v.line, v.offset, v.value) for v in plain]
