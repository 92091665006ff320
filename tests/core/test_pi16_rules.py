"""One fast check per pi 1.6.0 rule of spec §10 that the plan depends on.

Each row builds a tiny session and states what pi 1.6.0 computes and, where the
rule is a change, what pi 0.80.2 computes for the same file (both were run on
the real pis; the 1.6.0 oracle's cases/ cover the same rules end to end).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from session_studio.core.file_ops import FileOps
from session_studio.core.jsvalue import js_stringify
from session_studio.core.messages import convert_to_llm
from session_studio.core.oracle_schema import plan_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile, detect_profile, pi16_marker
from session_studio.core.projection import build_session_projection, current_system_message
from session_studio.core.serialize import serialize_conversation
from session_studio.core.session import Session
from session_studio.core.tokens import estimate_tokens, estimate_tokens_16

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-15T09:00:00.000Z", "cwd": "/p"}


def U(n: int, ch: str = "u") -> dict[str, Any]:
    return {"role": "user", "content": ch * n, "timestamp": 1}


def A(n: int, *, usage: int = 0, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a" * n}, *(calls or [])],
        "stopReason": "toolUse" if calls else "stop",
        "provider": "anthropic",
        "model": "claude-test",
        "timestamp": 1,
    }
    if usage:
        m["usage"] = {"input": usage, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage}
    return m


def T(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "read",
        "content": [{"type": "text", "text": "t" * n}],
        **extra,
    }


def SYS(content: str = "", **extra: Any) -> dict[str, Any]:
    return {"role": "system", "content": content, "timestamp": 5, **extra}


def session_of(*items: Any) -> Session:
    """Entries e1, e2, … chained linearly; a dict with "role" is a message entry."""
    return Session.from_bytes(file_of(*items))


def file_of(*items: Any) -> bytes:
    """session_of's file."""
    lines = [HEADER]
    parent = None
    for k, item in enumerate(items, 1):
        eid = f"e{k}"
        body = {"type": "message", "message": item} if "role" in item else dict(item)
        entry = {
            "type": body.pop("type"),
            "id": eid,
            "parentId": parent,
            "timestamp": "2026-01-15T09:00:00.000Z",
        }
        entry.update(body)
        lines.append(entry)
        parent = eid
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


def plan(session: Session, profile: PiProfile, keep: int = 20000) -> dict[str, Any]:
    out, _ = plan_output(session, keep_recent=keep, profile=profile)
    text = js_stringify(out)
    assert text is not None
    return dict(json.loads(text))


def custom(n: int) -> dict[str, Any]:
    return {"type": "custom_message", "customType": "note", "content": "c" * n, "display": True}


def edit(target: str, replacement: Any) -> dict[str, Any]:
    return {"type": "context_edit", "targetId": target, "replacement": replacement}


def cut_of(p: dict[str, Any]) -> tuple[Any, Any, Any]:
    c = p["cut"]
    return c["firstKeptEntryId"], c["isSplitTurn"], c["turnStartEntryId"]


def roles(p: dict[str, Any]) -> list[Any]:
    return [m["role"] for m in p["context"]["messages"]]


Check = Callable[[dict[str, Any]], Any]

