"""The index cache: reused for unchanged bytes, extended for appends, dropped for rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from session_studio.core import Session
from tests.core.util import A, T, U, chain, to_bytes


@pytest.fixture(autouse=True)
def cache_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SESSION_STUDIO_NO_INDEX_CACHE", raising=False)
    return tmp_path / "cache"


def facts(s: Session) -> list[str]:
    return [repr(r.facts()) for r in s.records]


def open_(p: Path) -> Session:
    return Session.open(p, keep_values=False, use_cache=True)


def test_cache_roundtrip_append_and_rewrite(tmp_path: Path, cache_here: Path) -> None:
    values = chain(
        U(100), A(200), T(50), {"type": "label", "targetId": "e0", "label": "L"}, U("😀" * 10), A(30)
    )
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(values[:5]))
    cold = open_(p)
    assert list((cache_here / "index").glob("*.idx"))
    warm = open_(p)
    assert facts(warm) == facts(cold) and warm.labels == cold.labels and warm.leaf_id == cold.leaf_id
    with open(p, "ab") as fh:  # pi appends
        fh.write(to_bytes(values[5:]))
    grown = open_(p)
    fresh = Session.open(p, keep_values=False, use_cache=False)
    assert facts(grown) == facts(fresh) and grown.leaf_id == fresh.leaf_id == "e5"
    p.write_bytes(to_bytes(chain(U("rewritten"), A(5))))  # pi migrated or someone rewrote it
    again = open_(p)
    assert facts(again) == facts(Session.open(p, keep_values=False, use_cache=False))


def test_cache_can_be_disabled(tmp_path: Path, cache_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SESSION_STUDIO_NO_INDEX_CACHE", "1")
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(10))))
    open_(p)
    assert not cache_here.exists()
