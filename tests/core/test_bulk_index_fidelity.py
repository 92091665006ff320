"""The big-file index (values not kept: the bulk loader, re-reads on demand) plans exactly as the
small-file one (every value kept, each entry through the general path), which the oracle tests
compare with pi. Generated sessions of every kind the oracle stage uses, without node."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session
from session_studio.core import session as session_module
from session_studio.core.oracle_schema import plan_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from tests.conftest import generate

KINDS = [
    ("plain", ["--seed", "7401", "--count", "4"]),
    ("legacy", ["--seed", "7402", "--count", "3", "--legacy"]),
    ("damaged", ["--seed", "7403", "--count", "6", "--damaged"]),
]


def _open(f: Path, keep: bool, monkeypatch: pytest.MonkeyPatch) -> Session:
    # v1 migration draws fresh random ids, as pi does: the same sequence for both opens
    ids = (f"{n:08x}" for n in itertools.count(0xA0000000))
    monkeypatch.setattr(session_module, "new_entry_id", lambda _exists: next(ids))
    return Session.open(f, keep_values=keep, use_cache=False)


def _plan(session: Session, profile: PiProfile) -> dict[str, Any]:
    out, _code = plan_output(session, profile=profile)
    if out.get("sessionReset"):
        out.pop("header")  # a file without a header gets a fresh one (a new id and the time now)
    return out


@pytest.mark.parametrize(("kind", "args"), KINDS, ids=[k[0] for k in KINDS])
def test_the_big_file_index_plans_as_the_kept_values_do(
    tmp_path: Path, kind: str, args: list[str], monkeypatch: pytest.MonkeyPatch, bulk_loader: str
) -> None:
    files = generate(tmp_path / kind, *args)
    assert files
    for f in files:
        kept = _open(f, True, monkeypatch)
        bulk = _open(f, False, monkeypatch)
        assert kept.records.values is not None and bulk.records.values is None
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):
            assert _plan(bulk, profile) == _plan(kept, profile), (f.name, profile.version)


@pytest.mark.parametrize("method", ["fork", "fresh"])
def test_the_parallel_scan_of_damaged_files_equals_the_sequential_one(
    tmp_path: Path, bulk_loader: str, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Damaged lines (blank, CRLF, broken JSON, falsy values, a torn tail) in either half: the
    second process's line numbers are shifted by the newlines the first one read."""
    files = generate(tmp_path / "damaged", "--seed", "7404", "--count", "8", "--damaged")
    chosen: list[str | None] = []

    def start_method(size: int, parallel: bool | None, keep: bool) -> str | None:
        # "fresh" (a new interpreter) is what a process with other threads running (the window) gets
        chosen.append(method if parallel else None)
        return chosen[-1]

    monkeypatch.setattr(session_module, "_scan_start_method", start_method)
    for f in files:
        seq = Session.open(f, keep_values=False, parallel=False, use_cache=False)
        par = Session.open(f, keep_values=False, parallel=True, use_cache=False)
        assert [repr(r.facts()) for r in par.records] == [repr(r.facts()) for r in seq.records], f.name
        assert [(i.line, i.offset, i.kind) for i in par.issues] == [
            (i.line, i.offset, i.kind) for i in seq.issues
        ], f.name
        assert par.leaf_id == seq.leaf_id and par.labels == seq.labels
    assert chosen.count(method) == len(files)


def test_a_cancelled_load_stops_the_fresh_scan_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from session_studio.core.errors import LoadCancelled

    files = generate(tmp_path / "plain", "--seed", "7405", "--count", "1", "--size", "medium")
    monkeypatch.setattr(session_module, "_scan_start_method", lambda *_a: "fresh")
    children: list[Any] = []
    real = session_module._start_scan

    def start_scan(*a: Any) -> tuple[Any, Any]:
        children.append(real(*a))
        return children[-1]

    monkeypatch.setattr(session_module, "_start_scan", start_scan)
    with pytest.raises(LoadCancelled):
        Session.open(files[0], keep_values=False, parallel=True, use_cache=False, cancel=lambda: True)
    ((conn, proc),) = children
    assert proc._popen.poll() is not None  # terminated and reaped, not left running
    assert conn.closed
