"""`new Date(value).getTime()` and `toISOString()` as node 20 (V8 11) computes them.

pi stamps and orders session entries with `new Date(x).getTime()`, so Session Studio
must reproduce V8's answer for whatever a session file holds, including the forms
V8 accepts only through its legacy (pre-ES5) parser: `2025-6-1`, `Jun 1 2025`,
`6/1` (year 2001), two-digit years, AM/PM, zone names, rolled-over days. The string
parser re-implements the behaviour of V8's `DateParser` and `ParseDateTimeString`
with the process time zone taken to be UTC (`TZ=UTC`): local-time forms read as UTC.
A JSON object whose members shadow `toString` makes V8 throw a TypeError; that is
raised as `JsTypeError`.

Known differences from V8 (none shows in the differential tests, ~6 000 inputs):

* arrays nested thousands of levels deep convert here; V8 would overflow its
  stack (RangeError) while joining them;
* words are measured in code points, not UTF-16 units; that length only matters
  for ASCII keyword prefixes, so no result changes.
"""

from __future__ import annotations

import math
import re
import time
from typing import Final

from session_studio.core.jsvalue import UNDEFINED, JsTypeError, js_number_to_string

__all__ = ["js_date_ms", "js_to_iso_string", "now_iso"]

_MAX_TIME: Final = 8_640_000_000_000_000  # |time value| limit of TimeClip
_MS_PER_DAY: Final = 86_400_000
# DateCache::kMaxTimeBeforeUTCInMs: local times further out are NaN before ToUTC.
_MAX_TIME_BEFORE_UTC: Final = _MAX_TIME + 10 * _MS_PER_DAY
_SMI_MAX: Final = 2**31 - 1  # node 20 on 64-bit: 32-bit Smis
_K_NONE: Final = 2**31 - 1  # V8's kNone (kMaxInt) marks a missing field
_MAX_SIG_DIGITS: Final = 9
_POW10: Final = (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)

# Token tags (V8's DateToken); keyword types are >= 0.
_INVALID: Final = -6
_UNKNOWN: Final = -5
_WHITESPACE: Final = -4
_NUMBER: Final = -3
_SYMBOL: Final = -2
_END: Final = -1
_KW_INVALID: Final = 0
_MONTH_NAME: Final = 1
_TIME_ZONE_NAME: Final = 2
_TIME_SEPARATOR: Final = 3
_AM_PM: Final = 4

_Token = tuple[int, int, int]  # (tag, length, value)
_END_TOKEN: Final[_Token] = (_END, 0, -1)
_INVALID_TOKEN: Final[_Token] = (_INVALID, 0, -1)

_KEYWORDS: Final[dict[str, tuple[int, int]]] = {
    "jan": (_MONTH_NAME, 1),
    "feb": (_MONTH_NAME, 2),
    "mar": (_MONTH_NAME, 3),
    "apr": (_MONTH_NAME, 4),
    "may": (_MONTH_NAME, 5),
    "jun": (_MONTH_NAME, 6),
    "jul": (_MONTH_NAME, 7),
    "aug": (_MONTH_NAME, 8),
    "sep": (_MONTH_NAME, 9),
    "oct": (_MONTH_NAME, 10),
    "nov": (_MONTH_NAME, 11),
    "dec": (_MONTH_NAME, 12),
    "am": (_AM_PM, 0),
    "pm": (_AM_PM, 12),
    "ut": (_TIME_ZONE_NAME, 0),
    "utc": (_TIME_ZONE_NAME, 0),
    "z": (_TIME_ZONE_NAME, 0),
    "gmt": (_TIME_ZONE_NAME, 0),
    "cdt": (_TIME_ZONE_NAME, -5),
    "cst": (_TIME_ZONE_NAME, -6),
    "edt": (_TIME_ZONE_NAME, -4),
    "est": (_TIME_ZONE_NAME, -5),
    "mdt": (_TIME_ZONE_NAME, -6),
    "mst": (_TIME_ZONE_NAME, -7),
    "pdt": (_TIME_ZONE_NAME, -7),
    "pst": (_TIME_ZONE_NAME, -8),
    "t": (_TIME_SEPARATOR, 0),
}

