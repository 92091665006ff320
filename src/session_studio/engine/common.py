"""Helpers shared by the engine's actions."""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import WriteError
from ..core.fingerprint import FileFingerprint, check_unchanged, open_regular_fd
from ..core.jsvalue import js_key
from ..core.migrate import new_entry_id
from ..core.session import Session
from ..core.writer import AppendResult, append_line

__all__ = ["append_entry", "ensure_appendable", "fresh_id", "loaded_fingerprint"]


def fresh_id(session: Session, taken: set[str] | None = None) -> str:
    """pi's generateId against the session's id index."""
    extra = taken or set()
    return new_entry_id(lambda c: js_key(c) in session.by_id or c in extra)


def ensure_appendable(session: Session) -> None:
    """Refuse to append to files pi would rewrite on open (legacy or header-less), and to a file
    that ends with a line of ours torn by an interrupted write (it must be cut off first)."""
    if session.torn_tail is not None:
        raise WriteError(
            f"{session.torn_tail.describe()} before anything is appended: after another entry those bytes "
            "would be a damaged line for good. Nothing was written."
        )
    if session.reset:
        raise WriteError(
            "this file has no valid session header: pi 0.80.2 would replace it with a new empty session, "
            "and pi 1.6.0 refuses to open it. Nothing can be appended to it safely."
        )
    if session.migrated:
        sv = session.source_version
        version = "1 (no version field)" if sv is None else str(sv)
        raise WriteError(
            f"this is a version {version} session: pi rewrites such files with new ids when it "
            "opens them, so entries appended now would not line up. Upgrade it first (a backup is kept: "
            "`session-studio upgrade FILE`) or fork its leaf's path to a new v3 file "
            "(`session-studio fork FILE`, without --leaf: its ids are made anew on every open)."
        )


def loaded_fingerprint(session: Session) -> FileFingerprint:
    """The fingerprint taken when the user's view of the file was read; refused if the
    file is no longer that (pi appended, it was replaced, deleted...)."""
    fp = session.fingerprint
    if fp is None:
        raise WriteError(f"{session.path} was not read from a file; there is nothing to write to")
    fd = open_regular_fd(session.path, opened_before=True)
    try:
        check_unchanged(fd, fp, session.path)
    finally:
        os.close(fd)
    return fp


def append_entry(
    session: Session,
    entry: dict[str, Any],
    expected: FileFingerprint | None = None,
    *,
    refresh: bool = True,
) -> AppendResult:
    """Append through the safe writer, then (unless `refresh` is False) index the new line.

    A caller that reads `session` from another thread (the GUI) passes refresh=False
    and calls `session.refresh()` on its own thread after the write.
    """
    ensure_appendable(session)
    fp = expected if expected is not None else loaded_fingerprint(session)
    result = append_line(session.path, entry, fp)
    if result.interleaved_bytes:
        # the entry is in the file (after pi's lines); nothing more may be appended from this view
        session.notes.append(result.note() or "")
    if result.repaired_missing_newline:  # said nothing: the user did not learn the file was damaged
        session.notes.append(
            "the file's last line was incomplete (a program stopped while writing it): a line end was "
            "written before the entry, and that line stays a damaged line, which pi skips"
        )
    if refresh:
        session.refresh()
    return result
