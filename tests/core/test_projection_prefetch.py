"""A projection's messages for many entries come from one pass over the file (Session.values), the
same messages entry_messages makes one entry at a time."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core.projection import build_session_projection
from tests.conftest import generate

CASES_16 = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases"


@pytest.mark.parametrize("kind", ["cases", "plain"])
def test_prefetched_messages_are_entry_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    files = (
        sorted(CASES_16.glob("*.jsonl"))
        if kind == "cases"
        else generate(tmp_path, "--seed", "7510", "--count", "4")
    )
    opened: list[int] = []
    real = Session._reopen

    def counting(self: Session) -> Any:
        opened.append(1)
        return real(self)

    checked = 0
    for f in files:
        s = Session.open(f, keep_values=False, use_cache=False)
        if s.leaf_index() is None:
            continue
        try:
            one_by_one = build_session_projection(s)
            expected = [one_by_one.entry_messages(k) for k in range(len(one_by_one.entries))]
        except Exception:  # pi throws building this one (a damaged entry): nothing to compare
            continue
        p = build_session_projection(s)
        monkeypatch.setattr(Session, "_reopen", counting)
        opened.clear()
        p.prefetch(range(len(p.entries)))
        monkeypatch.setattr(Session, "_reopen", real)
        assert len(opened) <= 1  # one pass over the file for all of them
        got = [p.entry_messages(k) for k in range(len(p.entries))]
        assert repr(got) == repr(expected)
        checked += 1
    assert checked


def test_two_threads_prefetching_one_projection_read_the_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's preparation and real-token count ask for the same path's messages at once."""
    (f,) = generate(tmp_path, "--seed", "7512", "--count", "1", "--size", "medium")
    s = Session.open(f, keep_values=False, use_cache=False)
    p = build_session_projection(s)
    passes: list[int] = []
    real = Session.values

    def slow_values(self: Session, indices: Any) -> list[Any]:
        passes.append(1)
        time.sleep(0.2)  # long enough for the other thread to ask meanwhile
        return real(self, indices)

    monkeypatch.setattr(Session, "values", slow_values)
    threads = [threading.Thread(target=p.prefetch, args=(range(len(p.entries)),)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passes) == 1
    assert all(k in p._messages for k, e in enumerate(p.entries) if e.roles)
