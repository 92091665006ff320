"""js_stringify: JSON.stringify's escapes and key order, and the streamed form the CLI prints."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_studio.core import jsvalue
from session_studio.core.jsvalue import js_stringify, js_stringify_to

#: the characters that matter to the escapes: quote, backslash, controls, DEL, lone surrogates,
#: a pair (one code point here), the line separators JSON.stringify leaves alone
TRICKY = st.sampled_from(
    ['"', "\\", "\n", "\t", "\b", "\x00", "\x1f", "\x7f", "\ud800", "\udfff", "😀", "\u2028"]
)
TEXT = st.lists(st.one_of(TRICKY, st.characters()), max_size=30).map("".join)
KEYS = st.one_of(TEXT, st.sampled_from(["0", "1", "10", "01", "4294967295", "a", "role"]))
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(allow_nan=True), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=30,
)


def _reference_quote(s: str) -> str:
    """JSON.stringify of a string, a character at a time (ES2019's well-formed stringify)."""
    out = []
    for c in s:
        n = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif c in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[c])
        elif n < 0x20 or 0xD800 <= n < 0xE000:
            out.append(f"\\u{n:04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_strings_are_escaped_as_json_stringify_escapes_them(s: str) -> None:
    assert js_stringify(s) == _reference_quote(s)


def test_array_index_keys_come_first_in_numeric_order_as_in_javascript() -> None:
    assert js_stringify({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5}) == '{"2":4,"10":2,"b":1,"a":3,"01":5}'
    # the same key set again (remembered) and one without index keys
    assert js_stringify({"b": 0, "10": 0, "a": 0, "2": 0, "01": 0}) == '{"2":0,"10":0,"b":0,"a":0,"01":0}'
    assert js_stringify({"b": 1, "a": 2}) == '{"b":1,"a":2}'


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_the_streamed_text_is_the_whole_text(value: Any) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsvalue, "SPILL_PIECES", 3)  # many small parts
        parts: list[str] = []
        assert js_stringify_to(value, parts.append)
    assert "".join(parts) == js_stringify(value)


def test_undefined_writes_nothing() -> None:
    parts: list[str] = []
    assert not js_stringify_to(jsvalue.UNDEFINED, parts.append)
    assert parts == []
