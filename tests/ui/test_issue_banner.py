"""The damaged-lines banner counts lines, not issues: a torn last line is one line with two issues."""

from __future__ import annotations

from typing import Any

from session_studio.core.reader import LoadIssue
from session_studio.ui.banners import IssueBanner


def test_a_line_with_two_issues_is_one_damaged_line(qtbot: Any) -> None:
    banner = IssueBanner()
    qtbot.addWidget(banner)
    issues = [
        LoadIssue(31, 900, "json", 'not valid JSON: \'{"type":"message"…\'', True),
        LoadIssue(31, 900, "no_newline", "last line has no newline at the end", True),
        LoadIssue(7, 200, "usage", "usage.input is NaN", False),
    ]
    banner.set_issues(issues, reset=False)
    assert "3 issues in this file</b> · 1 damaged line that pi skips" in banner.label.text()
    banner.details.click()
    assert banner.dialog is not None
    from PySide6.QtWidgets import QLabel

    heads = [w.text() for w in banner.dialog.findChildren(QLabel)]
    assert "3 issues on 2 lines: what pi drops, and what looks suspicious:" in heads
    banner.dialog.close()
