"""Values not kept in memory are re-read from the file (Session.value, Session.values): exactly the
values a kept load holds (migration patches, hook renames, odd lines), whether neighbouring lines
come in one read or each alone, and refused when the file no longer holds the indexed entry."""

from __future__ import annotations

import itertools
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

import session_studio.core.session as session_module
from session_studio.core import Session
from session_studio.core.errors import SessionFileError
from session_studio.core.oracle_schema import plan_output
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0, PiProfile
from tests.conftest import generate

CASES_16 = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases"


@pytest.mark.parametrize(
    "kind",
    [
        ["--seed", "7520", "--count", "2", "--size", "medium"],
        ["--seed", "7521", "--count", "4", "--damaged"],
        ["--seed", "7522", "--count", "3", "--legacy"],
        ["cases"],
        ["made"],
    ],
    ids=["plain", "damaged", "legacy", "cases", "made"],
)
@pytest.mark.parametrize("chunk", ["line_by_line", "small", "default"])
def test_reread_values_are_the_kept_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: list[str], chunk: str
) -> None:
    if chunk == "line_by_line":  # every line a read of its own
        monkeypatch.setattr(session_module, "REREAD_CHUNK_BYTES", 1)
        monkeypatch.setattr(session_module, "REREAD_GAP_BYTES", 0)
    elif chunk == "small":  # reads that end mid-way through the wanted lines, gaps skipped or read
        monkeypatch.setattr(session_module, "REREAD_CHUNK_BYTES", 2000)
        monkeypatch.setattr(session_module, "REREAD_GAP_BYTES", 300)
    if kind == ["made"]:
        files = _migrated_by_hand(tmp_path)
    elif kind == ["cases"]:
        files = sorted(CASES_16.glob("*.jsonl"))
    else:
        files = generate(tmp_path, *kind)
    rng = random.Random(7520)
    compared = patched = 0
    for f in files:
        # the same ids for a legacy file's migrated entries in both loads (pi's are random)
        monkeypatch.setattr(uuid, "uuid4", _counting_uuids())
        kept = Session.open(f, keep_values=True, use_cache=False)
        monkeypatch.setattr(uuid, "uuid4", _counting_uuids())
        lazy = Session.open(f, keep_values=False, use_cache=False)
        n = len(kept.records)
        assert len(lazy.records) == n
        expected = [kept.value(i) for i in range(n)]
        # any order, repeats, a sample with gaps between the lines
        wanted = [rng.randrange(n) for _ in range(n)] + list(range(n))[::-1] + list(range(0, n, 3))
        got = lazy.values(wanted)
        assert repr(got) == repr([expected[i] for i in wanted])
        assert repr([lazy.value(i) for i in range(n)]) == repr(expected)
        compared += n
        patched += len(lazy.records.patches)
    assert compared > (4 if kind == ["made"] else 40)
    # migrated entries re-read with their patches
    assert patched or ("--legacy" not in kind and kind != ["made"])


def _migrated_by_hand(tmp_path: Path) -> list[Path]:
    """Spec §9's migration cases: a v2 file's hookMessage renamed, a v1 file's compaction index."""
    v2 = tmp_path / "v2-hook.jsonl"
    v2.write_text(
        '{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/w"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"u","timestamp":1}}\n'
        '{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"hookMessage","customType":"h",'
        '"content":"hk","display":true,"timestamp":2}}\n'
    )
    v1 = tmp_path / "v1-compaction.jsonl"
    v1.write_text(
        '{"type":"session","id":"s","timestamp":"t","cwd":"/w"}\n'
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}}\n'
        '{"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"h","content":"hk","display":true,"timestamp":2}}\n'
        '{"type":"compaction","timestamp":"t","summary":"S","firstKeptEntryIndex":1,"tokensBefore":5}\n'
        '{"type":"message","timestamp":"t","message":{"role":"user","content":"b","timestamp":3}}\n'
    )
    return [v2, v1]


