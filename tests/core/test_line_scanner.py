"""The compiled loader's line scanner (core/_bulkindex.c scan_entry / index_scanned): a record's
facts read from a line's bytes, without building its value. Wherever it gives them, they are the
facts of the value JSON.parse makes of the line (type, role, id, parentId, timestamp, pi's token
estimate, the assistant's usage tokens); everything else it leaves to the parsed way."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from session_studio.core import Session
from session_studio.core import session as session_module
from session_studio.core.file_ops import may_hold_file_op
from session_studio.core.jsparse import js_json_parse
from session_studio.core.record_table import COLUMNS, pack_timestamp
from session_studio.core.tokens import _estimate_tokens_exact, assistant_usage_tokens
from tests.conftest import generate
from tests.core.entry_strategies import BLOCK, JSON, MESSAGE, NUMBER, TEXT

HELPER = session_module.BULK_HELPER
pytestmark = pytest.mark.skipif(HELPER is None, reason="the compiled loader helper is not built")

_HEX8 = "0123456789abcdef"
_ID = st.one_of(
    st.text(alphabet=_HEX8, min_size=8, max_size=8),
    st.sampled_from(["0000000A", "e1", "", "0000000g", "abcdef012"]),
    st.integers(0, 9),
)
_STAMP = st.one_of(
    st.just("2025-10-19T22:39:25.412Z"),
    st.sampled_from(["2025-10-19T22:39:25Z", "2025-10-19 22:39:25.412Z", "", "9999-99-99T99:99:99.999Z"]),
    st.integers(0, 3),
)
_TOKENS = st.integers(0, 10**6)
_USAGE = st.one_of(
    st.fixed_dictionaries({"totalTokens": _TOKENS}, optional={"input": _TOKENS, "cost": JSON}),
    st.fixed_dictionaries(
        {k: _TOKENS for k in ("input", "output", "cacheRead", "cacheWrite")},
        optional={"totalTokens": st.sampled_from([0, None])},
    ),
    st.fixed_dictionaries(
        {},
        optional={
            k: st.one_of(
                st.integers(-3, 10**6), st.integers(10**15, 10**17), NUMBER, st.none(), st.text(max_size=2)
            )
            for k in ("totalTokens", "input", "output", "cacheRead", "cacheWrite")
        },
    ),
    JSON,
)
_STOP = st.sampled_from(["stop", "aborted", "error", "toolUse", 3, None])
#: messages of pi's usual shapes (a role, content), with odd members now and then
_WORDS = st.text(max_size=60)
#: tool arguments the scanner measures itself: strings, short integers, booleans, null, nested
_PLAIN_JSON = st.recursive(
    st.one_of(st.integers(-(10**15) + 1, 10**15 - 1), st.text(max_size=12), st.booleans(), st.none()),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=4), kids, max_size=3)
    ),
)
_USUAL_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _WORDS}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _WORDS}, optional={"signature": _WORDS}),
    st.fixed_dictionaries(
        {
            "type": st.just("toolCall"),
            "id": _WORDS,
            # the file tools' names now and then: their calls mark the record (FILE_OP_CANDIDATE)
            "name": st.one_of(
                st.sampled_from(["read", "write", "edit", "bash", "Read", "edit "]), st.text(max_size=10)
            ),
            "arguments": st.dictionaries(st.text(max_size=6), st.one_of(_PLAIN_JSON, JSON), max_size=4),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.text(max_size=8), "mimeType": st.just("image/png")}
    ),
)
_USUAL_MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "assistant", "toolResult", "custom", "bashExecution"]),
        "content": st.one_of(_WORDS, st.lists(_USUAL_BLOCK, max_size=4), st.lists(BLOCK, max_size=3), TEXT),
        "usage": _USAGE,
    },
    optional={"stopReason": _STOP, "command": _WORDS, "output": TEXT, "summary": _WORDS, "nestedCalls": JSON},
)
_PI_ID = st.text(alphabet=_HEX8, min_size=8, max_size=8)
_PI_STAMP = st.tuples(st.integers(1970, 2099), st.integers(0, 999)).map(
    lambda t: f"{t[0]}-10-19T22:39:25.{t[1]:03d}Z"
)
#: entries as pi writes them (what the scanner reads), and ones with odd or missing fields
_ENTRY = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["message", "message", "model_change", "custom", "compaction"]),
            "id": _PI_ID,
            "parentId": st.one_of(_PI_ID, st.none()),
            "timestamp": _PI_STAMP,
            "message": _USUAL_MESSAGE,
        },
        optional={"extra": JSON},
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["message", "model_change", "custom", "compaction", "session", "label", 5]
            ),
            "id": _ID,
            "parentId": st.one_of(_ID, st.none()),
            "timestamp": _STAMP,
            "message": st.one_of(MESSAGE, _USUAL_MESSAGE, JSON),
            "extra": JSON,
        },
    ),
)


_COMMON = {
    "type": "message",
    "id": "0000000a",
    "parentId": "0000000b",
    "timestamp": "2025-10-19T22:39:25.412Z",
}


def _serialized(value: dict[str, Any], style: int) -> bytes:
    """A line as pi writes it (JSON.stringify: UTF-8, compact) or as another writer might."""
    if style == 0:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:  # a lone surrogate: escaped instead
            return json.dumps(value, separators=(",", ":")).encode()
    if style == 1:
        return json.dumps(value).encode()  # ASCII with \\u escapes, ", " and ": "
    return (" " + json.dumps(value, indent=1, ensure_ascii=False) + "\t").encode("utf-8", "surrogatepass")


def _reference(line: bytes) -> tuple[Any, ...]:
    """The facts of the value JSON.parse makes of ``line``, computed the general way."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        value = js_json_parse(line.decode("utf-8"))
    assert type(value) is dict
    typ = value["type"]
    role, tokens, usage, file_op = None, 0, None, False
    if typ == "message":
        message = value["message"]
        role = message["role"]
        tokens = _estimate_tokens_exact(message)
        usage = assistant_usage_tokens(message) if role == "assistant" else None
        file_op = may_hold_file_op(message)
    parent = value["parentId"]
    stamp = pack_timestamp(value["timestamp"])
    return (
        typ,
        role,
        int(value["id"], 16),
        None if parent is None else int(parent, 16),
        stamp,
        tokens,
        usage,
        file_op,
    )