_COLON: Final = ord(":")
_MINUS: Final = ord("-")
_PLUS: Final = ord("+")
_DOT: Final = ord(".")
_RPAREN: Final = ord(")")
# ECMAScript WhiteSpace (V8's IsWhiteSpace) and, for the separator token, LineTerminator.
_JS_WHITESPACE: Final = frozenset(
    "\t\v\f \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000\ufeff"
)
_JS_WS_OR_LT: Final = _JS_WHITESPACE | frozenset("\n\r\u2028\u2029")

# The common case, `2025-01-01T12:34:56.789Z`; anything else takes the full parser.
_FAST_ISO: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")
_CUM_DAYS: Final = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
# "YYYY-MM" -> ms of the day before the 1st of that month, or -1 (never a whole day) when
# MM is not a month; bounded so hostile input cannot grow it.
_MONTH_BASE: dict[str, int] = {}
_MONTH_BASE_MAX: Final = 4096


def _month_base(iso: str) -> int:
    """Fast-path helper: epoch ms of day 0 of the `YYYY-MM` month that `iso` starts with."""
    year = int(iso[0:4])
    month = int(iso[5:7])
    base = (_days_from_civil(year, month, 1) - 1) * _MS_PER_DAY if 1 <= month <= 12 else -1
    if len(_MONTH_BASE) < _MONTH_BASE_MAX:
        _MONTH_BASE[iso[:7]] = base
    return base


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date; `day` may overflow the month."""
    y = year
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    y1 = y - 1
    days = 365 * (y - 1970) + (y1 // 4 - 1969 // 4) - (y1 // 100 - 1969 // 100) + (y1 // 400 - 1969 // 400)
    days += _CUM_DAYS[month - 1] + (1 if leap and month > 2 else 0)
    return days + day - 1


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number since 1970-01-01 (Hinnant's algorithm)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _tokenize(s: str) -> list[_Token]:
    """All tokens of V8's DateStringTokenizer; its Scan() depends on the position only."""
    nul = s.find("\x00")
    if nul >= 0:  # V8's InputReader treats a NUL character as the end of input
        s = s[:nul]
    tokens: list[_Token] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if "0" <= c <= "9":
            j = i + 1
            while j < n and "0" <= s[j] <= "9":
                j += 1
            k = i
            while k < j and s[k] == "0":  # leading zeros are not significant
                k += 1
            tokens.append((_NUMBER, j - i, int(s[k : min(j, k + _MAX_SIG_DIGITS)] or "0")))
            i = j
        elif c in ":-+.)":
            tokens.append((_SYMBOL, 1, ord(c)))
            i += 1
        elif c >= "A" and c not in _JS_WHITESPACE:
            j = i + 1
            while j < n and s[j] >= "A" and s[j] not in _JS_WHITESPACE:
                j += 1
            length = j - i
            prefix = "".join(chr(ord(ch) | 0x20) for ch in s[i : min(j, i + 3)])
            kw = _KEYWORDS.get(prefix)
            if kw is not None and (length <= 3 or kw[0] == _MONTH_NAME):
                tokens.append((kw[0], length, kw[1]))
            else:
                tokens.append((_KW_INVALID, length, 0))
            i = j
        elif c in _JS_WS_OR_LT:
            tokens.append((_WHITESPACE, 1, -1))
            i += 1
        elif c == "(":
            balance = 0
            while True:
                ch = s[i]
                if ch == ")":
                    balance -= 1
                elif ch == "(":
                    balance += 1
                i += 1
                if balance <= 0 or i >= n:
                    break
            tokens.append((_UNKNOWN, 1, -1))
        else:
            tokens.append((_UNKNOWN, 1, -1))
            i += 1
    tokens.append(_END_TOKEN)
    return tokens


