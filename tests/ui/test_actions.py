"""The wired session actions: commit, branch, label, rename, fork, legacy files, stale files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from session_studio.core import Session
from session_studio.ui import actions
from session_studio.ui.main_window import MainWindow

from .conftest import append_as_pi, side_branch_assistant, write_session


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: w.doc.preparation is not None or w.doc.state.nothing_to_compact, timeout=3000)


def _generate(qtbot: Any, w: MainWindow) -> None:
    w.tabs.setCurrentWidget(w.preview)
    w.preview.provider.setCurrentIndex(w.preview.provider.findData("offline"))
    w.preview.generate_button.click()
    qtbot.waitUntil(lambda: w.doc.outcome is not None, timeout=20000)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def yes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        asked.append(title)
        return True

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    return asked


def test_wired() -> None:
    assert actions.WIRED


def test_commit_appends_and_selects_new_leaf(
    qtbot: Any, window: MainWindow, split_turn_session: Path, yes: list[str]
) -> None:
    _open(qtbot, window, split_turn_session)
    assert not window.a_commit.isEnabled()
    _generate(qtbot, window)
    assert window.a_commit.isEnabled() and window.planner.commit_button.isEnabled()
    window.preview.summary.setPlainText(window.preview.summary.toPlainText() + "\nEdited by the user.")
    n = len(_lines(split_turn_session))
    window.a_commit.trigger()
    assert yes == ["Commit compaction"]
    lines = _lines(split_turn_session)
    assert len(lines) == n + 1
    entry = lines[-1]
    assert entry["type"] == "compaction" and entry["summary"].endswith("Edited by the user.")
    s = window.doc.session
    assert s.records[window.doc.selected].id == entry["id"]
    assert window.doc.state.path[-1] == window.doc.selected
    assert window.doc.state.nothing_to_compact
    assert not window.a_commit.isEnabled()


def test_generate_drafts_with_the_windows_own_planner(
    qtbot: Any, window: MainWindow, split_turn_session: Path
) -> None:
    """The draft plans with the path planner the window shows, not a second one (on a 900k-entry
    session that was ~14 MB more while a summary was made)."""
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    loaded = window.doc.loaded_state
    assert loaded is not None and window.doc.outcome is not None
    assert window.doc.outcome.draft.planner is loaded.planner


def test_committing_the_offline_draft_says_it_is_one(
    qtbot: Any, window: MainWindow, split_turn_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline drafter is the default summariser: the question before the commit says when
    the summary is its draft (pi gives it to the model in place of the history), and not once the
    user has written a summary of their own."""
    texts: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        texts.append(text)
        return False

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    before = split_turn_session.read_bytes()
    window.a_commit.trigger()
    assert "offline draft" in texts[-1] and "without a model" in texts[-1]
    window.preview.summary.setPlainText("## Goal\nWritten by hand.")
    window.a_commit.trigger()
    assert len(texts) == 2 and "offline draft" not in texts[-1]
    assert split_turn_session.read_bytes() == before  # both answered No: nothing written


def test_stale_commit_reloads_and_tells(
    qtbot: Any, window: MainWindow, split_turn_session: Path, yes: list[str]
) -> None:
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    before = split_turn_session.read_bytes()
    n = len(window.doc.session.records)
    extra = append_as_pi(split_turn_session)
    window.a_commit.trigger()
    assert split_turn_session.read_bytes() == before + extra.encode()
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert "pi changed the file" in box.text()
    box.close()
    qtbot.waitUntil(lambda: window.doc.session is not None and len(window.doc.session.records) == n + 1)
    # the summary survives the reload, marked as made for the file as it was (issue 9 #3)
    assert window.doc.summary_is_stale and window.doc.summary_text
    assert window.preview.stale_note.isVisible()


def test_branch_here_moves_working_leaf(qtbot: Any, window: MainWindow, branching_session: Path) -> None:
    _open(qtbot, window, branching_session)
    size = branching_session.stat().st_size
    side = side_branch_assistant(window)  # pi's navigation makes it the leaf
    window.doc.select(side)
    assert window.a_branch.isEnabled()
    window.a_branch.trigger()
    assert window.doc.working_leaf == side
    assert window.doc.state.path[-1] == side
    assert branching_session.stat().st_size == size  # pi writes nothing for a plain move
    assert "nothing was written" in window.last_dialog.informativeText()
    window.last_dialog.close()
    assert not window.a_branch.isEnabled()  # already the working leaf
    assert "already the working leaf" in window.a_branch.toolTip()


