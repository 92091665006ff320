"""The entries a branch summary covers, found from the id column's codes (fast) or id by id (pi's
way): the same for every old leaf and target, and the id-by-id way wherever codes cannot stand for
ids (numbers, null or missing ids)."""

from __future__ import annotations

import random
from pathlib import Path

from session_studio.core import Session
from session_studio.core.branch_summary import (
    _collect_by_id_codes,
    _collect_by_ids,
    collect_entries_for_branch_summary,
)
from tests.conftest import generate
from tests.core.util import A, U, session_of


def _pairs(s: Session, rng: random.Random, count: int) -> list[tuple[object, object]]:
    ids = [r.id for r in s.records]
    leaves = [s.records[i].id for i in range(len(s.records)) if i == s.leaf_index()] + ids[-5:]
    return [(rng.choice(leaves + ids), rng.choice(ids)) for _ in range(count)]


def _same(s: Session, old: object, target: object) -> bool:
    """Whether the fast way, where it answers, gives pi's entries and common ancestor."""
    fast = _collect_by_id_codes(s, old, target)
    slow = _collect_by_ids(s, old, target)
    got = collect_entries_for_branch_summary(s, old, target)
    assert (got.indices, got.common_ancestor_id) == (slow.indices, slow.common_ancestor_id), (old, target)
    if fast is None:
        return False
    assert (fast.indices, fast.common_ancestor_id) == (slow.indices, slow.common_ancestor_id), (old, target)
    return True


def test_codes_and_ids_find_the_same_entries_on_generated_sessions(tmp_path: Path) -> None:
    """Branching generated sessions (8-hex and UUID ids, as pi's files have), legacy ones
    (migrated ids) and damaged ones: 300 random old leaf / target pairs each."""
    rng = random.Random(11)
    files = generate(tmp_path / "g", "--seed", "11", "--count", "4", "--size", "small")
    files += generate(tmp_path / "l", "--seed", "12", "--count", "2", "--size", "small", "--legacy")
    files += generate(tmp_path / "d", "--seed", "13", "--count", "4", "--size", "small", "--damaged")
    fast = 0
    for f in files:
        s = Session.open(f)
        if not s.records:  # a damaged file with no entry left
            continue
        fast += sum(_same(s, old, target) for old, target in _pairs(s, rng, 300))
    assert fast > 1000  # the fast way answered for most pairs


def test_odd_ids_are_left_to_the_id_by_id_way() -> None:
    """A number as an id (each numbered anew in the column): the codes cannot stand for pi's Map
    equality, so the id-by-id way answers; its entries are pi's. Plain string ids: the codes."""
    numbered = session_of(
        U(10, id="a0000001", parentId=None), A(5, id=7, parentId="a0000001"), U(5, id="a0000003", parentId=7)
    )
    assert _collect_by_id_codes(numbered, "a0000003", "a0000001") is None
    assert collect_entries_for_branch_summary(numbered, "a0000003", "a0000001").indices == [1, 2]
    plain = session_of(U(10, id="c0000001", parentId=None), A(5, id="c0000002"), U(5, id="c0000003"))
    got = _collect_by_id_codes(plain, "c0000003", "c0000001")
    assert got is not None and (got.indices, got.common_ancestor_id) == ([1, 2], "c0000001")
