"""Where pi keeps its sessions (for the session browser). No Qt.

pi's settings and model limits are read in one place, :mod:`session_studio.llm.config`
(``pi_planning_defaults``); the window uses that, like the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["agent_dir", "sessions_dir"]


def agent_dir() -> Path:
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path.home() / ".pi" / "agent"


def sessions_dir() -> Path:
    return agent_dir() / "sessions"
