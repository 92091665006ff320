"""Session listing metadata (spec §1.14) for the browser, reading only the head and tail of each file.

One bad file never empties the list: whatever goes wrong with a file (not a regular file,
unreadable, absurd timestamps, a bug here) becomes that file's row, with ``error`` saying why.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .errors import SessionFileError
from .fingerprint import open_regular
from .migrate import needs_migration, version_of
from .reader import parse_line

__all__ = ["SessionInfo", "default_agent_dir", "default_sessions_dir", "list_sessions", "read_info"]


def default_agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``."""
    environ = os.environ if env is None else env
    configured = environ.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".pi" / "agent"


def default_sessions_dir() -> Path:
    """Where pi keeps its session files (one folder per working directory)."""
    return default_agent_dir() / "sessions"


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
    error: str | None = None  # why this file could not be listed normally
    #: the header's parentSession: the file this one was forked from (pi lists it under that one)
    parent_session: str | None = None
    #: the header's version when pi migrates the file on opening (1, 2, or an odd value); None: current
    legacy_version: Any = None
    #: lines that are not a JSON object among those read for the list (the first and last 64 KiB):
    #: pi skips them; the rest of the file is not looked at here
    damaged_seen: int = 0

    @property
    def title(self) -> str:
        return self.name or self.first_message


def _parse(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        # what orjson refuses pi may still read (1e400, lone surrogates): parse it as pi would
        return parse_line(line)[0]


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


# the instants Python's datetime can show (years 1 to 9999); anything else is garbage here
_MIN_TS = datetime(1, 1, 2, tzinfo=UTC).timestamp()
_MAX_TS = datetime(9999, 12, 30, tzinfo=UTC).timestamp()


def _ts(v: Any) -> float | None:
    """Epoch seconds of a timestamp value (ms number or ISO string), None when not a usable date."""
    t: float | None = None
    if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
        try:
            t = float(v) / 1000.0
        except OverflowError:  # an integer too large for a float
            return None
    elif isinstance(v, str) and len(v) < 100:
        try:
            t = datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError, OSError):
            return None
    if t is None or not math.isfinite(t) or not _MIN_TS <= t <= _MAX_TS:
        return None
    return t