def test_label_and_rename(qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: Any) -> None:
    path = write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50), ("user", 50)])
    _open(qtbot, window, path)
    window.doc.select(1)
    answers = iter(["important", "My session"])
    monkeypatch.setattr(MainWindow, "ask_text", lambda self, *a: next(answers))
    window.a_label.trigger()
    assert window.doc.session.label_of("e0001") == "important"
    assert window.doc.selected == 1
    # the entry shown is the one labelled: the inspector says its label at once
    assert "important" in window.inspector.browser.toPlainText()
    window.a_rename.trigger()
    assert window.doc.session.session_name() == "My session"
    assert "My session" in window.windowTitle()
    types = [x["type"] for x in _lines(path)]
    assert types[-2:] == ["label", "session_info"]


def test_a_label_pi_appends_for_the_entry_shown_appears_in_the_inspector(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    path = write_session(tmp_path / "s.jsonl", [("user", 50), ("assistant", 50), ("user", 50)])
    _open(qtbot, window, path)
    window.doc.select(1)
    with path.open("a") as f:
        f.write(
            json.dumps(
                {
                    "type": "label",
                    "id": "1abe1000",
                    "parentId": "e0002",
                    "timestamp": "2026-12-02T10:00:00.000Z",
                    "targetId": "e0001",
                    "label": "set by pi",
                }
            )
            + "\n"
        )
    window.doc.refresh()
    qtbot.waitUntil(lambda: window.doc.session.label_of("e0001") == "set by pi")
    qtbot.waitUntil(lambda: "set by pi" in window.inspector.browser.toPlainText(), timeout=3000)


def test_fork_opens_new_file(
    qtbot: Any, window: MainWindow, branching_session: Path, tmp_path: Path, yes: list[str], monkeypatch: Any
) -> None:
    _open(qtbot, window, branching_session)
    out = tmp_path / "fork.jsonl"
    seen: list[str] = []

    def save(self: MainWindow, title: str, default: str) -> str:
        seen.append(default)
        return str(out)

    monkeypatch.setattr(MainWindow, "ask_save_path", save)
    window.a_fork.trigger()
    assert Path(seen[0]).parent == branching_session.parent and seen[0].endswith(".jsonl")
    assert "_" in Path(seen[0]).name
    assert out.exists()
    qtbot.waitUntil(lambda: window.doc.path == str(out))
    assert Session.open(out).header["parentSession"] == str(branching_session)


def test_legacy_file_disables_writes(qtbot: Any, window: MainWindow, tmp_path: Path, yes: list[str]) -> None:
    path = tmp_path / "legacy.jsonl"
    lines = [
        {"type": "session", "id": "legacy-1", "timestamp": "2025-01-01T10:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "timestamp": "2025-01-01T10:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T10:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "yo"}], "timestamp": 2},
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    _open(qtbot, window, path)
    assert window.doc.session.migrated
    for a in (window.a_commit, window.a_branch, window.a_label, window.a_rename):
        assert not a.isEnabled()
        assert "version 1" in a.toolTip() and "Upgrade" in a.toolTip()
    assert window.a_fork.isEnabled() and window.a_upgrade.isEnabled()
    window.a_upgrade.trigger()
    qtbot.waitUntil(lambda: window.doc.session is not None and not window.doc.session.migrated)
    assert list(tmp_path.glob("legacy.jsonl.v*-backup-*"))
    assert window.a_rename.isEnabled() and not window.a_upgrade.isEnabled()


def test_no_session_tooltips(window: MainWindow) -> None:
    for a, _tip in window.write_actions.values():
        assert not a.isEnabled() and a.toolTip() == "Open a session first."