def _check(line: bytes) -> tuple[Any, ...] | None:
    assert HELPER is not None
    got = HELPER.scan_entry(line)
    if got is not None:
        assert got == _reference(line), line
    return got


@settings(max_examples=600, deadline=None)
@given(_ENTRY, st.integers(0, 2))
@example(
    {
        "type": "message",
        "id": "0000000a",
        "parentId": None,
        "timestamp": "2025-10-19T22:39:25.412Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "name": "n", "arguments": {"a": -0}}],
        },
    },
    0,
)
@example(
    {
        "type": "message",
        "id": "0000000a",
        "parentId": None,
        "timestamp": "2025-10-19T22:39:25.412Z",
        "message": {"role": "user", "content": 'é😀\u2028\x01"\\'},
    },
    1,
)
def test_scanned_facts_are_the_parsed_values(entry: dict[str, Any], style: int) -> None:
    _check(_serialized(entry, style))


@settings(max_examples=300, deadline=None)
@given(st.lists(_USUAL_BLOCK, max_size=5), _USAGE, _STOP, st.integers(0, 2))
def test_an_assistants_blocks_and_usage_scan_as_parsed(
    blocks: list[dict[str, Any]], usage: Any, stop: Any, style: int
) -> None:
    """Text, thinking, tool calls (their arguments measured as JSON.stringify prints them), images."""
    message = {"role": "assistant", "content": blocks, "usage": usage, "stopReason": stop}
    _check(_serialized({**_COMMON, "message": message}, style))


@settings(max_examples=300, deadline=None)
@given(_ENTRY, st.integers(0, 2), st.randoms(use_true_random=False))
def test_damaged_lines_are_scanned_right_or_not_at_all(
    entry: dict[str, Any], style: int, rnd: random.Random
) -> None:
    """A byte changed, dropped or doubled, or the line cut short: the scanner never reads a line
    JSON.parse rejects, nor reads another value than it."""
    line = bytearray(_serialized(entry, style))
    if not line:
        return
    at = rnd.randrange(len(line))
    what = rnd.randrange(4)
    if what == 0:
        line[at] = rnd.choice(b'{}[]",:\\ 0a\xff\x80\xc3\x01')
    elif what == 1:
        del line[at]
    elif what == 2:
        line.insert(at, line[at])
    else:
        del line[at:]
    data = bytes(line)
    assert HELPER is not None
    got = HELPER.scan_entry(data)
    if got is None:
        return
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        js_json_parse(data.decode("utf-8"))  # raises for a line JSON.parse rejects
    _check(data)


