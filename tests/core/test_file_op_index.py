"""The file operations the index keeps for the messages that may hold one (file_op_index): what
file_ops.message_file_ops finds in the parsed message, whether the compiled scanner or Python read
the line; kept through the index cache, the parallel scan and pi's appends; and a long history's
preparation reads none of those lines again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from session_studio.core import Session, history
from session_studio.core import session as session_module
from session_studio.core.file_op_index import FileOpIndex
from session_studio.core.file_ops import FILE_OP_TOOLS, FileOps, message_file_ops
from session_studio.core.preparation import plan_compaction
from session_studio.core.profile import PROFILE_0_80_2, PROFILE_1_6_0
from session_studio.core.projected_plan import plan_projected_compaction
from session_studio.core.record_table import FILE_OP_CANDIDATE
from tests.core.util import HEADER


def _call(name: str, args: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c", "name": name, "arguments": args, **extra}


def _assistant(*blocks: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": list(blocks),
        "usage": {"totalTokens": 5},
        "stopReason": "toolUse",
    }


#: (why, message, raw JSON replacements in its line): what the index must settle as the parsed way
MESSAGES: list[tuple[str, dict[str, Any], tuple[tuple[str, str], ...]]] = [
    ("one read", _assistant(_call("read", {"path": "src/a.py"})), ()),
    (
        "every tool, in order",
        _assistant(*(_call(t, {"path": f"f{t}"}) for t in ("edit", "read", "write"))),
        (),
    ),
    ("other tools between", _assistant(_call("bash", {"path": "x"}), _call("write", {"path": "w"})), ()),
    ("a path with escapes", _assistant(_call("read", {"path": 'C:\\src\\"q".py\n\t/é'})), ()),
    ("a path in \\u escapes", _assistant(_call("edit", {"path": "abc"})), (('"abc"', '"\\u0061b\\u00e9"'),)),
    ("an empty path", _assistant(_call("read", {"path": ""}), _call("read", {"path": "b"})), ()),
    ("a path that is no string", _assistant(_call("read", {"path": 7}), _call("edit", {"path": ["p"]})), ()),
    ("arguments that are no object", _assistant(_call("read", ["path"]), _call("read", "path")), ()),
    ("no arguments", _assistant({"type": "toolCall", "id": "c", "name": "read"}), ()),
    (
        "other keys first",
        _assistant(_call("write", {"content": "x" * 300, "mode": {"a": [1]}, "path": "p"})),
        (),
    ),
    ("an escaped key", _assistant(_call("read", {"path": "p", "other": 1})), (('"other"', '"\\u006fther"'),)),
    (
        "path twice",
        _assistant(_call("read", {"path": "first"})),
        (('"path": "first"', '"path": "a", "path": "b"'),),
    ),
    ("many calls", _assistant(*(_call("read", {"path": f"m{k}"}) for k in range(20))), ()),
    ("the same path again", _assistant(_call("read", {"path": "s"}), _call("edit", {"path": "s"})), ()),
    ("a user's toolCall block", {"role": "user", "content": [_call("read", {"path": "u"})]}, ()),
    # a fraction in the arguments: the compiled scanner leaves the line to the parser, then reads the dict
    (
        "a parsed line",
        _assistant(
            _call("read", {"path": "d", "limit": 2.5}),
            _call("bash", {"path": "no"}),
            _call("edit", {"path": "e"}),
            _call("write", {"path": "w"}),
        ),
        (),
    ),
    (
        "a parsed line's odd calls",
        _assistant(
            _call("edit", {"x": 0.5, "path": ""}),
            {"type": "toolCall", "name": "write", "x": 0.5},
            {"type": "toolCall", "arguments": {"path": "nameless"}},
            _call("write", ["path"]),
            _call("edit", {"path": "é\n", "y": 1.5}),
            "not a block",
        ),
        (),
    ),
    (
        "a tool result's nested calls",
        {
            "role": "toolResult",
            "details": {"took": 0.25},
            "toolCallId": "c",
            "toolName": "bash",
            "content": [{"type": "text", "text": "ok"}],
            "nestedCalls": {"calls": [{"name": "write", "arguments": {"path": "n"}}]},
            "isError": False,
        },
        (),
    ),
    (
        "an assistant with nestedCalls",
        {**_assistant(_call("read", {"path": "r"})), "nestedCalls": {"calls": []}},
        (),
    ),
]

NESTED = next(m for why, m, _swaps in MESSAGES if why == "a tool result's nested calls")


def _write(tmp_path: Path, messages: list[tuple[dict[str, Any], tuple[tuple[str, str], ...]]]) -> Path:
    """pi's lines (8-hex ids, its timestamps: the compiled scanner's common shape), one per message."""
    lines = [json.dumps(HEADER)]
    for n, (msg, swaps) in enumerate(messages):
        entry = {
            "type": "message",
            "id": f"{n + 1:08x}",
            "parentId": f"{n:08x}" if n else None,
            "timestamp": "2025-01-01T00:00:00.000Z",
            "message": msg,
        }
        line = json.dumps(entry, ensure_ascii=False)
        for old, new in swaps:
            assert old in line
            line = line.replace(old, new)
        lines.append(line)
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def _parsed(f: Path, s: Session, i: int) -> Any:
    r = s.records[i]
    with open(f, "rb") as fh:
        fh.seek(r.offset)
        return orjson.loads(fh.read(r.length))["message"]


def test_the_index_keeps_what_the_parsed_message_holds(tmp_path: Path, bulk_loader: str) -> None:
    f = _write(tmp_path, [(m, swaps) for _why, m, swaps in MESSAGES])
    s = Session.open(f, keep_values=False, use_cache=False)
    t = s.records
    assert len(t) == len(MESSAGES)
    settled = 0
    for i, (why, _m, _swaps) in enumerate(MESSAGES):
        assert t.flags[i] & FILE_OP_CANDIDATE, why
        parsed = _parsed(f, s, i)
        if bulk_loader == "compiled" and why.startswith("a parsed line"):  # (what it stands for)
            r = t[i]
            assert (
                session_module.BULK_HELPER.scan_entry(f.read_bytes()[r.offset : r.offset + r.length]) is None
            )
        kept = t.file_ops.get(i)
        if why == "a tool result's nested calls":
            assert kept is None  # 1.6.0 reads them, 0.80.2 does not: read again, as the profile says
            continue
        if kept is None:  # left to the line's reading: only where the compiled scanner is unsure
            assert bulk_loader == "compiled" and why == "many calls", why
            continue
        settled += 1
        assert kept == message_file_ops(parsed), why
        for profile in (PROFILE_0_80_2, PROFILE_1_6_0):  # what a preparation adds for it
            direct, replayed = FileOps(), FileOps()
            direct.add_from_message(parsed, profile)
            t.file_ops.add_to([t.file_ops.positions([i])[0]], replayed)
            assert replayed == direct, (why, profile.version)
    assert settled >= len(MESSAGES) - 2
    # spot checks of the reference itself
    assert message_file_ops(MESSAGES[3][1]) == (0, 'C:\\src\\"q".py\n\t/é')
    assert t.file_ops.get(4) == (2, "abé")
    assert t.file_ops.get(5) == (0, "b") and t.file_ops.get(14) == ()
    assert t.file_ops.get(15) == (0, "d", 2, "e", 1, "w") and t.file_ops.get(16) == (2, "é\n")


def test_the_kept_operations_survive_the_cache_an_append_and_the_parallel_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_loader: str
) -> None:
    monkeypatch.setenv("SESSION_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SESSION_STUDIO_NO_INDEX_CACHE", raising=False)
    messages = [(m, swaps) for _why, m, swaps in MESSAGES]
    f = _write(tmp_path, messages * 3)
    fresh = Session.open(f, keep_values=False, use_cache=False)
    assert len(fresh.records.file_ops) >= 3 * (len(MESSAGES) - 4)
    Session.open(f, keep_values=False, use_cache=True)  # writes the cache
    warm = Session.open(f, keep_values=False, use_cache=True)
    assert warm.records.file_ops == fresh.records.file_ops
    assert warm.records.file_ops.paths  # (read from the cache, not made again)
    whole = _write(tmp_path, messages * 4)  # pi appended
    grown = Session.open(whole, keep_values=False, use_cache=True)
    assert grown.records.file_ops == Session.open(whole, keep_values=False, use_cache=False).records.file_ops
    par = Session.open(whole, keep_values=False, parallel=True, use_cache=False)
    assert par.records.file_ops == grown.records.file_ops


@pytest.mark.parametrize("projected", [False, True], ids=["0.80.2", "1.6.0"])
def test_a_long_history_reads_only_the_lines_the_index_did_not_settle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, projected: bool, bulk_loader: str
) -> None:
    messages: list[tuple[dict[str, Any], tuple[tuple[str, str], ...]]] = []
    for n in range(40):
        messages.append(({"role": "user", "content": f"step {n}"}, ()))
        messages.append((_assistant(_call(FILE_OP_TOOLS[n % 3], {"path": f"src/f{n % 7}.py"})), ()))
        messages.append((NESTED if n == 5 else {**NESTED, "nestedCalls": None}, ()))
    f = _write(tmp_path, messages)
    s = Session.open(f, keep_values=False, use_cache=False)
    path = s.path_indices(s.leaf_index())
    read: list[int] = []
    real_values = Session.values
    monkeypatch.setattr(Session, "values", lambda self, idx: read.extend(idx) or real_values(self, idx))
    monkeypatch.setattr(history, "LAZY_MIN_ENTRIES", 0)
    plan = plan_projected_compaction(s, path) if projected else plan_compaction(s, path)
    read.clear()
    prepared = plan.prepare(100)
    assert prepared is not None and len(prepared.messages_to_summarize) > 50
    # the tool results' nested calls (null but for one) are all the lines read again
    unsettled = [
        i
        for i in range(len(s.records))
        if s.records.flags[i] & FILE_OP_CANDIDATE and s.records.file_ops.get(i) is None
    ]
    assert unsettled and all(i % 3 == 2 for i in unsettled)
    # the history ends where the turn prefix (read as a list, with the kept part) starts
    end = prepared.first_kept_index - len(prepared.turn_prefix_messages)
    assert sorted({i for i in read if i < end}) == [i for i in unsettled if i < end]
    monkeypatch.setattr(history, "LAZY_MIN_ENTRIES", 10**9)  # the reference: every message parsed
    eager = (plan_projected_compaction(s, path) if projected else plan_compaction(s, path)).prepare(100)
    assert prepared.to_json()["fileOps"] == eager.to_json()["fileOps"]
    assert ("n" in eager.to_json()["fileOps"]["written"]) == projected  # the nested write: 1.6.0 only


def test_the_store_merges_forgets_and_checks_what_it_restores() -> None:
    a = FileOpIndex()
    a.add(2, (0, "x", 2, "y"))
    a.add(5, ())
    with pytest.raises(ValueError, match="record order"):
        a.add(5, (0, "z"))
    b = FileOpIndex()
    b.add(0, (1, "y", 0, "w"))
    c = a.copy()
    c.extend_from(b, 10)
    assert c.get(10) == (1, "y", 0, "w") and c.get(2) == (0, "x", 2, "y") and c.get(5) == ()
    assert c.get(3) is None and a.get(10) is None
    assert c.positions([10, 2, 5, 3, 2, 11, 5]) == [2, 0, 1, None, 0, None, 1]  # any order
    c.pop_record(10)
    assert c == a and c.get(10) is None
    restored = FileOpIndex.restore(list(a.paths), *a.columns())
    assert restored == a
    with pytest.raises(ValueError, match="no path"):
        FileOpIndex.restore(a.paths[:1], *a.columns())
    with pytest.raises(ValueError, match="fit together"):
        FileOpIndex.restore(list(a.paths), a.records, a.ends[:1], a.codes)
