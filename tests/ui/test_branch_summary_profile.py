"""The window's "Branch with summary" writes the entry of the pi the file is read as.

A 1.6.0 file (auto) gets pi 1.6.0's branch summary: `fromId` is the leaf being left; pinned to
0.80.2 in the planner, the same command writes 0.80.2's (`fromId` = the new leaf). The entries
themselves are checked against the real pi in tests/engine/test_roundtrip16_branch.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_studio.ui.main_window import MainWindow

CASE = Path(__file__).resolve().parent.parent / "oracle" / "pi-1.6.0" / "cases" / "m2-edit-null.jsonl"


@pytest.fixture
def yes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MainWindow, "ask_yes_no", lambda *a, **k: True)


def _branch_with_summary(qtbot: Any, w: MainWindow, path: Path, pin: str) -> dict[str, Any]:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: not w.doc.preparing, timeout=3000)
    if pin != "auto":
        w.doc.set_profile(pin=pin)
        qtbot.waitUntil(lambda: w.doc.loaded_state.profile.profile.version == pin, timeout=3000)
    s = w.doc.session
    path_records = w.doc.state.path
    target = next(i for i in path_records[len(path_records) // 2 :] if s.records[i].role == "assistant")
    w.doc.select(target)
    w.preview.provider.setCurrentIndex(w.preview.provider.findData("offline"))
    assert w.a_branch_sum.isEnabled(), w.a_branch_sum.toolTip()
    lines = len(path.read_bytes().splitlines())
    w.a_branch_sum.trigger()
    qtbot.waitUntil(lambda: len(path.read_bytes().splitlines()) == lines + 1, timeout=20000)
    qtbot.waitUntil(lambda: not w.doc.writing, timeout=5000)
    entry = json.loads(path.read_bytes().splitlines()[-1])
    assert entry["type"] == "branch_summary" and entry["parentId"] == s.records[target].id
    return entry


@pytest.mark.usefixtures("yes")
def test_a_1_6_0_file_gets_pi_1_6_0s_branch_summary(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    work = tmp_path / "s.jsonl"
    shutil.copy(CASE, work)
    old_leaf = json.loads(work.read_bytes().splitlines()[-1])["id"]
    entry = _branch_with_summary(qtbot, window, work, "auto")
    assert entry["fromId"] == old_leaf != entry["parentId"]


@pytest.mark.usefixtures("yes")
def test_pinned_to_0_80_2_the_window_writes_0_80_2s(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    work = tmp_path / "s.jsonl"
    shutil.copy(CASE, work)
    entry = _branch_with_summary(qtbot, window, work, "0.80.2")
    assert entry["fromId"] == entry["parentId"] and "usage" not in entry