class _Scanner:
    __slots__ = ("_last", "_pos", "_tokens")

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._pos = 0
        self._last = len(tokens) - 1

    def peek(self) -> _Token:
        return self._tokens[self._pos]

    def next(self) -> _Token:
        tok = self._tokens[self._pos]
        if self._pos < self._last:
            self._pos += 1
        return tok

    def skip_symbol(self, sym: int) -> bool:
        tok = self._tokens[self._pos]
        if tok[0] == _SYMBOL and tok[2] == sym:
            self.next()
            return True
        return False


def _is_sign(tok: _Token) -> bool:
    return tok[0] == _SYMBOL and tok[2] in (_MINUS, _PLUS)


def _is_symbol(tok: _Token, sym: int) -> bool:
    return tok[0] == _SYMBOL and tok[2] == sym


def _is_fixed_number(tok: _Token, length: int) -> bool:
    return tok[0] == _NUMBER and tok[1] == length


def _is_keyword_z(tok: _Token) -> bool:
    return tok[0] == _TIME_ZONE_NAME and tok[1] == 1 and tok[2] == 0


def _sign_of(tok: _Token) -> int:
    return 1 if tok[2] == _PLUS else -1


def _read_milliseconds(tok: _Token) -> int:
    number, length = tok[2], tok[1]
    if length == 1:
        return number * 100
    if length == 2:
        return number * 10
    if length > 3:
        length = min(length, _MAX_SIG_DIGITS)
        return number // _POW10[length - 3]
    return number


class _Day:
    __slots__ = ("comp", "is_iso", "named_month")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.named_month = _K_NONE
        self.is_iso = False

    def add(self, n: int) -> bool:
        if len(self.comp) < 3:
            self.comp.append(n)
            return True
        return False

    def write(self) -> tuple[int, int, int] | None:
        comp = self.comp
        if not comp:
            return None
        comp = comp + [1] * (3 - len(comp))  # missing month/day are 1, so 3 fields always
        year = 0  # no year given: 0, which becomes 2000 below
        if self.named_month == _K_NONE:
            if self.is_iso or not 1 <= comp[0] <= 31:
                year, month, day = comp
            else:
                month, day, year = comp
        else:
            month = self.named_month
            if not 1 <= comp[0] <= 31:
                year, day = comp[0], comp[1]
            else:
                day, year = comp[0], comp[1]
        if not self.is_iso:
            if 0 <= year <= 49:
                year += 2000
            elif 50 <= year <= 99:
                year += 1900
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return None
        return year, month, day


class _Time:
    __slots__ = ("comp", "hour_offset")

    def __init__(self) -> None:
        self.comp: list[int] = []
        self.hour_offset = _K_NONE

    def is_empty(self) -> bool:
        return not self.comp

    def is_expecting(self, n: int) -> bool:
        i = len(self.comp)
        return (i == 1 and 0 <= n <= 59) or (i == 2 and 0 <= n <= 59) or (i == 3 and 0 <= n <= 999)

    def add(self, n: int) -> bool:
        if len(self.comp) < 4:
            self.comp.append(n)
            return True
        return False

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        self.comp.extend([0] * (4 - len(self.comp)))
        return True

    def write(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, ms = self.comp + [0] * (4 - len(self.comp))
        if self.hour_offset != _K_NONE:
            if not 0 <= hour <= 12:
                return None
            hour = hour % 12 + self.hour_offset
        if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59 and 0 <= ms <= 999) and (
            hour != 24 or minute != 0 or second != 0 or ms != 0
        ):
            return None
        return hour, minute, second, ms


