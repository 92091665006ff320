"""The summary's size in the window's projected context is core's estimate (pi's chars/4 counts
UTF-16 code units: an emoji is two), the same number the plan and the engine use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_studio.core.summary_sections import summary_tokens
from session_studio.ui.document import SessionDocument, compute_plan_state


def test_an_emoji_summary_counts_utf16_units(qtbot: Any, runner: Any, split_turn_session: Path) -> None:
    d = SessionDocument(runner)
    d.open(str(split_turn_session))
    qtbot.waitUntil(lambda: d.state is not None)
    text = "## Goal\n" + "🚀🎉🦀 ok\n" * 200  # astral emoji: 2 UTF-16 units each, 1 Python char
    expected = float(summary_tokens(text))
    assert expected > len(text) / 4 + 100  # the two counts differ by far more than rounding
    d.set_summary(text)
    assert d.state is not None and d.state.after_tokens[0] == (-1, "compactionSummary", expected)
    res = d.loaded_state
    assert res is not None
    st = compute_plan_state(res, d.keep, d.reserve, d.window, d.window_known, d.manual_cut, text)
    assert st.after_tokens[0][2] == expected
