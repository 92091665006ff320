"""Issue 12 #4: session and server text never drives the terminal in human-readable CLI output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from session_studio.cli_output import terminal_safe
from tests.cli_support import llm_server, run_cli
from tests.core.util import A, T, U, call, chain

# OSC window title, OSC 52 clipboard write, a cursor-position report request, C1 CSI, bidi
# overrides and isolates, NUL/DEL/CR, and a lone surrogate (valid in pi's JSON)
HOSTILE = "\x1b]0;pwned\x07|\x1b]52;c;cm0gLXJmIH4=\x07|\x1b[6n|\x9b31m|\u202eevil\u202c|\u2066x\u2069|\x00\x7f\r|\ud800"
_BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unsafe(text: str) -> list[str]:
    return [
        c
        for c in text
        if (ord(c) < 0x20 and c not in "\n\t")
        or 0x7F <= ord(c) <= 0x9F
        or c in _BIDI
        or 0xD800 <= ord(c) <= 0xDFFF
    ]


def assert_inert(data: bytes) -> str:
    text = data.decode("utf-8")  # strict: nothing undecodable reaches the terminal either
    assert _unsafe(text) == [], text[:2000]
    return text


def _hostile_session(path: Path, hostile: str = HOSTILE) -> Path:
    entries = [U("start " + hostile)]
    for _ in range(5):
        entries += [
            U(800),
            A(800, blocks=[{"type": "text", "text": "a " + hostile}, call("read", path="/tmp/" + hostile)]),
            T("t " + hostile),
        ]
    entries += [
        {"type": "session_info", "name": "name " + hostile},
        {"type": "label", "targetId": "e1", "label": hostile},
    ]
    header = {
        "type": "session",
        "version": 3,
        "id": "sid" + hostile,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "cwd": "/p" + hostile,
    }
    values = chain(*entries, header=header)
    values[3]["id"] = "e2" + hostile  # an entry id, and the reference to it
    values[4]["parentId"] = "e2" + hostile
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return path


def test_terminal_safe_escapes_controls_bidi_and_surrogates() -> None:
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert terminal_safe("\x9b\u202e\ud800\r\x7f") == "\\x9b\\u202e\\ud800\\x0d\\x7f"
    assert terminal_safe("two\nlines", one_line=True) == "two\\x0alines"
    assert _unsafe(terminal_safe(HOSTILE)) == []


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return _hostile_session(tmp_path / "hostile.jsonl")


def test_every_command_prints_hostile_session_text_inertly(hostile: Path, tmp_path: Path) -> None:
    info = run_cli("info", str(hostile))
    assert info.returncode == 0
    text = assert_inert(info.stdout)
    assert "\\x1b]0;pwned\\x07" in text and "\\u202eevil" in text  # shown, escaped
    assert_inert(info.stderr)

    found = run_cli("search", str(hostile), "pwned")
    assert found.returncode == 0 and "\\x1b]0;pwned\\x07" in assert_inert(found.stdout)
    assert_inert(found.stderr)
    found = run_cli("search", str(hostile), "pwned", "--json")  # JSON: escaped by JSON itself
    assert json.loads(found.stdout)["count"] > 5 and "\x1b" not in found.stdout.decode()

    dry = run_cli("compact", str(hostile), "--dry-run", "--keep-recent", "200", "--provider", "offline")
    assert dry.returncode == 0, dry.stderr
    assert "\\x1b]52;c;" in assert_inert(dry.stdout) + assert_inert(dry.stderr)

    # pi writes lone surrogates, but the writer's read-back check does not accept them yet (issue 12 #7)
    writable = HOSTILE.replace("\ud800", "")
    work = _hostile_session(tmp_path / "work.jsonl", writable)
    runs = [
        run_cli("compact", str(work), "--yes", "--keep-recent", "200", "--provider", "offline", "--stream"),
        run_cli("label", str(work), "e1", "new " + writable.replace("\x00", "")),
        run_cli("rename", str(work), "renamed " + writable.replace("\x00", "")),
        run_cli("label", str(work), "missing" + writable.replace("\x00", ""), "x"),
        run_cli("branch-to", str(hostile), "e1", "--summarize", "--dry-run", "--provider", "offline"),
        run_cli(
            "fork",
            str(hostile),
            "--leaf",
            "e2" + writable.replace("\x00", ""),
            "--out",
            str(tmp_path / "f.jsonl"),
        ),
    ]
    for r in runs:
        assert_inert(r.stdout)
        assert_inert(r.stderr)
    assert runs[0].returncode == 0 and runs[3].returncode == 1


def test_server_error_text_is_printed_inertly(hostile: Path) -> None:
    with llm_server("error", text="bad request " + HOSTILE.replace("\ud800", "")) as srv:
        r = run_cli(
            "compact",
            str(hostile),
            "--dry-run",
            "--keep-recent",
            "200",
            "--provider",
            "openai",
            "--base-url",
            srv.openai_url,
            "--model",
            "m",
        )
    assert r.returncode == 1
    err = assert_inert(r.stderr)
    assert "bad request \\x1b]0;pwned" in err
