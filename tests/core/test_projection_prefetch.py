"""A projection's messages for many entries come from one pass over the file (Session.values), the
same messages entry_messages makes one entry at a time."""

from __future__ import annotations

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