class _Zone:
    __slots__ = ("hour", "minute", "sign")

    def __init__(self) -> None:
        self.sign = _K_NONE
        self.hour = _K_NONE
        self.minute = _K_NONE

    def set(self, offset_in_hours: int) -> None:
        self.sign = -1 if offset_in_hours < 0 else 1
        self.hour = offset_in_hours * self.sign
        self.minute = 0

    def is_expecting(self, n: int) -> bool:
        return self.hour != _K_NONE and self.minute == _K_NONE and 0 <= n <= 59

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def write(self) -> tuple[bool, int | None]:
        """(ok, offset in seconds or None for local time)."""
        if self.sign == _K_NONE:
            return True, None
        hour = 0 if self.hour == _K_NONE else self.hour
        minute = 0 if self.minute == _K_NONE else self.minute
        total = (hour * 3600 + minute * 60) & 0xFFFFFFFF  # V8 multiplies as `unsigned`
        if total > _SMI_MAX:
            return False, None
        return True, -total if self.sign < 0 else total


def _parse_es5(scanner: _Scanner, day: _Day, tm: _Time, tz: _Zone) -> _Token:
    """V8's ParseES5DateTime: END when done, INVALID on failure, else the next legacy token."""
    tok = scanner.peek()
    if _is_sign(tok):
        sign_token = scanner.next()
        if not _is_fixed_number(scanner.peek(), 6):
            return sign_token
        sign = _sign_of(sign_token)
        year = scanner.next()[2]
        if sign < 0 and year == 0:
            return sign_token
        day.add(sign * year)
    elif _is_fixed_number(tok, 4):
        day.add(scanner.next()[2])
    else:
        return scanner.next()
    if scanner.skip_symbol(_MINUS):
        tok = scanner.peek()
        if not _is_fixed_number(tok, 2) or not 1 <= tok[2] <= 12:
            return scanner.next()
        day.add(scanner.next()[2])
        if scanner.skip_symbol(_MINUS):
            tok = scanner.peek()
            if not _is_fixed_number(tok, 2) or not 1 <= tok[2] <= 31:
                return scanner.next()
            day.add(scanner.next()[2])
    if scanner.peek()[0] != _TIME_SEPARATOR:
        if scanner.peek()[0] != _END:
            return scanner.next()
    else:
        scanner.next()
        tok = scanner.peek()
        if not _is_fixed_number(tok, 2) or not 0 <= tok[2] <= 24:
            return _INVALID_TOKEN
        hour_is_24 = tok[2] == 24
        tm.add(scanner.next()[2])
        if not scanner.skip_symbol(_COLON):
            return _INVALID_TOKEN
        tok = scanner.peek()
        if not _is_fixed_number(tok, 2) or not 0 <= tok[2] <= 59 or (hour_is_24 and tok[2] > 0):
            return _INVALID_TOKEN
        tm.add(scanner.next()[2])
        if scanner.skip_symbol(_COLON):
            tok = scanner.peek()
            if not _is_fixed_number(tok, 2) or not 0 <= tok[2] <= 59 or (hour_is_24 and tok[2] > 0):
                return _INVALID_TOKEN
            tm.add(scanner.next()[2])
            if scanner.skip_symbol(_DOT):
                tok = scanner.peek()
                if tok[0] != _NUMBER or (hour_is_24 and tok[2] > 0):
                    return _INVALID_TOKEN
                tm.add(_read_milliseconds(scanner.next()))
        tok = scanner.peek()
        if _is_keyword_z(tok):
            scanner.next()
            tz.set(0)
        elif _is_sign(tok):
            tz.sign = _sign_of(scanner.next())
            tok = scanner.peek()
            if _is_fixed_number(tok, 4):
                hourmin = scanner.next()[2]
                hour, minute = divmod(hourmin, 100)
                if not (0 <= hour <= 23 and 0 <= minute <= 59):
                    return _INVALID_TOKEN
                tz.hour = hour
                tz.minute = minute
            else:
                if not _is_fixed_number(tok, 2) or not 0 <= tok[2] <= 23:
                    return _INVALID_TOKEN
                tz.hour = scanner.next()[2]
                if not scanner.skip_symbol(_COLON):
                    return _INVALID_TOKEN
                tok = scanner.peek()
                if not _is_fixed_number(tok, 2) or not 0 <= tok[2] <= 59:
                    return _INVALID_TOKEN
                tz.minute = scanner.next()[2]
        if scanner.peek()[0] != _END:
            return _INVALID_TOKEN
    # Date-only forms without an offset are UTC; date-time forms are local time.
    if tz.hour == _K_NONE and tm.is_empty():
        tz.set(0)
    day.is_iso = True
    return _END_TOKEN