# (rule, entries, keepRecentTokens, what to read from the plan, pi 1.6.0, pi 0.80.2)
RULES: list[tuple[str, tuple[Any, ...], int, Check, Any, Any]] = [
    (
        "17 compaction snapshot first, kept system messages dropped",
        (
            SYS("prompt"),
            U(8),
            A(8),
            {
                "type": "compaction",
                "summary": "S",
                "firstKeptEntryId": "e1",
                "tokensBefore": 9,
                "systemMessage": SYS("snap"),
            },
            U(8),
        ),
        20000,
        roles,
        ["system", "compactionSummary", "user", "assistant", "user"],
        ["compactionSummary", "system", "user", "assistant", "user"],
    ),
    (
        "5 retain-none compaction keeps nothing before it",
        (
            U(8),
            A(8),
            {"type": "compaction", "summary": "S", "firstKeptEntryId": "e3", "tokensBefore": 9},
            U(8),
        ),
        20000,
        roles,
        ["compactionSummary", "user"],
        ["compactionSummary", "user"],
    ),
    (
        "18 null edit hides its target",
        (U(8), A(8), T(40), edit("e3", None)),
        20000,
        roles,
        ["user", "assistant"],
        ["user", "assistant", "toolResult"],
    ),
    (
        "18 the latest edit per target wins; strings become text blocks for tool results",
        (U(8), A(8), T(40), edit("e3", None), edit("e3", {"content": "short"})),
        20000,
        lambda p: p["context"]["messages"][2]["content"],
        [{"type": "text", "text": "short"}],
        [{"type": "text", "text": "t" * 40}],
    ),
    (
        "18 a user message's string replacement stays a string",
        (U(8), edit("e1", {"content": "new"})),
        20000,
        lambda p: p["context"]["messages"][0]["content"],
        "new",
        "u" * 8,
    ),
    (
        "19 null content is read as []",
        ({"role": "user", "content": None, "timestamp": 1}, A(8)),
        20000,
        lambda p: p["context"]["messages"][0]["content"],
        [],
        None,
    ),
    (
        "20 convertToLlm keeps system messages",
        (SYS("prompt"), U(8)),
        20000,
        lambda p: [m["role"] for m in p["llmMessages"]],
        ["system", "user"],
        ["user"],
    ),
    (
        "21 system messages are estimated (content + sections + JSON of toolsAdded)",
        (SYS("x" * 40, sections={"a": "y" * 40, "b": None}, toolsAdded=[{"name": "t"}]),),
        20000,
        lambda p: p["entryTokens"]["e1"],
        (40 + 40 + len('[{"name":"t"}]') + 3) // 4,
        0,
    ),
    (
        "22 usage before the latest context edit is not trusted",
        (U(8), A(8, usage=5000), T(400), edit("e3", None)),
        20000,
        lambda p: p["contextTokens"]["tokens"],
        4,
        5100,
    ),
    (
        "22 usage after the latest edit is trusted",
        (U(8), edit("e1", {"content": "x"}), A(8, usage=5000), U(40)),
        20000,
        lambda p: p["contextTokens"]["tokens"],
        5010,
        5010,
    ),
    (
        "25 an empty branch summary is no cut point",
        (U(400), A(400), T(400), {"type": "branch_summary", "fromId": "e1", "summary": ""}, U(40)),
        50,
        cut_of,
        ("e4", True, "e1"),
        ("e4", True, "e4"),  # 0.80.2's quirk: a branch summary cut is its own turn start
    ),
    (
        "26 custom messages count toward keepRecentTokens (example E)",
        (U(400), A(400), U(400), custom(800)),
        150,
        cut_of,
        ("e4", False, None),
        ("e2", True, "e1"),
    ),
    (
        "27 an oversized trailing tool result keeps its assistant (example D)",
        (
            U(400),
            A(400, calls=[{"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "f"}}]),
            T(4000),
        ),
        100,
        cut_of,
        ("e2", True, "e1"),
        ("e1", False, None),
    ),
    (
        "28 the backward scan stops at a custom message",
        (U(400), A(400), custom(40), {"type": "model_change", "provider": "p", "modelId": "m"}, U(400)),
        50,
        cut_of,
        ("e4", True, "e3"),
        ("e3", True, "e3"),
    ),
    (
        "29 a cut at a bashExecution is not a split turn (example G)",
        (
            U(400),
            A(400),
            {"role": "bashExecution", "command": "ls", "output": "o" * 400, "exitCode": 0, "timestamp": 1},
            A(400),
        ),
        150,
        cut_of,
        ("e3", False, None),
        ("e3", True, "e3"),
    ),
    (
        "30 a recovery attempt hidden by null edits moves the cut past it",
        (U(400), A(400), U(400), A(400), edit("e4", None)),
        100,
        cut_of,
        ("e4", True, "e3"),  # without the advance: e3, not split
        ("e4", True, "e3"),
    ),
]


@pytest.mark.parametrize(
    ("rule", "entries", "keep", "read", "pi16", "pi0802"), RULES, ids=[r[0] for r in RULES]
)
def test_rule(rule: str, entries: tuple[Any, ...], keep: int, read: Check, pi16: Any, pi0802: Any) -> None:
    session = session_of(*entries)
    assert read(plan(session, PROFILE_1_6_0, keep)) == pi16
    if pi0802 is not None:
        assert read(plan(session, PROFILE_0_80_2, keep)) == pi0802


def test_rule_31_preparation_drops_system_messages_and_reads_nested_calls() -> None:
    nested = {"calls": [{"name": "edit", "arguments": {"path": "deep.py"}}]}
    session = session_of(SYS("prompt"), U(400), A(400), T(40, nestedCalls=nested), U(400), A(400))
    prep = plan(session, PROFILE_1_6_0, keep=150)["preparation"]
    assert [m["role"] for m in prep["messagesToSummarize"]] == ["user", "assistant", "toolResult"]
    assert prep["modifiedFiles"] == ["deep.py"]
    assert plan(session, PROFILE_0_80_2, keep=150)["preparation"]["modifiedFiles"] == []


def test_rule_32_nested_calls_only_under_1_6_0() -> None:
    msg = T(
        1,
        nestedCalls={"calls": [{"name": "read", "arguments": {"path": "a"}}, {"name": "x", "arguments": {}}]},
    )
    ops16, ops08 = FileOps(), FileOps()
    ops16.add_from_message(msg, PROFILE_1_6_0)
    ops08.add_from_message(msg, PROFILE_0_80_2)
    assert ops16.to_json()["read"] == ["a"] and ops08.to_json()["read"] == []


def test_rule_40_serializer_omits_thinking_and_keeps_surrogate_pairs() -> None:
    thinking = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "toolCall", "name": "ls", "arguments": {}},
        ],
    }
    assert serialize_conversation([thinking], PROFILE_1_6_0) == "[Assistant tool calls]: ls()"
    assert "[Assistant thinking]: hmm" in serialize_conversation([thinking], PROFILE_0_80_2)
    text = "x" * 1999 + "\U0001f600" + "y"
    result = {"role": "toolResult", "content": [{"type": "text", "text": text}]}
    assert serialize_conversation([result], PROFILE_1_6_0).startswith(
        "[Tool result]: " + "x" * 1999 + "\n\n[..."
    )
    assert "\ud83d" in serialize_conversation([result], PROFILE_0_80_2)


