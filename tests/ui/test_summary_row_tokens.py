"""The tree's Tokens column shows what a compaction, a branch summary and a custom message give the
LLM (pi's estimate of the messages it builds from them, as the inspector says), not a blank."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_studio.core.real_tokens import entry_estimate
from session_studio.ui.main_window import MainWindow

from .conftest import write_session


def test_summary_rows_show_their_estimate(qtbot: Any, window: MainWindow, tmp_path: Path) -> None:
    f = write_session(
        tmp_path / "s.jsonl",
        [
            ("user", 400),
            ("assistant", 300),
            {
                "type": "compaction",
                "summary": "## Goal\n" + "kept work " * 80,
                "firstKeptEntryId": "e0001",
                "tokensBefore": 700,
            },
            {"type": "branch_summary", "fromId": "e0001", "summary": "tried another way " * 30},
            {
                "type": "custom_message",
                "customType": "note",
                "content": "remember this " * 20,
                "display": True,
            },
            ("user", 50),
        ],
    )
    window.open_path(str(f))
    qtbot.waitUntil(lambda: window.doc.state is not None, timeout=5000)
    s = window.doc.session
    profile = window.doc.loaded_state.profile.profile
    m = window.tree_model
    assert [s.records[r].type for r in (2, 3, 4)] == ["compaction", "branch_summary", "custom_message"]
    for record in (2, 3, 4):
        rec = s.records[record]
        want = entry_estimate(s.value(record), rec.type, profile)
        assert want is not None and want > 0
        ix = m.index_of(record, 1)
        assert ix.isValid(), rec.type
        assert ix.data() == f"{want:,.0f}", rec.type
