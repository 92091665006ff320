"""PlanMarks answers get/`in` directly: a tree paint asks about thousands of unmarked rows."""

from __future__ import annotations

from session_studio.core.plan import PlanMarks


class CountingMisses(dict[int, str]):
    """A base mapping that counts failed item lookups (each one a raised KeyError in Mapping.get)."""

    misses = 0

    def __missing__(self, key: int) -> str:
        type(self).misses += 1
        raise KeyError(key)


def test_get_and_contains_of_unmarked_records_raise_nothing() -> None:
    CountingMisses.misses = 0
    base = CountingMisses({1: "valid", 2: "summarised"})
    marks = PlanMarks(base, {2: "cut", 3: "prefix"})
    assert [marks.get(r) for r in range(5)] == [None, "valid", "cut", "prefix", None]
    assert marks.get(7, "none") == "none"
    assert [r in marks for r in range(5)] == [False, True, True, True, False]
    assert CountingMisses.misses == 0
    assert marks[1] == "valid" and marks[3] == "prefix"
