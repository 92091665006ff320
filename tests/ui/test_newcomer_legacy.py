"""Issue 9 #4: version 1 files (pi's own fixtures) say up front what to do, and Upgrade keeps the work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QTextCursor

from session_studio.core.migrate import version_name
from session_studio.ui.main_window import MainWindow

FIXTURES = Path(__file__).resolve().parents[1] / "oracle" / "fixtures"


@pytest.fixture
def v1_session(tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURES / "before-compaction.jsonl", tmp_path / "v1.jsonl"))


@pytest.fixture
def yes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append(title)
        return True

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    return asked


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None or w.doc.state.nothing_to_compact, timeout=5000)


def test_version_names() -> None:
    assert version_name(None) == "version 1"
    assert version_name(2) == "version 2"
    assert version_name(True) == "version 1"


def test_v1_file_says_so_up_front(qtbot: Any, window: MainWindow, v1_session: Path) -> None:
    _open(qtbot, window, v1_session)
    banner = window.legacy_banner
    assert banner.isVisible()
    text = banner.label.text()
    assert "version 1 session file" in text and "pi rewrites it with new ids" in text
    assert banner.upgrade_button.isVisible() and banner.fork_button.isVisible()
    status = window.status_path.text()
    assert "vNone" not in status and "version 1" in status


def test_a_v1_files_ids_are_not_offered_for_copying(qtbot: Any, window: MainWindow, v1_session: Path) -> None:
    """A version 1 file has no entry ids: the migration makes random ones on every open (pi's too),
    so a copied one matched nothing in the next run of the CLI or in pi. The inspector says the id
    was made on opening; Copy entry id is off and says why."""
    _open(qtbot, window, v1_session)
    s = window.doc.session
    assert s is not None
    entry = next(r.index for r in s.records if r.type == "message")
    window.doc.select(entry)
    assert s.id_made_on_open(entry)
    assert "(made on opening)" in window.inspector.title.text()
    assert not window.a_copy_id.isEnabled()
    assert "version 1" in window.a_copy_id.toolTip()
    again = type(s).open(s.path)  # another open makes other ids
    assert again.records[entry].id != s.records[entry].id


def test_v3_file_has_no_legacy_banner(qtbot: Any, window: MainWindow, split_turn_session: Path) -> None:
    _open(qtbot, window, split_turn_session)
    assert not window.legacy_banner.isVisible()


def test_upgrade_keeps_settings_cut_and_summary(
    qtbot: Any, window: MainWindow, v1_session: Path, yes: list[str]
) -> None:
    _open(qtbot, window, v1_session)
    d = window.doc
    window.planner.keep.spin.setValue(12000)
    window.planner.reserve.spin.setValue(9000)
    window.planner.flush_params()  # the sliders are debounced
    st = d.state
    # a manual cut: the valid cut point just before the automatic one
    cut_records = [r for r, m in st.marks.items() if m in ("valid", "cut")]
    target = sorted(cut_records, key=st.path.index)[-3]
    assert d.set_manual_cut(target) is None
    cut_id = d.session.records[target].id
    qtbot.waitUntil(lambda: d.preparation is not None, timeout=5000)
    window.tabs.setCurrentWidget(window.preview)
    window.preview.generate_button.click()
    qtbot.waitUntil(lambda: d.outcome is not None, timeout=30000)
    ed = window.preview.summary
    ed.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(ed, " (checked by hand)")
    window.preview.flush_summary()
    assert not window.planner.commit_button.isEnabled()

    window.legacy_banner.upgrade_button.click()
    assert yes == ["Upgrade legacy file"]
    qtbot.waitUntil(lambda: d.session is not None and not d.session.migrated, timeout=10000)
    assert json.loads(v1_session.read_text().splitlines()[0])["version"] == 3
    assert not window.legacy_banner.isVisible()
    assert (d.keep, d.reserve) == (12000, 9000)
    assert window.planner.keep.value() == 12000
    assert d.manual_cut is not None and d.session.records[d.state.path[d.manual_cut]].id == cut_id
    assert ed.toPlainText().endswith(" (checked by hand)")
    assert d.summary_text.endswith(" (checked by hand)")
    # the summary was made for the file before the upgrade: committing asks, then writes it
    assert window.planner.commit_button.isEnabled()
    window.planner.commit_button.click()
    assert yes[-1] == "Use this summary anyway?"
    last = json.loads(v1_session.read_text().splitlines()[-1])
    assert last["type"] == "compaction"
    assert last["summary"].endswith(" (checked by hand)")
    assert last["firstKeptEntryId"] == cut_id