_COMMON = {
    "type": "message",
    "id": "0000000a",
    "parentId": "0000000b",
    "timestamp": "2025-10-19T22:39:25.412Z",
}


@pytest.mark.parametrize(
    "line",
    [
        # a key that matters twice (JSON.parse keeps the last) or escaped
        b'{"type":"message","type":"custom","id":"0000000a","parentId":null,"timestamp":"2025-10-19T22:39:25.412Z"}',
        b'{"\\u0074ype":"custom","id":"0000000a","parentId":null,"timestamp":"2025-10-19T22:39:25.412Z"}',
        # tool arguments with a key twice, a float, a long integer, an escaped surrogate pair
        *(
            orjson.dumps(
                {
                    **_COMMON,
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "toolCall", "name": "n", "arguments": {"a": 1}}],
                    },
                }
            ).replace(b'{"a":1}', args)
            for args in (
                b'{"a":1,"a":22}',
                b'{"a":1.5}',
                b'{"a":12345678901234567}',
                b'{"a":"\\ud83d\\ude00"}',
            )
        ),
        # a tool call's name written with an escape (it may spell a file tool's)
        orjson.dumps(
            {
                **_COMMON,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "name": "rea", "arguments": {}}],
                },
            }
        ).replace(b'"rea"', b'"re\\u0061d"'),
        # invalid UTF-8, a raw control character, nesting past the scanner's depth
        b'{"type":"custom","id":"0000000a","parentId":null,"timestamp":"2025-10-19T22:39:25.412Z","x":"\xff"}',
        b'{"type":"custom","id":"0000000a","parentId":null,"timestamp":"2025-10-19T22:39:25.412Z","x":"\x01"}',
        orjson.dumps({**_COMMON, "x": json.loads("[" * 80 + "]" * 80)}),
    ],
)
def test_what_the_scanner_leaves_to_the_parsed_way(line: bytes) -> None:
    assert HELPER is not None
    assert HELPER.scan_entry(line) is None


def test_most_lines_of_a_generated_session_are_scanned(tmp_path: Path) -> None:
    """Not a scanner that gives up on everything: pi's usual entries are read from their bytes."""
    (f,) = generate(tmp_path, "--seed", "7411", "--count", "1", "--size", "medium")
    lines = [line for line in f.read_bytes().split(b"\n")[1:] if line]
    scanned = [line for line in lines if _check(line) is not None]
    assert len(scanned) >= 0.9 * len(lines), (len(scanned), len(lines))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(_ENTRY, st.integers(0, 2), st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\n \n"])),
        max_size=30,
    )
)
def test_a_file_of_such_lines_indexes_as_without_the_compiled_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[tuple[dict[str, Any], int, bytes]]
) -> None:
    """Whole files, scanned lines among parsed, damaged and blank ones: the same columns, issues and
    facts as the Python loader's."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-10-19T22:39:25.412Z","cwd":"/"}\n'
    f = tmp_path / "s.jsonl"
    f.write_bytes(header + b"".join(_serialized(e, style) + end for e, style, end in lines))
    compiled = Session.open(f, keep_values=False, use_cache=False, parallel=False)
    monkeypatch.setattr(session_module, "BULK_HELPER", None)
    python = Session.open(f, keep_values=False, use_cache=False, parallel=False)
    for name in COLUMNS:  # as bytes: a NaN estimate (pi's, for odd content) is NaN in both
        assert getattr(compiled.records, name).tobytes() == getattr(python.records, name).tobytes(), name
    assert compiled.records.symbols == python.records.symbols
    assert [vars(i) if hasattr(i, "__dict__") else repr(i) for i in compiled.issues] == [
        vars(i) if hasattr(i, "__dict__") else repr(i) for i in python.issues
    ]
