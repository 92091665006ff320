"""A fork of a path whose compaction kept from a label (pi's backward scan puts the cut on a label
before a user message): forks drop labels, so pi 1.6.0 re-points the compaction to the entry after
the label (spec §10.1 rule 7) and its context stays whole; pi 0.80.2 keeps the label's id and then
finds no kept entry. Checked against both real pis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from session_studio.engine.edits import fork_loses_kept_entries, fork_to_file, fork_warning
from tests.conftest import Oracle, Oracle16

pytestmark = pytest.mark.oracle


def _message(i: int, parent: str, role: str, text: str) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "timestamp": 1767225600000 + i * 1000}
    if role == "user":
        m["content"] = text
    else:
        m.update(content=[{"type": "text", "text": text}], api="openai-completions", provider="openai")
        m.update(model="gpt-x", stopReason="stop")
        m["usage"] = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
        m["usage"]["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "type": "message",
        "id": f"a000000{i}",
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:0{i}.000Z",
        "message": m,
    }


def _kept_from_a_label(path: Path) -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "11111111-1111-4111-8111-111111111111",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/x"},
        _message(1, None, "user", "hello " * 50),  # type: ignore[arg-type]
        _message(2, "a0000001", "assistant", "hi " * 50),
        {"type": "label", "id": "b0000001", "parentId": "a0000002", "timestamp": "2026-01-01T00:00:30.000Z",
         "targetId": "a0000001", "label": "start"},
        _message(3, "b0000001", "user", "second " * 50),
        _message(4, "a0000003", "assistant", "answer " * 50),
        {"type": "compaction", "id": "c0000001", "parentId": "a0000004", "timestamp": "2026-01-01T00:00:40.000Z",
         "summary": "prev summary", "firstKeptEntryId": "b0000001", "tokensBefore": 500,
         "details": {"readFiles": [], "modifiedFiles": []}, "fromHook": False},
        _message(5, "c0000001", "user", "third " * 50),
        _message(6, "a0000005", "assistant", "done " * 50),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _compaction(path: Path) -> dict[str, Any]:
    return next(v for v in map(json.loads, path.read_text().splitlines()) if v["type"] == "compaction")


def _fork(tmp_path: Path, profile: PiProfile) -> tuple[Session, Path, Path]:
    """(the session, its file, its leaf's path forked under ``profile``)."""
    src = _kept_from_a_label(tmp_path / "s.jsonl")
    s = Session.open(src)
    return s, src, fork_to_file(s, "a0000006", tmp_path / "fork.jsonl", profile=profile)


def _roles(out: dict[str, Any]) -> list[str]:
    return [m["role"] for m in out["context"]["messages"]]


def test_pi_1_6_0_re_points_the_compaction_and_keeps_the_whole_context(
    oracle16: Oracle16, tmp_path: Path
) -> None:
    s, src, fork = _fork(tmp_path, PROFILE_1_6_0)
    assert _compaction(fork)["firstKeptEntryId"] == "a0000003"  # what pi 1.6.0's own fork writes
    whole = oracle16.run("context", str(src))
    assert _roles(whole) == ["compactionSummary", "user", "assistant", "user", "assistant"]
    assert oracle16.run("context", str(fork))["context"]["messages"] == whole["context"]["messages"]
    assert "as pi 1.6.0 does" in fork_warning(fork_loses_kept_entries(s, "a0000006"), PROFILE_1_6_0)


def test_pi_0_80_2_keeps_the_labels_id_and_the_fork_says_what_it_loses(
    oracle: Oracle, tmp_path: Path
) -> None:
    s, src, fork = _fork(tmp_path, PROFILE_0_80_2)
    assert _compaction(fork)["firstKeptEntryId"] == "b0000001"  # pi 0.80.2's createBranchedSession
    assert len(_roles(oracle.run("context", str(fork)))) < len(_roles(oracle.run("context", str(src))))
    lost = fork_loses_kept_entries(s, "a0000006")
    assert lost == ["c0000001"] and "drops the messages that compaction kept" in fork_warning(
        lost, PROFILE_0_80_2
    )
