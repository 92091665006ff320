"""An intent journal for appends, so a torn line of ours is recognised after a crash.

A single `write` of a big line (a 30 MB compaction) can be cut short by `kill -9`
or a power loss: Linux copies page by page and a fatal signal stops it between
pages. Before each append the writer records here where the line starts, its
length and hashes of its 64 KiB blocks; after the write it removes the record.
If a later open finds the file ending in an incomplete line that starts exactly
there, on the same file, with every complete block matching, the tail is ours and
:func:`cut_torn_tail` may cut the file back to where it was (``session-studio
repair FILE``) before pi glues its next append onto it. The journal holds hashes
and sizes only, never content. It lives in ``$XDG_STATE_HOME/session-studio/journal``
(``SESSION_STUDIO_STATE_DIR`` overrides).
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from .errors import WriteError
from .fingerprint import FileFingerprint, check_unchanged, open_regular_fd, tail_hash

__all__ = ["BLOCK_BYTES", "TornTail", "begin_append", "cut_torn_tail", "end_append", "find_torn_tail"]

logger = logging.getLogger(__name__)

BLOCK_BYTES = 64 * 1024


def journal_dir() -> Path:
    base = os.environ.get("SESSION_STUDIO_STATE_DIR")
    if base:
        return Path(base) / "journal"
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "session-studio" / "journal"


def _journal_file(path: str) -> Path:
    key = hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return journal_dir() / f"{key}.json"


def _block_hashes(data: bytes | memoryview) -> list[str]:
    return [
        hashlib.sha256(data[i : i + BLOCK_BYTES]).hexdigest()[:32]
        for i in range(0, len(data) - BLOCK_BYTES + 1, BLOCK_BYTES)
    ]


def begin_append(path: str, fd: int, start: int, payload: bytes) -> Path | None:
    """Record that `payload` is about to be appended at `start`; None if it cannot be recorded."""
    st = os.fstat(fd)
    doc = {
        "path": os.path.realpath(path),
        "dev": st.st_dev,
        "ino": st.st_ino,
        "start": start,
        "length": len(payload),
        "before": tail_hash(fd, start),  # the 64 KiB the line follows
        "blocks": _block_hashes(payload),
    }
    f = _journal_file(path)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_name(f"{f.name}.tmp{os.getpid()}")
        wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(wfd, orjson.dumps(doc))
            os.fsync(wfd)
        finally:
            os.close(wfd)
        os.replace(tmp, f)
    except OSError as e:
        logger.warning("append journal not written for %s: %s", path, e)
        return None
    return f


def end_append(journal: Path | None) -> None:
    if journal is not None:
        try:
            journal.unlink(missing_ok=True)
        except OSError as e:
            logger.warning("append journal %s not removed: %s", journal, e)


@dataclass(frozen=True, slots=True)
class TornTail:
    """An incomplete line Session Studio was appending when it was interrupted."""

    start: int  # the file's size before the append: where to cut back to
    size: int  # the file's size now
    length: int  # the length the line should have had

    def describe(self) -> str:
        return (
            f"the file ends with {self.size - self.start:,} of the {self.length:,} bytes of a line "
            "Session Studio was appending when it was interrupted; pi would glue its next append onto "
            "it. Cut it back with `session-studio repair FILE`"
        )


def find_torn_tail(path: str, fd: int) -> TornTail | None:
    """Our own interrupted append at the end of the open file, if that is what it ends with."""
    f = _journal_file(path)
    try:
        doc = orjson.loads(f.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    try:
        st = os.fstat(fd)
        start, length = int(doc["start"]), int(doc["length"])
        if (doc["dev"], doc["ino"]) != (st.st_dev, st.st_ino) or doc["path"] != os.path.realpath(path):
            return None
        if not start < st.st_size < start + length:
            return None
        if tail_hash(fd, start) != doc["before"]:
            return None
        blocks: list[str] = doc["blocks"]
        complete = (st.st_size - start) // BLOCK_BYTES
        for i in range(min(complete, len(blocks))):
            data = os.pread(fd, BLOCK_BYTES, start + i * BLOCK_BYTES)
            if hashlib.sha256(data).hexdigest()[:32] != blocks[i]:
                return None
        if os.pread(fd, 1, st.st_size - 1) == b"\n":
            return None  # it ends with a complete line: not torn
        return TornTail(start, st.st_size, length)
    except (KeyError, TypeError, ValueError, OSError):
        return None


def cut_torn_tail(path: str, expected: FileFingerprint) -> TornTail:
    """Cut our own torn tail off (the file must still be `expected`); returns what was cut."""
    fd = open_regular_fd(path, os.O_RDWR, opened_before=True)
    try:
        check_unchanged(fd, expected, path)
        torn = find_torn_tail(path, fd)
        if torn is None:
            raise WriteError(
                f"{path} does not end with an interrupted append of Session Studio's; nothing was changed"
            )
        os.ftruncate(fd, torn.start)
        os.fsync(fd)
        if os.fstat(fd).st_size != torn.start:
            raise WriteError(f"cutting {path} back to {torn.start} bytes failed; check the file")
    finally:
        os.close(fd)
    end_append(_journal_file(path))
    return torn