def test_current_system_message_replays_sections_and_tools() -> None:
    first = SYS("base", sections={"a": "1", "b": "2"}, toolsAdded=[{"name": "read"}, {"name": "bash"}])
    second = SYS(
        "", sections={"a": None, "c": "3"}, toolsRemoved=[{"name": "read"}], toolsAdded=[{"name": "edit"}]
    )
    assert current_system_message([first, U(1), second]) == {
        "role": "system",
        "content": "base",
        "sections": {"b": "2", "c": "3"},
        "toolsAdded": [{"name": "bash"}, {"name": "edit"}],
        "timestamp": 5,
    }
    assert current_system_message([U(1)]) is None


def test_estimates_differ_only_for_system_messages() -> None:
    for m in (U(9), A(9), T(9)):
        assert estimate_tokens_16(m) == estimate_tokens(m)
    assert estimate_tokens(SYS("x" * 8)) == 0 and estimate_tokens_16(SYS("x" * 8)) == 2
    assert convert_to_llm([SYS("p")], PROFILE_1_6_0) == [SYS("p")]


def test_projection_maps_messages_to_entries() -> None:
    session = session_of(U(4), A(4), T(4), edit("e3", None), custom(4))
    p = build_session_projection(session)
    assert [len(p.entry_messages(k)) for k in range(len(p.entries))] == [1, 1, 0, 0, 1]


