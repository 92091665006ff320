"""The window reopens a big session from the index cache, and shows what a cold load shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from session_studio.core import index_cache
from session_studio.core import session as session_module
from session_studio.core.session import Session
from tests.conftest import generate


def _open(window: Any, qtbot: Any, path: Path) -> tuple[Any, ...]:
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.doc.state is not None and not window.runner.busy, timeout=60_000)
    st = window.doc.state
    return (len(window.doc.session.records), st.first_kept_record, st.tokens, window.tree_model.rowCount())


def test_a_reopen_reads_the_index_cache_and_shows_the_same(
    window: Any, qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a medium session counts as "big" here: not kept in memory, cached from the first byte
    monkeypatch.setattr(session_module, "KEEP_VALUES_MAX_BYTES", 0)
    monkeypatch.setattr(index_cache, "MIN_CACHED_BYTES", 0)
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    path = generate(tmp_path, "--seed", "8", "--count", "1", "--size", "medium")[0]
    hits: list[bool] = []
    real = Session._from_cache.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Session], *args: Any) -> Session | None:
        got = real(cls, *args)
        hits.append(got is not None)
        return got

    monkeypatch.setattr(Session, "_from_cache", classmethod(spy))
    cold = _open(window, qtbot, path)
    assert hits == [False]  # nothing cached yet: indexed, and the index stored
    window.doc.close()
    qtbot.waitUntil(lambda: window.doc.session is None)
    warm = _open(window, qtbot, path)
    assert hits == [False, True]
    assert warm == cold
