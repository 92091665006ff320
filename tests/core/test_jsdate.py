"""`js_date_ms` / `js_to_iso_string` against node 20's `new Date(...)` (TZ=UTC)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_studio.core import jsdate
from session_studio.core.jsdate import js_date_ms, js_to_iso_string, now_iso
from session_studio.core.jsvalue import UNDEFINED, JsTypeError

NAN = None
MAX_TIME = 8_640_000_000_000_000
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

# Expected values were produced by node v20 with TZ=UTC.
STRING_TABLE: list[tuple[str, int | None]] = [
    ("2025-01-01T12:34:56.789Z", 1735734896789),
    ("2025-01-01T12:34:56Z", 1735734896000),
    ("2025-01-01T12:34Z", 1735734840000),
    ("2025-01-01T12:34:56.7Z", 1735734896700),
    ("2025-01-01T12:34:56.789123Z", 1735734896789),
    ("2025-01-01T12:34:56.000000000001Z", 1735734896000),
    ("2025-01-01", 1735689600000),
    ("2025-01", 1735689600000),
    ("2025", 1735689600000),
    ("2025-01-01T12:34:56.789+02:00", 1735727696789),
    ("2025-01-01T12:34:56.789-0530", 1735754696789),
    ("2025-01-01T12:34:56", 1735734896000),
    ("+002025-01-01T00:00:00Z", 1735689600000),
    ("-000001-01-01T00:00:00Z", -62198755200000),
    ("-000000-01-01T00:00:00Z", NAN),
    ("2024-02-29", 1709164800000),
    ("2023-02-29", 1677628800000),
    ("2025-02-30", 1740873600000),
    ("2025-02-31", 1740960000000),
    ("2025-02-32", NAN),
    ("2025-13-01", NAN),
    ("2025-00-01", NAN),
    ("2025-01-01T24:00:00Z", 1735776000000),
    ("2025-01-01T24:00:01Z", NAN),
    ("2025-01-01T23:60:00Z", NAN),
    ("2025-01-01T12:34:56.789z", 1735734896789),
    ("2025-01-01t12:34:56.789Z", 1735734896789),
    ("2025-6-1", 1748736000000),
    ("2025-06-01 12:00:00", 1748779200000),
    ("2025-06-01 12:00:00Z", 1748779200000),
    ("2025-06-01 12:00:00 +0200", 1748772000000),
    ("Jun 1 2025", 1748736000000),
    ("June 1, 2025 10:00 PM", 1748815200000),
    ("Sun, 01 Jun 2025 12:00:00 GMT", 1748779200000),
    ("Sun Jun 01 2025 12:00:00 GMT+0000 (Coordinated Universal Time)", 1748779200000),
    ("2025/06/01", 1748736000000),
    ("6/1/2025", 1748736000000),
    ("6/1", 991353600000),
    ("Jun 1", 991353600000),
    ("1 June 25", 1748736000000),
    ("12/31/99", 946598400000),
    ("2025-06-01 25:00", NAN),
    ("2025-06-01 24:00", 1748822400000),
    ("2025-06-01 12:00 am", 1748736000000),
    ("2025-06-01 12:00 pm", 1748779200000),
    ("2025-06-01 13:00 pm", NAN),
    ("2025-06-01T12:00:00.123456789+01:00", 1748775600123),
    (" 2025-01-01", 1735689600000),
    ("2025-01-01 ", 1735689600000),
    ("2025-01-01T12:00:00Z ", NAN),
    ("", NAN),
    (" ", NAN),
    ("garbage", NAN),
    ("1735689600000", NAN),
    ("0", 946684800000),
    ("2025-01-01T12:00:00 EST", NAN),
    ("2025-01-01 12:00:00 PDT", 1735758000000),
    ("2025-01-01 12:00 UTC+5", 1735714800000),
    ("+275760-09-13T00:00:00Z", 8640000000000000),
    ("+275760-09-13T00:00:00.001Z", NAN),
    ("-271821-04-20T00:00:00Z", -8640000000000000),
    ("-271821-04-19T23:59:59.999Z", NAN),
    ("1970-01-01T00:00:00Z", 0),
    ("1969-12-31T23:59:59.999Z", -1),
    ("0000-01-01", -62167219200000),
    ("0099-12-31", -59011545600000),
    ("2025-01-01T12:00:00+24:00", NAN),
    ("2025-01-01T12:00:00+23:59", 1735646460000),
    ("2025-01-01 12:00:00 (comment) GMT", 1735732800000),
    ("2025-01-01\x0012:00", 1735689600000),
    ("\u00a02025-01-01", 1735689600000),
    ("2025-01-01T1:00:00Z", NAN),
    ("2025-01-01 00:00 +596523:00", -411793200000),  # offset overflows 32-bit unsigned math
]

VALUE_TABLE: list[tuple[Any, int | None]] = [
    (None, 0),
    (True, 1),
    (False, 0),
    (UNDEFINED, NAN),
    (0, 0),
    (-0.0, 0),
    (1735689600000, 1735689600000),
    (1.9, 1),
    (-1.9, -1),
    (-0.5, 0),
    (MAX_TIME, MAX_TIME),
    (-MAX_TIME, -MAX_TIME),
    (MAX_TIME + 1, NAN),
    (8.64e15 + 2, NAN),
    (10**400, NAN),
    (math.inf, NAN),
    (math.nan, NAN),
    ([], NAN),
    (["2025-01-01"], 1735689600000),
    ([2025, 1, 1], 1735689600000),
    ([[2025], [1, [1]]], 1735689600000),
    ([1735689600000], NAN),
    ([None], NAN),
    ({}, NAN),
    ({"a": 1}, NAN),
]


def _ms(v: int | None) -> float | None:
    return None if v is None else float(v)


@pytest.mark.parametrize(("text", "expected"), STRING_TABLE)
def test_strings(text: str, expected: int | None) -> None:
    assert js_date_ms(text) == _ms(expected)


@pytest.mark.parametrize(("value", "expected"), VALUE_TABLE)
def test_values(value: Any, expected: int | None) -> None:
    got = js_date_ms(value)
    assert got == _ms(expected)
    if got is not None:
        assert type(got) is float
        assert got != 0 or math.copysign(1.0, got) == 1.0  # never -0


@pytest.mark.parametrize("value", [{"toString": 1}, {"toString": None, "valueOf": 2}, [{"toString": "x"}]])
def test_objects_shadowing_to_string_throw(value: Any) -> None:
    with pytest.raises(JsTypeError):
        js_date_ms(value)


def test_deep_array_does_not_recurse() -> None:
    value: list[Any] = ["2025-01-01"]
    for _ in range(20_000):
        value = [value]
    assert js_date_ms(value) == 1735689600000.0


def test_fast_path_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(_: str) -> int | None:
        raise AssertionError("slow path used")

    monkeypatch.setattr(jsdate, "_parse_string", boom)
    assert js_date_ms("2025-01-01T12:34:56.789Z") == 1735734896789.0
    assert js_date_ms("1900-03-01T00:00:00.000Z") == -2203891200000.0


_iso_datetimes = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59))


@given(_iso_datetimes)
def test_fast_path_matches_full_parser_and_datetime(d: dt.datetime) -> None:
    text = (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}."
        f"{d.microsecond // 1000:03d}Z"
    )
    expected = (d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=dt.UTC) - EPOCH) // dt.timedelta(
        milliseconds=1
    )
    assert js_date_ms(text) == float(expected)
    assert jsdate._parse_string(text) == expected
    assert js_to_iso_string(expected) == text


@given(st.integers(-MAX_TIME, MAX_TIME))
def test_iso_round_trip(ms: int) -> None:
    text = js_to_iso_string(ms)
    assert js_date_ms(text) == float(ms)
    assert js_to_iso_string(float(ms)) == text


@given(st.integers(-62135596800000, 253402300799999))  # the years 1..9999 datetime covers
def test_iso_string_matches_datetime(ms: int) -> None:
    d = EPOCH + dt.timedelta(milliseconds=ms)
    expected = (
        f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}."
        f"{d.microsecond // 1000:03d}Z"
    )
    assert js_to_iso_string(ms) == expected


@pytest.mark.parametrize(
    ("ms", "expected"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (1735734896789.9, "2025-01-01T12:34:56.789Z"),
        (-0.0, "1970-01-01T00:00:00.000Z"),
        (MAX_TIME, "+275760-09-13T00:00:00.000Z"),
        (-MAX_TIME, "-271821-04-20T00:00:00.000Z"),
        (-62198755200000, "-000001-01-01T00:00:00.000Z"),
        (-62167219200000, "0000-01-01T00:00:00.000Z"),
        (253402300800000, "+010000-01-01T00:00:00.000Z"),
    ],
)
def test_to_iso_string(ms: float, expected: str) -> None:
    assert js_to_iso_string(ms) == expected


@pytest.mark.parametrize("ms", [math.nan, math.inf, -math.inf, MAX_TIME + 1, 8.64e15 + 2, -MAX_TIME - 1])
def test_to_iso_string_rejects(ms: float) -> None:
    with pytest.raises(ValueError):
        js_to_iso_string(ms)


def test_now_iso() -> None:
    import time

    before = time.time_ns() // 1_000_000
    text = now_iso()
    after = time.time_ns() // 1_000_000
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text)
    ms = js_date_ms(text)
    assert ms is not None and before <= ms <= after


# --- differential test against node -------------------------------------------------

_NODE = shutil.which("node")

_NODE_SCRIPT = r"""
const fs = require('fs');
const cases = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const special = {NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity, '-0': -0};
const out = cases.map((c) => {
  const v = 'u' in c ? undefined : 'num' in c ? special[c.num] : c.v;
  try {
    const t = new Date(v).getTime();
    return Number.isNaN(t) ? null : t;
  } catch (e) {
    return e instanceof TypeError ? 'TypeError' : 'error: ' + e;
  }
});
process.stdout.write(JSON.stringify(out));
"""


def _date_corpus() -> list[Any]:
    corpus: list[Any] = [text for text, _ in STRING_TABLE]
    corpus += [value for value, _ in VALUE_TABLE]
    corpus += [
        "2025-01-01T00:00:00.000+00:00",
        "2025-01-01T00:00:00.000-00:00",
        "2025-01-01T00:00:00.000+14:00",
        "2025-01-01T00:00:00.000-12:00",
        "2025-01-01T00:00:00+01",
        "2025-01-01T00:00:00+1:00",
        "2025-01-01T00:00:00+01:0",
        "2025-01-01T00:00:00+01:60",
        "2025-01-01T00:00:00+2400",
        "2025-01-01T00:00:00.Z",
        "2025-01-01T00:00:00,123Z",
        "2025-01-01T00:00:60Z",
        "2025-01-01T00Z",
        "2025-01-01T",
        "2025-01-01T00:00:00ZZ",
        "2025-01-01TZ",
        "2025-01-01T24:00Z",
        "2025-01-01T24:00:00.000Z",
        "2025-01-01T24:00:00.001Z",
        "2025-12-31T24:00:00Z",
        "1900-02-29",
        "2000-02-29",
        "2100-02-29",
        "2400-02-29",
        "1600-02-29T12:00:00Z",
        "2025-04-31",
        "2025-06-31T00:00:00Z",
        "2025-11-31",
        "2025-01-32",
        "2025-01-00",
        "2025-1-01",
        "2025-01-1",
        "25-01-01",
        "025-01-01",
        "02025-01-01",
        "20250101",
        "20250101T000000Z",
        "2025-0101",
        "2025-01-01T0000",
        "2025-01-01T00:0000",
        "2025-01-01T00:00:00.000000000000000000000000001Z",
        "2025-01-01T00:00:00.9999Z",
        "2025-01-01T00:00:00.0001234567891Z",
        "2025-01-01T00:00:00.0000000001234567Z",
        "+020000-01-01",
        "+099999-12-31T23:59:59.999Z",
        "+999999-01-01",
        "-999999-01-01",
        "-000001-12-31",
        "+000000-01-01",
        "+00000-01-01",
        "+0000001-01-01",
        "+275760-09-13T00:00:00",
        "+275760-09-13T00:00:00.001",
        "+275760-09-12T23:59:59.999-00:01",
        "-271821-04-20T00:00:00+00:01",
        "-271821-04-19T23:00:00-01:00",
        "-271821-04-19",
        "Jan 1 2025",
        "January 1, 2025",
        "1 Jan 2025",
        "1-Jan-2025",
        "Jan-1-2025",
        "2025 Jan 1",
        "2025-Jan-01",
        "Janx 1 2025",
        "Ja 1 2025",
        "Wed Jan 01 2025",
        "Wednesday, January 1, 2025 3:04:05 PM",
        "Wed, 01 Jan 2025 00:00:00 +0000",
        "Wed, 01 Jan 2025 00:00:00 -0800",
        "Wed, 01 Jan 2025 00:00:00 +08",
        "Wed, 01 Jan 2025 00:00:00 +8",
        "Wed, 01 Jan 2025 00:00:00 +830",
        "Wed, 01 Jan 2025 00:00:00 +12345",
        "Wed, 01 Jan 2025 00:00:00 GMT+1",
        "Wed, 01 Jan 2025 00:00:00 GMT-08:30",
        "Wed, 01 Jan 2025 00:00:00 UT",
        "Wed, 01 Jan 2025 00:00:00 UTC",
        "Wed, 01 Jan 2025 00:00:00 Z",
        "Wed, 01 Jan 2025 00:00:00 EDT",
        "Wed, 01 Jan 2025 00:00:00 CST",
        "Wed, 01 Jan 2025 00:00:00 MST",
        "Wed, 01 Jan 2025 00:00:00 PST",
        "Wed, 01 Jan 2025 00:00:00 CET",
        "Wed, 01 Jan 2025 00:00:00 GMTX",
        "Jan 1 2025 12:00:00 GMT+0100 (Central European Standard Time)",
        "Jan 1 2025 (note (nested)) 12:00",
        "Jan 1 2025 12:00 (unclosed",
        "Jan 1 2025 12:00)",
        "1/1/2025",
        "01/01/2025",
        "1/1/25",
        "1/1/50",
        "1/1/49",
        "1/1/99",
        "1/1/100",
        "13/1/2025",
        "1/32/2025",
        "31/12/2025",
        "2025/1/1",
        "2025/13/1",
        "2025.01.01",
        "01.01.2025",
        "2025 01 01",
        "2025-01-01 1:2:3",
        "2025-01-01 01:02:03.4",
        "2025-01-01 01:02:03.456789",
        "2025-01-01 01:02:03.",
        "2025-01-01 01:02",
        "2025-01-01 01::",
        "2025-01-01 1::2",
        "2025-01-01 01:02:03:04",
        "2025-01-01 01:02:03 04",
        "2025-01-01 12:00:00 AM",
        "2025-01-01 12:00:00 PM",
        "2025-01-01 00:00:00 PM",
        "2025-01-01 01:00:00 pm",
        "2025-01-01 11:59 PM",
        "2025-01-01 12 PM",
        "2025-01-01 PM 12:00",
        "2025-01-01 12:00 A.M.",
        "2025-01-01 12:00AM",
        "2025-01-01 12:00x",
        "2025-01-01 12:00Z",
        "2025-01-01 12:00+01:00",
        "2025-01-01 12:00 +01:00",
        "2025-01-01 12:00 +1:30",
        "2025-01-01 12:00 -",
        "2025-01-01 12:00 +",
        "2025-01-01 12:00 ++01",
        "2025-01-01 12:00 Z+01",
        "2025-01-01 12:00 GMT+01:30",
        "2025-01-01 Z",
        "2025-01-01 GMT",
        "2025-01-01 GMT+01",
        "GMT 2025-01-01",
        "2025-01-01 garbage",
        "garbage 2025-01-01",
        "garbage2025-01-01",
        "T12:00 2025-01-01",
        "12:00 2025-01-01",
        "12:00",
        "2025-01-01 23:59:59.999",
        "2025-01-01 24:00:00",
        "2025-01-01 24:00:01",
        "2025-01-01 23:60",
        "2025-01-01 99:00",
        "2025-01-01T12:00:00.123 Z",
        "2025-01-01T12:00:00 +01:00",
        "2025-01-01  12:00",
        "2025-01-01\t12:00",
        "2025-01-01\n12:00",
        "2025-01-01\u200312:00",
        "2025-01-01\u202812:00",
        "2025-01-01\ufeff",
        "\ufeff2025-01-01",
        "2025-01-01\u200b",
        "２０２５-01-01",
        "2025-01-01é",
        "é2025-01-01",
        "2025-01-01T12:00:00.000Z\x00junk",
        "\ud800 2025-01-01",
        "2025-01-01 \U0001f600",
        "999999999",
        "1234567890 1 1",
        "000000000002025-01-01",
        "1e3",
        "-1",
        "+1",
        "1",
        "12",
        "123",
        "12345",
        "Infinity",
        "NaN",
        "null",
        "true",
        "[object Object]",
        "2025-01-01,2025-01-02",
        "1,2,3",
        "2025,1,1,0,0",
        " ",
        "\t",
        ")",
        "(",
        "()",
        "-",
        "+",
        ":",
        ".",
        "T",
        "Z",
        "am",
        "Jun",
        "May 2025",
        "2025 May",
        "May 32 2025",
        "May 0 2025",
        "May 31 1",
        "Feb 29 2023",
        "Feb 30 2024 25:00",
    ]
    corpus += [
        1.5e21,
        -8.64e15,
        8.64e15,
        1e-7,
        2**53 + 1,
        -(2**60),
        "",
        [""],
        [None, None],
        [True],
        [1.5, 2],
        [[1, 2], [3]],
        [1e21],
        [-0.0],
        [{"a": 1}],
        {"valueOf": 1},
        {"toString": 1},
        [[[[]]]],
        ["Jun", "1", "2025"],
        [" 2025-01-01 "],
    ]
    # A grid of date, time and zone forms.
    dates = [
        "2025-03-04",
        "2025-3-4",
        "3/4/2025",
        "Mar 4 2025",
        "4 March 2025",
        "2025/03/04",
        "+002025-03-04",
        "0025-03-04",
    ]
    times = ["", "T10:20", "T10:20:30.5", " 10:20", " 10:20:30.456789", " 10:20 PM", "T24:00", " 24:00:00"]
    zones = ["", "Z", "+05:30", "-0800", " GMT", " GMT+2", " EST", " (zone)"]
    corpus += ["".join(parts) for parts in itertools.product(dates, times, zones)]
    corpus += _fuzz_strings(random.Random(20250601), 4000)
    return corpus


def _fuzz_strings(rng: random.Random, count: int) -> list[str]:
    """Random concatenations of date-ish atoms: exercises every branch of the legacy parser."""
    atoms = [
        "2025", "-", "06", "01", "T", "t", "12", ":", "00", ".", "123", "Z", "z", "+", "05:30", " ", "Jun",
        "june", "GMT", "PM", "am", "(", ")", "/", ",", "1", "31", "24", "99", "0", "UTC", "UT", "est", "PDT",
        "2025-06-01", "12:00:00", "+002025", "-000001", "1234567890123", "5", "59", "60", "13", "T12:00",
        "0530", "::", "\t", "\n", "\x00", "é", "\xa0", "\u2028", "x", "[", "Z+", "+0", "-1", "GMT+8", "29",
        "02", "0000", "9999", "49", "50", "123456", "000", "1000", "((x)", "\ud800", "\U0001d7d8", "_", "@",
        "\x0b", "\x1c", "\u3000", "\ufeff", "\u180e", "\u200b", "0000000000123", "00012",
    ]  # fmt: skip
    out = ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 9))) for _ in range(count)]
    out += [
        "".join(rng.choice("0123456789-:T.Z+ /") for _ in range(rng.randint(1, 25)))
        for _ in range(count // 4)
    ]
    return out


def _encode_case(value: Any) -> dict[str, Any]:
    if value is UNDEFINED:
        return {"u": 1}
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return {"num": str(value).replace("nan", "NaN").replace("inf", "Infinity")}
    return {"v": value}


@pytest.mark.oracle
@pytest.mark.skipif(_NODE is None, reason="node is not on PATH")
def test_against_node(tmp_path: Path) -> None:
    corpus = _date_corpus()
    assert len(corpus) >= 300
    path = tmp_path / "dates.json"
    path.write_text(json.dumps([_encode_case(v) for v in corpus]), encoding="ascii")
    assert _NODE is not None
    proc = subprocess.run(
        [_NODE, "-e", _NODE_SCRIPT, str(path)],
        capture_output=True,
        check=True,
        env={**os.environ, "TZ": "UTC"},
        timeout=120,
    )
    expected = json.loads(proc.stdout)
    assert len(expected) == len(corpus)
    mismatches = []
    for value, want in zip(corpus, expected, strict=True):
        try:
            got: Any = js_date_ms(value)
        except JsTypeError:
            got = "TypeError"
        if isinstance(want, (int, float)):
            want = float(want)
        if got != want:
            mismatches.append((value, want, got))
    assert not mismatches, mismatches[:20]
