"""The pi session model, exact to pi 0.80.2 and (by profile, see profile.py) pi 1.6.0. Pure Python: no Qt, no network.

The names below are imported when first used (PEP 562), not with the package: a process that
needs one module (a scan process indexing half a file, started for each big file the window
opens) does not import the whole model first (~0.13 s of its start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import SessionContext, build_session_context
    from .errors import (
        EntryNotFoundError,
        PiComputationError,
        SessionFileError,
        SessionLoadError,
        SessionStudioError,
        StaleSessionError,
        WriteError,
    )
    from .preparation import CompactionPlan, Preparation, plan_compaction
    from .reader import LoadIssue
    from .session import CURRENT_LEAF, EntryRecord, Session

#: name → the module of this package that defines it
_HOMES = {
    "SessionContext": "context",
    "build_session_context": "context",
    "EntryNotFoundError": "errors",
    "PiComputationError": "errors",
    "SessionFileError": "errors",
    "SessionLoadError": "errors",
    "SessionStudioError": "errors",
    "StaleSessionError": "errors",
    "WriteError": "errors",
    "CompactionPlan": "preparation",
    "Preparation": "preparation",
    "plan_compaction": "preparation",
    "LoadIssue": "reader",
    "CURRENT_LEAF": "session",
    "EntryRecord": "session",
    "Session": "session",
}

__all__ = [
    "CURRENT_LEAF",
    "CompactionPlan",
    "EntryNotFoundError",
    "EntryRecord",
    "LoadIssue",
    "PiComputationError",
    "Preparation",
    "Session",
    "SessionContext",
    "SessionFileError",
    "SessionLoadError",
    "SessionStudioError",
    "StaleSessionError",
    "WriteError",
    "build_session_context",
    "plan_compaction",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # once: later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
