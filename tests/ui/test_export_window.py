"""File ▸ Export…: the window exports its current plan (settings, manual cut, profile, summary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_studio.ui.export_dialog import ExportChoice, ExportDialog
from session_studio.ui.main_window import MainWindow


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)


def _choose(monkeypatch: Any, choice: ExportChoice) -> list[tuple[str, str, bool]]:
    asked: list[tuple[str, str, bool]] = []

    def ask(self: MainWindow, directory: str, stem: str, has_summary: bool) -> ExportChoice:
        asked.append((directory, stem, has_summary))
        return choice

    monkeypatch.setattr(MainWindow, "ask_export", ask)
    return asked


def test_export_is_in_the_file_menu_and_needs_a_session(window: MainWindow) -> None:
    file_menu = window.menuBar().actions()[0].menu()
    assert window.a_export in file_menu.actions()
    assert not window.a_export.isEnabled()


def test_export_uses_the_window_plan(
    qtbot: Any, window: MainWindow, split_turn_session: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    _open(qtbot, window, split_turn_session)
    assert window.a_export.isEnabled()
    window.doc.set_params(9000, 5000, 60000)  # the what-if settings of the planner
    qtbot.waitUntil(lambda: window.doc.state is not None and window.doc.state.keep == 9000)
    st = window.doc.state
    assert st is not None and st.first_kept_record is not None
    out = tmp_path / "report.html"
    asked = _choose(monkeypatch, ExportChoice("plan", "html", str(out), include_summary=False))
    window.a_export.trigger()
    qtbot.waitUntil(out.exists)
    assert asked == [(str(split_turn_session.parent), "split", False)]
    page = out.read_text(encoding="utf-8")
    first_id = window.doc.session.records[st.first_kept_record].id
    assert "<th>keepRecentTokens</th><td>9,000</td>" in page
    assert "<th>context window</th><td>60,000" in page
    assert f"(id {first_id})" in page
    assert "Exported" in window.statusBar().currentMessage()


def test_export_takes_the_generated_summary(
    qtbot: Any, window: MainWindow, split_turn_session: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    _open(qtbot, window, split_turn_session)
    window.doc.set_summary("## Goal\nSummary written in the window.")
    out = tmp_path / "context.md"
    asked = _choose(monkeypatch, ExportChoice("context", "md", str(out), include_summary=True))
    window.a_export.trigger()
    qtbot.waitUntil(out.exists)
    assert asked[0][2] is True
    assert "Summary written in the window." in out.read_text(encoding="utf-8")


def test_export_failure_is_reported(
    qtbot: Any, window: MainWindow, split_turn_session: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    _open(qtbot, window, split_turn_session)
    shown: list[str] = []
    monkeypatch.setattr(
        "session_studio.ui.main_window.report_failure", lambda parent, f: shown.append(f.title)
    )
    _choose(monkeypatch, ExportChoice("path", "md", str(tmp_path / "missing" / "r.md"), False))
    window.a_export.trigger()
    qtbot.waitUntil(lambda: bool(shown))
    assert shown == ["Export failed"]


def test_dialog_names_the_file_after_the_choices(qtbot: Any, tmp_path: Path) -> None:
    dialog = ExportDialog(None, str(tmp_path), "session", has_summary=False)
    qtbot.addWidget(dialog)
    assert dialog.choice() == ExportChoice("plan", "html", str(tmp_path / "session.plan.html"), False)
    dialog.what.setCurrentIndex(dialog.what.findData("context"))
    dialog.fmt.setCurrentIndex(dialog.fmt.findData("md"))
    assert dialog.choice().path == str(tmp_path / "session.context.md")
    assert not dialog.summary.isEnabled()
    dialog.path.setText("/elsewhere/mine.html")
    dialog.path.textEdited.emit("/elsewhere/mine.html")
    dialog.what.setCurrentIndex(dialog.what.findData("path"))
    assert dialog.choice() == ExportChoice("path", "md", "/elsewhere/mine.html", False)


def test_a_report_is_not_proposed_inside_pis_sessions_folder_and_the_last_folder_is_kept(
    qtbot: Any, window: MainWindow, split_turn_session: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """Seen under X: the export dialog proposed to write the report beside the session file, into
    pi's sessions folder (~/.pi/agent/sessions/--project--/), among pi's own files and hard to find
    again. A session there gets the user's Documents folder; after an export, its folder."""
    from PySide6.QtCore import QStandardPaths

    inside = Path(window.sessions_root) / "--work-demo--"
    inside.mkdir(parents=True)
    session = inside / "s.jsonl"
    session.write_bytes(split_turn_session.read_bytes())
    documents = tmp_path / "Documents"
    documents.mkdir()
    monkeypatch.setattr(QStandardPaths, "writableLocation", lambda _where: str(documents))
    _open(qtbot, window, session)
    reports = tmp_path / "reports"
    reports.mkdir()
    out = reports / "plan.html"
    asked = _choose(monkeypatch, ExportChoice("plan", "html", str(out), include_summary=False))
    window.a_export.trigger()
    qtbot.waitUntil(out.exists)
    window.a_export.trigger()
    qtbot.waitUntil(lambda: len(asked) == 2)
    assert [a[0] for a in asked] == [str(documents), str(reports)]
