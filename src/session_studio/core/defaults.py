"""pi's compaction defaults and the context window assumed for an unknown model.

A module of its own, with nothing else, so that the command line can show them as option
defaults without importing the planner (core.plan and its dataclasses: ~7 ms of a start).
"""

from __future__ import annotations

__all__ = ["DEFAULT_CONTEXT_WINDOW", "DEFAULT_KEEP_RECENT_TOKENS", "DEFAULT_RESERVE_TOKENS"]

#: pi's compaction defaults (settings.json ``compaction.*``) and the window assumed for an unknown model
DEFAULT_KEEP_RECENT_TOKENS = 20000
DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_CONTEXT_WINDOW = 200000
