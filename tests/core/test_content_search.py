"""The content search (core.content_search): the entries whose strings hold a text, upper and lower
case alike, found from the file's bytes exactly as parsing every entry finds them."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_studio.core import Session, content_search
from session_studio.core.content_search import content_matches, file_holds_text, holds_text, prefilter_needles
from session_studio.core.errors import LoadCancelled
from tests.core.util import HEADER

#: characters that JSON writes differently or that change with case
ALPHABET = 'aAbBxX "\\\n\té\u00c9üДд€😀/'


def _entry(n: int, text: str) -> dict[str, Any]:
    kind = n % 3
    if kind == 0:
        msg: dict[str, Any] = {"role": "user", "content": text, "timestamp": 1}
    elif kind == 1:
        msg = {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": text}}],
            "usage": {"totalTokens": 3},
            "stopReason": "toolUse",
        }
    else:
        msg = {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
        }
    return {
        "type": "message",
        "id": f"{n + 1:08x}",
        "parentId": f"{n:08x}" if n else None,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": msg,
    }


def _write(path: Path, texts: list[str]) -> Path:
    lines = [json.dumps(HEADER)] + [json.dumps(_entry(n, t), ensure_ascii=False) for n, t in enumerate(texts)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _reference(s: Session, query: str) -> list[int]:
    q = query.lower()
    return [i for i, v in enumerate(s.values(range(len(s.records)))) if holds_text(v, q)] if q else []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=12),
    pick=st.integers(0, 11),
    cut=st.tuples(st.integers(0, 30), st.integers(1, 8)),
    typed=st.sampled_from(["as is", "upper", "lower", "random"]),
    random_query=st.text(alphabet=ALPHABET, min_size=1, max_size=4),
)
def test_the_file_search_finds_what_parsing_every_entry_finds(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    texts: list[str],
    pick: int,
    cut: tuple[int, int],
    typed: str,
    random_query: str,
) -> None:
    monkeypatch.setattr(content_search, "READ_BYTES", 200)  # many reads, lines across their ends
    f = _write(tmp_path_factory.mktemp("s") / "s.jsonl", texts)
    source = texts[pick % len(texts)]
    query = source[cut[0] : cut[0] + cut[1]] or random_query
    query = {"as is": query, "upper": query.upper(), "lower": query.lower(), "random": random_query}[typed]
    kept = Session.open(f, keep_values=True, use_cache=False)
    bulk = Session.open(f, keep_values=False, use_cache=False)
    expected = _reference(kept, query)
    assert content_matches(kept, query) == expected
    assert content_matches(bulk, query) == expected
    # the session browser's question of a whole file (the header holds no such text)
    assert file_holds_text(str(f), query) == (bool(expected) or holds_text(HEADER, query.lower()))
    start = pick % (len(texts) + 1)  # what pi appended since a search: from a record on
    later = [i for i in expected if i >= start]
    assert content_matches(kept, query, start=start) == later == content_matches(bulk, query, start=start)


def test_strings_match_and_keys_do_not(tmp_path: Path) -> None:
    texts = ["Run PYTEST again", "ls -la /srv/Code", "FAILED: TypeError in Café.py\nline 2", 'say "hi"']
    s = Session.open(_write(tmp_path / "s.jsonl", texts), keep_values=False, use_cache=False)
    assert content_matches(s, "pytest") == [0]
    assert content_matches(s, "/srv/code") == [1]
    assert content_matches(s, "CAFÉ") == [2] and content_matches(s, "café.py\nline") == [2]
    assert content_matches(s, '"hi"') == [3]
    assert content_matches(s, "toolCallId") == []  # a key, not content
    assert content_matches(s, "") == []


def test_the_needles_are_what_json_writes_as_itself() -> None:
    assert prefilter_needles("Hello World") == [b"hello world"]
    assert prefilter_needles('say "hi there" now') == [b"hi there"]  # the longest plain run
    assert prefilter_needles("Ünïcode") == [b"code"]
    assert sorted(prefilter_needles("éÉ") or []) == sorted(f.encode() for f in ("éé", "éÉ", "Éé", "ÉÉ"))
    assert prefilter_needles('"\\\n') is None  # every line is parsed
    assert prefilter_needles('é"') == sorted({'é\\"'.encode(), 'É\\"'.encode()})  # as JSON writes them
    assert len(prefilter_needles("привет") or []) == 8  # "при" in every case: a mixed "ПрИвет" too
    assert "ПрИ".encode() in (prefilter_needles("привет") or [])


def test_a_search_reports_progress_and_can_be_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_search, "READ_BYTES", 1000)
    s = Session.open(
        _write(tmp_path / "s.jsonl", [f"entry {n}" for n in range(200)]), keep_values=False, use_cache=False
    )
    seen: list[tuple[int, int]] = []
    assert content_matches(s, "entry 19", progress=lambda d, t: seen.append((d, t))) == [19, *range(190, 200)]
    assert (
        len(seen) > 5 and seen[-1][0] == seen[-1][1] and all(a[0] < b[0] for a, b in itertools.pairwise(seen))
    )
    with pytest.raises(LoadCancelled):
        content_matches(s, "entry", cancelled=lambda: True)


def test_entries_only_in_memory_are_searched_too(tmp_path: Path) -> None:
    s = Session.open(_write(tmp_path / "s.jsonl", ["alpha", "beta"]), keep_values=False, use_cache=False)
    preview = s.with_virtual_entries([{**_entry(2, "gamma alpha"), "parentId": "00000002"}])
    assert content_matches(preview, "ALPHA") == [0, 2]
    assert content_matches(preview, "gamma") == [2]
