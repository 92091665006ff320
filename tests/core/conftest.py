"""Fixtures of the core tests."""

from __future__ import annotations

import pytest

from session_studio.core import session as session_module


@pytest.fixture(params=["compiled", "python"])
def bulk_loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a loader test with the compiled helper (core/_bulkindex.c) and with the Python loop.

    Without the helper (no compiler at install) the compiled run skips; CI fails on that in
    test_bulk_helper.py instead.
    """
    if request.param == "compiled":
        if session_module.BULK_HELPER is None:
            pytest.skip("the compiled loader helper is not built")
    else:
        monkeypatch.setattr(session_module, "BULK_HELPER", None)
    return str(request.param)
