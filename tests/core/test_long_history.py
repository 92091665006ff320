"""A long history's messages to summarise (history.HistoryMessages): counted, with their file
operations collected, from the lines that may hold one, and read again when iterated. The
preparation it gives equals the one made with every message in a list (the reference, checked
against pi by the oracle tests) on generated, legacy, damaged and pi 1.6.0 sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from session_studio.core import Session, history
from session_studio.core.file_ops import may_hold_file_op
from session_studio.core.history import HistoryMessages
from session_studio.core.preparation import plan_compaction
from session_studio.core.projected_plan import plan_projected_compaction
from session_studio.core.record_table import FILE_OP_CANDIDATE
from tests.conftest import generate
from tests.core.util import A, T, U, call, chain, to_bytes

CASES_16 = Path(__file__).resolve().parents[1] / "oracle" / "pi-1.6.0" / "cases"


def _preparations(f: Path, projected: bool, monkeypatch: pytest.MonkeyPatch, keep: int) -> tuple[Any, Any]:
    """(eager, long-history) preparation of the file's path; the long one with chunks of 7 entries."""
    s = Session.open(f, keep_values=False, use_cache=False)  # once: a legacy file's ids are fresh each open
    leaf = s.leaf_index()
    if leaf is None:
        return None, None
    path = s.path_indices(leaf)
    out = []
    for lazy_min in (10**9, 0):
        monkeypatch.setattr(history, "LAZY_MIN_ENTRIES", lazy_min)
        monkeypatch.setattr(history, "CHUNK_ENTRIES", 7)
        monkeypatch.setattr(history, "FILE_OP_STEP", 5)
        plan = plan_projected_compaction(s, path) if projected else plan_compaction(s, path)
        try:
            out.append(plan.prepare(keep))
        except Exception as e:  # what pi throws, thrown the same way both ways
            out.append(repr(e))
    return out[0], out[1]


def _same(eager: Any, lazy: Any) -> None:
    if eager is None or isinstance(eager, str):
        assert lazy == eager
        return
    assert isinstance(lazy.messages_to_summarize, HistoryMessages)
    assert len(lazy.messages_to_summarize) == len(eager.messages_to_summarize)
    assert lazy.to_json() == eager.to_json()  # messages, file ops, file lists, serialised history
    assert lazy.to_json()["messagesToSummarize"] == eager.to_json()["messagesToSummarize"]  # read again


@pytest.mark.parametrize("projected", [False, True], ids=["0.80.2", "1.6.0"])
@pytest.mark.parametrize("kind", ["plain", "legacy", "damaged", "cases16"])
def test_a_long_history_prepares_as_the_list_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, projected: bool
) -> None:
    if kind == "cases16":
        files = sorted(CASES_16.glob("*.jsonl"))
    else:
        extra = {"plain": [], "legacy": ["--legacy"], "damaged": ["--damaged"]}[kind]
        files = generate(tmp_path, "--seed", "7720", "--count", "4", "--size", "medium", *extra)
    compared = 0
    for f in files:
        for keep in (2000, 20000):
            eager, lazy = _preparations(f, projected, monkeypatch, keep)
            _same(eager, lazy)
            compared += eager is not None and not isinstance(eager, str)
    assert compared >= 2


def _write(tmp_path: Path, entries: list[dict[str, Any]], escape: bool = False) -> Path:
    f = tmp_path / "s.jsonl"
    text = to_bytes(chain(*entries)).decode()
    if escape:  # what JSON.parse reads as "toolCall" and "read", spelled with escapes
        text = text.replace('"toolCall"', '"tool\\u0043all"').replace('"read"', '"\\u0072ead"')
    f.write_text(text, encoding="utf-8")
    return f


