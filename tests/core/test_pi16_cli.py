"""The command line's `--pi-version`: every command takes it, `info` says which profile and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_studio.cli import build_parser, main

CASES = Path(__file__).resolve().parent.parent / "oracle" / "pi-1.6.0" / "cases"


def test_every_command_accepts_pi_version() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():  # type: ignore[union-attr]
        options = {o for a in command._actions for o in a.option_strings}
        assert "--pi-version" in options, name


def test_info_prints_the_profile_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(CASES / "m1-system-first.jsonl")]) == 0
    out = capsys.readouterr().out
    assert 'pi profile:  1.6.0 (the file has a role:"system" message (line 2))' in out
    assert "Nothing to compact" in out  # pi 1.6.0 counts the system prompt (case m1)
    assert main(["info", str(CASES / "m1-system-first.jsonl"), "--pi-version", "0.80.2"]) == 0
    out = capsys.readouterr().out
    assert "pi profile:  0.80.2 (pinned: --pi-version 0.80.2)" in out
    assert "would summarise" in out


def test_plan_json_carries_the_profile(capsys: pytest.CaptureFixture[str]) -> None:
    case = str(CASES / "m2-edit-null.jsonl")
    assert main(["plan", case, "--fields", "contextTokens"]) == 0
    pi16 = json.loads(capsys.readouterr().out)
    assert main(["plan", case, "--fields", "contextTokens", "--pi-version", "0.80.2"]) == 0
    pi0802 = json.loads(capsys.readouterr().out)
    assert pi16["piVersion"] == "1.6.0" and pi0802["piVersion"] == "0.80.2"
    # the null edit hides a 40,000-char tool result from 1.6.0's context only
    assert pi0802["contextTokens"]["tokens"] - pi16["contextTokens"]["tokens"] >= 10000


def test_compact_writes_as_pi_1_6_0_and_refuses_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "s.jsonl"
    original = (CASES / "m1-system-first.jsonl").read_bytes()
    work.write_bytes(original)
    # pi 1.6.0 counts the system prompt: nothing to compact at the default keepRecentTokens (case m1)
    assert main(["compact", str(work), "--yes", "--provider", "offline"]) == 1
    assert "Nothing to compact (session too small)" in capsys.readouterr().err
    assert work.read_bytes() == original
    assert (
        main(["compact", str(work), "--yes", "--json", "--provider", "offline", "--keep-recent", "100"]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["preview"]["piVersion"] == "1.6.0"
    assert all(r["maxTokens"] is None for r in result["preview"]["requests"])
    entry = json.loads(work.read_bytes().splitlines()[-1])
    assert entry["id"] == result["entry"]["id"] and entry["systemMessage"]["role"] == "system"
    assert [m["role"] for m in result["context"]["messages"][:2]] == ["system", "compactionSummary"]


def test_branch_summaries_of_a_1_6_0_file_are_written_as_pi_1_6_0_writes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No refusal any more: auto reads the file as 1.6.0, whose `fromId` is the leaf being left."""
    work = tmp_path / "s.jsonl"
    work.write_bytes((CASES / "m1-system-first.jsonl").read_bytes())
    old_leaf = json.loads(work.read_bytes().splitlines()[-1])["id"]
    assert main(["branch-to", str(work), "e0000002", "--summarize", "--provider", "offline"]) == 0
    entry = json.loads(work.read_bytes().splitlines()[-1])
    # the target is a user message: pi moves to its parent (and puts the text back in the editor)
    assert entry["type"] == "branch_summary" and entry["parentId"] == "e0000001"
    assert entry["fromId"] == old_leaf != "e0000001"
    work.write_bytes((CASES / "m1-system-first.jsonl").read_bytes())
    assert (
        main(
            [
                "branch-to",
                str(work),
                "e0000002",
                "--summarize",
                "--provider",
                "offline",
                "--pi-version",
                "0.80.2",
            ]
        )
        == 0
    )
    assert json.loads(work.read_bytes().splitlines()[-1])["fromId"] == "e0000001"


def _subcommands(parser: object) -> dict[str, object]:
    sub = next(a for a in parser._actions if a.dest == "command")  # type: ignore[attr-defined]
    return dict(sub.choices)  # type: ignore[arg-type]


def test_a_command_builds_only_its_own_parser_and_parses_as_the_whole_one() -> None:
    """A command's start builds only its parser (cli.main); it must know every command the
    whole parser knows and read their arguments the same."""
    from session_studio.cli import COMMANDS

    whole = build_parser()
    assert set(_subcommands(whole)) == COMMANDS
    samples = {
        "plan": ["plan", "s.jsonl", "--fields", "cut", "--keep-recent", "9", "--pi-version", "1.6.0"],
        "context": ["context", "s.jsonl", "--leaf", "e2"],
        "branch": ["branch", "s.jsonl", "--from", "a", "--to", "b"],
        "info": ["info", "s.jsonl", "--tokens", "real", "--provider", "offline"],
        "compact": ["compact", "s.jsonl", "--cut", "e3", "--dry-run", "--instructions", "x"],
        "branch-to": ["branch-to", "s.jsonl", "e2", "--summarize", "--label", "L"],
        "fork": ["fork", "s.jsonl", "--leaf", "e4"],
        "label": ["label", "s.jsonl", "e1", "checkpoint"],
        "omit-attempt": ["omit-attempt", "s.jsonl", "--context-window", "1000", "--dry-run"],
        "rename": ["rename", "s.jsonl", "a name"],
        "upgrade": ["upgrade", "s.jsonl", "--yes"],
        "export": ["export", "s.jsonl", "--what", "context", "-o", "r.md"],
        "repair": ["repair", "s.jsonl"],
        "search": ["search", "s.jsonl", "a text", "--json", "--max", "3"],
    }
    assert set(samples) == COMMANDS
    for name, argv in samples.items():
        own = build_parser(name)
        assert set(_subcommands(own)) == {name}
        assert vars(own.parse_args(argv)) == vars(whole.parse_args(argv)), name
