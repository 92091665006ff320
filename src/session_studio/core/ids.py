"""Ids and timestamps in pi's formats."""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime

__all__ = ["now_iso", "uuidv7"]

_lock = threading.Lock()
_last_ms = -1
_seq = 0


def uuidv7() -> str:
    """A time-ordered UUIDv7 (48-bit ms timestamp, 32-bit monotonic sequence, random tail)."""
    global _last_ms, _seq
    with _lock:
        ms = int(time.time() * 1000)
        if ms > _last_ms:
            _last_ms = ms
            _seq = int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF
        else:
            ms = _last_ms
            _seq = (_seq + 1) & 0xFFFFFFFF
        seq = _seq
    raw = bytearray(ms.to_bytes(6, "big") + seq.to_bytes(4, "big") + os.urandom(6))
    raw[6] = 0x70 | (raw[6] & 0x0F)  # version 7
    raw[8] = 0x80 | (raw[8] & 0x3F)  # RFC 4122 variant
    h = bytes(raw).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def now_iso() -> str:
    """`new Date().toISOString()`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