def _parse_string(s: str) -> int | None:
    """V8's DateParser::Parse plus ParseDateTimeString; None for NaN."""
    scanner = _Scanner(_tokenize(s))
    day = _Day()
    tm = _Time()
    tz = _Zone()
    token = _parse_es5(scanner, day, tm, tz)
    if token[0] == _INVALID:
        return None
    has_read_number = bool(day.comp)
    while token[0] != _END:
        tag = token[0]
        if tag == _NUMBER:
            has_read_number = True
            n = token[2]
            if scanner.skip_symbol(_COLON):
                if scanner.skip_symbol(_COLON):
                    if not tm.is_empty():
                        return None
                    tm.add(n)
                    tm.add(0)
                else:
                    if not tm.add(n):
                        return None
                    if _is_symbol(scanner.peek(), _DOT):
                        scanner.next()
            elif scanner.skip_symbol(_DOT) and tm.is_expecting(n):
                tm.add(n)
                if scanner.peek()[0] != _NUMBER:
                    return None
                tm.add_final(_read_milliseconds(scanner.next()))
            elif tz.is_expecting(n):
                tz.minute = n
            elif tm.is_expecting(n):
                tm.add_final(n)
                # A completed time must be followed by the end, a space, Z or a sign.
                peek = scanner.peek()
                if peek[0] not in (_END, _WHITESPACE) and not _is_keyword_z(peek) and not _is_sign(peek):
                    return None
            else:
                if not day.add(n):
                    return None
                scanner.skip_symbol(_MINUS)
        elif tag >= 0:  # a word
            value = token[2]
            if tag == _AM_PM and not tm.is_empty():
                tm.hour_offset = value
            elif tag == _MONTH_NAME:
                day.named_month = value
                scanner.skip_symbol(_MINUS)
            elif tag == _TIME_ZONE_NAME and has_read_number:
                tz.set(value)
            else:
                # Unknown words: only before the first number, and not glued to it.
                if has_read_number or scanner.peek()[0] == _NUMBER:
                    return None
        elif _is_sign(token) and (tz.is_utc() or not tm.is_empty()):
            tz.sign = _sign_of(token)
            n = 0
            length = 0
            if scanner.peek()[0] == _NUMBER:
                _, length, n = scanner.next()
            has_read_number = True
            if _is_symbol(scanner.peek(), _COLON):
                tz.hour = n
                tz.minute = _K_NONE
            elif length in (1, 2):
                tz.hour = n
                tz.minute = 0
            elif length in (3, 4):
                tz.hour, tz.minute = divmod(n, 100)
            else:
                return None
        elif (_is_sign(token) or _is_symbol(token, _RPAREN)) and has_read_number:
            return None
        token = scanner.next()

    ymd = day.write()
    if ymd is None:
        return None
    hms = tm.write()
    if hms is None:
        return None
    ok, offset = tz.write()
    if not ok:
        return None
    year, month, mday = ymd
    if not -1_000_000 <= year <= 1_000_000:  # MakeDay's kMinYear..kMaxYear
        return None
    hour, minute, second, ms = hms
    date = (
        _days_from_civil(year, month, mday) * _MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms
    )
    if offset is None:
        if not -_MAX_TIME_BEFORE_UTC <= date <= _MAX_TIME_BEFORE_UTC:
            return None
        # ToUTC is the identity with TZ=UTC.
    else:
        date -= offset * 1000
    if not -_MAX_TIME <= date <= _MAX_TIME:
        return None
    return date


