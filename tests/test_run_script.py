"""`./scripts/run`: set up once, then start offline in under ~2 s; missing window libraries in one line."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "scripts" / "run"
SAMPLE = ROOT / "src" / "session_studio" / "resources" / "samples" / "sample-small-a.jsonl"
VENV = Path(sys.prefix)
pytestmark = pytest.mark.slow  # several app starts: the parallel stage

OFFLINE = {"PIP_INDEX_URL": "http://127.0.0.1:9/", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}


def _venv_is_set_up_for_this_checkout() -> bool:
    stamp = VENV / ".session-studio-installed"
    # scripts/lib.sh's stamp: what the install builds from (the C helper too)
    sources = ("pyproject.toml", "setup.py", "src/session_studio/core/_bulkindex.c")
    want = f"{hashlib.sha256(b''.join((ROOT / f).read_bytes() for f in sources)).hexdigest()} {ROOT}"
    return stamp.is_file() and stamp.read_text() == want


@pytest.fixture
def set_up_venv() -> Path:
    """The venv running the tests, when scripts/run or scripts/test set it up for this checkout.

    Anything else (e.g. a venv shared with another checkout) would make scripts/run reinstall into
    it; CI always runs in a venv that scripts/test set up, so there this never skips.
    """
    if not _venv_is_set_up_for_this_checkout():
        if os.environ.get("CI"):
            pytest.fail(f"CI runs in a venv scripts/test set up, but {VENV} has no stamp for {ROOT}")
        pytest.skip(f"{VENV} was not set up by scripts/run or scripts/test for {ROOT}")
    return VENV


def _run(*args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """The result and the CPU seconds it cost (scripts/run and everything it started).

    CPU time, not wall time: a reinstall costs seconds of CPU, while the wall time of a launch on a
    busy CI machine mostly measures the other processes.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([str(RUN), *args], capture_output=True, text=True, env=env, timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, cpu


def test_a_set_up_checkout_starts_offline_without_reinstalling(set_up_venv: Path) -> None:
    env = {**os.environ, **OFFLINE, "SESSION_STUDIO_VENV": str(set_up_venv)}
    env.pop("PYTHONPATH", None)
    seconds = []
    for _ in range(3):
        done, took = _run("--version", env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("session-studio "), done.stdout
        assert "pip install" not in done.stderr
        seconds.append(took)
        done, _ = _run("info", str(SAMPLE), env=env)
        assert done.returncode == 0, done.stderr
        assert "pip install" not in done.stderr
        assert "entries" in done.stdout
    # a launch (venv check, package check, the app's start) stays well under two seconds
    assert min(seconds) < 2.0, f"scripts/run --version took {seconds} s of CPU"


def test_a_complete_venv_without_a_stamp_starts_offline(set_up_venv: Path, tmp_path: Path) -> None:
    """A virtualenv an older scripts/run set up (no stamp) is complete: with no package index, the
    failed reinstall must not stop the launch."""
    venv = tmp_path / "old-venv"  # the same interpreter and packages, seen from a folder with no stamp
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_bytes((set_up_venv / "pyvenv.cfg").read_bytes())
    (venv / "lib").symlink_to(set_up_venv / "lib")
    for tool in ("python", "session-studio"):
        (venv / "bin" / tool).symlink_to(set_up_venv / "bin" / tool)
    env = {**os.environ, **OFFLINE, "SESSION_STUDIO_VENV": str(venv)}
    env.pop("PYTHONPATH", None)
    done, _ = _run("info", str(SAMPLE), env=env)
    assert done.returncode == 0, done.stderr
    assert "entries" in done.stdout
    assert "already has Session Studio" in done.stderr


def _fake_tools(bin_dir: Path, *, uid: int, installed: set[str]) -> None:
    """`id -u` and `dpkg-query` as a user without root on a machine lacking some packages."""
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    lines = "".join(f"  {p}) echo 'ii  {p}';;\n" for p in sorted(installed))
    (bin_dir / "dpkg-query").write_text(
        '#!/bin/sh\nshift 2\nfor p in "$@"; do\n  case "$p" in\n' + lines + "  esac\ndone\n"
    )
    for tool in ("id", "dpkg-query"):
        (bin_dir / tool).chmod(0o755)


def _window_packages() -> list[str]:
    rows = [line.split() for line in (ROOT / "scripts" / "debian-packages.txt").read_text().splitlines()]
    return [r[0] for r in rows if len(r) >= 2 and not r[0].startswith("#") and r[1] == "window"]


def test_missing_window_libraries_stop_the_window_with_one_line(set_up_venv: Path, tmp_path: Path) -> None:
    window = _window_packages()
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0"} <= set(window)
    missing = ["libxcb-cursor0", "libxcb-keysyms1"]
    _fake_tools(tmp_path / "bin", uid=1000, installed=set(window) - set(missing))
    env = {
        **os.environ,
        **OFFLINE,
        "SESSION_STUDIO_VENV": str(set_up_venv),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.pop("PYTHONPATH", None)
    done, _ = _run(str(SAMPLE), env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "sudo apt-get install -y libxcb-cursor0 libxcb-keysyms1" in lines[0]
    # the command line does not need them
    done, _ = _run("info", str(SAMPLE), env=env)
    assert done.returncode == 0, done.stderr
    assert "entries" in done.stdout