def test_rule_8_headerless_file_is_refused_not_reset() -> None:
    session = Session.from_bytes(b'{"type":"message","id":"x","parentId":null}\n')
    out16, code16 = plan_output(session, profile=PROFILE_1_6_0)
    out08, code08 = plan_output(session, profile=PROFILE_0_80_2)
    assert code16 == 3 and "not a valid pi session" in out16["error"]
    assert code08 == 0 and out08["sessionReset"] is True


MARKERS = [
    ({"type": "usage", "kind": "cache_warm", "provider": "p", "model": "m", "usage": {}}, "usage entry"),
    (edit("e1", None), "context_edit entry"),
    (SYS("p"), "system"),
    (
        {"type": "compaction", "summary": "S", "firstKeptEntryId": "e1", "tokensBefore": 1, "usage": {}},
        "usage",
    ),
    ({"type": "compaction", "summary": "S", "firstKeptEntryId": "e2", "tokensBefore": 1}, "retain-none"),
    ({"type": "branch_summary", "fromId": "e1", "summary": "s", "usage": {}}, "branch summary"),
]


@pytest.mark.parametrize("on_disk", [False, True], ids=["values kept", "values on disk"])
@pytest.mark.parametrize(("entry", "words"), MARKERS, ids=[m[1] for m in MARKERS])
@pytest.mark.parametrize("first", [False, True], ids=["after a message", "first entry"])
def test_auto_detects_1_6_0_markers(
    entry: dict[str, Any], words: str, first: bool, on_disk: bool, tmp_path: Path
) -> None:
    """Also in a big file's way (values on disk, summaries ruled out by their bytes): a system
    message or context edit as the first marker was dropped with them until 2026-12-02, so a
    1.6.0 file of over 8 MB starting with its system prompt was read as a plain v3 file."""
    if first and words == "retain-none":  # the compaction keeps from itself: e1 when it is first
        entry = {**entry, "firstKeptEntryId": "e1"}
    data = file_of(entry) if first else file_of(U(4), entry)
    session = Session.from_bytes(data)
    if on_disk:
        path = tmp_path / "s.jsonl"
        path.write_bytes(data)
        session = Session.open(path, keep_values=False, use_cache=False)
    marker = pi16_marker(session)
    assert marker is not None and words in marker
    assert detect_profile(session, "auto", plain="0.80.2").profile is PROFILE_1_6_0
    assert detect_profile(session, "0.80.2").profile is PROFILE_0_80_2


def test_auto_follows_the_setting_for_plain_files(monkeypatch: pytest.MonkeyPatch) -> None:
    from session_studio.core import profile

    plain = session_of(
        U(4), A(4), {"type": "compaction", "summary": "S", "firstKeptEntryId": "e2", "tokensBefore": 1}
    )
    assert pi16_marker(plain) is None
    assert detect_profile(plain, "auto", plain="0.80.2").profile is PROFILE_0_80_2
    assert detect_profile(plain, "auto", plain="1.6.0").profile is PROFILE_1_6_0
    monkeypatch.setattr(profile, "installed_pi_version", lambda: "0.80.2")
    assert detect_profile(plain, "auto").profile is PROFILE_0_80_2
    monkeypatch.setattr(profile, "installed_pi_version", lambda: "1.6.0")
    assert detect_profile(plain, "auto").profile is PROFILE_1_6_0
    monkeypatch.setattr(profile, "installed_pi_version", lambda: None)
    assert detect_profile(plain, "auto").profile is PROFILE_1_6_0


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}, "plain v3 file"),
        ({"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/"}, "version 2 file"),
        ({"type": "session", "id": "s", "timestamp": "t", "cwd": "/"}, "version 1 file"),
    ],
)
def test_the_reason_names_a_legacy_file_as_what_it_is(
    monkeypatch: pytest.MonkeyPatch, header: dict[str, Any], kind: str
) -> None:
    """A version 1 or 2 file was explained as a "plain v3 file" in the planner's pi version box."""
    from session_studio.core import profile

    monkeypatch.setattr(profile, "installed_pi_version", lambda: None)
    line = {"type": "message", "id": "e1", "parentId": None, "timestamp": "t", "message": U(4)}
    if header.get("version") != 3:
        line = {"type": "message", "timestamp": "t", "message": U(4)}  # v1/v2: pi gives it an id
    session = Session.from_bytes(orjson.dumps(header) + b"\n" + orjson.dumps(line) + b"\n")
    assert session.migrated == (header.get("version") != 3)
    for choice in (detect_profile(session, "auto"), detect_profile(session, "auto", plain="0.80.2")):
        assert choice.reason.startswith(kind), choice.reason


