"""Commit actions behind one small interface, wired to the compaction engine when it exists.

Every write goes through the TaskRunner's single ``write`` pool. Until the lead's
engine lands, :func:`engine_available` is False and the UI disables the commit
buttons with a tooltip: nothing is ever faked.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["ENGINE_MISSING", "CommitRequest", "engine", "engine_available"]

ENGINE_MISSING = (
    "Committing is not wired to the engine (session_studio.engine) in this build yet. "
    "Planning and preview work; nothing is written."
)

#: flipped to True once the calls are wired and tested against session_studio.engine
WIRED = False

#: functions the UI calls (see the final report for the exact signatures it expects)
REQUIRED = (
    "append_compaction",
    "branch_to",
    "branch_with_summary",
    "fork_to_file",
    "set_label",
    "rename_session",
)


@dataclass(frozen=True)
class CommitRequest:
    path: str
    first_kept_entry_id: Any
    summary: str
    tokens_before: Any
    details: dict[str, Any]
    expected_size: int
    expected_mtime_ns: int


def engine() -> Any | None:
    try:
        mod = importlib.import_module("session_studio.engine")
    except ImportError:
        return None
    return mod if all(hasattr(mod, f) for f in REQUIRED) else None


def engine_available(action: str = "commit_compaction") -> bool:
    e = engine()
    return WIRED and e is not None and hasattr(e, action)
