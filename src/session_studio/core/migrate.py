"""pi's session format versions (1, 2, 3) and the migrations between them.

pi migrates in memory when it opens a file (and rewrites the file). We never
rewrite a user's file on open: the migration is recorded per value as a small
patch (assigned id and parent for v1, the `hookMessage` → `custom` rename for
v2) and applied whenever a value is materialised, so the lazy index and the
in-memory values agree with what pi holds after `SessionManager.open`.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable
from typing import Any

from .jsvalue import UNDEFINED

__all__ = [
    "CURRENT_SESSION_VERSION",
    "js_compare",
    "js_to_number",
    "needs_migration",
    "new_entry_id",
    "version_name",
    "version_of",
]

CURRENT_SESSION_VERSION = 3

_NUM_RE = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Infinity)\Z")
_JS_WS = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_to_number(v: Any) -> float:
    """ECMAScript ToNumber for JSON values (arrays and objects via ToPrimitive)."""
    if v is None:
        return 0.0
    if v is UNDEFINED:
        return math.nan
    if v is True:
        return 1.0
    if v is False:
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, list):
        from .jsvalue import js_string

        return js_to_number(js_string(v))
    if isinstance(v, dict):
        return math.nan
    s = str(v).strip(_JS_WS)
    if s == "":
        return 0.0
    low = s[:2].lower()
    if low in ("0x", "0o", "0b"):
        base = {"0x": 16, "0o": 8, "0b": 2}[low]
        try:
            return float(int(s[2:], base))
        except ValueError:
            return math.nan
    if not _NUM_RE.match(s):
        return math.nan
    return float(s.replace("Infinity", "inf"))


def js_compare(a: Any, op: str, b: float) -> bool:
    """`a <op> b` with JavaScript semantics, for a JSON value `a` and a number `b`."""
    x = js_to_number(a)
    if math.isnan(x):
        return False
    if op == "<":
        return x < b
    if op == ">=":
        return x >= b
    raise ValueError(op)


def version_of(header: dict[str, Any]) -> Any:
    """`header.version ?? 1` (only null and absent fall back to 1)."""
    v = header.get("version", UNDEFINED)
    return 1 if v is None or v is UNDEFINED else v


def needs_migration(header: dict[str, Any]) -> bool:
    return not js_compare(version_of(header), ">=", CURRENT_SESSION_VERSION)


def new_entry_id(exists: Callable[[str], bool]) -> str:
    """pi's `generateId`: 8 hex digits of a v4 UUID, retried on collision, full UUID after 100."""
    for _ in range(100):
        candidate = uuid.uuid4().hex[:8]
        if not exists(candidate):
            return candidate
    return str(uuid.uuid4())


def version_name(version: Any) -> str:
    """A header's ``version`` as users read it: no field is version 1 (pi's first format)."""
    return f"version {version}" if isinstance(version, int) and not isinstance(version, bool) else "version 1"