def read_info(path: str | os.PathLike[str]) -> SessionInfo | None:
    """Listing metadata of one file; a file that is no session (not a regular file, unreadable, no
    session header, empty) is a row saying why (``error``). None: the file is gone."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(st.st_mode):
            return _failed(p, st.st_mtime, "not a regular file")
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
            else:
                count = _estimated_lines(fh, st.st_size)
    except (OSError, SessionFileError) as e:
        return _failed(p, st.st_mtime, f"cannot be read: {e}"[:300])
    lines = head.split(b"\n")
    if st.st_size > HEAD:
        lines = lines[:-1]  # the last head line may be cut
    header = None
    for ln in lines:
        if ln.strip():
            header = _parse(ln)
            break
    if not isinstance(header, dict) or header.get("type") != "session":
        # listed with the reason: the browser left such files out silently (314 rows for 315 files)
        why = (
            "is empty"
            if st.st_size == 0
            else "has no valid session header: pi 1.6.0 refuses to open it, pi 0.80.2 would start "
            "a new session over it"
        )
        return _failed(p, st.st_mtime, why)
    parsed = [_parse(ln) for ln in lines[1:] if ln.strip()]
    values = [v for v in parsed if isinstance(v, dict)]
    damaged = len(parsed) - len(values)
    tail_vals = []
    if tail:
        tl = tail.split(b"\n")[1:]  # first tail line may be cut
        parsed_tail = [_parse(ln) for ln in tl if ln.strip()]
        tail_vals = [v for v in parsed_tail if isinstance(v, dict)]
        damaged += len(parsed_tail) - len(tail_vals)
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
    if st.st_size > HEAD + TAIL and not any(v.get("type") == "session_info" for v in tail_vals):
        # pi names a session by its last session_info entry, wherever it is: in a big file it was
        # often in neither the head nor the tail read here, and the browser showed (and searched)
        # the first message instead of the name the window shows
        found = _last_session_name(p, st)
        if found is not None:
            name = found[0]
    if modified is None:
        modified = _ts(header.get("timestamp")) or st.st_mtime
    cwd_value = header.get("cwd")
    cwd = cwd_value if isinstance(cwd_value, str) else ""
    parent = header.get("parentSession")
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
        parent_session=parent if isinstance(parent, str) and parent else None,
        legacy_version=version_of(header) if needs_migration(header) else None,
        damaged_seen=damaged,
    )


#: the samples of a big file's lines the browser's entry estimate reads (spread over the file)
LINE_SAMPLES = 16
LINE_SAMPLE_BYTES = 32 * 1024


def _estimated_lines(fh: Any, size: int) -> int:
    """A big file's line count from the newlines in LINE_SAMPLES pieces spread over it: the
    average line of its first 64 kB (long first messages) made a 117 MB session's ~106k entries
    "~68,010"; pieces across the whole file land within a few per cent for 512 kB read."""
    newlines = read = 0
    step = max(1, (size - LINE_SAMPLE_BYTES) // max(1, LINE_SAMPLES - 1))
    for k in range(LINE_SAMPLES):
        fh.seek(min(k * step, max(0, size - LINE_SAMPLE_BYTES)))
        piece = fh.read(LINE_SAMPLE_BYTES)
        newlines += piece.count(b"\n")
        read += len(piece)
    return max(1, round(size * newlines / max(1, read)))


#: (path, size, mtime_ns) → the last session_info's name, or None for a file with none: a big
#: file is searched once per state, not on every listing
_NAMES: dict[tuple[str, int, int], tuple[str | None] | None] = {}
#: the type's value with its quotes: in a JSON string that quotes it they are escaped
#: (\"session_info\"), so only a key's value matches; the line found is parsed to be sure
_SESSION_INFO = b'"session_info"'


def _last_session_name(path: str, st: os.stat_result) -> tuple[str | None] | None:
    """(name,) of the last session_info entry in the file (its name None when blank), or None when
    it has none. Searched backwards with mmap (C speed: ~0.3 s on 1 GB when there is none)."""
    key = (path, st.st_size, st.st_mtime_ns)
    if key in _NAMES:
        return _NAMES[key]
    import mmap

    found: tuple[str | None] | None = None
    try:
        with open_regular(path) as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            end = len(mm)
            while True:
                at = mm.rfind(_SESSION_INFO, 0, end)
                if at < 0:
                    break
                start = mm.rfind(b"\n", 0, at) + 1
                stop = mm.find(b"\n", at)
                v = _parse(mm[start : stop if stop >= 0 else len(mm)])
                if isinstance(v, dict) and v.get("type") == "session_info":
                    raw = v.get("name")
                    found = (raw.strip() if isinstance(raw, str) and raw.strip() else None,)
                    break
                end = at
    except (OSError, ValueError, SessionFileError):
        return None
    if len(_NAMES) > 4096:
        _NAMES.clear()
    _NAMES[key] = found
    return found


def _failed(path: str, modified: float, why: str) -> SessionInfo:
    """The row of a file that could not be listed: named by its file name, saying why."""
    modified = modified if math.isfinite(modified) else 0.0
    return SessionInfo(path, "", "", None, os.path.basename(path), "", modified, 0, 0, False, why)


def _read_info_isolated(path: Path) -> SessionInfo | None:
    try:
        return read_info(path)
    except Exception as exc:  # one bad file must not empty the whole list
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0
        return _failed(os.fspath(path), mtime, f"cannot be listed: {type(exc).__name__}: {exc}"[:300])


def list_sessions(root: str | os.PathLike[str]) -> list[SessionInfo]:
    """Every session under ``root`` (pi's layout: one folder per project), newest first."""
    r = Path(root)
    files: list[Path] = []
    if r.is_dir():
        files += sorted(r.glob("*.jsonl"))
        files += sorted(r.glob("*/*.jsonl"))
    out = [i for i in (_read_info_isolated(f) for f in files) if i is not None]
    out.sort(key=lambda i: i.modified, reverse=True)
    return out


def fmt_date(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):
        return "?"


def fmt_size(n: int) -> str:
    """A file or text size in decimal units, as the status bar, the banners and the README say
    sizes ("a 110 MB session"); the browser said 106.1 MB (MiB) where the status bar said 111.3 MB."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return str(n)
