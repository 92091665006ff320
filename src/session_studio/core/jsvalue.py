"""JavaScript value semantics that pi's behaviour depends on.

pi is JavaScript: lengths are UTF-16 code units, `JSON.stringify` formats numbers
its own way and puts integer-like keys first, truthiness treats `0`, `""` and
`NaN` as false, and reading a property of `undefined` throws. The core models
session values as the Python objects `orjson` gives (dict, list, str, int,
float, bool, None) plus `UNDEFINED` for a missing property, and uses the helpers
here wherever the JavaScript result would differ from the Python one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "UNDEFINED",
    "JsTypeError",
    "Undefined",
    "get",
    "js_key",
    "js_number_to_string",
    "js_sort_key",
    "js_string",
    "js_stringify",
    "js_stringify_to",
    "js_trim_is_empty",
    "js_truthy",
    "prop",
    "u16len",
    "u16slice_head",
]


class Undefined:
    """JavaScript `undefined`: a missing property (JSON has no such value)."""

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = Undefined()


class JsTypeError(TypeError):
    """Where pi's JavaScript would throw a TypeError (the message mimics V8's)."""


_MAX_SAFE = 2**53


def get(obj: Any, key: str) -> Any:
    """`obj[key]` for a JSON object; `UNDEFINED` when absent or not an object."""
    if type(obj) is dict:
        return obj.get(key, UNDEFINED)
    return UNDEFINED


def prop(obj: Any, key: str) -> Any:
    """`obj.key` with JavaScript's rules: throws on `null`/`undefined`."""
    if type(obj) is dict:
        return obj.get(key, UNDEFINED)
    if obj is None or obj is UNDEFINED:
        what = "null" if obj is None else "undefined"
        raise JsTypeError(f"Cannot read properties of {what} (reading '{key}')")
    if key == "length":
        if isinstance(obj, str):
            return u16len(obj)
        if isinstance(obj, list):
            return len(obj)
    return UNDEFINED


def js_truthy(v: Any) -> bool:
    if v is None or v is UNDEFINED or v is False:
        return False
    if v is True:
        return True
    if isinstance(v, (int, float)):
        return v != 0 and not (isinstance(v, float) and math.isnan(v))
    if isinstance(v, str):
        return v != ""
    return True


def js_key(v: Any) -> Any:
    """A hashable key with JavaScript `Map` (SameValueZero) identity."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return ("bool", v)
    if t is int or t is float:
        f = float(v)
        return ("num", 0.0 if f == 0 else f)
    if v is None:
        return ("null",)
    if v is UNDEFINED:
        return ("undefined",)
    return ("object", id(v))


def u16len(s: str) -> int:
    """JavaScript `s.length` (UTF-16 code units): astral characters count twice."""
    if s.isascii():
        return len(s)
    # one C pass; faster than finding the astral characters with a regex (lone surrogates count 1)
    return len(s.encode("utf-16-le", "surrogatepass")) >> 1


def u16slice_head(s: str, n: int) -> str:
    """JavaScript `s.slice(0, n)`; may leave a lone high surrogate, as pi 0.80.2 does."""
    if s.isascii():
        return s[:n]
    b = s.encode("utf-16-le", "surrogatepass")[: 2 * n]
    return b.decode("utf-16-le", "surrogatepass")


def js_sort_key(s: str) -> bytes:
    """Key for JavaScript's default `Array.prototype.sort` on strings (UTF-16 order)."""
    return s.encode("utf-16-be", "surrogatepass")


# JavaScript String.prototype.trim removes WhiteSpace and LineTerminator code points.
_JS_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim_is_empty(s: str) -> bool:
    """`!s.trim()`: the line holds only JavaScript white space."""
    return all(c in _JS_WHITESPACE for c in s)


def js_number_to_string(x: float | int) -> str:
    """ECMAScript Number::toString(10), as used by JSON.stringify and String()."""
    if type(x) is int:
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return str(x)
        try:
            x = float(x)
        except OverflowError:
            return "Infinity" if x > 0 else "-Infinity"
    if x != x:
        return "NaN"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    if "e" in r:
        mant, _, exp_s = r.partition("e")
        exp = int(exp_s)
    else:
        mant, exp = r, 0
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    if fp == "0":
        fp = ""
    digits = ip + fp
    n = len(ip) + exp  # decimal point position relative to digits
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + es
    return sign + out


def js_string(v: Any) -> str:
    """JavaScript `String(v)` / template-literal conversion for JSON values."""
    if isinstance(v, str):
        return v
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, (int, float)):
        return js_number_to_string(v)
    if isinstance(v, list):
        return ",".join("" if x is None or x is UNDEFINED else js_string(x) for x in v)
    return "[object Object]"


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
for _i in range(0x20):
    _ESCAPES.setdefault(chr(_i), f"\\u{_i:04x}")