def test_a_right_click_on_a_row_selects_its_entry_and_offers_the_entrys_commands(
    qtbot: Any, window: MainWindow, branching_session: Path
) -> None:
    """The tree's context menu: the window's own actions for the entry under the pointer (which is
    selected first: the commands act on the selection), or for the current row from the Menu key."""
    w = window
    w.show()
    _open(qtbot, w, branching_session)
    t, m = w.tree, w.tree_model
    side = side_branch_assistant(w)
    w.doc.select(side)
    leaf = w.doc.session.leaf_index()
    ix = m.index_of(leaf)
    t.scrollTo(ix)
    w._tree_context_menu(t.visualRect(ix).center())
    assert w.doc.selected == leaf
    menu = w.tree_menu
    assert menu is not None and menu.isVisible()
    shown = [a for a in menu.actions() if not a.isSeparator()]
    assert shown == [w.a_cut_here, w.a_goto_cut, w.a_branch, w.a_branch_sum, w.a_fork, w.a_label, w.a_copy_id]
    assert all(a.isEnabled() for a in (w.a_cut_here, w.a_fork, w.a_label, w.a_copy_id))
    menu.close()
    # the Menu key: Qt's point may lie beside every row; the current row's commands then
    w.doc.select(side)
    w._tree_context_menu(QPoint(-5, -5))
    assert w.doc.selected == side and w.tree_menu is menu and menu.isVisible()
    menu.close()
    # Shift+F10, as in GTK and Windows programs, in the tree
    w.activateWindow()
    t.setFocus()
    qtbot.waitUntil(t.hasFocus, timeout=2000)
    qtbot.keyClick(t, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(menu.isVisible, timeout=2000)
    assert w.doc.selected == side
    menu.close()


def test_copy_entry_id_copies_the_selected_entrys_id_from_the_menu_and_the_inspector(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """Edit ▸ Copy entry id and the inspector's Copy id button are one action; an entry without a
    string id (a damaged line pi keeps) has none to copy, rather than Python's "None"."""
    w = window
    path = write_session(tmp_path / "s.jsonl", [("user", 40), ("assistant", 40), ("user", 20)])
    with path.open("a") as f:
        f.write('{"type":"message","parentId":"e0002","message":{"role":"user","content":"no id"}}\n')
    _open(qtbot, w, path)
    s = w.doc.session
    clipboard = QApplication.clipboard()
    w.doc.select(s.get_index("e0001"))
    assert w.inspector.copy_button.defaultAction() is w.a_copy_id
    w.inspector.copy_button.click()
    assert clipboard.text() == "e0001"
    w.doc.select(s.get_index("e0000"))
    w.a_copy_id.trigger()
    assert clipboard.text() == "e0000"
    no_id = len(s.records) - 1
    w.doc.select(no_id)
    assert w.doc.selected == no_id
    assert not w.a_copy_id.isEnabled()
    assert not w.inspector.copy_button.isEnabled()


def test_a_fork_opened_from_the_window_shows_its_leaf_row(
    qtbot: Any, window: MainWindow, tmp_path: Path, yes: list[str], monkeypatch: Any
) -> None:
    """Fork at an entry far down a long session, then "Open it now?": the new file's leaf is the
    current row and in view (it was selected but scrolled out of sight)."""
    from .conftest import write_session

    long = write_session(
        tmp_path / "long.jsonl", [("user" if k % 2 == 0 else "assistant", 30) for k in range(300)]
    )
    window.resize(1200, 800)
    _open(qtbot, window, long)
    s = window.doc.session
    target = s.get_index("e0250")
    window.doc.select(target)
    qtbot.waitUntil(lambda: window.tree_model.record_of(window.tree.currentIndex()) == target)
    out = tmp_path / "fork.jsonl"
    monkeypatch.setattr(MainWindow, "ask_save_path", lambda self, title, default: str(out))
    window.a_fork.trigger()
    qtbot.waitUntil(lambda: window.doc.path == str(out) and window.doc.state is not None, timeout=5000)
    new = window.doc.session
    leaf = new.leaf_index()
    qtbot.waitUntil(lambda: window.tree_model.record_of(window.tree.currentIndex()) == leaf, timeout=3000)
    qtbot.wait(50)
    rect = window.tree.visualRect(window.tree.currentIndex())
    assert window.tree.viewport().rect().contains(rect), (rect, window.tree.viewport().rect())


@pytest.mark.parametrize(("pin", "kept"), [("1.6.0", "a0000003"), ("0.80.2", "b0000001")])
def test_a_fork_of_a_compaction_kept_from_a_label_follows_the_files_pi_and_says_so(
    qtbot: Any, window: MainWindow, tmp_path: Path, monkeypatch: Any, pin: str, kept: str
) -> None:
    """pi 1.6.0 re-points the compaction to the entry after the dropped label; 0.80.2 keeps the
    label's id and loses what the compaction kept: the window forks as the file's pi does and says
    what happened (tests/engine/test_fork_label_kept.py checks both against the real pis)."""
    import json

    from tests.engine.test_fork_label_kept import _kept_from_a_label

    src = _kept_from_a_label(tmp_path / "s.jsonl")
    _open(qtbot, window, src)
    window.doc.set_profile(pin=pin)
    out = tmp_path / "fork.jsonl"
    said: list[str] = []

    def ask(self: MainWindow, title: str, text: str, details: str = "", yes: str = "Yes", **_kw: Any) -> bool:
        said.append(text)
        return False  # do not open the fork

    monkeypatch.setattr(MainWindow, "ask_yes_no", ask)
    monkeypatch.setattr(MainWindow, "ask_save_path", lambda self, title, default: str(out))
    window.doc.select(window.doc.session.leaf_index())
    window.a_fork.trigger()
    qtbot.waitUntil(lambda: bool(said), timeout=5000)
    compaction = next(v for v in map(json.loads, out.read_text().splitlines()) if v["type"] == "compaction")
    assert compaction["firstKeptEntryId"] == kept
    assert "kept from a label" in said[0] and ("as pi 1.6.0 does" in said[0]) == (pin == "1.6.0")


def test_an_entry_in_a_dialog_names_its_kind_once(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    """The commit question read "(label: label 'x' on e1)" for a cut on a label entry."""
    from tests.engine.test_fork_label_kept import _kept_from_a_label

    _open(qtbot, window, _kept_from_a_label(tmp_path / "s.jsonl"))
    s = window.doc.session
    assert s is not None
    label = window._entry_words(s.get_index("b0000001"), 80)
    assert label.startswith("label 'start' on") and not label.startswith("label: ")
    assert window._entry_words(s.get_index("a0000001"), 80).startswith("user: ")


def test_an_entry_cut_short_in_a_dialog_ends_in_an_ellipsis(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The commit question read "(… write update summa)": cut mid-word, with nothing saying so."""
    path = write_session(tmp_path / "s.jsonl", [("user", 20), ("assistant", 20)])
    _open(qtbot, window, path)
    s = window.doc.session
    assert s is not None
    record = next(r.index for r in s.records if r.type == "message")
    full = window.tree_model.preview(record)
    assert len(full) > 30
    words = window._entry_words(record, 30)
    _kind, _, shown = words.partition(": ")
    assert shown.endswith("…") and len(shown) <= 30
    assert full.startswith(shown[:-1]) and full[len(shown) - 1] == " "  # at the end of a word


def test_a_summary_survives_a_reload_of_the_unchanged_file_and_commits(
    qtbot: Any, window: MainWindow, split_turn_session: Path, yes: list[str]
) -> None:
    """After View ▸ Reload with nothing changed, the summary was "made for an earlier state of the
    file" and had to be generated again. It commits, and the window shows the entry."""
    _open(qtbot, window, split_turn_session)
    _generate(qtbot, window)
    first = window.doc.session
    window._reload()
    qtbot.waitUntil(lambda: window.doc.session is not first and window.doc.state is not None)
    qtbot.waitUntil(lambda: window.doc.preparation is not None, timeout=5000)
    assert not window.doc.summary_is_stale and window.a_commit.isEnabled()
    n = len(_lines(split_turn_session))
    window.a_commit.trigger()
    assert yes == ["Commit compaction"]
    lines = _lines(split_turn_session)
    assert len(lines) == n + 1 and lines[-1]["type"] == "compaction"
    s = window.doc.session
    assert s.records[window.doc.selected].id == lines[-1]["id"] and window.doc.state.nothing_to_compact
