"""Engine edits without an LLM: labels, names, branch moves, forks, upgrades."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_studio.core import Session, WriteError
from session_studio.engine.edits import (
    append_label,
    append_session_name,
    branch_to,
    default_fork_target,
    fork_to_file,
    upgrade_legacy_file,
)
from tests.core.util import A, U, chain, to_bytes


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    # e0 U → e1 A → e2 U → e3 A, and a side branch e1 → e4 U → e5 A
    p = tmp_path / "t.jsonl"
    p.write_bytes(to_bytes(chain(U("q1"), A("a1"), U("q2"), A("a2"), U("side", parentId="e1"), A("sa"))))
    return p


def test_label_and_name_are_appended_under_the_leaf(tree: Path) -> None:
    s = Session.open(tree)
    e = append_label(s, "e2", "checkpoint")
    assert (e["parentId"], e["targetId"], e["label"]) == ("e5", "e2", "checkpoint") and s.label_of(
        "e2"
    ) == "checkpoint"
    cleared = append_label(s, "e2", None)
    assert "label" not in cleared and s.label_of("e2") is None
    n = append_session_name(s, "  My\r\nsession \n")
    assert n["name"] == "My session" and Session.open(tree).session_name() == "My session"


def test_branch_without_summary_writes_nothing_and_says_so(tree: Path) -> None:
    before = tree.read_bytes()
    out = branch_to(Session.open(tree), "e2")  # a user message: the new leaf is its parent
    assert out.navigation.new_leaf_id == "e1" and out.navigation.editor_text == "q2"
    assert out.entry is None and "nothing was written" in out.note
    assert tree.read_bytes() == before


def test_branch_with_label_persists_the_move(tree: Path) -> None:
    out = branch_to(Session.open(tree), "e3", label="here")
    assert out.entry is not None and out.entry["parentId"] == "e3"
    assert Session.open(tree).path_indices(Session.open(tree).leaf_index())[-2] == 3


def test_branch_summary_from_the_working_leaf(tree: Path) -> None:
    s = Session.open(tree)
    out = branch_to(s, "e3", summarize=True, summary_override="S", from_leaf_id="e5")
    assert out.summarized_ids == ["e4", "e5"]  # left the side branch, not the file's leaf
    assert out.entry is not None and (out.entry["parentId"], out.entry["fromId"]) == ("e3", "e3")


def test_fork_uses_the_announced_identity(tree: Path) -> None:
    s = Session.open(tree)
    path, sid, ts = default_fork_target(s)
    out = fork_to_file(s, "e3", path, session_id=sid, timestamp=ts)
    header = json.loads(out.read_text().split("\n")[0])
    assert out == path and header["id"] == sid and header["timestamp"] == ts and sid in out.name
    with pytest.raises(WriteError):
        fork_to_file(s, "e3", path)  # never overwrites


def test_upgrade_names_the_backup_by_version(tmp_path: Path) -> None:
    p = tmp_path / "v1.jsonl"
    h = {"type": "session", "id": "x", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": ""}
    p.write_bytes(
        to_bytes([h, {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}}])
    )
    original = p.read_bytes()
    path, backup = upgrade_legacy_file(Session.open(p))
    assert ".v1-backup-" in backup.name and backup.read_bytes() == original
    up = Session.open(path)
    assert not up.migrated and up.header is not None and up.header["version"] == 3
