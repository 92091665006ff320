"""What earlier content searches learned about whole files, so that typing on does not read them
again (the session browser asks "does this file hold the text?" of every session at each pause).

A file's lines match a text when one of their strings, lowercased, holds the text lowercased
(core.content_search). Containment is transitive, so for the same bytes:
- a file that holds no string containing ``a`` holds none containing any ``b`` with ``a`` in ``b``
  (typing "rend" then "render": the sessions without "rend" are not read again);
- a file that holds ``b`` holds every ``a`` in ``b`` (deleting back to "rend").
The texts compared are the lowercased ones: ``str.lower`` is not a map of single characters (a
final sigma lowers by its context), so the original texts' containment proves nothing.

Knowledge is kept per file identity (device, inode, size, modification time): pi appending to a
session changes its size, so nothing learned of the older bytes is used for the new ones.
"""

from __future__ import annotations

import os
import threading

__all__ = ["FileIdentity", "FileSearchMemo", "file_identity"]

#: (st_dev, st_ino, st_size, st_mtime_ns)
FileIdentity = tuple[int, int, int, int]


def file_identity(st: os.stat_result) -> FileIdentity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class _Known:
    """Of one file's bytes: the lowercased texts it lacks and those it holds, none implied by another."""

    __slots__ = ("absent", "identity", "present")

    def __init__(self, identity: FileIdentity) -> None:
        self.identity = identity
        self.absent: list[str] = []
        self.present: list[str] = []


class FileSearchMemo:
    """Answers of :func:`core.content_search.file_holds_text` for files that did not change since.

    Safe to share between threads (a cancelled search's worker may still record what it read
    while the next one asks). At most ``per_file`` texts of each kind are kept per file, the
    oldest dropped first."""

    def __init__(self, per_file: int = 32) -> None:
        self._per_file = per_file
        self._files: dict[str, _Known] = {}
        self._lock = threading.Lock()

    def known(self, path: str, identity: FileIdentity, needle: str) -> bool | None:
        """Whether the file (if still ``identity``) holds the lowercased ``needle``, when an earlier
        answer proves it; None when it must be read."""
        with self._lock:
            k = self._files.get(path)
            if k is None or k.identity != identity:
                return None
            if any(a in needle for a in k.absent):
                return False
            if any(needle in p for p in k.present):
                return True
            return None

    def remember(self, path: str, identity: FileIdentity, needle: str, holds: bool) -> None:
        """Record that the file, as ``identity``, holds (or lacks) the lowercased ``needle``."""
        if not needle:
            return
        with self._lock:
            k = self._files.get(path)
            if k is None or k.identity != identity:
                k = self._files[path] = _Known(identity)
            if holds:
                # what the new text holds is implied by it from now on
                k.present = [*self._room([p for p in k.present if p not in needle]), needle]
            else:
                # what holds the new text is implied absent by it from now on
                k.absent = [*self._room([a for a in k.absent if needle not in a]), needle]

    def _room(self, texts: list[str]) -> list[str]:
        """The newest of ``texts`` that leave room for one more."""
        return texts[max(0, len(texts) - self._per_file + 1) :]

    def forget(self, keep: set[str]) -> None:
        """Drop what is known of every file but those in ``keep`` (the ones still listed)."""
        with self._lock:
            for path in [p for p in self._files if p not in keep]:
                del self._files[path]
