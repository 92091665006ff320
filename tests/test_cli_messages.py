"""The command line says what is true: `upgrade` names no --dry-run it does not have and calls a file without
a header no "version 3"; a missing file, a mistyped command or a missing entry is an error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_support import run_cli


def _v1_file(path: Path) -> Path:
    """A version 1 session (no version field, no ids): a user message and the answer."""
    lines = [
        {"type": "session", "id": "legacy-1", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "timestamp": "2025-01-01T10:00:01.000Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T10:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _v3_file(path: Path) -> Path:
    """A version 3 session of one user message, id e0000001."""
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2025-01-01T10:00:00.000Z",
        "cwd": "/w",
    }
    msg = {"type": "message", "id": "e0000001", "parentId": None, "timestamp": "2025-01-01T10:00:01.000Z"}
    msg["message"] = {"role": "user", "content": "hi", "timestamp": 1}
    path.write_text(json.dumps(header) + "\n" + json.dumps(msg) + "\n", encoding="utf-8")
    return path


def test_upgrade_without_yes_names_only_its_own_options(tmp_path: Path) -> None:
    v1 = _v1_file(tmp_path / "v1.jsonl")
    before = v1.read_bytes()
    r = run_cli("upgrade", str(v1), stdin="")
    err = r.stderr.decode()
    assert r.returncode != 0 and "add --yes to write" in err and "--dry-run" not in err, err
    assert v1.read_bytes() == before


def test_upgrade_of_a_file_without_a_header_says_so(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\x01\x02binary\n")
    r = run_cli("upgrade", str(junk), "--yes")
    err = r.stderr.decode()
    assert r.returncode != 0 and "no valid header" in err and "already version 3" not in err, err


def test_a_missing_file_or_a_mistyped_command_is_said_before_any_window_starts(tmp_path: Path) -> None:
    """Without a display Qt aborted (exit 134) over its platform plugin before the file was looked
    at; a mistyped command was taken for a file to open."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no DISPLAY
    r = run_cli(str(tmp_path / "nosuch.jsonl"), env=env)
    assert r.returncode == 1 and "session file not found" in r.stderr.decode()
    r = run_cli("infoo", str(tmp_path / "s.jsonl"), env=env)
    assert r.returncode == 2 and "unknown command 'infoo'; did you mean 'info'?" in r.stderr.decode()


def test_info_of_an_entry_that_is_not_there_fails(tmp_path: Path) -> None:
    s = _v3_file(tmp_path / "s.jsonl")
    r = run_cli("info", str(s), "--leaf", "nosuch")
    assert r.returncode == 1 and "no entry 'nosuch'" in r.stderr.decode() and not r.stdout
    assert run_cli("info", str(s), "--leaf", "e0000001").returncode == 0


def test_a_version_1_file_is_forked_by_its_leaf_without_naming_an_id(tmp_path: Path) -> None:
    """A version 1 file's ids are made on every open: `info` says so, the refusal to append says to
    fork without --leaf, and `fork FILE` forks the leaf's path."""
    v1 = _v1_file(tmp_path / "v1.jsonl")
    info = run_cli("info", str(v1)).stdout.decode()
    assert "(made on opening: another run gives other ids)" in info
    refused = run_cli("label", str(v1), "anything", "x").stderr.decode()
    assert "`session-studio fork FILE`, without --leaf" in refused
    out = tmp_path / "fork.jsonl"
    r = run_cli("fork", str(v1), "--out", str(out))
    assert r.returncode == 0, r.stderr.decode()
    forked = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert forked[0]["version"] == 3 and [e["message"]["role"] for e in forked[1:]] == ["user", "assistant"]


def test_every_command_says_a_missing_file_the_same_way(tmp_path: Path) -> None:
    """One wording and one status for a file that is not there, whichever command is run (and
    `compact` with no terminal says it before refusing to ask)."""
    missing = str(tmp_path / "nosuch.jsonl")
    commands = [
        ["info", missing],
        ["plan", missing],
        ["context", missing],
        ["search", missing, "x"],
        ["export", missing],
        ["upgrade", missing, "--yes"],
        ["repair", missing],
        ["compact", missing],
        ["fork", missing],
        ["label", missing, "x", "y"],
        ["rename", missing, "n"],
        ["branch-to", missing, "x"],
    ]
    for argv in commands:
        r = run_cli(*argv, stdin="")
        said = r.stderr.decode()
        assert (r.returncode, said) == (1, f"session-studio: session file not found: {missing}\n"), argv


def test_counts_below_their_least_value_are_usage_errors(tmp_path: Path) -> None:
    s = _v1_file(tmp_path / "s.jsonl")
    for argv in (
        ["plan", str(s), "--keep-recent", "-5"],
        ["plan", str(s), "--context-window", "0"],
        ["info", str(s), "--reserve", "-1"],
        ["compact", str(s), "--dry-run", "--keep-recent", "-5"],
        ["branch", str(s), "--from", "a", "--to", "b", "--budget", "-3"],
        ["search", str(s), "hi", "--max", "-1"],
    ):
        r = run_cli(*argv)
        assert r.returncode == 2 and "or more, not" in r.stderr.decode(), (argv, r.stderr.decode())
    r = run_cli("search", str(s), "")
    assert r.returncode == 2 and "the text to find is empty" in r.stderr.decode()


def test_label_text_is_trimmed_and_a_blank_name_is_refused(tmp_path: Path) -> None:
    """As pi's /tree label box and /name take them (the window does the same)."""
    s = _v3_file(tmp_path / "s.jsonl")
    assert run_cli("label", str(s), "e0000001", "  hi  ").returncode == 0
    assert json.loads(s.read_text().splitlines()[-1])["label"] == "hi"
    before = s.read_bytes()
    r = run_cli("rename", str(s), "   ")
    assert r.returncode == 2 and "blank" in r.stderr.decode() and s.read_bytes() == before
