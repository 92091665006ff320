"""Every write to a session file goes through here.

Rules (a session file is the user's work):
* never rewrite an existing session in place, except `rewrite_file` (upgrade, on request);
  otherwise only append one line at a time;
* before writing, check that the file is exactly what the user's view was loaded from
  (:class:`~session_studio.core.fingerprint.FileFingerprint`: identity, size, mtime,
  head and tail hashes); if not, raise StaleSessionError and write nothing;
* a file that does not end in "\\n" (a crashed writer) gets the newline first,
  so our line never glues onto the broken one;
* the line must read back under pi's JSON rules (JSON.parse, lone surrogates allowed);
* one `write` of the whole line with O_APPEND, then fsync, then read it back; a short or
  failed write is cut back to the size planned on (only bytes provably ours are cut);
* an intent journal (core.journal) lets a later open recognise a line torn by kill -9;
* new files (forks, upgrades) are written to a temp file in the same folder with the
  source's mode (and owner where permitted), fsynced, moved into place, the folder fsynced.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from . import journal
from .errors import StaleSessionError, WriteError
from .fingerprint import FileFingerprint, check_unchanged, fingerprint, fingerprint_fd, open_regular_fd
from .jsvalue import js_stringify
from .reader import parse_line

__all__ = [
    "AppendResult",
    "FileFingerprint",
    "append_line",
    "fingerprint",
    "rewrite_file",
    "write_new_file",
    "writes_done",
    "writes_so_far",
]

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(path: str) -> threading.Lock:
    key = os.path.realpath(path)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


#: what this process wrote and completed, numbered, in words ("an entry appended to F"), for a
#: message after an interrupt: Ctrl+C right after a write said "nothing was written"
_done: list[tuple[int, str]] = []
_DONE_KEPT = 20


def writes_done(since: int = 0) -> list[str]:
    """The writes this process completed from number ``since`` on (see :func:`writes_so_far`),
    oldest first; a window open for days keeps only the last few."""
    return [what for n, what in _done if n >= since]


def writes_so_far() -> int:
    """How many writes this process completed: a command's own are ``writes_done(writes_so_far())``
    taken before it."""
    return _done[-1][0] + 1 if _done else 0


def _record_done(what: str) -> None:
    _done.append((writes_so_far(), what))
    del _done[:-_DONE_KEPT]


_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Ctrl+C and SIGTERM wait until the block is done: a write, its check and its record (or its
    cut-back) are never broken off halfway (a kill during a 35 MB append left a torn line; a
    Ctrl+C after it, a record saying nothing was written). Delivered as they would have been once
    the block ends. Only the main thread can set handlers; elsewhere signals reach no Python code
    of ours anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        arrived.append(signum)

    before = {sig: signal.signal(sig, hold) for sig in _DEFERRED}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(arrived):
            handler = before[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)  # Python's own SIGINT handler raises KeyboardInterrupt here
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


@dataclass(frozen=True, slots=True)
class AppendResult:
    offset: int  # where the entry's line starts
    line: bytes  # the bytes written (newline included; a repair newline excluded)
    repaired_missing_newline: bool
    after: FileFingerprint
    #: bytes another program (pi) appended between our check and our write; our line follows them
    interleaved_bytes: int = 0

    def note(self) -> str | None:
        """What the user must know about where the entry landed (None: where planned)."""
        if not self.interleaved_bytes:
            return None
        return (
            f"another program (pi) appended {self.interleaved_bytes} bytes while this entry was being written; the entry "
            f"was written after them (at byte {self.offset}) and is in the file, as a branch from the "
            "entry it was planned on"
        )


def _os_write(fd: int, data: bytes | memoryview) -> int:
    """The one call that writes session data (tests inject full disks and kills here)."""
    return os.write(fd, data)


def _cut_back(fd: int, planned: int, payload: bytes) -> str:
    """Remove a partial copy of `payload` after `planned`, only if the bytes there are ours."""
    size = os.fstat(fd).st_size
    if size == planned:
        return f"the file was left at its {planned} bytes"
    if (
        size < planned
        or size - planned > len(payload)
        or os.pread(fd, size - planned, planned) != payload[: size - planned]
    ):
        return (
            f"the file is now {size} bytes (planned on {planned}) and its end is not only ours, so it "
            "was not cut; check it before pi appends"
        )
    try:
        os.ftruncate(fd, planned)
    except OSError as e:
        return f"cutting the partial line off failed ({e.strerror}): {size - planned} torn bytes remain"
    with contextlib.suppress(OSError):  # the cut is what readers (pi) see, flushed or not
        os.fsync(fd)
    after = os.fstat(fd).st_size
    if after != planned:
        return f"cutting the partial line off failed: the file is {after} bytes, planned on {planned}"
    return f"the partial line was cut off; the file is back to its {planned} bytes"


def append_line(
    path: str | os.PathLike[str], entry: dict[str, Any], expected: FileFingerprint
) -> AppendResult:
    """Append one entry as a JSON line, if and only if the file is still `expected`."""
    text = js_stringify(entry)
    if text is None or "\n" in text:
        raise WriteError("refusing to write an entry that is not a single JSON line")
    body = text.encode("utf-8", "surrogatepass")
    value, kind, _msg = parse_line(body)
    if value is None or (kind is not None and kind != "invalid_utf8"):
        raise WriteError("refusing to write an entry pi could not read back (JSON.parse would reject it)")
    line = body + b"\n"
    p = os.fspath(path)
    with _lock_for(p), _interrupts_deferred():
        fd = open_regular_fd(p, os.O_RDWR | os.O_APPEND, opened_before=True)
        try:
            check_unchanged(fd, expected, p)
            planned = expected.size
            repair = planned > 0 and os.pread(fd, 1, planned - 1) != b"\n"
            payload = (b"\n" if repair else b"") + line
            intent = journal.begin_append(p, fd, planned, payload)
            try:
                written = _os_write(fd, payload)
            except OSError as e:
                state = _cut_back(fd, planned, payload)
                journal.end_append(intent)
                full = " (the disk is full)" if e.errno == errno.ENOSPC else ""
                raise WriteError(f"writing to {p} failed: {e.strerror}{full}; {state}") from e
            if written != len(payload):
                # where our bytes start (after any line pi appended since the check)
                state = _cut_back(fd, os.lseek(fd, 0, os.SEEK_CUR) - written, payload)
                journal.end_append(intent)
                raise WriteError(
                    f"short write to {p} ({written} of {len(payload)} bytes; is the disk full?); {state}"
                )
            end = os.lseek(fd, 0, os.SEEK_CUR)
            payload_start = end - len(payload)
            try:
                os.fsync(fd)
            except OSError as e:  # the data may never reach the disk: take the line back
                state = _cut_back(fd, payload_start, payload)
                journal.end_append(intent)
                raise WriteError(f"flushing {p} to disk failed: {e.strerror}; {state}") from e
            start = end - len(line)
            if os.pread(fd, len(payload), payload_start) != payload:
                state = _cut_back(fd, payload_start, payload)
                journal.end_append(intent)
                raise WriteError(
                    f"verification failed: the bytes read back from {p} differ from what was written; {state}"
                )
            journal.end_append(intent)
            _record_done(f"an entry ({len(line):,} bytes) appended to {p}")
            after = fingerprint_fd(fd)
        finally:
            os.close(fd)
    return AppendResult(start, line, repair, after, payload_start - planned)


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


def _write_temp(target: Path, data: bytes, mode: int, owner: tuple[int, int] | None) -> Path:
    """`data` in a new temp file next to `target` with `mode` (and `owner` where permitted), fsynced."""
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{threading.get_ident()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        raise WriteError(f"cannot create a file in {target.parent}: {e.strerror}; nothing was written") from e
    try:
        if owner is not None:
            with contextlib.suppress(OSError):  # only root may give a file away; the mode stays private
                os.fchown(fd, *owner)
        os.fchmod(fd, mode)  # after chown, which may clear set-id bits
        view = memoryview(data)
        while view:
            n = _os_write(fd, view)
            if n <= 0:
                raise WriteError(f"short write to {tmp}")
            view = view[n:]
        os.fsync(fd)
    except OSError as e:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        full = " (the disk is full)" if e.errno == errno.ENOSPC else ""
        raise WriteError(f"writing {target} failed: {e.strerror}{full}; nothing was changed") from e
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    return tmp


def write_new_file(
    path: str | os.PathLike[str],
    lines: list[str],
    *,
    overwrite: bool = False,
    mode: int = 0o644,
    owner: tuple[int, int] | None = None,
) -> int:
    """Create a new session file atomically; never clobbers unless `overwrite`.

    `mode` is applied exactly (not masked by the umask): a fork keeps its source's mode.
    Returns the number of bytes written.
    """
    target = Path(path)
    directory = str(target.parent.resolve())
    data = "".join(lines).encode("utf-8", "surrogatepass")
    with _interrupts_deferred():
        _place_new_file(target, directory, data, mode, owner, overwrite)
    return len(data)


def _place_new_file(
    target: Path, directory: str, data: bytes, mode: int, owner: tuple[int, int] | None, overwrite: bool
) -> None:
    tmp = _write_temp(target, data, mode, owner)
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
    _record_done(f"the new file {target} ({len(data):,} bytes)")


def rewrite_file(
    path: str | os.PathLike[str], lines: list[str], expected: FileFingerprint, backup: Path
) -> None:
    """Replace `path` by `lines` (an upgrade), keeping the original as `backup`.

    Nothing pi appends is ever lost: the backup is a hard link to the original inode
    (a copy where links are impossible), the file is checked against `expected` right
    before the rename, and after it the original inode is checked again: if pi appended
    in between, the original (with pi's lines) is put back, with whatever pi appended to
    the new file meanwhile, and StaleSessionError says so. A backup name that is taken is
    refused, and never removed: only a backup this call made is. A symbolic link is refused
    (the rename would replace the link, not the file it names). The new file keeps the
    original's mode and owner.
    """
    p = os.fspath(path)
    target = Path(p)
    if target.is_symlink():
        raise WriteError(
            f"{p} is a symbolic link to {os.path.realpath(p)}: upgrade that file instead; nothing was changed"
        )
    data = "".join(lines).encode("utf-8", "surrogatepass")
    with _lock_for(p), _interrupts_deferred():
        src = open_regular_fd(p, opened_before=True)
        try:
            check_unchanged(src, expected, p)
            st = os.fstat(src)
            tmp = _write_temp(target, data, st.st_mode & 0o7777, (st.st_uid, st.st_gid))
            linked = made_backup = False
            try:
                try:
                    os.link(p, backup)
                    linked = made_backup = True
                except FileExistsError as e:
                    raise WriteError(f"the backup {backup} already exists; nothing was changed") from e
                except OSError:
                    _copy_fd(src, backup, st.st_mode & 0o7777)
                    made_backup = True
                b = os.stat(backup)
                if linked and (b.st_dev, b.st_ino) != (expected.dev, expected.ino):
                    raise StaleSessionError(
                        f"{p}: the file changed since you opened it; reload. Nothing was changed."
                    )
                check_unchanged(src, expected, p)
                now = os.stat(p)
                if (now.st_dev, now.st_ino) != (expected.dev, expected.ino):
                    raise StaleSessionError(
                        f"{p}: the file changed since you opened it; reload. Nothing was changed."
                    )
                os.replace(tmp, p)
            except BaseException:
                tmp.unlink(missing_ok=True)
                if made_backup:  # never a file someone else (another upgrade) made under that name
                    backup.unlink(missing_ok=True)
                raise
            grown = os.fstat(src).st_size
            if grown != expected.size:
                _put_back(p, src, backup, linked, st.st_mode & 0o7777, len(data))
                raise StaleSessionError(
                    f"{p}: pi appended {grown - expected.size} bytes while it was being upgraded; the original "
                    "file, with pi's new lines, was put back and nothing was changed. Reload and upgrade again."
                )
            _fsync_dir(str(target.parent.resolve()))
        finally:
            os.close(src)
        with open(target, "rb") as fh:  # pi may already have appended to the new file: check our part
            written = fh.read(len(data))
        if written != data:
            raise WriteError(f"verification failed for {target} (the original is kept as {backup})")
        _record_done(f"{target} rewritten as version 3 (the original kept as {backup})")


def _copy_fd(src: int, dest: Path, mode: int) -> None:
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(os.dup(src), "rb") as fin, os.fdopen(os.dup(fd), "wb") as fout:
            fin.seek(0)
            shutil.copyfileobj(fin, fout)
            fout.flush()
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        dest.unlink(missing_ok=True)
        raise
    os.close(fd)


def _put_back(p: str, src: int, backup: Path, linked: bool, mode: int, ours: int) -> None:
    """Restore the original inode's current content (pi's new lines included) at `p`, and after
    it what pi appended to the new file (beyond our `ours` bytes) once it was in place."""
    late = b""
    with contextlib.suppress(OSError), open(p, "rb") as fh:
        fh.seek(ours)
        late = fh.read()
    if linked:
        os.replace(backup, p)  # the backup *is* the original inode
    else:
        tmp = Path(p).with_name(f".{Path(p).name}.restore-{os.getpid()}")
        _copy_fd(src, tmp, mode)
        os.replace(tmp, p)
        backup.unlink(missing_ok=True)
    if late:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(late)
            while view:
                view = view[_os_write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
