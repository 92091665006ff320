"""`session-studio search`: the entries that hold a text anywhere in their content, as grep would
list them (status 0 with matches, 1 without), or as JSON."""

from __future__ import annotations

import json
from pathlib import Path

from session_studio.core.content_search import match_excerpt
from tests.cli_support import run_cli
from tests.core.util import A, T, U, call, chain, to_bytes


def _session(tmp_path: Path) -> Path:
    deep = "x " * 400 + "Traceback: TypeError in render()\n  at line 3"
    values = chain(
        U("run the tests"),
        A(blocks=[call("bash", command="python -m pytest -q tests/")]),
        T(deep),
        U("thanks"),
    )
    f = tmp_path / "s.jsonl"
    f.write_bytes(to_bytes(values))
    return f


def test_search_lists_the_entries_that_hold_the_text(tmp_path: Path) -> None:
    f = _session(tmp_path)
    r = run_cli("search", str(f), "typeerror")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines == [
        "line 4  e2  message/toolResult  …x x x x x x Traceback: TypeError in render() at line 3"
    ]
    assert "1 entry holds “typeerror”" in r.stderr.decode()
    r = run_cli("search", str(f), "PYTEST", "--json")
    out = json.loads(r.stdout)
    assert out["count"] == 1 and out["matches"] == [
        {"line": 3, "id": "e1", "kind": "message/assistant", "excerpt": "python -m pytest -q tests/"}
    ]
    r = run_cli("search", str(f), "e", "--max", "2")  # "e" is everywhere: two printed, all counted
    assert (
        len(r.stdout.decode().splitlines()) == 2
        and "4 entries hold “e” (the first 2 printed)" in r.stderr.decode()
    )
    r = run_cli("search", str(f), "toolCallId")  # a key, not content
    assert r.returncode == 1 and r.stdout == b"" and "0 entries" in r.stderr.decode()


def test_the_excerpt_is_around_the_first_match_in_the_entrys_order() -> None:
    entry = {"a": "no", "b": ["first Needle here", {"c": "second needle"}]}
    assert match_excerpt(entry, "needle") == "first Needle here"
    long = "word " * 50 + "NEEDLE" + " tail" * 50
    got = match_excerpt({"t": long}, "needle", width=40)
    assert got is not None and got.startswith("…") and got.endswith("…") and "NEEDLE" in got
    assert len(got) <= 42 and match_excerpt({"t": "x"}, "needle") is None


def test_a_version_1_files_ids_are_not_printed(tmp_path: Path) -> None:
    """A version 1 file has no ids: every open (ours, pi's) makes new ones, so they would match
    nothing the next time; its lines are what stays."""
    f = tmp_path / "v1.jsonl"
    header = {"type": "session", "id": "s1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"}
    lines = [
        header,
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": U("find me")["message"]},
    ]
    f.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    r = run_cli("search", str(f), "find")
    assert r.returncode == 0 and r.stdout.decode().splitlines() == ["line 2  -  message/user  find me"]
    assert json.loads(run_cli("search", str(f), "find", "--json").stdout)["matches"][0]["id"] is None


def test_search_of_a_folder_lists_its_sessions_that_hold_the_text(tmp_path: Path) -> None:
    """pi's sessions folder (a folder per project): which session was it in? The files that hold
    the text, newest first (status 1 when none does)."""
    import os

    folder = tmp_path / "sessions"
    (folder / "--p1--").mkdir(parents=True)
    (folder / "--p2--").mkdir()
    old = _session(folder / "--p1--")  # holds "Traceback: TypeError"
    new = folder / "--p2--" / "t.jsonl"
    new.write_bytes(to_bytes(chain(U("a TypeError here too"))))
    other = folder / "--p2--" / "u.jsonl"
    other.write_bytes(to_bytes(chain(U("nothing"))))
    os.utime(old, (1_000_000, 1_000_000))
    r = run_cli("search", str(folder), "typeerror")
    assert r.returncode == 0 and r.stdout.decode().splitlines() == [str(new), str(old)]
    assert "2 of 3 session files hold “typeerror”" in r.stderr.decode()
    assert json.loads(run_cli("search", str(folder), "TypeError", "--json", "--max", "1").stdout)[
        "files"
    ] == [str(new)]
    assert run_cli("search", str(folder), "zzz").returncode == 1
