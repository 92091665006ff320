"""The index cache: reused for unchanged bytes, extended for appends, dropped for rewrites."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from session_studio.core import Session, index_cache
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


def test_the_cache_keeps_the_1_6_0_marker_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """detect_profile's marker search is done once per file: a reopen answers from the cache, and
    after pi appended only the new records are looked at (a usage entry there is found)."""
    from session_studio.core import profile

    values = chain(U(100), A(200), {"type": "compaction", "summary": "s", "firstKeptEntryId": "e1"}, U(5))
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(values))
    cold = open_(p)
    assert cold.pi16_scan == (len(cold.records), None)
    read: list[int] = []
    real_values = Session.values
    monkeypatch.setattr(Session, "values", lambda self, idx: read.extend(idx) or real_values(self, idx))
    warm = open_(p)
    assert warm.pi16_scan == cold.pi16_scan
    assert profile.pi16_marker(warm) is None and read == []
    more = [
        {**A(10), "id": "e9", "parentId": "e3", "timestamp": "2025-01-01T00:01:00.000Z"},
        {"type": "usage", "id": "e10", "parentId": "e9", "timestamp": "2025-01-01T00:01:01.000Z", "input": 1},
    ]
    with open(p, "ab") as fh:  # pi 1.6.0 appends
        fh.write(to_bytes(more))
    grown = open_(p)
    assert grown.pi16_scan == cold.pi16_scan  # from the cache: the appended records are not scanned yet
    marker = profile.pi16_marker(grown)
    assert marker is not None and "usage" in marker
    assert read and min(read) >= len(cold.records)
    assert grown.pi16_scan == (len(grown.records), marker)


def _aged(f: Path, seconds_ago: float) -> None:
    t = time.time() - seconds_ago
    os.utime(f, (t, t))


def test_the_cache_stays_in_its_budget_dropping_the_least_recently_used(
    tmp_path: Path, cache_here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexes no one reads (an older indexing code's, deleted sessions') do not pile up: a write
    prunes the folder to MAX_CACHE_BYTES, least recently used first; a reopen marks its index used;
    the one just written stays; another program's files and fresh temporary files are left alone."""
    folder = cache_here / "index"
    folder.mkdir(parents=True)
    old = [folder / f"{k:040x}.idx" for k in range(4)]
    for k, f in enumerate(old):
        f.write_bytes(b"x" * 1000)
        _aged(f, 1000 - k)  # old[0] the least recently used
    used = tmp_path / "used.jsonl"
    used.write_bytes(to_bytes(chain(U(100), A(200))))
    open_(used)
    (used_index,) = set(folder.glob("*.idx")) - set(old)
    _aged(used_index, 5000)  # written long ago ...
    open_(used)  # ... and read again now
    assert time.time() - used_index.stat().st_mtime < 60
    stale_tmp = folder / "abc.tmp123"
    stale_tmp.write_bytes(b"partial")
    _aged(stale_tmp, 2 * 24 * 3600)
    fresh_tmp = folder / "abd.tmp124"  # another process writing right now
    fresh_tmp.write_bytes(b"partial")
    foreign = folder / "notes.txt"
    foreign.write_bytes(b"y" * 5000)
    _aged(foreign, 9000)

    budget = used_index.stat().st_size + 2 * 1000  # room for two of the old ones
    removed = index_cache.prune_cache(str(folder), budget=budget)
    assert sorted(removed) == sorted(map(str, [old[0], old[1], stale_tmp]))  # least recently used first
    left = set(folder.iterdir())
    assert {used_index, old[2], old[3], fresh_tmp, foreign} == left
    assert facts(open_(used)) == facts(Session.open(used, keep_values=False, use_cache=False))

    monkeypatch.setattr(index_cache, "MAX_CACHE_BYTES", 0)  # every write prunes: only it stays
    new = tmp_path / "new.jsonl"
    new.write_bytes(to_bytes(chain(U(5), A(6), U(7))))
    open_(new)
    (new_index,) = folder.glob("*.idx")
    assert new_index not in left and fresh_tmp.exists() and foreign.exists()


