"""The window's live reload never indexes a replaced file as an append, and a write that
landed after pi's lines is reported as written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from session_studio.ui import actions
from session_studio.ui.document import SessionDocument
from tests.core.util import HEADER, A, U, chain, to_bytes


def _doc(qtbot: Any, runner: Any, path: Path) -> SessionDocument:
    d = SessionDocument(runner)
    d.open(str(path))
    qtbot.waitUntil(lambda: d.state is not None)
    return d


def test_a_file_replaced_by_a_longer_one_is_reloaded_not_appended(
    qtbot: Any, runner: Any, tmp_path: Path
) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    d = _doc(qtbot, runner, p)
    other = tmp_path / "other"
    other.write_bytes(to_bytes(chain(U(20), A(20), U(20), A(5), header={**HEADER, "id": "other-session"})))
    os.replace(other, p)
    messages: list[str] = []
    d.message.connect(messages.append)
    d.disk_changed.connect(messages.append)
    with qtbot.waitSignal(d.loaded, timeout=5000):
        d.refresh()
    assert d.session is not None and d.session.header["id"] == "other-session"
    assert [r.id for r in d.session.records] == ["e0", "e1", "e2", "e3"]
    assert any("not the one shown" in m for m in messages)
    assert any("read again from scratch" in m and "replaced" in m for m in messages)
    assert not any("appended by pi" in m for m in messages)


def test_a_label_that_landed_after_pi_is_reported_as_written(
    qtbot: Any, runner: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from session_studio.core import writer

    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    d = _doc(qtbot, runner, p)
    real = writer._os_write

    def pi_first(fd: int, data: Any) -> int:
        with open(p, "ab") as fh:
            fh.write(b'{"type":"custom","customType":"pi","id":"pi1","parentId":"e1","timestamp":"t"}\n')
        return real(fd, data)

    assert d.session is not None
    with monkeypatch.context() as m:
        m.setattr(writer, "_os_write", pi_first)
        entry = actions.label_job(d.session, "e0", "L")
    messages: list[str] = []
    d.message.connect(messages.append)
    d.after_write(entry["id"])
    assert d.session.get_index(entry["id"]) is not None and d.session.get_index("pi1") is not None
    assert any("written after them" in m for m in messages)


def test_the_banner_offers_to_cut_off_a_line_of_ours_torn_by_a_crash(
    qtbot: Any, window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from PySide6.QtCore import Qt

    from session_studio.core import Session, writer
    from session_studio.engine import append_session_name

    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10))))
    before = p.read_bytes()

    def killed(fd: int, data: Any) -> int:
        os.write(fd, bytes(data)[: len(data) // 2])
        raise KeyboardInterrupt  # stands for kill -9 in the middle of the write: no clean-up runs

    with monkeypatch.context() as m:
        m.setattr(writer, "_os_write", killed)
        with pytest.raises(KeyboardInterrupt):
            append_session_name(Session.open(p), "n" * 200_000)
    assert len(p.read_bytes()) > len(before)
    window.open_path(str(p))
    qtbot.waitUntil(lambda: window.doc.session is not None and window.banner.repair.isVisible())
    # an entry appended now would make the torn bytes a damaged line that repair can no longer cut
    assert not window.a_label.isEnabled() and "cut it off first" in window.a_label.toolTip()
    assert not window.a_rename.isEnabled()
    qtbot.mouseClick(window.banner.repair, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: p.read_bytes() == before)
    qtbot.waitUntil(lambda: window.doc.session is not None and window.doc.session.torn_tail is None)
    assert not window.banner.repair.isVisible()
    assert "cut it off first" not in window.a_label.toolTip()


@pytest.mark.parametrize("what", ["label", "rename"])
def test_the_window_refuses_to_write_to_a_file_replaced_since_it_was_opened(
    qtbot: Any, window: Any, tmp_path: Path, monkeypatch: Any, what: str
) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    from session_studio.ui.main_window import MainWindow

    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10), U(10))))
    window.open_path(str(p))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    window.doc._watcher.removePaths(window.doc._watcher.files())  # the user acts before any reload
    data = p.read_bytes()
    at = data.rfind(b"x" * 10)
    other = tmp_path / "other"  # same size, other tail, renamed over the session
    other.write_bytes(data[:at] + b"y" * 10 + data[at + 10 :])
    os.replace(other, p)
    replaced = p.read_bytes()
    window.doc.select(1)
    monkeypatch.setattr(MainWindow, "ask_text", lambda self, *a: "X")
    (window.a_label if what == "label" else window.a_rename).trigger()
    qtbot.waitUntil(lambda: not window.doc.writing)
    assert p.read_bytes() == replaced  # nothing written into the other session
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert "changed since you opened it" in box.informativeText() + box.text()
    box.close()


def test_a_rewritten_file_is_said_in_a_banner_until_closed(qtbot: Any, window: Any, tmp_path: Path) -> None:
    """The reload from scratch was only a passing status message: what the user saw may be gone."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10), A(10), U(10))))
    window.open_path(str(p))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    assert not window.disk_banner.isVisible()
    p.write_bytes(to_bytes(chain(U(10))))  # shortened in place (an editor saving over it)
    with qtbot.waitSignal(window.doc.loaded, timeout=5000):
        window.doc.refresh()
    assert window.disk_banner.isVisible() and "read again from scratch" in window.disk_banner.label.text()
    assert window.doc.session is not None and len(window.doc.session.records) == 1
    qtbot.mouseClick(window.disk_banner.close_button, Qt.MouseButton.LeftButton)
    assert not window.disk_banner.isVisible()


def test_a_deleted_file_keeps_its_tree_takes_no_write_and_is_read_again_when_back(
    qtbot: Any, window: Any, tmp_path: Path
) -> None:
    p = tmp_path / "s.jsonl"
    data = to_bytes(chain(U(10), A(10), U(10)))
    p.write_bytes(data)
    window.open_path(str(p))
    qtbot.waitUntil(lambda: window.doc.state is not None)
    window.doc._missing_timer.setInterval(20)
    shown = window.doc.session
    p.unlink()
    window.doc.refresh()
    assert window.doc.missing and window.doc.session is shown  # the tree stays
    assert window.disk_banner.isVisible() and "deleted or moved away" in window.disk_banner.label.text()
    assert not window.a_label.isEnabled() and "no longer on disk" in window.a_label.toolTip()
    assert not window.a_rename.isEnabled()
    assert "Opening" not in window.status_path.text()
    p.write_bytes(data + to_bytes(chain(U(5)))[len(to_bytes(chain())) :])
    qtbot.waitUntil(lambda: not window.doc.missing and window.doc.session is not shown, timeout=5000)
    qtbot.waitUntil(lambda: window.doc.state is not None)
    assert not window.disk_banner.isVisible()
    assert window.a_rename.isEnabled()
