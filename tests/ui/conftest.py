"""UI test fixtures. Qt runs offscreen; settings and logs go to tmp dirs."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported anywhere
os.environ.setdefault("QT_SCALE_FACTOR", "1")

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
SAMPLES = Path(__file__).resolve().parents[2] / "src" / "session_studio" / "resources" / "samples"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Any:
    """Delete the test's widgets now. pytest-qt closes them and calls deleteLater, but
    processEvents() does not run deferred deletes, so every test's window stayed alive until some
    later test ran an event loop: each apply_theme/setStyleSheet then re-polished all of them
    (a fixture's setup grew from 0.3 s to 10 s), and their timers kept firing in later tests."""
    result = yield
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    return result


@pytest.fixture(autouse=True)
def _isolated_dirs(
    qapp: Any, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.mktemp("ss")
    monkeypatch.setenv("SESSION_STUDIO_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("SESSION_STUDIO_STATE_DIR", str(base / "state"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(base / "pi-agent"))
    # plain v3 files follow "the pi installed on this machine": make that pi 0.80.2 in every UI test,
    # whatever is installed here (tests/ui/test_profile_window.py switches profiles explicitly)
    from session_studio.core import profile

    monkeypatch.setattr(profile, "installed_pi_version", lambda: "0.80.2")


def _text(role: str, n: int, k: int) -> dict[str, Any]:
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    body = (f"{role} message {k}: " + words * (n * 4 // len(words) + 1))[: n * 4]
    if role == "user":
        return {
            "role": "user",
            "content": [{"type": "text", "text": body}],
            "timestamp": 1_700_000_000_000 + k,
        }
    if role == "assistant":
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": body}],
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "api": "anthropic-messages",
            "stopReason": "stop",
            "usage": {
                "input": 100 * k,
                "output": 50,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 100 * k + 50,
                "cost": {"total": 0.01},
            },
            "timestamp": 1_700_000_000_000 + k,
        }
    return {
        "role": "toolResult",
        "toolCallId": f"call{k}",
        "toolName": "read",
        "content": [{"type": "text", "text": body}],
        "isError": False,
        "timestamp": 1_700_000_000_000 + k,
    }


def settle_window(qtbot: Any, w: Any) -> None:
    """Before pytest-qt closes a window whose tasks run in worker threads: no late task outlives it
    (a result queued to a deleted window raised in the next test's event loop, and a worker still
    running kept the short GIL slices that test checks)."""
    qtbot.waitUntil(lambda: not w.doc.preparing and not w.runner.busy, timeout=30000)
    w.runner.wait_idle()
    qtbot.wait(50)  # late results land while the window still exists
    w.runner.synchronous = True  # a timer firing before the window goes runs inline, not after it


def write_session(path: Path, spec: list[Any], cwd: str = "/work/demo") -> Path:
    """Write a v3 session: spec items are ("user"|"assistant"|"toolResult", tokens) or raw entry dicts.

    Entries chain parent→child in order unless an item dict sets "parentId" explicitly.
    """
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "0190a0a0-0000-7000-8000-000000000001",
            "timestamp": "2025-01-01T10:00:00.000Z",
            "cwd": cwd,
        }
    ]
    prev = None
    for k, item in enumerate(spec):
        eid = f"e{k:04d}"
        ts = f"2025-01-01T10:{k // 60:02d}:{k % 60:02d}.000Z"
        if isinstance(item, tuple):
            role, n = item
            e = {
                "type": "message",
                "id": eid,
                "parentId": prev,
                "timestamp": ts,
                "message": _text(role, n, k),
            }
        else:
            e = {"id": eid, "parentId": prev, "timestamp": ts, **item}
        lines.append(e)
        prev = e["id"]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


def append_as_pi(path: Path, entry_id: str = "pi000001", text: str = "hello from pi") -> str:
    """Append a user message to ``path`` chained to its last line, as pi does while the window
    shows the file; returns the line written (its newline included)."""
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    line = (
        json.dumps(
            {
                "type": "message",
                "id": entry_id,
                "parentId": last["id"],
                "timestamp": "2025-01-01T12:00:00.000Z",
                "message": {"role": "user", "content": text, "timestamp": 1},
            }
        )
        + "\n"
    )
    with path.open("a", encoding="utf-8") as f:
        f.write(line)
    return line


@pytest.fixture
def split_turn_session(tmp_path: Path) -> Path:
    """One early turn, then a long tool-using turn: keep=20000 cuts inside it (split turn)."""
    spec: list[Any] = [("user", 3000), ("assistant", 3000), ("user", 400)]
    for _ in range(8):
        spec += [("assistant", 600), ("toolResult", 4000)]
    spec += [("assistant", 800)]
    return write_session(tmp_path / "split.jsonl", spec)


@pytest.fixture
def branching_session() -> Path:
    return SAMPLES / "sample-branching.jsonl"


def side_branch_assistant(w: Any) -> int:
    """An assistant entry of the open session off its active path (in the branching sample):
    "Branch here" on it moves the working leaf there."""
    s = w.doc.session
    return next(
        r.index
        for r in s.records
        if r.type == "message" and r.role == "assistant" and r.index not in w.doc.state.path
    )


@pytest.fixture
def artifacts() -> Iterator[Path]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield ARTIFACTS


@pytest.fixture
def runner(qtbot: Any) -> Any:
    from session_studio.ui.tasks import TaskRunner

    return TaskRunner(synchronous=True)


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, runner: Any) -> Any:
    from PySide6.QtWidgets import QApplication

    from session_studio.ui.main_window import MainWindow, stylesheet
    from session_studio.ui.settings import AppSettings
    from session_studio.ui.theme import apply_theme

    app = QApplication.instance()
    apply_theme(app, "light")
    app.setStyleSheet(stylesheet())
    w = MainWindow(AppSettings(tmp_path / "cfg" / "s.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    return w


@pytest.fixture
def screen_reader(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """An assistive technology that listens: what ui.announce says to it, in order."""
    from session_studio.ui import announce

    said: list[str] = []

    class Listening:
        @staticmethod
        def isActive() -> bool:
            return True

        @staticmethod
        def updateAccessibility(event: Any) -> None:
            said.append(event.message())

    monkeypatch.setattr(announce, "QAccessible", Listening)
    return said
