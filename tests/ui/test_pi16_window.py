"""The window renders pi 1.6.0 sessions (spec §10.1) as a person expects: system messages with
their sections, tools and tokens; context edits on their targets; usage entries folded into
totals and behind a filter; compactions with their system snapshot and usage."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from session_studio.core import Session
from session_studio.core.tokens import estimate_tokens_16
from session_studio.ui.main_window import MainWindow
from session_studio.ui.pi16 import usage_totals
from session_studio.ui.roles import Roles
from session_studio.ui.tree_model import SessionTreeModel

from .conftest import write_session
from .pi16_sample import SPEC, SUMMARY_USAGE, SYSTEM, write_pi16_session


def _open(qtbot: Any, w: MainWindow, path: Path) -> None:
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.doc.state is not None)
    qtbot.waitUntil(lambda: not w.doc.preparing, timeout=3000)


def _record(w: MainWindow, entry_id: str) -> int:
    i = w.doc.session.get_index(entry_id)
    assert i is not None
    return i


def _cell(w: MainWindow, entry_id: str, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    idx = w.tree_model.index_of(_record(w, entry_id), column)
    assert idx.isValid(), f"{entry_id} is not shown in the tree"
    return w.tree_model.data(idx, role)


def _inspect(qtbot: Any, w: MainWindow, entry_id: str) -> str:
    w.doc.select(_record(w, entry_id))
    qtbot.waitUntil(lambda: w.inspector.index == _record(w, entry_id))
    w.inspector.grab()  # paint it, as the user would see it
    return w.inspector.browser.toPlainText()


def _session(qtbot: Any, window: MainWindow, tmp_path: Path) -> MainWindow:
    _open(qtbot, window, write_pi16_session(tmp_path / "pi16.jsonl"))
    window.tree.expandAll()
    window.tree.viewport().grab()  # the tree paints every row's data with the delegate
    return window


def test_system_message_row_and_inspector_show_sections_tools_and_tokens(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    w = _session(qtbot, window, tmp_path)
    text = _cell(w, "e0000", 0)
    assert text.startswith("system · sections base, project · +2 tools (read, bash)")
    tokens = estimate_tokens_16(SYSTEM)
    assert tokens > 200
    assert _cell(w, "e0000", 1) == f"{tokens:,}"
    assert _cell(w, "e0000", 0, Roles.KIND) == "system"  # its own icon and colour, not "damaged"
    assert "pi 1.6.0's estimate" in html.unescape(_cell(w, "e0000", 0, Qt.ItemDataRole.ToolTipRole))

    shown = _inspect(qtbot, w, "e0000")
    assert f"System message {tokens:,} tokens" in shown
    assert "Section · base" in shown and f"{len(SYSTEM['sections']['base']):,} chars" in shown
    assert "Section · project" in shown
    assert "Tools added (2)" in shown and "Read a file from the workspace." in shown
    assert "Run a shell command" in shown

    later = _cell(w, "e0015", 0)
    assert "removes section project" in later and "−1 tool (bash)" in later
    shown = _inspect(qtbot, w, "e0015")
    assert "Section · project" in shown and "removed (null)" in shown
    assert "Tools removed (1)" in shown and "bash" in shown


def test_context_edits_mark_their_targets_and_show_both_versions(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    w = _session(qtbot, window, tmp_path)
    assert _cell(w, "e0008", 0, Roles.EDIT) == "hidden"
    assert _cell(w, "e0008", 0).startswith("⊘ hidden · read:")
    font = _cell(w, "e0008", 0, Qt.ItemDataRole.FontRole)
    assert isinstance(font, QFont) and font.strikeOut()
    tip = html.unescape(_cell(w, "e0008", 0, Qt.ItemDataRole.ToolTipRole))
    assert "Hidden from the LLM by context edit e0013" in tip

    replacement = "[tool output pruned: 8000 chars]"
    assert _cell(w, "e0011", 0, Roles.EDIT) == "replaced"
    assert _cell(w, "e0011", 0).startswith("✎ replaced · ")
    assert _cell(w, "e0011", 1) == f"{math.ceil(len(replacement) / 4):,}"  # what the LLM sees now
    assert _cell(w, "e0010", 0, Roles.EDIT) == ""

    shown = _inspect(qtbot, w, "e0008")
    assert "Hidden from the LLM by context edit e0013 (line 15)" in shown
    assert "toolResult message 8" in shown  # the stored content stays readable

    shown = _inspect(qtbot, w, "e0011")
    assert "Replaced for the LLM by context edit e0014" in shown
    assert (
        shown.index(replacement) < shown.index("Original (as stored)") < shown.index("toolResult message 11")
    )

    shown = _inspect(qtbot, w, "e0013")
    assert "Context edit hides its target from the LLM" in shown
    assert "message · toolResult · line 10" in shown and "in effect on the active path" in shown
    shown = _inspect(qtbot, w, "e0014")
    assert "replaces its target's content" in shown and replacement in shown


def test_a_superseded_edit_says_so(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    spec = [
        *SPEC,
        {"type": "context_edit", "targetId": "e0011", "replacement": {"content": "second try"}},
    ]
    _open(qtbot, window, write_session(tmp_path / "twice.jsonl", spec))
    shown = _inspect(qtbot, window, "e0014")
    assert "superseded by the later edit e0019" in shown
    # its replacement is what the LLM would see where it applied, not what it sees
    assert "what the LLM would see instead where this edit applies" in shown
    assert "what the LLM sees instead" not in shown and "(+1 chars)" not in shown
    shown = _inspect(qtbot, window, "e0019")
    assert "in effect on the active path" in shown and "what the LLM sees instead" in shown
    shown = _inspect(qtbot, window, "e0011")
    assert "Replaced for the LLM by context edit e0019" in shown and "second try" in shown
    assert "Also named by context edit(s) that do not apply" in shown and "e0014" in shown


def test_usage_entries_are_hidden_by_default_shown_by_their_filter_and_totalled(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    w = _session(qtbot, window, tmp_path)
    for usage in ("e0009", "e0018"):
        assert not w.tree_model.index_of(_record(w, usage)).isValid()
    w.filter_combo.setCurrentIndex(w.filter_combo.findData("usage"))
    qtbot.waitUntil(lambda: w.tree_model.index_of(_record(w, "e0009")).isValid())
    w.tree.viewport().grab()
    assert _cell(w, "e0009", 0).startswith("usage · cache_warm · anthropic/claude-sonnet-4-5 · 40,011 tokens")
    assert _cell(w, "e0009", 0, Roles.KIND) == "usage"
    assert w.tree_model.index_of(_record(w, "e0001")).isValid()  # the other entries stay

    costs = [x["usage"]["cost"]["total"] for x in SPEC if isinstance(x, dict) and x.get("type") == "usage"]
    shown = _inspect(qtbot, w, "e0009")
    assert "Usage · cache_warm" in shown and "40,011" in shown
    assert "Session usage" in shown
    assert f"usage entries\t{len(costs)}" in shown.replace("\n", "\t").replace("\xa0", " ")
    assert f"${sum(costs):.4f}" in shown
    assert f"${SUMMARY_USAGE['cost']['total']:.4f}" in shown  # the compaction's summarisation
    root = _inspect(qtbot, w, "e0000")
    assert "Session usage" in root


def test_the_head_of_a_file_being_read_has_no_usage_totals_of_its_own(tmp_path: Path) -> None:
    """While a big file's head is shown, its usage is a part of the session's: none is summed (it
    was, on the GUI thread, 20-60 ms of the first paint); the whole file's is, once it is there."""
    s = Session.open(write_pi16_session(tmp_path / "pi16.jsonl"))
    model = SessionTreeModel()
    model.set_session(s, s.path_indices(s.leaf_index()), head=True)
    assert model.usage() is None
    model.set_session(s, s.path_indices(s.leaf_index()))
    got = model.usage()
    assert got is not None and got.by_source == usage_totals(s).by_source
    assert got.by_source["usage entries"][0] == 2