@pytest.mark.parametrize("projected", [False, True], ids=["0.80.2", "1.6.0"])
@pytest.mark.parametrize("escape", [False, True], ids=["plain", "escaped"])
def test_file_operations_come_in_order_from_the_lines_that_hold_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, projected: bool, escape: bool
) -> None:
    """Calls named read/write/edit among calls of other tools, tool results naming the same words
    (toolCallId) or holding nested calls, and (escaped) a call spelled with \\u escapes: the same
    file lists, in the same order, as with every message parsed."""
    entries: list[dict[str, Any]] = []
    for n in range(30):
        entries.append(U(f"step {n}: read the file"))
        name = ("read", "bash", "edit", "write", "grep")[n % 5]
        entries.append(A(blocks=[call(name, path=f"src/f{n % 7}.py", command="read")]))
        result = T("read")
        if n % 6 == 1:  # pi 1.6.0 reads file operations from a tool result's nested calls too
            nested = [{"name": "write", "arguments": {"path": f"src/n{n}.py"}}, {"name": "read"}]
            result["message"]["nestedCalls"] = {"calls": nested}
        entries.append(result)
        entries.append(A("done"))
    f = _write(tmp_path, entries, escape)
    eager, lazy = _preparations(f, projected, monkeypatch, 500)
    assert eager.file_lists[0] or eager.file_lists[1]
    assert ("src/n1.py" in eager.file_lists[1]) == projected  # the nested write (1.6.0 only)
    _same(eager, lazy)


def test_history_messages_act_as_their_list() -> None:
    made = [[{"n": 0}, {"n": 1}], [], [{"n": 2}]]
    reads: list[int] = []

    def chunks() -> Any:
        reads.append(1)
        return iter(made)

    h = HistoryMessages(3, chunks)
    listed = [{"n": 0}, {"n": 1}, {"n": 2}]
    assert len(h) == 3 and bool(h)
    assert list(h) == listed and list(h) == listed and len(reads) == 2  # read again each time
    assert h[1] == {"n": 1} and h[-1] == {"n": 2} and h[1:] == listed[1:]
    assert h == listed and h != listed[:2]
    with pytest.raises(IndexError):
        h[3]
    wrong = HistoryMessages(4, chunks)  # the file no longer says what was counted
    with pytest.raises(RuntimeError, match="had 4 messages"):
        list(wrong)


def test_a_json_dump_of_the_preparation_reads_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = [e for n in range(10) for e in (U(f"q{n}"), A(f"a{n}"))]
    eager, lazy = _preparations(_write(tmp_path, entries), False, monkeypatch, 10)
    assert json.dumps(lazy.to_json()["messagesToSummarize"]) == json.dumps(
        eager.to_json()["messagesToSummarize"]
    )


@pytest.mark.parametrize("projected", [False, True], ids=["0.80.2", "1.6.0"])
def test_odd_messages_are_counted_as_the_list_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, projected: bool
) -> None:
    """A string for a message, a custom one, one of a role pi does not know: each one
    message, as the list has it (a null or missing message is not planned at all: pi's cut point
    search reads its role and throws)."""
    odd: list[dict[str, Any]] = [
        {"type": "message", "message": "text"},
        {
            "type": "message",
            "message": {"role": "custom", "customType": "note", "content": "x", "display": True},
        },
        {"type": "message", "message": {"role": "visitor", "content": [{"type": "toolCall"}]}},
        {"type": "message", "message": {"role": "assistant", "content": "read"}},
    ]
    entries = [e for n in range(6) for e in (U(f"q{n}"), odd[n % 4], A(f"a{n}", total=5000))]
    eager, lazy = _preparations(
        _write(tmp_path, [*entries, U("last"), A("end", total=9000)]), projected, monkeypatch, 10
    )
    _same(eager, lazy)
    assert eager is not None and not isinstance(eager, str)


