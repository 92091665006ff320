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
    banner.set_issues([LoadIssue(7, 200, "usage", "usage.input is NaN", False)], reset=False)
    assert banner.label.text() == (  # not "· 0 damaged lines that pi skips"
        "<b>1 issue in this file</b>; pi skips no line of it. The session is shown as pi sees it."
    )


def test_the_loading_banner_says_planning_once_the_file_is_read(qtbot: Any) -> None:
    """Not "Loading… 100 %" for the seconds the whole tree and the plan still take."""
    from types import SimpleNamespace

    from session_studio.ui.banners import LoadingBanner

    banner = LoadingBanner()
    qtbot.addWidget(banner)
    head = SimpleNamespace(head_bytes=8e6, session=SimpleNamespace(records=[0] * 500), fraction=0.1)
    banner.start(head)  # type: ignore[arg-type]
    assert "Loading… 10 %" in banner.label.text()
    banner.set_value(990)
    assert "Loading… 99 %" in banner.label.text()
    banner.set_value(1000)
    assert "100 %" not in banner.label.text() and "Planning…" in banner.label.text()
    assert banner.bar.maximum() == 0  # busy
    banner.set_value(400)  # a late report of the read changes nothing
    assert "Planning…" in banner.label.text()
    banner.start(head)  # type: ignore[arg-type]  # the next file
    assert "Loading… 10 %" in banner.label.text() and banner.bar.maximum() == 1000
