"""Session listing metadata (spec §1.14) for the browser, reading only the head and tail of each file."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .errors import SessionFileError
from .fingerprint import open_regular

__all__ = ["SessionInfo", "list_sessions", "read_info"]

HEAD = 64 * 1024
TAIL = 64 * 1024
EXACT_COUNT_MAX = 8 * 1024 * 1024


@dataclass(frozen=True)
class SessionInfo:
    path: str
    id: str
    cwd: str
    name: str | None
    first_message: str
    created: str
    modified: float  # epoch seconds
    size: int
    entries: int
    entries_exact: bool

    @property
    def title(self) -> str:
        return self.name or self.first_message


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _ts(v: Any) -> float | None:
    if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
        return float(v) / 1000.0
    if isinstance(v, str):
        try:
            return datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def read_info(path: str | os.PathLike[str]) -> SessionInfo | None:
    """Listing metadata of one file, or None when the first value is not a session header."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
        with open_regular(p) as fh:  # a FIFO or device named *.jsonl never blocks the browser
            head = fh.read(HEAD)
            tail = b""
            if st.st_size > HEAD:
                fh.seek(max(HEAD, st.st_size - TAIL))
                tail = fh.read()
            count = None
            if st.st_size <= EXACT_COUNT_MAX:
                fh.seek(0)
                data = fh.read()
                count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    except (OSError, SessionFileError):
        return None
    lines = head.split(b"\n")
    if st.st_size > HEAD:
        lines = lines[:-1]  # the last head line may be cut
    header = None
    for ln in lines:
        if ln.strip():
            header = _parse(ln)
            break
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    values = [v for v in (_parse(ln) for ln in lines[1:] if ln.strip()) if isinstance(v, dict)]
    tail_vals = []
    if tail:
        tl = tail.split(b"\n")[1:]  # first tail line may be cut
        tail_vals = [v for v in (_parse(ln) for ln in tl if ln.strip()) if isinstance(v, dict)]
    first = "(no messages)"
    for v in values:
        m = v.get("message")
        if v.get("type") == "message" and isinstance(m, dict) and m.get("role") == "user":
            t = " ".join(_text(m.get("content")).split())
            if t:
                first = t
                break
    name: str | None = None
    modified: float | None = None
    for v in values + tail_vals:
        if v.get("type") == "session_info":
            raw_name = v.get("name")
            name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else None
        m = v.get("message")
        if v.get("type") == "message" and isinstance(m, dict) and m.get("role") in ("user", "assistant"):
            when = _ts(m.get("timestamp")) or _ts(v.get("timestamp"))
            if when is not None and (modified is None or when > modified):
                modified = when
    if modified is None:
        modified = _ts(header.get("timestamp")) or st.st_mtime
    if count is None:
        avg = max(1, len(head) // max(1, len(lines)))
        count = st.st_size // avg
    cwd_value = header.get("cwd")
    cwd = cwd_value if isinstance(cwd_value, str) else ""
    return SessionInfo(
        p,
        str(header.get("id", "")),
        cwd,
        name,
        first[:300],
        str(header.get("timestamp", "")),
        modified,
        st.st_size,
        max(0, count - 1),
        st.st_size <= EXACT_COUNT_MAX,
    )


def list_sessions(root: str | os.PathLike[str]) -> list[SessionInfo]:
    """Every session under ``root`` (pi's layout: one folder per project), newest first."""
    r = Path(root)
    files: list[Path] = []
    if r.is_dir():
        files += sorted(r.glob("*.jsonl"))
        files += sorted(r.glob("*/*.jsonl"))
    out = [i for i in (read_info(f) for f in files) if i is not None]
    out.sort(key=lambda i: i.modified, reverse=True)
    return out


def fmt_date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).astimezone().strftime("%Y-%m-%d %H:%M")


def fmt_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)