def _file_tool_session(tmp_path: Path) -> Path:
    """A generated session with, appended to it, calls of file tools among others (one spelled with
    escapes, one in a message of another role), results with nested calls of any value, and odd
    content (a string, blocks that are not objects)."""
    (f,) = generate(tmp_path, "--seed", "7741", "--count", "1", "--size", "medium")

    def message(role: str, content: Any, **more: Any) -> dict[str, Any]:
        return {"type": "message", "message": {"role": role, "content": content, **more}}

    nested = {"calls": [{"name": "read", "arguments": {"path": "b.py"}}]}
    odd: list[dict[str, Any]] = [
        A(blocks=[call("bash", command="ls"), call("edit", path="a.py")]),
        A(blocks=[call("grep", pattern="read")]),
        message("toolResult", [{"type": "text", "text": "read"}], nestedCalls=nested),
        message("toolResult", "x", nestedCalls=None),
        message("toolResult", "x", nestedCalls="calls"),
        message("user", [{"type": "toolCall", "name": "write"}]),
        message("assistant", ["toolCall", None, {"name": "read"}]),
        message("assistant", "read"),
        A(blocks=[call("read", path="c.py")]),
        A(blocks=[call("rea", path="d.py")]),
    ]
    last = orjson.loads(f.read_bytes().splitlines()[-1])["id"]
    for n, e in enumerate(odd):  # pi's 8-hex ids: the common way of every loader
        e["id"] = f"{0xF0000000 + n:08x}"
        e["parentId"] = last
        last = e["id"]
    lines = [orjson.dumps(e) for e in chain(*odd, header=None)]
    lines[-1] = lines[-1].replace(b'"rea"', b'"re\\u0061d"')  # "read", as JSON.parse reads it
    with f.open("ab") as fh:
        fh.write(b"".join(line + b"\n" for line in lines))
    return f


def _marks(s: Session) -> tuple[list[bool], list[bool]]:
    """(what the index marked, what file_ops.may_hold_file_op says of each record's message)."""
    t = s.records
    values = s.values(range(len(t)))
    expected = [
        t.type_of(i) == "message" and type(v) is dict and may_hold_file_op(v.get("message"))
        for i, v in enumerate(values)
    ]
    return [bool(f & FILE_OP_CANDIDATE) for f in t.flags], expected


def test_the_index_marks_the_messages_that_may_hold_file_operations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark a long history relies on to parse only some lines: exactly may_hold_file_op's answer,
    however the index was made (the line scanner and the compiled loader, the Python loader, values
    kept, the file's second half in another process, the cached index, lines pi appended later)."""
    from session_studio.core import index_cache, reader
    from session_studio.core import session as session_module

    # runs of a few lines: all but the first read by the line scanner (one run of a MB is parsed)
    monkeypatch.setattr(reader, "RUN_BYTES", 3000)
    f = _file_tool_session(tmp_path)
    opened = {
        "compiled": Session.open(f, keep_values=False, use_cache=False, parallel=False),
        "values kept": Session.open(f, keep_values=True, use_cache=False, parallel=False),
        "parallel": Session.open(f, keep_values=False, use_cache=False, parallel=True),
    }
    Session.open(f, keep_values=False, use_cache=True, parallel=False)
    loaded: list[Any] = []
    load_cached = index_cache.load_cached
    monkeypatch.setattr(index_cache, "load_cached", lambda *a: loaded.append(load_cached(*a)) or loaded[-1])
    opened["cached"] = Session.open(f, keep_values=False, use_cache=True, parallel=False)
    assert loaded and loaded[-1] is not None
    grown = tmp_path / "grown.jsonl"
    data = f.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    grown.write_bytes(data[:half])
    opened["appended"] = Session.open(grown, keep_values=False, use_cache=False, parallel=False)
    grown.write_bytes(data)
    opened["appended"].refresh()
    monkeypatch.setattr(session_module, "BULK_HELPER", None)
    opened["python"] = Session.open(f, keep_values=False, use_cache=False, parallel=False)
    for how, s in opened.items():
        marked, expected = _marks(s)
        assert marked == expected, how
        assert 30 <= sum(marked) < len(marked) // 2, how