def _counting_uuids() -> Any:
    counter = itertools.count(1)
    return lambda: uuid.UUID(int=next(counter) << 96)  # its first 8 hex digits: the count


def _chain(path: Path, n: int) -> None:
    lines = [b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}']
    parent = "null"
    for k in range(n):
        lines.append(
            b'{"type":"message","id":"%08x","parentId":%s,"timestamp":"t","message":{"role":"user","content":"m%05d"}}'
            % (k, parent.encode(), k)
        )
        parent = f'"{k:08x}"'
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_a_line_rewritten_in_place_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _chain(p, 50)
    s = Session.open(p, keep_values=False, use_cache=False)
    data = p.read_bytes()
    at = data.index(b'"id":"0000001e"')
    with open(p, "r+b") as fh:  # same inode, same size: another entry where entry 30 was
        fh.seek(at)
        fh.write(b'"id":"0000ffff"')
    assert s.values(range(29))[0]["id"] == "00000000"  # the lines before it are still theirs
    with pytest.raises(SessionFileError, match="line 32 is no longer the entry"):
        s.values(range(50))
    with pytest.raises(SessionFileError, match="line 32 is no longer the entry"):
        s.value(30)


def test_a_truncated_file_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    _chain(p, 50)
    s = Session.open(p, keep_values=False, use_cache=False)
    data = p.read_bytes()
    with open(p, "r+b") as fh:
        fh.truncate(len(data) - 40)
    with pytest.raises(SessionFileError, match="line 51 is no longer there"):
        s.values(range(50))
    assert s.values([0, 1])[1]["id"] == "00000001"


@pytest.mark.parametrize(
    "kind",
    [
        ["--seed", "7523", "--count", "3", "--size", "medium"],
        ["--seed", "7524", "--count", "4", "--damaged"],
        ["cases"],
    ],
    ids=["plain", "damaged", "cases"],
)
@pytest.mark.parametrize("profile", [PROFILE_0_80_2, PROFILE_1_6_0], ids=["pi-0.80.2", "pi-1.6.0"])
def test_plans_from_reread_values_are_the_kept_loads_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: list[str], profile: PiProfile
) -> None:
    """The whole plan (context, preparation, file lists, …) of a big file's load, whose values are
    re-read, is the plan of the kept load the oracle tests compare with pi."""
    files = sorted(CASES_16.glob("*.jsonl")) if kind == ["cases"] else generate(tmp_path, *kind)
    planned = 0
    for f in files:
        monkeypatch.setattr(uuid, "uuid4", _counting_uuids())
        kept = Session.open(f, keep_values=True, use_cache=False)
        monkeypatch.setattr(uuid, "uuid4", _counting_uuids())
        lazy = Session.open(f, keep_values=False, use_cache=False)
        for keep_recent in (2000, 20000):
            expected = plan_output(kept, keep_recent=keep_recent, profile=profile)
            got = plan_output(lazy, keep_recent=keep_recent, profile=profile)
            if expected[0].get("sessionReset"):  # the header pi would start over with: a new id each time
                expected[0].pop("header"), got[0].pop("header")
            assert repr(got) == repr(expected)
            planned += "preparation" in expected[0] and expected[0]["preparation"] is not None
    assert planned


@pytest.mark.parametrize("chunk", [1, 300, 1024 * 1024])
def test_raw_lines_are_the_files_lines_in_the_order_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(session_module, "REREAD_CHUNK_BYTES", chunk)
    p = tmp_path / "s.jsonl"
    _chain(p, 40)
    lines = p.read_bytes().split(b"\n")[1:-1]  # the entries' lines, without the header
    s = Session.open(p, keep_values=False, use_cache=False)
    asked = [39, 0, 7, 7, 20, 3, 38]
    assert s.raw_lines(asked) == [lines[i] for i in asked]
    assert s.raw_lines([]) == []
