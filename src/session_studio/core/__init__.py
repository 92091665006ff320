"""The pi session model, exact to pi 0.80.2 and (by profile, see profile.py) pi 1.6.0. Pure Python: no Qt, no network."""

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
