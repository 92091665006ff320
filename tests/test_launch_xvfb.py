"""The real window on the real xcb platform: started from the checkout under Xvfb, as a user would.

Everything else in tests/ui runs offscreen; this proves the xcb plugin loads (its system libraries
are in scripts/debian-packages.txt), the window maps, shows a session, and quits with exit code 0.
Needs Xvfb, xdotool and xwd (scripts/test installs them as root); skipped only where they are absent.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "src" / "session_studio" / "resources" / "samples" / "sample-small-a.jsonl"
TOOLS = ("Xvfb", "xdotool", "xwd")

pytestmark = pytest.mark.ui


@pytest.fixture
def xvfb_display() -> Iterator[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        reason = (
            f"{', '.join(missing)} not installed (Debian: xvfb xdotool x11-apps; scripts/test installs them)"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as numbers:
            number = numbers.readline().strip()  # Xvfb picks a free display and says which
        assert number.isdigit(), server.stderr.read().decode() if server.stderr else "no display"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stderr:
            server.stderr.close()


def _xdotool(display: str, *args: str, timeout: float = 30) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "DISPLAY": display},
    )
    assert done.returncode == 0, f"xdotool {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def distinct_colours_of_xwd(dump: bytes) -> int:
    """The number of different pixel values in an X window dump (xwd's format, X11 `XWDFileHeader`)."""
    fields = struct.unpack(">25I", dump[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    bits_per_pixel, bytes_per_line, ncolors = fields[11], fields[12], fields[19]
    assert bits_per_pixel == 32, f"expected a 24-bit screen stored as 32 bits per pixel, got {bits_per_pixel}"
    pixels = dump[header_size + 12 * ncolors :]
    assert len(pixels) >= bytes_per_line * height
    colours: set[bytes] = set()
    for row in range(height):
        line = pixels[row * bytes_per_line : row * bytes_per_line + 4 * width]
        colours.update(line[i : i + 4] for i in range(0, len(line), 16))  # every 4th pixel is plenty
    return len(colours)


def test_xwd_reader_tells_a_blank_screen_from_a_drawn_one() -> None:
    def dump(pixels: list[int], width: int, height: int) -> bytes:
        fields = [100, 7, 2, 24, width, height, 0, 1, 32, 1, 32, 32, 4 * width, 5, 0, 0, 0, 8, 256, 0]
        header = struct.pack(">25I", *fields, width, height, 0, 0, 0)
        return header + b"".join(struct.pack(">I", p) for p in pixels)

    assert distinct_colours_of_xwd(dump([0] * 64, 8, 8)) == 1
    assert distinct_colours_of_xwd(dump(list(range(64)), 8, 8)) == 16  # every 4th pixel


def test_the_window_starts_on_xcb_under_xvfb_shows_a_session_and_quits(
    xvfb_display: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "DISPLAY": xvfb_display,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHONPATH": str(ROOT / "src"),  # the checkout, whatever the venv points at
        # the app's settings, recent files, caches and logs stay in the test's directory
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    env.pop("WAYLAND_DISPLAY", None)
    app = subprocess.Popen(
        [sys.executable, "-m", "session_studio.cli", str(SAMPLE)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        window = _xdotool(
            xvfb_display, "search", "--sync", "--onlyvisible", "--name", "Session Studio", timeout=90
        ).splitlines()[0]
        # the session is loaded when its name is in the title
        deadline = time.monotonic() + 60
        title = ""
        while time.monotonic() < deadline and app.poll() is None:
            title = _xdotool(xvfb_display, "getwindowname", window)
            if title.endswith("— Session Studio") and title != "Session Studio":
                break
            time.sleep(0.2)
        assert title.endswith("— Session Studio"), f"no session in the title: {title!r}"
        geometry = _xdotool(xvfb_display, "getwindowgeometry", window)
        time.sleep(1.0)  # let the planner and the tree paint
        shot = subprocess.run(
            ["xwd", "-root", "-silent"],
            capture_output=True,
            timeout=30,
            env={**os.environ, "DISPLAY": xvfb_display},
            check=True,
        ).stdout
        (tmp_path / "screen.xwd").write_bytes(shot)
        colours = distinct_colours_of_xwd(shot)
        assert colours > 20, f"the screen looks blank ({colours} colours; window {geometry})"
        _xdotool(xvfb_display, "windowfocus", "--sync", window)
        _xdotool(xvfb_display, "key", "--clearmodifiers", "ctrl+q")
        _out, err = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "Could not load the Qt platform plugin" not in err
