"""Issue 9 #15: no command answers any input with a traceback; where pi would throw, one line, exit 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio import cli
from tests.cli_support import run_cli
from tests.core.util import A, U, chain, to_bytes


def _damaged(path: Path, shape: str) -> Path:
    entries: list[dict[str, Any]] = [U(400), A(400), U(400), A(400), U(400), A(400), U(400), A(400)]
    if shape == "message-without-message":
        entries[1] = {"type": "message"}
    elif shape == "tool-call-without-arguments":
        entries[1] = A(blocks=[{"type": "toolCall", "id": "c", "name": "read"}])
    elif shape == "content-of-the-wrong-type":
        entries[0] = {"type": "message", "message": {"role": "user", "content": 42, "timestamp": 1}}
    elif shape == "null-content-block":
        entries[1] = A(blocks=[None, 5])
    path.write_bytes(to_bytes(chain(*entries)))
    return path


SHAPES = [
    "message-without-message",
    "tool-call-without-arguments",
    "content-of-the-wrong-type",
    "null-content-block",
]


def _main(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The command in this process (fast); test_the_real_entry_point covers the subprocess."""
    code = cli.main(list(args))
    return code, capfd.readouterr().err


@pytest.mark.parametrize("shape", SHAPES)
def test_compact_dry_run_on_damaged_shapes_says_pi_would_throw(
    tmp_path: Path, shape: str, capfd: pytest.CaptureFixture[str]
) -> None:
    session = _damaged(tmp_path / "s.jsonl", shape)
    before = session.read_bytes()
    for extra in ((), ("--json",)):
        code, err = _main(
            capfd,
            "compact",
            str(session),
            "--dry-run",
            "--keep-recent",
            "100",
            "--provider",
            "offline",
            *extra,
        )
        assert code == 3, err
        assert "Traceback" not in err
        [line] = err.splitlines()[-1:]
        assert line.startswith("session-studio: pi would throw on this session: ")
    assert session.read_bytes() == before


@pytest.mark.parametrize(
    "args",
    [
        ("info",),
        ("plan",),
        ("context",),
        ("branch-to", "e7", "--summarize", "--dry-run", "--provider", "offline"),
        ("fork", "--leaf", "e7"),
    ],
)
def test_no_traceback_from_any_command_on_damaged_shapes(
    tmp_path: Path, args: tuple[str, ...], capfd: pytest.CaptureFixture[str]
) -> None:
    for shape in SHAPES:
        session = _damaged(tmp_path / f"{shape}.jsonl", shape)
        code, err = _main(capfd, args[0], str(session), *args[1:])
        assert "Traceback" not in err, (shape, err)
        assert code in (0, 1, 3)


def test_the_real_entry_point_on_a_damaged_shape(tmp_path: Path) -> None:
    session = _damaged(tmp_path / "s.jsonl", "message-without-message")
    r = run_cli("compact", str(session), "--dry-run", "--keep-recent", "100", "--provider", "offline")
    err = r.stderr.decode()
    assert r.returncode == 3 and "Traceback" not in err
    assert err.splitlines()[-1].startswith("session-studio: pi would throw on this session: ")


@pytest.mark.parametrize("target", ["missing.jsonl", "a-directory"])
def test_unreadable_paths_give_one_line(
    tmp_path: Path, target: str, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-directory").mkdir()
    for command in ("info", "compact", "label"):
        extra = ("e1", "x") if command == "label" else ()
        code, err = _main(capfd, command, str(tmp_path / target), *extra)
        assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_an_unexpected_error_is_one_line_with_a_report_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(to_bytes(chain(U("hi"), A("ok"))))

    def boom(a: Any) -> int:
        raise RuntimeError("something \x1b]0;odd\x07 broke")

    monkeypatch.setattr(cli, "_cmd_info", boom)
    monkeypatch.delenv("SESSION_STUDIO_DEBUG", raising=False)
    assert cli.main(["info", str(session)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error (RuntimeError: something \\x1b]0;odd\\x07 broke)" in err and "Please report" in err
    monkeypatch.setenv("SESSION_STUDIO_DEBUG", "1")
    assert cli.main(["info", str(session)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_plan_keeps_pis_json_error_shape(tmp_path: Path) -> None:
    session = _damaged(tmp_path / "s.jsonl", "message-without-message")
    r = run_cli("plan", str(session))
    assert r.returncode == 3 and json.loads(r.stdout)["error"]


def test_a_failing_editor_is_one_line(tmp_path: Path) -> None:
    session = _damaged(tmp_path / "s.jsonl", "none")
    before = session.read_bytes()
    r = run_cli(
        "compact",
        str(session),
        "--yes",
        "--edit",
        "--keep-recent",
        "100",
        "--provider",
        "offline",
        env={"EDITOR": "false", "VISUAL": "", "PATH": "/usr/bin:/bin"},
    )
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err
    assert err.splitlines()[-1].startswith("session-studio: the editor 'false' failed")
    assert session.read_bytes() == before


@pytest.mark.parametrize("pin", ["0.80.2", "1.6.0"])
@pytest.mark.parametrize("command", ["plan", "context"])
def test_pis_json_error_names_the_profile_used(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], pin: str, command: str
) -> None:
    """The error JSON's piVersion is the profile the command read the file with, not always 0.80.2;
    for a file pi cannot even read, the pinned one, or the one auto picks for a plain file."""
    from session_studio.core.profile import default_choice

    damaged = _damaged(tmp_path / "s.jsonl", "message-without-message")  # read, then pi throws
    unreadable = tmp_path / "u.jsonl"  # pi throws while reading: an entry that is a string
    unreadable.write_bytes(b'{"type":"session","version":1,"id":"x"}\n"abc"\n')
    for path in (damaged, unreadable):
        assert cli.main([command, str(path), "--pi-version", pin]) == 3
        out = json.loads(capfd.readouterr().out)
        assert out["error"] and out["piVersion"] == pin and out["command"] == command
    assert cli.main([command, str(unreadable)]) == 3
    assert json.loads(capfd.readouterr().out)["piVersion"] == default_choice().profile.version
