"""Issue 7 #3: the light commands do not pay for the HTTP stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli_support import SRC
from tests.core.util import A, U, chain, to_bytes

PROBE = """
import sys
from session_studio.cli import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("httpx", "httpcore", "PySide6") if m in sys.modules)
print("PYDANTIC:" + str("pydantic" in sys.modules))
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
