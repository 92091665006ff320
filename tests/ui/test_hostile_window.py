"""The real window, headless (``session-studio FILE --screenshot``), on hostile sessions (issue 9 #16, 12 #1/#3).

Each case runs the CLI entry point in a subprocess, as a user or CI would: it must exit by itself,
with a screenshot, within a time limit — no crash, no hang on a dialog nobody can close.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from session_studio.core.bar_geometry import token_x

from .conftest import SAMPLES, write_session

GEN_SESSIONS = Path(__file__).resolve().parents[1] / "oracle" / "gen_sessions.py"
SHOT_LIMIT_S = 45.0  # a few seconds normally; generous for a loaded 2-core CI machine


_RSS_MARK = "peak-rss-kb="


def _run(args: list[str], timeout: float, code: str = "") -> tuple[int, str, float]:
    prog = (
        f"{code}\nimport atexit, sys\n"
        "atexit.register(lambda: print('"
        + _RSS_MARK
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child of a big test process
        # would report its parent's peak
        + "%s' % [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0],"
        " file=sys.stderr))\n"
        f"from session_studio.cli import main\nraise SystemExit(main({args!r}))"
    )
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            [sys.executable, "-c", prog], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"session-studio {' '.join(args)} did not exit within {timeout:.0f} s")
    return p.returncode, p.stderr, time.monotonic() - t0


def _screenshot(path: Path, tmp_path: Path, timeout: float = SHOT_LIMIT_S, code: str = "") -> tuple[int, str]:
    out = tmp_path / (path.stem + ".png")
    rc, err, _ = _run([str(path), "--screenshot", str(out), "--size", "1280x800"], timeout, code)
    if rc == 0:
        assert out.stat().st_size > 1000
    return rc, err


def _assistant(content: Any, usage: Any = None) -> dict[str, Any]:
    return {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": content,
            "provider": "p",
            "model": "m",
            "api": "anthropic-messages",
            "stopReason": "stop",
            "timestamp": 2,
            "usage": usage
            or {
                "input": 10,
                "output": 5,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 15,
                "cost": {"total": 0},
            },
        },
    }


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}}


def test_leaf_with_markdown_images_opens(tmp_path: Path) -> None:
    """The leaf is selected at open: its images used to crash the window (SIGSEGV) right away."""
    md = f"look ![a]({tmp_path}/x.png) ![b](http://127.0.0.1:9/b.png) ![c](data:image/png;base64,AAAA)"
    spec: list[Any] = [
        _user("hi"),
        {"type": "compaction", "summary": md, "firstKeptEntryId": "e0000", "tokensBefore": 10},
        _assistant([{"type": "text", "text": md}]),
    ]
    rc, err = _screenshot(write_session(tmp_path / "leaf-image.jsonl", spec), tmp_path)
    assert rc == 0, err


def test_deeply_nested_tool_arguments_open(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "deep-args.jsonl",
        [_user("hi"), _assistant([{"type": "toolCall", "id": "c", "name": "w", "arguments": "DEEP"}])],
    )
    path.write_text(path.read_text().replace('"DEEP"', '{"a":' * 2500 + "1" + "}" * 2500))
    rc, err = _screenshot(path, tmp_path)
    assert rc == 0, err


def test_infinite_usage_opens(tmp_path: Path) -> None:
    """``1e400`` parses as inf: the token bar's paintEvent failed, then a modal dialog hung the run."""
    usage = {
        "input": "INF",
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": "INF",
        "cost": {"total": 0},
    }
    path = write_session(
        tmp_path / "inf.jsonl",
        [_user("hi"), _assistant([{"type": "text", "text": "x"}], usage), _user("more")],
    )
    path.write_text(path.read_text().replace('"INF"', "1e400"))
    rc, err = _screenshot(path, tmp_path)
    assert rc == 0, err


def test_token_x_with_non_finite_values() -> None:
    assert token_x(float("inf"), 100.0, 200) == 200
    assert token_x(float("nan"), 100.0, 200) == 0
    assert token_x(50.0, float("inf"), 200, 7) == 7
    assert token_x(50.0, float("nan"), 200) == 0


