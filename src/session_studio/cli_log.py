"""Where the CLI sends the library's log records: stderr, made terminal-safe.

A module of its own so that the commands that never log (`plan`, `context`, `branch`: cli._NEVER_LOG)
start without importing :mod:`logging` (~6 ms of every run, with traceback, linecache and
tokenize behind it).
"""

from __future__ import annotations

import logging

from .cli_output import err

__all__ = ["install_log_handler"]


class _SafeStderrHandler(logging.Handler):
    """Writes records to the current ``sys.stderr`` (looked up at each record), made terminal-safe."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            err(self.format(record))
        except Exception:
            self.handleError(record)


def install_log_handler(level: int = logging.WARNING) -> None:
    """Route library warnings to stderr through :func:`terminal_safe` (instead of logging's raw fallback)."""
    root = logging.getLogger()
    if any(isinstance(h, _SafeStderrHandler) for h in root.handlers):
        return
    handler = _SafeStderrHandler(level)
    handler.setFormatter(logging.Formatter("session-studio: %(message)s"))
    root.addHandler(handler)