def _fake_pi(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, *, package_version: str | None, prints: str
) -> None:
    """A `pi` on PATH: an npm-style install (package.json next to dist/cli.js) or a bare script."""
    import os

    from session_studio.core import profile

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = f"#!/bin/sh\necho {prints}\n"
    if package_version is not None:
        pkg = tmp_path / "node_modules" / "@earendil-works" / "pi-coding-agent"
        (pkg / "dist").mkdir(parents=True)
        (pkg / "package.json").write_text(json.dumps({"name": "x", "version": package_version}))
        cli = pkg / "dist" / "cli.js"
        cli.write_text(script)
        cli.chmod(0o755)
        os.symlink(cli, bin_dir / "pi")
    else:
        (bin_dir / "pi").write_text(script)
        (bin_dir / "pi").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    profile.installed_pi_version.cache_clear()


def test_installed_pi_is_read_from_its_package_json(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from session_studio.core import profile

    _fake_pi(tmp_path, monkeypatch, package_version="0.80.2", prints="9.9.9")
    try:
        assert profile.installed_pi_version() == "0.80.2"
        assert profile.default_choice().profile is PROFILE_0_80_2
    finally:
        profile.installed_pi_version.cache_clear()


def test_installed_pi_falls_back_to_pi_version(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from session_studio.core import profile

    _fake_pi(tmp_path, monkeypatch, package_version=None, prints="1.6.0")
    try:
        assert profile.installed_pi_version() == "1.6.0"
        assert "pi 1.6.0 is installed" in profile.default_choice().reason
    finally:
        profile.installed_pi_version.cache_clear()


def _summary_lines(entries: list[dict[str, Any]]) -> bytes:
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    return b"".join(orjson.dumps(e) + b"\n" for e in [header, *entries])


@pytest.mark.parametrize(
    ("extra", "marked"),
    [
        ({}, False),
        ({"summary": 'the "usage" of words, an id "cafe0001" and "systemMessage"'}, False),
        ({"usage": {"input": 1}}, True),
        ({"systemMessage": {"role": "system", "content": "x"}}, True),
        ({"firstKeptEntryId": "cafe0001"}, True),  # retain-none: its own id
        ({"\u0075sage": 1}, True),  # spelled with an escape in the file below
    ],
)
def test_the_marker_reads_summaries_whose_bytes_may_hold_one(
    tmp_path: Path, extra: dict[str, Any], marked: bool
) -> None:
    """Issue 11: a big file's summaries are ruled out by their bytes; the verdict is the value's."""
    compaction = {
        "type": "compaction",
        "id": "cafe0001",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "summary": "s",
        "firstKeptEntryId": "0a1b2c3d",
        "tokensBefore": 5,
        **extra,
    }
    data = _summary_lines([compaction])
    if "usage" in extra and extra["usage"] == 1:
        data = data.replace(b'"usage":1', b'"\\u0075sage":1')
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    for keep in (True, False):
        session = Session.open(p, keep_values=keep, use_cache=False)
        assert (pi16_marker(session) is not None) is marked, keep
