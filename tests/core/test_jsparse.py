"""`js_json_parse` against `JSON.parse` (node 20), json.loads and orjson."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_studio.core.jsparse import js_json_parse

VALID: list[tuple[str, Any]] = [
    ("0", 0),
    ("-0", -0.0),
    ("1", 1),
    ("-1", -1),
    ("1.0", 1.0),
    ("1.5", 1.5),
    ("-1.5e-3", -0.0015),
    ("1e2", 100.0),
    ("1E+2", 100.0),
    ("1e-2", 0.01),
    ("0.1", 0.1),
    ("9007199254740992", 2**53),
    ("-9007199254740992", -(2**53)),
    ("9007199254740993", 2**53),  # rounds to the double 2**53
    ("9007199254740994", 9007199254740994.0),
    ("123456789012345678901234", 1.2345678901234568e23),
    ("18446744073709551616", 1.8446744073709552e19),
    ("1e400", math.inf),
    ("-1e400", -math.inf),
    ("1e-400", 0.0),
    ("0" + "." + "0" * 5000 + "1", 0.0),
    ("1" + "0" * 5000, math.inf),
    ("true", True),
    ("false", False),
    ("null", None),
    ('""', ""),
    ('"abc"', "abc"),
    ('"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\/\b\f\n\r\t'),
    ('"\\u0041\\u00e9\\u20AC"', "Aé€"),
    ('"\\u0000"', "\x00"),
    ('"\\ud800"', "\ud800"),
    ('"\\udc00"', "\udc00"),
    ('"\\ud83d\\ude00"', "😀"),
    ('"\\ud83d😀"', "\ud83d😀"),
    ('"\\ude00\\ud83d"', "\ude00\ud83d"),
    ('"\ud83d\\ude00"', "😀"),  # a literal high half and an escaped low half
    ('"\x7f\u2028\u2029\ufeff"', "\x7f\u2028\u2029\ufeff"),
    ("[]", []),
    ("{}", {}),
    (" \t\n\r[ 1 , 2 ]\r\n\t ", [1, 2]),
    ('{"a":1,"b":[true,false,null],"c":{"d":"e"}}', {"a": 1, "b": [True, False, None], "c": {"d": "e"}}),
    ('{"__proto__": 1}', {"__proto__": 1}),
    ('{"a": 1, "a": 2}', {"a": 2}),
    ('{"": 0}', {"": 0}),
    ("[[[]]]", [[[]]]),
    ('[{"a":[{"b":{}}]}]', [{"a": [{"b": {}}]}]),
]

INVALID: list[str] = [
    "",
    " ",
    "\ufeff1",
    "\xa01",
    "1\xa0",
    "\u20281",
    "01",
    "-01",
    "00",
    "1.",
    ".5",
    "1.e3",
    "1e",
    "1e+",
    "+1",
    "-",
    "--1",
    "0x10",
    "NaN",
    "Infinity",
    "-Infinity",
    "undefined",
    "tru",
    "True",
    "nul",
    "'a'",
    '"a',
    '"\\"',
    '"\\x41"',
    '"\\u12"',
    '"\\u12g4"',
    '"\\U0041"',
    '"\\',
    '"\t"',
    '"\n"',
    '"\x00"',
    '"\x1f"',
    "[",
    "]",
    "[1,]",
    "[,1]",
    "[1 2]",
    "[1,,2]",
    "{",
    "}",
    '{"a"}',
    '{"a":}',
    '{"a":1,}',
    '{"a" 1}',
    "{a:1}",
    "{'a':1}",
    '{"a":1 "b":2}',
    "{1:1}",
    "1 2",
    "[] []",
    "[]]",
    "{}}",
    "/* c */ 1",
    "1 // c",
    "\x0b1",
    "\x0c1",
    "[1]x",
    "nullx",
]


def _same(a: Any, b: Any) -> bool:
    """Deep equality that also tells int from float and -0.0 from 0.0 (iterative)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, float):
            if not (x == y or (math.isnan(x) and math.isnan(y))) or math.copysign(1, x) != math.copysign(
                1, y
            ):
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize(("text", "expected"), VALID)
def test_valid(text: str, expected: Any) -> None:
    assert _same(js_json_parse(text), expected)


@pytest.mark.parametrize("text", INVALID)
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="position"):
        js_json_parse(text)


def test_duplicate_key_keeps_first_position() -> None:
    value = js_json_parse('{"a": 1, "b": 2, "a": 3}')
    assert isinstance(value, dict)
    assert list(value.items()) == [("a", 3), ("b", 2)]


def test_big_integer_literals_do_not_hit_int_digit_limit() -> None:
    assert js_json_parse("9" * 10_000) == math.inf
    assert js_json_parse("-" + "1" * 300) == -float("1" * 300)


