"""Every write to a session file goes through here.

Rules (a session file is the user's work):
* never rewrite an existing session in place; only append one line at a time;
* before appending, check that the file is exactly what was planned on (size,
  mtime, hash of the tail); if pi appended meanwhile, raise StaleSessionError
  so the caller re-reads the tail and re-plans instead of committing a stale entry;
* a file that does not end in "\\n" (a crashed writer) gets the newline first,
  so our line never glues onto the broken one;
* one `write` of the whole line with O_APPEND, then fsync, then read it back;
* new files (forks, upgrades) are written to a temp file in the same folder,
  fsynced, linked into place without clobbering, and the folder is fsynced.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .errors import StaleSessionError, WriteError
from .jsvalue import js_stringify

__all__ = [
    "AppendResult",
    "FileFingerprint",
    "append_line",
    "fingerprint",
    "write_new_file",
]

_TAIL_BYTES = 64 * 1024
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(path: str) -> threading.Lock:
    key = os.path.realpath(path)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


@dataclass(frozen=True, slots=True)
class FileFingerprint:
    """What the file looked like when it was read: size, mtime and a hash of its tail."""

    size: int
    mtime_ns: int
    tail_sha256: str

    def describe(self) -> str:
        return f"{self.size} bytes, tail {self.tail_sha256[:12]}"


def _tail_hash(fd: int, size: int) -> str:
    start = max(0, size - _TAIL_BYTES)
    data = os.pread(fd, size - start, start)
    return hashlib.sha256(data).hexdigest()


def fingerprint(path: str | os.PathLike[str]) -> FileFingerprint:
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        return FileFingerprint(st.st_size, st.st_mtime_ns, _tail_hash(fd, st.st_size))
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class AppendResult:
    offset: int  # where the entry's line starts
    line: bytes  # the bytes written (newline included; a repair newline excluded)
    repaired_missing_newline: bool
    after: FileFingerprint


def append_line(
    path: str | os.PathLike[str], entry: dict[str, Any], expected: FileFingerprint
) -> AppendResult:
    """Append one entry as a JSON line, if and only if the file is still `expected`."""
    text = js_stringify(entry)
    if text is None or "\n" in text:
        raise WriteError("refusing to write an entry that is not a single JSON line")
    line = text.encode("utf-8", "surrogatepass") + b"\n"
    p = os.fspath(path)
    with _lock_for(p):
        try:
            fd = os.open(p, os.O_RDWR | os.O_APPEND)
        except OSError as e:
            raise WriteError(f"cannot open {p} for appending: {e.strerror}") from e
        try:
            st = os.fstat(fd)
            if st.st_size != expected.size or _tail_hash(fd, st.st_size) != expected.tail_sha256:
                raise StaleSessionError(
                    f"{p} changed on disk since it was read ({expected.size} → {st.st_size} bytes): "
                    "pi (or another program) wrote to it; re-read the session and plan again"
                )
            repair = False
            if st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) != b"\n":
                repair = True
            payload = (b"\n" if repair else b"") + line
            try:
                written = os.write(fd, payload)
            except OSError as e:
                raise WriteError(f"writing to {p} failed: {e.strerror}; the file may need checking") from e
            if written != len(payload):
                raise WriteError(f"short write to {p} ({written} of {len(payload)} bytes)")
            os.fsync(fd)
            end = os.lseek(fd, 0, os.SEEK_CUR)
            start = end - len(line)
            if start != st.st_size + (1 if repair else 0):
                # pi appended between our check and our write (a window of microseconds):
                # our line is intact but sits after pi's; the caller must re-read.
                raise StaleSessionError(
                    f"pi appended to {p} while we were writing; our entry was written at byte {start} "
                    "after pi's line. Reload the session: the new entry is on its own branch."
                )
            back = os.pread(fd, len(line), start)
            if back != line:
                raise WriteError(
                    f"verification failed: the bytes read back from {p} differ from what was written"
                )
            orjson.loads(back)
            st2 = os.fstat(fd)
            after = FileFingerprint(st2.st_size, st2.st_mtime_ns, _tail_hash(fd, st2.st_size))
        finally:
            os.close(fd)
    return AppendResult(start, line, repair, after)


def _fsync_dir(directory: str) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_new_file(path: str | os.PathLike[str], lines: list[str], *, overwrite: bool = False) -> int:
    """Create a new session file atomically; never clobbers unless `overwrite`.

    Returns the number of bytes written.
    """
    target = Path(path)
    directory = str(target.parent.resolve())
    data = "".join(lines).encode("utf-8", "surrogatepass")
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{threading.get_ident()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        if overwrite:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)
            except FileExistsError as e:
                raise WriteError(f"{target} already exists; not overwriting it") from e
            finally:
                tmp.unlink(missing_ok=True)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(directory)
    if target.read_bytes() != data:
        raise WriteError(f"verification failed for {target}")
    return len(data)
