"""Issue 11 (pi appends to a big session): the outline of the appended file, extended from the one
shown, is exactly the outline built from scratch; and the common appends take that way."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.ui.outline import FILTERS, build_outline, extended_outline

from .test_outline_columns import _entry, as_plain, generated_session


def _append(path: Path, entries: list[dict[str, Any]]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))


def _pi_like(rng: random.Random, k: int, parent: str) -> dict[str, Any]:
    """What pi writes while it runs: messages, and now and then a usage entry or a label."""
    r = rng.random()
    e: dict[str, Any]
    if r < 0.15:
        e = {"type": "usage", "kind": "turn", "provider": "p", "model": "m", "usage": {"totalTokens": k}}
    elif r < 0.2:
        e = {"type": "label", "targetId": parent, "label": f"L{k}"}
    else:
        role = rng.choice(["user", "assistant", "toolResult"])
        e = {"type": "message", "message": {"role": role, "content": f"appended {k}", "timestamp": k}}
    return {**e, "id": f"{0x70000000 + k:08x}", "parentId": parent, "timestamp": "2025-01-02T10:00:00.000Z"}


def _odd(rng: random.Random, k: int, n: int, leaf: str) -> dict[str, Any]:
    """Appends the fast way must refuse (or get right): branches, duplicates, forward links, roots."""
    e = _entry(rng, k)
    eid = rng.choice([f"{0x70000000 + k:08x}", f"{rng.randrange(n):08x}", f"uuid-{k}"])
    parent = rng.choice(
        [
            leaf,
            f"{rng.randrange(n):08x}",
            f"{0x70000000 + k + 1:08x}",
            None,
            eid,
            "missing",
            f"{0x70000000 + k - 1:08x}",
        ]
    )
    return {**e, "id": eid, "parentId": parent, "timestamp": "2025-01-02T10:00:00.000Z"}


def _leaf_id(s: Session) -> str:
    leaf = s.leaf_index()
    assert leaf is not None
    return str(s.records[leaf].id)


@pytest.mark.parametrize("seed", range(4))
def test_an_extended_outline_is_the_outline_built_again(tmp_path: Path, seed: int, bulk_loader: str) -> None:
    rng = random.Random(seed)
    s = generated_session(tmp_path, seed, 150 + 20 * seed)
    path = Path(s.path)
    extended = 0
    for step in range(40):
        mode = rng.choice(list(FILTERS))
        before = s.path_indices(s.leaf_index())
        old = build_outline(s, mode, None, before)
        count = rng.choice([1, 1, 2, 3])
        batch = []
        for j in range(count):
            k = 1000 * step + j
            leaf = batch[-1]["id"] if batch and isinstance(batch[-1]["id"], str) else _leaf_id(s)
            odd = rng.random() < 0.3
            batch.append(_odd(rng, k, len(s.records), leaf) if odd else _pi_like(rng, k, leaf))
        _append(path, batch)
        assert len(s.refresh()) == count
        after = s.path_indices(s.leaf_index())
        # the path as the window passes it (a list, checked in C), and as any other collection
        for active in (after, set(after), before, set(before), old.active, after[1:]):
            got = extended_outline(s, old, mode, active)
            want = build_outline(s, mode, None, active)
            if got is not None:
                assert as_plain(got) == as_plain(want), (seed, step, mode)
                extended += active is after
            if isinstance(active, set):
                assert (got is None) == (extended_outline(s, old, mode, sorted(active)) is None)
    assert extended >= 5  # the pi-like appends take the fast way (8-19 of 40 steps, by seed)


def test_what_pi_appends_to_its_leaf_extends_the_outline_in_every_filter(tmp_path: Path) -> None:
    """A chain of messages, usage entries and a label at the leaf: extended, never built again (the
    labeled-only filter excepted: a label can show an old entry)."""
    rng = random.Random(5)
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"}
    ]
    parent = None
    for k in range(300):
        if k == 150:  # a second root's chain, written while the first chain goes on: its rows come after
            other = None
            for j in range(20):
                e = {**_pi_like(rng, j, other or ""), "id": f"{0x30000000 + j:08x}", "parentId": other}
                lines.append(e)
                other = e["id"]
        if k % 40 == 39:  # a branch now and then: a side chain off an older entry
            lines.append({**_pi_like(rng, k, f"{0x10000000 + k - 5:08x}"), "id": f"{0x20000000 + k:08x}"})
        e = _pi_like(rng, k, parent or "")
        e["id"] = f"{0x10000000 + k:08x}"
        e["parentId"] = parent
        lines.append(e)
        parent = e["id"]
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    s = Session.open(path)
    for step in range(12):
        before = {mode: build_outline(s, mode, None, s.path_indices(s.leaf_index())) for mode in FILTERS}
        leaf = _leaf_id(s)
        batch = []
        for j in range(1 + step % 3):
            e = _pi_like(rng, 1000 + 10 * step + j, batch[-1]["id"] if batch else leaf)
            batch.append(e)
        _append(path, batch)
        s.refresh()
        active = s.path_indices(s.leaf_index())
        for mode, old in before.items():
            got = extended_outline(s, old, mode, active)
            if mode == "labeled-only":
                assert got is None
                continue
            assert got is not None, (step, mode)
            assert as_plain(got) == as_plain(build_outline(s, mode, None, active))
            if mode == "all":  # the new rows went in before the other root's chain
                assert s.records[got.groups[-1][-1]].id == f"{0x30000000 + 19:08x}"