def _depth(value: Any) -> int:
    depth = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        depth += 1
    return depth


@pytest.mark.parametrize("depth", [2_500, pytest.param(100_000, marks=pytest.mark.slow)])
def test_deep_nesting(depth: int) -> None:
    arrays = js_json_parse("[" * depth + "1" + "]" * depth)
    assert _depth(arrays) == depth
    objects = js_json_parse('{"a":' * depth + "null" + "}" * depth)
    assert _depth(objects) == depth
    mixed = js_json_parse('[{"k":' * depth + "[]" + "}]" * depth)
    assert _depth(mixed) == 2 * depth
    with pytest.raises(ValueError):
        js_json_parse("[" * depth + "]" * (depth - 1))


_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=["Cs"]))
)
_json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children) | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"])), children)
    ),
    max_leaves=40,
)


@pytest.mark.slow  # seconds of work: the parallel stage (./scripts/test oracle)
@given(_json_values, st.booleans(), st.sampled_from([None, 0, 2, "\t"]))
def test_round_trips_json_dumps(value: Any, ascii_only: bool, indent: int | str | None) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    parsed = js_json_parse(text)
    assert _same(parsed, json.loads(text))
    assert _same(parsed, orjson.loads(text))


@given(st.text(st.characters(categories=["Cs", "Ll", "Lu", "Nd", "So", "Cc", "Zs"])))
def test_lone_surrogates_survive(s: str) -> None:
    # json.dumps escapes surrogate halves; JSON.parse pairs adjacent halves into one code point.
    expected = s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    assert js_json_parse(json.dumps(s)) == expected


@given(st.text(alphabet=st.sampled_from(list('[]{}",:01-.eE+ \t\n\\tfnrulsab')), max_size=30))
def test_agrees_with_json_loads_on_near_json(text: str) -> None:
    # On this alphabet Python's json module is exactly as strict as JSON.parse; its
    # numbers are compared as doubles.
    try:
        expected: Any = json.loads(text, parse_int=float)
    except ValueError:
        with pytest.raises(ValueError):
            js_json_parse(text)
        return
    assert js_json_parse(text) == expected


# --- differential test against node -------------------------------------------------

_NODE = shutil.which("node")

# Prints, per text, null when JSON.parse throws, else a flat token list (iterative, so
# 100 000 levels are fine): "[", "]", "{", "}", ["k", key], ["s", str], ["n", num], ["b", bool], ["z"].
_NODE_SCRIPT = r"""
const fs = require('fs');
const texts = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
class Key { constructor(k) { this.k = k; } }
const END_A = {}, END_O = {};
function tokens(root) {
  const out = [];
  const stack = [root];
  while (stack.length) {
    const v = stack.pop();
    if (v === END_A) out.push(']');
    else if (v === END_O) out.push('}');
    else if (v instanceof Key) out.push(['k', v.k]);
    else if (Array.isArray(v)) {
      out.push('['); stack.push(END_A);
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      out.push('{'); stack.push(END_O);
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) { stack.push(v[keys[i]]); stack.push(new Key(keys[i])); }
    } else if (typeof v === 'string') out.push(['s', v]);
    else if (typeof v === 'number') out.push(['n', Object.is(v, -0) ? '-0' : String(v)]);
    else if (typeof v === 'boolean') out.push(['b', v]);
    else out.push(['z']);
  }
  return out;
}
const out = texts.map((t) => { let v; try { v = JSON.parse(t); } catch (e) { return null; } return tokens(v); });
process.stdout.write(JSON.stringify(out));
"""


def _is_array_index(k: str) -> bool:
    return k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1


def _py_tokens(root: Any) -> list[Any]:
    """The node script's token list for a parsed value, keys in JavaScript's property order."""
    out: list[Any] = []
    end_a, end_o = object(), object()
    stack: list[Any] = [root]
    while stack:
        v = stack.pop()
        if v is end_a:
            out.append("]")
        elif v is end_o:
            out.append("}")
        elif isinstance(v, tuple):
            out.append(["k", v[0]])
        elif isinstance(v, list):
            out.append("[")
            stack.append(end_a)
            stack.extend(reversed(v))
        elif isinstance(v, dict):
            out.append("{")
            stack.append(end_o)
            index_keys = sorted((k for k in v if _is_array_index(k)), key=int)
            keys = index_keys + [k for k in v if not _is_array_index(k)]
            for k in reversed(keys):
                stack.append(v[k])
                stack.append((k,))
        elif isinstance(v, bool):
            out.append(["b", v])
        elif isinstance(v, (int, float)):
            assert not isinstance(v, int) or abs(v) <= 2**53
            out.append(["n", repr(float(v))])
        elif isinstance(v, str):
            out.append(["s", v])
        else:
            assert v is None
            out.append(["z"])
    return out


