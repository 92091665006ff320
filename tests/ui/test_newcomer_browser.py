"""Issue 9 #11: the session browser's search shows something to open and opens the groups."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from session_studio.core.listing import SessionInfo
from session_studio.ui.browser import SessionBrowser
from session_studio.ui.roles import Roles


def _info(path: str, cwd: str, first: str, name: str | None = None) -> SessionInfo:
    return SessionInfo(path, path, cwd, name, first, "2025-01-01T00:00:00Z", 1.7e9, 100, 10, True)


@pytest.fixture
def browser(qtbot: Any) -> SessionBrowser:
    b = SessionBrowser()
    qtbot.addWidget(b)
    b.set_sessions(
        [
            _info("/s/a1.jsonl", "/home/u/alpha-service", "fix the login form"),
            _info("/s/a2.jsonl", "/home/u/alpha-service", "add metrics", name="Metrics work"),
            _info("/s/b1.jsonl", "/home/u/beta-app", "refactor the parser"),
            _info("/s/b2.jsonl", "/home/u/beta-app", "write docs"),
        ],
        "/s",
    )
    b.show()
    return b


def _shown(b: SessionBrowser) -> dict[str, list[str]]:
    """Project → the session paths the view shows under it, with whether the group is expanded."""
    out: dict[str, list[str]] = {}
    p = b.proxy
    for r in range(p.rowCount()):
        g = p.index(r, 0)
        kids = [p.index(k, 0, g).data(Roles.PATH) for k in range(p.rowCount(g))]
        out[g.data().split(" · ")[0]] = kids  # the project, without its count
        if kids:
            assert b.view.isExpanded(g), f"{g.data()} is collapsed"
    return out


def test_matching_project_shows_its_sessions(qtbot: Any, browser: SessionBrowser) -> None:
    qtbot.keyClicks(browser.search, "alpha")
    assert _shown(browser) == {"/home/u/alpha-service": ["/s/a1.jsonl", "/s/a2.jsonl"]}


def test_first_message_match_expands_its_group(qtbot: Any, browser: SessionBrowser) -> None:
    browser.view.collapseAll()
    qtbot.keyClicks(browser.search, "PARSER")
    assert _shown(browser) == {"/home/u/beta-app": ["/s/b1.jsonl"]}


def test_named_session_still_matches_its_first_message(qtbot: Any, browser: SessionBrowser) -> None:
    qtbot.keyClicks(browser.search, "add metrics")
    assert _shown(browser) == {"/home/u/alpha-service": ["/s/a2.jsonl"]}


def test_clearing_the_search_shows_everything(qtbot: Any, browser: SessionBrowser) -> None:
    qtbot.keyClicks(browser.search, "zzz-nothing")
    assert _shown(browser) == {}
    browser.search.clear()
    shown = _shown(browser)
    assert sum(len(v) for v in shown.values()) == 4


def test_a_shown_session_opens(qtbot: Any, browser: SessionBrowser) -> None:
    qtbot.keyClicks(browser.search, "alpha")
    p = browser.proxy
    row = p.index(0, 0, p.index(0, 0))
    with qtbot.waitSignal(browser.open_requested) as sig:
        browser.view.activated.emit(row)
    assert sig.args == ["/s/a1.jsonl"]


def test_recent_files_are_named_like_the_list(qtbot: Any) -> None:
    """A pi session file's name is a timestamp and a UUID: the recent list names a listed
    session by its title and project (whichever comes first, the list or the recent files),
    and keeps the file name for one it does not list."""
    b = SessionBrowser()
    qtbot.addWidget(b)
    b.set_recent(
        ["/s/2026-11-24T10-00-00-000Z_3088caca.jsonl", "/elsewhere/x.jsonl"], {"/elsewhere/x.jsonl": "gone"}
    )
    assert b.recent.item(0).text() == "2026-11-24T10-00-00-000Z_3088caca.jsonl"
    b.set_sessions(
        [
            _info(
                "/s/2026-11-24T10-00-00-000Z_3088caca.jsonl", "/home/u/alpha-service", "fix the login form"
            ),
            _info("/s/other.jsonl", "/home/u/beta-app", "x", name="Named"),
        ],
        "/s",
    )
    texts = [b.recent.item(i).text() for i in range(b.recent.count())]
    assert texts == ["alpha-service · fix the login form", "x.jsonl — cannot open"]
    b.set_recent(["/s/other.jsonl"])
    assert b.recent.item(0).text() == "beta-app · Named"
    assert b.recent.item(0).data(0x0100) == "/s/other.jsonl"  # Qt.UserRole: what opens


def _fork(path: str, parent: str | None, modified: float, first: str) -> SessionInfo:
    return SessionInfo(
        path, path, "/home/u/p", None, first, "t", modified, 100, 10, True, parent_session=parent
    )


def _rows(model: Any, parent: Any) -> list[tuple[str, list[Any]]]:
    item = model.itemFromIndex(parent) if parent.isValid() else model.invisibleRootItem()
    out = []
    for r in range(item.rowCount()):
        child = item.child(r, 0)
        out.append((child.text(), _rows(model, child.index())))
    return out


def test_forks_are_listed_under_the_session_they_came_from(qtbot: Any) -> None:
    """pi's session selector threads a fork under its parentSession, threads ordered by their
    latest activity; a fork of an unlisted file, and a (malformed) parent cycle, still show."""
    from session_studio.ui.browser import build_browser_model

    infos = [
        _fork("/s/old.jsonl", None, 1.0, "old"),
        _fork("/s/fork1.jsonl", "/s/old.jsonl", 5.0, "fork1"),
        _fork("/s/fork2.jsonl", "/s/fork1.jsonl", 2.0, "fork2"),
        _fork("/s/orphan.jsonl", "/gone/x.jsonl", 3.0, "orphan"),
        _fork("/s/a.jsonl", "/s/b.jsonl", 0.5, "a"),
        _fork("/s/b.jsonl", "/s/a.jsonl", 0.4, "b"),
        _fork("/s/self.jsonl", "/s/self.jsonl", 4.0, "self"),
    ]
    model = build_browser_model(infos)
    (project,) = _rows(model, model.index(-1, -1))
    assert project[0] == "/home/u/p"
    assert project[1] == [
        ("old", [("fork1", [("fork2", [])])]),  # thread activity 5.0: its fork's
        ("self", []),
        ("orphan", []),
        ("a", [("b", [])]),
    ]
    fork1 = model.item(0, 0).child(0, 0).child(0, 0)
    assert "Forked from: old" in fork1.toolTip()
    assert model.item(0, 0).data(Roles.GROUP_COUNT) == "7 sessions"


def test_the_heading_counts_what_a_search_shows(qtbot: Any, browser: SessionBrowser) -> None:
    """The heading said "4 sessions" while a search showed one; it says how many of them it shows."""
    assert browser.title.text() == "<b>4 sessions</b>"
    qtbot.keyClicks(browser.search, "parser")
    assert browser.title.text() == "<b>1 of 4 sessions</b>"
    browser.search.clear()
    qtbot.keyClicks(browser.search, "alpha")  # a project: both its sessions
    assert browser.title.text() == "<b>2 of 4 sessions</b>"
    browser.search.clear()
    assert browser.title.text() == "<b>4 sessions</b>"


def test_the_keyboard_goes_from_the_search_to_a_session(qtbot: Any, browser: SessionBrowser) -> None:
    """Typed a search, a keyboard user pressed Down and Return and nothing happened. Down now goes
    to the first session shown, Return in the search field opens it, Escape clears it."""
    from PySide6.QtCore import Qt

    opened: list[str] = []
    browser.open_requested.connect(opened.append)
    browser.search.setFocus()
    qtbot.keyClicks(browser.search, "beta")
    qtbot.keyClick(browser.search, Qt.Key.Key_Down)
    assert browser.view.hasFocus() or browser.view.currentIndex().isValid()
    assert browser.view.currentIndex().data(Roles.PATH) == "/s/b1.jsonl"
    qtbot.keyClick(browser.search, Qt.Key.Key_Return)
    assert opened == ["/s/b1.jsonl"]
    browser.search.clear()
    qtbot.keyClicks(browser.search, "zzz-nothing")
    qtbot.keyClick(browser.search, Qt.Key.Key_Return)  # nothing shown: nothing opens
    assert opened == ["/s/b1.jsonl"]
    qtbot.keyClick(browser.search, Qt.Key.Key_Escape)  # clears the search
    assert browser.search.text() == "" and browser.title.text() == "<b>4 sessions</b>"


def test_a_matching_project_keeps_the_forks_under_its_sessions(qtbot: Any) -> None:
    """A fork is listed under the session it came from; a search matching only the project kept
    the session and dropped its fork (only the row's parent was looked at, not the project)."""
    b = SessionBrowser()
    qtbot.addWidget(b)
    fork = dataclasses.replace(
        _info("/s/f1.jsonl", "/home/u/gamma", "continue the work"), parent_session="/s/g1.jsonl"
    )
    b.set_sessions([_info("/s/g1.jsonl", "/home/u/gamma", "start the work"), fork], "/s")
    qtbot.keyClicks(b.search, "gamma")
    assert [ix.data(Roles.PATH) for ix in b._shown_session_rows()] == ["/s/g1.jsonl", "/s/f1.jsonl"]
    assert b.title.text() == "<b>2 of 2 sessions</b>"


@pytest.mark.parametrize("threaded", [False, True], ids=["inline", "worker"])
def test_in_content_finds_the_session_that_holds_a_text_anywhere(
    qtbot: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, threaded: bool
) -> None:
    """Which session was that in? In content (the window's one setting) also lists the sessions
    whose content holds the search (a word deep in a tool's output), read in a worker a moment
    after the last key; its heading says it is reading; off again, names and projects only."""
    from PySide6.QtGui import QAction

    from session_studio.ui import browser as browser_module
    from session_studio.ui.tasks import TaskRunner

    from .conftest import write_session

    monkeypatch.setattr(browser_module, "CONTENT_SEARCH_DELAY_MS", 0)
    deep = {
        "type": "message",
        "message": {"role": "user", "content": "x " * 300 + "the Flux capacitor", "timestamp": 1},
    }
    files = {
        "a1": write_session(tmp_path / "a1.jsonl", [("user", 50), deep]),
        "a2": write_session(tmp_path / "a2.jsonl", [("user", 50)]),
        "b1": write_session(tmp_path / "b1.jsonl", [("user", 50), ("assistant", 20)]),
    }
    b = SessionBrowser()
    qtbot.addWidget(b)
    runner = TaskRunner()
    runner.synchronous = not threaded
    b.runner = runner
    action = QAction("Search the whole content", b)
    action.setCheckable(True)
    action.setIconText("In content")
    b.use_content_action(action)
    b.set_sessions([_info(str(f), "/home/u/p", f"first of {k}") for k, f in files.items()], str(tmp_path))
    b.show()
    assert b.content_button.text() == "In content"
    b.search.setText("flux")
    assert not any(_shown(b).values())  # no name, first message or project holds it
    assert "content" not in b.search.placeholderText()
    action.setChecked(True)  # searches again, in the content too
    assert "content" in b.search.placeholderText()
    qtbot.waitUntil(lambda: any(_shown(b).values()), timeout=10000)
    assert _shown(b) == {"/home/u/p": [str(files["a1"])]}
    assert b.title.text().startswith("<b>1 of 3 sessions</b>") and "reading" not in b.title.text()
    # typing on reads only the session that held "flux": the others cannot hold "flux cap"
    from session_studio.core import content_search

    reads: list[str] = []
    real_read = content_search._reader_holds_text

    def counting(fh: Any, needle: str, cancelled: Any) -> bool:
        reads.append(needle)
        return real_read(fh, needle, cancelled)

    monkeypatch.setattr(content_search, "_reader_holds_text", counting)
    b.search.setText("flux cap")
    qtbot.waitUntil(lambda: any(_shown(b).values()) and not b.content_read[1], timeout=10000)
    assert _shown(b) == {"/home/u/p": [str(files["a1"])]}
    assert len(reads) == 1
    b.search.setText("first of b1")  # a name match needs no reading; both kinds are listed
    qtbot.waitUntil(lambda: not b.content_read[1], timeout=10000)
    assert _shown(b) == {"/home/u/p": [str(files["b1"])]}
    action.setChecked(False)
    b.search.setText("flux")
    assert not any(_shown(b).values()) and b.content_read == (0, 0)
    if threaded:
        qtbot.waitUntil(lambda: not runner.busy, timeout=10000)


def test_a_project_counts_the_sessions_the_search_leaves(qtbot: Any, browser: SessionBrowser) -> None:
    p = browser.proxy
    rows = [p.index(r, 0).data() for r in range(p.rowCount())]
    assert rows == ["/home/u/alpha-service · 2 sessions", "/home/u/beta-app · 2 sessions"]
    qtbot.keyClicks(browser.search, "PARSER")
    assert p.index(0, 0).data() == "/home/u/beta-app · 1 of 2 sessions"
    browser.search.clear()
    assert p.index(0, 0).data() == "/home/u/alpha-service · 2 sessions"
    tip = browser.proxy.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "last user or assistant message" in tip and "not the file's modification time" in tip


def test_recent_files_of_one_name_say_where_they_are(browser: SessionBrowser) -> None:
    import os

    home = os.path.expanduser("~")
    browser.set_recent([f"{home}/work/a/s.jsonl", "/tmp/b/s.jsonl", "/tmp/c/other.jsonl", "/s/a1.jsonl"])
    labels = [browser.recent.item(i).text() for i in range(browser.recent.count())]
    assert labels == [
        "s.jsonl · a",  # their folders' names (the pane is narrow: a path was cut off)
        "s.jsonl · b",
        "other.jsonl",
        "alpha-service · fix the login form",
    ]
    assert browser.recent.item(0).toolTip().find(f"{home}/work/a/s.jsonl") >= 0


def test_recent_sessions_of_one_title_in_one_folder_differ(qtbot: Any) -> None:
    """Two sessions of one project and title were both "webapp · fix tests · <the same folder>"."""
    b = SessionBrowser()
    qtbot.addWidget(b)
    b.set_sessions(
        [
            _info("/s/p/2026-01-02T10-00_aa.jsonl", "/home/u/webapp", "fix tests"),
            _info("/s/p/2026-01-01T09-00_bb.jsonl", "/home/u/webapp", "fix tests"),
        ],
        "/s",
    )
    b.set_recent(["/s/p/2026-01-02T10-00_aa.jsonl", "/s/p/2026-01-01T09-00_bb.jsonl"])
    assert [b.recent.item(i).text() for i in range(2)] == [
        "webapp · fix tests · 2026-01-02T10-00_aa.jsonl",
        "webapp · fix tests · 2026-01-01T09-00_bb.jsonl",
    ]
    assert b.recent.textElideMode() == Qt.TextElideMode.ElideMiddle  # what tells them apart stays


def test_the_headers_are_labels_not_buttons(browser: SessionBrowser) -> None:
    """They looked clickable and sorted nothing: the list keeps pi's order, newest first."""
    assert not browser.view.header().sectionsClickable()


def _broken(path: str, modified: float, why: str = "has no valid session header") -> SessionInfo:
    return SessionInfo(path, "", "", None, path.rsplit("/", 1)[-1], "", modified, 0, 0, False, why)


def test_files_that_are_no_session_stay_out_of_the_way(qtbot: Any) -> None:
    """A broken .jsonl (newest by its mtime) made "(no project)" the first group and counted as a
    session. It is listed after the sessions of its folder's project; one in a folder without a
    session goes to a last group; neither counts as a session, nor is the first one Down opens."""
    b = SessionBrowser()
    qtbot.addWidget(b)
    b.set_sessions(
        [  # newest first, as list_sessions gives them
            _broken("/s/--alpha--/broken.jsonl", 9e9),
            _broken("/s/--junk--/notes.jsonl", 8e9, "is empty"),
            dataclasses.replace(_info("/s/--beta--/b1.jsonl", "/home/u/beta", "beta work"), modified=2e9),
            dataclasses.replace(_info("/s/--alpha--/a1.jsonl", "/home/u/alpha", "alpha work"), modified=1e9),
        ],
        "/s",
    )
    assert _shown(b) == {
        "/home/u/beta": ["/s/--beta--/b1.jsonl"],
        "/home/u/alpha": ["/s/--alpha--/a1.jsonl", "/s/--alpha--/broken.jsonl"],
        "Files that are not sessions": ["/s/--junk--/notes.jsonl"],
    }
    groups = [b.proxy.index(r, 0).data() for r in range(b.proxy.rowCount())]
    assert groups == [
        "/home/u/beta · 1 session",
        "/home/u/alpha · 1 session · 1 not a session",
        "Files that are not sessions · 1 file",
    ]
    assert all(b.view.isFirstColumnSpanned(r, QModelIndex()) for r in range(3))
    assert b.title.text() == "<b>2 sessions · 2 other files</b>"
    b.search.setFocus()
    qtbot.keyClicks(b.search, "alpha")  # the project: its session and its broken file
    assert b.title.text() == "<b>1 of 2 sessions</b>"
    assert b.proxy.index(0, 0).data() == "/home/u/alpha · 1 of 1 session"
    assert b.view.isFirstColumnSpanned(0, QModelIndex())  # the filter's rows spanned again
    b.search.clear()
    qtbot.keyClicks(b.search, "broken")  # only the broken file matches: nothing to open
    qtbot.keyClick(b.search, Qt.Key.Key_Down)
    assert not b.view.currentIndex().isValid()
    assert b.title.text() == "<b>0 of 2 sessions</b>"


def test_a_row_is_as_high_as_a_title_in_a_fallback_font_needs(qtbot: Any) -> None:
    """A title starting with CJK is laid out in a taller line (a fallback font's): in rows as high
    as a Latin line its descenders were cut off ("arqument")."""
    from PySide6.QtGui import QTextLayout

    b = SessionBrowser()
    qtbot.addWidget(b)
    title = "字 context argument interface split 😀"
    b.set_sessions(
        [_info("/s/a.jsonl", "/home/u/p", "plain latin"), _info("/s/b.jsonl", "/home/u/p", title)], "/s"
    )
    b.show()
    layout = QTextLayout(title, b.view.font())
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(1e6)
    layout.endLayout()
    project = b.proxy.index(0, 0)
    cjk_row = b.proxy.index(1, 0, project)
    assert "字" in cjk_row.data()
    assert b.view.visualRect(cjk_row).height() >= line.height()


def test_a_legacy_or_damaged_session_says_so_in_the_list(qtbot: Any) -> None:
    b = SessionBrowser()
    qtbot.addWidget(b)
    old = dataclasses.replace(
        _info("/s/old.jsonl", "/home/u/p", "old work"), legacy_version=1, damaged_seen=3
    )
    b.set_sessions([old, _info("/s/new.jsonl", "/home/u/p", "new work")], "/s")
    project = b.model.item(0, 0)
    titles = {project.child(r, 0).text(): project.child(r, 0).toolTip() for r in range(project.rowCount())}
    assert set(titles) == {"⚠ v1 · old work", "new work"}
    tip = titles["⚠ v1 · old work"]
    assert "3 damaged lines" in tip and "pi skips them" in tip and "Version 1 file" in tip
    assert "damaged" not in titles["new work"]
    qtbot.keyClicks(b.search, "old work")  # the marks are not part of what the search matches
    assert _shown(b) == {"/home/u/p": ["/s/old.jsonl"]}
