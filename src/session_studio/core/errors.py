"""Errors raised by the core.

SessionStudioError
├── SessionFileError          the file cannot be read at all (missing, a directory, permissions)
├── SessionLoadError          pi itself would throw while opening the file (names the line)
├── EntryNotFoundError        an id that is not in the session (`Entry X not found`, as pi says)
├── PiComputationError        pi would throw computing a value (e.g. a message entry without message)
└── WriteError                a write was refused or failed; nothing was changed
    └── StaleSessionError     the file changed on disk since it was planned (pi appended)
"""

from __future__ import annotations

__all__ = [
    "EntryNotFoundError",
    "LoadCancelled",
    "PiComputationError",
    "SessionFileError",
    "SessionLoadError",
    "SessionStudioError",
    "StaleSessionError",
    "WriteError",
]


class SessionStudioError(Exception):
    """Base of every error the core raises on purpose."""


class SessionFileError(SessionStudioError):
    """The session file cannot be read (missing, a directory, no permission)."""


class SessionLoadError(SessionStudioError):
    """pi would throw while opening this file; `line` is the 1-based line that causes it."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class EntryNotFoundError(SessionStudioError, KeyError):
    """An entry id that the session does not contain."""

    def __init__(self, entry_id: object) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:
        return str(self.args[0])


class PiComputationError(SessionStudioError):
    """pi's own code would throw computing this value (damaged entry); message as V8 says it."""


class LoadCancelled(SessionStudioError):
    """Session.open was cancelled through its `cancel` hook."""


class WriteError(SessionStudioError):
    """A write to a session file was refused or failed; the file was not changed."""


class StaleSessionError(WriteError):
    """The session file changed on disk after it was loaded (e.g. pi appended entries)."""
