"""The big-file index (values not kept: the bulk loader, re-reads on demand) plans exactly as the
small-file one (every value kept, each entry through the general path), which the oracle tests
compare with pi. Generated sessions of every kind the oracle stage uses, without node."""

from __future__ import annotations

import functools
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

    def start_method(size: int, parallel: bool | None, keep: bool, _others: bool = False) -> str | None:
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
    assert len(children) == 2  # both halves in new interpreters (see the next test)
    for conn, proc in children:
        assert proc._popen.poll() is not None  # terminated and reaped, not left running
        assert conn.closed


def test_a_process_with_other_threads_leaves_both_halves_to_scan_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 11: the window indexed the first half in its loading thread, which took the GIL in
    turns with the GUI thread (every paint of the file's head waited for it). With other threads
    running ("fresh"), this process reads only line 1 (the header): the rest goes to two new
    interpreters, and the result is the sequential index, progress reported on the way."""
    files = generate(tmp_path / "plain", "--seed", "7406", "--count", "1", "--size", "medium")
    monkeypatch.setattr(
        session_module, "_scan_start_method", lambda _s, parallel, _k, _o=False: "fresh" if parallel else None
    )
    ranges: list[tuple[int, int | None]] = []
    real = session_module._start_scan

    def start_scan(method: str, path: str, start: int, end: int | None) -> tuple[Any, Any]:
        ranges.append((start, end))
        return real(method, path, start, end)

    monkeypatch.setattr(session_module, "_start_scan", start_scan)
    reported: list[int] = []
    f = files[0]
    par = Session.open(
        f, keep_values=False, parallel=True, use_cache=False, progress=lambda d, _t: reported.append(d)
    )
    seq = Session.open(f, keep_values=False, parallel=False, use_cache=False)
    header_end = len(f.read_bytes().split(b"\n", 1)[0]) + 1
    ((a_start, a_end), (b_start, b_end)) = ranges
    assert a_start == header_end and a_end == b_start and b_end is None
    assert [repr(r.facts()) for r in par.records] == [repr(r.facts()) for r in seq.records]
    assert par.leaf_id == seq.leaf_id and par.labels == seq.labels and par.size == seq.size
    assert reported == sorted(reported) and reported[-1] == f.stat().st_size


def test_the_window_asks_for_scan_processes_from_the_parallel_size() -> None:
    """Qt's threads are invisible to threading.active_count(): the window says so itself, and gets
    new interpreters (no fork of a process with foreign threads, no half indexed on its GIL)."""
    big = session_module.PARALLEL_MIN_BYTES
    assert session_module._scan_start_method(big, None, False, True) == "fresh"
    assert session_module._scan_start_method(big - 1, None, False, True) is None
    assert session_module._scan_start_method(big, None, True, True) is None  # values kept: one process
    assert session_module._scan_start_method(big, False, False, True) is None
    assert session_module._scan_start_method(big, None, False) == "fork"  # the CLI: alone


@pytest.mark.parametrize("first_line", ["legacy", "headerless", "blank"])
def test_scan_processes_leave_files_without_a_current_header_on_line_1_to_the_usual_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_line: str
) -> None:
    """A v1/v2 file needs the sequential migration pass, a headerless one pi's start-over, a blank
    first line moves the header: all open as they do sequentially."""
    import json

    monkeypatch.setattr(
        session_module, "_scan_start_method", lambda _s, parallel, _k, _o=False: "fresh" if parallel else None
    )
    header: dict[str, Any] = {
        "type": "session",
        "id": "h",
        "timestamp": "2025-01-01T10:00:00.000Z",
        "cwd": "/w",
    }
    if first_line != "legacy":
        header["version"] = 3
    lines = [] if first_line == "headerless" else [json.dumps(header)]
    for k in range(300):
        msg = {"role": "user", "content": f"m{k}", "timestamp": k}
        entry = {"type": "message", "timestamp": "2025-01-01T10:00:00.000Z", "message": msg}
        if first_line != "legacy":
            entry.update(id=f"{k:08x}", parentId=None if k == 0 else f"{k - 1:08x}")
        lines.append(json.dumps(entry))
    f = tmp_path / "s.jsonl"
    f.write_text(("\n" if first_line == "blank" else "") + "\n".join(lines) + "\n", encoding="utf-8")
    par = Session.open(f, keep_values=False, parallel=True, use_cache=False)
    seq = Session.open(f, keep_values=False, parallel=False, use_cache=False)
    assert par.migrated == seq.migrated == (first_line == "legacy")
    assert par.reset == seq.reset == (first_line == "headerless")
    assert [(r.line, r.offset, r.type, r.tokens) for r in par.records] == [
        (r.line, r.offset, r.type, r.tokens) for r in seq.records
    ]
    assert [(i.line, i.kind) for i in par.issues] == [(i.line, i.kind) for i in seq.issues]
    if first_line != "legacy":  # migration gives every entry a new random id
        assert [repr(r.facts()) for r in par.records] == [repr(r.facts()) for r in seq.records]
        assert par.leaf_id == seq.leaf_id


def test_a_scan_process_imports_only_what_indexing_needs() -> None:
    """The window starts two scan interpreters for each big file it opens: importing the package
    must not import the whole model (context building, preparation: ~50 ms of each start)."""
    import ast
    import subprocess
    import sys

    code = (
        "import sys, session_studio.core.scan_worker; "
        "print(sorted(m for m in sys.modules if m.startswith('session_studio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(ast.literal_eval(out))
    assert "session_studio.core.session" in loaded
    assert not loaded & {"session_studio.core.context", "session_studio.core.preparation"}


def _count_into(seen: list[int], started: list[int]) -> None:
    seen.append(len(started))


@pytest.mark.parametrize("method", [None, "fork", "fresh"])
def test_before_indexing_is_called_once_when_the_scan_processes_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str | None
) -> None:
    """The window reads and shows a big file's head in before_indexing: called once, from the
    loading thread, after the scan processes were started (their start and the head's read overlap)
    or before indexing here; a legacy file (the scan is given up for the sequential migration) too."""
    plain = generate(tmp_path / "plain", "--seed", "7407", "--count", "1")
    legacy = generate(tmp_path / "legacy", "--seed", "7408", "--count", "1", "--legacy")
    monkeypatch.setattr(session_module, "_scan_start_method", lambda *_a: method)
    started: list[int] = []
    real = session_module._start_scan

    def start_scan(*a: Any) -> tuple[Any, Any]:
        started.append(a[2])
        return real(*a)

    monkeypatch.setattr(session_module, "_start_scan", start_scan)
    for f in (*plain, *legacy):
        started.clear()
        seen: list[int] = []
        s = Session.open(
            f,
            keep_values=False,
            use_cache=False,
            before_indexing=functools.partial(_count_into, seen, started),
        )
        expected = Session.open(f, keep_values=False, parallel=False, use_cache=False)
        assert [r.id for r in s.records] == [r.id for r in expected.records] or s.migrated, f.name
        # the scan processes this open had started when it was called: none, the one for the
        # second half, or both halves'; a legacy file's two are given up (its header needs the
        # migration) for the one of the second half, as the fork way does
        started_by_then = {None: 0, "fork": 1, "fresh": 2 if f in plain else 3}[method]
        assert seen == [started_by_then], (f.name, seen)


def test_before_indexing_comes_before_a_cached_index_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cached index (the file's head is shown while it is read) and with a stale one (called
    once, before the stale cache is tried; the cold index then does not call it again)."""
    from session_studio.core import index_cache

    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    (f,) = generate(tmp_path / "plain", "--seed", "7409", "--count", "1")
    events: list[str] = []
    real_load = index_cache.load_cached

    def load_cached(*a: Any, **k: Any) -> Any:
        got = real_load(*a, **k)
        events.append("cache hit" if got is not None else "cache miss")
        return got

    monkeypatch.setattr(index_cache, "load_cached", load_cached)
    Session.open(f, keep_values=False, use_cache=True, before_indexing=lambda: events.append("head"))
    assert events == ["cache miss", "head"]  # no cache file yet: the head before the index
    events.clear()
    Session.open(f, keep_values=False, use_cache=True, before_indexing=lambda: events.append("head"))
    assert events == ["head", "cache hit"]
    events.clear()
    data = f.read_bytes()
    f.write_bytes(data.replace(b'"user"', b'"USER"', 1))  # same size, other bytes: the cache is stale
    Session.open(f, keep_values=False, use_cache=True, before_indexing=lambda: events.append("head"))
    assert events == ["head", "cache miss"]
