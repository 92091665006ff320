"""The HTML report in a real browser (Debian's chromium, headless): hostile session text is shown as
text, nothing runs, nothing is fetched (a local HTTP server named in the session gets no request),
and the page renders (a screenshot is taken).

Needs chromium (scripts/debian-packages.txt, group test); skipped where it is missing, except
under CI=1 where a missing browser fails.
"""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from session_studio.core import Session
from session_studio.core.plan import PathPlanner, PlanParams
from session_studio.core.profile import PROFILE_0_80_2
from session_studio.export import ExportOptions, export_report

from .hostile import assert_inert, write_hostile

pytestmark = pytest.mark.ui

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = "chromium is not installed (Debian: chromium; scripts/test installs it as root)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return found


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Recorder.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"loaded")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def trap() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP server on 127.0.0.1 that records every request it gets."""
    _Recorder.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Recorder.requests
    finally:
        server.shutdown()
        server.server_close()


def _run(chromium: str, *args: str) -> subprocess.Popen[bytes]:
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    return subprocess.Popen(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_hostile_report_is_inert_in_chromium(tmp_path: Path, trap: tuple[int, list[str]]) -> None:
    chromium = _chromium()
    port, requests = trap
    session = Session.open(write_hostile(tmp_path / "hostile.jsonl", port))
    planner = PathPlanner(session, profile=PROFILE_0_80_2)
    page = export_report(
        tmp_path / "report.html", planner, PlanParams(keep_recent_tokens=1000), ExportOptions("path", "html")
    )
    url = page.resolve().as_uri()
    shot = tmp_path / "report.png"
    dom_run = _run(chromium, "--dump-dom", url)
    shot_run = _run(chromium, f"--screenshot={shot}", "--window-size=1200,1600", url)
    dom, dom_err = dom_run.communicate(timeout=60)
    _, shot_err = shot_run.communicate(timeout=60)
    assert dom_run.returncode == 0, dom_err.decode()[-2000:]
    assert shot_run.returncode == 0, shot_err.decode()[-2000:]
    text = dom.decode("utf-8")
    # the DOM as chromium built it: the hostile strings are text nodes, no element came out of them
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert f"&lt;img src=http://127.0.0.1:{port}/x&gt;" in text
    assert "[x](javascript:alert(1))" in text
    assert '"&gt;&lt;svg onload=alert(1)&gt;' in text
    assert "\\u202eevil\\u202c" in text
    parsed = assert_inert(text)  # only the report's own elements; no handlers; images only data:
    assert sum(tag == "img" for tag, _ in parsed.tags) == 1  # the session's own PNG
    # nothing the session names was fetched
    assert requests == []
    assert shot.stat().st_size > 10_000