def test_generated_deep_nesting_session_opens(tmp_path: Path) -> None:
    """gen_sessions --seed 15 --count 13 --start 6 --damaged, file 018 "deep-nesting" (issue 9 #10)."""
    out = tmp_path / "gen"
    subprocess.run(
        [
            sys.executable,
            str(GEN_SESSIONS),
            "--seed",
            "15",
            "--count",
            "13",
            "--start",
            "6",
            "--damaged",
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (path,) = out.glob("*-018-*deep-nesting*.jsonl")
    rc, err = _screenshot(path, tmp_path)
    assert rc == 0, err


def test_error_in_a_headless_run_exits_instead_of_waiting_on_a_dialog(tmp_path: Path) -> None:
    """A crash dialog in ``--screenshot`` waited forever for a click; now: stderr, log, exit code 3."""
    path = write_session(tmp_path / "s.jsonl", [_user("hi"), _assistant([{"type": "text", "text": "x"}])])
    boom = (
        "import session_studio.ui.inspector as inspector\n"
        "def _boom(self, index):\n"
        "    raise RuntimeError('injected failure')\n"
        "inspector.EntryInspector.show_entry = _boom\n"
    )
    rc, err = _screenshot(path, tmp_path, code=boom)
    assert rc == 3
    assert "injected failure" in err and "unexpected error" in err


def _big_session(tmp_path: Path, name: str, lines: list[str]) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": "0190a0a0-0000-7000-8000-000000000001",
        "timestamp": "2025-01-01T10:00:00.000Z",
        "cwd": "/w",
    }
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        fh.writelines(lines)
    return path


def _peak_rss_kb(stderr: str) -> int:
    return int(stderr.rsplit(_RSS_MARK, 1)[1].split()[0])


def _cli_info(path: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KB) of ``session-studio info`` on ``path``: the yardstick for the window."""
    rc, err, took = _run(["info", str(path)], timeout=120)
    assert rc == 0, err
    return took, _peak_rss_kb(err)


@pytest.mark.slow
def test_fifty_megabyte_line_opens(tmp_path: Path) -> None:
    entry = {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": "2025-01-01T10:00:00.000Z",
        "message": {"role": "user", "content": "QUJD" * (50 * 1024 * 1024 // 4), "timestamp": 1},
    }
    path = _big_session(tmp_path, "big-line.jsonl", [json.dumps(entry) + "\n"])
    took, rss = _cli_info(path)
    rc, err = _screenshot(path, tmp_path, timeout=took * 2 + 15)
    assert rc == 0, err
    # the window holds the session once plus bounded views of it (it reached 2.4 GB before)
    assert _peak_rss_kb(err) < rss + 400_000


def test_every_tab_paints_a_megabyte_unbroken_string_quickly(qtbot: Any, window: Any, tmp_path: Path) -> None:
    """A 1 MB base64-like line froze the Preview tab's context views (line wrapping) for minutes."""
    blob = "QUJD" * (1024 * 1024 // 4)
    path = write_session(
        tmp_path / "blob.jsonl",
        [
            _user("hi"),
            _assistant([{"type": "text", "text": blob}]),
            _user(blob),
            _assistant([{"type": "text", "text": "ok"}]),
        ],
    )
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None, timeout=20_000)
    for i in range(len(window.doc.session.records)):
        window.doc.select(i)
        for tab in range(window.tabs.count()):
            window.tabs.setCurrentIndex(tab)
            qtbot.waitUntil(lambda: not window.runner.busy, timeout=20_000)
            t0 = time.monotonic()
            window.grab()
            assert time.monotonic() - t0 < 3.0, f"entry {i}, tab {window.tabs.tabText(tab)}"


@pytest.mark.slow
def test_hundred_thousand_entry_chain_opens(tmp_path: Path) -> None:
    lines = []
    parent = None
    for i in range(100_000):
        msg = (
            {"role": "user", "content": f"m{i}", "timestamp": i}
            if i % 2 == 0
            else _assistant([{"type": "text", "text": f"a{i}"}])["message"]
        )
        entry = {
            "type": "message",
            "id": f"e{i:06d}",
            "parentId": parent,
            "timestamp": "2025-01-01T10:00:00.000Z",
        }
        lines.append(json.dumps({**entry, "message": msg}) + "\n")
        parent = f"e{i:06d}"
    path = _big_session(tmp_path, "chain.jsonl", lines)
    took, _ = _cli_info(path)
    rc, err = _screenshot(path, tmp_path, timeout=took * 2 + 15)
    assert rc == 0, err


def test_a_screenshot_leaves_the_user_s_settings_as_they_were(tmp_path: Path) -> None:
    """``--screenshot`` added its file to the recent ones and kept its window size and splitters:
    it renders with the user's settings (the dark theme here) and writes none of them."""
    import os

    from PySide6.QtGui import QImage

    sample = SAMPLES / "sample-small-a.jsonl"
    cfg = Path(os.environ["SESSION_STUDIO_CONFIG_DIR"])
    cfg.mkdir(parents=True, exist_ok=True)
    ini = cfg / "session-studio.ini"
    ini.write_text("[prefs]\ntheme=dark\nrecent=/elsewhere/old.jsonl\n")
    before = ini.read_bytes()
    rc, err = _screenshot(sample, tmp_path)
    assert rc == 0, err
    assert ini.read_bytes() == before and sorted(p.name for p in cfg.iterdir()) == ["session-studio.ini"]
    shot = QImage(str(tmp_path / "sample-small-a.png"))
    assert shot.pixelColor(shot.width() // 2, shot.height() - 5).lightness() < 100  # dark: the theme read