def _time_clip(x: float) -> float | None:
    if math.isnan(x) or math.isinf(x) or abs(x) > _MAX_TIME:
        return None
    return float(math.trunc(x)) + 0.0  # +0.0 turns -0 into +0


def _object_to_string(obj: dict[object, object]) -> str:
    """ToPrimitive of a JSON object: "[object Object]", or V8's TypeError when a data
    member shadows `toString` (JSON cannot hold a callable one)."""
    if "toString" in obj:
        raise JsTypeError("Cannot convert object to primitive value")
    return "[object Object]"


def _array_join(arr: list[object]) -> str:
    """`String(array)`: Array.prototype.join(",") applied recursively, without recursion."""
    parts: list[str] = []
    # Stack of (list, next index); a comma precedes every element but the first.
    stack: list[tuple[list[object], int]] = [(arr, 0)]
    while stack:
        seq, i = stack.pop()
        if i >= len(seq):
            continue
        if i:
            parts.append(",")
        stack.append((seq, i + 1))
        item = seq[i]
        if item is None or item is UNDEFINED:
            continue
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, bool):
            parts.append("true" if item else "false")
        elif isinstance(item, (int, float)):
            parts.append(js_number_to_string(item))
        elif isinstance(item, list):
            stack.append((item, 0))
        elif isinstance(item, dict):
            parts.append(_object_to_string(item))
        else:
            parts.append(str(item))
    return "".join(parts)


def js_date_ms(value: object) -> float | None:
    """`new Date(value).getTime()` in node 20 with TZ=UTC, for a JSON value; None for NaN.

    Raises `JsTypeError` where V8 throws (a JSON object with a `toString` member).
    """
    if isinstance(value, str):
        if _FAST_ISO.fullmatch(value) is not None:
            base = _MONTH_BASE.get(value[:7])
            if base is None:
                base = _month_base(value)
            d = int(value[8:10])
            h = int(value[11:13])
            mi = int(value[14:16])
            s = int(value[17:19])
            if base != -1 and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 59:
                return float(
                    base + d * _MS_PER_DAY + h * 3_600_000 + mi * 60_000 + s * 1000 + int(value[20:23])
                )
        r = _parse_string(value)
        return None if r is None else float(r)
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int):
        return float(value) if -_MAX_TIME <= value <= _MAX_TIME else None
    if isinstance(value, float):
        return _time_clip(value)
    if isinstance(value, list):
        return js_date_ms(_array_join(value))
    if isinstance(value, dict):
        return js_date_ms(_object_to_string(value))
    # UNDEFINED, and anything that is not a JSON value.
    return None


def js_to_iso_string(ms: float) -> str:
    """`new Date(ms).toISOString()`; ValueError where V8 throws RangeError (NaN, out of range)."""
    clipped = _time_clip(float(ms)) if not isinstance(ms, int) else ms
    if clipped is None or not -_MAX_TIME <= clipped <= _MAX_TIME:
        raise ValueError(f"Invalid time value: {ms!r}")
    t = int(clipped)
    days, rem = divmod(t, _MS_PER_DAY)
    year, month, day = _civil_from_days(days)
    sec, milli = divmod(rem, 1000)
    minute, sec = divmod(sec, 60)
    hour, minute = divmod(minute, 60)
    if 0 <= year <= 9999:
        ys = f"{year:04d}"
    elif year < 0:
        ys = f"-{-year:06d}"
    else:
        ys = f"+{year:06d}"
    return f"{ys}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{sec:02d}.{milli:03d}Z"


def now_iso() -> str:
    """`new Date().toISOString()`: the current UTC time to the millisecond."""
    return js_to_iso_string(time.time_ns() // 1_000_000)
