"""The browser's facts of a big file it reads only the head and tail of: its name (pi's last
session_info entry, wherever it is) and an estimate of its entries that does not read it all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from session_studio.core.listing import HEAD, TAIL, read_info
from tests.core.util import HEADER, A, U, chain, to_bytes


def _big(path: Path, name_at: int | None, n: int = 1200) -> Path:
    entries = []
    for k in range(n):
        entries.append(U(200) if k % 2 == 0 else A(200))
        if k == name_at:
            entries.append({"type": "session_info", "name": "  compaction work  "})
    # a message quoting the entry's bytes: escaped in its JSON string, it is no entry
    entries.append(U('{"type":"session_info","name":"not this"}'))
    entries += [U(200), A(200)] * 80  # the tail read holds no session_info
    path.write_bytes(to_bytes(chain(*entries, header=HEADER)))
    assert path.stat().st_size > HEAD + TAIL
    return path


def test_the_name_in_the_middle_of_a_big_file_is_found(tmp_path: Path) -> None:
    info = read_info(_big(tmp_path / "named.jsonl", name_at=600))
    assert info is not None and info.name == "compaction work" and info.title == "compaction work"
    info = read_info(_big(tmp_path / "unnamed.jsonl", name_at=None))
    assert info is not None and info.name is None  # the quoted text is not an entry


def test_the_entry_estimate_of_a_big_file_is_near_its_count(tmp_path: Path, monkeypatch: Any) -> None:
    from session_studio.core import listing

    monkeypatch.setattr(listing, "EXACT_COUNT_MAX", 0)  # counted exactly up to 8 MB: estimate this one
    # long first messages (a pasted file, a big first answer), short ones after: the head alone
    # gave a 117 MB session's ~106k entries as "~68,010"
    path = tmp_path / "s.jsonl"
    entries = [U(3000), A(3000)] * 30 + [U(150), A(150)] * 1500
    path.write_bytes(to_bytes(chain(*entries, header=HEADER)))
    info = read_info(path)
    real = len(path.read_bytes().splitlines()) - 1
    assert info is not None and not info.entries_exact
    assert abs(info.entries - real) / real < 0.2, (info.entries, real)
    assert json.loads(path.read_bytes().splitlines()[0])["type"] == "session"


def test_a_legacy_version_and_damaged_lines_are_listed(tmp_path: Path) -> None:
    """The browser said neither (the window says both on opening): the header's version when pi
    migrates the file, and the lines read for the list that are not a JSON object."""
    legacy = tmp_path / "legacy.jsonl"
    legacy.write_bytes(
        to_bytes(chain(U(20), A(20), header={**HEADER, "version": 2}))
        + b'{"type":"message", torn\n'
        + b"[1]\n"
    )
    info = read_info(legacy)
    assert info is not None and info.legacy_version == 2 and info.damaged_seen == 2
    v1 = tmp_path / "v1.jsonl"
    v1.write_bytes(to_bytes(chain(U(20), A(20), header={k: v for k, v in HEADER.items() if k != "version"})))
    info = read_info(v1)
    assert info is not None and info.legacy_version == 1 and info.damaged_seen == 0
    current = read_info(_big(tmp_path / "big.jsonl", name_at=None))
    assert current is not None and current.legacy_version is None and current.damaged_seen == 0