def test_compaction_shows_its_system_snapshot_and_usage(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    w = _session(qtbot, window, tmp_path)
    assert "system snapshot" in _cell(w, "e0005", 0)
    shown = _inspect(qtbot, w, "e0005")
    tokens = estimate_tokens_16(SYSTEM)
    assert f"▸ System message snapshot · {tokens:,} tokens" in shown
    assert "Section · base" not in shown  # folded until asked for
    assert "totalTokens 5,840 · $0.0252 (the summarisation calls)" in shown
    w.inspector.browser.toggled.emit("snap")
    shown = w.inspector.browser.toPlainText()
    assert "Section · base" in shown and "Tools added (2)" in shown


def test_a_retain_none_compaction_says_so(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    spec = [
        ("user", 300),
        ("assistant", 300),
        {
            "type": "compaction",
            "summary": "all of it",
            "firstKeptEntryId": "e0002",
            "tokensBefore": 600,
            "details": {},
        },
        ("user", 100),
    ]
    _open(qtbot, window, write_session(tmp_path / "none.jsonl", spec))
    assert "retain-none (keeps no entry)" in _cell(window, "e0002", 0)
    shown = _inspect(qtbot, window, "e0002")
    assert "retain-none: keeps no entry" in shown


def test_session_text_in_new_entries_stays_inert(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    evil = "<img src='/dev/zero'><b>bold</b>"
    spec = [
        {
            "type": "message",
            "message": {
                "role": "system",
                "content": evil,
                "sections": {evil: evil},
                "toolsAdded": [{"name": evil, "description": evil}],
                "toolsRemoved": [{"name": evil}],
                "timestamp": 1,
            },
        },
        {"type": "context_edit", "targetId": "e0000", "replacement": {"content": evil}},
        {"type": "usage", "kind": evil, "provider": evil, "model": evil, "usage": {"totalTokens": 5}},
    ]
    _open(qtbot, window, write_session(tmp_path / "evil.jsonl", spec))
    for entry in ("e0000", "e0001", "e0002"):
        shown = _inspect(qtbot, window, entry)
        assert "<img src='/dev/zero'>" in shown  # shown as text, not parsed
        assert window.inspector.browser.blocked == []


def test_what_follows_a_markdown_list_is_not_one_of_its_items(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    w = _session(qtbot, window, tmp_path)
    _inspect(qtbot, w, "e0005")  # its summary ends with a list
    doc = w.inspector.browser.document()
    details = doc.find("Details")
    assert not details.isNull()
    assert details.block().textList() is None


def test_long_paths_and_big_files_are_worked_out_off_the_gui_thread(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from session_studio.core.session import Session
    from session_studio.ui import tree_model
    from session_studio.ui.tasks import TaskRunner

    s = Session.open(write_pi16_session(tmp_path / "pi16.jsonl"))
    path = s.path_indices(s.leaf_index())
    monkeypatch.setattr(tree_model, "SYNC_EDIT_PATH", 2)
    monkeypatch.setattr(tree_model, "all_values_kept", lambda _s: False)
    m = tree_model.SessionTreeModel()
    m.set_session(s, path)
    hidden = s.get_index("e0008")
    assert m.edits.applied == {}  # not on this thread
    runner = TaskRunner()
    with qtbot.waitSignal(m.pi16_ready, timeout=5000):
        m.prepare_pi16(runner)
    assert m.data(m.index_of(hidden), Roles.EDIT) == "hidden"
    with qtbot.waitSignal(m.pi16_ready, timeout=5000):
        m.rebuild(path)  # entries appended, say: found again in a worker …
        assert m.data(m.index_of(hidden), Roles.EDIT) == "hidden"  # … the rows keep their marks meanwhile
    assert m.usage() is None  # asked for: summed up in a worker too
    with qtbot.waitSignal(m.pi16_ready, timeout=5000):
        pass
    totals = m.usage()
    assert totals is not None and totals.by_source["usage entries"][0] == 2


def test_an_edit_without_replacement_says_pi_fails_on_it(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    spec = [("user", 100), ("assistant", 100), {"type": "context_edit", "targetId": "e0000"}]
    _open(qtbot, window, write_session(tmp_path / "broken.jsonl", spec))
    window.filter_combo.setCurrentIndex(window.filter_combo.findData("all"))
    qtbot.waitUntil(lambda: window.tree_model.index_of(_record(window, "e0002")).isValid())
    assert _cell(window, "e0002", 0) == "context edit · on e0000, without a replacement"
    shown = _inspect(qtbot, window, "e0002")
    assert "has no replacement: pi 1.6.0 fails reading its content" in shown
    assert "pi 1.6.0 cannot build this branch's context (Cannot read properties of undefined" in shown


def test_an_edited_entrys_token_line_counts_what_pi_sends(
    qtbot: Any, window: MainWindow, tmp_path: Path
) -> None:
    """The tooltip's and the inspector's token line of an entry a context edit replaces count the
    edited text (core's 1.6.0 projection), not the 2,000-token stored result, and say so."""
    w = _session(qtbot, window, tmp_path)
    replacement = "[tool output pruned: 8000 chars]"
    tip = html.unescape(_cell(w, "e0011", 0, Qt.ItemDataRole.ToolTipRole))
    found = re.search(r"Tokens: pi estimate [^<]*", tip)  # one line of the rich tooltip
    assert found, tip
    line = found.group(0)
    assert line.startswith(f"Tokens: pi estimate {math.ceil(len(replacement) / 4):,} · real ")
    assert line.endswith(" · as edited by context edit e0014")
    real = int(line.split(" · real ")[1].split(" ")[0].replace(",", ""))
    assert 0 < real < 50  # the replacement's tokens, not the stored text's
    _inspect(qtbot, w, "e0011")
    assert w.inspector.tokens.text() == line.removeprefix("Tokens: ")
    hidden = html.unescape(_cell(w, "e0008", 0, Qt.ItemDataRole.ToolTipRole))
    assert "Tokens: 0 in the context: hidden by context edit e0013" in hidden
    _inspect(qtbot, w, "e0010")  # not edited: the stored entry, as before
    assert "as edited" not in w.inspector.tokens.text()


def test_has_context_edits_finds_them_from_any_record_on(tmp_path: Path) -> None:
    """Issue 11: the scan is a C-level search of the types column now (a record view per entry held
    the GIL for ~0.2 s on 100k entries); it answers as the per-record test did, from any start."""
    from session_studio.core import Session
    from session_studio.ui.pi16 import has_context_edits

    s = Session.open(write_pi16_session(tmp_path / "pi16.jsonl"))
    recs = s.records
    edits = [i for i in range(len(recs)) if recs[i].type == "context_edit"]
    assert edits
    for start in range(len(recs) + 2):
        assert has_context_edits(s, start) == any(i >= start for i in edits), start
    plain = Session.open(write_session(tmp_path / "plain.jsonl", [("user", 30), ("assistant", 30)]))
    assert not has_context_edits(plain)
