"""Issue 7 #3: the light commands do not pay for the HTTP stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import SRC
from tests.core.util import A, U, chain, to_bytes

PROBE = """
import sys
from session_studio.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("httpx", "httpcore", "PySide6") if m in sys.modules)
print("ACTIONS:" + str("session_studio.cli_actions" in sys.modules))
print("PYDANTIC:" + str("pydantic" in sys.modules))
print("SHUTIL:" + str("shutil" in sys.modules))
print("HASHLIB:" + str("hashlib" in sys.modules))
print("HEAVY:" + ",".join(heavy))
sys.exit(code)
"""


def _run(*args: str) -> str:
    """The probe's last line (the heavy modules the command imported)."""
    return _probe(*args)[-1]


def _probe(*args: str) -> list[str]:
    """The lines a command run under the probe printed."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().strip().splitlines()


def test_label_and_rename_do_not_import_httpx(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"))))
    assert _run("label", str(path), "e1", "checkpoint") == "HEAVY:"
    assert _run("rename", str(path), "a name") == "HEAVY:"


def test_read_only_commands_do_not_import_pydantic(tmp_path: Path) -> None:
    """Issue 11: importing pydantic (the models of the entries we write) costs ~0.3 s, a seventh of
    a cold `plan` of a 100 MB session; the commands that only read never build an entry."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"))))
    for args in (("plan", str(path)), ("context", str(path))):
        assert "PYDANTIC:False" in _probe(*args), args


def test_a_pinned_plan_does_not_import_shutil_or_hashlib(tmp_path: Path) -> None:
    """argparse's default help formatter imports shutil (with bz2, lzma, fnmatch) for the terminal's
    width, and makes one for each option it adds: ~4 ms of a cached `plan`'s ~0.14 s. With
    --pi-version pinned nothing else needs it (auto looks for the `pi` on PATH with shutil.which).
    hashlib loads OpenSSL (~6 ms): the core hashes with CPython's own BLAKE2 (digest.py)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"))))
    for version in ("0.80.2", "1.6.0"):
        lines = _probe("plan", str(path), "--pi-version", version)
        assert "SHUTIL:False" in lines and "HASHLIB:False" in lines, (version, lines)


@pytest.mark.parametrize("columns", [None, "60", "140"])
def test_help_is_as_argparse_formats_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The help is what argparse's own formatter makes of it, as wide (COLUMNS, else the terminal's
    width, else 80)."""
    import argparse

    from session_studio.cli import build_parser

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    parser = build_parser()
    helps = [parser, *parser._subparsers._group_actions[0].choices.values()]  # type: ignore[union-attr]
    ours = [p.format_help() for p in helps]
    for p in helps:
        p.formatter_class = argparse.HelpFormatter
    assert ours == [p.format_help() for p in helps]


def test_read_only_commands_do_not_import_the_writing_commands(tmp_path: Path) -> None:
    """Their parsers and what they import (the LLM limits): ~10 ms of a cached `plan`'s ~0.19 s."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"), U("more"), A("done"))))
    for args in (
        ("plan", str(path)),
        ("context", str(path)),
        ("branch", str(path), "--from", "e4", "--to", "e2"),
    ):
        assert "ACTIONS:False" in _probe(*args), args
    assert "ACTIONS:True" in _probe("label", str(path), "e1", "x")


# the console script's way in (main() without arguments); read-only commands leave by os._exit,
# so the probe reports what was imported there
ENTRY_PROBE = """
import os, sys
real_exit = os._exit

def reporting_exit(code):
    print("LOGGING:" + str("logging" in sys.modules), flush=True)
    real_exit(code)

os._exit = reporting_exit
from session_studio.cli import main
sys.argv = ["session-studio", *sys.argv[1:]]
code = main()
print("LOGGING:" + str("logging" in sys.modules), flush=True)
sys.exit(code)
"""


def _entry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY_PROBE, *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", **(env or {})},
        timeout=60,
        check=False,
    )


def test_commands_that_never_log_start_without_logging(tmp_path: Path) -> None:
    """Issue 11: a cached `plan` of a 100 MB session takes ~0.15 s, and importing logging (with
    traceback, linecache, tokenize) was ~6 ms of it. These commands skip the log handler, so nothing
    on their way may import logging: a record would reach stderr through logging's raw fallback."""
    from session_studio.cli import _NEVER_LOG

    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"), U("more"), A("done"))))
    runs = {
        "plan": [("plan", str(path), "--pi-version", v) for v in ("auto", "0.80.2", "1.6.0")],
        "context": [("context", str(path))],
        "branch": [("branch", str(path), "--from", "e4", "--to", "e2")],
    }
    assert set(runs) == _NEVER_LOG
    for command_runs in runs.values():
        for args in command_runs:
            r = _entry(*args)
            assert r.returncode == 0, (args, r.stderr)
            assert r.stdout.strip().splitlines()[-1] == "LOGGING:False", args


def test_other_commands_route_warnings_through_the_terminal_safe_handler(tmp_path: Path) -> None:
    """`info` reads pi's settings, which warns about a broken file naming its path: the warning
    comes through cli_log's handler, its escape sequence shown inertly."""
    agent = tmp_path / "agent\x1b]0;owned\x07"
    agent.mkdir()
    (agent / "settings.json").write_text("[1]")
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"))))
    r = _entry("info", str(path), env={"PI_CODING_AGENT_DIR": str(agent)})
    assert r.returncode == 0, r.stderr
    assert "session-studio: ignoring pi settings " in r.stderr
    assert "\\x1b]0;owned\\x07" in r.stderr
    assert "\x1b" not in r.stderr


#: runs the command as the console script does (main() with no arguments: os._exit at its end for
#: the read-only ones) and prints, from inside the command's work, whether the collector runs
GC_PROBE = """
import gc, sys
from session_studio.core import session
real_open = session.Session.open.__func__
def opened(cls, *args, **kwargs):
    sys.stderr.write("GC:" + str(gc.isenabled()) + "\\n")
    return real_open(cls, *args, **kwargs)
session.Session.open = classmethod(opened)
from session_studio.cli import main
sys.argv = ["session-studio", *sys.argv[1:]]
sys.exit(main())
"""


@pytest.mark.parametrize(("command", "collects"), [("plan", False), ("context", False), ("info", True)])
def test_the_oracle_commands_run_without_the_cyclic_collector(
    tmp_path: Path, command: str, collects: bool
) -> None:
    """plan, context and branch make no reference cycles to speak of: they run without the collector
    (5-10% of their time); every other command keeps it."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(chain(U("hi"), A("ok"))))
    r = subprocess.run(
        [sys.executable, "-c", GC_PROBE, command, str(path)],
        capture_output=True,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr.decode()
    assert f"GC:{collects}" in r.stderr.decode().splitlines()