def _node_number(tok: list[Any]) -> list[Any]:
    if isinstance(tok, list) and tok[0] == "n":
        return ["n", repr(float(tok[1]))]
    return tok


def _json_corpus() -> list[str]:
    corpus = [text for text, _ in VALID] + INVALID
    corpus += [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "0" + "}" * 100_000,
        "[" * 2_600 + '"x"' + "]" * 2_600,
        "[" * 5_000 + "]" * 4_999,
        '{"b":1,"a":2,"1":3,"0":4,"b":5,"01":6,"4294967294":7,"4294967295":8,"-1":9}',
        '{"a":{"x":1},"a":[2]}',
        '{"__proto__":{"x":1},"constructor":2,"toString":3,"hasOwnProperty":4}',
        '["\\ud800\\udc00", "\\udbff\\udfff", "\\ud800\\u0041", "\\udc00\\ud800"]',
        '"\\ud800"',
        '"\ud800"',
        '"\\uD83D\\uDE00"',
        '"\\u00"',
        "[1e308, 1.7976931348623157e308, 1.7976931348623159e308, 5e-324, 2.4703282292062327e-324, 2.4703282292062328e-324]",
        "[0.1, 0.2, 0.30000000000000004, 1.0000000000000002, 9007199254740993.0, 1e21, 1e-7, 123e-2]",
        "[-0, -0.0, 0e10, -0e-10, 0.0]",
        "[9007199254740991, 9007199254740993, -9007199254740993, 9007199254740995, 18014398509481985]",
        "[99999999999999999999999999999999999999999, 100000000000000000000000]",
        "[2.5e-1, 25E-2, 0.25e0, 2.50]",
        '{"a":1}\n',
        '\n\r\t {"a" \n:\r 1 \t}',
        '"\x7f\x80\xff\u0100\ufffe\uffff"',
        '"\U0001f600"',
        '"\\/"',
        "[true,false,null]",
        "[true , false , null]",
        "[truefalse]",
        '{"a":1,\n}',
        "[1,]",
        "\u00a0[]",
        "[]\u00a0",
        "[]\x00",
        "\x00",
        '"\\u0000\\u001f\\u007f"',
        '{"":"", "": 1}',
        '{"\\u0061": 1, "a": 2}',
        "[" + ",".join(str(i) for i in range(2000)) + "]",
        "{" + ",".join(f'"{i}":{i}' for i in range(300, 0, -1)) + "}",
    ]
    corpus += _mutations(random.Random(42), 3000)
    return corpus


def _mutations(rng: random.Random, count: int) -> list[str]:
    """Valid documents with one character inserted, deleted or replaced: mostly near-misses."""
    seeds = [
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","n":[1,2.5,-3e2]}',
        '[{"a":"\\u00e9\\n"},[],{},true,false,null,0,-0.5e-1]',
        '{"k":{"k":{"k":[1,{"z":"\\ud83d\\ude00"}]}}}',
    ]
    alphabet = list('{}[]":,.-+eE0123456789 \t\n\r\\utfnlrsa\x00\x1f\xa0\ufeff\ud800/x')
    out = []
    for _ in range(count):
        s = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(s) + 1)
            op = rng.randrange(3)
            if op == 0:
                s = s[:i] + rng.choice(alphabet) + s[i:]
            elif op == 1:
                s = s[:i] + s[i + 1 :]
            else:
                s = s[:i] + rng.choice(alphabet) + s[i + 1 :]
        out.append(s)
    return out


@pytest.mark.oracle
@pytest.mark.skipif(_NODE is None, reason="node is not on PATH")
def test_against_node(tmp_path: Path) -> None:
    corpus = _json_corpus()
    path = tmp_path / "texts.json"
    path.write_text(json.dumps(corpus), encoding="ascii")
    assert _NODE is not None
    proc = subprocess.run(
        [_NODE, "--stack-size=4000", "-e", _NODE_SCRIPT, str(path)],
        capture_output=True,
        check=True,
        env={**os.environ, "TZ": "UTC"},
        timeout=300,
    )
    expected = json.loads(proc.stdout.decode("utf-8"))
    assert len(expected) == len(corpus)
    accepted = 0
    mismatches = []
    for text, want in zip(corpus, expected, strict=True):
        try:
            got: Any = _py_tokens(js_json_parse(text))
        except ValueError:
            got = None
        if want is not None:
            accepted += 1
            want = [_node_number(tok) for tok in want]
        if got != want:
            mismatches.append((text[:200], str(want)[:200], str(got)[:200]))
    assert not mismatches, mismatches[:10]
    assert accepted > 200  # the corpus exercises both outcomes
