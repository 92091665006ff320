"""The window's "Branch with summary" writes the entry of the pi the file is read as.

A 1.6.0 file (auto) gets pi 1.6.0's branch summary: `fromId` is the leaf being left; pinned to
0.80.2 in the planner, the same command writes 0.80.2's (`fromId` = the new leaf). The entries
themselves are checked against the real pi in tests/engine/test_roundtrip16_branch.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_studio.cli import main
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


@pytest.mark.usefixtures("yes")
def test_the_window_budgets_the_summary_with_pis_branch_summary_reserve_as_the_cli_does(
    qtbot: Any, window: MainWindow, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """settings.json's `branchSummary.reserveTokens` leaves room for the newest entries only: the
    window's summary covers what `branch-to --summarize` covers (engine.branch_budget for both)."""
    agent = Path(os.environ["PI_CODING_AGENT_DIR"])
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"branchSummary": {"reserveTokens": 128000 - 120}}))
    work = tmp_path / "w.jsonl"
    shutil.copy(CASE, work)
    cli_copy = tmp_path / "c.jsonl"
    shutil.copy(CASE, cli_copy)
    ours = _branch_with_summary(qtbot, window, work, "auto")
    target = ours["parentId"]
    assert main(["branch-to", str(cli_copy), target, "--summarize", "--provider", "offline"]) == 0
    capsys.readouterr()
    cli = json.loads(cli_copy.read_bytes().splitlines()[-1])
    assert (ours["summary"], ours["details"]) == (cli["summary"], cli["details"])
    # the reserve mattered: with pi's default the whole abandoned branch fits and is summarised
    (agent / "settings.json").unlink()
    default_copy = tmp_path / "d.jsonl"
    shutil.copy(CASE, default_copy)
    assert main(["branch-to", str(default_copy), target, "--summarize", "--provider", "offline"]) == 0
    capsys.readouterr()
    assert json.loads(default_copy.read_bytes().splitlines()[-1])["summary"] != ours["summary"]


def test_the_question_says_how_many_entries_are_left_behind(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question named neither the entry nor what would be summarised. It says which entry
    the leaf moves to and how many entries are left behind; when none are (the working leaf was
    moved back, the selected entry follows it) that pi writes nothing and the leaf just moves."""
    from session_studio.core.branch_summary import collect_entries_for_branch_summary

    asked: list[tuple[str, str]] = []
    monkeypatch.setattr(
        MainWindow, "ask_yes_no", lambda self, title, text, *a, yes="Yes": asked.append((text, yes)) and False
    )
    work = tmp_path / "s.jsonl"
    shutil.copy(CASE, work)
    w = window
    w.open_path(str(work))
    qtbot.waitUntil(lambda: w.doc.state is not None and not w.doc.preparing, timeout=5000)
    s = w.doc.session
    path = list(w.doc.state.path)
    target = next(i for i in path[len(path) // 2 :] if s.records[i].role == "assistant")
    left = len(collect_entries_for_branch_summary(s, s.records[path[-1]].id, s.records[target].id).indices)
    assert left == len(path) - 1 - path.index(target) > 0
    w.doc.select(target)
    w.a_branch_sum.trigger()
    text, yes = asked[-1]
    assert f"from {s.records[target].id} (assistant: " in text
    assert f"The {left} entr{'ies' if left != 1 else 'y'} left behind (newest first" in text
    assert yes == "Summarise and branch"
    # the working leaf moved back to the target (nothing written); then a later entry of the old path
    w.doc.select(target)
    w.a_branch.trigger()
    qtbot.waitUntil(lambda: w.doc.working_leaf_index() == target, timeout=5000)
    qtbot.waitUntil(lambda: not w.doc.preparing and not w.runner.busy, timeout=5000)
    later = path[-2]  # not the file's leaf: branching there is no move for pi
    w.doc.select(later)
    assert w.a_branch_sum.isEnabled(), w.a_branch_sum.toolTip()
    w.a_branch_sum.trigger()
    assert len(asked) == 2
    text, yes = asked[-1]
    assert "No entry is left behind" in text and "nothing is appended" in text
    assert yes == "Move the leaf"