def test_the_index_just_written_stays_even_over_the_budget(tmp_path: Path, cache_here: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(U(1), A(2))))
    open_(p)
    folder = cache_here / "index"
    (only,) = folder.glob("*.idx")
    assert index_cache.prune_cache(str(folder), keep=str(only), budget=0) == []
    assert index_cache.prune_cache(str(folder), budget=0) == [str(only)]


def test_a_damaged_cache_file_is_ignored(tmp_path: Path, cache_here: Path) -> None:
    """A cache file cut anywhere (an interrupted copy, a full disk) or with a damaged head is not
    used: the file is indexed again, as if there were no cache."""
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(*[m for i in range(40) for m in (U(f"q{i}" * 30), A(50 + i))])))
    expected = facts(Session.open(p, keep_values=False, use_cache=False))
    open_(p)
    (idx,) = (cache_here / "index").glob("*.idx")
    whole = idx.read_bytes()
    head_end = len(index_cache._MAGIC) + 8 + int.from_bytes(whole[len(index_cache._MAGIC) :][:8], "little")
    for cut in (0, 5, len(index_cache._MAGIC) + 3, head_end - 1, head_end + 7, len(whole) - 1):
        idx.write_bytes(whole[:cut])
        assert index_cache.load_cached(str(p), p.stat().st_size) is None, cut
        assert facts(open_(p)) == expected, cut
        idx.write_bytes(whole)
        assert index_cache.load_cached(str(p), p.stat().st_size) is not None
    idx.write_bytes(whole[: head_end - 20] + b"\xff" * 20 + whole[head_end:])  # the head is not JSON
    assert index_cache.load_cached(str(p), p.stat().st_size) is None
    assert facts(open_(p)) == expected


def test_cancelling_a_cache_read_stops_it_and_the_next_read_works(tmp_path: Path, cache_here: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(chain(*[m for i in range(40) for m in (U(f"q{i}"), A(5))])))
    open_(p)
    seen: list[tuple[int, int]] = []
    with pytest.raises(index_cache.LoadCancelled):
        index_cache.load_cached(str(p), p.stat().st_size, lambda d, t: seen.append((d, t)), lambda: True)
    cached = index_cache.load_cached(str(p), p.stat().st_size, lambda d, t: seen.append((d, t)))
    assert cached is not None and len(cached.table) == 80
    (idx,) = (cache_here / "index").glob("*.idx")
    assert seen[-1] == (idx.stat().st_size, idx.stat().st_size)  # progress ends at the whole file


def test_the_core_hash_is_blake2b_256() -> None:
    import hashlib

    from session_studio.core.digest import new_hash

    h = new_hash(b"session")
    h.update(b" studio")
    assert h.hexdigest() == hashlib.blake2b(b"session studio", digest_size=32).hexdigest()


def test_an_open_after_pi_appended_much_stores_the_index_again(
    tmp_path: Path, cache_here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is stored again once what pi appended since is worth it (RESAVE_MIN_BYTES, or a
    sixteenth of what it held): otherwise every later open would index all of it again."""
    from session_studio.core import session as session_module

    monkeypatch.setattr(session_module, "RESAVE_MIN_BYTES", 1)  # only the sixteenth counts here
    values = chain(*[m for i in range(200) for m in (U(f"question {i} " * 5), A(40 + i))])
    p = tmp_path / "s.jsonl"
    p.write_bytes(to_bytes(values[:201]))
    open_(p)

    def cached_size() -> int:
        cached = index_cache.load_cached(str(p), p.stat().st_size)
        assert cached is not None
        return cached.size

    first = cached_size()
    with open(p, "ab") as fh:  # a little: not worth storing again
        fh.write(to_bytes(values[201:203]))
    assert facts(open_(p)) == facts(Session.open(p, keep_values=False, use_cache=False))
    assert cached_size() == first
    with open(p, "ab") as fh:  # much more than a sixteenth
        fh.write(to_bytes(values[203:]))
    grown = open_(p)
    assert facts(grown) == facts(Session.open(p, keep_values=False, use_cache=False))
    assert cached_size() == p.stat().st_size
    again = open_(p)
    assert facts(again) == facts(grown) and again.leaf_id == grown.leaf_id and again.labels == grown.labels
