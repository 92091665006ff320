"""End to end in the real window: plan with the slider, cut by hand in the tree, preview against the
mock LLM through a custom OpenAI-compatible provider, commit, and have pi itself reload the file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from session_studio.core.jsvalue import js_stringify
from session_studio.ui.main_window import MainWindow, stylesheet
from session_studio.ui.settings import AppSettings
from session_studio.ui.tasks import TaskRunner
from session_studio.ui.theme import apply_theme

from .conftest import settle_window

pytestmark = pytest.mark.oracle

ROOT = Path(__file__).resolve().parents[2]


def _accept_when_shown(qtbot: Any, seen: list[str]) -> QTimer:
    """Click the accept button of the next modal question (the commit confirmation)."""

    def poll() -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            seen.append(box.text())
            for b in box.buttons():
                if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole:
                    b.click()
                    return

    t = QTimer()
    t.setInterval(50)
    t.timeout.connect(poll)
    t.start()
    return t


def test_plan_cut_preview_commit_matches_pi(
    qtbot: Any, tmp_path: Path, oracle: Any, mock_llm: dict[str, str], artifacts: Path
) -> None:
    gen = tmp_path / "gen"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/oracle/gen_sessions.py"),
            "--seed",
            "7",
            "--count",
            "3",
            "--size",
            "medium",
            "--out",
            str(gen),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    src = sorted(gen.glob("*.jsonl"))[1]
    path = tmp_path / src.name
    shutil.copy(src, path)

    app = QApplication.instance()
    apply_theme(app, "light")
    app.setStyleSheet(stylesheet())
    runner = TaskRunner()
    w = MainWindow(AppSettings(tmp_path / "cfg.ini"), runner, sessions_root=str(tmp_path / "none"))
    qtbot.addWidget(w, before_close_func=lambda w: settle_window(qtbot, w))
    w.resize(1600, 1000)
    w.show()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None, timeout=30000)

    # 1. the keepRecentTokens slider
    auto_before = w.doc.state.cut.first_kept_index
    w.planner.keep.slider.setValue(4000)
    qtbot.waitUntil(lambda: w.doc.keep == 4000, timeout=2000)  # re-planned once the slider settles
    assert w.planner.keep.spin.value() == 4000
    st = w.doc.state
    assert not st.nothing_to_compact and st.cut.first_kept_index >= auto_before

    # 2. a manual cut: select a valid cut point in the tree (before the automatic one), then "Cut here"
    b = st.plan.boundary
    auto = st.cut.first_kept_index
    candidates = [
        pos for pos in range(b.start + 1, auto) if st.marks.get(st.path[pos]) == "valid" and pos > b.start + 2
    ]
    assert candidates, "the generated session should have earlier cut points"
    pos = candidates[len(candidates) // 2]
    rec = st.path[pos]
    ix = w.tree_model.index_of(rec)
    assert ix.isValid()
    w.tree.selectionModel().setCurrentIndex(
        ix, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    )
    assert w.doc.selected == rec
    w.a_cut_here.trigger()
    st = w.doc.state
    assert st.manual and st.cut.first_kept_index == pos
    qtbot.waitUntil(lambda: w.doc.preparation is not None, timeout=10000)

    # 3. preview with a custom OpenAI-compatible provider pointed at the mock LLM
    w.set_custom_provider(
        {"kind": "openai", "base_url": mock_llm["openaiBaseUrl"], "model": "mock-model", "key_env": ""}
    )
    assert w.preview.provider.currentData() == "custom"
    w.tabs.setCurrentWidget(w.preview)
    w.preview.generate_button.click()
    qtbot.waitUntil(lambda: w.doc.outcome is not None, timeout=60000)
    outcome = w.doc.outcome
    assert outcome.draft.first_kept_entry_id == w.doc.session.records[rec].id
    qtbot.waitUntil(
        lambda: w.preview.pair is not None and w.preview.pair.after_context is not None, timeout=20000
    )
    runner.wait_idle()
    QApplication.processEvents()
    shown = json.loads(js_stringify(w.preview.pair.after_context) or "null")
    assert w.a_commit.isEnabled()

    # 4. commit, accepting the confirmation like a user
    seen: list[str] = []
    timer = _accept_when_shown(qtbot, seen)
    try:
        w.a_commit.trigger()
        qtbot.waitUntil(lambda: not w.doc.writing and w.doc.state.nothing_to_compact, timeout=30000)
    finally:
        timer.stop()
    assert seen and "First kept entry" in seen[0]
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["type"] == "compaction" and last["id"] == outcome.entry_id
    assert w.doc.session.records[w.doc.selected].id == last["id"]

    # the new plan's preparation replaces the old file lists, and every busy indicator ends
    qtbot.waitUntil(lambda: not w.doc.preparing and not runner.busy, timeout=20000)
    runner.wait_idle()
    QApplication.processEvents()
    assert w.status_busy.text() == ""
    assert w.preview.files.toPlainText() == "(nothing to compact\nwith this cut)"
    assert [q.spec for q in w.doc.state.quirks if q.code == "leaf-compaction"] == [None]
    shot = artifacts / "after-commit-1600x1000-light.png"
    assert w.grab().save(str(shot))
    w.resize(1280, 800)
    QApplication.processEvents()
    assert w.grab().save(str(artifacts / "after-commit-1280x800-light.png"))
    w.resize(1600, 1000)

    # 5. pi reloads the file: its context is what the preview showed
    pi = oracle.run("context", str(path))
    assert pi["leafId"] == last["id"]
    assert pi["context"] == shown
    w.close()