#: what JSON.stringify escapes: quote, backslash, control characters, lone surrogates (a pair is
#: one code point here); one regex scan in C (str.translate with this table took ~80 ns a
#: character, a generator over the characters more); compiled when first needed (the surrogate
#: range makes it ~1 ms of a start that may print no such string)
_NEEDS_ESCAPE = '["\\\\\x00-\x1f\ud800-\udfff]'


_needs_escape_re: re.Pattern[str] | None = None


def _compile_needs_escape() -> re.Pattern[str]:
    global _needs_escape_re
    _needs_escape_re = re.compile(_NEEDS_ESCAPE)
    return _needs_escape_re


def _escaped(m: re.Match[str]) -> str:
    c = m.group()
    # a lone surrogate (rare) is escaped here: a table of all 2048 took ~2 ms of each start
    return _ESCAPES.get(c) or f"\\u{ord(c):04x}"


def _quote(s: str) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return '"' + s + '"'
    # a global read once compiled: _quote runs for every string of a 100 MB plan's output
    needs_escape = _needs_escape_re or _compile_needs_escape()
    if needs_escape.search(s) is None:
        return '"' + s + '"'
    return '"' + needs_escape.sub(_escaped, s) + '"'


def _is_array_index(k: str) -> bool:
    if not k or not k.isdigit() or not k.isascii():
        return False
    if k != "0" and k[0] == "0":
        return False
    return int(k) < 4294967295


#: key tuples of objects → whether a key may be an array index (JavaScript lists those first)
_DIGIT_KEYS: dict[tuple[str, ...], bool] = {}


def _ordered_items(d: dict[str, Any]) -> list[tuple[str, Any]]:
    items = list(d.items())
    # most objects of a session share a few key sets: looked up, not scanned key by key
    keys = tuple(d)
    digit = _DIGIT_KEYS.get(keys)
    if digit is None:
        if len(_DIGIT_KEYS) >= 4096:
            _DIGIT_KEYS.clear()
        digit = _DIGIT_KEYS[keys] = any(k[:1].isdigit() for k in keys)
    if digit:
        idx = sorted((kv for kv in items if _is_array_index(kv[0])), key=lambda kv: int(kv[0]))
        rest = [kv for kv in items if not _is_array_index(kv[0])]
        return idx + rest
    return items


def js_stringify(value: Any) -> str | None:
    """`JSON.stringify(value)` (no indentation); None where JavaScript returns undefined.

    Iterative, so values nested thousands of levels deep (pi accepts them) work.
    """
    if value is UNDEFINED:
        return None
    out: list[str] = []
    _stringify_into(value, out, None)
    return "".join(out)


#: js_stringify_to hands its text on every this many pieces (a piece is a few characters: the
#: pieces of a 100 MB text held at once were ~1 GB of small strings)
SPILL_PIECES = 1 << 16


def js_stringify_to(value: Any, write: Callable[[str], object]) -> bool:
    """`JSON.stringify(value)` written to ``write`` in parts (their concatenation is what
    js_stringify returns); False, and nothing written, where JavaScript returns undefined."""
    if value is UNDEFINED:
        return False
    out: list[str] = []

    def spill() -> None:
        write("".join(out))
        out.clear()

    _stringify_into(value, out, spill)
    if out:
        spill()
    return True


def _stringify_into(value: Any, out: list[str], spill: Callable[[], None] | None) -> None:
    """The loop of js_stringify, appending to ``out``; ``spill()`` empties it when it is long."""
    # stack of pending work: either a str to emit or a value to serialise
    stack: list[Any] = [("v", value)]
    append = out.append
    while stack:
        if spill is not None and len(out) >= SPILL_PIECES:
            spill()
        kind, v = stack.pop()
        if kind == "s":
            append(v)
            continue
        t = type(v)
        if t is str:
            append(_quote(v))
        elif t is dict:
            items = [(k, x) for k, x in _ordered_items(v) if x is not UNDEFINED]
            if not items:
                append("{}")
                continue
            append("{")
            pending: list[Any] = [("s", "}")]
            for i in range(len(items) - 1, -1, -1):
                k, x = items[i]
                pending.append(("v", x))
                pending.append(("s", ("," if i else "") + _quote(k) + ":"))
            stack.extend(pending)
        elif t is list:
            if not v:
                append("[]")
                continue
            append("[")
            pending = [("s", "]")]
            for i in range(len(v) - 1, -1, -1):
                x = v[i]
                pending.append(("v", None if x is UNDEFINED else x))
                if i:
                    pending.append(("s", ","))
            stack.extend(pending)
        elif v is None:
            append("null")
        elif v is True:
            append("true")
        elif v is False:
            append("false")
        elif t is int or t is float:
            f = v
            if t is float and (math.isnan(f) or math.isinf(f)):
                append("null")
            else:
                append(js_number_to_string(v))
        else:
            append("null")
