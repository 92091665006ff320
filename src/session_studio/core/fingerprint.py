"""What a session file looked like when the user's view of it was read.

A :class:`FileFingerprint` is taken when a :class:`~session_studio.core.session.Session`
is opened (and moved forward when it indexes lines pi appended). Every writer
compares the file with it right before writing: the identity (device, inode)
catches a file replaced by rename or by a symlink to another session; the size
catches appends; hashes of the first and last 64 KiB of the indexed bytes catch
a same-size file with another head or tail; the mtime catches an in-place edit in
the middle. Files are opened without blocking and refused unless regular, so a
FIFO or a device never hangs or floods a reader.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO, NamedTuple

from .digest import new_hash
from .errors import SessionFileError, StaleSessionError

__all__ = [
    "CHANGED_ADVICE",
    "PROBE_BYTES",
    "FileFingerprint",
    "check_unchanged",
    "fingerprint",
    "fingerprint_fd",
    "head_hash",
    "open_regular",
    "open_regular_fd",
    "still_prefix",
    "tail_hash",
]

PROBE_BYTES = 64 * 1024
CHANGED_ADVICE = "the file changed since you opened it; reload"


class FileFingerprint(NamedTuple):
    """Identity and content summary of the first `size` bytes of a file."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    head_digest: str
    tail_digest: str

    def describe(self) -> str:
        return f"{self.size} bytes, inode {self.ino}, tail {self.tail_digest[:12]}"


def _hash_range(fd: int, start: int, end: int) -> str:
    h = new_hash()
    pos = start
    while pos < end:
        data = os.pread(fd, min(end - pos, PROBE_BYTES), pos)
        if not data:
            break  # the file became shorter than `end`: the hash will not match
        h.update(data)
        pos += len(data)
    return h.hexdigest()


def head_hash(fd: int, size: int) -> str:
    return _hash_range(fd, 0, min(size, PROBE_BYTES))


def tail_hash(fd: int, size: int) -> str:
    return _hash_range(fd, max(0, size - PROBE_BYTES), size)


def _describe_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular_fd(path: str, flags: int = os.O_RDONLY, *, opened_before: bool = False) -> int:
    """Open `path` without ever blocking (FIFOs) and refuse anything but a regular file.

    `opened_before`: the user's view was loaded from this path (a missing file was deleted).
    """
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as e:
        why = ": it was deleted or moved since you opened it; nothing was written" if opened_before else ""
        raise SessionFileError(f"session file not found: {path}{why}") from e
    except IsADirectoryError as e:
        raise SessionFileError(f"session path is a directory: {path}") from e
    except OSError as e:
        writing = flags & (os.O_WRONLY | os.O_RDWR)
        raise SessionFileError(
            f"cannot open {path}: {e.strerror}" + ("; nothing was written" if writing else "")
        ) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SessionFileError(
                f"{path} is {_describe_kind(st.st_mode)}, not a session file; refusing to read it"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str) -> BinaryIO:
    """A buffered binary reader over a regular file (see :func:`open_regular_fd`)."""
    return os.fdopen(open_regular_fd(path), "rb")


def fingerprint_fd(fd: int, size: int | None = None) -> FileFingerprint:
    """The fingerprint of the first `size` bytes (default: all) of the open file `fd`."""
    st = os.fstat(fd)
    n = st.st_size if size is None else size
    return FileFingerprint(st.st_dev, st.st_ino, n, st.st_mtime_ns, head_hash(fd, n), tail_hash(fd, n))


def fingerprint(path: str | os.PathLike[str]) -> FileFingerprint:
    fd = open_regular_fd(os.fspath(path))
    try:
        return fingerprint_fd(fd)
    finally:
        os.close(fd)


def _difference(fd: int, expected: FileFingerprint) -> str | None:
    """What differs between the open file and `expected` (None: nothing)."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (expected.dev, expected.ino):
        return "it was replaced by another file"
    if st.st_size != expected.size:
        return f"its size changed from {expected.size} to {st.st_size} bytes"
    if tail_hash(fd, expected.size) != expected.tail_digest:
        return "its last bytes differ"
    if head_hash(fd, expected.size) != expected.head_digest:
        return "its first bytes differ"
    if st.st_mtime_ns != expected.mtime_ns:
        return "it was modified (its modification time changed)"
    return None


def check_unchanged(fd: int, expected: FileFingerprint, path: str) -> None:
    """Raise StaleSessionError unless the open file is exactly what `expected` describes."""
    diff = _difference(fd, expected)
    if diff is not None:
        raise StaleSessionError(f"{path}: {CHANGED_ADVICE} ({diff}). Nothing was written.")


def still_prefix(fd: int, expected: FileFingerprint) -> str | None:
    """None if the open file is the same file, grown or not (pi only appends); else why not."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (expected.dev, expected.ino):
        return "the file was replaced by another file"
    if st.st_size < expected.size:
        return "the file became shorter"
    if head_hash(fd, expected.size) != expected.head_digest:
        return "the file's first bytes changed"
    if tail_hash(fd, expected.size) != expected.tail_digest:
        return "the bytes already read changed"
    return None
