"""pi's compaction settings and model context windows (defaults for the planner). No Qt."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PiDefaults", "agent_dir", "context_window_for", "pi_defaults", "sessions_dir"]

DEFAULT_KEEP_RECENT = 20000
DEFAULT_RESERVE = 16384
DEFAULT_WINDOW = 200000

# (substring of the model id, context window); first match wins
_WINDOWS: list[tuple[str, int]] = [
    ("claude-sonnet-4-5", 200000),
    ("claude-sonnet-4", 200000),
    ("claude", 200000),
    ("gpt-5", 400000),
    ("gpt-4.1", 1047576),
    ("gpt-4o", 128000),
    ("o3", 200000),
    ("o4", 200000),
    ("gemini-2", 1048576),
    ("gemini", 1048576),
    ("grok-4", 256000),
    ("grok", 131072),
    ("deepseek", 128000),
    ("qwen", 131072),
    ("kimi", 131072),
    ("glm", 131072),
]


def agent_dir() -> Path:
    env = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(env).expanduser() if env else Path.home() / ".pi" / "agent"


def sessions_dir() -> Path:
    return agent_dir() / "sessions"


def context_window_for(model: Any) -> tuple[int, bool]:
    """The context window of a ``{provider, modelId}`` model; (window, known)."""
    mid = model.get("modelId") if isinstance(model, dict) else None
    if isinstance(mid, str):
        low = mid.lower()
        for key, window in _WINDOWS:
            if key in low:
                return window, True
    return DEFAULT_WINDOW, False


@dataclass(frozen=True)
class PiDefaults:
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT
    reserve_tokens: int = DEFAULT_RESERVE
    enabled: bool = True
    source: str = "pi defaults"


def _read_json(p: Path) -> dict[str, Any]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def pi_defaults(cwd: str | None = None) -> PiDefaults:
    """compaction.* from ~/.pi/agent/settings.json, overridden by <cwd>/.pi/settings.json."""
    keep, reserve, enabled, sources = DEFAULT_KEEP_RECENT, DEFAULT_RESERVE, True, []
    files = [agent_dir() / "settings.json"]
    if cwd:
        files.append(Path(cwd) / ".pi" / "settings.json")
    for f in files:
        comp = _read_json(f).get("compaction")
        if not isinstance(comp, dict):
            continue
        sources.append(str(f))
        if isinstance(comp.get("keepRecentTokens"), int):
            keep = comp["keepRecentTokens"]
        if isinstance(comp.get("reserveTokens"), int):
            reserve = comp["reserveTokens"]
        if isinstance(comp.get("enabled"), bool):
            enabled = comp["enabled"]
    return PiDefaults(keep, reserve, enabled, ", ".join(sources) or "pi defaults")
