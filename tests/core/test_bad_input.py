"""Damaged input: every problem gets a precise report entry; nothing crashes; pi's view is kept."""

from __future__ import annotations

import os

import pytest

from session_studio.core import Session, SessionFileError, SessionLoadError, build_session_context
from session_studio.core.jsvalue import JsTypeError
from tests.core.util import HEADER, U, chain, to_bytes

GOOD = to_bytes(chain(U("hello"), U("again")))


def kinds(s: Session) -> list[tuple[int, str, bool]]:
    return [(i.line, i.kind, i.dropped) for i in s.issues]


def test_truncated_last_line() -> None:
    s = Session.from_bytes(GOOD + b'{"type":"message","id":"z"')
    assert len(s.records) == 2
    assert (4, "malformed", True) in kinds(s) and any(k == "no_final_newline" for _, k, _ in kinds(s))
    # what each pi does with such a file (spec §1.10 and §10 rule 9), whichever profile reads it
    (note,) = [i.message for i in s.issues if i.kind == "no_final_newline"]
    assert "pi 0.80.2 would glue its next append onto it" in note
    assert "pi 1.6.0 adds the newline when it opens the file" in note


def test_blank_whitespace_crlf_and_bom() -> None:
    data = GOOD.replace(b"\n", b"\r\n", 1) + b"\n   \n\xc2\xa0\n"
    s = Session.from_bytes(data)
    assert len(s.records) == 2
    assert ("crlf" in [k for _, k, _ in kinds(s)]) and ("blank" in [k for _, k, _ in kinds(s)])
    s = Session.from_bytes(b"\xef\xbb\xbf" + GOOD)
    assert s.reset and kinds(s)[0][1] == "no_header"


def test_header_not_first_and_missing() -> None:
    lines = chain(U("a"))
    s = Session.from_bytes(to_bytes([lines[1], lines[0]]))
    assert s.reset and "no_header" in [k for _, k, _ in kinds(s)]


def test_stray_scalars_and_unknown_types() -> None:
    s = Session.from_bytes(
        GOOD
        + b'42\n[]\n"str"\ntrue\n0\nnull\n{"type":"future_thing","id":"f","parentId":"e1","timestamp":"t"}\n'
    )
    assert [type(e).__name__ for e in s.entries()[2:]] == ["int", "list", "str", "bool", "dict"]
    assert [k for _, k, d in kinds(s) if d] == ["falsy", "falsy"]


def test_invalid_utf8_is_replaced_like_pi() -> None:
    line = b'{"type":"message","id":"u","parentId":"e1","timestamp":"t","message":{"role":"user","content":"a\xffb"}}\n'
    s = Session.from_bytes(GOOD + line)
    assert s.entries()[-1]["message"]["content"] == "a\ufffdb"
    assert "invalid_utf8" in [k for _, k, _ in kinds(s)]


def test_duplicate_ids_later_wins_orphans_are_roots() -> None:
    s = Session.from_bytes(to_bytes(chain(U("a"), U("b", id="e0"), U("c", parentId="nope"))))
    assert s.get_index("e0") == 1
    assert s.path_indices(2) == [2]


def test_cycles_are_detected_not_followed() -> None:
    s = Session.from_bytes(to_bytes(chain(U("a", id="a", parentId="b"), U("b", id="b", parentId="a"))))
    path = s.path_indices(1)
    assert sorted(path) == [0, 1]
    assert any(i.kind == "cycle" for i in s.issues)


def test_message_without_message_raises_like_pi() -> None:
    bad = {"type": "message", "id": "m", "parentId": "e1", "timestamp": "t"}
    s = Session.from_bytes(GOOD + to_bytes([bad]))
    with pytest.raises(JsTypeError):
        build_session_context(s)


def test_v1_primitive_line_is_a_load_error_naming_the_line() -> None:
    h = {"type": "session", "id": "x", "timestamp": "t", "cwd": ""}
    with pytest.raises(SessionLoadError) as e:
        Session.from_bytes(to_bytes([h]) + b"42\n")
    assert e.value.line == 2


def test_huge_single_line_and_deep_nesting(tmp_path) -> None:
    big = U("x" * (10 * 1024 * 1024), id="big", parentId="e1", timestamp="t")
    deep = "[" * 3000 + "]" * 3000
    data = (
        GOOD
        + to_bytes([big])
        + ('{"type":"custom","id":"d","parentId":"big","timestamp":"t","data":' + deep + "}\n").encode()
    )
    p = tmp_path / "s.jsonl"
    p.write_bytes(data)
    s = Session.open(p)
    assert len(s.records) == 4
    assert s.records[2].tokens == (10 * 1024 * 1024) // 4


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(SessionFileError):
        Session.open(tmp_path / "nope.jsonl")
    with pytest.raises(SessionFileError):
        Session.open(tmp_path)


def test_lazy_and_in_memory_agree(tmp_path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        GOOD
        + to_bytes(
            [{"type": "label", "id": "l", "parentId": "e1", "timestamp": "t", "targetId": "e0", "label": "L"}]
        )
    )
    a = Session.open(p, keep_values=True)
    b = Session.open(p, keep_values=False)
    assert a.entries() == b.entries() and a.labels == b.labels


def test_refresh_reads_only_the_tail(tmp_path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(GOOD + b'{"type":"message","id":"half"')  # a writer mid-line
    s = Session.open(p)
    assert len(s.records) == 2
    with open(p, "ab") as fh:
        fh.write(b',"parentId":"e1","timestamp":"t","message":{"role":"user","content":"x"}}\n')
    new = s.refresh()
    assert [s.records[i].id for i in new] == ["half"] and s.leaf_id == "half"
    assert s.size == os.path.getsize(p)
    assert s.refresh() == []


def test_header_only_is_not_reset() -> None:
    s = Session.from_bytes(to_bytes([HEADER]))
    assert not s.reset and s.records == [] and build_session_context(s).messages() == []
