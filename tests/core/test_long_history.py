"""A long history's messages to summarise (history.HistoryMessages): counted, with their file
operations collected, from the lines that may hold one, and read again when iterated. The
preparation it gives equals the one made with every message in a list (the reference, checked
against pi by the oracle tests) on generated, legacy, damaged and pi 1.6.0 sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from session_studio.core import Session, history
from session_studio.core.history import HistoryMessages
from session_studio.core.preparation import plan_compaction
from session_studio.core.projected_plan import plan_projected_compaction
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
    (toolCallId), and (escaped) a call spelled with \\u escapes: the same file lists, in the same
    order, as with every message parsed."""
    entries: list[dict[str, Any]] = []
    for n in range(30):
        entries.append(U(f"step {n}: read the file"))
        name = ("read", "bash", "edit", "write", "grep")[n % 5]
        entries.append(A(blocks=[call(name, path=f"src/f{n % 7}.py", command="read")]))
        entries.append(T("read"))
        entries.append(A("done"))
    f = _write(tmp_path, entries, escape)
    eager, lazy = _preparations(f, projected, monkeypatch, 500)
    assert eager.file_lists[0] or eager.file_lists[1]
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


def test_lines_holding_finds_what_each_line_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stretches of lines searched whole find exactly the lines holding each needle, with lines
    left out between them (another branch, every other entry) and stretches cut small."""
    from session_studio.core import session as session_module

    monkeypatch.setattr(session_module, "REREAD_CHUNK_BYTES", 3000)
    monkeypatch.setattr(session_module, "REREAD_GAP_BYTES", 2500)  # gaps read and passed over
    needles = (b"\\u", b'"toolCall"', b'"read"', b"}}", b"e")
    for f in generate(tmp_path, "--seed", "7740", "--count", "2", "--size", "medium"):
        s = Session.open(f, keep_values=False, use_cache=False)
        everything = list(range(len(s.records)))
        for records in (everything, everything[::2], everything[::-3]):
            got = s.lines_holding(records, needles)
            raws = s.raw_lines(records)
            assert got == {n: {i for i, raw in zip(records, raws, strict=True) if n in raw} for n in needles}
